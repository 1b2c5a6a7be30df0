// Package layout is how every command lays out a reply (reply package
// doc): the lead a channel sees — a few fixes, each with its memory after
// and its snippet, the best offers in short — and the details' tables.
// vram and oom answers share it, and prices shares its table.
package layout

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/internal/safetext"
	"github.com/vrambot/vrambot/pricing"
	"github.com/vrambot/vrambot/reply"
)

// Lead limits: what a reader takes in at a glance. With the header,
// summary, offers, context and buttons, a lead is at most 12 blocks.
const (
	LeadFixes  = 3
	LeadOffers = 3
	// leadNotes are the assumptions that are not defaults (where the model
	// came from, a bf16 warning) shown in the lead; the rest are in the details.
	LeadNotes     = 2
	LeadNoteRunes = 280
)

// FixSection is one fix of the lead: its heading with the memory after
// it and its cost, its snippet directly under it, its button beside it.
func FixSection(n int, f fix.Fix, action *reply.Action) reply.Section {
	s := reply.Section{Title: fmt.Sprintf("%d. %s", n, f.Heading()), Action: action}
	var text []string
	if f.TotalAfterBytes != nil {
		after := "→ " + GiB(*f.TotalAfterBytes) + " per GPU"
		if f.SavesBytes != nil {
			after += " (saves " + GiB(*f.SavesBytes) + ")"
		}
		text = append(text, after)
	}
	if f.Cost != "" {
		text = append(text, "cost: "+f.Cost)
	}
	s.Text = strings.Join(text, " · ")
	if f.Snippet != "" {
		s.Code = []reply.Code{{Lang: f.SnippetLang, Text: f.Snippet}}
	}
	return s
}

// OfferLine is one offer of the lead: provider, GPU × count, $/h and
// age (where and from which source are in the details and the footer).
func OfferLine(o pricing.Offer) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s · %s × %d · %s/h", o.Provider, o.GPU, max(1, o.GPUCount), USD(o.PricePerHourUSD))
	if o.Spot {
		b.WriteString(" spot")
	}
	if o.HoursToFinish != nil && o.CostToFinishUSD != nil {
		fmt.Fprintf(&b, " · %s to finish", USD(*o.CostToFinishUSD))
	}
	b.WriteString(" · " + pricing.AgeText(o.AgeDays))
	if o.Stale {
		b.WriteString(" (stale)")
	}
	if o.Requested {
		b.WriteString(" · the GPU you named")
	}
	return b.String()
}

// OffersSection lists the best offers in short.
func OffersSection(title string, offers []pricing.Offer, lines func(int, pricing.Offer) string) reply.Section {
	s := reply.Section{Title: title}
	if len(offers) == 0 {
		s.Text = "No offer in the price data fits this workload."
		return s
	}
	for i, o := range offers[:min(len(offers), LeadOffers)] {
		s.Items = append(s.Items, lines(i, o))
	}
	if len(offers) > LeadOffers {
		s.Title += fmt.Sprintf(" (%d of %d; all in the details)", LeadOffers, len(offers))
	}
	return s
}

// DetailsTitle names the details of a reply titled title.
func DetailsTitle(title string) string { return "Details · " + title }

// GiB formats bytes as GiB with one decimal, the precision the estimate
// has; a small non-zero part reads "<0.1 GiB", not "0.0 GiB".
func GiB(n int64) string {
	if n > 0 && n < 1<<30/20 {
		return "<0.1 GiB"
	}
	return strconv.FormatFloat(float64(n)/(1<<30), 'f', 1, 64) + " GiB"
}

// USD formats a price for a reply's text: whole dollars from $100, cents
// below.
func USD(v float64) string {
	if v >= 100 {
		return "$" + strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return "$" + strconv.FormatFloat(v, 'f', 2, 64)
}

// maxPriceRows bounds each table of the text reply; --json lists all.
const maxPriceRows = 25

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

// OfferTable renders offers as an aligned table in a code block, at most
// maxPriceRows rows, each at most priceTableWidth wide.
func OfferTable(title string, offers []pricing.Offer) reply.Section {
	header := []string{"GPU", "N", "$/GPU-h", "$/h", "age", "provider"}
	var rows [][]string
	var where []string
	for _, o := range offers[:min(len(offers), maxPriceRows)] {
		rows = append(rows, []string{
			OneLine(o.GPU, maxGPUCellRunes), strconv.Itoa(o.GPUCount), PriceUSD(o.PricePerGPUHourUSD), PriceUSD(o.PricePerHourUSD),
			ageCell(o), Cell(o.Provider, maxProviderCellRunes),
		})
		where = append(where, Cell(o.InstanceType, maxInstanceRunes)+", "+Cell(o.Region, maxRegionCellRunes))
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
	MaxCellRunes = 40
	MaxLineRunes = 300
)

// Cell keeps a table cell on one line and at most limit runes.
func Cell(s string, limit int) string {
	if s == "" {
		return "-"
	}
	return OneLine(s, limit)
}

// OneLine keeps untrusted text (a source's row, a name) on one short line.
func OneLine(s string, limit int) string { return safetext.OneLine(s, limit) }

// PriceUSD formats a price with cents, and more digits under a dollar, so $0.165
// is not shown as $0.17.
func PriceUSD(v float64) string {
	if v < 1 {
		return "$" + strconv.FormatFloat(v, 'f', 3, 64)
	}
	return "$" + strconv.FormatFloat(v, 'f', 2, 64)
}
