package digest

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// series builds one range-query series whose buckets (of a 1 h window in
// 1 m steps ending at storyEnd) hold vals; NaN leaves a bucket empty.
func series(labels map[string]string, vals ...float64) *model.SampleStream {
	s := &model.SampleStream{Metric: model.Metric{}}
	for k, v := range labels {
		s.Metric[model.LabelName(k)] = model.LabelValue(v)
	}
	n := 60
	for i, v := range vals {
		if math.IsNaN(v) {
			continue
		}
		ts := storyEnd.Add(-time.Duration(n-1-i) * time.Minute)
		s.Values = append(s.Values, model.SamplePair{Timestamp: model.TimeFromUnixNano(ts.UnixNano()), Value: model.SampleValue(v)})
	}
	return s
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

var hourWindow = Window{Start: storyEnd.Add(-time.Hour), End: storyEnd}

func TestAnalyzeLabels(t *testing.T) {
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
		{"namespace/pod with honorLabels", map[string]string{"hostname": "h", "gpu": "0", "namespace": "team", "pod": "train-0"}, false, "h", Owner{Namespace: "team", Pod: "train-0"}},
		{"exporter pod is not an owner", map[string]string{"hostname": "h", "gpu": "0", "namespace": "gpu-operator", "pod": "nvidia-dcgm-exporter-x"}, false, "h", Owner{}},
		{"exported_* when scraped without honorLabels", map[string]string{"hostname": "h", "gpu": "0", "namespace": "gpu-operator", "pod": "nvidia-dcgm-exporter-x", "exported_namespace": "team", "exported_pod": "train-0"}, true, "h", Owner{Namespace: "team", Pod: "train-0"}},
		{"unallocated GPU among exported series", map[string]string{"hostname": "h", "gpu": "0", "namespace": "monitoring", "pod": "dcgm-7"}, true, "h", Owner{}},
		{"slurm job", map[string]string{"hostname": "h", "gpu": "0", "hpc_job": "4242"}, false, "h", Owner{Job: "4242"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := rawSeries{
				usedAvg: model.Matrix{series(tt.labels, repeat(1000, 60)...)},
				free:    model.Matrix{series(tt.labels, repeat(9000, 60)...)},
			}
			if tt.exported {
				other := map[string]string{"hostname": "other", "gpu": "9", "exported_namespace": "x", "exported_pod": "y"}
				raw.usedAvg = append(raw.usedAvg, series(other, repeat(1000, 60)...))
			}
			f := analyze(hourWindow, time.Minute, Thresholds{}, raw)
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

func TestAnalyzeBuckets(t *testing.T) {
	gpu := map[string]string{"hostname": "h", "gpu": "0", "UUID": "GPU-1", "modelName": a100}
	pod := func(p string) map[string]string {
		l := map[string]string{"exported_namespace": "ns", "exported_pod": p}
		for k, v := range gpu {
			l[k] = v
		}
		return l
	}
	half := func(a, b float64) []float64 { return append(repeat(a, 30), repeat(b, 30)...) }
	nan := math.NaN()

	t.Run("pod churn merges into one GPU", func(t *testing.T) {
		// pod a holds 10 GiB for 20 min, then pod b 20 GiB for 40 min.
		a := append(repeat(10240, 20), repeat(nan, 40)...)
		b := append(repeat(nan, 20), repeat(20480, 40)...)
		raw := rawSeries{
			usedAvg: model.Matrix{series(pod("a"), a...), series(pod("b"), b...)},
			free:    model.Matrix{series(gpu, half(30720, 20480)...)},
		}
		f := analyze(hourWindow, time.Minute, Thresholds{}, raw)
		if len(f.GPUs) != 1 {
			t.Fatalf("%d GPUs, want 1", len(f.GPUs))
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
	})

	t.Run("engine activity with per-bucket GPU_UTIL fallback", func(t *testing.T) {
		// Engine activity only for the first half (busy); GPU_UTIL says idle
		// in the second half: 30 idle minutes while holding 10 GiB.
		raw := rawSeries{
			usedAvg: model.Matrix{series(gpu, repeat(10240, 60)...)},
			free:    model.Matrix{series(gpu, repeat(71680, 60)...)},
			engine:  model.Matrix{series(gpu, append(repeat(0.7, 30), repeat(nan, 30)...)...)},
			util:    model.Matrix{series(gpu, half(90, 1)...)},
		}
		g := analyze(hourWindow, time.Minute, Thresholds{}, raw).GPUs[0]
		if g.IdleHours != 0.5 || g.IdleHeldBytes != 10<<30 || g.ActivityMetric != metricEngineActive {
			t.Errorf("idle %v h holding %d via %s; want 0.5 h, 10 GiB, engine", g.IdleHours, g.IdleHeldBytes, g.ActivityMetric)
		}
	})

	t.Run("idle but holding less than the threshold", func(t *testing.T) {
		raw := rawSeries{
			usedAvg: model.Matrix{series(gpu, repeat(512, 60)...)},
			free:    model.Matrix{series(gpu, repeat(81408, 60)...)},
			engine:  model.Matrix{series(gpu, repeat(0, 60)...)},
		}
		if g := analyze(hourWindow, time.Minute, Thresholds{}, raw).GPUs[0]; g.IdleHours != 0 {
			t.Errorf("idle %v h while holding 512 MiB, want 0", g.IdleHours)
		}
	})

	t.Run("no activity metric", func(t *testing.T) {
		raw := rawSeries{usedAvg: model.Matrix{series(gpu, repeat(5000, 60)...)}, free: model.Matrix{series(gpu, repeat(5000, 60)...)}}
		f := analyze(hourWindow, time.Minute, Thresholds{}, raw)
		if g := f.GPUs[0]; g.ActivityMetric != "" || g.IdleHours != 0 {
			t.Errorf("activity %q idle %v, want none", g.ActivityMetric, g.IdleHours)
		}
		want := []string{
			metricFBReserved + " absent (dcgm-exporter before 4.3.1-4.4.0): totals are used + free, slightly low",
			"no " + metricEngineActive + " or " + metricGPUUtil + " for h GPU 0: idle time unknown",
		}
		if !reflect.DeepEqual(f.Missing, want) {
			t.Errorf("missing = %q, want %q", f.Missing, want)
		}
	})

	t.Run("near OOM from the bucket max, not the average", func(t *testing.T) {
		raw := rawSeries{
			usedMax: model.Matrix{series(gpu, half(50000, 80000)...)},
			usedAvg: model.Matrix{series(gpu, half(50000, 70000)...)},
			free:    model.Matrix{series(gpu, half(31920, 11920)...)},
		}
		g := analyze(hourWindow, time.Minute, Thresholds{}, raw).GPUs[0]
		if g.HoursAbove != 0.5 || math.Abs(g.PeakUsedRatio-80000.0/81920) > 1e-9 {
			t.Errorf("above %v h, peak %v; want 0.5 h, %v", g.HoursAbove, g.PeakUsedRatio, 80000.0/81920)
		}
	})

	t.Run("stopped reporting", func(t *testing.T) {
		raw := rawSeries{usedAvg: model.Matrix{series(gpu, append(repeat(100, 30), repeat(nan, 30)...)...)}}
		f := analyze(hourWindow, time.Minute, Thresholds{}, raw)
		g := f.GPUs[0]
		if !g.Stopped(hourWindow, f.Step) || !g.LastSeen.Equal(storyEnd.Add(-30*time.Minute)) {
			t.Errorf("last seen %s, stopped %v; want 30 min before the end, stopped", g.LastSeen, g.Stopped(hourWindow, f.Step))
		}
	})

	t.Run("NaN and Inf samples are ignored", func(t *testing.T) {
		raw := rawSeries{
			usedAvg: model.Matrix{series(gpu, append(repeat(math.Inf(1), 30), repeat(1000, 30)...)...)},
			free:    model.Matrix{series(gpu, repeat(9000, 60)...)},
		}
		g := analyze(hourWindow, time.Minute, Thresholds{}, raw).GPUs[0]
		if g.PeakUsedRatio != 0.1 {
			t.Errorf("peak %v, want 0.1", g.PeakUsedRatio)
		}
	})
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
		{"1g.10gb+me", h100, 1.0 / 7},
		{"weird", a100, 1},
		{"0g.1gb", a100, 1},
	}
	for _, tt := range tests {
		if got := migShare(tt.profile, tt.model); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("migShare(%q, %q) = %v, want %v", tt.profile, tt.model, got, tt.want)
		}
	}
}

func TestGPUOrder(t *testing.T) {
	keys := []GPUKey{{Host: "b", GPU: "0"}, {Host: "a", GPU: "10"}, {Host: "a", GPU: "2"}, {Host: "a", GPU: "2", MIGInstance: "13"}, {Host: "a", GPU: "2", MIGInstance: "3"}}
	want := []GPUKey{{Host: "a", GPU: "2"}, {Host: "a", GPU: "2", MIGInstance: "3"}, {Host: "a", GPU: "2", MIGInstance: "13"}, {Host: "a", GPU: "10"}, {Host: "b", GPU: "0"}}
	for i := 0; i < len(keys); i++ {
		for j := i + 1; j < len(keys); j++ {
			if keys[j].less(keys[i]) {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("order %v, want %v", keys, want)
	}
}

// FuzzLabels feeds arbitrary label values (Prometheus data is not ours)
// through the analysis: it must not panic, and names stay printable.
func FuzzLabels(f *testing.F) {
	f.Add("node-a", "0", "GPU-1", "7", "1g.10gb", "ns", "pod", "10.0.0.1:9400")
	f.Add("", "", "", "", "g.", "", "", "[::1]:")
	f.Fuzz(func(t *testing.T, host, gpu, uuid, migID, profile, ns, pod, instance string) {
		l := map[string]string{"hostname": host, "gpu": gpu, "UUID": uuid, "GPU_I_ID": migID, "GPU_I_PROFILE": profile, "exported_namespace": ns, "exported_pod": pod, "instance": instance}
		raw := rawSeries{usedAvg: model.Matrix{series(l, repeat(100, 60)...)}, free: model.Matrix{series(l, repeat(100, 60)...)}, engine: model.Matrix{series(l, repeat(0, 60)...)}}
		fl := analyze(hourWindow, time.Minute, Thresholds{HoldingBytes: 1}, raw)
		if len(fl.GPUs) != 1 {
			t.Fatalf("%d GPUs from one series", len(fl.GPUs))
		}
		if s := migShare(profile, ""); s <= 0 || s > 1 {
			t.Errorf("migShare(%q) = %v", profile, s)
		}
		_ = fl.GPUs[0].Name()
	})
}
