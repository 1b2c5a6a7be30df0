package digesttest

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

	"github.com/vrambot/vrambot/internal/testutil"
)

// Startup limits for the real Prometheus: backfilling two days takes well
// under a second, a week of a thousand GPUs about ten, and start-up a few;
// the margins are for a loaded CI box.
const (
	backfillTimeout = 5 * time.Minute
	readyTimeout    = 120 * time.Second
	// maxBlock is promtool's --max-block-duration: blocks as long as the
	// data (its default of 2 h re-reads the whole file for every block).
	maxBlock = "240h"
)

// StartPrometheus backfills the days into a fresh TSDB with promtool and
// serves them with a real prometheus on a loopback port (docs/digest.md
// §3.3). It returns the server's URL; the server is killed when the test
// ends. Without the binaries the test skips, or fails when CI is set.
func StartPrometheus(tb testing.TB, days ...Day) string {
	tb.Helper()
	prometheus := needBinary(tb, "prometheus")
	promtool := needBinary(tb, "promtool")
	dir := tb.TempDir()
	om := filepath.Join(dir, "days.om")
	f, err := os.Create(om)
	if err != nil {
		tb.Fatal(err)
	}
	if err := WriteOpenMetrics(f, days...); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	ctx, cancel := context.WithTimeout(context.Background(), backfillTimeout)
	defer cancel()
	if out, err := exec.CommandContext(ctx, promtool, "tsdb", "create-blocks-from", "openmetrics", "--max-block-duration="+maxBlock, om, data).CombinedOutput(); err != nil {
		tb.Fatalf("promtool backfill: %v\n%s", err, out)
	}
	// The text is read once; a week of a thousand GPUs is hundreds of MB.
	_ = os.Remove(om)
	// No scrape targets: nothing may write "now" samples into the head.
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("global:\n  scrape_interval: 15s\nscrape_configs: []\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(tb))
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
		tb.Fatalf("start prometheus: %v", err)
	}
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if tb.Failed() {
			tb.Logf("prometheus log:\n%s", logs.String())
		}
	})
	url := "http://" + addr
	testutil.Eventually(tb, readyTimeout, "prometheus at "+url+" ready", func() bool {
		resp, err := http.Get(url + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return url
}

// needBinary returns the path of a service binary; without it the test
// skips, unless CI is set (then a missing service is a failure).
func needBinary(tb testing.TB, name string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	testutil.NeedService(tb, name+" (scripts/prometheus-install.sh installs it)", err)
	return p
}

func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
