package oom

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/fix"
)

// The fix that goes first is the one that addresses where the job failed
// (docs/oom-diagnosis.md §5): the optimizer's partitions want sharding or
// offload, a KV cache at start-up a shorter context, llama.cpp fewer
// layers on the GPU, the logits a chunked loss, fragmentation expandable
// segments, memory that grows the leak fixes. A fix known to fall short
// of the memory missing is never first, and says so.

// Cause IDs of the readings of where it failed.
const (
	CauseOptimizerInit  = "optimizer-init"
	CauseLogits         = "logits-over-vocabulary"
	CauseShardingGather = "sharded-states-do-not-fit"
	CauseNonTorchMemory = "non-pytorch-memory"
	CauseCUDADriver     = "cuda-driver-out-of-memory"
	CauseCuPyPool       = "cupy-pool"
	CauseTensorRT       = "tensorrt-out-of-memory"
	CauseVLLMSleep      = "vllm-sleep-mode"
	CauseSleepSaver     = "memory-saver-could-not-map"
	CauseRMMPool        = "rmm-pool-larger-than-free"
	CauseInferenceFull  = "inference-weights-fill-gpu"
)

// setLead makes ids, in order, the fixes for where it failed, why the
// words of the lead stage's title; the first reading to set it wins.
func (b *builder) setLead(why string, ids ...string) {
	if len(b.lead) > 0 {
		return
	}
	b.lead, b.leadWhy = ids, why
	for _, id := range ids {
		if !slices.Contains(b.fixes, id) {
			b.fixes = append(b.fixes, id)
		}
	}
}

// byWhere adds the reading of where in the job it failed and its lead.
func (b *builder) byWhere() {
	r := b.r
	j := r.Job
	if j == nil {
		return
	}
	switch r.Extra["kind"] {
	case KindCUDADriver, KindCuPy, KindTensorRT, KindVLLMCumem, KindRMM:
		b.byLibrary()
		return
	case KindNCCL:
		return // NCCL's own buffers are the reading (nccl)
	}
	if onHost(r) {
		return
	}
	switch j.Where {
	case WhereOptimizerInit:
		steps := b.nextSteps([]string{fix.Zero2})
		b.cause(CauseOptimizerInit, "The optimizer's fp32 partitions and states do not fit while they are built",
			"the OOM came while "+orWord(j.WhereEvidence, "the optimizer was built")+", before the first step: the fp32 master weights and Adam's two states (12 bytes a parameter) are allocated there, so a smaller batch or checkpointing cannot help",
			append(steps, fix.Optim8bit, fix.BiggerGPU)...)
		b.setLead("the optimizer's states, built before the first step", append(steps, fix.Optim8bit)...)
	case WhereLogits:
		b.cause(CauseLogits, "The logits over the whole vocabulary (and their fp32 copy for the loss) do not fit",
			"the stack shows "+j.WhereEvidence+": batch × sequence × vocabulary logits, upcast to fp32 for the loss, are the largest tensor of a language model's step",
			fix.ChunkedLoss, fix.GradAccum)
		b.setLead("the logits", fix.ChunkedLoss)
	case WhereFragmentation:
		// Only where fragmentation is the reading, not beside a GPU that is
		// over-full for another reason.
		if len(b.causes) > 0 && b.causes[0].ID == CauseFragmentation {
			b.setLead("fragmentation", fix.ExpandableSegments)
		}
	case WhereLeak:
		b.setLead("memory that grows step after step", fix.ItemForLoggedLosses, fix.FreeReferences, fix.MemorySnapshot)
	case WhereWeightsLoad:
		if r.Extra["stack"] == nil && (j.Engine == nil || *j.Engine == EngineVLLM || *j.Engine == EngineHF) {
			b.loadLead()
		}
	}
	if j.Where == WhereForward || j.Where == WhereBackward {
		b.attentionLead()
	}
	b.byShape()
}

// reEagerAttention is attention computed as a whole score matrix: q·kᵀ
// by matmul, its softmax.
var reEagerAttention = regexp.MustCompile(`attn_weights\s*=\s*torch\.matmul\(|torch\.matmul\(\s*q(?:uery)?(?:_states)?\s*,\s*k(?:ey)?(?:_states)?\.transpose|\bq\s*@\s*k\.transpose|softmax\(\s*attn_weights|scores\s*=\s*torch\.matmul\(|attention_scores\s*=\s*torch\.matmul\(`)

// attentionLead leads with fused attention where the innermost frames
// build eager attention's batch × heads × seq² score matrix.
func (b *builder) attentionLead() {
	for i, fr := range stackFrames(b.r) {
		if i == logitsReach {
			return
		}
		if reEagerAttention.MatchString(fr.src) {
			b.cause(CauseForward, "Eager attention's score matrix does not fit",
				"the stack shows `"+trimTo(fr.src, 80)+"`: eager attention materialises batch × heads × seq² scores, which fused attention (SDPA, FlashAttention) never does",
				fix.FlashAttention, fix.GradAccum, fix.GradCheckpointing)
			b.setLead("eager attention's score matrix", fix.FlashAttention)
			return
		}
	}
}

// loadLead leads a load OOM with smaller weights, or a split across GPUs
// for a serving engine.
func (b *builder) loadLead() {
	if j := b.r.Job; j.Engine != nil && *j.Engine == EngineVLLM {
		b.cause(CauseLoad, "The model's weights do not fit one GPU while vLLM loads them",
			"the OOM came while the model's layers were built on the GPU ("+orWord(b.r.PhaseEvidence, "at load")+")", fix.TensorParallel, fix.NF4Weights, fix.BiggerGPU)
		b.setLead("the weights, while loading", fix.TensorParallel, fix.NF4Weights)
		return
	}
	b.setLead("the weights, while loading", fix.NF4Weights, fix.LayerOffload)
}

// byShape reads what the numbers and the job say when the stack does not:
// sharded states that do not fit, memory this process holds outside
// PyTorch, an inference job whose weights fill the GPU, a training job
// with a raw CUDA error.
func (b *builder) byShape() {
	r, j := b.r, b.r.Job
	switch {
	case b.replicated():
	case shardingInternals(r):
		steps := b.nextSteps([]string{fix.Zero2})
		b.cause(CauseShardingGather, "The sharded model states still do not fit this GPU",
			"the OOM came inside the sharding code itself (gathering or partitioning parameters): the states per GPU, not the activations, are what is too big", append(steps, fix.BiggerGPU)...)
		b.setLead("the sharded model states", steps...)
	case nonTorchHeld(r) > gib:
		n := nonTorchHeld(r)
		b.cause(CauseNonTorchMemory, "This process holds GPU memory outside PyTorch",
			fmt.Sprintf("the process has %s in use but PyTorch accounts for %s: %s is held by something else in the process (another library's allocations: a llama.cpp or TensorRT engine, CUDA graphs, NCCL) or by the driver", GiB(val(r.ProcessInUseBytes)), GiB(val(r.AllocatedByFrameworkBytes)+val(r.ReservedUnallocatedBytes)), GiB(n)),
			fix.KillOtherProcess, fix.OneProcessPerGPU)
		b.setLead("memory held outside PyTorch", fix.KillOtherProcess, fix.OneProcessPerGPU)
	case r.Format == FormatMPS:
		b.setLead("the batch on a Mac (raising the watermark makes macOS swap)", fix.GradAccum, fix.GradCheckpointing, fix.MPSEmptyCache)
	case (r.Extra["kind"] == KindCUDAError || r.Extra["kind"] == "thc-cuda-runtime-error-2") && r.Facts.Workload.Training && r.Extra["stack"] == nil:
		b.setLead("a training step's batch", fix.GradAccum, fix.GradCheckpointing)
	case localInference(j) && (r.Phase == PhaseUnknown || r.Phase == PhaseLoad) && r.TotalCapacityBytes != nil:
		b.cause(CauseInferenceFull, "An inference job: its weights fill the GPU", "nothing in the paste trains, and at inference the weights are most of what a GPU holds",
			fix.NF4Weights, fix.LayerOffload, fix.TensorParallel, fix.BiggerGPU)
		b.setLead("the weights of an inference job", fix.NF4Weights, fix.LayerOffload)
	}
}

// localInference reports an inference job run by the user's own code (no
// serving engine, whose readings are their own).
func localInference(j *Job) bool {
	return j.Method != nil && *j.Method == "inference" && (j.Engine == nil || !servingEngines[*j.Engine])
}

// shardingInternals reports an OOM raised inside ZeRO-3's or FSDP's own
// parameter gathering.
func shardingInternals(r Report) bool {
	j := r.Job
	return j != nil && (j.ZeroStage != nil && *j.ZeroStage == 3 || j.Sharding != nil) && j.Where != WhereOptimizerInit &&
		strings.Contains(r.Facts.text, "partition_parameters.py") && (r.Phase == PhaseUnknown || r.Phase == PhaseForward)
}

// nonTorchHeld is what this process holds beyond PyTorch's allocator
// (the new message form's "this process has X" against its own counts),
// less the CUDA context.
func nonTorchHeld(r Report) int64 {
	if r.ProcessInUseBytes == nil || r.AllocatedByFrameworkBytes == nil {
		return 0
	}
	return *r.ProcessInUseBytes - *r.AllocatedByFrameworkBytes - val(r.ReservedUnallocatedBytes) - contextSlack
}

// byLibrary reads the OOMs of CUDA programs that are not a framework's
// allocator (docs/oom-diagnosis.md §2).
func (b *builder) byLibrary() {
	r := b.r
	switch r.Extra["kind"] {
	case KindRMM:
		b.rmmPool()
	case KindCUDADriver:
		if b.memorySaver() {
			return
		}
		call, _ := r.Extra["cuda_call"].(string)
		if call == "cuInit" || strings.HasPrefix(call, "cuCtx") || strings.HasPrefix(call, "cuDevicePrimaryCtx") {
			b.cause(CauseCUDADriver, "The CUDA context itself could not be created",
				call+" failed with CUDA_ERROR_OUT_OF_MEMORY before anything was allocated: the GPU is already full (another process) or the driver could not map its memory (WSL, a broken driver)", fix.KillOtherProcess)
			b.setLead("the CUDA context", fix.KillOtherProcess)
			return
		}
		b.cause(CauseCUDADriver, "The CUDA driver refused an allocation outside any framework's allocator",
			orWord(call, "the driver call")+" failed with CUDA_ERROR_OUT_OF_MEMORY: what the program (or its memory pool) already holds, or another process, fills the GPU", fix.FreeReferences, fix.KillOtherProcess)
		b.setLead("what the program holds", fix.FreeReferences, fix.KillOtherProcess)
	case KindCuPy:
		ev := "CuPy's memory pool could not grow"
		if p, ok := r.Extra["cupy_pool_bytes"].(int64); ok {
			ev = fmt.Sprintf("CuPy's pool already held %s (its \"total\", not the GPU's)", GiB(p))
		}
		if r.Facts.Workload.Training {
			b.cause(CauseCuPyPool, "A training step's arrays do not fit CuPy's pool", ev+"; a smaller batch shrinks every array of the step", fix.GradAccum, fix.FreeReferences, fix.KillOtherProcess)
			b.setLead("a training step's batch", fix.GradAccum)
			return
		}
		b.cause(CauseCuPyPool, "CuPy's pool holds the GPU", ev+": free the pool's blocks (cupy.get_default_memory_pool().free_all_blocks()) and what the program keeps", fix.FreeReferences, fix.KillOtherProcess)
		b.setLead("what CuPy's pool holds", fix.FreeReferences, fix.KillOtherProcess)
	case KindTensorRT:
		b.tensorRT()
	case KindVLLMCumem:
		b.cause(CauseVLLMSleep, "vLLM could not map its memory back (sleep mode)",
			"vLLM's sleep-mode allocator (cumem_allocator.cpp) failed to re-create its pool on wake-up: whatever ran while it slept (the trainer beside it) still holds the memory gpu_memory_utilization promised vLLM", fix.LowerGPUMemoryUtil, fix.KillOtherProcess)
		b.setLead("vLLM's pool, colocated", fix.LowerGPUMemoryUtil)
	}
}

// tensorRT reads TensorRT's builder and TensorRT-LLM's runtime: an engine
// built for a bigger batch than fits, or an executor whose KV cache does
// not.
func (b *builder) tensorRT() {
	r := b.r
	switch {
	case r.Extra["component"] != nil:
		ev := fmt.Sprintf("the executor could not create its %v", r.Extra["component"])
		if r.FreeBytes != nil && r.TotalCapacityBytes != nil {
			ev += fmt.Sprintf(" with %s free of %s", GiB(*r.FreeBytes), GiB(*r.TotalCapacityBytes))
		}
		b.cause(CauseTensorRT, "TensorRT-LLM's executor does not fit its KV cache", ev+"; the KV cache takes kv_cache_config.free_gpu_memory_fraction of what is left, and max_num_tokens sizes the activations",
			fix.LowerGPUMemoryUtil, fix.MaxBatchedTokens, fix.TensorParallel, fix.BiggerGPU)
		b.setLead("the executor's KV cache at start-up", fix.LowerGPUMemoryUtil, fix.MaxBatchedTokens, fix.TensorParallel)
	case r.Phase == PhaseLoad:
		b.cause(CauseTensorRT, "TensorRT could not build the engine: its activations for the largest batch do not fit",
			"the builder sizes its workspace for --max_batch_size × (--max_input_len + --max_output_len) (--max_num_tokens): rebuild with smaller ones, or with more GPUs (--tp_size)",
			fix.SmallerBatch, fix.MaxModelLen, fix.TensorParallel, fix.BiggerGPU)
		b.setLead("the engine build", fix.SmallerBatch, fix.MaxModelLen, fix.TensorParallel)
	default:
		b.cause(CauseTensorRT, "TensorRT-LLM's runtime could not allocate its buffers",
			"the runtime allocates its buffers for the engine's largest batch: a smaller max_batch_size, or a smaller KV cache share", fix.SmallerBatch, fix.LowerGPUMemoryUtil, fix.TensorParallel)
		b.setLead("the runtime's buffers", fix.SmallerBatch, fix.LowerGPUMemoryUtil)
	}
}

// Device kinds whose idioms differ from CUDA's.
const (
	deviceCUDA = "cuda"
	deviceROCm = "rocm"
	deviceMPS  = "mps"
	deviceXPU  = "xpu"
	deviceTPU  = "tpu"
)

// deviceFixes is, per device, the fix that says each CUDA fix in that
// device's words; "" drops a fix that has no equivalent there (nvidia-smi
// on a Mac, FlashAttention-2 off NVIDIA and AMD, bitsandbytes off CUDA, an
// fp8 KV cache on a Mac). The one table of device idioms
// (docs/oom-diagnosis.md §6).
var deviceFixes = map[string]map[string]string{
	deviceROCm: {
		fix.ExpandableSegments: fix.ExpandableSegmentsROCm, fix.KillOtherProcess: fix.KillOtherProcessROCm,
		fix.CUDALaunchBlocking: fix.HIPLaunchBlocking, fix.SysmemFallback: "",
	},
	deviceMPS: {
		fix.MixedPrecision: fix.MixedPrecisionMPS, fix.ExpandableSegments: fix.MPSEmptyCache, fix.KillOtherProcess: "",
		fix.CUDALaunchBlocking: "", fix.SysmemFallback: "", fix.OneProcessPerGPU: "", fix.FlashAttention: "", fix.Optim8bit: "",
		fix.QLoRA: "", fix.NF4Weights: "", fix.Int8Weights: "", fix.FP8KVCache: "", fix.MemorySnapshot: "", fix.ChunkedLoss: "",
		fix.Zero2: "", fix.Zero3: "", fix.ZeroOffload: "", fix.ParamOffload: "", fix.TensorParallel: "", fix.RaiseMemoryFraction: "", fix.NCCLBuffers: "",
	},
	deviceXPU: {
		fix.MixedPrecision: fix.MixedPrecisionXPU, fix.ExpandableSegments: fix.XPUEmptyCache, fix.KillOtherProcess: fix.KillOtherProcessXPU,
		fix.CUDALaunchBlocking: "", fix.SysmemFallback: "", fix.FlashAttention: "", fix.Optim8bit: "", fix.MemorySnapshot: "", fix.RaiseMemoryFraction: "",
	},
	deviceTPU: {
		fix.MixedPrecision: fix.MixedPrecisionXLA, fix.Zero3: fix.XLAFSDP, fix.Zero2: fix.XLAFSDP, fix.JAXMemFraction: fix.TPUMemoryProfile,
		fix.ExpandableSegments: "", fix.KillOtherProcess: "", fix.CUDALaunchBlocking: "", fix.SysmemFallback: "", fix.FlashAttention: "",
		fix.Optim8bit: "", fix.QLoRA: "", fix.NF4Weights: "", fix.FP8KVCache: "", fix.MemorySnapshot: "", fix.ChunkedLoss: "", fix.RaiseMemoryFraction: "",
		fix.OneProcessPerGPU: "", fix.NCCLBuffers: "",
	},
}

// deviceOf is the kind of device that failed: what the message names, or
// the ROCm build its text shows.
func deviceOf(r Report) string {
	d := ""
	if r.Device != nil {
		d = *r.Device
	}
	switch {
	case r.Format == FormatMPS || d == "mps":
		return deviceMPS
	case strings.HasPrefix(d, "xpu"):
		return deviceXPU
	case strings.HasPrefix(d, "tpu"):
		return deviceTPU
	case r.Format == FormatHIP || r.Framework == FrameworkROCm || r.Facts.ROCm:
		return deviceROCm
	}
	return deviceCUDA
}

// deviceFix is the fix id for id on the failing device ("" when it has
// none there): the device's idiom where the stack can run it, else the
// fix itself (a JAX snippet holds on a TPU as it is).
func (b *builder) deviceFix(id string) string {
	alt, ok := deviceFixes[deviceOf(b.r)][id]
	if !ok {
		return id
	}
	if alt != "" && !fix.Applies(alt, b.stack) {
		if d, _ := fix.Lookup(alt); d.Only != nil {
			return id
		}
	}
	return alt
}

// shortfall is what fix id frees against the memory missing, where the
// paste gives both: raising vLLM's share against the KV cache it lacked,
// freeing other processes against what the step or llama.cpp's buffers
// need, the allocator's cache against the request.
func (b *builder) shortfall(id string) (gain, gap int64, ok bool) {
	r, e := b.r, b.r.Facts.Engine
	total := b.totalBytes()
	switch id {
	case fix.GPUMemoryUtilization:
		needed, avail := e.KVNeededBytes, e.KVAvailableBytes
		if n, ok := r.Extra["kv_cache_needed_bytes"].(int64); ok {
			needed = n
		}
		if n, ok := r.Extra["kv_cache_available_bytes"].(int64); ok {
			avail = n
		}
		if total <= 0 || needed <= 0 || needed <= avail {
			return 0, 0, false
		}
		return int64((raisedUtilization - b.utilization()) * float64(total)), needed - max(0, avail), true
	case fix.KillOtherProcess, fix.KillOtherProcessROCm, fix.KillOtherProcessXPU:
		return b.othersGain()
	case fix.ExpandableSegments, fix.ExpandableSegmentsROCm:
		ru, ok := reservedUnallocated(r)
		if !ok || r.TriedToAllocateBytes == nil || r.FreeBytes == nil || *r.TriedToAllocateBytes <= *r.FreeBytes {
			return 0, 0, false
		}
		return ru, *r.TriedToAllocateBytes - *r.FreeBytes, true
	}
	return 0, 0, false
}

// othersGain is what freeing other processes gives against the memory
// missing: the Process lines or memory missing from the totals, or for
// llama.cpp the GPU's memory its log does not call free.
func (b *builder) othersGain() (gain, gap int64, ok bool) {
	r := b.r
	if s := b.ggmlSizes; s.need > 0 && s.free > 0 {
		g, ok := catalog.LookupGPU(ggmlGPUName(r))
		if !ok {
			return 0, 0, false
		}
		return max(0, g.UsableBytes-s.free-contextSlack), s.need - s.free, true
	}
	m := b.measured
	if m == nil || m.ShortBytes <= 0 {
		return 0, 0, false
	}
	var others int64
	for _, p := range r.OtherProcesses {
		others += p.Bytes
	}
	if r.FreeBytes != nil && r.TotalCapacityBytes != nil && others == 0 {
		others = max(0, *r.TotalCapacityBytes-*r.FreeBytes-m.HeldBytes-contextSlack)
	}
	return others, m.ShortBytes, true
}

// reGGMLDeviceName is the GPU llama.cpp names with its free memory.
var reGGMLDeviceName = reGGMLFreeVRAM

// ggmlGPUName is the GPU of llama.cpp's "using device CUDA0 (NAME)" line.
func ggmlGPUName(r Report) string {
	m := reGGMLDeviceName.FindStringSubmatch(r.Facts.text)
	if m == nil {
		return ""
	}
	i := strings.Index(m[0], "(")
	j := strings.Index(m[0], ")")
	if i < 0 || j < i {
		return ""
	}
	return m[0][i+1 : j]
}

// memorySaver reads torch_memory_saver (SGLang's and verl's colocated
// allocator) failing to map its memory back: the trainer or engine beside
// it still holds what the engine's static share promised.
func (b *builder) memorySaver() bool {
	if !strings.Contains(b.r.Facts.text, "torch_memory_saver") {
		return false
	}
	b.cause(CauseSleepSaver, "The engine could not map its memory back (torch_memory_saver)",
		"torch_memory_saver's cu_mem_create failed with the driver's out-of-memory code: what ran while the engine's memory was released (the trainer beside it) still holds the memory its static share (--mem-fraction-static, gpu_memory_utilization) promised it",
		fix.LowerGPUMemoryUtil, fix.KillOtherProcess)
	b.setLead("the engine's pool, colocated", fix.LowerGPUMemoryUtil)
	return true
}

// rmmPool reads RAPIDS' memory manager: a pool sized as a share of the GPU
// that is larger than what is free means another process (often a second
// executor on the same GPU) holds it.
func (b *builder) rmmPool() {
	r := b.r
	if r.FreeBytes != nil && r.TriedToAllocateBytes != nil && *r.FreeBytes < *r.TriedToAllocateBytes {
		b.cause(CauseRMMPool, "RAPIDS' memory pool is larger than the free GPU memory",
			fmt.Sprintf("RMM asked for a %s pool with %s free: another process (a second executor or worker on this GPU) holds the rest; Spark RAPIDS wants one executor per GPU, or a smaller spark.rapids.memory.gpu.allocFraction", GiB(*r.TriedToAllocateBytes), GiB(*r.FreeBytes)),
			fix.KillOtherProcess, fix.OneProcessPerGPU)
		b.setLead("memory another process holds", fix.KillOtherProcess, fix.OneProcessPerGPU)
		return
	}
	b.cause(CauseRMMPool, "RAPIDS' memory pool is full",
		"an allocation from RMM's pool failed: the data (a partition, a join's output) is bigger than the pool; smaller partitions or batches shrink it", fix.SmallerBatch, fix.KillOtherProcess)
	b.setLead("the pool's data", fix.SmallerBatch)
}
