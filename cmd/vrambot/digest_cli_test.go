package main

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	dt "github.com/vrambot/vrambot/digest/digesttest"
	"github.com/vrambot/vrambot/internal/slacktest"
)

// TestDigestChartFile is issue 13's acceptance for the CLI: `vrambot digest
// --chart FILE` writes a PNG that decodes, one heatmap row per GPU for 32
// GPUs, with or without --dry-run.
func TestDigestChartFile(t *testing.T) {
	day := dt.FleetDay(32)
	prom := dt.FakePrometheus(t, day)
	at := day.End.Format("2006-01-02T15:04:05Z07:00")
	fs := slacktest.New(t)
	for _, tt := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"dry run", map[string]string{"VRAMBOT_PROMETHEUS_URL": prom.URL}, []string{"--dry-run"}},
		{"posting", map[string]string{"VRAMBOT_PROMETHEUS_URL": prom.URL, "SLACK_BOT_TOKEN": slacktest.BotToken, "VRAMBOT_SLACK_API_URL": fs.APIURL(), "VRAMBOT_DIGEST_CHANNEL": "C0DIGEST"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "chart.png")
			args := append([]string{"digest", "--at", at, "--chart", file}, tt.args...)
			code, out, stderr := runCLI(t, tt.env, "", args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("chart is not a PNG: %v", err)
			}
			// A heatmap's height is its chrome and 18 px a row: 32 rows.
			if got, want := img.Bounds().Dy(), 150+18*32; got != want {
				t.Errorf("chart is %d px high, want %d (a heatmap of 32 rows)", got, want)
			}
			if !strings.Contains(out, "32 GPUs seen") {
				t.Errorf("digest text: %.300s", out)
			}
		})
	}
	// The top message is the chart's share (the upload flow), or a plain
	// post when the chart could not be uploaded.
	if msgs := fs.Messages(); len(msgs) == 0 || msgs[0].Channel != "C0DIGEST" || msgs[0].Blocks == "" {
		t.Errorf("the posting run did not post: %+v", msgs)
	}
}

func TestDigestWindowFlag(t *testing.T) {
	day := dt.ClusterDay()
	prom := dt.FakePrometheus(t, day)
	env := map[string]string{"VRAMBOT_PROMETHEUS_URL": prom.URL}
	at := day.End.Format("2006-01-02T15:04:05Z07:00")
	code, out, stderr := runCLI(t, env, "", "digest", "--json", "--dry-run", "--window", "7d", "--at", at)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var d struct {
		Window   struct{ Duration string }
		GPUsSeen int `json:"gpus_seen"`
		Jobs     []struct {
			Name     string
			Restarts int
		}
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Window.Duration != "7d" || d.GPUsSeen != 11 || len(d.Jobs) != 6 {
		t.Errorf("weekly digest: window %q, %d GPUs, %d jobs; want 7d, 11, 6", d.Window.Duration, d.GPUsSeen, len(d.Jobs))
	}
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--window", "seven days"}, 2, "--window"},
		{[]string{"--window", "40d"}, 2, "--window"},
		{[]string{"--window", "1d12h", "--json"}, 0, `"duration": "36h"`},
	} {
		code, out, stderr := runCLI(t, env, "", append([]string{"digest", "--dry-run", "--at", at}, tt.args...)...)
		if code != tt.code || !strings.Contains(out+stderr, tt.want) {
			t.Errorf("digest %v: exit %d, %.200s%.200s; want exit %d saying %q", tt.args, code, stderr, out, tt.code, tt.want)
		}
	}
}

// TestDigestChartWithoutMetrics: with no Prometheus the digest is the
// digest of what there is (the OOM log), the chart is skipped with a note
// naming VRAMBOT_PROMETHEUS_URL, no file is written, and the exit is 0.
func TestDigestChartWithoutMetrics(t *testing.T) {
	file := filepath.Join(t.TempDir(), "chart.png")
	code, out, stderr := runCLI(t, nil, "", "digest", "--dry-run", "--chart", file)
	if code != 0 || !strings.Contains(stderr, "--chart: skipped") || !strings.Contains(stderr, "VRAMBOT_PROMETHEUS_URL") {
		t.Errorf("exit %d, %q; want 0 and a note naming VRAMBOT_PROMETHEUS_URL", code, stderr)
	}
	if !strings.Contains(out, "Prometheus is not configured") {
		t.Errorf("no digest printed: %.300s", out)
	}
	if _, err := os.Stat(file); err == nil {
		t.Error("a chart file was written with nothing to draw")
	}
}

// TestDigestDemo is issue 27's CLI acceptance: `vrambot digest --demo`
// needs no service and prints the demo day's digest as its golden files
// hold it (digest/demo/testdata) as text, --json and --blocks, and --chart
// writes its PNG; --demo takes no --window or --at.
func TestDigestDemo(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		golden string
	}{
		{"text", nil, "demo.txt"},
		{"json", []string{"--json"}, "demo.json"},
		{"blocks", []string{"--blocks", "--dry-run"}, "demo.blocks.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := runCLI(t, nil, "", append([]string{"digest", "--demo"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			want, err := os.ReadFile(filepath.Join("..", "..", "digest", "demo", "testdata", tt.golden))
			if err != nil {
				t.Fatal(err)
			}
			if out != string(want) {
				t.Errorf("digest --demo %v differs from digest/demo/testdata/%s (go test ./digest/demo -update rewrites it):\n%.2000s", tt.args, tt.golden, out)
			}
		})
	}
	file := filepath.Join(t.TempDir(), "demo.png")
	if code, _, stderr := runCLI(t, nil, "", "digest", "--demo", "--chart", file); code != 0 {
		t.Fatalf("--chart: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("demo chart is not a PNG: %v", err)
	}
	if img.Bounds().Dx() != 1200 || img.Bounds().Dy() != 150+18*22 {
		t.Errorf("demo chart is %v, want 1200x546 (22 heatmap rows)", img.Bounds())
	}
	for _, args := range [][]string{{"--window", "7d"}, {"--at", "2026-11-29T09:00:00Z"}, {"--json", "--blocks"}} {
		if code, _, stderr := runCLI(t, nil, "", append([]string{"digest", "--demo"}, args...)...); code != 2 {
			t.Errorf("digest --demo %v: exit %d (%s), want 2", args, code, stderr)
		}
	}
}
