package commands

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/units"
	"github.com/vrambot/vrambot/internal/safetext"
	"github.com/vrambot/vrambot/pricing"
	"github.com/vrambot/vrambot/reply"
)

// PricesQuery is `vrambot prices [--gpu NAME] [--min-memory SIZE]`.
type PricesQuery struct {
	GPU            string // a catalog GPU name or alias; "" for all
	MinMemoryBytes int64  // per GPU, marketed capacity; 0 for no minimum
}

// PricesResult is the JSON of `vrambot prices --json` (DESIGN.md §3.3).
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
// "512MiB" or "1.5TB" (case-insensitive; GB = GiB, see advisor/units).
func ParseMemory(s string) (int64, error) {
	b, err := units.Parse(s)
	if err != nil {
		return 0, fmt.Errorf("memory size %s not understood: use a number and a unit, e.g. 24GiB, 80G or 512MiB", shortQuote(s))
	}
	if b < 1 || b > maxMemoryBytes {
		return 0, fmt.Errorf("memory size %s is out of range (1 byte to 16 TiB)", shortQuote(s))
	}
	return b, nil
}

// Prices lists the cached offers (never the network: see pricing.Book),
// optionally only one GPU model and only GPUs with at least q.MinMemoryBytes,
// on-demand first then spot, each cheapest per GPU-hour first. An unknown
// GPU is a *QueryError with the closest name; an error of any other type
// means no prices could be read at all.
func Prices(ctx context.Context, book *pricing.Book, q PricesQuery) (reply.Reply, error) {
	var gpu catalog.GPU
	if q.GPU != "" {
		g, ok := catalog.LookupGPU(q.GPU)
		if !ok {
			return reply.Reply{}, &QueryError{
				Token:      oneLine(q.GPU, maxCellRunes),
				Reason:     "unknown GPU " + shortQuote(q.GPU),
				Suggestion: catalog.SuggestGPU(q.GPU),
			}
		}
		gpu = g
	}
	if q.MinMemoryBytes < 0 {
		return reply.Reply{}, &QueryError{Reason: "minimum memory must not be negative"}
	}
	listing, err := book.Listing(ctx)
	if err != nil {
		return reply.Reply{}, fmt.Errorf("prices: %w", err)
	}

	memory := make(map[string]int64) // marketed memory by catalog key
	for _, g := range catalog.GPUs() {
		memory[g.Key] = g.MemoryBytes
	}
	offers := []pricing.Offer{}
	for _, o := range listing.Offers {
		perGPU := o.GPUMemoryBytes
		if perGPU <= 0 {
			perGPU = memory[o.GPUKey]
		}
		if (gpu.Key == "" || o.GPUKey == gpu.Key) && perGPU >= q.MinMemoryBytes {
			offers = append(offers, o)
		}
	}
	slices.SortFunc(offers, compareListed)
	sources := listing.Sources
	if sources == nil {
		sources = []pricing.SourceStatus{}
	}

	r := reply.Reply{
		Kind:    "prices",
		Title:   pricesTitle(gpu, q.MinMemoryBytes),
		Summary: pricesSummary(offers, len(sources)),
		Context: listing.Notes,
		Result:  PricesResult{Offers: offers, Sources: sources},
	}
	onDemand, spot := splitSpot(offers)
	if len(onDemand) > 0 {
		r.Sections = append(r.Sections, offerTable("On-demand", onDemand))
	}
	if len(spot) > 0 {
		r.Sections = append(r.Sections, offerTable("Spot (can be reclaimed at any time)", spot))
	}
	r.Sections = append(r.Sections, sourcesSection(sources))
	return r, nil
}

// compareListed orders on-demand before spot, then by $/GPU-hour, then by
// names so the listing is stable whatever order the sources used.
func compareListed(a, b pricing.Offer) int {
	spot := func(o pricing.Offer) int {
		if o.Spot {
			return 1
		}
		return 0
	}
	return cmp.Or(
		cmp.Compare(spot(a), spot(b)),
		cmp.Compare(a.PricePerGPUHourUSD, b.PricePerGPUHourUSD),
		cmp.Compare(a.PricePerHourUSD, b.PricePerHourUSD),
		cmp.Compare(a.GPUKey, b.GPUKey),
		cmp.Compare(a.Provider, b.Provider),
		cmp.Compare(a.InstanceType, b.InstanceType),
		cmp.Compare(a.Region, b.Region),
		cmp.Compare(a.Source, b.Source),
	)
}

func splitSpot(offers []pricing.Offer) (onDemand, spot []pricing.Offer) {
	for _, o := range offers {
		if o.Spot {
			spot = append(spot, o)
		} else {
			onDemand = append(onDemand, o)
		}
	}
	return onDemand, spot
}

func pricesTitle(gpu catalog.GPU, minMemory int64) string {
	var filters []string
	if gpu.Key != "" {
		filters = append(filters, gpu.Name)
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

func pricesSummary(offers []pricing.Offer, sources int) string {
	if len(offers) == 0 {
		return "No offer matches."
	}
	s := fmt.Sprintf("%d %s from %d %s.", len(offers), plural(len(offers), "offer", "offers"), sources, plural(sources, "source", "sources"))
	if !offers[0].Spot {
		o := offers[0]
		s += fmt.Sprintf(" Cheapest on-demand: %s at %s/GPU-h (%s %s, as of %s).", o.GPU, usd(o.PricePerGPUHourUSD), o.Provider, o.InstanceType, o.AsOf)
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// offerTable renders offers as an aligned table in a code block, at most
// maxPriceRows rows.
func offerTable(title string, offers []pricing.Offer) reply.Section {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GPU\tN\t$/GPU-h\t$/h\tprovider\tinstance\tregion\tas of")
	for _, o := range offers[:min(len(offers), maxPriceRows)] {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n",
			cell(o.GPU), o.GPUCount, usd(o.PricePerGPUHourUSD), usd(o.PricePerHourUSD),
			cell(o.Provider), cell(o.InstanceType), cell(o.Region), cell(o.AsOf))
	}
	tw.Flush()
	s := reply.Section{Title: title, Code: []reply.Code{{Text: b.String()}}}
	if more := len(offers) - maxPriceRows; more > 0 {
		s.Text = fmt.Sprintf("The %d cheapest of %d; --json lists all.", maxPriceRows, len(offers))
	}
	return s
}

// Cell limits: source data is untrusted and must not break the layout.
const (
	maxCellRunes = 40
	maxLineRunes = 300
)

// cell keeps a table cell on one line and short.
func cell(s string) string {
	if s == "" {
		return "-"
	}
	return oneLine(s, maxCellRunes)
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
		s.Items = append(s.Items, oneLine(line, maxLineRunes))
	}
	if len(sources) == 0 {
		s.Text = "none configured"
	}
	return s
}
