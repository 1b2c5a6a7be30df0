package serving

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/vrambot/vrambot/advisor/arch"
	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/fix"
)

// Change ids are the fix catalogue's (advisor/fix), so the OOM diagnosis
// and the planner name, title and snippet a change alike.
const (
	ChangeMaxModelLen    = fix.MaxModelLen
	ChangeFP8KVCache     = fix.FP8KVCache
	ChangeGPUUtilization = fix.GPUMemoryUtilization
	// ChangeLowerGPUUtilization: a budget the GPU has free at start-up.
	ChangeLowerGPUUtilization = fix.LowerGPUMemoryUtil
	ChangeTensorParallel      = fix.TensorParallel
	ChangeInt8Weights         = fix.Int8Weights // an 8-bit (FP8) checkpoint
	ChangeNF4Weights          = fix.NF4Weights  // a 4-bit (AWQ/GPTQ) checkpoint
	ChangeBiggerGPU           = fix.BiggerGPU
)

// Change is one change to a deployment, as the fix catalogue writes it for
// the engine (title, detail with the numbers, cost, the engine's command),
// and what the engine does with it.
type Change struct {
	fix.Fix
	Result Result `json:"-"`
}

// Limits of the changes proposed.
const (
	// maxUtilization is the highest gpu_memory_utilization proposed: above
	// it the CUDA context and graph pools that vLLM leaves outside the
	// budget no longer fit on the card.
	maxUtilization = 0.95
	// minUsefulContext is the shortest max_model_len proposed.
	minUsefulContext = 1024
	// roundingTolerance: a proposed max_model_len is a power of two when
	// one lies within 20% below the engine's estimate, else a multiple of
	// 1024 (the OOM diagnosis' rule: 32768 for vLLM's 37728).
	roundingTolerance = 0.20
	// MaxChangeTP is the most GPUs one change proposes for tensor
	// parallelism: one node.
	MaxChangeTP = 8
)

// Changes lists the single changes that make the deployment of r reach
// goal (start, or hold a load), cheapest first as a practitioner ranks
// them: a shorter context (only when goal allows it: allowShorter), an fp8
// KV cache, a higher memory fraction, a quantised checkpoint the GPU runs,
// more tensor parallelism on the same GPU, then a bigger GPU from gpus —
// the GPU the user named stays first. Each change is planned, so each one listed works.
func Changes(r Result, goal func(Result) bool, allowShorter bool, gpus []catalog.GPU) []Change {
	d := r.Input
	resolved := r.Deployment
	e := d.Engine
	base := fix.Params{ModelID: modelID(d.Model), GPUName: d.GPU.Name, FP8: d.GPU.FP8, NoBF16: !d.GPU.BF16,
		MaxModelLen: resolved.MaxModelLen, TP: resolved.TP, PP: resolved.PP, GPUs: resolved.TP * resolved.PP}
	var out []Change
	add := func(id string, p fix.Params, res Result) {
		if f, ok := fix.Make(id, fix.Framework(e), p); ok {
			out = append(out, Change{Fix: f, Result: res})
		}
	}
	try := func(id string, p fix.Params, nd Deployment) {
		if res := plan(nd, true); goal(res) {
			add(id, p, res)
		}
	}
	llama := e == EngineLlamaCpp || e == EngineOllama
	if allowShorter && r.MaxModelLenThatFits >= minUsefulContext {
		nd := d
		nd.MaxModelLen = RoundContext(r.MaxModelLenThatFits)
		p := base
		p.MaxModelLen, p.WasMaxModelLen, p.EngineMaxModelLen = nd.MaxModelLen, resolved.MaxModelLen, r.MaxModelLenThatFits
		try(ChangeMaxModelLen, p, nd)
	}
	if (d.KVCacheDtype == KVAuto || d.KVCacheDtype == KVFP16) && (llama || d.GPU.FP8) {
		nd := d
		nd.KVCacheDtype = KVFP8
		if llama {
			nd.KVCacheDtype = KVQ8
		}
		try(ChangeFP8KVCache, base, nd)
	}
	if r.Failure == FailStartupMemory {
		nd := d
		nd.MemoryFraction = SafeUtilization(d.GPU)
		p := base
		p.GPUMemoryUtilization = nd.MemoryFraction
		if res := plan(nd, true); goal(res) {
			add(ChangeLowerGPUUtilization, p, res)
		}
	}
	if (e == EngineVLLM || e == EngineSGLang) && resolved.MemoryFraction < maxUtilization {
		for u := resolved.MemoryFraction + 0.01; u <= maxUtilization+1e-9; u += 0.01 {
			nd := d
			nd.MemoryFraction = math.Round(u*100) / 100
			if res := plan(nd, true); goal(res) {
				p := base
				p.GPUMemoryUtilization = nd.MemoryFraction
				add(ChangeGPUUtilization, p, res)
				break
			}
		}
	}
	// A quantised checkpoint the GPU runs comes before more GPUs
	// (docs/contracts.md §6): FP8 where the GPU has FP8 tensor cores,
	// then 4-bit; a published checkpoint of the model is named.
	// The smaller weights leave room for a longer context, but not always
	// for the whole window: then the checkpoint with the context capped.
	quantized := func(id string, q *arch.Quantization, p fix.Params) {
		nd := d
		nd.Model.Quant = q
		res := plan(nd, true)
		if goal(res) {
			add(id, p, res)
			return
		}
		if allowShorter && res.MaxModelLenThatFits >= minUsefulContext {
			nd.MaxModelLen = RoundContext(res.MaxModelLenThatFits)
			p.CheckpointModelLen = nd.MaxModelLen
			try(id, p, nd)
		}
	}
	if d.Model.Quant == nil && !llama {
		if d.GPU.FP8 {
			p := base
			p.Checkpoint, _ = catalog.PublishedCheckpoint(d.Model.HFID, catalog.CheckpointFP8)
			quantized(ChangeInt8Weights, FP8Checkpoint(), p)
		}
		p := base
		p.Quant = "AWQ/GPTQ 4-bit"
		p.Checkpoint, _ = catalog.PublishedCheckpoint(d.Model.HFID, catalog.CheckpointAWQ)
		quantized(ChangeNF4Weights, Int4Checkpoint(), p)
	}
	if e.TensorParallel() {
		for _, tp := range ValidTPDegrees(d.Model, MaxChangeTP) {
			if tp <= resolved.TP {
				continue
			}
			nd := d
			nd.TP = tp
			if res := plan(nd, true); goal(res) {
				p := base
				p.TP, p.GPUs = tp, tp*resolved.PP
				add(ChangeTensorParallel, p, res)
				break
			}
		}
	}
	if c, ok := biggerGPU(r, goal, gpus, base); ok {
		out = append(out, c)
	}
	return out
}

// modelID is the id the engine would be launched with.
func modelID(m arch.Model) string {
	if m.HFID != "" {
		return m.HFID
	}
	return m.Name
}

// biggerGPU is the smallest GPU of the catalog with more memory than the
// deployment's on which the same settings reach goal.
func biggerGPU(r Result, goal func(Result) bool, gpus []catalog.GPU, p fix.Params) (Change, bool) {
	d := r.Input
	sorted := slices.Clone(gpus)
	slices.SortStableFunc(sorted, func(a, b catalog.GPU) int { return cmp.Compare(a.UsableBytes, b.UsableBytes) })
	for _, g := range sorted {
		if g.UsableBytes <= d.GPU.UsableBytes || g.Key == d.GPU.Key || !d.Engine.Supports(g) {
			continue
		}
		nd := d
		nd.GPU = g
		res := plan(nd, true)
		if !goal(res) {
			continue
		}
		p.GPUName, p.NeedBytes = g.Name, d.GPU.UsableBytes
		f, ok := fix.Make(ChangeBiggerGPU, fix.Framework(d.Engine), p)
		if !ok {
			return Change{}, false
		}
		f.Detail = gpuCount(r.TP*r.PP, g) + ", the smallest GPU of the catalog it starts on"
		return Change{Fix: f, Result: res}, true
	}
	return Change{}, false
}

// RoundContext is the context length to propose for an engine estimate:
// the largest power of two within roundingTolerance below it, else the
// largest multiple of 1024 not above it.
func RoundContext(estimate int) int {
	p := 1
	for p*2 <= estimate {
		p *= 2
	}
	if float64(p) >= (1-roundingTolerance)*float64(estimate) {
		return p
	}
	if estimate >= 1024 {
		return estimate / 1024 * 1024
	}
	return estimate
}

// FP8Checkpoint is an FP8 (e4m3) checkpoint's storage: one byte per weight
// of the linear layers, their scales negligible (docs/architectures.md
// §14); embeddings, output head and norms stay 16-bit.
func FP8Checkpoint() *arch.Quantization {
	q := arch.NewQuantization("fp8", "fp8", arch.FP8Bytes, arch.LinearGroups)
	q.Bits, q.Source, q.Description = 8, "proposed", "FP8 (e4m3) linear-layer weights"
	return q
}

// int4GroupSize is AWQ/GPTQ's default group size.
const int4GroupSize = 128

// Int4Checkpoint is an AWQ/GPTQ 4-bit checkpoint: 4 bits per weight of the
// linear layers plus a 16-bit scale and a 4-bit zero per 128 weights.
func Int4Checkpoint() *arch.Quantization {
	q := arch.NewQuantization("int4", "awq", arch.GroupwiseIntBytes(4, int4GroupSize, true), arch.LinearGroups)
	q.Bits, q.GroupSize, q.Source, q.Description = 4, int4GroupSize, "proposed", "AWQ/GPTQ 4-bit linear-layer weights, group size 128"
	return q
}

func gpuCount(n int, g catalog.GPU) string {
	if n > 1 {
		return fmt.Sprintf("%d× %s", n, g.Name)
	}
	return g.Name
}
