package oom

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/vrambot/vrambot/advisor/fix"
)

// Causes read from the whole paste, from the engines' own numbers and from
// the host-memory and NCCL messages.

// Cause IDs of these readings.
const (
	CauseLeak           = "memory-grows-across-steps"
	CauseAfterManySteps = "oom-after-many-steps"
	CauseGGML           = "llama-cpp-buffers"
	CauseNCCL           = "nccl-buffers"
	CauseSharedMemShm   = "shared-memory-exhausted"
	CauseVLLMStartup    = "vllm-startup-free-memory"
	CauseSGLang         = "sglang-memory-pool"
	CauseSGLangSlots    = "sglang-request-slots"
)

// wholePaste reads what the log around the OOM says: memory that grew
// step after step (a leak: the sizes fitted, something is kept), or a job
// that ran many steps before failing.
func (b *builder) wholePaste() {
	f := b.r.Facts
	if !torchTraining(b.r) {
		return
	}
	g := f.Growth
	if g.Grows() || f.KeptTensors != "" {
		var ev []string
		if g.Grows() {
			what := "memory"
			if g.Label != "→" {
				what = "`" + g.Label + "`"
			}
			ev = append(ev, fmt.Sprintf("%s grew from %s to %s before the OOM", what, GiB(g.From), GiB(g.To)))
		}
		if f.KeptTensors != "" {
			ev = append(ev, fmt.Sprintf("`%s` keeps each step's tensor, and with it the step's autograd graph", trimTo(f.KeptTensors, 60)))
		}
		if s := b.sizing; s != nil && s.Fit != "does not fit" {
			ev = append(ev, fmt.Sprintf("the estimator puts the workload at %s on this %s GPU, so its sizes fit", GiB(s.Estimate.TotalBytes), GiB(s.UsableBytes)))
		}
		b.cause(CauseLeak, "Memory grows across steps: something keeps tensors alive from one step to the next",
			strings.Join(ev, "; "), fix.ItemForLoggedLosses, fix.FreeReferences, fix.MemorySnapshot)
		return
	}
	if f.Steps >= manySteps {
		b.cause(CauseAfterManySteps, "The job ran for a while before this OOM: its sizes fit at the start",
			fmt.Sprintf("the log reached step %d; a longer-than-usual batch (sequence length varies by batch) or memory held over time (fragmentation, a slow leak) filled the GPU", f.Steps),
			fix.MaxModelLen, fix.ExpandableSegments, fix.MemorySnapshot, fix.GradAccum)
	}
}

// torchTraining reports a PyTorch-family OOM of a training or evaluation
// job: the readings of the whole paste are about such jobs.
func torchTraining(r Report) bool {
	switch r.Framework {
	case FrameworkPyTorch, FrameworkDeepSpeed, FrameworkROCm:
	default:
		return false
	}
	return r.Device == nil || !strings.HasPrefix(*r.Device, "cpu")
}

// engines reads the serving engines' own numbers: vLLM's KV-cache check
// and start-up check, llama.cpp's buffers.
func (b *builder) engines() {
	switch {
	case onHost(b.r):
		// Host RAM has its own reading (host), whatever the program.
	case b.r.Extra["stack"] == StackLlamaCPP || b.r.Extra["stack"] == StackOllama:
		b.ggml()
	case b.r.Format == FormatVLLMKV:
		b.vllmKV()
	case b.r.Extra["stack"] == "sglang":
		b.sglang()
	case b.r.Framework == FrameworkVLLM && b.r.Format == FormatOther && b.r.FreeBytes != nil && b.r.TotalCapacityBytes != nil:
		b.vllmStartup()
	}
}

// vllmKV reads vLLM's "not enough KV cache" errors with the numbers they
// give: the context it was asked for, the KV memory it had and needed, its
// own estimate of the longest context that fits.
func (b *builder) vllmKV() {
	r, e := b.r, b.r.Facts.Engine
	maxSeq, kvTokens := e.MaxSeqLen, e.KVTokens
	if n, ok := r.Extra["max_seq_len"].(int); ok {
		maxSeq = n
	}
	if n, ok := r.Extra["kv_cache_tokens"].(int); ok {
		kvTokens = n
	}
	est := e.EstimatedMaxLen
	if est == 0 && kvTokens > 0 && kvTokens < maxSeq {
		// V0: one sequence of the longest context holds KV cache for
		// kv_cache_tokens tokens.
		est = kvTokens
	}
	needed, avail := e.KVNeededBytes, e.KVAvailableBytes
	if needed == 0 && avail > 0 && kvTokens > 0 && maxSeq > kvTokens {
		needed = int64(float64(avail) * float64(maxSeq) / float64(kvTokens))
	}
	if e.NoCacheMemory && needed == 0 && kvTokens == 0 {
		b.vllmNoCacheMemory()
		return
	}
	if a, ok := r.Extra["kv_cache_available_bytes"].(int64); ok && a < 0 {
		// V1 logged a negative budget: the weights and the profiled peak
		// already exceed gpu_memory_utilization × the GPU.
		b.vllmNoCacheMemory()
		return
	}
	var ev []string
	switch {
	case needed > 0 && avail > 0 && maxSeq > 0:
		ev = append(ev, fmt.Sprintf("one %d-token request needs %s of KV cache; after the weights vLLM has %s for it", maxSeq, GiB(needed), GiB(avail)))
	case maxSeq > 0 && kvTokens > 0:
		ev = append(ev, fmt.Sprintf("max_model_len %d needs more KV cache than the %d tokens that fit", maxSeq, kvTokens))
	default:
		ev = append(ev, "vLLM could not fit the KV cache for one full-length request in its memory budget")
	}
	if est > 0 {
		b.maxModelLen, b.engineMaxLen, b.wasMaxLen = cappedContext(est), est, maxSeq
		ev = append(ev, fmt.Sprintf("vLLM estimates that %d tokens fit", est))
	}
	total := b.totalBytes()
	util := b.utilization()
	if need := engineNeed(total, util, avail, needed); need > 0 {
		b.need = max(b.need, need)
		ev = append(ev, fmt.Sprintf("keeping the full context takes a GPU of about %s at gpu_memory_utilization %.2f", GiB(need), util))
	} else if need := vllmEstimate(r, maxSeq); need > 0 {
		b.need = max(b.need, need)
		ev = append(ev, fmt.Sprintf("the estimator puts the full %d-token context at %s per GPU (the smallest card vLLM starts on at gpu_memory_utilization 0.9)", maxSeq, GiB(need)))
	}
	b.cause(CauseVLLM, "vLLM's KV cache does not fit in gpu_memory_utilization × GPU after the weights", strings.Join(ev, "; "),
		fix.MaxModelLen, fix.GPUMemoryUtilization, fix.FP8KVCache, fix.TensorParallel, fix.NF4Weights, fix.BiggerGPU)
	b.setLead("the KV cache at start-up", fix.MaxModelLen, fix.FP8KVCache, fix.TensorParallel)
}

// vllmNoCacheMemory reads "No available memory for the cache blocks":
// nothing is left for the cache at all, so an 8-bit cache cannot make
// room, nor a shorter context on V1, which profiles max_num_batched_tokens
// whatever the context; V0 profiled a whole max_model_len up to 32k
// (docs/vllm-kv.md §8), so there a shorter one shrinks the peak.
func (b *builder) vllmNoCacheMemory() {
	if b.unevenRanks() {
		return
	}
	fixes := []string{fix.GPUMemoryUtilization, fix.TensorParallel, fix.NF4Weights, fix.BiggerGPU}
	if b.r.Facts.Engine.V0 {
		fixes = append(fixes, fix.MaxModelLen)
	}
	ev := "after the weights and the profiling run's peak, nothing of gpu_memory_utilization × GPU is left for the KV cache"
	if a, ok := b.r.Extra["kv_cache_available_bytes"].(int64); ok && a < 0 {
		ev = fmt.Sprintf("vLLM logged %s of KV cache memory: the weights and the profiling run's peak exceed gpu_memory_utilization × GPU by that much", GiB(a))
	}
	b.cause(CauseVLLM, "vLLM has no memory left for its KV cache", ev, fixes...)
	b.setLead("no room left for the KV cache at start-up", fix.GPUMemoryUtilization, fix.TensorParallel, fix.NF4Weights)
}

// vllmStartup reads vLLM V1's start-up check: less memory is free than
// gpu_memory_utilization claims, because something else holds it.
func (b *builder) vllmStartup() {
	r := b.r
	free, total := *r.FreeBytes, *r.TotalCapacityBytes
	util := b.utilization()
	ev := fmt.Sprintf("%s of %s is free, and gpu_memory_utilization %.2f asks for %s: another process (or a previous vLLM) holds %s",
		GiB(free), GiB(total), util, GiB(int64(util*float64(total))), GiB(total-free))
	if share := float64(free) / float64(total); share > 0.05 {
		// Leave a point of room below what is free.
		b.lowerUtil = math.Floor(share*100-1) / 100
	}
	b.cause(CauseVLLMStartup, "Less GPU memory is free than vLLM's gpu_memory_utilization claims", ev,
		fix.KillOtherProcess, fix.LowerGPUMemoryUtil, fix.OneProcessPerGPU)
	b.setLead("memory other processes hold at start-up", fix.KillOtherProcess, fix.LowerGPUMemoryUtil)
}

// ggml reads llama.cpp's (and Ollama's) failures: which buffer did not fit
// and, from the sizes it logged, what fits.
func (b *builder) ggml() {
	r := b.r
	s := sizeGGML(r, b.totalBytes())
	b.ggmlSizes = s
	what := map[string]string{"kv": "KV cache", "compute": "compute buffer", "weights": "weights"}[r.Facts.GGMLBuffer]
	title := "llama.cpp's buffers do not fit the GPU"
	if what != "" {
		title = "llama.cpp's " + what + " does not fit the GPU"
	}
	var ev []string
	if t := r.TriedToAllocateBytes; t != nil {
		ev = append(ev, fmt.Sprintf("a %s buffer of %s failed", orWord(what, "GPU"), GiB(*t)))
	}
	if s.weights > 0 && s.free > 0 {
		parts := []string{"weights " + GiB(s.weights)}
		if s.kv > 0 {
			parts = append(parts, fmt.Sprintf("KV cache %s (%d tokens)", GiB(s.kv), s.ctx))
		}
		if s.compute > 0 {
			parts = append(parts, "compute "+GiB(s.compute))
		}
		ev = append(ev, fmt.Sprintf("%s need more than the %s free on the GPU", strings.Join(parts, " + "), GiB(s.free)))
	}
	if s.perLayer > 0 && s.fitLayers > 0 {
		ev = append(ev, fmt.Sprintf("a layer on the GPU costs %s (its weights and KV cache), so %d of them fit beside %s for the compute buffer", GiB(s.perLayer), s.fitLayers, GiB(max(s.compute, ggmlComputeReserve))))
	}
	if r.Extra["kind"] == KindCUDAError {
		ev = append(ev, "ggml's CUDA pool grows with the batch and the context while it runs")
	}
	if len(ev) == 0 {
		ev = append(ev, "llama.cpp could not allocate a buffer on the GPU")
	}
	if s.need > 0 {
		b.need = max(b.need, s.need)
	}
	fixes := []string{}
	if what == "kv" || s.kv > 0 {
		fixes = append(fixes, fix.FP8KVCache, fix.MaxModelLen)
	}
	if what == "compute" || r.Extra["kind"] == KindCUDAError {
		fixes = append(fixes, fix.MaxBatchedTokens, fix.FlashAttention, fix.MaxModelLen)
	}
	fixes = append(fixes, fix.LayerOffload)
	if s.smaller != "" || s.quant == "" {
		fixes = append(fixes, fix.NF4Weights)
	}
	fixes = append(fixes, fix.KillOtherProcess, fix.BiggerGPU)
	b.cause(CauseGGML, title, strings.Join(ev, "; "), fixes...)
	// The layers on the GPU first (their count from the free memory and
	// what one layer costs, sizeGGML), then a smaller quant or context.
	b.setLead("llama.cpp's buffers", fix.LayerOffload, fix.NF4Weights, fix.MaxModelLen)
}

func orWord(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// host reads the host-memory failures: what filled the RAM, from the
// message and its context.
func (b *builder) host() {
	r := b.r
	kind, _ := r.Extra["kind"].(string)
	ev := "the allocation that failed is host RAM, not GPU memory"
	if t := r.TriedToAllocateBytes; t != nil {
		ev = fmt.Sprintf("host RAM: tried to allocate %s on the CPU", GiB(*t))
		if *t >= 256*gib {
			ev += " — a size that large is a shape bug"
		}
	}
	switch {
	case kind == KindGGMLAlloc:
		b.cause(CauseHostRAM, "llama.cpp could not allocate its buffer in host RAM", ev+"; with the layers on the CPU, the weights and the KV cache live in RAM",
			fix.MaxModelLen, fix.NF4Weights, fix.MoreHostRAM)
		return
	case kind == KindHostRequires:
		b.cause(CauseHostRAM, "Ollama refused the model: it needs more system memory than is free",
			fmt.Sprintf("the model needs %s and %s is available", GiB(val(r.TriedToAllocateBytes)), GiB(val(r.FreeBytes))), fix.NF4Weights, fix.MaxModelLen, fix.MoreHostRAM)
		return
	}
	switch kind {
	case KindOOMKilled:
		ev = "the kernel's OOM killer ended the process when the machine (or its container) ran out of RAM"
		if p, ok := r.Extra["process"].(string); ok {
			ev = fmt.Sprintf("the kernel's OOM killer killed %s", p)
			if rss, ok := r.Extra["anon_rss_bytes"].(int64); ok && rss > 0 {
				ev += fmt.Sprintf(", which held %s of RAM", GiB(rss))
			}
		}
		if r.Phase == PhaseLoad {
			b.cause(CauseHostRAM, "The machine ran out of host RAM while loading the model", ev+"; loading reads the checkpoint into RAM before it reaches the GPU",
				fix.MmapWeights, fix.LayerOffload, fix.MoreHostRAM)
			return
		}
		b.cause(CauseHostRAM, "The machine ran out of host RAM", ev, fix.DataLoaderWorkers, fix.MmapWeights, fix.MoreHostRAM)
	case KindDataLoaderShm:
		b.cause(CauseSharedMemShm, "DataLoader workers ran out of shared memory (/dev/shm)",
			"workers hand batches to the main process through /dev/shm, which Docker limits to 64 MB unless told otherwise", fix.SharedMemorySize, fix.DataLoaderWorkers)
	case KindDataLoaderKilled:
		if r.Extra["signal"] == "Bus error" {
			b.cause(CauseSharedMemShm, "A DataLoader worker ran out of shared memory (/dev/shm)",
				"SIGBUS in a worker: the batch it passes through /dev/shm did not fit there (Docker's default is 64 MB)", fix.SharedMemorySize, fix.DataLoaderWorkers)
			return
		}
		b.cause(CauseHostRAM, "A DataLoader worker was killed: the machine ran out of host RAM",
			"the OOM killer took a worker; each worker holds its own copy of what the dataset loads", fix.DataLoaderWorkers, fix.SharedMemorySize, fix.MoreHostRAM)
	default:
		b.cause(CauseHostRAM, "The machine ran out of host RAM", ev, fix.DataLoaderWorkers, fix.CheckShapes, fix.MoreHostRAM)
	}
}

// nccl reads NCCL's CUDA failure: its own buffers did not fit, because the
// GPU was already (nearly) full.
func (b *builder) nccl() {
	ev := "NCCL allocates its channel buffers with cudaMalloc, outside PyTorch's allocator, when a communicator or a peer connection is set up; the GPU had no room left"
	if t := b.r.TriedToAllocateBytes; t != nil {
		ev = fmt.Sprintf("NCCL could not calloc %s for its buffers (outside PyTorch's allocator): the GPU had no room left", GiB(*t))
	}
	b.cause(CauseNCCL, "NCCL could not allocate its own GPU buffers", ev, fix.NCCLBuffers, fix.GradAccum, fix.KillOtherProcess)
}

// totalBytes is the failing GPU's memory: the paste's total capacity,
// vLLM's total_gpu_memory, or the catalog's size of the GPU it names.
func (b *builder) totalBytes() int64 {
	switch {
	case b.r.TotalCapacityBytes != nil:
		return *b.r.TotalCapacityBytes
	case b.r.Facts.Engine.TotalBytes > 0:
		return b.r.Facts.Engine.TotalBytes
	}
	return hintGPUBytes(b.r)
}

// utilization is the engine's gpu_memory_utilization, from the paste or
// vLLM's default.
func (b *builder) utilization() float64 {
	if u, ok := b.r.Extra["gpu_memory_utilization"].(float64); ok && u > 0 {
		return u
	}
	if u := b.r.Facts.Workload.GPUMemoryUtilization; u > 0 {
		return u
	}
	return vllmDefaultUtilization
}

// reSGLangLoad is SGLang's log line after the weights loaded: what is
// left and what the weights take ("avail mem=2.10 GB, mem usage=20.45 GB").
var reSGLangLoad = regexp.MustCompile(`Load weight end\.[^\n]*?avail mem=(\d+(?:\.\d+)?) GB, mem usage=(\d+(?:\.\d+)?) GB`)

// sglang reads SGLang's start-up refusal: --mem-fraction-static × GPU
// must hold the weights and a KV cache pool, and does not.
func (b *builder) sglang() {
	if b.r.Extra["kind"] == KindSGLangSlots {
		b.cause(CauseSGLangSlots, "SGLang ran out of request slots",
			"SGLang's scheduler holds one slot per running request (req_to_token_pool) and had none left for the next batch: fewer running requests, not more GPU memory, is what its message asks for",
			fix.SmallerBatch, fix.GPUMemoryUtilization)
		b.setLead("the request slots", fix.SmallerBatch)
		return
	}
	ev := "SGLang reserves --mem-fraction-static of the GPU for the weights and its KV cache pool, and after the weights too little of it is left for the pool"
	if m := reSGLangLoad.FindStringSubmatch(b.r.Facts.text); m != nil {
		ev = fmt.Sprintf("after loading the weights (%s GB) SGLang had %s GB left for its KV cache pool", m[2], m[1])
	}
	b.cause(CauseSGLang, "SGLang's KV cache pool does not fit after the weights", ev,
		fix.GPUMemoryUtilization, fix.MaxModelLen, fix.FP8KVCache, fix.TensorParallel, fix.NF4Weights, fix.BiggerGPU)
	// SGLang refuses when its static share leaves no pool: a bigger share
	// where there is room for one, else a split or smaller weights.
	b.setLead("SGLang's memory pool at start-up", fix.GPUMemoryUtilization, fix.TensorParallel, fix.NF4Weights)
}

// onHost reports a failure of host memory, not of a GPU.
func onHost(r Report) bool { return r.Device != nil && *r.Device == "cpu" }
