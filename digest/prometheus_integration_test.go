package digest

import (
	"context"
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
