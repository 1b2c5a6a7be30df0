// Package memory is the per-GPU memory estimator: a Workload in, a Breakdown
// of bytes out. Formulas and their sources: docs/memory-model.md
// and README.md ("Where the numbers come from").
package memory

import (
	"github.com/vrambot/vrambot/advisor/arch"
	"github.com/vrambot/vrambot/advisor/catalog"
)

// Method is how the model's parameters are trained (or not).
type Method string

// Methods of docs/contracts.md §2.
const (
	MethodFull      Method = "full"
	MethodLoRA      Method = "lora"
	MethodQLoRA     Method = "qlora"
	MethodFreeze    Method = "freeze"
	MethodInference Method = "inference"
	// MethodDoRA is weight-decomposed LoRA (Liu et al. 2024, arXiv:2402.09353;
	// PEFT use_dora=True): LoRA adapters plus a trained magnitude vector per
	// adapted layer.
	MethodDoRA Method = "dora"
)

// IsAdapter reports whether m trains low-rank adapters on a frozen base
// (LoRA, QLoRA, DoRA).
func (m Method) IsAdapter() bool {
	return m == MethodLoRA || m == MethodQLoRA || m == MethodDoRA
}

// Precision is the numeric regime of weights (and, for training, states).
type Precision string

// Precisions of docs/contracts.md §2. BF16/FP16 are pure 16-bit (optimizer states
// included); MixedBF16/MixedFP16 are AMP with fp32 master weights.
const (
	PrecisionFP32      Precision = "fp32"
	PrecisionFP16      Precision = "fp16"
	PrecisionBF16      Precision = "bf16"
	PrecisionMixedBF16 Precision = "mixed-bf16"
	PrecisionMixedFP16 Precision = "mixed-fp16"
	PrecisionInt8      Precision = "int8"
	PrecisionNF4       Precision = "nf4"
)

// Precisions that describe how a pre-quantised checkpoint stores its
// weights (docs/contracts.md §2): the quantised layers at the
// format's bytes (arch.Scheme), everything else and the compute in 16-bit.
// GGUF type names (q4_k_m, q8_0, ...) are accepted too.
const (
	PrecisionFP8   Precision = "fp8"
	PrecisionInt4  Precision = "int4"
	PrecisionAWQ   Precision = "awq"
	PrecisionGPTQ  Precision = "gptq"
	PrecisionMXFP4 Precision = "mxfp4"
	PrecisionNVFP4 Precision = "nvfp4"
)

// IsCheckpointPrecision reports whether p names a pre-quantised checkpoint
// format rather than a compute regime.
func IsCheckpointPrecision(p Precision) bool {
	_, ok := arch.Scheme(string(p))
	return ok
}

// Optimizer names of docs/contracts.md §2.
type Optimizer string

// Optimizers of docs/contracts.md §2.
const (
	OptimizerAdamW          Optimizer = "adamw"
	OptimizerAdamW8bit      Optimizer = "adamw-8bit"
	OptimizerPagedAdamW8bit Optimizer = "paged-adamw-8bit"
	// OptimizerAdamW4bit is torchao's AdamW4bit (TrainingArguments
	// adamw_torch_4bit): both states in 4 bits with a float32 scale per
	// 128 values (torchao/optim/README.md).
	OptimizerAdamW4bit Optimizer = "adamw-4bit"
	// OptimizerAdamWFP8 is torchao's AdamWFp8: both states in float8
	// e4m3 with a float32 scale per 256 values.
	OptimizerAdamWFP8  Optimizer = "adamw-fp8"
	OptimizerAdafactor Optimizer = "adafactor"
	OptimizerSGD       Optimizer = "sgd"
	OptimizerNone      Optimizer = "none"
)

// Offload is ZeRO offload to CPU (DeepSpeed offload_optimizer/offload_param;
// under FSDP, CPUOffload, which moves parameters, gradients and the
// optimizer step together).
type Offload string

// Offload targets.
const (
	OffloadNone      Offload = "none"
	OffloadOptimizer Offload = "optimizer"
	OffloadParam     Offload = "param" // parameters and optimizer states
)

// Switch is a setting that is on, off or not given (""), when the tools'
// default depends on the rest of the workload.
type Switch string

// Switch values.
const (
	SwitchOn  Switch = "on"
	SwitchOff Switch = "off"
)

// On reports whether the switch is on.
func (s Switch) On() bool { return s == SwitchOn }

// Attention is the attention kernel: flash/SDPA (no s² scores) or eager.
type Attention string

// Attention kernels.
const (
	AttentionFlash Attention = "flash"
	AttentionEager Attention = "eager"
)

// Workload is everything the estimator needs. JSON names are the contract of
// docs/contracts.md §3 ("workload"); fields after Assumptions are extra detail.
type Workload struct {
	Model             catalog.Model `json:"-"`
	ModelName         string        `json:"model"`
	Params            int64         `json:"params"`
	TrainableParams   int64         `json:"trainable_params"`
	Method            Method        `json:"method"`
	Precision         Precision     `json:"precision"`
	Optimizer         Optimizer     `json:"optimizer"`
	Batch             int           `json:"batch"`
	SeqLen            int           `json:"seq_len"`
	GradCheckpointing bool          `json:"grad_checkpointing"`
	ZeroStage         int           `json:"zero_stage"`
	GPUs              int           `json:"gpus"`
	Assumptions       []string      `json:"assumptions"`

	Offload      Offload   `json:"offload"`
	TP           int       `json:"tp"`
	PP           int       `json:"pp"`
	LoRARank     int       `json:"lora_rank,omitempty"`
	LoRATargets  string    `json:"lora_targets,omitempty"` // qv, attn, all
	Attention    Attention `json:"attention"`
	KVCacheDtype string    `json:"kv_cache_dtype,omitempty"` // fp16, fp8, int8
	Engine       string    `json:"engine,omitempty"`         // hf, vllm, sglang, tgi, llama.cpp, ollama
	// Serving-engine settings (advisor/serving): vLLM's
	// gpu_memory_utilization (SGLang mem_fraction_static), max_num_seqs
	// and max_num_batched_tokens; 0 means the engine's default. Users is
	// the concurrent sequences to serve (users=).
	GPUMemoryUtilization float64 `json:"gpu_memory_utilization,omitempty"`
	MaxNumSeqs           int     `json:"max_num_seqs,omitempty"`
	MaxNumBatchedTokens  int     `json:"max_num_batched_tokens,omitempty"`
	Users                int     `json:"users,omitempty"`
	// EngineVersion is the engine release asked for ("0.6.4", "v0"), for
	// the defaults that changed between releases; "" means a current one.
	EngineVersion string `json:"engine_version,omitempty"`
	Tokens        int64  `json:"tokens,omitempty"` // job size for cost to finish
	// ChunkedLoss: the loss is computed in chunks (Liger, chunked CE), so
	// full logits are never materialised. Resolve derives it from Loss.
	ChunkedLoss bool `json:"chunked_loss,omitempty"`

	// The training techniques of docs/memory-model.md §6. An empty value is
	// "not given": Resolve fills the default the tools have (Framework's,
	// else the method's) and states it as an assumption.

	// Checkpointing is the activation checkpointing mode; Resolve sets
	// GradCheckpointing from it (any mode but off). A workload that only
	// sets GradCheckpointing means full checkpointing.
	Checkpointing Checkpointing `json:"checkpointing,omitempty"`
	// Sharding is how data-parallel GPUs share the model states: plain
	// data parallel, DeepSpeed ZeRO (ZeroStage) or FSDP (ZeroStage 3 =
	// FULL_SHARD, 2 = SHARD_GRAD_OP).
	Sharding Sharding `json:"sharding,omitempty"`
	// Loss is the cross-entropy implementation: standard or chunked.
	Loss Loss `json:"loss,omitempty"`
	// OptimizerInBackward fuses the optimizer step into backward
	// (torchtune optimizer_in_bwd): each gradient is freed right after
	// its parameter is updated.
	OptimizerInBackward bool `json:"optimizer_in_backward,omitempty"`
	// ActivationOffload moves the activations saved for backward to CPU
	// RAM (torchtune enable_activation_offloading, TRL activation_offloading).
	ActivationOffload bool `json:"activation_offload,omitempty"`
	// Framework is the training stack whose defaults fill what the query
	// does not say (unsloth, axolotl, torchtune, trl, llama-factory).
	Framework Framework `json:"framework,omitempty"`
	// GradAccumSteps is how many micro-batches of Batch make one optimizer
	// step (0: one). Memory does not depend on it; the optimizer step
	// fused into backward needs it to be one.
	GradAccumSteps int `json:"grad_accum_steps,omitempty"`
	// SyncEachBatch: under FSDP the gradients are reduce-scattered on
	// every micro-batch, so they stay sharded between optimizer steps
	// (accelerate's GradientAccumulationPlugin sync_each_batch; FSDP2
	// under accelerate before 1.11, which had no no_sync for it). Empty:
	// the framework's default (docs/memory-model.md §6.2).
	SyncEachBatch Switch `json:"sync_each_batch,omitempty"`

	// GPULayers is llama.cpp's -ngl (Ollama's num_gpu): the layers put on
	// the GPU, the rest left in CPU RAM; 0 means every layer that fits.
	GPULayers int `json:"gpu_layers,omitempty"`

	// GPUMemoryBytes is the memory of the GPU the workload runs on, as
	// CUDA reports it, for the tools that size their buffers by what is
	// free (Unsloth's fused loss, docs/memory-model.md §6.3); 0 is a card
	// with room to spare.
	GPUMemoryBytes int64 `json:"gpu_memory_bytes,omitempty"`

	// Mixtures of experts (docs/memory-model.md §6.9); Resolve fills the
	// framework's default and leaves both empty for a dense model.

	// LoRAExperts: adapters on the routed experts' fused 3-D weights too
	// (PEFT target_parameters, axolotl lora_target_parameters, Unsloth's
	// MoE LoRA). targets= names the attention and dense layers only.
	LoRAExperts Switch `json:"lora_experts,omitempty"`
	// QuantizeExperts: over a bitsandbytes 4- or 8-bit base, the routed
	// experts are quantised too (axolotl quantize_moe_experts, Unsloth's
	// 4-bit MoE experts, transformers 4's per-expert Linear layers). Off,
	// transformers 5 keeps its fused 3-D experts in 16-bit, which
	// bitsandbytes does not convert (bitsandbytes#1849).
	QuantizeExperts Switch `json:"quantize_experts,omitempty"`
}

// Breakdown is the per-GPU estimate, in bytes (docs/contracts.md §3 "estimate").
// PeakAllocated is what torch.cuda.max_memory_allocated() would report,
// Reserved what torch.cuda.max_memory_reserved() would; Total is what
// nvidia-smi would show (reserved + CUDA context + NCCL), and
// RuntimeOverhead = Total - PeakAllocated. With a serving engine
// (vLLM, SGLang, TGI, llama.cpp, Ollama) the figures are the engine's own
// (advisor/serving): Weights as it logs them, Activations its profiled
// peak, KVCache the cache of the requested batch (or users) × seq_len, and
// Total the smallest GPU (memory as CUDA reports it) on which the engine
// starts and holds that load; on any card it starts on, vLLM reserves
// gpu_memory_utilization × the card, which is what nvidia-smi shows there.
type Breakdown struct {
	WeightsBytes         int64 `json:"weights_bytes"`
	GradientsBytes       int64 `json:"gradients_bytes"`
	OptimizerBytes       int64 `json:"optimizer_bytes"`
	ActivationsBytes     int64 `json:"activations_bytes"`
	LogitsBytes          int64 `json:"logits_bytes"`
	KVCacheBytes         int64 `json:"kv_cache_bytes"`
	PeakAllocatedBytes   int64 `json:"peak_allocated_bytes"`
	RuntimeOverheadBytes int64 `json:"runtime_overhead_bytes"`
	TotalBytes           int64 `json:"total_bytes"`
	// ReservedBytes is what torch.cuda.max_memory_reserved() would report:
	// the caching allocator's peak segments (peak allocated, its slack,
	// and the loader's staging it keeps cached), without the CUDA context
	// and NCCL's buffers that nvidia-smi adds (docs/memory-model.md §6.10).
	// Serving engines' breakdowns leave it 0.
	ReservedBytes int64 `json:"reserved_bytes,omitempty"`
}

// Fit is the band of docs/contracts.md §7: never false precision.
type Fit string

// Fit bands.
const (
	FitFits       Fit = "fits"
	FitTight      Fit = "tight"
	FitDoesNotFit Fit = "does not fit"
)
