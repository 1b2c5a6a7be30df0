package serving

import (
	"math"

	"github.com/vrambot/vrambot/advisor/arch"
	"github.com/vrambot/vrambot/advisor/catalog"
)

// Sized is a configuration that holds a load: its GPU, tensor-parallel
// degree, KV-cache dtype and weights, and what the engine does with it.
type Sized struct {
	GPU catalog.GPU `json:"-"`
	// GPUName, TP and GPUs are the layout; KVCacheDtype and Weights what
	// changed from the deployment asked ("as given", "fp8", "int4").
	GPUName      string `json:"gpu"`
	GPUKey       string `json:"gpu_key,omitempty"`
	TP           int    `json:"tp"`
	GPUs         int    `json:"gpus"`
	KVCacheDtype string `json:"kv_cache_dtype"`
	Weights      string `json:"weights"`
	// Concurrency is the sequences of max_model_len it holds at once.
	Concurrency float64 `json:"max_concurrency"`
	Result      Result  `json:"-"`
}

// Weight variants of a sizing, least change first.
const (
	WeightsAsGiven = "as given"
	WeightsFP8     = "fp8"
	WeightsInt4    = "int4"
)

// HoldsLoad is the goal of a users= question: the engine starts and keeps
// users sequences of its max_model_len in the cache at once (llama.cpp
// and Ollama: with every layer on the GPU).
func HoldsLoad(users int) func(Result) bool {
	return func(r Result) bool {
		return r.Holds(users) && (r.Layers == 0 || r.GPULayers == r.Layers)
	}
}

// Size finds the smallest configuration of d's GPU that holds users
// sequences of d.MaxModelLen: the fewest GPUs first (tensor-parallel
// degrees the model splits evenly, up to MaxChangeTP), then the least
// change — the KV cache in fp8, then an FP8 checkpoint, then a 4-bit one
// (fp8 only on GPUs with fp8). False when none within MaxChangeTP does.
func Size(d Deployment, users int) (Sized, bool) {
	goal := HoldsLoad(users)
	degrees := []int{1}
	if d.Engine.TensorParallel() {
		degrees = ValidTPDegrees(d.Model, MaxChangeTP)
	} else if d.Engine == EngineLlamaCpp || d.Engine == EngineOllama {
		degrees = []int{1, 2, 4, 8} // layers split over GPUs
	}
	for _, tp := range degrees {
		if tp < max(1, d.TP) {
			continue
		}
		vs := variants(d)
		if len(vs) > 1 && !goal(sizedPlan(d, tp, vs[len(vs)-1], users)) {
			continue // not even the most saving change holds it on tp GPUs
		}
		for _, v := range vs {
			nd := d
			nd.TP = tp
			nd.KVCacheDtype = v.kv
			if v.weights != WeightsAsGiven {
				nd.Model.Quant = v.quant
			}
			nd.Users = users
			r := plan(nd, true)
			if goal(r) {
				return Sized{GPU: d.GPU, GPUName: d.GPU.Name, GPUKey: d.GPU.Key, TP: r.TP, GPUs: r.TP * r.PP, KVCacheDtype: kvName(r.Deployment.KVCacheDtype),
					Weights: v.weights, Concurrency: r.MaxConcurrency, Result: r}, true
			}
		}
	}
	return Sized{}, false
}

// sizedPlan plans d on tp GPUs with variant v.
func sizedPlan(d Deployment, tp int, v variant, users int) Result {
	d.TP, d.KVCacheDtype, d.Users = tp, v.kv, users
	if v.weights != WeightsAsGiven {
		d.Model.Quant = v.quant
	}
	return plan(d, true)
}

type variant struct {
	kv      string
	weights string
	quant   *arch.Quantization
}

// variants are the KV and weight changes tried on one layout, least
// change first.
func variants(d Deployment) []variant {
	kv := []string{d.KVCacheDtype}
	if d.KVCacheDtype == KVAuto || d.KVCacheDtype == KVFP16 {
		switch {
		case d.Engine == EngineLlamaCpp || d.Engine == EngineOllama:
			kv = append(kv, KVQ8)
		case d.GPU.FP8:
			kv = append(kv, KVFP8)
		}
	}
	out := []variant{}
	for _, k := range kv {
		out = append(out, variant{kv: k, weights: WeightsAsGiven})
	}
	if d.Model.Quant != nil || d.Engine == EngineLlamaCpp || d.Engine == EngineOllama {
		return out
	}
	if d.GPU.FP8 {
		for _, k := range kv {
			out = append(out, variant{kv: k, weights: WeightsFP8, quant: FP8Checkpoint()})
		}
	}
	for _, k := range kv {
		out = append(out, variant{kv: k, weights: WeightsInt4, quant: Int4Checkpoint()})
	}
	return out
}

// SizeAll runs Size on every GPU of gpus and returns those that hold the
// load, in the order given.
func SizeAll(d Deployment, users int, gpus []catalog.GPU) []Sized {
	var out []Sized
	for _, g := range gpus {
		if !d.Engine.Supports(g) {
			continue
		}
		nd := d
		nd.GPU = g
		if s, ok := Size(nd, users); ok {
			out = append(out, s)
		}
	}
	return out
}

// Requirement is the smallest GPU memory (as CUDA reports it) on which the
// deployment d — d.GPU's features, any memory — starts and holds users
// sequences of its max_model_len, with the result there; false when even
// maxRequirement does not. vLLM's scheduler defaults change at 70 GiB
// (more sequences, a bigger sampler peak), so the two sides are searched
// apart, each with its own defaults, which keeps the answer monotonic in
// the load.
func Requirement(d Deployment, users int) (int64, Result, bool) {
	goal := HoldsLoad(users)
	at := func(nd Deployment, bytes int64) Result {
		nd.GPU.UsableBytes, nd.GPU.MemoryBytes = bytes, bytes
		nd.GPU.Key = "" // a GPU of this size, not the catalog one
		return plan(nd, true)
	}
	search := func(nd Deployment, lo, hi int64) (int64, bool) {
		if !goal(at(nd, hi)) {
			return 0, false
		}
		for hi-lo > 64<<20 {
			mid := lo + (hi-lo)/2
			if goal(at(nd, mid)) {
				hi = mid
			} else {
				lo = mid
			}
		}
		return hi, true
	}
	if d.Engine == EngineVLLM && d.Generation != GenerationV0 {
		small := d
		if small.MaxNumSeqs <= 0 {
			small.MaxNumSeqs = smallNumSeqs
		}
		if small.MaxNumBatchedTokens <= 0 {
			small.MaxNumBatchedTokens = smallBatchedTokens
		}
		if n, ok := search(small, 0, largeGPUBytes-1); ok {
			return n, at(d, n), true
		}
		if n, ok := search(d, largeGPUBytes-1, maxRequirement); ok {
			return n, at(d, n), true
		}
		return 0, Result{}, false
	}
	if n, ok := search(d, 0, maxRequirement); ok {
		return n, at(d, n), true
	}
	return 0, Result{}, false
}

// maxRequirement bounds Requirement's search: 16 TiB per GPU.
const maxRequirement = int64(16) << 40

// LoadKVBytes is the KV cache a load of users sequences of the deployment's
// max_model_len fills on one GPU (windows capped, states included): the
// memory of the load, not the engine's whole pool.
func LoadKVBytes(r Result, users int) float64 {
	d := r.Deployment
	specs := kvSpecs(d.Model, max(1, d.TP), stages(d.Model, max(1, d.PP))[0].layers, kvElemBytes(d.KVCacheDtype, d.DenseBytes))
	return math.Ceil(cacheBytes(specs, r.MaxModelLen, max(1, users)))
}
