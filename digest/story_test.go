package digest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"
)

// The story day: 2024-01-01 00:00 to 2024-01-02 00:00 UTC, one sample a
// minute, dcgm-exporter scraped by a ServiceMonitor with honorLabels: false
// (so workloads arrive as exported_namespace/exported_pod and namespace/pod
// name the exporter pod). The story:
//
//   - node-a (post-rename `hostname` label), three A100 80GB:
//     GPU 0 trains ml-train/llama-ft-0 and sits at 78,600 of 81,920 MiB
//     (95.9 %) from 02:00 to 08:00: near OOM for exactly 6 hours;
//     GPU 1 holds 30 GiB for research/jupyter-alice-0 with the engine idle
//     all day: idle while holding, 24 hours;
//     GPU 2 is unallocated and empty: nothing to report.
//   - node-b (pre-rename `Hostname`, an older exporter without
//     DCGM_FI_DEV_FB_RESERVED and without DCP metrics, so only
//     DCGM_FI_DEV_GPU_UTIL), one H100 serving ml-infer/vllm-0 at 80 % until
//     its exporter stops at 12:00.
//   - node-c (`hostname`), an A100 split by MIG: instance 1 (3g.40gb) runs
//     ml-train/eval-3; instance 7 (1g.10gb) holds 4 GiB for
//     research/jupyter-bob-0 and is idle all day. MIG reports no
//     DCGM_FI_DEV_GPU_UTIL, only DCGM_FI_PROF_GR_ENGINE_ACTIVE.
var (
	storyStart = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	storyEnd   = storyStart.Add(24 * time.Hour)
)

const storySampleEvery = time.Minute

// storySeries is one exported series: a metric, its labels, and its value
// at a time (ok false: no sample then).
type storySeries struct {
	metric string
	labels map[string]string
	value  func(t time.Time) (float64, bool)
}

func constant(v float64) func(time.Time) (float64, bool) {
	return func(time.Time) (float64, bool) { return v, true }
}

// until reports v up to and including the stop time, then nothing.
func until(stop time.Time, v float64) func(time.Time) (float64, bool) {
	return func(t time.Time) (float64, bool) { return v, !t.After(stop) }
}

func at(h, m int) time.Time {
	return storyStart.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
}

// gpuLabels are the labels dcgm-exporter 4.x puts on every metric, plus
// those Prometheus adds when scraping through the ServiceMonitor.
func gpuLabels(hostLabel, host, gpu, uuid, model, instance string, extra ...string) map[string]string {
	l := map[string]string{
		hostLabel: host, "gpu": gpu, "UUID": uuid, "device": "nvidia" + gpu, "modelName": model,
		"pci_bus_id": "00000000:1" + gpu + ":00.0", "DCGM_FI_DRIVER_VERSION": "550.54.15",
		"instance": instance, "job": "nvidia-dcgm-exporter",
		"namespace": "gpu-operator", "pod": "nvidia-dcgm-exporter-" + host[len(host)-1:],
	}
	for i := 0; i+1 < len(extra); i += 2 {
		l[extra[i]] = extra[i+1]
	}
	return l
}

func workload(ns, pod, container string) []string {
	return []string{"exported_namespace", ns, "exported_pod", pod, "exported_container", container}
}

const (
	a100     = "NVIDIA A100-SXM4-80GB"
	h100     = "NVIDIA H100 80GB HBM3"
	a100MiB  = 81920
	h100MiB  = 81559
	mig3gMiB = 40192
	mig1gMiB = 9856
)

// memory returns USED, FREE and (unless withoutReserved) RESERVED series
// adding up to totalMiB.
func memory(l map[string]string, totalMiB, reservedMiB float64, used func(time.Time) (float64, bool), withoutReserved bool) []storySeries {
	free := func(t time.Time) (float64, bool) {
		u, ok := used(t)
		return totalMiB - reservedMiB - u, ok
	}
	out := []storySeries{
		{metricFBUsed, l, used},
		{metricFBFree, l, free},
	}
	if !withoutReserved {
		res := func(t time.Time) (float64, bool) { _, ok := used(t); return reservedMiB, ok }
		out = append(out, storySeries{metricFBReserved, l, res})
	}
	return out
}

func storyDay() []storySeries {
	var s []storySeries
	// node-a GPU 0: near OOM 02:00-08:00.
	a0 := gpuLabels("hostname", "node-a", "0", "GPU-0a0a0a0a-1111-2222-3333-444444444444", a100, "10.0.0.1:9400", workload("ml-train", "llama-ft-0", "trainer")...)
	s = append(s, memory(a0, a100MiB, 512, func(t time.Time) (float64, bool) {
		if t.After(at(2, 0)) && !t.After(at(8, 0)) {
			return 78600, true
		}
		return 60000, true
	}, false)...)
	s = append(s, storySeries{metricEngineActive, a0, constant(0.85)}, storySeries{metricGPUUtil, a0, constant(92)})
	// node-a GPU 1: an idle notebook holding 30 GiB.
	a1 := gpuLabels("hostname", "node-a", "1", "GPU-1a1a1a1a-1111-2222-3333-444444444444", a100, "10.0.0.1:9400", workload("research", "jupyter-alice-0", "notebook")...)
	s = append(s, memory(a1, a100MiB, 512, constant(30720), false)...)
	s = append(s, storySeries{metricEngineActive, a1, constant(0)}, storySeries{metricGPUUtil, a1, constant(0)})
	// node-a GPU 2: free.
	a2 := gpuLabels("hostname", "node-a", "2", "GPU-2a2a2a2a-1111-2222-3333-444444444444", a100, "10.0.0.1:9400")
	s = append(s, memory(a2, a100MiB, 512, constant(0), false)...)
	s = append(s, storySeries{metricEngineActive, a2, constant(0)}, storySeries{metricGPUUtil, a2, constant(0)})
	// node-b GPU 0: older exporter, stops at 12:00.
	b0 := gpuLabels("Hostname", "node-b", "0", "GPU-0b0b0b0b-1111-2222-3333-444444444444", h100, "10.0.0.2:9400", workload("ml-infer", "vllm-0", "vllm")...)
	s = append(s, memory(b0, h100MiB, 0, until(at(12, 0), 70000), true)...)
	s = append(s, storySeries{metricGPUUtil, b0, until(at(12, 0), 80)})
	// node-c GPU 0: MIG instances 1 (busy) and 7 (idle notebook).
	c1 := gpuLabels("hostname", "node-c", "0", "GPU-0c0c0c0c-1111-2222-3333-444444444444", a100, "10.0.0.3:9400",
		append(workload("ml-train", "eval-3", "eval"), "GPU_I_PROFILE", "3g.40gb", "GPU_I_ID", "1")...)
	s = append(s, memory(c1, mig3gMiB, 0, constant(20000), false)...)
	s = append(s, storySeries{metricEngineActive, c1, constant(0.6)})
	c7 := gpuLabels("hostname", "node-c", "0", "GPU-0c0c0c0c-1111-2222-3333-444444444444", a100, "10.0.0.3:9400",
		append(workload("research", "jupyter-bob-0", "notebook"), "GPU_I_PROFILE", "1g.10gb", "GPU_I_ID", "7")...)
	s = append(s, memory(c7, mig1gMiB, 0, constant(4096), false)...)
	s = append(s, storySeries{metricEngineActive, c7, constant(0)})
	return s
}

// storyTimes are the sample times: each minute after the start, up to and
// including the end.
func storyTimes() []time.Time {
	var ts []time.Time
	for t := storyStart.Add(storySampleEvery); !t.After(storyEnd); t = t.Add(storySampleEvery) {
		ts = append(ts, t)
	}
	return ts
}

// writeOpenMetrics writes the series as OpenMetrics text for
// `promtool tsdb create-blocks-from openmetrics`: each family contiguous
// under its # TYPE line, timestamps in seconds, ending with # EOF.
func writeOpenMetrics(w io.Writer, series []storySeries) error {
	bw := bufio.NewWriter(w)
	byMetric := map[string][]storySeries{}
	for _, s := range series {
		byMetric[s.metric] = append(byMetric[s.metric], s)
	}
	for _, m := range slices.Sorted(maps.Keys(byMetric)) {
		fmt.Fprintf(bw, "# TYPE %s gauge\n", m)
		for _, s := range byMetric[m] {
			ls := labelString(s.labels)
			for _, t := range storyTimes() {
				v, ok := s.value(t)
				if !ok {
					continue
				}
				// Seconds, not milliseconds: promtool silently accepts
				// milliseconds and lands the data in the year 56,000.
				if t.Unix() > 1e11 {
					return fmt.Errorf("timestamp %d is not in seconds", t.Unix())
				}
				fmt.Fprintf(bw, "%s{%s} %g %d\n", m, ls, v, t.Unix())
			}
		}
	}
	fmt.Fprintln(bw, "# EOF")
	return bw.Flush()
}

func labelString(l map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(l)) {
		parts = append(parts, fmt.Sprintf("%s=%q", k, l[k]))
	}
	return strings.Join(parts, ",")
}

// simMetrics answers Fleet the way PromSource's range queries would on the
// story data, without a Prometheus: each bucket (t-step, t] reduced with
// max_over_time or avg_over_time.
type simMetrics struct{ series []storySeries }

func (sm simMetrics) Fleet(_ context.Context, w Window, th Thresholds) (Fleet, error) {
	if err := w.validate(); err != nil {
		return Fleet{}, err
	}
	step := StepFor(w.Duration())
	var raw rawSeries
	reduce := func(metric string, agg func([]float64) float64) model.Matrix {
		var m model.Matrix
		for _, s := range sm.series {
			if s.metric != metric {
				continue
			}
			ss := &model.SampleStream{Metric: model.Metric{}}
			for k, v := range s.labels {
				ss.Metric[model.LabelName(k)] = model.LabelValue(v)
			}
			n := int(w.Duration() / step)
			for i := range n {
				end := w.End.Add(-time.Duration(n-1-i) * step)
				var vals []float64
				for _, t := range storyTimes() {
					if t.After(end.Add(-step)) && !t.After(end) {
						if v, ok := s.value(t); ok {
							vals = append(vals, v)
						}
					}
				}
				if len(vals) > 0 {
					ss.Values = append(ss.Values, model.SamplePair{Timestamp: model.TimeFromUnixNano(end.UnixNano()), Value: model.SampleValue(agg(vals))})
				}
			}
			if len(ss.Values) > 0 {
				m = append(m, ss)
			}
		}
		return m
	}
	maxOf := func(v []float64) float64 { return slices.Max(v) }
	avgOf := func(v []float64) float64 {
		sum := 0.0
		for _, x := range v {
			sum += x
		}
		return sum / float64(len(v))
	}
	raw.usedMax = reduce(metricFBUsed, maxOf)
	raw.usedAvg = reduce(metricFBUsed, avgOf)
	raw.free = reduce(metricFBFree, avgOf)
	raw.reserved = reduce(metricFBReserved, avgOf)
	raw.engine = reduce(metricEngineActive, avgOf)
	raw.util = reduce(metricGPUUtil, avgOf)
	return analyze(w, step, th, raw), nil
}

// storyEvents are the OOMs pasted in Slack: three in the window, one the
// day before (must not count).
func storyEvents() []OOMEvent {
	gib := func(n int64) *int64 { v := n << 30; return &v }
	return []OOMEvent{
		{At: at(-3, 0), Channel: "C0ML", ThreadTS: "1704056400.000100", Framework: "pytorch", Format: "pytorch-new", Cause: "fragmentation", Device: "cuda:0", TriedBytes: gib(2)},
		{At: at(3, 12), Channel: "C0ML", ThreadTS: "1704078720.000200", Permalink: "https://example.slack.com/archives/C0ML/p1704078720000200",
			Framework: "pytorch", Format: "pytorch-new", Cause: "fragmentation", Device: "cuda:0", TriedBytes: gib(2), TotalBytes: gib(80)},
		{At: at(7, 45), Channel: "C0ML", ThreadTS: "1704095100.000300", Permalink: "https://example.slack.com/archives/C0ML/p1704095100000300",
			Framework: "pytorch", Format: "pytorch-new", Cause: "fragmentation", Device: "cuda:0", TriedBytes: gib(1)},
		{At: at(15, 30), Channel: "C0JAX", ThreadTS: "1704123000.000400", Framework: "jax", Format: "xla", Cause: "activations"},
	}
}

// fakePricer prices the A100 only, as an embedded snapshot might.
type fakePricer map[string]float64

func (p fakePricer) PricePerGPUHour(model string) (float64, string, bool) {
	v, ok := p[model]
	return v, "test snapshot 2024-01", ok
}

var storyPrices = fakePricer{a100: 1.5}
