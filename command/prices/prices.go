package prices

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/units"
	"github.com/vrambot/vrambot/command/layout"
	"github.com/vrambot/vrambot/internal/safetext"
	"github.com/vrambot/vrambot/pricing"
	"github.com/vrambot/vrambot/query"
	"github.com/vrambot/vrambot/reply"
)

// PricesQuery is `vrambot prices [--gpu NAME] [--min-memory SIZE]`.
type Query struct {
	// GPU is what the user typed: a family ("h100": every variant), a catalog
	// name or alias ("a100 80gb", "rtx 4090"); "" for all. See catalog.FindGPUs.
	GPU            string
	MinMemoryBytes int64 // per GPU, marketed capacity; 0 for no minimum
	// MinMemoryNote says how the minimum was read when it had no unit.
	MinMemoryNote string
}

// PricesResult is the JSON of `vrambot prices --json` (docs/contracts.md §3).
// Offers come in the order the text shows them: on-demand, spot, prices for
// the GPU alone, then outdated prices a fresher one supersedes.
type Result struct {
	Offers  []pricing.Offer        `json:"offers"`
	Sources []pricing.SourceStatus `json:"sources"`
}

// maxMemoryBytes is far above any GPU (the largest has 288 GB) but keeps
// the value clear of int64 overflow.
const maxMemoryBytes = 16 * units.TiB

// ParseMemory reads a per-GPU memory size such as "24GiB", "24gb", "80G",
// "512MiB" or "1.5TB" (case-insensitive; GB = GiB, see advisor/units). A
// bare number ("48") is read as GB, as people mean it for GPU memory, and
// note says so; note is "" otherwise.
func ParseMemory(s string) (bytes int64, note string, err error) {
	b, err := units.Parse(s)
	switch {
	case errors.Is(err, units.ErrNoUnit):
		note = fmt.Sprintf("--min-memory %s has no unit: read as %s GB", strings.TrimSpace(s), strings.TrimSpace(s))
	case err != nil:
		return 0, "", fmt.Errorf("memory size %s not understood: use a number and a unit, e.g. 24GiB, 80G or 512MiB", shortQuote(s))
	}
	if b < 1 || b > maxMemoryBytes {
		return 0, "", fmt.Errorf("memory size %s is out of range (1 byte to 16 TiB)", shortQuote(s))
	}
	return b, note, nil
}

// Answer is a price listing: the reply to show and the structured result
// that `vrambot prices --json` prints.
type Answer struct {
	reply.Reply
	Result Result
}

// List lists the cached offers (never the network: see pricing.Book),
// optionally only the GPUs q.GPU names and only GPUs with at least
// q.MinMemoryBytes, in the order the ranking rules give (README, "Prices"):
// whole-instance on-demand offers, fresh before stale, each cheapest per
// GPU-hour first; then spot; then prices for the GPU alone and outdated
// prices that a fresher one supersedes, apart and unranked. An unknown GPU
// is a *query.Error with the closest name; an error of any other type means
// no prices could be read at all.
func List(ctx context.Context, book *pricing.Book, q Query) (Answer, error) {
	var gpus []catalog.GPU
	if q.GPU != "" {
		found, ok := catalog.FindGPUs(q.GPU)
		if !ok {
			return Answer{}, &query.Error{
				Token:      layout.OneLine(q.GPU, layout.MaxCellRunes),
				Reason:     "unknown GPU " + shortQuote(q.GPU),
				Suggestion: catalog.SuggestGPU(q.GPU),
			}
		}
		gpus = found
	}
	if q.MinMemoryBytes < 0 {
		return Answer{}, &query.Error{Reason: "minimum memory must not be negative"}
	}
	listing, err := book.Listing(ctx)
	if err != nil {
		return Answer{}, fmt.Errorf("prices: %w", err)
	}

	wanted := make(map[string]bool, len(gpus))
	for _, g := range gpus {
		wanted[g.Key] = true
	}
	memory := make(map[string]int64) // marketed memory by catalog key
	for _, g := range catalog.GPUs() {
		memory[g.Key] = g.MemoryBytes
	}
	var matching []pricing.Offer
	for _, o := range listing.Offers {
		perGPU := o.GPUMemoryBytes
		if perGPU <= 0 {
			perGPU = memory[o.GPUKey]
		}
		if (len(wanted) == 0 || wanted[o.GPUKey]) && perGPU >= q.MinMemoryBytes {
			matching = append(matching, o)
		}
	}
	groups := groupOffers(listing.Offers, matching)
	sources := listing.Sources
	if sources == nil {
		sources = []pricing.SourceStatus{}
	}

	r := reply.Reply{
		Kind:    "prices",
		Title:   titleText(gpus, q.GPU, q.MinMemoryBytes),
		Summary: summaryText(groups, len(matching), len(sources)),
		Context: contextLines(q, groups, listing.Notes),
	}
	result := Result{Offers: groups.all(), Sources: sources}
	for _, g := range []struct {
		title, text string
		offers      []pricing.Offer
	}{
		{"On-demand", "", groups.onDemand},
		{"Spot (can be reclaimed at any time)", "", groups.spot},
		{"GPU component only (not rentable alone: add the host VM; not ranked)", "", groups.component},
		{fmt.Sprintf("Older than %d days, superseded by a fresher price for the same GPU (not ranked)", pricing.UnrankedAfterDays), "", groups.outdated},
	} {
		if len(g.offers) > 0 {
			r.Sections = append(r.Sections, layout.OfferTable(g.title, g.offers))
		}
	}
	r.Sections = append(r.Sections, sourcesSection(sources))
	return Answer{Reply: r, Result: result}, nil
}

// offerGroups are the listing's offers as the text shows them.
type offerGroups struct {
	onDemand, spot []pricing.Offer // ranked whole instances
	component      []pricing.Offer // GPU alone
	outdated       []pricing.Offer // older than UnrankedAfterDays, with a fresher price for the GPU
}

func (g offerGroups) all() []pricing.Offer {
	return slices.Concat([]pricing.Offer{}, g.onDemand, g.spot, g.component, g.outdated)
}

// groupOffers sorts matching into groups. Whether a fresher price exists is
// judged over the whole listing (all), as the ranking judges it, so a filter
// cannot make a superseded price look like the only one.
func groupOffers(all, matching []pricing.Offer) offerGroups {
	recent := make(map[string]bool)
	for _, o := range all {
		if !o.ComponentOnly && o.AgeDays <= pricing.UnrankedAfterDays {
			recent[o.GPUKey] = true
		}
	}
	var g offerGroups
	for _, o := range matching {
		switch {
		case o.ComponentOnly:
			g.component = append(g.component, o)
		case o.AgeDays > pricing.UnrankedAfterDays && recent[o.GPUKey]:
			g.outdated = append(g.outdated, o)
		case o.Spot:
			g.spot = append(g.spot, o)
		default:
			g.onDemand = append(g.onDemand, o)
		}
	}
	for _, list := range [][]pricing.Offer{g.onDemand, g.spot, g.component, g.outdated} {
		slices.SortFunc(list, compareListed)
	}
	return g
}

// compareListed orders fresh before stale before outdated, then by
// $/GPU-hour, then by names so the listing is stable whatever order the
// sources used.
func compareListed(a, b pricing.Offer) int {
	return cmp.Or(
		cmp.Compare(ageClass(a), ageClass(b)),
		cmp.Compare(a.PricePerGPUHourUSD, b.PricePerGPUHourUSD),
		cmp.Compare(a.PricePerHourUSD, b.PricePerHourUSD),
		cmp.Compare(a.GPUKey, b.GPUKey),
		cmp.Compare(a.Provider, b.Provider),
		cmp.Compare(a.InstanceType, b.InstanceType),
		cmp.Compare(a.Region, b.Region),
		cmp.Compare(a.Source, b.Source),
	)
}

// ageClass is 0 for a fresh price, 1 for a stale one, 2 for an outdated one.
func ageClass(o pricing.Offer) int {
	switch {
	case o.AgeDays <= pricing.StaleAfterDays:
		return 0
	case o.AgeDays <= pricing.UnrankedAfterDays:
		return 1
	}
	return 2
}

func titleText(gpus []catalog.GPU, asked string, minMemory int64) string {
	var filters []string
	switch {
	case len(gpus) == 1:
		filters = append(filters, gpus[0].Name)
	case len(gpus) > 1:
		names := make([]string, len(gpus))
		for i, g := range gpus {
			names[i] = g.Name
		}
		filters = append(filters, layout.OneLine(asked, maxQuotedRunes)+" ("+strings.Join(names, ", ")+")")
	}
	if minMemory > 0 {
		gib := strconv.FormatFloat(math.Round(float64(minMemory)/(1<<30)*10)/10, 'f', -1, 64)
		filters = append(filters, "≥ "+gib+" GiB per GPU")
	}
	if len(filters) == 0 {
		return "GPU prices"
	}
	return "GPU prices: " + strings.Join(filters, ", ")
}

func summaryText(g offerGroups, matching, sources int) string {
	if matching == 0 {
		return "No offer matches."
	}
	s := fmt.Sprintf("%d %s from %d %s.", matching, plural(matching, "offer", "offers"), sources, plural(sources, "source", "sources"))
	if len(g.onDemand) > 0 {
		o := g.onDemand[0]
		s += fmt.Sprintf(" Cheapest on-demand: %s at %s/GPU-h, %s %s (%s).", o.GPU, layout.PriceUSD(o.PricePerGPUHourUSD),
			o.Provider, layout.OneLine(o.InstanceType, layout.MaxCellRunes), ageNote(o))
	}
	return wrapText(s, textWidth)
}

// textWidth is the width of reply text outside tables (issue 14: 100 columns).
const textWidth = 100

// wrapText breaks s at spaces so that no line passes width runes; a word
// longer than width stays whole on its own line.
func wrapText(s string, width int) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(s) {
		l := utf8.RuneCountInString(w)
		switch {
		case i == 0:
		case n+1+l > width:
			b.WriteString("\n")
			n = 0
		default:
			b.WriteString(" ")
			n++
		}
		b.WriteString(w)
		n += l
	}
	return b.String()
}

// ageNote is an offer's date and age for the reader, saying when it is stale.
func ageNote(o pricing.Offer) string {
	s := "as of " + o.AsOf + ", " + pricing.AgeText(o.AgeDays)
	if o.Stale {
		s += ": stale"
	}
	return s
}

// pricesContext is the notes under the tables: how the query was read, what
// the age marks mean, and where the prices come from.
func contextLines(q Query, g offerGroups, notes []string) []string {
	var out []string
	if q.MinMemoryNote != "" {
		out = append(out, q.MinMemoryNote)
	}
	stale, only := false, false
	for _, o := range slices.Concat(g.onDemand, g.spot, g.component) {
		stale = stale || o.Stale
		only = only || (!o.ComponentOnly && o.AgeDays > pricing.UnrankedAfterDays)
	}
	if stale {
		out = append(out, fmt.Sprintf("age* = stale: priced more than %d days ago; check the provider before renting", pricing.StaleAfterDays))
	}
	if only {
		out = append(out, fmt.Sprintf("age** = older than %d days, listed only because no fresher price exists for that GPU", pricing.UnrankedAfterDays))
	}
	return append(out, notes...)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// maxQuotedRunes bounds user input echoed in an error message.
const maxQuotedRunes = 24

// shortQuote echoes user input in an error: quoted, short, sanitised.
func shortQuote(s string) string { return safetext.Quote(s, maxQuotedRunes) }

func sourcesSection(sources []pricing.SourceStatus) reply.Section {
	s := reply.Section{Title: "Sources"}
	for _, src := range sources {
		line := src.Name + ": "
		switch {
		case src.Error == nil:
			line += fmt.Sprintf("%d %s, fetched %s", src.Offers, plural(src.Offers, "offer", "offers"), src.FetchedAt)
		case src.Stale:
			line += fmt.Sprintf("refresh failed (%s); serving %d %s fetched %s", *src.Error, src.Offers, plural(src.Offers, "offer", "offers"), src.FetchedAt)
		default:
			line += "no offers: " + *src.Error
		}
		if src.Dropped > 0 {
			line += fmt.Sprintf(" (%d %s dropped: GPU not in the catalog or malformed)", src.Dropped, plural(src.Dropped, "row", "rows"))
		}
		// reply.Text writes items after "  - " and continues them after four spaces.
		s.Items = append(s.Items, wrapText(layout.OneLine(line, layout.MaxLineRunes), textWidth-4))
	}
	if len(sources) == 0 {
		s.Text = "none configured"
	}
	return s
}
