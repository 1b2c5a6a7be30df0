package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/bot"
	"github.com/vrambot/vrambot/digest"
	"github.com/vrambot/vrambot/internal/golden"
)

func compose(t *testing.T) digest.Digest {
	t.Helper()
	d, err := Compose(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDemoGolden pins what `vrambot digest --demo` prints: the text, the
// JSON (--json) and the Slack messages (--blocks), as the CLI writes them.
func TestDemoGolden(t *testing.T) {
	d := compose(t)
	golden.Check(t, "demo.txt", []byte(d.Text()))
	golden.Check(t, "demo.json", mustJSON(t, d))
	golden.Check(t, "demo.blocks.json", mustJSON(t, bot.Thread(d.Reply(), d.ChartFileName(), d.ThreadReplies())))
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestDemoDay checks the demo day's story: the one job on a fifth of its
// H100 gets a right-size proposal with dollars saved and their price
// source; the 8-GPU job near OOM, the serving engine and the 4-GPU job get
// none; the near-OOM finding is one line for the 8-GPU job, its time with
// its day.
func TestDemoDay(t *testing.T) {
	d := compose(t)
	proposed := map[string]digest.RightSize{}
	for _, r := range d.RightSize {
		proposed[r.Job] = r
	}
	r, ok := proposed[RightSizeJob]
	if !ok || r.GPUs != 1 || r.GPU != "H100 80GB SXM" || r.Proposal.MIGProfile != "3g.40gb" || r.Proposal.GPU != "" ||
		r.USDPerWeekSaved <= 0 || !strings.Contains(r.PriceSource, "as of 2026-11-29, 2 days old") {
		t.Errorf("right_size for %s = %+v, want a 3g.40gb slice saving dollars, priced with source and age", RightSizeJob, r)
	}
	if gib := float64(r.PeakBytes) / (1 << 30); gib < 17 || gib > 18 || r.CapacityBytes != H100MiB<<20 {
		t.Errorf("%s: peak %.1f GiB of %d bytes, want 17.5 GiB of an H100", RightSizeJob, gib, r.CapacityBytes)
	}
	for _, job := range []string{DDPJob, ServingJob, FourGPUJob, NotebookJob, FirstPod, SecondPod} {
		if p, ok := proposed[job]; ok {
			t.Errorf("%s got a right-size proposal: %+v", job, p)
		}
	}
	text := d.Text()
	if n := strings.Count(text, DDPJob+" (8× H100 80GB SXM on node-a): 95%+ for 3 h 15 min, peak 78.9 of 79.6 GiB on GPU 3 at Tue 1 Dec"); n != 1 {
		t.Errorf("the 8-GPU job's near-OOM line appears %d times, want once:\n%s", n, text)
	}
	if len(d.NearOOM) != 8 {
		t.Errorf("near_oom has %d GPUs, want the 8 of %s (the JSON stays per GPU)", len(d.NearOOM), DDPJob)
	}
	for _, n := range d.NearOOM {
		if n.Job != DDPJob {
			t.Errorf("near_oom %s belongs to %q, want %s", n.Name(), n.Job, DDPJob)
		}
	}
}

// TestDemoChart checks the demo's chart by its palette and size, not by
// pixels: one heatmap row per GPU, and every class the day's memory falls
// in drawn in the scale's own colour.
func TestDemoChart(t *testing.T) {
	d := compose(t)
	l, err := d.ChartLayout()
	if err != nil {
		t.Fatal(err)
	}
	if l.Kind != "heatmap" || len(l.Rows) != 22 || l.WidthPx != 1200 || l.HeightPx != 150+18*22 {
		t.Errorf("layout %s of %d rows, %dx%d px; want a heatmap of 22 rows, 1200x546", l.Kind, len(l.Rows), l.WidthPx, l.HeightPx)
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
		t.Errorf("PNG is %v, want %dx%d", img.Bounds(), l.WidthPx, l.HeightPx)
	}
	used := colours(img)
	// The day has cells in every class: free GPUs (0-25%), the notebook
	// (38%), two trainings (65-75%), the 8-GPU job (86%), vLLM (92%) and
	// the 8-GPU job's hard stretch (95%+).
	want := append(append([]string(nil), l.Scale...), l.Threshold.Color)
	for _, c := range want {
		if used[c] < 100 {
			t.Errorf("colour %s drawn on %d pixels, want a cell's worth", c, used[c])
		}
	}
	if len(b) > 1<<20 {
		t.Errorf("chart is %d bytes, want under 1 MiB", len(b))
	}
}

// colours counts the pixels of each colour, as "#RRGGBB".
func colours(img image.Image) map[string]int {
	out := map[string]int{}
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			out[fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8)]++
		}
	}
	return out
}

// TestDemoFromItsJSON: `vrambot digest --demo --json` read back renders
// the demo's text.
func TestDemoFromItsJSON(t *testing.T) {
	d := compose(t)
	var back digest.Digest
	if err := json.Unmarshal(mustJSON(t, d), &back); err != nil {
		t.Fatal(err)
	}
	if back.Text() != d.Text() {
		t.Errorf("the demo read from its JSON renders differently:\n%s", back.Text())
	}
}
