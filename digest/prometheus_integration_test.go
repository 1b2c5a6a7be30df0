package digest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/vrambot/vrambot/internal/golden"
	"github.com/vrambot/vrambot/internal/testutil"
)

// needBinary returns the path of a service binary; without it the test
// skips, unless CI is set (then a missing service is a failure).
func needBinary(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	testutil.NeedService(t, name+" (scripts/prometheus-install.sh installs it)", err)
	return p
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startStoryPrometheus backfills the story day into a fresh TSDB with
// promtool and serves it with a real prometheus on a loopback port
// (digest.md §3.3). The server is killed when the test ends.
func startStoryPrometheus(t *testing.T) string {
	t.Helper()
	prometheus := needBinary(t, "prometheus")
	promtool := needBinary(t, "promtool")
	dir := t.TempDir()
	om := filepath.Join(dir, "story.om")
	var buf bytes.Buffer
	if err := writeOpenMetrics(&buf, storyDay()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(om, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, promtool, "tsdb", "create-blocks-from", "openmetrics", om, data).CombinedOutput(); err != nil {
		t.Fatalf("promtool backfill: %v\n%s", err, out)
	}
	// No scrape targets: nothing may write "now" samples into the head.
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("global:\n  scrape_interval: 15s\nscrape_configs: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	var logs bytes.Buffer
	cmd := exec.Command(prometheus,
		"--config.file="+cfg,
		"--storage.tsdb.path="+data,
		// Retention counts from the newest block, so 2024 data survives.
		"--storage.tsdb.retention.time=15d",
		"--web.listen-address="+addr,
	)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start prometheus: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus log:\n%s", logs.String())
		}
	})
	url := "http://" + addr
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(url + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus at %s not ready after 20 s: %v", url, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestPrometheusStory runs the digest against a real Prometheus holding the
// story day and checks it finds exactly the story, and the same digest the
// in-process simulation of the queries gives (testdata/story.json).
func TestPrometheusStory(t *testing.T) {
	url := startStoryPrometheus(t)
	src, err := NewPrometheus(url, WithQueryTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	d, err := Compose(context.Background(), storyInputs(t, src))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("compose against prometheus took %s", time.Since(start))
	checkStory(t, d)
	golden.Check(t, "story.json", mustJSON(t, d))
	if len(d.Chart) == 0 {
		t.Error("no chart series from prometheus")
	}
	if _, err := Chart("story", Window{Start: storyStart, End: storyEnd}, d.Chart); err != nil {
		t.Errorf("chart of prometheus data: %v", err)
	}
}
