package digesttest

import (
	"fmt"
	"time"

	"github.com/vrambot/vrambot/digest/fleet"
)

// Models and capacities (MiB) as dcgm-exporter reports them.
const (
	A100      = "NVIDIA A100-SXM4-80GB"
	H100      = "NVIDIA H100 80GB HBM3"
	A100MiB   = 81920
	H100MiB   = 81559
	MIG3gMiB  = 40192
	MIG1gMiB  = 9856
	ReservedA = 512 // FB_RESERVED of a whole A100
	ReservedH = 555 // FB_RESERVED of a whole H100
)

func hm(start time.Time, h, m int) time.Time {
	return start.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
}

// StoryStart is the story day: 2024-01-01 00:00 to 2024-01-02 00:00 UTC.
var StoryStart = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// StoryAt is a time on the story day.
func StoryAt(h, m int) time.Time { return hm(StoryStart, h, m) }

// StoryDay is a day of label traps, one sample a minute, dcgm-exporter
// scraped by a ServiceMonitor with honorLabels: false (so workloads arrive
// as exported_namespace/exported_pod and namespace/pod name the exporter):
//
//   - node-a (post-rename `hostname` label), three A100 80GB:
//     GPU 0 trains ml-train/llama-ft-0 and sits at 78,600 of 81,920 MiB
//     (95.9 %) from 02:00 to 08:00: near OOM for exactly 6 hours;
//     GPU 1 holds 30 GiB for research/jupyter-alice-0 with the engine idle
//     all day: idle while holding, 24 hours;
//     GPU 2 is unallocated and empty: nothing to report.
//   - node-b (pre-rename `Hostname`, an older exporter without
//     DCGM_FI_DEV_FB_RESERVED and without DCP metrics, so only
//     DCGM_FI_DEV_GPU_UTIL), one H100 serving ml-infer/vllm-0 at 80 % busy
//     until its exporter stops at 12:00.
//   - node-c (`hostname`), an A100 split by MIG: instance 1 (3g.40gb) runs
//     ml-train/eval-3; instance 7 (1g.10gb) holds 4 GiB for
//     research/jupyter-bob-0 and is idle all day. MIG reports no
//     DCGM_FI_DEV_GPU_UTIL, only DCGM_FI_PROF_GR_ENGINE_ACTIVE.
func StoryDay() Day {
	at := StoryAt
	var s []Series
	a0 := GPULabels("hostname", "node-a", "0", "GPU-0a0a0a0a-1111-2222-3333-444444444444", A100, "10.0.0.1:9400", Workload("ml-train", "llama-ft-0", "trainer")...)
	s = append(s, Memory(a0, A100MiB, ReservedA, func(t time.Time) (float64, bool) {
		if t.After(at(2, 0)) && !t.After(at(8, 0)) {
			return 78600, true
		}
		return 60000, true
	}, false)...)
	s = append(s, Series{Metric: fleet.MetricEngineActive, Labels: a0, Value: Constant(0.85)}, Series{Metric: fleet.MetricGPUUtil, Labels: a0, Value: Constant(92)})
	a1 := GPULabels("hostname", "node-a", "1", "GPU-1a1a1a1a-1111-2222-3333-444444444444", A100, "10.0.0.1:9400", Workload("research", "jupyter-alice-0", "notebook")...)
	s = append(s, Memory(a1, A100MiB, ReservedA, Constant(30720), false)...)
	s = append(s, Series{Metric: fleet.MetricEngineActive, Labels: a1, Value: Constant(0)}, Series{Metric: fleet.MetricGPUUtil, Labels: a1, Value: Constant(0)})
	a2 := GPULabels("hostname", "node-a", "2", "GPU-2a2a2a2a-1111-2222-3333-444444444444", A100, "10.0.0.1:9400")
	s = append(s, Memory(a2, A100MiB, ReservedA, Constant(0), false)...)
	s = append(s, Series{Metric: fleet.MetricEngineActive, Labels: a2, Value: Constant(0)}, Series{Metric: fleet.MetricGPUUtil, Labels: a2, Value: Constant(0)})
	b0 := GPULabels("Hostname", "node-b", "0", "GPU-0b0b0b0b-1111-2222-3333-444444444444", H100, "10.0.0.2:9400", Workload("ml-infer", "vllm-0", "vllm")...)
	s = append(s, Memory(b0, H100MiB, 0, Until(at(12, 0), 70000), true)...)
	s = append(s, Series{Metric: fleet.MetricGPUUtil, Labels: b0, Value: Until(at(12, 0), 80)})
	c1 := GPULabels("hostname", "node-c", "0", "GPU-0c0c0c0c-1111-2222-3333-444444444444", A100, "10.0.0.3:9400",
		append(Workload("ml-train", "eval-3", "eval"), "GPU_I_PROFILE", "3g.40gb", "GPU_I_ID", "1")...)
	s = append(s, Memory(c1, MIG3gMiB, 0, Constant(20000), false)...)
	s = append(s, Series{Metric: fleet.MetricEngineActive, Labels: c1, Value: Constant(0.6)})
	c7 := GPULabels("hostname", "node-c", "0", "GPU-0c0c0c0c-1111-2222-3333-444444444444", A100, "10.0.0.3:9400",
		append(Workload("research", "jupyter-bob-0", "notebook"), "GPU_I_PROFILE", "1g.10gb", "GPU_I_ID", "7")...)
	s = append(s, Memory(c7, MIG1gMiB, 0, Constant(4096), false)...)
	s = append(s, Series{Metric: fleet.MetricEngineActive, Labels: c7, Value: Constant(0)})
	return Day{Start: StoryStart, End: StoryStart.Add(24 * time.Hour), Every: time.Minute, Series: s}
}

// ClusterStart is the cluster day: Monday 2024-01-08 00:00 to 2024-01-09
// 00:00 UTC, a week after the story day.
var ClusterStart = time.Date(2024, 1, 8, 0, 0, 0, 0, time.UTC)

// ClusterAt is a time on the cluster day.
func ClusterAt(h, m int) time.Time { return hm(ClusterStart, h, m) }

// The cluster day's names, for tests to check against.
const (
	H100UUID      = "GPU-4h4h4h4h-1111-2222-3333-444444444444"
	FirstH100Pod  = "bert-pretrain-0"
	SecondH100Pod = "llama-sft-0"
	RestartingPod = "gpt-pretrain-0"
	FourGPUPod    = "resnet-ddp-0"
	VLLMPod       = "vllm-llama-70b-0"
	NotebookPod   = "jupyter-alice-0"
)

// ClusterDay is the day of issue 13's acceptance test, one sample a minute,
// `hostname` labels, workloads as exported_namespace/exported_pod:
//
//   - node-h GPU 0, an H100 80GB (81,559 MiB): ml-train/bert-pretrain-0 holds
//     53,000 MiB (65 %) until 12:01; at 12:02 the GPU is unallocated and
//     empty; from 12:03 ml-train/llama-sft-0 holds 57,000 MiB and runs at
//     79,100 MiB (97.0 %) from 14:00 to 16:00. The two pods' series share one
//     5-minute bucket: a USED + FREE summed across series reads 130 GiB.
//   - node-a GPUs 0-3: one pod, ml-train/resnet-ddp-0, at 60,000 MiB all day.
//   - node-a GPU 4: ml-train/gpt-pretrain-0 at 70,000 MiB crashes twice:
//     memory is 0 from 03:12 to 03:14 and from 09:40 to 09:47, then climbs
//     back under the same pod (the container restarts in place).
//   - node-b GPUs 0-1: ml-infer/vllm-llama-70b-0 holds 90 % (73,728 MiB) of
//     each all day with the engine idle but for a burst each hour.
//   - node-a GPU 5: research/jupyter-alice-0 holds 30 GB, engine idle all day.
//   - node-a GPUs 6-7: unallocated, empty.
func ClusterDay() Day {
	at := ClusterAt
	var s []Series
	inst := func(host string) string {
		return map[string]string{"node-a": "10.0.1.1:9400", "node-b": "10.0.1.2:9400", "node-h": "10.0.1.9:9400"}[host]
	}
	uuid := func(host string, gpu int) string {
		return fmt.Sprintf("GPU-%c%d%c%d0000-1111-2222-3333-444444444444", host[len(host)-1], gpu, host[len(host)-1], gpu)
	}
	busy := func(l map[string]string, v float64) []Series {
		return []Series{{Metric: fleet.MetricEngineActive, Labels: l, Value: Constant(v)}, {Metric: fleet.MetricGPUUtil, Labels: l, Value: Constant(v * 100)}}
	}

	// node-h: the H100 that changes pod mid-day.
	h0 := GPULabels("hostname", "node-h", "0", H100UUID, H100, inst("node-h"))
	first := With(h0, Workload("ml-train", FirstH100Pod, "trainer")...)
	second := With(h0, Workload("ml-train", SecondH100Pod, "trainer")...)
	s = append(s, Memory(first, H100MiB, ReservedH, Until(at(12, 1), 53000), false)...)
	s = append(s, Series{Metric: fleet.MetricEngineActive, Labels: first, Value: Until(at(12, 1), 0.7)})
	s = append(s, Memory(h0, H100MiB, ReservedH, Between(at(12, 1), at(12, 2), Constant(0)), false)...)
	s = append(s, Series{Metric: fleet.MetricEngineActive, Labels: h0, Value: Between(at(12, 1), at(12, 2), Constant(0))})
	s = append(s, Memory(second, H100MiB, ReservedH, func(t time.Time) (float64, bool) {
		switch {
		case !t.After(at(12, 2)):
			return 0, false
		case t.After(at(14, 0)) && !t.After(at(16, 0)):
			return 79100, true
		}
		return 57000, true
	}, false)...)
	s = append(s, Series{Metric: fleet.MetricEngineActive, Labels: second, Value: Between(at(12, 2), at(24, 0), Constant(0.8))})

	// node-a GPUs 0-3: one 4-GPU pod.
	for g := range 4 {
		l := GPULabels("hostname", "node-a", fmt.Sprint(g), uuid("node-a", g), A100, inst("node-a"), Workload("ml-train", FourGPUPod, "trainer")...)
		s = append(s, Memory(l, A100MiB, ReservedA, Constant(60000), false)...)
		s = append(s, busy(l, 0.9)...)
	}

	// node-a GPU 4: restarts twice.
	a4 := GPULabels("hostname", "node-a", "4", uuid("node-a", 4), A100, inst("node-a"), Workload("ml-train", RestartingPod, "trainer")...)
	crashed := func(t time.Time) bool {
		return (!t.Before(at(3, 12)) && !t.After(at(3, 14))) || (!t.Before(at(9, 40)) && !t.After(at(9, 47)))
	}
	s = append(s, Memory(a4, A100MiB, ReservedA, func(t time.Time) (float64, bool) {
		switch {
		case crashed(t):
			return 0, true
		case t.Equal(at(3, 15)) || t.Equal(at(9, 48)):
			return 2000, true // loading the model again
		}
		return 70000, true
	}, false)...)
	s = append(s, Series{Metric: fleet.MetricEngineActive, Labels: a4, Value: func(t time.Time) (float64, bool) {
		if crashed(t) {
			return 0, true
		}
		return 0.85, true
	}})

	// node-b: vLLM on two GPUs, 90 % held, idle between bursts.
	for g := range 2 {
		l := GPULabels("hostname", "node-b", fmt.Sprint(g), uuid("node-b", g), A100, inst("node-b"), Workload("ml-infer", VLLMPod, "vllm")...)
		s = append(s, Memory(l, A100MiB, ReservedA, Constant(0.9*A100MiB), false)...)
		s = append(s, Series{Metric: fleet.MetricEngineActive, Labels: l, Value: func(t time.Time) (float64, bool) {
			if t.Minute() < 3 {
				return 0.35, true
			}
			return 0.01, true
		}})
	}

	// node-a GPU 5: a forgotten notebook.
	a5 := GPULabels("hostname", "node-a", "5", uuid("node-a", 5), A100, inst("node-a"), Workload("research", NotebookPod, "notebook")...)
	s = append(s, Memory(a5, A100MiB, ReservedA, Constant(30*1024), false)...)
	s = append(s, busy(a5, 0)...)

	// node-a GPUs 6-7: free.
	for g := 6; g < 8; g++ {
		l := GPULabels("hostname", "node-a", fmt.Sprint(g), uuid("node-a", g), A100, inst("node-a"))
		s = append(s, Memory(l, A100MiB, ReservedA, Constant(0), false)...)
		s = append(s, busy(l, 0)...)
	}
	return Day{Start: ClusterStart, End: ClusterStart.Add(24 * time.Hour), Every: time.Minute, Series: s}
}

// FleetDay is n whole A100s on n/8 nodes, each owned by its own pod at a
// different steady level, sampled every 5 minutes: a fleet large enough for
// the heatmap.
func FleetDay(n int) Day {
	var s []Series
	for i := range n {
		host := fmt.Sprintf("gpu-node-%02d", i/8)
		l := GPULabels("hostname", host, fmt.Sprint(i%8), fmt.Sprintf("GPU-f%07d-1111-2222-3333-444444444444", i), A100, fmt.Sprintf("10.0.2.%d:9400", i/8),
			Workload("ml-train", fmt.Sprintf("job-%02d", i), "trainer")...)
		level := float64(A100MiB-ReservedA) * float64(i%10+1) / 11
		s = append(s, Memory(l, A100MiB, ReservedA, Constant(level), false)...)
		s = append(s, Series{Metric: fleet.MetricEngineActive, Labels: l, Value: Constant(0.5)})
	}
	return Day{Start: ClusterStart, End: ClusterStart.Add(24 * time.Hour), Every: 5 * time.Minute, Series: s}
}

// WeekStart is the fleet week's start: Monday 2024-01-15 00:00 UTC.
var WeekStart = time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC)

// FleetWeek is a week of n GPUs (H100s, eight to a node) sampled every
// `every`, for the digest's benchmark against a real Prometheus: on most
// nodes one 8-GPU pod, which on every fifth node runs near OOM for two
// hours a day; on every fourth node eight single-GPU pods of which one is
// a notebook idle all week and one leaves its GPU free half of each day;
// labels as dcgm-exporter behind a ServiceMonitor writes them, without the
// exporter's pod and driver labels (they change no work, only file size).
func FleetWeek(n int, every time.Duration) Day {
	var s []Series
	for i := range n {
		node, gpu := i/8, i%8
		host := fmt.Sprintf("gpu-node-%03d", node)
		pod := fmt.Sprintf("train-%03d-0", node)
		var used func(time.Time) (float64, bool)
		active := Constant(0.85)
		switch {
		case node%4 == 3 && gpu == 0:
			pod = fmt.Sprintf("jupyter-%03d", node)
			used, active = Constant(30720), Constant(0)
		case node%4 == 3 && gpu == 1:
			pod = fmt.Sprintf("batch-%03d", node)
			used = func(t time.Time) (float64, bool) {
				if t.Hour() < 12 {
					return 40000, true
				}
				return 0, true
			}
		case node%4 == 3:
			pod = fmt.Sprintf("small-%03d-%d", node, gpu)
			used = Constant(12000 + float64(gpu)*2000)
		case node%5 == 0:
			used = func(t time.Time) (float64, bool) {
				if t.Hour() == 3 || t.Hour() == 4 {
					return 78500, true
				}
				return 70000, true
			}
		default:
			used = Constant(50000 + float64(node%7)*2000)
		}
		l := map[string]string{
			"hostname": host, "gpu": fmt.Sprint(gpu), "UUID": fmt.Sprintf("GPU-%08d-1111-2222-3333-444444444444", i),
			"modelName": H100, "instance": fmt.Sprintf("10.1.%d.%d:9400", node/250, node%250), "job": "nvidia-dcgm-exporter",
			"exported_namespace": "ml", "exported_pod": pod, "exported_container": "main",
		}
		s = append(s, Memory(l, H100MiB, ReservedH, used, false)...)
		s = append(s, Series{Metric: fleet.MetricEngineActive, Labels: l, Value: active})
	}
	return Day{Start: WeekStart, End: WeekStart.Add(7 * 24 * time.Hour), Every: every, Series: s}
}
