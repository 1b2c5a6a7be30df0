package digest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vrambot/vrambot/internal/golden"
	"github.com/vrambot/vrambot/reply"
	"github.com/vrambot/vrambot/store"
)

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// renderAll is the main message and its thread as the CLI shows them.
func renderAll(d Digest) []byte {
	var b strings.Builder
	b.WriteString(reply.Text(d.Reply()))
	for _, r := range d.ThreadReplies() {
		b.WriteString("\n--- thread ---\n")
		b.WriteString(reply.Text(r))
	}
	return []byte(b.String())
}

func storyEventLog(t *testing.T) *EventLog {
	t.Helper()
	log := NewEventLog(store.NewMemory())
	for _, e := range storyEvents() {
		if err := log.Record(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	return log
}

func storyInputs(t *testing.T, m Metrics) Inputs {
	return Inputs{Window: Window{Start: storyStart, End: storyEnd}, Metrics: m, Events: storyEventLog(t), Pricer: storyPrices}
}

// checkStory asserts the digest found exactly the story of story_test.go.
func checkStory(t *testing.T, d Digest) {
	t.Helper()
	if d.GPUsSeen != 6 {
		t.Errorf("gpus_seen = %d, want 6", d.GPUsSeen)
	}
	if len(d.NearOOM) != 1 {
		t.Fatalf("near_oom = %+v, want node-a GPU 0 only", d.NearOOM)
	}
	n := d.NearOOM[0]
	if n.Host != "node-a" || n.GPU != "0" || n.Owner != "ml-train/llama-ft-0" || n.HoursAbove95 != 6 || n.PeakUsedRatio != 0.959 {
		t.Errorf("near_oom[0] = %+v, want node-a GPU 0, ml-train/llama-ft-0, 6 h, 0.959", n)
	}
	if len(d.IdleHolding) != 2 {
		t.Fatalf("idle_holding = %+v, want node-a GPU 1 and node-c MIG 7", d.IdleHolding)
	}
	alice, bob := d.IdleHolding[0], d.IdleHolding[1]
	if alice.Host != "node-a" || alice.GPU != "1" || alice.Owner != "research/jupyter-alice-0" || alice.IdleHours != 24 || alice.MemoryHeldBytes != 30<<30 || alice.GPUHours != 24 {
		t.Errorf("idle_holding[0] = %+v, want node-a GPU 1 research/jupyter-alice-0 idle 24 h holding 30 GiB", alice)
	}
	if alice.USD == nil || *alice.USD != 36 {
		t.Errorf("idle_holding[0].usd = %v, want 36 (24 GPU-hours at $1.50)", alice.USD)
	}
	if bob.Host != "node-c" || bob.MIGInstance != "7" || bob.MIGProfile != "1g.10gb" || bob.Owner != "research/jupyter-bob-0" || bob.IdleHours != 24 || bob.MemoryHeldBytes != 4<<30 || bob.GPUHours != 3.43 {
		t.Errorf("idle_holding[1] = %+v, want node-c MIG 7 research/jupyter-bob-0 idle 24 h holding 4 GiB, 3.43 GPU-hours", bob)
	}
	stopped := d.DataQuality.StoppedReporting
	if len(stopped) != 1 || stopped[0].Host != "node-b" || !stopped[0].LastSeen.Equal(at(12, 0)) {
		t.Errorf("stopped_reporting = %+v, want node-b GPU 0 last seen 12:00", stopped)
	}
	if d.OOMEvents.Total != 3 || d.OOMEvents.ByCause["fragmentation"] != 2 || d.OOMEvents.ByFormat["xla"] != 1 {
		t.Errorf("oom_events = %+v, want 3 in the window, 2 fragmentation, 1 xla", d.OOMEvents)
	}
	for _, c := range d.TopConsumers {
		if strings.Contains(c.Name, "gpu-operator") || strings.Contains(c.Name, "dcgm-exporter") {
			t.Errorf("top consumer %q is the exporter, not a workload (exported_* labels ignored)", c.Name)
		}
	}
	if len(d.Suggestions) < 2 || len(d.Suggestions) > 3 {
		t.Errorf("suggestions = %q, want 2-3", d.Suggestions)
	}
	if d.DataQuality.Prometheus != StatusOK || d.DataQuality.Step != "5m" {
		t.Errorf("data_quality = %+v, want prometheus ok, step 5m", d.DataQuality)
	}
}

func TestComposeStory(t *testing.T) {
	d, err := Compose(context.Background(), storyInputs(t, simMetrics{storyDay()}))
	if err != nil {
		t.Fatal(err)
	}
	checkStory(t, d)
	golden.Check(t, "story.json", mustJSON(t, d))
	golden.Check(t, "story.txt", renderAll(d))
	if len(d.Chart) != 6 {
		t.Errorf("chart has %d series, want the 6 GPUs with memory samples", len(d.Chart))
	}
}

// failingMetrics is a Prometheus that cannot be reached.
type failingMetrics struct{ err error }

func (f failingMetrics) Fleet(context.Context, Window, Thresholds) (Fleet, error) {
	return Fleet{}, f.err
}

// failingEvents is an OOM log whose store is down.
type failingEvents struct{}

func (failingEvents) Since(context.Context, time.Time) ([]OOMEvent, error) {
	return nil, errors.New("read oom events: redis: connection refused")
}

func TestComposeGaps(t *testing.T) {
	allClear := func() []storySeries {
		var s []storySeries
		for _, gpu := range []string{"0", "1"} {
			l := gpuLabels("hostname", "node-a", gpu, "GPU-"+gpu, a100, "10.0.0.1:9400", workload("ml-train", "job-"+gpu, "trainer")...)
			s = append(s, memory(l, a100MiB, 512, constant(40000), false)...)
			s = append(s, storySeries{metricEngineActive, l, constant(0.9)})
		}
		return s
	}
	w := Window{Start: storyStart, End: storyEnd}
	tests := []struct {
		name        string
		in          Inputs
		wantProm    string
		wantOOMLog  string
		wantSummary string
	}{
		{"all-clear", Inputs{Window: w, Metrics: simMetrics{allClear()}, Events: NewEventLog(store.NewMemory())}, StatusOK, StatusOK, "All clear: 2 GPUs seen"},
		{"no-prometheus", Inputs{Window: w, Events: storyEventLog(t)}, StatusNotConfigured, StatusOK, "Prometheus is not configured"},
		{"prometheus-down", Inputs{Window: w, Metrics: failingMetrics{errors.New(`prometheus http://127.0.0.1:1: query DCGM_FI_DEV_FB_USED max: Post "http://127.0.0.1:1/api/v1/query_range": dial tcp 127.0.0.1:1: connect: connection refused`)}, Events: storyEventLog(t)}, StatusUnreachable, StatusOK, "Prometheus could not be queried"},
		{"store-down", Inputs{Window: w, Events: failingEvents{}}, StatusNotConfigured, StatusUnavailable, "the OOM log could not be read"},
		{"no-dcgm", Inputs{Window: w, Metrics: simMetrics{}}, StatusOK, StatusNotConfigured, "Prometheus has no dcgm-exporter data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Compose(context.Background(), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if d.DataQuality.Prometheus != tt.wantProm || d.DataQuality.OOMLog != tt.wantOOMLog {
				t.Errorf("prometheus %q, oom log %q; want %q, %q", d.DataQuality.Prometheus, d.DataQuality.OOMLog, tt.wantProm, tt.wantOOMLog)
			}
			if r := d.Reply(); !strings.Contains(r.Summary, tt.wantSummary) {
				t.Errorf("summary %q does not say %q", r.Summary, tt.wantSummary)
			}
			golden.Check(t, "gaps-"+tt.name+".txt", renderAll(d))
		})
	}
}

func TestComposeRejectsBadWindow(t *testing.T) {
	tests := []struct {
		name string
		w    Window
	}{
		{"zero", Window{}},
		{"backwards", Window{Start: storyEnd, End: storyStart}},
		{"too long", Window{Start: storyStart, End: storyStart.Add(MaxWindow + time.Hour)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Compose(context.Background(), Inputs{Window: tt.w}); err == nil {
				t.Error("Compose accepted the window")
			}
		})
	}
}

func TestDigestJSONHasNoNulls(t *testing.T) {
	// Lists are [] and maps {} even when empty, so consumers can iterate.
	d, err := Compose(context.Background(), Inputs{Window: Window{Start: storyStart, End: storyEnd}})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(mustJSON(t, d), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"window", "gpus_seen", "near_oom", "idle_holding", "top_consumers", "oom_events", "suggestions", "data_quality"} {
		if v, ok := m[k]; !ok || v == nil {
			t.Errorf("%q is missing or null", k)
		}
	}
}
