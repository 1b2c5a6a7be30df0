// Package chart draws the digest's PNG: GPU memory used (% of capacity) over
// the window, as lines for a few series and as a heatmap (one row per GPU or
// job, time across, colour = memory used) for more, with the near-OOM
// threshold in a colour no series uses, the legend beside the plot, markers
// for restarts and OOMs, sans-serif text, sized for Slack's preview.
//
// Plan decides the layout (the golden tests pin it); Render draws it.
package chart

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/vrambot/vrambot/internal/safetext"
)

// ErrNoData is returned when no row has a point.
var ErrNoData = errors.New("chart: no data to draw")

// Limits and sizes. Slack shows an image in a channel scaled to the
// message column (about 360-720 px wide on desktop) and opens it full size
// on click, so the chart is wide enough to read there and its text stays
// legible when scaled down: 1200 px at 96 dpi with 10-13 pt text.
const (
	// MaxLines is the most series drawn as lines; more become a heatmap.
	MaxLines = 8
	// MaxRows is the most rows a heatmap draws (the caller picks which;
	// Plan keeps the first MaxRows and says so in the note).
	MaxRows = 64

	dpi            = 96
	widthPx        = 1200
	linesHeightPx  = 600
	minLegendPx    = 180 // the legend's width: what its longest entry needs, within these
	maxLegendPx    = 420
	maxLabelRunes  = 48  // a row or line label; longer ones are cut
	rowPx          = 18  // one heatmap row: 10 pt labels need about 14 px
	chromePx       = 150 // title, time axis and margins around the rows
	minHeatmapPx   = 400
	titleFontPt    = 13
	labelFontPt    = 11
	tickFontPt     = 10
	rowLabelFontPt = 9
)

// Font is the typeface of every text: Liberation Sans, metric-compatible
// with Arial, embedded in gonum/plot.
const Font = "Liberation Sans"

// Input is what the chart shows.
type Input struct {
	Title string
	Start time.Time
	End   time.Time
	// Threshold is the near-OOM ratio (0.95).
	Threshold float64
	// Rows are the series, most important first; their order is kept.
	Rows    []Row
	Markers []Marker
	// Note says what the caller left out of Rows ("3 GPUs without a job
	// not shown"); the chart shows it with its own.
	Note string
}

// Row is one GPU or job.
type Row struct {
	// Label is the row's name with its memory in GiB, e.g.
	// "node-a GPU 0  76/80 GiB".
	Label string
	// Points are memory used / capacity at the end of each bucket.
	Points []Point
}

// Point is one value at a time.
type Point struct {
	T time.Time
	V float64
}

// MarkerKind is what a marker marks.
type MarkerKind string

// Marker kinds.
const (
	MarkerRestart MarkerKind = "restart"
	MarkerOOM     MarkerKind = "oom"
)

// Marker is an event at a time, on a row (Row >= 0) or across all (Row < 0:
// an OOM pasted in Slack that no GPU's memory could be matched with).
type Marker struct {
	Kind MarkerKind
	Row  int
	T    time.Time
}

// Layout is every choice Plan made, in a form the golden tests compare.
type Layout struct {
	Kind     string `json:"kind"` // "lines" or "heatmap"
	WidthPx  int    `json:"width_px"`
	HeightPx int    `json:"height_px"`
	Font     string `json:"font"`
	Title    string `json:"title"`
	// Rows are the heatmap's rows top to bottom, or the lines in legend order.
	Rows []string `json:"rows"`
	// SeriesColors are the lines' colours, one per row.
	SeriesColors []string `json:"series_colors,omitempty"`
	// Scale is the heatmap's colours from 0 % up to the threshold, and
	// ScaleFrom the percentage each starts at (the last, "tight", ends at
	// the threshold).
	Scale       []string      `json:"scale,omitempty"`
	ScaleFrom   []float64     `json:"scale_from,omitempty"`
	NoDataColor string        `json:"no_data_color,omitempty"`
	Threshold   ThresholdMark `json:"threshold"`
	Legend      LegendPlan    `json:"legend"`
	Markers     []MarkerPlan  `json:"markers"`
	// Note says what was left out, e.g. "first 64 of 80 rows".
	Note string `json:"note,omitempty"`
}

// ThresholdMark is how the near-OOM threshold is drawn.
type ThresholdMark struct {
	Ratio float64 `json:"ratio"`
	Color string  `json:"color"`
	Drawn string  `json:"drawn"` // "dashed line" or "cells at or above"
}

// LegendPlan is where the legend goes and what it lists.
type LegendPlan struct {
	Placement string   `json:"placement"`
	Entries   []string `json:"entries"`
}

// MarkerPlan is one marker as drawn.
type MarkerPlan struct {
	Kind  MarkerKind `json:"kind"`
	Row   string     `json:"row,omitempty"` // "" across all rows
	At    time.Time  `json:"at"`
	Glyph string     `json:"glyph"`
}

// Colours (docs/digest.md §10). The lines' palette is Tableau 10 without
// its red and grey: eight hues that stay apart for colour-blind readers.
// The heatmap reads at a glance in five classes: four steps of ColorBrewer's
// YlGnBu from pale to navy (0-25-50-75-90 %), amber for "tight" (the last
// five points under the threshold: 90-95 %), and a dark red at or above
// the threshold, the one red of every chart (its dashed line too). Each
// class is at least ΔE2000 15 from the next, for normal vision and under
// deuteranopia and protanopia (Machado 2009); palette_test.go checks it.
// No data is a dark grey no class comes near.
var (
	linePalette = []color.RGBA{
		rgb(0x4E79A7), rgb(0xF28E2B), rgb(0x76B7B2), rgb(0x59A14F),
		rgb(0xEDC948), rgb(0xB07AA1), rgb(0xFF9DA7), rgb(0x9C755F),
	}
	heatScale = []color.RGBA{rgb(0xFFFFD9), rgb(0x7FCDBB), rgb(0x1D91C0), rgb(0x0C2C84), rgb(0xFEC44F)}
	// heatFrom are the percentages the classes of heatScale start at; the
	// last starts tightBelow points under the threshold instead.
	heatFrom       = []float64{0, 25, 50, 75}
	thresholdColor = rgb(0xB2182B)
	noDataColor    = rgb(0x737373)
	markerColor    = rgb(0x000000)
	haloColor      = rgb(0xFFFFFF)
)

// tightBelow is how many percentage points under the near-OOM threshold
// memory counts as tight (docs/digest.md §2.5: 90 % for 95 %).
const tightBelow = 5

func rgb(v uint32) color.RGBA {
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xFF}
}

func hex(c color.RGBA) string { return fmt.Sprintf("#%02X%02X%02X", c.R, c.G, c.B) }

// scaleFrom are the percentages each heatScale class starts at for a
// threshold at thresholdPct: 0, 25, 50, 75 and, for "tight", five points
// under the threshold (classes a low threshold overtakes start there).
func scaleFrom(thresholdPct float64) []float64 {
	tight := max(thresholdPct-tightBelow, 0)
	out := make([]float64, 0, len(heatScale))
	for _, f := range heatFrom {
		out = append(out, min(f, tight))
	}
	return append(out, tight)
}

// Plan validates in and decides the layout.
func Plan(in Input) (Layout, error) {
	if in.Start.IsZero() || !in.End.After(in.Start) {
		return Layout{}, errors.New("chart: the window's end must be after its start")
	}
	rows, note := drawableRows(in.Rows)
	if len(rows) == 0 {
		return Layout{}, ErrNoData
	}
	th := in.Threshold
	if th <= 0 || th > 1 {
		th = 0.95
	}
	if in.Note != "" {
		note = strings.Join(slices.DeleteFunc([]string{in.Note, note}, func(s string) bool { return s == "" }), "; ")
	}
	l := Layout{WidthPx: widthPx, Font: Font, Title: in.Title, Note: note, Markers: []MarkerPlan{}}
	for _, r := range rows {
		// Labels are workload names from the exporter: shown, never trusted.
		l.Rows = append(l.Rows, safetext.Show(in.Rows[r].Label, maxLabelRunes))
	}
	pct := fmt.Sprintf("%.0f%%", th*100)
	if len(rows) <= MaxLines {
		l.Kind = "lines"
		l.HeightPx = linesHeightPx
		for i := range rows {
			l.SeriesColors = append(l.SeriesColors, hex(linePalette[i]))
		}
		l.Threshold = ThresholdMark{Ratio: th, Color: hex(thresholdColor), Drawn: "dashed line"}
		l.Legend.Entries = append(append([]string(nil), l.Rows...), pct+" (near OOM)")
	} else {
		l.Kind = "heatmap"
		l.HeightPx = max(minHeatmapPx, chromePx+rowPx*len(rows))
		for _, c := range heatScale {
			l.Scale = append(l.Scale, hex(c))
		}
		l.ScaleFrom = scaleFrom(th * 100)
		l.NoDataColor = hex(noDataColor)
		l.Threshold = ThresholdMark{Ratio: th, Color: hex(thresholdColor), Drawn: "cells at or above"}
		for _, e := range heatLegend(th) {
			l.Legend.Entries = append(l.Legend.Entries, e.label)
		}
	}
	l.Legend.Placement = "right of the plot"
	rowOf := map[int]int{}
	for i, r := range rows {
		rowOf[r] = i
	}
	kinds := map[MarkerKind]bool{}
	for _, m := range in.Markers {
		if m.T.Before(in.Start) || m.T.After(in.End) {
			continue
		}
		mp := MarkerPlan{Kind: m.Kind, At: m.T, Glyph: glyphName(m.Kind)}
		if m.Row >= 0 {
			i, ok := rowOf[m.Row]
			if !ok {
				continue
			}
			mp.Row = l.Rows[i]
		}
		l.Markers = append(l.Markers, mp)
		kinds[m.Kind] = true
	}
	for _, k := range []MarkerKind{MarkerRestart, MarkerOOM} {
		if kinds[k] {
			l.Legend.Entries = append(l.Legend.Entries, markerLegend(k))
		}
	}
	return l, nil
}

// drawableRows are the indexes of rows with points, at most MaxRows.
func drawableRows(rows []Row) ([]int, string) {
	var idx []int
	for i, r := range rows {
		if len(r.Points) > 0 {
			idx = append(idx, i)
		}
	}
	if len(idx) > MaxRows {
		note := fmt.Sprintf("first %d of %d rows", MaxRows, len(idx))
		return idx[:MaxRows], note
	}
	return idx, ""
}

// legendSwatch is one colour of the heatmap's legend.
type legendSwatch struct {
	label string
	color color.RGBA
}

// heatLegend names every class of the scale with its range, the
// threshold's colour and the no-data colour.
func heatLegend(th float64) []legendSwatch {
	pct := th * 100
	from := scaleFrom(pct)
	var out []legendSwatch
	for i, c := range heatScale {
		to := pct
		if i+1 < len(from) {
			to = from[i+1]
		}
		if to <= from[i] {
			continue // overtaken by a low threshold
		}
		label := fmt.Sprintf("%.0f–%.0f%%", from[i], to)
		if i == len(heatScale)-1 {
			label += " (tight)"
		}
		out = append(out, legendSwatch{label, c})
	}
	return append(out,
		legendSwatch{fmt.Sprintf("≥ %.0f%% (near OOM)", pct), thresholdColor},
		legendSwatch{"no data", noDataColor})
}

// heatColor is the colour of a cell at pct percent used, the threshold at
// thresholdPct: the class pct falls in, red at or above the threshold.
func heatColor(pct, thresholdPct float64) color.RGBA {
	switch {
	case math.IsNaN(pct):
		return noDataColor
	case pct >= thresholdPct:
		return thresholdColor
	}
	from := scaleFrom(thresholdPct)
	c := heatScale[0]
	for i, f := range from {
		if pct >= f {
			c = heatScale[i]
		}
	}
	return c
}

func glyphName(k MarkerKind) string {
	if k == MarkerRestart {
		return "cross"
	}
	return "triangle"
}

func markerLegend(k MarkerKind) string {
	if k == MarkerRestart {
		return "restart (memory fell to 0)"
	}
	return "OOM pasted in Slack"
}
