package serving

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/vrambot/vrambot/advisor/arch"
	"github.com/vrambot/vrambot/advisor/catalog"
)

// Change ids: the fix catalogue's canonical ids where it has one
// (advisor/fix), so the OOM diagnosis and the planner name changes alike.
const (
	ChangeMaxModelLen    = "max-model-len"
	ChangeFP8KVCache     = "fp8-kv-cache"
	ChangeGPUUtilization = "gpu-memory-utilization"
	ChangeTensorParallel = "tensor-parallel"
	ChangeInt8Weights    = "int8-weights" // an 8-bit (FP8) checkpoint
	ChangeNF4Weights     = "nf4-weights"  // a 4-bit (AWQ/GPTQ) checkpoint
	ChangeBiggerGPU      = "bigger-gpu"
	ChangeGPULayers      = "gpu-layers" // llama.cpp -ngl
)

// Change is one change to a deployment and what the engine does with it.
type Change struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Cost  string `json:"cost"`
	// Flags are the engine's own flags for it ("--max-model-len 32768").
	Flags  string `json:"flags"`
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
// KV cache, a higher memory fraction, more tensor parallelism on the same
// GPU, a quantised checkpoint, then a bigger GPU from gpus — the GPU the
// user named stays first. Each change is planned, so each one listed works.
func Changes(r Result, goal func(Result) bool, allowShorter bool, gpus []catalog.GPU) []Change {
	d := r.Input
	resolved := r.Deployment
	var out []Change
	try := func(c Change, nd Deployment) {
		c.Result = plan(nd, true)
		if goal(c.Result) {
			out = append(out, c)
		}
	}
	e := d.Engine
	if allowShorter && r.MaxModelLenThatFits >= minUsefulContext {
		n := RoundContext(r.MaxModelLenThatFits)
		nd := d
		nd.MaxModelLen = n
		try(Change{ID: ChangeMaxModelLen, Title: fmt.Sprintf("Cap the context at %d tokens (%s estimates %d fit; was %d)", n, e.Label(), r.MaxModelLenThatFits, resolved.MaxModelLen),
			Cost: fmt.Sprintf("requests longer than %d tokens (prompt + output) are refused", n), Flags: flag(e, ChangeMaxModelLen, n)}, nd)
	}
	if d.GPU.FP8 && (d.KVCacheDtype == KVAuto || d.KVCacheDtype == KVFP16) && e != EngineLlamaCpp && e != EngineOllama {
		nd := d
		nd.KVCacheDtype = KVFP8
		try(Change{ID: ChangeFP8KVCache, Title: fmt.Sprintf("fp8 KV cache (%s supports fp8)", d.GPU.Name),
			Cost: "halves the KV cache per token; a small accuracy risk on long contexts", Flags: flag(e, ChangeFP8KVCache, 0)}, nd)
	}
	if (e == EngineLlamaCpp || e == EngineOllama) && (d.KVCacheDtype == KVAuto || d.KVCacheDtype == KVFP16) {
		nd := d
		nd.KVCacheDtype = KVQ8
		try(Change{ID: ChangeFP8KVCache, Title: "q8_0 KV cache", Cost: "halves the KV cache; needs flash attention for the V cache", Flags: flag(e, ChangeFP8KVCache, 0)}, nd)
	}
	if (e == EngineVLLM || e == EngineSGLang) && resolved.MemoryFraction < maxUtilization {
		for u := resolved.MemoryFraction + 0.01; u <= maxUtilization+1e-9; u += 0.01 {
			nd := d
			nd.MemoryFraction = float64(int(u*100+0.5)) / 100
			if res := plan(nd, true); goal(res) {
				out = append(out, Change{ID: ChangeGPUUtilization, Title: fmt.Sprintf("Raise the memory fraction to %.2f (was %.2f)", nd.MemoryFraction, resolved.MemoryFraction),
					Cost: "less room outside the budget for the CUDA context, graphs and other processes", Flags: flag(e, ChangeGPUUtilization, int(nd.MemoryFraction*100)), Result: res})
				break
			}
		}
	}
	if e.TensorParallel() {
		for _, tp := range ValidTPDegrees(d.Model, MaxChangeTP) {
			if tp <= resolved.TP {
				continue
			}
			nd := d
			nd.TP = tp
			if res := plan(nd, true); goal(res) {
				out = append(out, Change{ID: ChangeTensorParallel, Title: fmt.Sprintf("Tensor parallel across %d× %s (was %d)", tp*resolved.PP, d.GPU.Name, resolved.TP*resolved.PP),
					Cost: fmt.Sprintf("%d GPUs in one node (NVLink preferred); each holds 1/%d of the weights and KV heads", tp*resolved.PP, tp), Flags: flag(e, ChangeTensorParallel, tp), Result: res})
				break
			}
		}
	}
	if d.Model.Quant == nil && e != EngineLlamaCpp && e != EngineOllama {
		if d.GPU.FP8 {
			nd := d
			nd.Model.Quant = FP8Checkpoint()
			try(Change{ID: ChangeInt8Weights, Title: "An FP8 checkpoint (8-bit weights)", Cost: "about half the weight memory; accuracy within a point on most benchmarks; fp8 tensor cores keep it fast",
				Flags: flag(e, ChangeInt8Weights, 0)}, nd)
		}
		nd := d
		nd.Model.Quant = Int4Checkpoint()
		try(Change{ID: ChangeNF4Weights, Title: "A 4-bit AWQ/GPTQ checkpoint", Cost: "about a quarter of the weight memory; a noticeable accuracy risk on reasoning and code",
			Flags: flag(e, ChangeNF4Weights, 0)}, nd)
	}
	if bigger := biggerGPU(r, goal, gpus); bigger != nil {
		out = append(out, *bigger)
	}
	return out
}

// biggerGPU is the smallest GPU of the catalog with more memory than the
// deployment's on which the same settings reach goal.
func biggerGPU(r Result, goal func(Result) bool, gpus []catalog.GPU) *Change {
	d := r.Input
	sorted := slices.Clone(gpus)
	slices.SortStableFunc(sorted, func(a, b catalog.GPU) int { return cmp.Compare(a.UsableBytes, b.UsableBytes) })
	for _, g := range sorted {
		if g.UsableBytes <= d.GPU.UsableBytes || g.Key == d.GPU.Key {
			continue
		}
		nd := r.Input
		nd.GPU = g
		res := plan(nd, true)
		if goal(res) {
			n := r.TP * r.PP
			return &Change{ID: ChangeBiggerGPU, Title: fmt.Sprintf("A bigger GPU: %s", gpuCount(n, g)),
				Cost: "a dearer GPU; see the offers below", Flags: "", Result: res}
		}
	}
	return nil
}

func gpuCount(n int, g catalog.GPU) string {
	if n > 1 {
		return fmt.Sprintf("%d× %s", n, g.Name)
	}
	return g.Name
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

// flag is the engine's own spelling of a change.
func flag(e Engine, id string, v int) string {
	switch e {
	case EngineSGLang:
		switch id {
		case ChangeMaxModelLen:
			return fmt.Sprintf("--context-length %d", v)
		case ChangeFP8KVCache:
			return "--kv-cache-dtype fp8_e5m2"
		case ChangeGPUUtilization:
			return fmt.Sprintf("--mem-fraction-static %.2f", float64(v)/100)
		case ChangeTensorParallel:
			return fmt.Sprintf("--tp %d", v)
		case ChangeInt8Weights:
			return "--quantization fp8"
		case ChangeNF4Weights:
			return "an AWQ/GPTQ checkpoint (--quantization awq_marlin)"
		}
	case EngineTGI:
		switch id {
		case ChangeMaxModelLen:
			return fmt.Sprintf("--max-total-tokens %d", v)
		case ChangeFP8KVCache:
			return "--kv-cache-dtype fp8_e5m2"
		case ChangeTensorParallel:
			return fmt.Sprintf("--num-shard %d", v)
		case ChangeInt8Weights:
			return "--quantize fp8"
		case ChangeNF4Weights:
			return "--quantize awq (an AWQ checkpoint)"
		}
	case EngineLlamaCpp:
		switch id {
		case ChangeMaxModelLen:
			return fmt.Sprintf("-c %d", v)
		case ChangeFP8KVCache:
			return "-fa --cache-type-k q8_0 --cache-type-v q8_0"
		case ChangeGPULayers:
			return fmt.Sprintf("-ngl %d", v)
		}
	case EngineOllama:
		switch id {
		case ChangeMaxModelLen:
			return fmt.Sprintf("PARAMETER num_ctx %d (or OLLAMA_CONTEXT_LENGTH=%d)", v, v)
		case ChangeFP8KVCache:
			return "OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE=q8_0"
		}
	default:
		switch id {
		case ChangeMaxModelLen:
			return fmt.Sprintf("--max-model-len %d", v)
		case ChangeFP8KVCache:
			return "--kv-cache-dtype fp8"
		case ChangeGPUUtilization:
			return fmt.Sprintf("--gpu-memory-utilization %.2f", float64(v)/100)
		case ChangeTensorParallel:
			return fmt.Sprintf("--tensor-parallel-size %d", v)
		case ChangeInt8Weights:
			return "--quantization fp8 (or an FP8 checkpoint)"
		case ChangeNF4Weights:
			return "an AWQ/GPTQ checkpoint (vLLM picks its Marlin kernels)"
		}
	}
	return ""
}
