// Package serving is the inference engines' own memory arithmetic: how vLLM,
// SGLang, TGI and llama.cpp/ollama size their weights, activations and KV
// cache on a GPU, the start-up lines they will log, whether they start at
// all (in their own words when they do not), how many concurrent sequences
// they hold, the configuration that holds a target load, and the decode
// throughput and price per million tokens that follow. It is pure: a
// Deployment in, a Result out. Sources: docs/vllm-kv.md (vLLM's V1 worker
// and KV-cache manager), docs/memory-model.md §1.8.
package serving

import (
	"github.com/vrambot/vrambot/advisor/arch"
	"github.com/vrambot/vrambot/advisor/catalog"
)

// Engine is an inference stack.
type Engine string

// Engines of the /vram grammar (docs/contracts.md §2, "engine=").
const (
	EngineHF       Engine = "hf" // Hugging Face transformers (generate)
	EngineVLLM     Engine = "vllm"
	EngineSGLang   Engine = "sglang"
	EngineTGI      Engine = "tgi"
	EngineLlamaCpp Engine = "llama.cpp"
	EngineOllama   Engine = "ollama"
)

// Engines lists the engines in grammar order.
var Engines = []Engine{EngineHF, EngineVLLM, EngineSGLang, EngineTGI, EngineLlamaCpp, EngineOllama}

// Label is the engine's display name.
func (e Engine) Label() string {
	switch e {
	case EngineVLLM:
		return "vLLM"
	case EngineSGLang:
		return "SGLang"
	case EngineTGI:
		return "TGI"
	case EngineLlamaCpp:
		return "llama.cpp"
	case EngineOllama:
		return "Ollama"
	}
	return "transformers"
}

// Serving reports whether the engine is a serving engine with its own
// memory planner (everything but plain transformers).
func (e Engine) Serving() bool {
	switch e {
	case EngineVLLM, EngineSGLang, EngineTGI, EngineLlamaCpp, EngineOllama:
		return true
	}
	return false
}

// TensorParallel reports whether the engine splits a model over several
// GPUs by tensor parallelism (the others split by layers).
func (e Engine) TensorParallel() bool {
	return e == EngineVLLM || e == EngineSGLang || e == EngineTGI
}

// minComputeCapability is the oldest NVIDIA architecture vLLM, SGLang and
// TGI support (Volta, 7.0; docs/gpu-specs.md): Pascal cards load and
// profile on old releases, but kernels fail on the first request.
const minComputeCapability = 7.0

// Supports reports whether the engine runs on g: vLLM, SGLang and TGI
// need compute capability 7.0 or newer on NVIDIA; llama.cpp, Ollama and
// transformers run on older cards too.
func (e Engine) Supports(g catalog.GPU) bool {
	switch e {
	case EngineVLLM, EngineSGLang, EngineTGI:
		return g.ComputeCapability == 0 || g.ComputeCapability >= minComputeCapability
	}
	return true
}

// Generation is a vLLM engine generation: the V1 engine (default since
// v0.8, the only one since v0.11) or the V0 engine before it. They profile
// differently (docs/vllm-kv.md §2, §4).
type Generation string

// vLLM engine generations.
const (
	GenerationV1 Generation = "v1"
	GenerationV0 Generation = "v0"
)

// KV-cache element types by name, as the engines spell them.
const (
	KVAuto = ""     // the model's 16-bit dtype (vLLM --kv-cache-dtype auto)
	KVFP16 = "fp16" // 16-bit (fp16 or bf16)
	KVFP8  = "fp8"  // fp8 e4m3/e5m2: one byte
	KVInt8 = "int8" // 8-bit integer (llama.cpp q8_0 with its block scales)
	KVQ8   = "q8_0" // llama.cpp --cache-type-k q8_0: 34 bytes per 32 values
	KVQ4   = "q4_0" // llama.cpp q4_0: 18 bytes per 32 values
)

// Deployment is one serving configuration: a model on GPUs under an engine
// with its settings. Zero values mean the engine's default, which Plan
// fills and states as an assumption.
type Deployment struct {
	Engine Engine
	// Model is the architecture; Model.Quant is how its checkpoint stores
	// the weights (nil: DenseBytes for every weight).
	Model arch.Model
	// GPU is one GPU of the deployment; all are alike.
	GPU catalog.GPU
	// TP and PP are the tensor- and pipeline-parallel degrees (0 → 1).
	TP, PP int
	// DenseBytes is the bytes of a weight the checkpoint does not quantise:
	// 2 for bf16/fp16 (the default), 4 for fp32.
	DenseBytes float64
	// KVCacheDtype is the KV cache element type (KVAuto, KVFP8, ...).
	KVCacheDtype string
	// MemoryFraction is vLLM's gpu_memory_utilization, SGLang's
	// mem_fraction_static or TGI's cuda_memory_fraction (0 → default).
	MemoryFraction float64
	// MaxModelLen is the longest sequence (prompt + output) the engine
	// accepts: vLLM max_model_len, SGLang context_length, TGI
	// max_total_tokens, llama.cpp -c / ollama num_ctx (0 → default).
	MaxModelLen int
	// MaxNumSeqs and MaxNumBatchedTokens are vLLM's scheduler limits
	// (SGLang max_running_requests / chunked_prefill_size, TGI
	// max_batch_prefill_tokens); 0 → the engine's default for the GPU.
	MaxNumSeqs          int
	MaxNumBatchedTokens int
	// BlockSize is tokens per KV block (0 → the engine's default).
	BlockSize int
	// Generation is the vLLM engine generation ("" → V1); Version the
	// vLLM release ("0.5.3"; "" → a current one), for the few defaults
	// that changed within a generation.
	Generation Generation
	Version    string
	// GPULayers is llama.cpp's -ngl (0 → every layer that fits).
	GPULayers int
	// Users is the concurrent sequences to hold (0: no target).
	Users int
}

// Why an engine does not start (Result.Failure).
const (
	FailNoKVCache     = "no-kv-cache"    // an encoder-only model: nothing to cache
	FailStartupMemory = "startup-memory" // the budget asks for more than a GPU has free at start-up
	FailWeights       = "weights"        // the weights do not fit on the GPU
	FailKVMemory      = "kv-memory"      // nothing is left for the KV cache
	FailContext       = "context"        // one max_model_len request does not fit
	FailGPULayers     = "gpu-layers"     // llama.cpp's -ngl asks for more than fits
)

// LogLine is a start-up line the engine will print and what it means.
type LogLine struct {
	Text  string `json:"line"`
	Means string `json:"means"`
}

// Result is what the engine does with a Deployment, per GPU. Sizes are
// bytes on one GPU (the most loaded one under tensor and pipeline
// parallelism), as the engine logs them.
type Result struct {
	Engine Engine `json:"engine"`
	// Input is the deployment as asked; Deployment the same with every
	// default filled in.
	Input      Deployment `json:"-"`
	Deployment Deployment `json:"-"`
	// Settings (the defaults filled in).
	MemoryFraction      float64 `json:"gpu_memory_utilization"`
	MaxModelLen         int     `json:"max_model_len"`
	TP                  int     `json:"tp"`
	PP                  int     `json:"pp"`
	MaxNumSeqs          int     `json:"max_num_seqs,omitempty"`
	MaxNumBatchedTokens int     `json:"max_num_batched_tokens,omitempty"`
	BlockSize           int     `json:"block_size,omitempty"`
	KVCacheDtype        string  `json:"kv_cache_dtype"`
	// TotalMemoryBytes is the GPU's memory as CUDA reports it; BudgetBytes
	// the share the engine plans with (vLLM: gpu_memory_utilization × total).
	TotalMemoryBytes int64 `json:"total_gpu_memory_bytes"`
	BudgetBytes      int64 `json:"budget_bytes"`
	// WeightsBytes is "Model loading took"; ActivationBytes the profiled
	// activation peak; NonTorchBytes the non-torch memory the engine
	// subtracts; GraphBytes the CUDA-graph pool (vLLM from 0.21: inside the
	// budget, taken from the KV cache; before: outside it, in nvidia-smi).
	WeightsBytes    int64 `json:"weights_bytes"`
	ActivationBytes int64 `json:"activation_peak_bytes"`
	NonTorchBytes   int64 `json:"non_torch_bytes"`
	GraphBytes      int64 `json:"cuda_graph_bytes"`
	// KVCacheAvailableBytes is "Available KV cache memory" (negative when
	// nothing is left).
	KVCacheAvailableBytes int64 `json:"kv_cache_available_bytes"`
	// KVBytesPerToken is the cache one token adds on this GPU across its
	// layers (before windows cap it).
	KVBytesPerToken int64 `json:"kv_bytes_per_token"`
	// KVCacheTokens is "GPU KV cache size: N tokens"; MaxConcurrency is
	// "Maximum concurrency for MaxModelLen tokens per request".
	KVCacheTokens  int64   `json:"kv_cache_tokens"`
	MaxConcurrency float64 `json:"max_concurrency"`
	Blocks         int64   `json:"num_gpu_blocks,omitempty"`
	// Starts is whether the engine starts; Error is its own words when it
	// does not; MaxModelLenThatFits is its estimate of the longest
	// sequence that would fit (0 when it starts or nothing fits).
	Starts              bool   `json:"starts"`
	Failure             string `json:"failure,omitempty"`
	Error               string `json:"error,omitempty"`
	MaxModelLenThatFits int    `json:"max_model_len_that_fits,omitempty"`
	// GPULayers and Layers are llama.cpp's offload: layers on the GPU of
	// all of them (0 for the other engines).
	GPULayers int `json:"gpu_layers,omitempty"`
	Layers    int `json:"layers,omitempty"`
	// NvidiaSMIBytes is what nvidia-smi shows per GPU once it is up.
	NvidiaSMIBytes int64 `json:"nvidia_smi_bytes"`
	// Log is the start-up lines to expect, in order.
	Log []LogLine `json:"log_lines"`
	// Assumptions are the defaults filled in and the figures estimated.
	Assumptions []string `json:"assumptions"`
	// quiet skips the log lines and assumptions (the searches of Size,
	// Requirement and Changes plan many deployments and show none).
	quiet bool
}

// Holds reports whether the running engine keeps n sequences of its
// max_model_len in its KV cache at once.
func (r Result) Holds(n int) bool {
	return r.Starts && r.MaxConcurrency >= float64(max(1, n))
}
