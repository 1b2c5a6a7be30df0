package fleet

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

var (
	end        = time.Date(2024, 1, 8, 12, 0, 0, 0, time.UTC)
	hourWindow = Window{Start: end.Add(-time.Hour), End: end}
	dayWindow  = Window{Start: end.Add(-24 * time.Hour), End: end}
)

const a100 = "NVIDIA A100-SXM4-80GB"

// series builds one reduced series over w in steps of step; vals[i] is the
// bucket i; NaN leaves a bucket empty.
func seriesIn(w Window, step time.Duration, labels map[string]string, vals ...float64) Series {
	s := Series{Labels: labels}
	n := w.Buckets(step)
	for i, v := range vals {
		if math.IsNaN(v) || i >= n {
			continue
		}
		s.Points = append(s.Points, Point{T: w.BucketEnd(i, n, step), V: v})
	}
	return s
}

// series is seriesIn over the hour window in minutes.
func series(labels map[string]string, vals ...float64) Series {
	return seriesIn(hourWindow, time.Minute, labels, vals...)
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func concat(parts ...[]float64) []float64 {
	var out []float64
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

var nan = math.NaN()

func with(l map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range l {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func TestLabels(t *testing.T) {
	tests := []struct {
		name      string
		labels    map[string]string
		exported  bool // another series carries exported_* labels
		wantHost  string
		wantOwner Owner
	}{
		{"hostname wins", map[string]string{"hostname": "h1", "Hostname": "old", "instance": "10.0.0.1:9400", "gpu": "0"}, false, "h1", Owner{}},
		{"Hostname before the rename", map[string]string{"Hostname": "h2", "instance": "10.0.0.1:9400", "gpu": "0"}, false, "h2", Owner{}},
		{"instance without port", map[string]string{"instance": "10.0.0.9:9400", "gpu": "0"}, false, "10.0.0.9", Owner{}},
		{"ipv6 instance kept whole", map[string]string{"instance": "[fd00::1]:9400", "gpu": "0"}, false, "[fd00::1]:9400", Owner{}},
		{"namespace/pod with honorLabels", map[string]string{"hostname": "h", "gpu": "0", "namespace": "team", "pod": "train-0", "container": "c"}, false, "h", Owner{Namespace: "team", Pod: "train-0", Container: "c"}},
		{"exporter pod is not an owner", map[string]string{"hostname": "h", "gpu": "0", "namespace": "gpu-operator", "pod": "nvidia-dcgm-exporter-x"}, false, "h", Owner{}},
		{"exported_* when scraped without honorLabels", map[string]string{"hostname": "h", "gpu": "0", "namespace": "gpu-operator", "pod": "nvidia-dcgm-exporter-x", "exported_namespace": "team", "exported_pod": "train-0"}, true, "h", Owner{Namespace: "team", Pod: "train-0"}},
		{"unallocated GPU among exported series", map[string]string{"hostname": "h", "gpu": "0", "namespace": "monitoring", "pod": "dcgm-7"}, true, "h", Owner{}},
		{"slurm job", map[string]string{"hostname": "h", "gpu": "0", "hpc_job": "4242"}, false, "h", Owner{HPCJob: "4242"}},
		{"workload label", map[string]string{"hostname": "h", "gpu": "0", "namespace": "team", "pod": "w-1", "workload": "llama"}, false, "h", Owner{Namespace: "team", Pod: "w-1", Workload: "llama"}},
		{"a pod's job label renamed by Prometheus", map[string]string{"hostname": "h", "gpu": "0", "exported_namespace": "team", "exported_pod": "w-1", "exported_job": "llama", "job": "dcgm"}, true, "h", Owner{Namespace: "team", Pod: "w-1", Workload: "llama"}},
		{"the scrape job is never a workload", map[string]string{"hostname": "h", "gpu": "0", "namespace": "team", "pod": "w-1", "job": "nvidia-dcgm-exporter"}, false, "h", Owner{Namespace: "team", Pod: "w-1"}},
		{"a namespace alone is no owner", map[string]string{"hostname": "h", "gpu": "0", "namespace": "team"}, false, "h", Owner{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := with(tt.labels, "UUID", "GPU-test")
			raw := Raw{UsedAvg: []Series{series(l, repeat(1000, 60)...)}, Free: []Series{series(l, repeat(9000, 60)...)}}
			if tt.exported {
				other := map[string]string{"hostname": "other", "gpu": "9", "UUID": "GPU-other", "exported_namespace": "x", "exported_pod": "y"}
				raw.UsedAvg = append(raw.UsedAvg, series(other, repeat(1000, 60)...))
			}
			f := Analyze(hourWindow, time.Minute, Thresholds{}, raw)
			g := f.GPUs[0]
			if g.Host == "other" {
				g = f.GPUs[1]
			}
			if g.Host != tt.wantHost || g.Owner != tt.wantOwner {
				t.Errorf("host %q owner %+v; want %q %+v", g.Host, g.Owner, tt.wantHost, tt.wantOwner)
			}
		})
	}
}

// TestCapacityIsOneSample is issue 13's first bug: an 80 GB H100 whose pod
// changed mid-bucket read as 120 GiB because USED and FREE were each taken
// as the maximum over the GPU's series and then added.
func TestCapacityIsOneSample(t *testing.T) {
	gpu := map[string]string{"hostname": "h", "gpu": "0", "UUID": "GPU-1", "modelName": a100}
	a := with(gpu, "namespace", "ns", "pod", "a")
	b := with(gpu, "namespace", "ns", "pod", "b")
	const total = 81920
	// Pod a holds 60 GiB until minute 30; pod b starts at minute 30 (the
	// same bucket) with 1 GiB and grows to 70 GiB.
	usedA := concat(repeat(61440, 31), repeat(nan, 29))
	usedB := concat(repeat(nan, 30), []float64{1024}, repeat(71680, 29))
	free := func(used []float64) []float64 {
		out := make([]float64, len(used))
		for i, u := range used {
			out[i] = total - 512 - u
		}
		return out
	}
	res := repeat(512, 60)
	raw := Raw{
		UsedAvg:  []Series{series(a, usedA...), series(b, usedB...)},
		UsedMax:  []Series{series(a, usedA...), series(b, usedB...)},
		Free:     []Series{series(a, free(usedA)...), series(b, free(usedB)...)},
		Reserved: []Series{series(a, res...), series(b, res...)},
	}
	g := Analyze(hourWindow, time.Minute, Thresholds{}, raw).GPUs[0]
	if g.CapacityBytes != total<<20 || g.CapacityWithoutReserved {
		t.Errorf("capacity %d MiB (without reserved: %v), want %d MiB", g.CapacityBytes>>20, g.CapacityWithoutReserved, total)
	}
	if want := 71680.0 / total; math.Abs(g.PeakUsedRatio-want) > 1e-9 || g.PeakOwner != (Owner{Namespace: "ns", Pod: "b"}) {
		t.Errorf("peak %v owned by %+v, want %v by ns/b", g.PeakUsedRatio, g.PeakOwner, want)
	}
	// Relabelled USED and FREE series (label sets differ) still pair up
	// where the GPU has one of each.
	relabelled := Raw{
		UsedAvg: []Series{series(with(gpu, "x", "1"), repeat(1000, 60)...)},
		Free:    []Series{series(with(gpu, "x", "2"), repeat(9000, 60)...)},
	}
	if g := Analyze(hourWindow, time.Minute, Thresholds{}, relabelled).GPUs[0]; g.CapacityBytes != 10000<<20 {
		t.Errorf("relabelled capacity %d MiB, want 10000", g.CapacityBytes>>20)
	}
}

func TestOwnersOverTime(t *testing.T) {
	gpu := map[string]string{"hostname": "h", "gpu": "0", "UUID": "GPU-1", "modelName": a100}
	pod := func(p string) map[string]string { return with(gpu, "exported_namespace", "ns", "exported_pod", p) }
	a := concat(repeat(10240, 20), repeat(nan, 40))
	b := concat(repeat(nan, 20), repeat(20480, 40))
	raw := Raw{
		UsedAvg: []Series{series(pod("a"), a...), series(pod("b"), b...)},
		Free:    []Series{series(pod("a"), repeat(30720, 60)...), series(pod("b"), repeat(20480, 60)...)},
	}
	f := Analyze(hourWindow, time.Minute, Thresholds{}, raw)
	if len(f.GPUs) != 1 {
		t.Fatalf("%d GPUs, want 1: series sharing a UUID are one GPU", len(f.GPUs))
	}
	g := f.GPUs[0]
	if g.Owner != (Owner{Namespace: "ns", Pod: "b"}) {
		t.Errorf("owner %+v, want ns/b (most buckets)", g.Owner)
	}
	want := []OwnerUsage{
		{Owner: Owner{Namespace: "ns", Pod: "a"}, GiBHours: 10 * 20.0 / 60, Hours: 20.0 / 60},
		{Owner: Owner{Namespace: "ns", Pod: "b"}, GiBHours: 20 * 40.0 / 60, Hours: 40.0 / 60},
	}
	for i := range want {
		if g.Usage[i].Owner != want[i].Owner || math.Abs(g.Usage[i].GiBHours-want[i].GiBHours) > 1e-9 || math.Abs(g.Usage[i].Hours-want[i].Hours) > 1e-9 {
			t.Errorf("usage[%d] = %+v, want %+v", i, g.Usage[i], want[i])
		}
	}
	if len(f.Jobs) != 2 || f.Jobs[0].Name != "ns/b" || f.Jobs[1].Name != "ns/a" {
		t.Errorf("jobs %+v, want ns/b then ns/a", f.Jobs)
	}
}

func TestIdleAndActivity(t *testing.T) {
	gpu := map[string]string{"hostname": "h", "gpu": "0", "UUID": "GPU-1", "modelName": a100}
	half := func(a, b float64) []float64 { return concat(repeat(a, 30), repeat(b, 30)) }
	t.Run("engine activity with per-bucket GPU_UTIL fallback", func(t *testing.T) {
		// Engine activity only for the first half (busy); GPU_UTIL says idle
		// in the second half: 30 idle minutes while holding 10 GiB.
		raw := Raw{
			UsedAvg: []Series{series(gpu, repeat(10240, 60)...)},
			Free:    []Series{series(gpu, repeat(71680, 60)...)},
			Engine:  []Series{series(gpu, concat(repeat(0.7, 30), repeat(nan, 30))...)},
			Util:    []Series{series(gpu, half(90, 1)...)},
		}
		g := Analyze(hourWindow, time.Minute, Thresholds{}, raw).GPUs[0]
		if g.IdleHours() != 0.5 || g.Usage[0].IdleHeldBytes != 10<<30 || g.ActivityMetric != MetricEngineActive {
			t.Errorf("idle %v h holding %d via %s; want 0.5 h, 10 GiB, engine", g.IdleHours(), g.Usage[0].IdleHeldBytes, g.ActivityMetric)
		}
	})
	t.Run("idle but holding less than the threshold", func(t *testing.T) {
		raw := Raw{
			UsedAvg: []Series{series(gpu, repeat(512, 60)...)},
			Free:    []Series{series(gpu, repeat(81408, 60)...)},
			Engine:  []Series{series(gpu, repeat(0, 60)...)},
		}
		if g := Analyze(hourWindow, time.Minute, Thresholds{}, raw).GPUs[0]; g.IdleHours() != 0 {
			t.Errorf("idle %v h while holding 512 MiB, want 0", g.IdleHours())
		}
	})
	t.Run("no activity metric", func(t *testing.T) {
		raw := Raw{UsedAvg: []Series{series(gpu, repeat(5000, 60)...)}, UsedMin: []Series{series(gpu, repeat(5000, 60)...)}, Free: []Series{series(gpu, repeat(5000, 60)...)}}
		f := Analyze(hourWindow, time.Minute, Thresholds{}, raw)
		if g := f.GPUs[0]; g.ActivityMetric != "" || g.IdleHours() != 0 {
			t.Errorf("activity %q idle %v, want none", g.ActivityMetric, g.IdleHours())
		}
		want := []string{
			MetricFBReserved + " absent (dcgm-exporter before 4.3.1-4.4.0): capacities are used + free, slightly low",
			"no " + MetricEngineActive + " or " + MetricGPUUtil + " for h GPU 0: idle time unknown",
		}
		if !reflect.DeepEqual(f.Missing, want) {
			t.Errorf("missing = %q, want %q", f.Missing, want)
		}
	})
	t.Run("near OOM from the bucket max, not the average", func(t *testing.T) {
		raw := Raw{
			UsedMax: []Series{series(gpu, half(50000, 80000)...)},
			UsedAvg: []Series{series(gpu, half(50000, 70000)...)},
			Free:    []Series{series(gpu, half(31920, 11920)...)},
		}
		g := Analyze(hourWindow, time.Minute, Thresholds{}, raw).GPUs[0]
		if g.HoursAbove != 0.5 || math.Abs(g.PeakUsedRatio-80000.0/81920) > 1e-9 || !g.PeakAt.Equal(end.Add(-29*time.Minute)) {
			t.Errorf("above %v h, peak %v at %s; want 0.5 h, %v at 11:31", g.HoursAbove, g.PeakUsedRatio, g.PeakAt, 80000.0/81920)
		}
	})
	t.Run("stopped reporting", func(t *testing.T) {
		raw := Raw{UsedAvg: []Series{series(gpu, concat(repeat(100, 30), repeat(nan, 30))...)}}
		f := Analyze(hourWindow, time.Minute, Thresholds{}, raw)
		g := f.GPUs[0]
		if !g.Stopped(hourWindow, f.Step) || !g.LastSeen.Equal(end.Add(-30*time.Minute)) {
			t.Errorf("last seen %s, stopped %v; want 30 min before the end, stopped", g.LastSeen, g.Stopped(hourWindow, f.Step))
		}
	})
	t.Run("NaN, Inf and out-of-window samples are ignored", func(t *testing.T) {
		s := series(gpu, concat(repeat(math.Inf(1), 30), repeat(1000, 30))...)
		s.Points = append(s.Points, Point{T: end.Add(time.Hour), V: 9000}, Point{T: end.Add(-2 * time.Hour), V: 9000})
		raw := Raw{UsedAvg: []Series{s}, Free: []Series{series(gpu, repeat(9000, 60)...)}}
		g := Analyze(hourWindow, time.Minute, Thresholds{}, raw).GPUs[0]
		if g.PeakUsedRatio != 0.1 {
			t.Errorf("peak %v, want 0.1", g.PeakUsedRatio)
		}
	})
}

// TestRestarts: held memory falling to about zero and climbing again under
// the same job is a restart; other shapes are not.
func TestRestarts(t *testing.T) {
	gpu := map[string]string{"hostname": "h", "gpu": "0", "UUID": "GPU-1", "modelName": a100, "namespace": "ns", "pod": "train-0"}
	other := with(gpu, "pod", "other-0")
	const held = 60000
	tests := []struct {
		name       string
		used, low  []float64 // used (avg) and minimum per bucket of gpu's series
		otherUsed  []float64 // another pod's series on the same GPU
		wantAt     []int     // buckets of the restarts
		noUsedMins bool
	}{
		{name: "two crashes", used: concat(repeat(held, 10), repeat(0, 3), repeat(held, 20), repeat(0, 5), repeat(held, 22)), wantAt: []int{10, 33}},
		{name: "crash and restart inside one bucket", used: repeat(held, 60), low: concat(repeat(held, 20), []float64{0}, repeat(held, 39)), wantAt: []int{20}},
		{name: "a job that ends is not a restart", used: concat(repeat(held, 30), repeat(0, 30))},
		{name: "a context's worth of memory left is not zero", used: concat(repeat(held, 10), repeat(500, 3), repeat(held, 47))},
		{name: "an exporter gap is not a drop", used: concat(repeat(held, 10), repeat(nan, 10), repeat(held, 40))},
		{name: "a new pod after the drop is not a restart", used: concat(repeat(held, 10), repeat(0, 2), repeat(nan, 48)), otherUsed: concat(repeat(nan, 12), repeat(held, 48))},
		{name: "empty from the start is not a drop", used: concat(repeat(0, 10), repeat(held, 50))},
		{name: "without min_over_time the average decides", used: concat(repeat(held, 10), repeat(0, 3), repeat(held, 47)), noUsedMins: true, wantAt: []int{10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			low := tt.low
			if low == nil {
				low = tt.used
			}
			raw := Raw{UsedAvg: []Series{series(gpu, tt.used...)}, Free: []Series{series(gpu, repeat(81920-held, 60)...)}}
			if !tt.noUsedMins {
				raw.UsedMin = []Series{series(gpu, low...)}
			}
			if tt.otherUsed != nil {
				raw.UsedAvg = append(raw.UsedAvg, series(other, tt.otherUsed...))
				raw.UsedMin = append(raw.UsedMin, series(other, tt.otherUsed...))
			}
			f := Analyze(hourWindow, time.Minute, Thresholds{}, raw)
			g := f.GPUs[0]
			var got []int
			for _, r := range g.Restarts {
				got = append(got, int(r.At.Sub(hourWindow.Start)/time.Minute)-1)
			}
			if !reflect.DeepEqual(got, tt.wantAt) {
				t.Errorf("restarts in buckets %v, want %v", got, tt.wantAt)
			}
			for _, j := range f.Jobs {
				if j.Name == "ns/train-0" && len(j.Restarts) != len(tt.wantAt) {
					t.Errorf("job restarts %+v, want %d", j.Restarts, len(tt.wantAt))
				}
			}
		})
	}
}

// TestJobs groups GPUs by owner: one pod on four GPUs is one job; pods with
// one workload label are one job; drops on several GPUs of a job at once
// are one restart.
func TestJobs(t *testing.T) {
	step := 5 * time.Minute
	n := dayWindow.Buckets(step)
	gpuOf := func(host, idx, uuid string, owner ...string) map[string]string {
		return with(map[string]string{"hostname": host, "gpu": idx, "UUID": uuid, "modelName": a100}, owner...)
	}
	var raw Raw
	add := func(l map[string]string, used []float64, engine float64) {
		free := make([]float64, len(used))
		for i, u := range used {
			free[i] = 81920 - u
		}
		raw.UsedAvg = append(raw.UsedAvg, seriesIn(dayWindow, step, l, used...))
		raw.UsedMin = append(raw.UsedMin, seriesIn(dayWindow, step, l, used...))
		raw.UsedMax = append(raw.UsedMax, seriesIn(dayWindow, step, l, used...))
		raw.Free = append(raw.Free, seriesIn(dayWindow, step, l, free...))
		raw.Engine = append(raw.Engine, seriesIn(dayWindow, step, l, repeat(engine, n)...))
	}
	// ddp-0 on four GPUs of node-a; all four drop at bucket 100 and 101.
	for i := range 4 {
		drop := 100 + i%2
		used := concat(repeat(60000, drop), repeat(0, 2), repeat(60000, n-drop-2))
		add(gpuOf("node-a", string(rune('0'+i)), "GPU-a"+string(rune('0'+i)), "namespace", "ml", "pod", "ddp-0", "container", "worker"), used, 0.9)
	}
	// Two pods of one workload on node-b and node-c.
	add(gpuOf("node-b", "0", "GPU-b0", "namespace", "ml", "pod", "big-worker-0", "workload", "big"), repeat(50000, n), 0.8)
	add(gpuOf("node-c", "0", "GPU-c0", "namespace", "ml", "pod", "big-worker-1", "workload", "big"), repeat(52000, n), 0.8)
	// A server without a telling name: flat at 90 % with little activity.
	add(gpuOf("node-d", "0", "GPU-d0", "namespace", "inf", "pod", "llm-api-7f9c-x2"), repeat(0.9*81920, n), 0.02)
	// A busy job at 90 % is not a server by shape.
	add(gpuOf("node-d", "1", "GPU-d1", "namespace", "ml", "pod", "job-x"), repeat(0.9*81920, n), 0.95)
	// A notebook.
	add(gpuOf("node-e", "0", "GPU-e0", "namespace", "research", "pod", "jupyter-bob"), repeat(20000, n), 0)

	f := Analyze(dayWindow, step, Thresholds{}, raw)
	byName := map[string]Job{}
	for _, j := range f.Jobs {
		byName[j.Name] = j
	}
	ddp := byName["ml/ddp-0"]
	if len(ddp.GPUs) != 4 || ddp.GPUHours != 96 || ddp.Kind != KindTraining || len(ddp.Restarts) != 1 || len(ddp.Restarts[0].GPUs) != 4 {
		t.Errorf("ddp-0 = %d GPUs, %v GPU-hours, %s, restarts %+v; want 4 GPUs, 96, training, one restart on 4 GPUs", len(ddp.GPUs), ddp.GPUHours, ddp.Kind, ddp.Restarts)
	}
	big := byName["ml/big"]
	if len(big.GPUs) != 2 || !reflect.DeepEqual(big.Pods, []string{"big-worker-0", "big-worker-1"}) || !reflect.DeepEqual(big.Hosts, []string{"node-b", "node-c"}) {
		t.Errorf("workload big = %+v, want 2 GPUs, 2 pods on 2 hosts", big)
	}
	if j := byName["inf/llm-api-7f9c-x2"]; j.Kind != KindServing || !strings.Contains(j.KindReason, "flat at 90%") {
		t.Errorf("flat quiet server = %s (%s), want serving by memory shape", j.Kind, j.KindReason)
	}
	if j := byName["ml/job-x"]; j.Kind != KindUnknown {
		t.Errorf("busy job at 90%% = %s (%s), want unknown", j.Kind, j.KindReason)
	}
	if j := byName["research/jupyter-bob"]; j.Kind != KindNotebook || j.IdleGPUHours != 24 {
		t.Errorf("notebook = %s, idle %v GPU-hours; want notebook, 24", j.Kind, j.IdleGPUHours)
	}
	if len(f.Jobs) != 5 {
		t.Errorf("%d jobs, want 5", len(f.Jobs))
	}
}

func TestKindByName(t *testing.T) {
	tests := []struct {
		name string
		want Kind
	}{
		{"vllm-llama-70b-0", KindServing},
		{"llama3-vllm", KindServing},
		{"tgi-mistral-0", KindServing},
		{"text-generation-inference-7b", KindServing},
		{"sglang-server", KindServing},
		{"tritonserver-0", KindServing},
		{"jupyter-alice-0", KindNotebook},
		{"notebook-7", KindNotebook},
		{"llama-ft-0", KindTraining},
		{"bert-pretrain-0", KindTraining},
		{"resnet-ddp-0", KindTraining},
		{"nightly-batch", KindUnknown},
		{"Vllm0", KindServing},
	}
	for _, tt := range tests {
		got := KindUnknown
		for _, rule := range []struct {
			kind   Kind
			tokens []string
		}{{KindServing, servingTokens}, {KindNotebook, notebookTokens}, {KindTraining, trainingTokens}} {
			if _, ok := matchToken(tt.name, rule.tokens); ok {
				got = rule.kind
				break
			}
		}
		if got != tt.want {
			t.Errorf("%q: %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestStepFor(t *testing.T) {
	tests := []struct {
		window, want time.Duration
	}{
		{24 * time.Hour, 5 * time.Minute},
		{time.Hour, time.Minute},
		{7 * 24 * time.Hour, 35 * time.Minute},
		{30 * time.Hour, 7 * time.Minute},
		{MaxWindow, time.Hour},
	}
	for _, tt := range tests {
		if got := StepFor(tt.window); got != tt.want {
			t.Errorf("StepFor(%s) = %s, want %s", tt.window, got, tt.want)
		}
	}
}

func TestMIGShare(t *testing.T) {
	tests := []struct {
		profile, model string
		want           float64
	}{
		{"", a100, 1},
		{"1g.10gb", a100, 1.0 / 7},
		{"3g.40gb", a100, 3.0 / 7},
		{"7g.80gb", a100, 1},
		{"2g.12gb", "NVIDIA A30", 0.5},
		{"1g.10gb+me", "NVIDIA H100 80GB HBM3", 1.0 / 7},
		{"weird", a100, 1},
		{"0g.1gb", a100, 1},
	}
	for _, tt := range tests {
		if got := MIGShare(tt.profile, tt.model); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("MIGShare(%q, %q) = %v, want %v", tt.profile, tt.model, got, tt.want)
		}
	}
}

func TestGPUOrder(t *testing.T) {
	g := func(host, idx, mig string) GPU { return GPU{Host: host, Index: idx, Key: GPUKey{MIGInstance: mig}} }
	gpus := []GPU{g("b", "0", ""), g("a", "10", ""), g("a", "2", ""), g("a", "2", "13"), g("a", "2", "3")}
	want := []GPU{g("a", "2", ""), g("a", "2", "3"), g("a", "2", "13"), g("a", "10", ""), g("b", "0", "")}
	for i := 0; i < len(gpus); i++ {
		for j := i + 1; j < len(gpus); j++ {
			if lessGPU(gpus[j], gpus[i]) {
				gpus[i], gpus[j] = gpus[j], gpus[i]
			}
		}
	}
	if !reflect.DeepEqual(gpus, want) {
		t.Errorf("order %v, want %v", gpus, want)
	}
}

func TestWindowValidate(t *testing.T) {
	for _, w := range []Window{{}, {Start: end, End: end.Add(-time.Hour)}, {Start: end, End: end.Add(MaxWindow + time.Hour)}} {
		if err := w.Validate(); err == nil {
			t.Errorf("%+v accepted", w)
		}
	}
	if err := dayWindow.Validate(); err != nil {
		t.Error(err)
	}
}

// FuzzLabels feeds arbitrary label values (Prometheus data is not ours)
// through the analysis: it must not panic, one series is one GPU, and owners
// and names are built from the values as they are.
func FuzzLabels(f *testing.F) {
	f.Add("node-a", "0", "GPU-1", "7", "1g.10gb", "ns", "pod", "10.0.0.1:9400", "w")
	f.Add("", "", "", "", "g.", "", "", "[::1]:", "")
	f.Add("h", "x", "", "", "99g.1gb", "", "vllm-\u202e0", ":", "exported")
	f.Fuzz(func(t *testing.T, host, gpu, uuid, migID, profile, ns, pod, instance, workload string) {
		l := map[string]string{"hostname": host, "gpu": gpu, "UUID": uuid, "GPU_I_ID": migID, "GPU_I_PROFILE": profile,
			"exported_namespace": ns, "exported_pod": pod, "instance": instance, "workload": workload}
		vals := concat(repeat(2000, 20), repeat(0, 5), repeat(2000, 35))
		raw := Raw{
			UsedAvg: []Series{series(l, vals...)}, UsedMin: []Series{series(l, vals...)},
			Free: []Series{series(l, repeat(100, 60)...)}, Engine: []Series{series(l, repeat(0, 60)...)},
		}
		fl := Analyze(hourWindow, time.Minute, Thresholds{HoldingBytes: 1}, raw)
		if len(fl.GPUs) != 1 {
			t.Fatalf("%d GPUs from one series", len(fl.GPUs))
		}
		if s := MIGShare(profile, ""); s <= 0 || s > 1 {
			t.Errorf("MIGShare(%q) = %v", profile, s)
		}
		g := fl.GPUs[0]
		if !strings.Contains(g.Name(), gpu) {
			t.Errorf("name %q lost the index %q", g.Name(), gpu)
		}
		for _, j := range fl.Jobs {
			if j.Name == "" || j.GPUHours <= 0 || len(j.GPUs) != 1 {
				t.Errorf("job %+v", j)
			}
		}
	})
}

func BenchmarkAnalyzeDay(b *testing.B) {
	step := 5 * time.Minute
	n := dayWindow.Buckets(step)
	var raw Raw
	for i := range 256 {
		l := map[string]string{"hostname": "node", "gpu": string(rune('0' + i%8)), "UUID": "GPU-" + string(rune(i)), "exported_namespace": "ns", "exported_pod": "p" + string(rune('a'+i%26))}
		raw.UsedAvg = append(raw.UsedAvg, seriesIn(dayWindow, step, l, repeat(40000, n)...))
		raw.UsedMax = append(raw.UsedMax, seriesIn(dayWindow, step, l, repeat(41000, n)...))
		raw.UsedMin = append(raw.UsedMin, seriesIn(dayWindow, step, l, repeat(39000, n)...))
		raw.Free = append(raw.Free, seriesIn(dayWindow, step, l, repeat(41920, n)...))
		raw.Engine = append(raw.Engine, seriesIn(dayWindow, step, l, repeat(0.5, n)...))
	}
	b.ResetTimer()
	for b.Loop() {
		Analyze(dayWindow, step, Thresholds{}, raw)
	}
}
