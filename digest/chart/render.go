package chart

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Render draws in as a PNG.
func Render(in Input) ([]byte, error) {
	l, err := Plan(in)
	if err != nil {
		return nil, err
	}
	rows, _ := drawableRows(in.Rows)
	px := func(n int) vg.Length { return vg.Length(n) * vg.Inch / dpi }
	img := vgimg.NewWith(vgimg.UseWH(px(l.WidthPx), px(l.HeightPx)), vgimg.UseDPI(dpi))
	dc := draw.New(img)

	p := plot.New()
	styleText(p)
	p.Title.Text = in.Title
	if l.Note != "" {
		p.Title.Text += " (" + l.Note + ")"
	}
	p.X.Label.Text = "time (" + in.End.Location().String() + ")"
	p.X.Min, p.X.Max = float64(in.Start.Unix()), float64(in.End.Unix())
	p.X.Tick.Marker = clockTicks{loc: in.End.Location()}
	legend := plot.NewLegend()
	legend.TextStyle.Font = font.From(sansFont, labelFontPt)
	legend.Top, legend.Left = true, true
	legend.ThumbnailWidth = vg.Points(18)
	legend.Padding = vg.Points(3)

	if l.Kind == "lines" {
		if err := drawLines(p, &legend, in, rows, l); err != nil {
			return nil, err
		}
	} else {
		drawHeatmap(p, &legend, in, rows, l)
	}
	// The legend gets the width its longest entry needs, within bounds, to
	// the right of the plot.
	lw := legend.Rectangle(dc).Size().X + px(24)
	lw = min(max(lw, px(minLegendPx)), px(maxLegendPx))
	p.Draw(draw.Crop(dc, px(8), -lw, px(4), -px(4)))
	legend.Draw(draw.Crop(dc, px(l.WidthPx)-lw+px(12), 0, 0, -px(40)))

	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("chart: render png: %w", err)
	}
	return buf.Bytes(), nil
}

var sansFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

func styleText(p *plot.Plot) {
	p.Title.TextStyle.Font = font.From(sansFont, titleFontPt)
	p.Title.Padding = vg.Points(8)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sansFont, labelFontPt)
		a.Tick.Label.Font = font.From(sansFont, tickFontPt)
	}
}

func drawLines(p *plot.Plot, legend *plot.Legend, in Input, rows []int, l Layout) error {
	p.Y.Label.Text = "GPU memory used (% of capacity)"
	p.Y.Min, p.Y.Max = 0, 100
	p.Add(plotter.NewGrid())
	for i, r := range rows {
		xys := make(plotter.XYs, 0, len(in.Rows[r].Points))
		for _, pt := range in.Rows[r].Points {
			xys = append(xys, plotter.XY{X: float64(pt.T.Unix()), Y: clampPct(pt.V)})
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return fmt.Errorf("chart series %q: %w", in.Rows[r].Label, err)
		}
		line.Color = linePalette[i]
		line.Width = vg.Points(1.6)
		p.Add(line)
		legend.Add(l.Rows[i], line)
	}
	limit, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: l.Threshold.Ratio * 100}, {X: p.X.Max, Y: l.Threshold.Ratio * 100}})
	if err != nil {
		return fmt.Errorf("chart threshold line: %w", err)
	}
	limit.Color = thresholdColor
	limit.Width = vg.Points(1.2)
	limit.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	p.Add(limit)
	legend.Add(l.Legend.Entries[len(rows)], limit)
	// Markers sit on their series at the marked time; an OOM with no
	// series sits on the top edge.
	restarts, ooms := placeMarkers(p, in, rows, func(i int, m Marker) float64 {
		if i < 0 {
			return 100
		}
		return valueAt(in.Rows[rows[i]].Points, m.T)
	})
	return addMarkers(p, legend, restarts, ooms)
}

func drawHeatmap(p *plot.Plot, legend *plot.Legend, in Input, rows []int, l Layout) {
	n := len(rows)
	// Row 0 of the input is the top row: plot rows count from the bottom.
	labels := make([]string, n)
	for i := range rows {
		labels[n-1-i] = l.Rows[i]
	}
	p.NominalY(labels...)
	p.Y.Tick.Label.Font = font.From(sansFont, rowLabelFontPt)
	p.Y.Padding, p.X.Padding = 0, 0
	p.Add(&cells{grid: newGrid(in, rows), threshold: l.Threshold.Ratio * 100})
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
	for _, e := range heatLegend(l.Threshold.Ratio) {
		legend.Add(e.label, swatch{e.color})
	}
	// Markers sit on their row; an OOM with no row is a line across all.
	restarts, ooms := placeMarkers(p, in, rows, func(i int, m Marker) float64 {
		if i >= 0 {
			return float64(n - 1 - i)
		}
		if v, err := plotter.NewLine(plotter.XYs{{X: float64(m.T.Unix()), Y: -0.5}, {X: float64(m.T.Unix()), Y: float64(n) - 0.5}}); err == nil {
			v.Color, v.Width, v.Dashes = markerColor, vg.Points(1), []vg.Length{vg.Points(3), vg.Points(3)}
			p.Add(v)
		}
		return float64(n) - 0.5
	})
	_ = addMarkers(p, legend, restarts, ooms)
}

// placeMarkers turns the markers inside the x range into points: y gets the
// drawn row's index (-1 for an OOM on no row). Markers on rows not drawn, and
// restarts on no row, are left out.
func placeMarkers(p *plot.Plot, in Input, rows []int, y func(i int, m Marker) float64) (restarts, ooms plotter.XYs) {
	rowIndex := indexOf(rows)
	for _, m := range in.Markers {
		x := float64(m.T.Unix())
		if x < p.X.Min || x > p.X.Max {
			continue
		}
		i, ok := rowIndex[m.Row]
		switch {
		case ok:
		case m.Row < 0 && m.Kind == MarkerOOM:
			i = -1
		default:
			continue
		}
		pt := plotter.XY{X: x, Y: y(i, m)}
		if m.Kind == MarkerRestart {
			restarts = append(restarts, pt)
		} else {
			ooms = append(ooms, pt)
		}
	}
	return restarts, ooms
}

// addMarkers draws restart crosses and OOM triangles, black on a white halo
// so they read on any cell colour.
func addMarkers(p *plot.Plot, legend *plot.Legend, restarts, ooms plotter.XYs) error {
	for _, set := range []struct {
		pts   plotter.XYs
		shape draw.GlyphDrawer
		name  MarkerKind
	}{{restarts, draw.CrossGlyph{}, MarkerRestart}, {ooms, draw.PyramidGlyph{}, MarkerOOM}} {
		if len(set.pts) == 0 {
			continue
		}
		halo, err := plotter.NewScatter(set.pts)
		if err != nil {
			return fmt.Errorf("chart markers: %w", err)
		}
		halo.GlyphStyle = draw.GlyphStyle{Color: haloColor, Radius: vg.Points(5.5), Shape: set.shape}
		mark, err := plotter.NewScatter(set.pts)
		if err != nil {
			return fmt.Errorf("chart markers: %w", err)
		}
		mark.GlyphStyle = draw.GlyphStyle{Color: markerColor, Radius: vg.Points(4), Shape: set.shape}
		if set.shape == (draw.CrossGlyph{}) {
			halo.GlyphStyle.Shape = thickCross{width: vg.Points(4)}
			mark.GlyphStyle.Shape = thickCross{width: vg.Points(1.8)}
		}
		p.Add(halo, mark)
		legend.Add(markerLegend(set.name), mark)
	}
	return nil
}

// thickCross is draw.CrossGlyph with a line width of its own.
type thickCross struct{ width vg.Length }

func (t thickCross) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: t.width})
	r := sty.Radius * vg.Length(math.Cos(math.Pi/4))
	var p vg.Path
	p.Move(vg.Point{X: pt.X - r, Y: pt.Y - r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y + r})
	c.Stroke(p)
	p = vg.Path{}
	p.Move(vg.Point{X: pt.X - r, Y: pt.Y + r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y - r})
	c.Stroke(p)
}

// swatch is a legend thumbnail filled with one colour.
type swatch struct{ c color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	c.SetColor(s.c)
	c.Fill(c.Rectangle.Path())
	c.SetLineStyle(draw.LineStyle{Color: swatchEdge, Width: vg.Points(0.5)})
	c.Stroke(c.Rectangle.Path())
}

// swatchEdge outlines legend swatches, so the near-white 0 % shows.
var swatchEdge = rgb(0x999999)

// cells draws the heatmap: per row, each run of buckets of one colour as one
// rectangle (so no anti-aliasing seams show inside a run), one pixel short of
// the row's height at top and bottom so rows stay apart.
type cells struct {
	grid      *grid
	threshold float64 // percent
}

// Plot implements plot.Plotter.
func (h *cells) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	cols, rows := h.grid.Dims()
	gap := vg.Inch / dpi
	for r := range rows {
		y0, y1 := trY(float64(r)-0.5)+gap, trY(float64(r)+0.5)-gap
		for start := 0; start < cols; {
			col := heatColor(h.grid.Z(start, r), h.threshold)
			end := start + 1
			for end < cols && heatColor(h.grid.Z(end, r), h.threshold) == col {
				end++
			}
			x0, x1 := trX(h.grid.left(start)), trX(h.grid.left(end))
			var path vg.Path
			for i, pt := range c.ClipPolygonXY([]vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}) {
				if i == 0 {
					path.Move(pt)
				} else {
					path.Line(pt)
				}
			}
			path.Close()
			c.SetColor(col)
			c.Fill(path)
			start = end
		}
	}
}

// DataRange implements plot.DataRanger.
func (h *cells) DataRange() (xmin, xmax, ymin, ymax float64) {
	cols, rows := h.grid.Dims()
	return h.grid.left(0), h.grid.left(cols), -0.5, float64(rows) - 0.5
}

// grid is the heatmap's cells: columns are time buckets, rows the series
// bottom to top, values memory used in percent (NaN: no sample).
type grid struct {
	times []time.Time
	z     [][]float64 // [plot row][column]
}

func newGrid(in Input, rows []int) *grid {
	seen := map[int64]bool{}
	var times []time.Time
	for _, r := range rows {
		for _, pt := range in.Rows[r].Points {
			if !seen[pt.T.UnixNano()] {
				seen[pt.T.UnixNano()] = true
				times = append(times, pt.T)
			}
		}
	}
	sortTimes(times)
	col := map[int64]int{}
	for i, t := range times {
		col[t.UnixNano()] = i
	}
	n := len(rows)
	g := &grid{times: times, z: make([][]float64, n)}
	for i, r := range rows {
		zr := make([]float64, len(times))
		for c := range zr {
			zr[c] = math.NaN()
		}
		for _, pt := range in.Rows[r].Points {
			zr[col[pt.T.UnixNano()]] = clampPct(pt.V)
		}
		g.z[n-1-i] = zr
	}
	return g
}

func (g *grid) Dims() (c, r int)   { return len(g.times), len(g.z) }
func (g *grid) Z(c, r int) float64 { return g.z[r][c] }

// left is where column c's bucket starts (c = len: where the last one
// ends): a point is the end of the bucket it summarises.
func (g *grid) left(c int) float64 {
	if c == len(g.times) {
		return float64(g.times[c-1].Unix())
	}
	t := g.times[c]
	switch {
	case c > 0:
		return float64(g.times[c-1].Unix())
	case len(g.times) > 1:
		return float64(t.Add(-g.times[1].Sub(g.times[0])).Unix())
	}
	return float64(t.Add(-5 * time.Minute).Unix())
}

func clampPct(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return math.NaN()
	}
	return min(max(v*100, 0), 100)
}

func indexOf(rows []int) map[int]int {
	m := map[int]int{}
	for i, r := range rows {
		m[r] = i
	}
	return m
}

// valueAt is the series' value (percent) at or just before t.
func valueAt(pts []Point, t time.Time) float64 {
	v := 0.0
	for _, p := range pts {
		if p.T.After(t) {
			break
		}
		v = clampPct(p.V)
	}
	if math.IsNaN(v) {
		return 0
	}
	return v
}
