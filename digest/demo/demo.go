// Package demo is `vrambot digest --demo`: a simulated day at a small
// cluster (digest/simulate), the OOMs its people pasted in Slack, and the
// embedded price snapshot as of that day, composed into the digest a
// newcomer would get before wiring Prometheus (docs/digest.md §11). The day
// is fixed, so its digest is the same on every run (its golden files are
// under testdata/).
package demo

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"time"

	"github.com/vrambot/vrambot/digest"
	"github.com/vrambot/vrambot/digest/fleet"
	"github.com/vrambot/vrambot/digest/simulate"
	"github.com/vrambot/vrambot/pricing"
	"github.com/vrambot/vrambot/pricing/source"
	"github.com/vrambot/vrambot/store"
)

// End is when the demo day ends: the daily digest's 09:00 UTC on Tuesday
// 1 December 2026. Start is a day earlier.
var (
	End   = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	Start = End.Add(-24 * time.Hour)
)

// Models and capacities (MiB) as dcgm-exporter reports them, with the
// FB_RESERVED of each.
const (
	H100      = "NVIDIA H100 80GB HBM3"
	A100      = "NVIDIA A100-SXM4-80GB"
	H100MiB   = 81559
	A100MiB   = 81920
	ReservedH = 555
	ReservedA = 512
)

// The demo's jobs, for tests to check against.
const (
	DDPJob       = "ml-train/llama-70b-ddp-0" // 8 H100s, near OOM, restarted once
	RightSizeJob = "ml-train/embed-ft-0"      // 17.5 GiB of an H100, busy 75%
	SmallEvalJob = "ml-eval/rag-eval-0"       // 9 GiB of an A100, busy 30%
	FirstPod     = "ml-train/bert-pretrain-0" // node-b GPU 1 until 13:00
	SecondPod    = "ml-train/llama-sft-0"     // node-b GPU 1 from 13:03
	ServingJob   = "ml-infer/vllm-llama-70b-0"
	FourGPUJob   = "ml-train/resnet-ddp-0"
	NotebookJob  = "research/jupyter-alice-0"
)

// At is a time on the demo day, h hours and m minutes after Start (09:00
// Monday): At(16, 0) is 01:00 on Tuesday.
func At(h, m int) time.Time { return simulate.At(Start, h, m) }

// crashAt is when the 8-GPU job died of OOM on the demo day, and backAt
// when it had loaded its model again.
var (
	nearFrom = At(16, 0) // 01:00 Tuesday
	nearTo   = At(19, 10)
	crashAt  = At(19, 12)
	backAt   = At(19, 20)
)

// Day is the demo day, one sample a minute, dcgm-exporter 4.x behind a
// ServiceMonitor with honorLabels: false (workloads as exported_namespace/
// exported_pod), with FB_RESERVED and DCGM_FI_PROF_GR_ENGINE_ACTIVE:
//
//   - node-a, 8× H100 80GB: one pod, ml-train/llama-70b-ddp-0, at 70,000 MiB
//     a GPU, climbing from 01:00 to 04:10 to 77,800-80,800 MiB (95-99%) and
//     dying at 04:12 (memory 0 on all eight), back at 04:20;
//   - node-b, 6× H100 80GB: GPU 0 ml-train/embed-ft-0 at 16-17.5 GiB (22%)
//     busy 75% all day; GPU 1 changes pod: ml-train/bert-pretrain-0 until
//     13:00 (65%), empty, ml-train/llama-sft-0 from 13:03 (78%); GPUs 2-3
//     vLLM (ml-infer/vllm-llama-70b-0) holding 92% flat, idle between
//     bursts;
//     GPU 4 a forgotten notebook holding 30 GiB; GPU 5 free;
//   - node-c, 8× A100 80GB: GPUs 0-3 ml-train/resnet-ddp-0 at 60,000 MiB
//     each; GPU 4 ml-eval/rag-eval-0 at 9 GiB busy 30%; GPUs 5-7 free.
func Day() simulate.Day {
	var s []simulate.Series
	add := func(host, gpu, model string, totalMiB, reservedMiB float64, owner []string, used func(time.Time) (float64, bool), active func(time.Time) (float64, bool)) {
		l := simulate.GPULabels("hostname", host, gpu, uuid(host, gpu), model, instance(host), owner...)
		s = append(s, simulate.Memory(l, totalMiB, reservedMiB, used, false)...)
		s = append(s, simulate.Series{Metric: fleet.MetricEngineActive, Labels: l, Value: active})
	}
	idle := simulate.Constant(0)
	free := simulate.Constant(0)

	// node-a: the 8-GPU job on the edge of OOM, dying once.
	for g := range 8 {
		peak := 77800 + float64(g%4)*1000 // GPU 3 and 7 reach 80,800 MiB (99%)
		ramp := func(t time.Time) float64 {
			// Memory climbs through the hard stretch in steps.
			f := float64(t.Sub(nearFrom)) / float64(nearTo.Sub(nearFrom))
			return 77600 + (peak-77600)*math.Min(1, f*1.2)
		}
		add("node-a", fmt.Sprint(g), H100, H100MiB, ReservedH, simulate.Workload("ml-train", "llama-70b-ddp-0", "trainer"),
			func(t time.Time) (float64, bool) {
				switch {
				case t.After(nearFrom) && !t.After(nearTo):
					return ramp(t), true
				case t.After(nearTo) && t.Before(crashAt):
					return peak, true
				case !t.Before(crashAt) && t.Before(backAt):
					return 0, true
				case t.Equal(backAt):
					return 3000, true // loading the checkpoint
				}
				return 70000, true
			},
			func(t time.Time) (float64, bool) {
				if !t.Before(crashAt) && t.Before(backAt) {
					return 0, true
				}
				return 0.92, true
			})
	}

	// node-b GPU 0: the job a fifth of an H100 holds.
	add("node-b", "0", H100, H100MiB, ReservedH, simulate.Workload("ml-train", "embed-ft-0", "trainer"),
		func(t time.Time) (float64, bool) {
			// A sawtooth: each step's activations come and go.
			if t.Minute()%10 == 0 {
				return 17920, true
			}
			return 16384 + float64(t.Minute()%10)*100, true
		},
		simulate.Constant(0.75))

	// node-b GPU 1: one pod ends at 13:00, another starts at 13:03.
	b1 := simulate.GPULabels("hostname", "node-b", "1", uuid("node-b", "1"), H100, instance("node-b"))
	first := simulate.With(b1, simulate.Workload("ml-train", "bert-pretrain-0", "trainer")...)
	second := simulate.With(b1, simulate.Workload("ml-train", "llama-sft-0", "trainer")...)
	s = append(s, simulate.Memory(first, H100MiB, ReservedH, simulate.Until(At(4, 0), 53000), false)...)
	s = append(s, simulate.Series{Metric: fleet.MetricEngineActive, Labels: first, Value: simulate.Until(At(4, 0), 0.7)})
	s = append(s, simulate.Memory(b1, H100MiB, ReservedH, simulate.Between(At(4, 0), At(4, 2), free), false)...)
	s = append(s, simulate.Series{Metric: fleet.MetricEngineActive, Labels: b1, Value: simulate.Between(At(4, 0), At(4, 2), idle)})
	s = append(s, simulate.Memory(second, H100MiB, ReservedH, simulate.Between(At(4, 2), End, simulate.Constant(64000)), false)...)
	s = append(s, simulate.Series{Metric: fleet.MetricEngineActive, Labels: second, Value: simulate.Between(At(4, 2), End, simulate.Constant(0.8))})

	// node-b GPUs 2-3: vLLM, started with --gpu-memory-utilization 0.92,
	// holds 92% whatever its load.
	for _, g := range []string{"2", "3"} {
		add("node-b", g, H100, H100MiB, ReservedH, simulate.Workload("ml-infer", "vllm-llama-70b-0", "vllm"),
			simulate.Constant(math.Round(0.92*H100MiB)),
			func(t time.Time) (float64, bool) {
				if t.Minute() < 4 {
					return 0.4, true
				}
				return 0.01, true
			})
	}
	// node-b GPU 4: a forgotten notebook; GPU 5: free.
	add("node-b", "4", H100, H100MiB, ReservedH, simulate.Workload("research", "jupyter-alice-0", "notebook"), simulate.Constant(30720), idle)
	add("node-b", "5", H100, H100MiB, ReservedH, nil, free, idle)

	// node-c: a 4-GPU job whose shards need 80 GB cards, a small
	// evaluation, three free GPUs.
	for g := range 4 {
		add("node-c", fmt.Sprint(g), A100, A100MiB, ReservedA, simulate.Workload("ml-train", "resnet-ddp-0", "trainer"), simulate.Constant(60000), simulate.Constant(0.9))
	}
	add("node-c", "4", A100, A100MiB, ReservedA, simulate.Workload("ml-eval", "rag-eval-0", "eval"), simulate.Constant(9216), simulate.Constant(0.3))
	for g := 5; g < 8; g++ {
		add("node-c", fmt.Sprint(g), A100, A100MiB, ReservedA, nil, free, idle)
	}
	return simulate.Day{Start: Start, End: End, Every: time.Minute, Series: s}
}

func uuid(host, gpu string) string {
	return fmt.Sprintf("GPU-%c%s%c%s0000-1111-2222-3333-444444444444", host[len(host)-1], gpu, host[len(host)-1], gpu)
}

func instance(host string) string {
	return map[string]string{"node-a": "10.0.4.1:9400", "node-b": "10.0.4.2:9400", "node-c": "10.0.4.3:9400"}[host]
}

func bytesGiB(g float64) *int64 { v := int64(g * (1 << 30)); return &v }

// Events are the OOMs the bot answered in Slack on the demo day: the
// 8-GPU job's, pasted two minutes after it died (PyTorch states an H100's
// 79.11 GiB), and a fragmentation OOM from someone's workstation that no
// GPU here explains.
func Events() []digest.OOMEvent {
	return []digest.OOMEvent{
		{At: crashAt.Add(2 * time.Minute), Channel: "C0MLTRAIN", ThreadTS: "1764562440.000100", Permalink: "https://example.slack.com/archives/C0MLTRAIN/p1764562440000100",
			Framework: "pytorch", Format: "pytorch-new", Cause: "batch-too-large", Device: "cuda:3", TriedBytes: bytesGiB(2), TotalBytes: bytesGiB(79.11)},
		{At: At(6, 20), Channel: "C0RESEARCH", ThreadTS: "1764512400.000200", Permalink: "https://example.slack.com/archives/C0RESEARCH/p1764512400000200",
			Framework: "pytorch", Format: "pytorch-new", Cause: "fragmentation", Device: "cuda:0", TriedBytes: bytesGiB(0.5)},
	}
}

// events is an OOM event log in memory.
type events []digest.OOMEvent

// Since implements digest.EventSource.
func (e events) Since(_ context.Context, t time.Time) ([]digest.OOMEvent, error) {
	var out []digest.OOMEvent
	for _, ev := range e {
		if !ev.At.Before(t) {
			out = append(out, ev)
		}
	}
	return out, nil
}

// Pricer is the embedded price snapshot (pricing/source/data) read on the
// demo day's end, so prices and their ages are the same on every run.
func Pricer() digest.Pricer {
	return pricing.NewBook(store.NewMemory(), nil, source.Embedded(),
		pricing.WithClock(func() time.Time { return End }),
		pricing.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
}

// Inputs are the demo day's: its series through the simulation of the
// digest's queries, its OOMs and the price snapshot.
func Inputs() digest.Inputs {
	day := Day()
	return digest.Inputs{
		Window:  day.Window(),
		Metrics: simulate.Sim{Days: []simulate.Day{day}},
		Events:  events(Events()),
		Pricer:  Pricer(),
		Demo:    true,
	}
}

// Compose is the demo day's digest.
func Compose(ctx context.Context) (digest.Digest, error) {
	return digest.Compose(ctx, Inputs())
}
