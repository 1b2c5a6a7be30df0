package digest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	dt "github.com/vrambot/vrambot/digest/digesttest"
	"github.com/vrambot/vrambot/digest/fleet"
	"github.com/vrambot/vrambot/feedback"
	"github.com/vrambot/vrambot/internal/errs"
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

func gib(n int64) *int64 { v := n << 30; return &v }

// storyEvents are the OOMs pasted in Slack around the story day: three in
// the window, one the day before (must not count).
func storyEvents() []OOMEvent {
	at := dt.StoryAt
	return []OOMEvent{
		{At: at(-3, 0), Channel: "C0ML", ThreadTS: "1704056400.000100", Framework: "pytorch", Format: "pytorch-new", Cause: "fragmentation", Device: "cuda:0", TriedBytes: gib(2)},
		{At: at(3, 12), Channel: "C0ML", ThreadTS: "1704078720.000200", Permalink: "https://example.slack.com/archives/C0ML/p1704078720000200",
			Framework: "pytorch", Format: "pytorch-new", Cause: "fragmentation", Device: "cuda:0", TriedBytes: gib(2), TotalBytes: gib(80)},
		{At: at(7, 45), Channel: "C0ML", ThreadTS: "1704095100.000300", Permalink: "https://example.slack.com/archives/C0ML/p1704095100000300",
			Framework: "pytorch", Format: "pytorch-new", Cause: "fragmentation", Device: "cuda:0", TriedBytes: gib(1)},
		{At: at(15, 30), Channel: "C0JAX", ThreadTS: "1704123000.000400", Framework: "jax", Format: "xla", Cause: "activations"},
	}
}

// clusterEvents are the OOMs pasted on the cluster day: one a minute after
// gpt-pretrain-0's first crash (PyTorch's total for an A100 80GB, 79.15
// GiB), one in the evening that no GPU's memory explains.
func clusterEvents() []OOMEvent {
	at := dt.ClusterAt
	total := int64(84987740160) // 79.15 GiB
	return []OOMEvent{
		{At: at(3, 13), Channel: "C0TRAIN", ThreadTS: "1704683580.000100", Permalink: "https://example.slack.com/archives/C0TRAIN/p1704683580000100",
			Framework: "pytorch", Format: "pytorch-new", Cause: "batch-too-large", Device: "cuda:0", TriedBytes: gib(4), TotalBytes: &total},
		{At: at(19, 0), Channel: "C0ML", ThreadTS: "1704740400.000200", Framework: "pytorch", Format: "pytorch-old", Cause: "fragmentation", Device: "cuda:0", TriedBytes: gib(1)},
	}
}

func eventLog(t *testing.T, events []OOMEvent) *EventLog {
	t.Helper()
	log := NewEventLog(store.NewMemory())
	for _, e := range events {
		if err := log.Record(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	return log
}

// fakePricer prices the A100 and the H100, as a price snapshot might.
type fakePricer map[string]float64

func (p fakePricer) PricePerGPUHour(_ context.Context, model string) (float64, string, bool) {
	v, ok := p[model]
	return v, "test snapshot 2024-01", ok
}

var testPrices = fakePricer{dt.A100: 1.5, dt.H100: 2.5}

func storyInputs(t *testing.T, m Metrics) Inputs {
	return Inputs{Window: dt.StoryDay().Window(), Metrics: m, Events: eventLog(t, storyEvents()), Pricer: fakePricer{dt.A100: 1.5}}
}

func clusterInputs(t *testing.T, m Metrics) Inputs {
	return Inputs{Window: dt.ClusterDay().Window(), Metrics: m, Events: eventLog(t, clusterEvents()), Pricer: testPrices}
}

// checkStory asserts the digest found exactly the story of digesttest.StoryDay.
func checkStory(t *testing.T, d Digest) {
	t.Helper()
	if d.GPUsSeen != 6 {
		t.Errorf("gpus_seen = %d, want 6", d.GPUsSeen)
	}
	if len(d.NearOOM) != 1 {
		t.Fatalf("near_oom = %+v, want node-a GPU 0 only", d.NearOOM)
	}
	n := d.NearOOM[0]
	if n.Host != "node-a" || n.GPU != "0" || n.Owner != "ml-train/llama-ft-0" || n.HoursAbove95 != 6 || n.PeakUsedRatio != 0.959 || n.CapacityBytes != dt.A100MiB<<20 {
		t.Errorf("near_oom[0] = %+v, want node-a GPU 0, ml-train/llama-ft-0, 6 h, 0.959 of 80 GiB", n)
	}
	if len(d.IdleHolding) != 2 {
		t.Fatalf("idle_holding = %+v, want node-a GPU 1 and node-c MIG 7", d.IdleHolding)
	}
	alice, bob := d.IdleHolding[0], d.IdleHolding[1]
	if alice.Host != "node-a" || alice.GPU != "1" || alice.Owner != "research/jupyter-alice-0" || alice.IdleHours != 24 || alice.MemoryHeldBytes != 30<<30 || alice.GPUHours != 24 || alice.Kind != "notebook" {
		t.Errorf("idle_holding[0] = %+v, want node-a GPU 1 research/jupyter-alice-0 (notebook) idle 24 h holding 30 GiB", alice)
	}
	if alice.USD == nil || *alice.USD != 36 {
		t.Errorf("idle_holding[0].usd = %v, want 36 (24 GPU-hours at $1.50)", alice.USD)
	}
	if bob.Host != "node-c" || bob.MIGInstance != "7" || bob.MIGProfile != "1g.10gb" || bob.Owner != "research/jupyter-bob-0" || bob.IdleHours != 24 || bob.MemoryHeldBytes != 4<<30 || bob.GPUHours != 3.43 {
		t.Errorf("idle_holding[1] = %+v, want node-c MIG 7 research/jupyter-bob-0 idle 24 h holding 4 GiB, 3.43 GPU-hours", bob)
	}
	stopped := d.DataQuality.StoppedReporting
	if len(stopped) != 1 || stopped[0].Host != "node-b" || !stopped[0].LastSeen.Equal(dt.StoryAt(12, 0)) {
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
	if j := findJob(d, "ml-infer/vllm-0"); j == nil || j.Kind != "serving" {
		t.Errorf("vllm-0 = %+v, want a serving job", j)
	}
	if len(d.ServingIdle) != 0 {
		t.Errorf("serving_mostly_idle = %+v, want none (vllm-0 was 80%% busy)", d.ServingIdle)
	}
	if d.DataQuality.Prometheus != StatusOK || d.DataQuality.Step != "5m" {
		t.Errorf("data_quality = %+v, want prometheus ok, step 5m", d.DataQuality)
	}
}

func findJob(d Digest, name string) *Job {
	for i := range d.Jobs {
		if d.Jobs[i].Name == name {
			return &d.Jobs[i]
		}
	}
	return nil
}

// checkCluster is issue 13's acceptance: the digest names exactly the H100
// (80 GB class) in near_oom under its second owner, the restarting job with
// restarts: 2, the 4-GPU job as one entry with gpus: 4, the vLLM pod as
// serving and not idle, and the notebook in idle_holding.
func checkCluster(t *testing.T, d Digest) {
	t.Helper()
	if d.GPUsSeen != 11 {
		t.Errorf("gpus_seen = %d, want 11", d.GPUsSeen)
	}
	if len(d.NearOOM) != 1 {
		t.Fatalf("near_oom = %+v, want the H100 only", d.NearOOM)
	}
	n := d.NearOOM[0]
	if n.UUID != dt.H100UUID || n.Owner != "ml-train/"+dt.SecondH100Pod || n.CapacityBytes != dt.H100MiB<<20 || n.PeakUsedRatio != 0.97 || n.HoursAbove95 != 2 {
		t.Errorf("near_oom[0] = %+v, want the H100 under ml-train/%s, capacity %d, peak 0.97 for 2 h", n, dt.SecondH100Pod, int64(dt.H100MiB)<<20)
	}
	if gb := float64(n.CapacityBytes) / 1e9; gb < 80 || gb > 90 {
		t.Errorf("H100 capacity %.1f GB, want the 80 GB class", gb)
	}
	if len(d.IdleHolding) != 1 || d.IdleHolding[0].Owner != "research/"+dt.NotebookPod || d.IdleHolding[0].Kind != "notebook" || d.IdleHolding[0].MemoryHeldBytes != 30<<30 {
		t.Errorf("idle_holding = %+v, want exactly the notebook holding 30 GiB", d.IdleHolding)
	}
	restarting := findJob(d, "ml-train/"+dt.RestartingPod)
	if restarting == nil || restarting.Restarts != 2 || len(restarting.RestartTimes) != 2 ||
		!restarting.RestartTimes[0].Equal(dt.ClusterAt(3, 15)) || !restarting.RestartTimes[1].Equal(dt.ClusterAt(9, 40)) {
		t.Errorf("restarting job = %+v, want restarts: 2 at 03:15 and 09:40", restarting)
	}
	if restarting != nil && (len(restarting.OOMs) != 1 || !restarting.OOMs[0].At.Equal(dt.ClusterAt(3, 13))) {
		t.Errorf("restarting job's OOMs = %+v, want the one pasted at 03:13", restarting.OOMs)
	}
	for _, j := range d.Jobs {
		if j.Name != restarting.Name && j.Restarts != 0 {
			t.Errorf("job %s restarted %d times, want 0 (a new pod after a drop is not a restart)", j.Name, j.Restarts)
		}
	}
	four := findJob(d, "ml-train/"+dt.FourGPUPod)
	if four == nil || four.GPUs != 4 || four.Kind != "training" || four.GPUHours != 96 {
		t.Errorf("4-GPU job = %+v, want one entry with gpus: 4, training, 96 GPU-hours", four)
	}
	if four != nil && (four.CostUSD == nil || *four.CostUSD != 144) {
		t.Errorf("4-GPU job cost = %v, want $144 (96 GPU-hours at $1.50)", four.CostUSD)
	}
	vllm := findJob(d, "ml-infer/"+dt.VLLMPod)
	if vllm == nil || vllm.Kind != "serving" || vllm.GPUs != 2 {
		t.Errorf("vLLM job = %+v, want serving on 2 GPUs", vllm)
	}
	for _, h := range d.IdleHolding {
		if strings.Contains(h.Owner, "vllm") {
			t.Errorf("vLLM listed as idle holding: %+v", h)
		}
	}
	if len(d.ServingIdle) != 1 || d.ServingIdle[0].Name != "ml-infer/"+dt.VLLMPod || d.ServingIdle[0].IdleGPUHours != 40 || d.ServingIdle[0].USD == nil || *d.ServingIdle[0].USD != 60 {
		t.Errorf("serving_mostly_idle = %+v, want the vLLM pod idle 40 of 48 GPU-hours, $60", d.ServingIdle)
	}
	if nb := findJob(d, "research/"+dt.NotebookPod); nb == nil || nb.Kind != "notebook" {
		t.Errorf("notebook job = %+v, want kind notebook", nb)
	}
	for _, pod := range []string{dt.FirstH100Pod, dt.SecondH100Pod} {
		if j := findJob(d, "ml-train/"+pod); j == nil || j.GPUs != 1 {
			t.Errorf("job %s = %+v, want 1 GPU", pod, j)
		}
	}
	if len(d.Jobs) != 6 {
		var names []string
		for _, j := range d.Jobs {
			names = append(names, j.Name)
		}
		t.Errorf("jobs = %q, want 6", names)
	}
	if d.OOMEvents.Total != 2 || d.OOMEvents.Threads[0].Job != "ml-train/"+dt.RestartingPod || d.OOMEvents.Threads[1].Job != "" {
		t.Errorf("oom threads = %+v, want the 03:13 OOM matched with %s and the 19:00 one unmatched", d.OOMEvents.Threads, dt.RestartingPod)
	}
}

func TestComposeStory(t *testing.T) {
	d, err := Compose(context.Background(), storyInputs(t, dt.Sim{Days: []dt.Day{dt.StoryDay()}}))
	if err != nil {
		t.Fatal(err)
	}
	checkStory(t, d)
	golden.Check(t, "story.json", mustJSON(t, d))
	golden.Check(t, "story.txt", renderAll(d))
}

func TestComposeCluster(t *testing.T) {
	d, err := Compose(context.Background(), clusterInputs(t, dt.Sim{Days: []dt.Day{dt.ClusterDay()}}))
	if err != nil {
		t.Fatal(err)
	}
	checkCluster(t, d)
	golden.Check(t, "cluster.json", mustJSON(t, d))
	golden.Check(t, "cluster.txt", renderAll(d))
	if len(d.Suggestions) != 3 || !strings.Contains(d.Suggestions[0], dt.SecondH100Pod) || !strings.Contains(d.Suggestions[1], dt.RestartingPod) {
		t.Errorf("suggestions = %q, want the H100's job, then the restarting job, then one more", d.Suggestions)
	}
}

// failingMetrics is a Prometheus failing with err.
type failingMetrics struct{ err error }

func (f failingMetrics) Fleet(context.Context, fleet.Window, fleet.Thresholds) (fleet.Fleet, error) {
	return fleet.Fleet{}, f.err
}

// failingEvents is an OOM log whose store is down.
type failingEvents struct{}

func (failingEvents) Since(context.Context, time.Time) ([]OOMEvent, error) {
	return nil, errors.New("read oom events: redis: connection refused")
}

func TestComposeGaps(t *testing.T) {
	allClear := func() dt.Day {
		day := dt.StoryDay()
		day.Series = nil
		for _, gpu := range []string{"0", "1"} {
			l := dt.GPULabels("hostname", "node-a", gpu, "GPU-"+gpu, dt.A100, "10.0.0.1:9400", dt.Workload("ml-train", "job-"+gpu, "trainer")...)
			day.Series = append(day.Series, dt.Memory(l, dt.A100MiB, dt.ReservedA, dt.Constant(40000), false)...)
			day.Series = append(day.Series, dt.Series{Metric: fleet.MetricEngineActive, Labels: l, Value: dt.Constant(0.9)})
		}
		return day
	}
	w := dt.StoryDay().Window()
	unreachable := errs.Wrap(errs.Unavailable, errors.New(`Post "http://127.0.0.1:1/api/v1/query_range": dial tcp 127.0.0.1:1: connect: connection refused`), "prometheus http://127.0.0.1:1: query DCGM_FI_DEV_FB_USED max")
	rejected := errs.Wrap(errs.Internal, errors.New("bad_data: invalid parameter \"query\": parse error"), "prometheus http://127.0.0.1:1: query DCGM_FI_DEV_FB_USED max")
	tests := []struct {
		name        string
		in          Inputs
		wantProm    string
		wantOOMLog  string
		wantSummary string
	}{
		{"all-clear", Inputs{Window: w, Metrics: dt.Sim{Days: []dt.Day{allClear()}}, Events: NewEventLog(store.NewMemory())}, StatusOK, StatusOK, "All clear: 2 GPUs seen"},
		{"no-prometheus", Inputs{Window: w, Events: eventLog(t, storyEvents())}, StatusNotConfigured, StatusOK, "Prometheus is not configured"},
		{"prometheus-down", Inputs{Window: w, Metrics: failingMetrics{unreachable}, Events: eventLog(t, storyEvents())}, StatusUnreachable, StatusOK, "Prometheus could not be queried"},
		{"prometheus-rejects", Inputs{Window: w, Metrics: failingMetrics{rejected}, Events: eventLog(t, storyEvents())}, StatusQueryFailed, StatusOK, "Prometheus could not be queried"},
		{"store-down", Inputs{Window: w, Events: failingEvents{}}, StatusNotConfigured, StatusUnavailable, "the OOM log could not be read"},
		{"no-dcgm", Inputs{Window: w, Metrics: dt.Sim{}}, StatusOK, StatusNotConfigured, "Prometheus has no dcgm-exporter data"},
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
			text := string(renderAll(d))
			if tt.wantProm == StatusQueryFailed && strings.Contains(text, "parse error") {
				t.Error("the Prometheus error's internal detail reached the Slack text")
			}
			if strings.Contains(text, "redis:") {
				t.Error("the store error's detail reached the Slack text")
			}
			golden.Check(t, "gaps-"+tt.name+".txt", renderAll(d))
		})
	}
}

func TestComposeRejectsBadWindow(t *testing.T) {
	start, end := dt.StoryStart, dt.StoryStart.Add(24*time.Hour)
	tests := []struct {
		name string
		w    fleet.Window
	}{
		{"zero", fleet.Window{}},
		{"backwards", fleet.Window{Start: end, End: start}},
		{"too long", fleet.Window{Start: start, End: start.Add(fleet.MaxWindow + time.Hour)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Compose(context.Background(), Inputs{Window: tt.w}); !errs.Is(err, errs.Invalid) {
				t.Errorf("Compose: %v, want an Invalid error", err)
			}
		})
	}
}

func TestDigestJSONHasNoNulls(t *testing.T) {
	// Lists are [] and maps {} even when empty, so consumers can iterate.
	d, err := Compose(context.Background(), Inputs{Window: dt.StoryDay().Window()})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(mustJSON(t, d), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"window", "gpus_seen", "near_oom", "idle_holding", "serving_mostly_idle", "jobs", "top_consumers", "oom_events", "suggestions", "data_quality"} {
		if v, ok := m[k]; !ok || v == nil {
			t.Errorf("%q is missing or null", k)
		}
	}
}

// countingPricer counts its calls by model and sees the context it is given.
type countingPricer struct {
	calls map[string]int
	ctx   context.Context
}

func (p *countingPricer) PricePerGPUHour(ctx context.Context, model string) (float64, string, bool) {
	if p.calls == nil {
		p.calls = map[string]int{}
	}
	p.calls[model]++
	p.ctx = ctx
	return 2, "counting", true
}

func TestPricesAskedOncePerModelWithTheContext(t *testing.T) {
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "digest")
	p := &countingPricer{}
	in := clusterInputs(t, dt.Sim{Days: []dt.Day{dt.ClusterDay()}})
	in.Pricer = p
	if _, err := Compose(ctx, in); err != nil {
		t.Fatal(err)
	}
	// The fleet's two models, and the smaller cards right-sizing prices,
	// each asked once.
	for model, n := range p.calls {
		if n != 1 {
			t.Errorf("price of %s asked %d times, want once", model, n)
		}
	}
	if len(p.calls) < 2 {
		t.Errorf("prices asked for %v, want at least the fleet's two models", p.calls)
	}
	if p.ctx == nil || p.ctx.Value(key{}) != "digest" {
		t.Error("the price lookup did not get Compose's context")
	}
}

// TestComposeCountsFeedback: the 👍/👎 given in the window are counted in
// the JSON and the key numbers; votes before the window are not; a vote
// log that fails is named in the data quality, not fatal.
func TestComposeCountsFeedback(t *testing.T) {
	in := storyInputs(t, dt.Sim{Days: []dt.Day{dt.StoryDay()}})
	votes := feedback.NewLog(store.NewMemory())
	ctx := context.Background()
	for _, v := range []feedback.Vote{
		{At: in.Window.Start.Add(-time.Hour), Kind: "vram", Vote: feedback.Up}, // before the window
		{At: in.Window.Start.Add(time.Hour), Kind: "vram", Vote: feedback.Up},
		{At: in.Window.Start.Add(2 * time.Hour), Kind: "vram", Vote: feedback.Up},
		{At: in.Window.Start.Add(3 * time.Hour), Kind: "oom", Vote: feedback.Down},
	} {
		if err := votes.Record(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	in.Feedback = votes
	d, err := Compose(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if d.Feedback == nil || d.Feedback.Up != 2 || d.Feedback.Down != 1 || d.Feedback.ByKind["oom"].Down != 1 || d.DataQuality.FeedbackLog != StatusOK {
		t.Fatalf("feedback = %+v (log %q), want 2 up and 1 down (the oom one)", d.Feedback, d.DataQuality.FeedbackLog)
	}
	if got := renderAll(d); !strings.Contains(string(got), "Feedback on answers  👍 2 · 👎 1 (oom 👍 0 · 👎 1, vram 👍 2 · 👎 0)") {
		t.Errorf("the key numbers lack the feedback line:\n%s", got)
	}

	in.Feedback = failingFeedback{}
	d, err = Compose(ctx, in)
	if err != nil || d.Feedback != nil || d.DataQuality.FeedbackLog != StatusUnavailable {
		t.Fatalf("a failing vote log gave %v, feedback %+v, status %q", err, d.Feedback, d.DataQuality.FeedbackLog)
	}
}

type failingFeedback struct{}

func (failingFeedback) Since(context.Context, time.Time) (feedback.Counts, error) {
	return feedback.Counts{}, errors.New("read votes: redis: connection refused")
}

// TestDigestFromItsJSON: the JSON is the digest (docs/contracts.md §3): read
// back, it renders the same text and Slack replies, as bot's golden tests
// and any reader of `vrambot digest --json` rely on.
func TestDigestFromItsJSON(t *testing.T) {
	busy := busyDay()
	for _, tt := range []struct {
		name string
		in   Inputs
	}{
		{"story", storyInputs(t, dt.Sim{Days: []dt.Day{dt.StoryDay()}})},
		{"cluster", clusterInputs(t, dt.Sim{Days: []dt.Day{dt.ClusterDay()}})},
		{"right-size", Inputs{Window: busy.Window(), Metrics: dt.Sim{Days: []dt.Day{busy}}, Pricer: testPrices}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Compose(context.Background(), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			var back Digest
			if err := json.Unmarshal(mustJSON(t, d), &back); err != nil {
				t.Fatal(err)
			}
			if got, want := back.Text(), d.Text(); got != want {
				t.Errorf("the digest read from its JSON renders differently:\n--- from JSON\n%s\n--- composed\n%s", got, want)
			}
		})
	}
}
