package digest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"strconv"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/digest/chart"
	dt "github.com/vrambot/vrambot/digest/digesttest"
)

// TestChartOf32GPUs is issue 13's chart acceptance: a digest of 32 GPUs
// draws a heatmap with one row per GPU, and the PNG decodes.
func TestChartOf32GPUs(t *testing.T) {
	day := dt.FleetDay(32)
	d, err := Compose(context.Background(), Inputs{Window: day.Window(), Metrics: dt.Sim{Days: []dt.Day{day}}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := chart.Plan(d.chart)
	if err != nil {
		t.Fatal(err)
	}
	if l.Kind != "heatmap" || len(l.Rows) != 32 {
		t.Errorf("chart is a %s of %d rows, want a heatmap of 32", l.Kind, len(l.Rows))
	}
	b, err := d.ChartPNG()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() != l.WidthPx || img.Bounds().Dy() != l.HeightPx {
		t.Errorf("PNG %v, want %dx%d", img.Bounds(), l.WidthPx, l.HeightPx)
	}
}

// TestChartRowsAndMarkers: the cluster day's chart has one row per GPU in
// fleet order, with GiB in the labels, restart markers on the restarting
// GPU and the OOMs: the matched one on that GPU, the other across all rows.
func TestChartRowsAndMarkers(t *testing.T) {
	d, err := Compose(context.Background(), clusterInputs(t, dt.Sim{Days: []dt.Day{dt.ClusterDay()}}))
	if err != nil {
		t.Fatal(err)
	}
	l, err := chart.Plan(d.chart)
	if err != nil {
		t.Fatal(err)
	}
	if l.Kind != "heatmap" || len(l.Rows) != 11 || l.Rows[4] != "node-a GPU 4  68/80 GiB" || l.Rows[10] != "node-h GPU 0  77/80 GiB" {
		t.Errorf("rows %q", l.Rows)
	}
	var restarts, onRow, across int
	for _, m := range l.Markers {
		switch {
		case m.Kind == chart.MarkerRestart && m.Row == l.Rows[4]:
			restarts++
		case m.Kind == chart.MarkerOOM && m.Row == l.Rows[4]:
			onRow++
		case m.Kind == chart.MarkerOOM && m.Row == "":
			across++
		}
	}
	if restarts != 2 || onRow != 1 || across != 1 || len(l.Markers) != 4 {
		t.Errorf("markers %+v, want 2 restarts and the matched OOM on node-a GPU 4, the other OOM across", l.Markers)
	}
}

// TestChartPerJobAboveTheRowLimit: more GPUs than a heatmap has rows makes
// one row per job.
func TestChartPerJobAboveTheRowLimit(t *testing.T) {
	day := dt.FleetDay(chart.MaxRows + 8)
	// Two GPUs per job: GPUs 2k and 2k+1 belong to pod pair-k.
	for i := range day.Series {
		l := day.Series[i].Labels
		gpu, err := strconv.Atoi(l["UUID"][len("GPU-f") : len("GPU-f")+7])
		if err != nil {
			t.Fatal(err)
		}
		day.Series[i].Labels = dt.With(l, "exported_pod", fmt.Sprintf("pair-%02d", gpu/2))
	}
	d, err := Compose(context.Background(), Inputs{Window: day.Window(), Metrics: dt.Sim{Days: []dt.Day{day}}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := chart.Plan(d.chart)
	if err != nil {
		t.Fatal(err)
	}
	if want := (chart.MaxRows + 8) / 2; d.GPUsSeen != chart.MaxRows+8 || len(d.Jobs) != want || l.Kind != "heatmap" || len(l.Rows) != want || !strings.Contains(l.Title, "one row per job") {
		t.Errorf("%s of %d rows (%q) for %d jobs on %d GPUs, want one row per job", l.Kind, len(l.Rows), l.Title, len(d.Jobs), d.GPUsSeen)
	}
}

func TestChartWithoutData(t *testing.T) {
	d, err := Compose(context.Background(), Inputs{Window: dt.ClusterDay().Window()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.ChartPNG(); !errors.Is(err, chart.ErrNoData) {
		t.Errorf("chart without metrics: %v, want ErrNoData", err)
	}
	if _, err := (Digest{}).ChartPNG(); !errors.Is(err, chart.ErrNoData) {
		t.Errorf("chart of a zero digest: %v, want ErrNoData", err)
	}
}

// TestChartSaysWhatItLeftOut: one row per job, the rows past the limit and
// the GPUs no job held are named in the chart's note.
func TestChartSaysWhatItLeftOut(t *testing.T) {
	day := dt.FleetDay(chart.MaxRows + 8) // one job per GPU: 72 jobs
	for g := range 3 {
		l := dt.GPULabels("hostname", "spare", fmt.Sprint(g), fmt.Sprintf("GPU-spare-%d", g), dt.A100, "10.0.9.1:9400")
		day.Series = append(day.Series, dt.Memory(l, dt.A100MiB, dt.ReservedA, dt.Constant(0), false)...)
	}
	d, err := Compose(context.Background(), Inputs{Window: day.Window(), Metrics: dt.Sim{Days: []dt.Day{day}}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := d.ChartLayout()
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("the %d of %d jobs with the highest peaks; 3 GPUs no job held not shown", chart.MaxRows, chart.MaxRows+8)
	if len(l.Rows) != chart.MaxRows || l.Note != want {
		t.Errorf("%d rows, note %q; want %d rows and %q", len(l.Rows), l.Note, chart.MaxRows, want)
	}
}
