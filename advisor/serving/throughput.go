package serving

import (
	"fmt"
	"math"

	"github.com/vrambot/vrambot/advisor/arch"
	"github.com/vrambot/vrambot/advisor/catalog"
)

// Efficiencies of the throughput model, each a published measurement.
const (
	// DecodeBandwidthEfficiency is the share of a GPU's peak memory
	// bandwidth a decode step achieves (model bandwidth utilisation):
	// Databricks, "LLM Inference Performance Engineering: Best Practices"
	// (2023) measures about 60% on A100/H100 at small batches.
	DecodeBandwidthEfficiency = 0.60
	// PrefillComputeEfficiency is the share of the dense bf16 peak a
	// prefill achieves (model FLOPs utilisation): PaLM (Chowdhery et al.
	// 2022, table 3) reaches 46%; 40% is the figure the price ranking uses
	// for training jobs too.
	PrefillComputeEfficiency = 0.40
	// DecodeComputeEfficiency caps decode at large batches, where it turns
	// compute-bound: the same 40% of the dense peak.
	DecodeComputeEfficiency = 0.40
)

// Throughput is the speed of one replica (TP × PP GPUs) at a concurrency.
type Throughput struct {
	// Concurrency is the sequences decoded together; Context the tokens
	// each holds on average while generating (half the max_model_len).
	Concurrency int `json:"concurrency"`
	Context     int `json:"context_tokens"`
	// DecodeTokensPerS is output tokens per second of the replica (all
	// sequences together); PerSequence of one sequence.
	DecodeTokensPerS float64 `json:"decode_tokens_per_s"`
	PerSequence      float64 `json:"decode_tokens_per_s_per_sequence"`
	// PrefillTokensPerS is prompt tokens per second.
	PrefillTokensPerS float64 `json:"prefill_tokens_per_s"`
	// Bound is "memory bandwidth" or "compute" for decode.
	Bound string `json:"bound"`
	// Basis says how it was computed.
	Basis string `json:"basis"`
}

// Speed is the decode and prefill throughput of the deployment in r at
// concurrency sequences: each decode step reads the weights (for a mixture
// of experts, the experts that concurrency tokens route to) and every
// sequence's KV cache at DecodeBandwidthEfficiency of the GPU's bandwidth,
// or takes 2 FLOPs per active parameter per token at
// DecodeComputeEfficiency, whichever is slower; prefill is compute-bound
// at PrefillComputeEfficiency. Zero when the GPU's bandwidth or FLOPs are
// unknown.
func Speed(r Result, concurrency int) Throughput {
	d := r.Deployment
	g := d.GPU
	n := max(1, concurrency)
	ctx := max(1, r.MaxModelLen/2)
	t := Throughput{Concurrency: n, Context: ctx}
	if g.BandwidthGBps <= 0 || g.DenseTFLOPS <= 0 || r.WeightsBytes <= 0 {
		return t
	}
	m := d.Model
	gpus := float64(max(1, r.TP*r.PP))
	weights := float64(r.WeightsBytes) * expertReadFraction(m, n, d.DenseBytes)
	specs := kvSpecs(m, max(1, r.TP), stages(m, max(1, r.PP))[0].layers, kvElemBytes(d.KVCacheDtype, d.DenseBytes))
	kv := cacheBytes(specs, ctx, n)
	// Pipeline stages run one after another for a token: the step is the
	// sum over stages, which for equal stages is PP × one stage.
	memSeconds := float64(max(1, r.PP)) * (weights + kv) / (g.BandwidthGBps * 1e9 * DecodeBandwidthEfficiency)
	active := float64(m.ActiveParams())
	flopsPerToken := 2 * active
	computeSeconds := float64(n) * flopsPerToken / (gpus * g.DenseTFLOPS * 1e12 * DecodeComputeEfficiency)
	step := math.Max(memSeconds, computeSeconds)
	t.Bound = "memory bandwidth"
	if computeSeconds > memSeconds {
		t.Bound = "compute"
	}
	t.PerSequence = 1 / step
	t.DecodeTokensPerS = float64(n) / step
	t.PrefillTokensPerS = gpus * g.DenseTFLOPS * 1e12 * PrefillComputeEfficiency / flopsPerToken
	seqs := "sequences"
	if n == 1 {
		seqs = "sequence"
	}
	t.Basis = fmt.Sprintf("each step reads %s of weights and %s of KV (%d %s at %d tokens) per GPU at %.0f%% of %s's %.0f GB/s; prefill at %.0f%% of %.0f dense TFLOPS per GPU",
		gib(weights), gib(kv), n, seqs, ctx, 100*DecodeBandwidthEfficiency, g.Name, g.BandwidthGBps, 100*PrefillComputeEfficiency, g.DenseTFLOPS)
	return t
}

// expertReadFraction is the share of the weight bytes a decode step of n
// tokens reads: everything for a dense model; for a mixture of experts the
// dense part plus the experts the tokens route to (each of E experts is
// hit with probability 1 − (1 − k/E)^n).
func expertReadFraction(m arch.Model, n int, dense float64) float64 {
	if !m.IsMoE() {
		return 1
	}
	bytes := m.WeightBytesByGroup(dense)
	var total float64
	for g, b := range bytes {
		if arch.TensorGroup(g) != arch.TensorMTP {
			total += b
		}
	}
	experts := bytes[arch.TensorExperts]
	if total <= 0 || experts <= 0 {
		return 1
	}
	hit := 1.0
	for _, g := range m.Layers() {
		if f := g.FFN; f.IsMoE() && f.ActiveExperts > 0 {
			hit = 1 - math.Pow(1-float64(f.ActiveExperts)/float64(f.Experts), float64(n))
			break
		}
	}
	return (total - experts + experts*hit) / total
}

// CostPerMillionTokens is the price of a million output tokens on an
// instance of gpus GPUs at pricePerHour, running as many replicas of the
// deployment as fit (gpus / (TP × PP)), each at decode speed t; 0 when
// the instance holds no replica or the speed is unknown.
func CostPerMillionTokens(pricePerHour float64, gpus int, r Result, t Throughput) float64 {
	replicas := gpus / (max(1, r.TP) * max(1, r.PP))
	if replicas <= 0 || t.DecodeTokensPerS <= 0 || !(pricePerHour > 0) {
		return 0
	}
	perHour := float64(replicas) * t.DecodeTokensPerS * 3600
	return pricePerHour / perHour * 1e6
}

// OnGPU is the deployment of r moved to another GPU: the same model,
// parallelism and settings as asked, the engine's defaults for that GPU
// derived again (without log lines or assumptions: it prices offers).
func OnGPU(r Result, g catalog.GPU) Result {
	d := r.Input
	d.GPU = g
	return plan(d, true)
}
