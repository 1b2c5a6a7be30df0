package digest

import (
	"context"
	"os"
	"testing"
	"time"

	dt "github.com/vrambot/vrambot/digest/digesttest"
	"github.com/vrambot/vrambot/digest/prom"
	"github.com/vrambot/vrambot/internal/golden"
)

// TestPrometheusAcceptance runs the digest against a real Prometheus loaded
// with the story day and the cluster day by promtool backfill (issue 13's
// acceptance): it must find exactly what each day holds, and the same
// digest as the in-process simulation of the queries (the golden files).
func TestPrometheusAcceptance(t *testing.T) {
	url := dt.StartPrometheus(t, dt.StoryDay(), dt.ClusterDay())
	src, err := prom.New(url, prom.WithQueryTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("cluster day", func(t *testing.T) {
		start := time.Now()
		d, err := Compose(context.Background(), clusterInputs(t, src))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("compose against prometheus took %s", time.Since(start))
		checkCluster(t, d)
		golden.Check(t, "cluster.json", mustJSON(t, d))
		png, err := d.ChartPNG()
		if err != nil || len(png) == 0 {
			t.Errorf("chart of prometheus data: %d bytes, %v", len(png), err)
		}
	})
	t.Run("story day", func(t *testing.T) {
		d, err := Compose(context.Background(), storyInputs(t, src))
		if err != nil {
			t.Fatal(err)
		}
		checkStory(t, d)
		golden.Check(t, "story.json", mustJSON(t, d))
	})
}

// BenchmarkDigestWeekOf1000GPUs is issue 27's scale check: a week of a
// thousand GPUs, backfilled into a real Prometheus by promtool, digested
// (seven range queries, the fleet analysis, right-sizing, the text and
// the chart) in under 5 s a run. The samples are every 15 minutes
// (VRAMBOT_BENCH_EVERY=30s for a scrape's density, minutes to backfill):
// the digest reads the same 288 buckets of the same 4,000 series either
// way; Prometheus reads fewer samples per bucket. Setup (about 15 s on two
// cores) is outside the timing.
func BenchmarkDigestWeekOf1000GPUs(b *testing.B) {
	every := 15 * time.Minute
	if v := os.Getenv("VRAMBOT_BENCH_EVERY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second {
			b.Fatalf("VRAMBOT_BENCH_EVERY=%q: want a duration of a second or more", v)
		}
		every = d
	}
	const gpus = 1000
	week := dt.FleetWeek(gpus, every)
	url := dt.StartPrometheus(b, week)
	src, err := prom.New(url, prom.WithQueryTimeout(2*time.Minute))
	if err != nil {
		b.Fatal(err)
	}
	in := Inputs{Window: week.Window(), Metrics: src, Pricer: testPrices}
	ctx := context.Background()
	for b.Loop() {
		d, err := Compose(ctx, in)
		if err != nil {
			b.Fatal(err)
		}
		if d.GPUsSeen != gpus || d.DataQuality.Prometheus != StatusOK {
			b.Fatalf("digest saw %d GPUs (prometheus %s), want %d", d.GPUsSeen, d.DataQuality.Prometheus, gpus)
		}
		_ = d.Text()
		if _, err := d.ChartPNG(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(gpus), "gpus")
}
