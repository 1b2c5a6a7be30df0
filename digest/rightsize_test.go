package digest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	dt "github.com/vrambot/vrambot/digest/digesttest"
	"github.com/vrambot/vrambot/digest/fleet"
	"github.com/vrambot/vrambot/pricing"
	"github.com/vrambot/vrambot/pricing/source"
	"github.com/vrambot/vrambot/store"
)

// busyDay is the cluster day (pods changing on the H100, jobs near OOM, a
// vLLM server, a 4-GPU job, a restarting job, an idle notebook) with one
// more H100 whose job uses 22% of it all day (17.5 GiB) while busy 75%.
func busyDay() dt.Day {
	day := dt.ClusterDay()
	l := dt.GPULabels("hostname", "node-h", "1", "GPU-h1h10000-1111-2222-3333-444444444444", dt.H100, "10.0.1.9:9400", dt.Workload("ml-train", "embed-ft-0", "trainer")...)
	day.Series = append(day.Series, dt.Memory(l, dt.H100MiB, dt.ReservedH, dt.Constant(17920), false)...)
	day.Series = append(day.Series, dt.Series{Metric: fleet.MetricEngineActive, Labels: l, Value: dt.Constant(0.75)})
	return day
}

// embeddedBook is the price book on its embedded snapshot, read on day.
func embeddedBook(day time.Time) *pricing.Book {
	return pricing.NewBook(store.NewMemory(), nil, source.Embedded(), pricing.WithClock(func() time.Time { return day }),
		pricing.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
}

// TestRightSizeAcceptance is issue 27's: on a day of changing pods, the
// job on 22% of its H100 gets a proposal with dollars saved and the price
// source; the jobs near OOM, the serving pod and the 4-GPU job get none;
// with test prices (only the A100's and the H100's are known) and with
// the embedded price snapshot alike.
func TestRightSizeAcceptance(t *testing.T) {
	for _, tt := range []struct {
		name   string
		pricer Pricer
		source string
	}{
		{"test prices", testPrices, "test snapshot 2024-01"},
		{"embedded snapshot", embeddedBook(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)), "(embedded snapshot gpu-prices.csv), as of 2026-"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			day := busyDay()
			d, err := Compose(context.Background(), Inputs{Window: day.Window(), Metrics: dt.Sim{Days: []dt.Day{day}}, Events: eventLog(t, clusterEvents()), Pricer: tt.pricer})
			if err != nil {
				t.Fatal(err)
			}
			var got *RightSize
			for i, r := range d.RightSize {
				switch r.Job {
				case "ml-train/embed-ft-0":
					got = &d.RightSize[i]
				case "ml-train/" + dt.SecondH100Pod, "ml-infer/" + dt.VLLMPod, "ml-train/" + dt.FourGPUPod, "ml-train/" + dt.RestartingPod:
					t.Errorf("%s was proposed: %+v", r.Job, r)
				}
			}
			if got == nil {
				t.Fatalf("no right-size proposal for the job on 22%% of its H100: %+v", d.RightSize)
			}
			if got.GPUs != 1 || got.GPU != "H100 80GB SXM" || got.PeakBytes != 17920<<20 || got.CapacityBytes != dt.H100MiB<<20 ||
				(got.Proposal.GPU == "") == (got.Proposal.MIGProfile == "") || got.USDPerWeekSaved <= 0 || !strings.Contains(got.PriceSource, tt.source) {
				t.Errorf("proposal %+v, want 1 H100 80GB SXM, 17.5 GiB peak, a card or a MIG slice, dollars and the price source", *got)
			}
			if !strings.Contains(d.Text(), "ml-train/embed-ft-0 (1× H100 80GB SXM): peak 17.5 of 79.6 GiB, busy 75% → ") {
				t.Errorf("the thread lacks the proposal:\n%s", d.Text())
			}
		})
	}
}

// TestRightSizeJSON: right_size[] entries have exactly the fields,
// and the proposal exactly one of gpu and mig_profile.
func TestRightSizeJSON(t *testing.T) {
	day := busyDay()
	d, err := Compose(context.Background(), Inputs{Window: day.Window(), Metrics: dt.Sim{Days: []dt.Day{day}}, Pricer: testPrices})
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		RightSize []map[string]any `json:"right_size"`
	}
	if err := json.Unmarshal(mustJSON(t, d), &m); err != nil {
		t.Fatal(err)
	}
	if len(m.RightSize) == 0 {
		t.Fatal("right_size is empty")
	}
	want := []string{"job", "gpus", "gpu", "peak_bytes", "capacity_bytes", "proposal", "usd_per_week_saved", "price_source"}
	for _, r := range m.RightSize {
		if len(r) != len(want) {
			t.Errorf("right_size entry has fields %v, want exactly %v", slices.Sorted(maps.Keys(r)), want)
		}
		for _, k := range want {
			if _, ok := r[k]; !ok {
				t.Errorf("right_size entry lacks %q: %v", k, r)
			}
		}
		p, _ := r["proposal"].(map[string]any)
		_, card := p["gpu"]
		_, mig := p["mig_profile"]
		if len(p) != 1 || card == mig {
			t.Errorf("proposal %v, want exactly one of gpu and mig_profile", p)
		}
	}
}

func TestWithAge(t *testing.T) {
	end := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct{ in, want string }{
		{"cheapest on-demand L4: aws g6.xlarge at $0.80/GPU-h (aws, as of 2026-11-29)", "cheapest on-demand L4: aws g6.xlarge at $0.80/GPU-h (aws, as of 2026-11-29, 2 days old)"},
		{"x (y, as of 2026-12-01)", "x (y, as of 2026-12-01, today)"},
		{"x (y, as of 2026-09-20, 72 days old: stale)", "x (y, as of 2026-09-20, 72 days old: stale)"},
		{"test snapshot 2024-01", "test snapshot 2024-01"},
		{"x (as of not-a-date)", "x (as of not-a-date)"},
		{"x (y, as of 2026-12-02)", "x (y, as of 2026-12-02)"}, // after the window: no age
	}
	for _, tt := range tests {
		if got := withAge(tt.in, end); got != tt.want {
			t.Errorf("withAge(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFormatHours(t *testing.T) {
	tests := []struct {
		h    float64
		want string
	}{
		{0.25, "15 min"}, {1, "1 h"}, {3 + 10.0/60, "3 h 10 min"}, {24, "24 h"}, {35.0 / 60, "35 min"}, {2 + 1e-9, "2 h"},
	}
	for _, tt := range tests {
		if got := formatHours(tt.h); got != tt.want {
			t.Errorf("formatHours(%v) = %q, want %q", tt.h, got, tt.want)
		}
	}
}

func TestFormatTimes(t *testing.T) {
	at := func(d, h, m int) time.Time { return time.Date(2026, 11, d, h, m, 0, 0, time.UTC) }
	tests := []struct {
		ts   []time.Time
		want string
	}{
		{[]time.Time{at(25, 23, 55)}, "Wed 25 Nov 23:55"},
		{[]time.Time{at(25, 3, 15), at(25, 9, 40), at(26, 1, 0)}, "Wed 25 Nov 03:15, 09:40; Thu 26 Nov 01:00"},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := formatTimes(tt.ts, time.UTC); got != tt.want {
			t.Errorf("formatTimes = %q, want %q", got, tt.want)
		}
	}
}

// TestNearOOMOneLinePerJob: a week in which one 8-GPU pod runs every GPU of
// a node near OOM is one near-OOM line naming its eight GPUs, with the day
// of its peak, not eight identical lines.
func TestNearOOMOneLinePerJob(t *testing.T) {
	start := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC) // a Wednesday
	day := dt.Day{Start: start, End: start.Add(7 * 24 * time.Hour), Every: 5 * time.Minute}
	for g := range 8 {
		l := dt.GPULabels("hostname", "node-a", string(rune('0'+g)), "GPU-a"+string(rune('0'+g)), dt.H100, "10.0.0.1:9400", dt.Workload("ml", "ddp-job", "trainer")...)
		peakAt := start.Add(6*24*time.Hour + 14*time.Hour + 55*time.Minute) // Tue 1 Dec 23:55
		day.Series = append(day.Series, dt.Memory(l, dt.H100MiB, dt.ReservedH, func(t time.Time) (float64, bool) {
			switch {
			case g == 3 && t.Equal(peakAt):
				return 80800, true
			case t.After(peakAt.Add(-3*time.Hour)) && !t.After(peakAt.Add(10*time.Minute)):
				return 78000, true
			}
			return 60000, true
		}, false)...)
		day.Series = append(day.Series, dt.Series{Metric: fleet.MetricEngineActive, Labels: l, Value: dt.Constant(0.9)})
	}
	d, err := Compose(context.Background(), Inputs{Window: day.Window(), Metrics: dt.Sim{Days: []dt.Day{day}}})
	if err != nil {
		t.Fatal(err)
	}
	text := d.Text()
	if n := strings.Count(text, "ml/ddp-job (8× H100 80GB SXM on node-a): 95%+ for "); n != 1 {
		t.Errorf("%d near-OOM lines for the 8-GPU job, want 1:\n%s", n, text)
	}
	// The peak is told at the end of its 35-minute bucket, on the second
	// of the window's two Wednesdays.
	if !strings.Contains(text, "peak 78.9 of 79.6 GiB on GPU 3 at Wed 2 Dec 00:15") {
		t.Errorf("the line does not name the peak's GPU and day:\n%s", text)
	}
	if len(d.NearOOM) != 8 || !strings.Contains(d.Reply().Summary, "1 job (8 GPUs) near OOM") {
		t.Errorf("near_oom has %d GPUs, summary %q; want 8 GPUs in one job", len(d.NearOOM), d.Reply().Summary)
	}
}
