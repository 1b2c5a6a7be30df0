package pricing

import (
	"fmt"
	"time"
)

// Freshness rules (README, "Prices"): a price is judged by the days since
// its as-of date. Providers change list prices every few weeks and
// marketplaces by the hour, so past a month a price is shown as stale; past
// half a year it says little about today's price and is not ranked while a
// fresher price exists for the same GPU.
const (
	StaleAfterDays    = 30
	UnrankedAfterDays = 180
)

// freshness tiers, the first key of every ranking: fresh offers before stale
// ones, stale before outdated ones.
const (
	tierFresh    = iota // AgeDays <= StaleAfterDays
	tierStale           // <= UnrankedAfterDays
	tierOutdated        // older
)

func tier(o Offer) int {
	switch {
	case o.AgeDays <= StaleAfterDays:
		return tierFresh
	case o.AgeDays <= UnrankedAfterDays:
		return tierStale
	}
	return tierOutdated
}

// AgeDays is the number of whole days from the date asOf (YYYY-MM-DD) to
// the UTC date of now; 0 for a date in the future, and -1 for one that does
// not parse.
func AgeDays(asOf string, now time.Time) int {
	t, err := time.Parse(time.DateOnly, asOf)
	if err != nil {
		return -1
	}
	today := now.UTC().Truncate(24 * time.Hour)
	return max(0, int(today.Sub(t)/(24*time.Hour)))
}

// Annotate sets AgeDays and Stale of every offer as of now, and the usable
// memory of its GPU from usable (by catalog key). An unparsable date counts
// as outdated: sources check dates, so it only comes from a foreign cache
// entry, and a price of unknown age must not rank as fresh.
func Annotate(offers []Offer, now time.Time, usable map[string]int64) {
	for i := range offers {
		o := &offers[i]
		o.AgeDays = AgeDays(o.AsOf, now)
		if o.AgeDays < 0 {
			o.AgeDays = UnrankedAfterDays + 1
		}
		o.Stale = o.AgeDays > StaleAfterDays
		if u, ok := usable[o.GPUKey]; ok {
			o.GPUUsableBytes = u
		}
		o.RankNote = ""
	}
}

// AgeText says how old a price is, for the reader: "today", "1 day old",
// "72 days old".
func AgeText(days int) string {
	switch days {
	case 0:
		return "today"
	case 1:
		return "1 day old"
	}
	return fmt.Sprintf("%d days old", days)
}
