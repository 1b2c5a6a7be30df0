package digest

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// ErrNoChartData is returned by Chart when no series has a point.
var ErrNoChartData = errors.New("chart: no data to draw")

// Chart size: 10×5 in at gonum's 96 dpi is 960×480 px, readable in a Slack
// preview and far below Slack's file limits.
const (
	chartWidth  = 10 * vg.Inch
	chartHeight = 5 * vg.Inch
)

// Chart draws memory used (% of capacity) over the window, one line per
// series (at most maxChartSeries, as Compose picks them), with the 95 %
// near-OOM line, and returns it as PNG.
func Chart(title string, w Window, series []Series) ([]byte, error) {
	if err := w.validate(); err != nil {
		return nil, err
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "time (" + w.End.Location().String() + ")"
	p.Y.Label.Text = "GPU memory used (% of capacity)"
	p.X.Min, p.X.Max = float64(w.Start.Unix()), float64(w.End.Unix())
	p.Y.Min, p.Y.Max = 0, 100
	p.X.Tick.Marker = clockTicks{loc: w.End.Location()}
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = false, true
	p.Legend.Padding = vg.Points(2)

	drawn := 0
	for i, s := range series[:min(len(series), maxChartSeries)] {
		xys := make(plotter.XYs, 0, len(s.Points))
		for _, pt := range s.Points {
			xys = append(xys, plotter.XY{X: float64(pt.T.Unix()), Y: min(pt.V*100, 100)})
		}
		if len(xys) == 0 {
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("chart series %q: %w", s.Name, err)
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(s.Name, l)
		drawn++
	}
	if drawn == 0 {
		return nil, ErrNoChartData
	}
	limit, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: 95}, {X: p.X.Max, Y: 95}})
	if err != nil {
		return nil, fmt.Errorf("chart 95%% line: %w", err)
	}
	limit.Color = color.RGBA{R: 200, A: 255}
	limit.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	p.Add(limit)
	p.Legend.Add("95% (near OOM)", limit)

	wt, err := p.WriterTo(chartWidth, chartHeight, "png")
	if err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("chart: render png: %w", err)
	}
	return buf.Bytes(), nil
}

// clockTicks puts time-axis ticks on whole local hours (every 1, 2, 3, 6 or
// 12 h) or midnights, at most about eight of them, instead of gonum's
// ticks at arbitrary seconds.
type clockTicks struct{ loc *time.Location }

func (c clockTicks) Ticks(lo, hi float64) []plot.Tick {
	start, end := time.Unix(int64(lo), 0).In(c.loc), time.Unix(int64(hi), 0).In(c.loc)
	span := end.Sub(start)
	every := 24 * time.Hour
	for _, h := range []int{1, 2, 3, 6, 12} {
		if span/(time.Duration(h)*time.Hour) <= 8 {
			every = time.Duration(h) * time.Hour
			break
		}
	}
	days := 1
	for every == 24*time.Hour && span/(time.Duration(days)*24*time.Hour) > 8 {
		days++
	}
	format := "Mon 15:04"
	if every == 24*time.Hour {
		format = "Mon 2 Jan"
	}
	var ticks []plot.Tick
	t := time.Date(start.Year(), start.Month(), start.Day(), start.Hour(), 0, 0, 0, c.loc)
	for ; !t.After(end); t = t.Add(time.Hour) {
		if t.Before(start) {
			continue
		}
		onTick := every < 24*time.Hour && t.Hour()%int(every.Hours()) == 0 && t.Minute() == 0
		onDay := every == 24*time.Hour && t.Hour() == 0 && t.YearDay()%days == 0
		if onTick || onDay {
			ticks = append(ticks, plot.Tick{Value: float64(t.Unix()), Label: t.Format(format)})
		}
	}
	return ticks
}
