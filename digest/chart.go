package digest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vrambot/vrambot/digest/chart"
	"github.com/vrambot/vrambot/digest/fleet"
)

// ChartPNG draws the digest's chart (digest/chart): one row or line per GPU,
// or per job when there are more GPUs than a heatmap has rows.
// chart.ErrNoData means there was nothing to draw.
func (d Digest) ChartPNG() ([]byte, error) {
	if d.chart.Start.IsZero() {
		return nil, chart.ErrNoData
	}
	return chart.Render(d.chart)
}

// ChartLayout is the layout ChartPNG draws (chart.Plan): its kind, size,
// rows, palette and legend. chart.ErrNoData means there is nothing to draw.
func (d Digest) ChartLayout() (chart.Layout, error) {
	if d.chart.Start.IsZero() {
		return chart.Layout{}, chart.ErrNoData
	}
	return chart.Plan(d.chart)
}

// HasChart reports whether ChartPNG has anything to draw.
func (d Digest) HasChart() bool {
	_, err := d.ChartLayout()
	return err == nil
}

// ChartTitle is the chart's title, also its Slack file title.
func (d Digest) ChartTitle() string { return d.chart.Title }

// ChartFileName is the name the chart is uploaded under.
func (d Digest) ChartFileName() string {
	return "gpu-memory-" + d.Window.End.Format("2006-01-02") + ".png"
}

func chartInput(d Digest, f fleet.Fleet, th fleet.Thresholds, events []OOMEvent, matches map[int]oomMatch) chart.Input {
	loc := d.Window.End.Location()
	what := "GPU memory used"
	if d.Demo {
		what += " (demo day)"
	}
	in := chart.Input{
		Title:     fmt.Sprintf("%s, %s → %s", what, d.Window.Start.In(loc).Format("Mon 2 Jan 15:04"), d.Window.End.Format("Mon 2 Jan 15:04 MST")),
		Start:     d.Window.Start,
		End:       d.Window.End,
		Threshold: th.NearOOMRatio,
	}
	// Rows are GPUs, or jobs when there are more GPUs than rows; an OOM
	// matched with a restart goes on that GPU's (or job's) row.
	rowOf := map[string]int{}
	oomRow := func(m oomMatch) string { return m.gpu }
	if len(f.GPUs) <= chart.MaxRows {
		for _, g := range f.GPUs {
			if len(g.Ratio) == 0 {
				continue
			}
			rowOf[g.Name()] = len(in.Rows)
			in.Rows = append(in.Rows, chart.Row{
				Label:  fmt.Sprintf("%s  %s/%s GiB", g.Name(), formatGiB(g.PeakUsedBytes), formatGiB(g.CapacityBytes)),
				Points: chartPoints(g.Ratio),
			})
			for _, r := range g.Restarts {
				in.Markers = append(in.Markers, chart.Marker{Kind: chart.MarkerRestart, Row: rowOf[g.Name()], T: r.At})
			}
		}
	} else {
		jobs := append([]fleet.Job(nil), f.Jobs...)
		sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].PeakUsedRatio > jobs[b].PeakUsedRatio })
		in.Title += fmt.Sprintf(" — one row per job (%d GPUs)", len(f.GPUs))
		in.Note = leftOut(f, jobs)
		for _, j := range jobs {
			if len(j.Ratio) == 0 || len(in.Rows) == chart.MaxRows {
				continue
			}
			rowOf[j.Name] = len(in.Rows)
			in.Rows = append(in.Rows, chart.Row{
				Label:  fmt.Sprintf("%s  %s, peak %.0f%%", j.Name, fleet.Plural(len(j.GPUs), "GPU"), j.PeakUsedRatio*100),
				Points: chartPoints(j.Ratio),
			})
			for _, r := range j.Restarts {
				in.Markers = append(in.Markers, chart.Marker{Kind: chart.MarkerRestart, Row: rowOf[j.Name], T: r.At})
			}
		}
		oomRow = func(m oomMatch) string { return m.job }
	}
	for i, e := range events {
		row := -1
		if m, ok := matches[i]; ok {
			if r, ok := rowOf[oomRow(m)]; ok {
				row = r
			}
		}
		in.Markers = append(in.Markers, chart.Marker{Kind: chart.MarkerOOM, Row: row, T: e.At})
	}
	return in
}

// leftOut says what a chart of one row per job does not show: the jobs
// past the row limit (the lowest peaks) and the GPUs no job held.
func leftOut(f fleet.Fleet, jobs []fleet.Job) string {
	var parts []string
	drawn := 0
	for _, j := range jobs {
		if len(j.Ratio) > 0 {
			drawn++
		}
	}
	if drawn > chart.MaxRows {
		parts = append(parts, fmt.Sprintf("the %d of %d jobs with the highest peaks", chart.MaxRows, drawn))
	}
	held := map[fleet.GPUKey]bool{}
	for _, j := range f.Jobs {
		for _, k := range j.GPUs {
			held[k] = true
		}
	}
	free := 0
	for _, g := range f.GPUs {
		if !held[g.Key] {
			free++
		}
	}
	if free > 0 {
		parts = append(parts, fmt.Sprintf("%s no job held not shown", fleet.Plural(free, "GPU")))
	}
	return strings.Join(parts, "; ")
}

func chartPoints(ps []fleet.Point) []chart.Point {
	out := make([]chart.Point, len(ps))
	for i, p := range ps {
		out[i] = chart.Point{T: p.T, V: p.V}
	}
	return out
}

// formatGiB is a size in whole GiB (one decimal under 10 GiB).
func formatGiB(b int64) string {
	g := float64(b) / (1 << 30)
	if g < 10 {
		return fmt.Sprintf("%.1f", g)
	}
	return fmt.Sprintf("%.0f", g)
}
