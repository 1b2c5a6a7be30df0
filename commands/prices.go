package commands

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
	"github.com/vrambot/vrambot/internal/safetext"
	"github.com/vrambot/vrambot/pricing"
	"github.com/vrambot/vrambot/reply"
)

// PricesQuery is `vrambot prices [--gpu NAME] [--min-memory SIZE]`.
type PricesQuery struct {
	// GPU is what the user typed: a family ("h100": every variant), a catalog
	// name or alias ("a100 80gb", "rtx 4090"); "" for all. See catalog.FindGPUs.
	GPU            string
	MinMemoryBytes int64 // per GPU, marketed capacity; 0 for no minimum
	// MinMemoryNote says how the minimum was read when it had no unit.
	MinMemoryNote string
}

// PricesResult is the JSON of `vrambot prices --json` (DESIGN.md §3.3).
// Offers come in the order the text shows them: on-demand, spot, prices for
// the GPU alone, then outdated prices a fresher one supersedes.
type PricesResult struct {
	Offers  []pricing.Offer        `json:"offers"`
	Sources []pricing.SourceStatus `json:"sources"`
}

// maxPriceRows bounds each table of the text reply; --json lists all.
const maxPriceRows = 25

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

// Prices lists the cached offers (never the network: see pricing.Book),
// optionally only the GPUs q.GPU names and only GPUs with at least
// q.MinMemoryBytes, in the order the ranking rules give (README, "Prices"):
// whole-instance on-demand offers, fresh before stale, each cheapest per
// GPU-hour first; then spot; then prices for the GPU alone and outdated
// prices that a fresher one supersedes, apart and unranked. An unknown GPU
// is a *QueryError with the closest name; an error of any other type means
// no prices could be read at all.
func Prices(ctx context.Context, book *pricing.Book, q PricesQuery) (reply.Reply, error) {
	var gpus []catalog.GPU
	if q.GPU != "" {
		found, ok := catalog.FindGPUs(q.GPU)
		if !ok {
			return reply.Reply{}, &QueryError{
				Token:      oneLine(q.GPU, maxCellRunes),
				Reason:     "unknown GPU " + shortQuote(q.GPU),
				Suggestion: catalog.SuggestGPU(q.GPU),
			}
		}
		gpus = found
	}
	if q.MinMemoryBytes < 0 {
		return reply.Reply{}, &QueryError{Reason: "minimum memory must not be negative"}
	}
	listing, err := book.Listing(ctx)
	if err != nil {
		return reply.Reply{}, fmt.Errorf("prices: %w", err)
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
		Title:   pricesTitle(gpus, q.GPU, q.MinMemoryBytes),
		Summary: pricesSummary(groups, len(matching), len(sources)),
		Context: pricesContext(q, groups, listing.Notes),
		Result:  PricesResult{Offers: groups.all(), Sources: sources},
	}
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
			r.Sections = append(r.Sections, offerTable(g.title, g.offers))
		}
	}
	r.Sections = append(r.Sections, sourcesSection(sources))
	return r, nil
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

func pricesTitle(gpus []catalog.GPU, asked string, minMemory int64) string {
	var filters []string
	switch {
	case len(gpus) == 1:
		filters = append(filters, gpus[0].Name)
	case len(gpus) > 1:
		names := make([]string, len(gpus))
		for i, g := range gpus {
			names[i] = g.Name
		}
		filters = append(filters, oneLine(asked, maxQuotedRunes)+" ("+strings.Join(names, ", ")+")")
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

func pricesSummary(g offerGroups, matching, sources int) string {
	if matching == 0 {
		return "No offer matches."
	}
	s := fmt.Sprintf("%d %s from %d %s.", matching, plural(matching, "offer", "offers"), sources, plural(sources, "source", "sources"))
	if len(g.onDemand) > 0 {
		o := g.onDemand[0]
		s += fmt.Sprintf(" Cheapest on-demand: %s at %s/GPU-h, %s %s (%s).", o.GPU, usd(o.PricePerGPUHourUSD),
			o.Provider, oneLine(o.InstanceType, maxCellRunes), ageNote(o))
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
func pricesContext(q PricesQuery, g offerGroups, notes []string) []string {
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

// priceTableWidth is the widest table line: reply.Text indents code by six
// columns and the whole reply must fit 100.
const priceTableWidth = 94

// Column limits of the price table. The last cell, instance and region, goes
// on the line below its row when it does not fit beside it.
const (
	maxGPUCellRunes      = 22
	maxProviderCellRunes = 14
	maxInstanceRunes     = 56
	maxRegionCellRunes   = priceTableWidth - len(instanceIndent) - maxInstanceRunes - len(", ")
)

// instanceIndent starts an instance name wrapped under its row.
const instanceIndent = "  └ "

// offerTable renders offers as an aligned table in a code block, at most
// maxPriceRows rows, each at most priceTableWidth wide.
func offerTable(title string, offers []pricing.Offer) reply.Section {
	header := []string{"GPU", "N", "$/GPU-h", "$/h", "age", "provider"}
	var rows [][]string
	var where []string
	for _, o := range offers[:min(len(offers), maxPriceRows)] {
		rows = append(rows, []string{
			oneLine(o.GPU, maxGPUCellRunes), strconv.Itoa(o.GPUCount), usd(o.PricePerGPUHourUSD), usd(o.PricePerHourUSD),
			ageCell(o), cellOf(o.Provider, maxProviderCellRunes),
		})
		where = append(where, cellOf(o.InstanceType, maxInstanceRunes)+", "+cellOf(o.Region, maxRegionCellRunes))
	}
	s := reply.Section{Title: title, Code: []reply.Code{{Text: wrappedTable(header, "instance, region", rows, where, priceTableWidth)}}}
	if more := len(offers) - maxPriceRows; more > 0 {
		s.Text = fmt.Sprintf("The first %d of %d; --json lists all.", maxPriceRows, len(offers))
	}
	return s
}

// ageCell is the age in days, marked * when stale and ** when older than
// UnrankedAfterDays (see pricesContext).
func ageCell(o pricing.Offer) string {
	s := strconv.Itoa(o.AgeDays) + " d"
	switch {
	case o.AgeDays > pricing.UnrankedAfterDays:
		s += "**"
	case o.Stale:
		s += "*"
	}
	return s
}

// wrappedTable aligns cells in columns two spaces apart and puts each
// row's last cell after them, or on the next line (after instanceIndent)
// when it would pass width.
func wrappedTable(header []string, lastHeader string, rows [][]string, last []string, width int) string {
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	line := func(cells []string) string {
		var b strings.Builder
		for i, c := range cells {
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2))
		}
		return b.String()
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(line(header)+lastHeader, " "))
	b.WriteString("\n")
	for i, r := range rows {
		front := line(r)
		if utf8.RuneCountInString(front)+utf8.RuneCountInString(last[i]) <= width {
			b.WriteString(front + last[i])
		} else {
			b.WriteString(strings.TrimRight(front, " "))
			b.WriteString("\n" + instanceIndent + last[i])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Cell limits: source data is untrusted and must not break the layout.
const (
	maxCellRunes = 40
	maxLineRunes = 300
)

// cell keeps a table cell on one line and short (maxCellRunes).
func cell(s string) string { return cellOf(s, maxCellRunes) }

// cellOf keeps a table cell on one line and at most limit runes.
func cellOf(s string, limit int) string {
	if s == "" {
		return "-"
	}
	return oneLine(s, limit)
}

// maxQuotedRunes bounds user input echoed in an error message.
const maxQuotedRunes = 24

// shortQuote echoes user input in an error: quoted, short, sanitised.
func shortQuote(s string) string { return safetext.Quote(s, maxQuotedRunes) }

// oneLine keeps untrusted text (a source's row, a name) on one short line.
func oneLine(s string, limit int) string { return safetext.OneLine(s, limit) }

// usd formats a price with cents, and more digits under a dollar, so $0.165
// is not shown as $0.17.
func usd(v float64) string {
	if v < 1 {
		return "$" + strconv.FormatFloat(v, 'f', 3, 64)
	}
	return "$" + strconv.FormatFloat(v, 'f', 2, 64)
}

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
		s.Items = append(s.Items, wrapText(oneLine(line, maxLineRunes), textWidth-4))
	}
	if len(sources) == 0 {
		s.Text = "none configured"
	}
	return s
}
