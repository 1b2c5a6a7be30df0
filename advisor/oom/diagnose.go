package oom

import (
	"fmt"
	"slices"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/advisor/memory"
)

// Diagnosis is the likely causes of an OOM, most likely first, each with
// the evidence from the paste, and the staged fixes, easiest first.
type Diagnosis struct {
	Causes []Cause     `json:"causes"`
	Stages []fix.Stage `json:"stages"`
	// Sizing is the estimate of the workload the paste names, when it
	// names one; the fixes of the stages then carry their savings.
	Sizing *Sizing `json:"sizing,omitempty"`
	// Measured is what the paste's own numbers say the step needed, and
	// which reading, it or the estimate, the fixes are sized from.
	Measured *Measurement `json:"measured,omitempty"`
	// SetAside is the estimate of the job as read when the paste's numbers
	// disagree with it (Measured says why): not the sizing, but what the
	// "Estimate this workload" button starts from. Not part of the JSON.
	SetAside *Sizing `json:"-"`
	// FallShort lists the fixes the paste's numbers show cannot close the
	// gap alone (each says so in its detail): never first.
	FallShort []string `json:"falls_short,omitempty"`
	// NeedBytes is the per-GPU memory a bigger GPU must have for the
	// hardware stage (0 when the paste does not say); for the offer search,
	// not part of the JSON contract.
	NeedBytes int64 `json:"-"`
}

// Cause is one likely cause with the evidence that points at it.
type Cause struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Evidence string `json:"evidence"`
}

// Cause IDs.
const (
	CauseNotAFailure       = "not-a-failure"
	CauseShapeBug          = "request-absurd"
	CauseRequestOverTotal  = "request-exceeds-total"
	CauseFragmentation     = "fragmentation"
	CauseOtherProcesses    = "other-processes"
	CauseSharedMemory      = "allocated-above-capacity"
	CauseAllocatorCap      = "allocator-cap"
	CauseFreeButFailed     = "free-exceeds-request"
	CauseLoad              = "weights-do-not-fit"
	CauseBackward          = "activations-in-backward"
	CauseOptimizer         = "optimizer-states"
	CauseEval              = "eval-without-no-grad"
	CauseGenerate          = "kv-cache-in-generate"
	CauseForward           = "activations-in-forward"
	CauseHostRAM           = "host-ram"
	CauseVLLM              = "vllm-kv-cache"
	CauseTGI               = "tgi-prefill-budget"
	CauseTFPrealloc        = "tf-allocator"
	CauseJAXPrealloc       = "jax-preallocation"
	CauseMPSWatermark      = "mps-watermark"
	CauseNoNumbers         = "no-numbers"
	CauseEmptyRequest      = "zero-byte-request"
	CauseFullBeforeFirstOp = "gpu-full-before-first-op"
	CauseSingleBlockLimit  = "single-allocation-limit"
	CauseGPUFull           = "gpu-full"
)

// Thresholds for reading the numbers.
const (
	gib = int64(1) << 30
	// fragmentedShare: a reserve-but-unallocated pool above this share of
	// the GPU (and at least the request) is memory the allocator holds but
	// cannot hand out in one piece.
	fragmentedShare = 0.05
	// absurdFactor: a request this many times the GPU is a shape bug, not
	// a model that is slightly too big.
	absurdFactor = 4
	// contextSlack is what the CUDA context and libraries take outside the
	// allocator (~0.3-1 GiB); memory missing beyond it is held elsewhere.
	contextSlack = gib
)

// Diagnose reads the likely causes and the staged fixes from a Report. It
// is pure and never fails; a report with detected=false gives nothing.
func Diagnose(r Report) Diagnosis { return diagnose(r, nil) }

// PastedJob is the job a paste holds beside its traceback (an axolotl
// config, a vllm serve line: package job reads it at the edge), as the
// estimator's workload: the diagnosis sizes the fixes from it rather than
// from what the log lines say.
type PastedJob struct {
	Workload memory.Workload
	// GPU is the GPU the job's words name; the paste's own total capacity
	// wins over it. HasGPU is false when they name none.
	GPU    catalog.GPU
	HasGPU bool
	// Framework is the stack the job runs on (fix.FrameworkUnknown: the
	// paste's).
	Framework fix.Framework
}

// DiagnoseJob is Diagnose of a paste that holds its job too (a config or
// a launch line beside the traceback): the causes and the paste's numbers
// as Diagnose reads them, the sizing from the job.
func DiagnoseJob(r Report, j PastedJob) Diagnosis { return diagnose(r, &j) }

func diagnose(r Report, job *PastedJob) Diagnosis {
	d := Diagnosis{Causes: []Cause{}, Stages: []fix.Stage{}}
	if !r.Detected {
		return d
	}
	b := &builder{r: r, stack: r.Stack}
	if b.stack == fix.FrameworkUnknown && job != nil {
		b.stack = job.Framework
	}
	if b.stack == fix.FrameworkUnknown {
		b.stack = stackFor(r)
	}
	if noIdiom(r) {
		b.stack = stackNone
	}
	if job != nil {
		b.sizing = estimateJob(r, *job, b.stack)
	} else {
		b.sizing = estimate(r, b.stack)
	}
	b.measured = measure(r)
	b.reconcile()
	b.wholePaste()
	b.numbers()
	b.engines()
	b.byFormat()
	b.byWhere()
	b.byPhase()
	if len(b.causes) == 0 {
		b.gpuFull()
	}
	if len(b.causes) == 0 {
		b.cause(CauseNoNumbers, "The paste does not say where the memory went",
			"no byte counts and no stack frame that places the OOM", fix.GradAccum, fix.GradCheckpointing, fix.MixedPrecision)
	}
	d.Causes = b.causes
	d.NeedBytes = b.needBytes()
	d.Stages = b.stages()
	d.FallShort = b.fallShort
	d.Sizing = b.sizing
	d.Measured = b.measured
	d.SetAside = b.setAside
	return d
}

// needBytes is the per-GPU memory a bigger GPU must have, from the paste's
// own numbers, and always more than the GPU that failed: renting the same
// card again would fail the same way.
func (b *builder) needBytes() int64 {
	r := b.r
	need := b.need
	if r.Framework != FrameworkVLLM && r.Extra["stack"] == nil {
		need = max(need, loadNeed(r))
	}
	if m := b.measured; m != nil && m.ShortBytes > 0 {
		need = max(need, m.NeedBytes)
	}
	if need == 0 || !slices.Contains(b.fixes, fix.BiggerGPU) {
		return 0
	}
	if total := b.totalBytes(); total > 0 && need <= total {
		short := max(gib, total/10)
		if r.TriedToAllocateBytes != nil && r.FreeBytes != nil && *r.TriedToAllocateBytes > *r.FreeBytes {
			short = max(short, *r.TriedToAllocateBytes-*r.FreeBytes)
		}
		need = total + short
	}
	return need
}

// noIdiom reports a program the fix catalogue has no idiom for: TensorRT,
// CuPy and numba, Lua Torch.
func noIdiom(r Report) bool {
	switch r.Extra["kind"] {
	case KindCUDADriver, KindCuPy, KindTensorRT:
		return true
	case KindCUDAError, "thc-cuda-runtime-error-2":
		return r.Framework == FrameworkOther && r.Extra["stack"] == nil
	}
	return false
}

// stackFor guesses the idiom from the framework field when the report
// came from JSON (Stack is not serialised).
func stackFor(r Report) fix.Framework {
	switch r.Framework {
	case FrameworkTensorFlow:
		return fix.FrameworkKeras
	case FrameworkJAX:
		return fix.FrameworkJAX
	case FrameworkVLLM:
		return fix.FrameworkVLLM
	case FrameworkDeepSpeed:
		return fix.FrameworkDeepSpeed
	}
	return fix.FrameworkPyTorch
}

type builder struct {
	r      Report
	stack  fix.Framework
	causes []Cause
	fixes  []string // fix IDs in the order the causes asked for them
	need   int64
	// sizing is the estimate of the paste's workload (nil when it names none).
	sizing *Sizing
	// Values the causes found for the fixes: the context to cap at (and
	// the engine's estimate, what it was), the utilization to lower to,
	// llama.cpp's sizes.
	maxModelLen, engineMaxLen, wasMaxLen int
	lowerUtil                            float64
	ggmlSizes                            ggmlSizes
	// lead is the fixes for where the job failed, in order, and leadWhy
	// the words for it (lead.go); measured the paste's own numbers.
	lead      []string
	leadWhy   string
	measured  *Measurement
	setAside  *Sizing
	fallShort []string
}

func (b *builder) cause(id, title, evidence string, fixes ...string) {
	for _, c := range b.causes {
		if c.ID == id {
			return
		}
	}
	b.causes = append(b.causes, Cause{ID: id, Title: title, Evidence: evidence})
	for _, f := range fixes {
		if !slices.Contains(b.fixes, f) {
			b.fixes = append(b.fixes, f)
		}
	}
}

func val(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// reservedUnallocated is what the allocator holds but has not handed out,
// in any message generation.
func reservedUnallocated(r Report) (int64, bool) {
	switch {
	case r.ReservedUnallocatedBytes != nil:
		return *r.ReservedUnallocatedBytes, true
	case r.ReservedByFrameworkBytes != nil && r.AllocatedByFrameworkBytes != nil:
		return max(0, *r.ReservedByFrameworkBytes-*r.AllocatedByFrameworkBytes), true
	}
	return 0, false
}

// numbers reads causes from the byte counts.
func (b *builder) numbers() {
	r := b.r
	tried, total, free, alloc := r.TriedToAllocateBytes, r.TotalCapacityBytes, r.FreeBytes, r.AllocatedByFrameworkBytes
	if r.Extra["non_fatal"] == true {
		b.cause(CauseNotAFailure, "Only allocator warnings: TensorFlow says this is not a failure",
			"every OOM line ends with \"The caller indicates that this is not a failure\"; the crash, if any, is elsewhere in the log", fix.TFMemoryGrowth)
	}
	if tried != nil && *tried == 0 {
		b.cause(CauseEmptyRequest, "A 0-byte request failed: an empty tensor, not a full GPU",
			"tried to allocate 0 bytes", fix.CheckShapes)
	}
	if tried != nil && total != nil && *total > 0 {
		switch {
		case *tried >= absurdFactor**total || *tried >= 1<<40:
			b.cause(CauseShapeBug, "The request is absurd for this GPU: a shape bug, not a capacity problem",
				fmt.Sprintf("tried to allocate %s on a %s GPU (%.0f×)", GiB(*tried), GiB(*total), float64(*tried)/float64(*total)), fix.CheckShapes)
		case *tried > *total:
			b.cause(CauseRequestOverTotal, "One tensor is bigger than the whole GPU",
				fmt.Sprintf("tried to allocate %s; the GPU has %s in total — %s", GiB(*tried), GiB(*total), bigTensorHint(r)),
				fix.GradAccum, fix.FlashAttention, fix.ChunkedLoss, fix.GradCheckpointing, fix.BiggerGPU)
			b.need = max(b.need, *tried+val(alloc))
		}
	}
	if alloc != nil && total != nil && *alloc > *total && r.Format != FormatMPS && r.Format != FormatTFBFC {
		b.cause(CauseSharedMemory, "Allocated memory exceeds the GPU's capacity: the driver spilled into shared system memory",
			fmt.Sprintf("%s allocated on a %s GPU — the Windows driver's sysmem fallback, which is slow and ends in an OOM anyway", GiB(*alloc), GiB(*total)),
			fix.GradAccum, fix.MixedPrecision, fix.GradCheckpointing, fix.SysmemFallback)
	}
	if ru, ok := reservedUnallocated(r); ok && total != nil && ru > 0 && float64(ru) >= fragmentedShare*float64(*total) {
		switch {
		case tried == nil || ru >= *tried:
			b.cause(CauseFragmentation, "Fragmentation: the allocator holds free memory it cannot hand out in one piece",
				fmt.Sprintf("%s is reserved by PyTorch but unallocated, more than the %s requested", GiB(ru), GiB(val(tried))),
				fix.ExpandableSegments, fix.GradAccum)
		case free != nil && ru+*free >= *tried:
			// The cached pieces and the free memory together would hold
			// the request: expandable segments map them as one (PyTorch's
			// own advice in this message; docs/memory-model.md §1.7). The job
			// is still at the edge, so the GPU-full reading follows.
			b.cause(CauseFragmentation, "Fragmentation decides it: the free memory and the allocator's unused cache would hold the request together",
				fmt.Sprintf("%s reserved by PyTorch but unallocated plus %s free is more than the %s requested, but neither alone is", GiB(ru), GiB(*free), GiB(*tried)),
				fix.ExpandableSegments)
			b.gpuFull()
		}
	}
	if v, ok := r.Extra["allowed_bytes"].(int64); ok {
		b.cause(CauseAllocatorCap, "A per-process memory fraction caps this process",
			fmt.Sprintf("the message says %s allowed (torch.cuda.set_per_process_memory_fraction) although %s is free", GiB(v), GiB(val(free))), fix.RaiseMemoryFraction)
	}
	b.otherProcesses()
	if tried != nil && free != nil && *free >= *tried && *tried > 0 && !b.has(CauseAllocatorCap) && !b.has(CauseFragmentation) {
		ev := fmt.Sprintf("%s reported free, more than the %s requested", GiB(*free), GiB(*tried))
		if total != nil && *free > *total {
			ev += fmt.Sprintf("; free exceeds the %s total, as on unified-memory APUs where the driver's numbers disagree", GiB(*total))
		}
		b.cause(CauseFreeButFailed, "The request failed although enough memory is reported free",
			ev+" — no contiguous block, a driver-side limit or memory taken between the check and the call", fix.ExpandableSegments, fix.GradAccum)
	}
}

// gpuFull is the reading of last resort when the numbers say nothing
// special and no stack frame places the OOM: the job's own tensors filled
// the GPU.
func (b *builder) gpuFull() {
	r := b.r
	tried, total, free, alloc := r.TriedToAllocateBytes, r.TotalCapacityBytes, r.FreeBytes, r.AllocatedByFrameworkBytes
	if tried == nil || total == nil || alloc == nil || r.Format == FormatMPS {
		return
	}
	ev := fmt.Sprintf("%s allocated by %s of %s, and the next %s did not fit", GiB(*alloc), r.Framework, GiB(*total), GiB(*tried))
	if free != nil {
		ev += fmt.Sprintf(" (%s free)", GiB(*free))
	}
	b.cause(CauseGPUFull, "The GPU is full with this job's own tensors", ev,
		fix.GradAccum, fix.GradCheckpointing, fix.MixedPrecision, fix.FlashAttention)
}

// bigTensorHint says which tensor is usually that big, from the phase.
func bigTensorHint(r Report) string {
	switch r.Phase {
	case PhaseBackward:
		return "usually a gradient of the attention scores or logits for the whole batch"
	case PhaseGenerate, PhaseEval:
		return "usually the logits or attention scores of a long input or a big batch"
	case PhaseLoad:
		return "a single weight tensor larger than the card"
	}
	return "usually attention scores (eager attention is batch × heads × seq²), the logits (batch × seq × vocab) or the batch itself"
}

// otherProcesses reads memory held outside this process: Process lines
// (one line alone, without a line for this process, is this process seen
// from inside a container) and memory missing from the totals.
func (b *builder) otherProcesses() {
	r := b.r
	var others int64
	for _, p := range r.OtherProcesses {
		others += p.Bytes
	}
	own := val(r.ProcessInUseBytes)
	if own == 0 {
		own = val(r.AllocatedByFrameworkBytes)
		if ru, ok := reservedUnallocated(r); ok {
			own += ru
		}
	}
	if len(r.OtherProcesses) == 1 && r.ProcessInUseBytes == nil {
		// One line and none for this process: usually this process seen
		// through a container's PID namespace. It then shows the
		// allocator's memory plus the CUDA context and libraries.
		p := r.OtherProcesses[0]
		if own > 0 && p.Bytes >= own-gib && p.Bytes <= own+max(3*gib, own/10) {
			return
		}
	}
	if len(r.OtherProcesses) > 0 && others > 0 {
		b.cause(CauseOtherProcesses, "Other processes hold memory on this GPU",
			fmt.Sprintf("%s held by %s — a stale notebook kernel, a zombie worker or another job", GiB(others), processList(r.OtherProcesses)),
			fix.KillOtherProcess, fix.OneProcessPerGPU)
		return
	}
	if r.TotalCapacityBytes == nil || r.FreeBytes == nil || own == 0 || r.Format == FormatMPS {
		return
	}
	missing := *r.TotalCapacityBytes - *r.FreeBytes - own - contextSlack
	if missing > max(gib, *r.TotalCapacityBytes/10) {
		ev := fmt.Sprintf("of %s, %s is free and this process accounts for %s: about %s is used elsewhere (another process or notebook)",
			GiB(*r.TotalCapacityBytes), GiB(*r.FreeBytes), GiB(own), GiB(missing))
		fixes := []string{fix.KillOtherProcess, fix.OneProcessPerGPU}
		if r.Device != nil && *r.Device == "cuda:0" && interleavedTracebacks(r.Facts.text) {
			// Ranks that each load onto GPU 0 (no LOCAL_RANK, no
			// device_map per rank) print their tracebacks over each other.
			ev += "; the paste's tracebacks are written over each other, as several ranks print them, and all of them ran out on GPU 0"
			fixes = []string{fix.OneProcessPerGPU, fix.KillOtherProcess}
		}
		b.cause(CauseOtherProcesses, "Memory is held outside this process", ev, fixes...)
		if missing > own {
			// Most of the GPU is someone else's: what this process does
			// (loading, its optimizer, its logits) is not what to change first.
			b.setLead("memory held outside this process", fixes...)
		}
	}
}

func processList(ps []OtherProcess) string {
	s := ""
	for i, p := range ps {
		if i == 3 {
			return s + fmt.Sprintf(" and %d more", len(ps)-3)
		}
		if i > 0 {
			s += ", "
		}
		if p.PID > 0 {
			s += fmt.Sprintf("PID %d (%s)", p.PID, GiB(p.Bytes))
		} else {
			s += GiB(p.Bytes)
		}
	}
	return s
}

func (b *builder) has(id string) bool {
	return slices.ContainsFunc(b.causes, func(c Cause) bool { return c.ID == id })
}

// byFormat adds what a message family says by itself.
func (b *builder) byFormat() {
	for _, rule := range formatRules {
		if rule.when(b) {
			if rule.then != nil {
				rule.then(b)
			}
			break
		}
	}
	r := b.r
	if k, _ := r.Extra["kind"].(string); (k == KindCUDAError || k == "thc-cuda-runtime-error-2") && r.Extra["stack"] == nil {
		b.cause(CauseNoNumbers, "A raw CUDA out-of-memory error: no numbers, and the stack may be elsewhere",
			"cudaErrorMemoryAllocation came from outside the caching allocator (a kernel, a library, context creation); CUDA reports it asynchronously",
			fix.KillOtherProcess, fix.CUDALaunchBlocking, fix.GradAccum)
	}
}

// formatRule is what a paste's format or stack says: the first rule whose
// when holds adds its cause (then nil: another part of the diagnosis
// reads it).
type formatRule struct {
	when func(b *builder) bool
	then func(b *builder)
}

// isVLLM reports a vLLM paste that is not a TPU program's.
func isVLLM(r Report) bool {
	return r.Format == FormatVLLMKV || r.Framework == FrameworkVLLM && r.Format != FormatXLA
}

// formatRules are byFormat's rules, in order.
var formatRules = []formatRule{
	{ // read with the engine's own numbers (engines)
		when: func(b *builder) bool {
			return b.has(CauseVLLMStartup) || !onHost(b.r) && (b.r.Extra["stack"] == StackLlamaCPP || b.r.Extra["stack"] == StackOllama)
		},
	},
	{when: func(b *builder) bool { return b.r.Extra["kind"] == KindNCCL }, then: (*builder).nccl},
	{when: func(b *builder) bool { return b.r.Facts.Engine.NoCacheMemory && isVLLM(b.r) }, then: (*builder).vllmNoCacheMemory},
	{when: func(b *builder) bool { return b.r.Extra["kind"] == KindVLLMCumem }}, // vLLM's sleep mode (byLibrary)
	{when: func(b *builder) bool { return isVLLM(b.r) }, then: (*builder).vllmKVBudget},
	{when: func(b *builder) bool { return b.r.Framework == FrameworkVLLM && b.r.Format == FormatXLA }, then: func(b *builder) {
		b.cause(CauseVLLM, "vLLM on TPU could not reserve its program memory",
			"the TPU runtime could not reserve the compiled program's memory; on TPU this is fixed by lowering gpu_memory_utilization", fix.LowerGPUMemoryUtil, fix.MaxModelLen)
	}},
	{when: func(b *builder) bool {
		return b.r.Extra["stack"] == "text-generation-inference" && b.r.Format == FormatOther
	}, then: func(b *builder) {
		b.cause(CauseTGI, "TGI cannot fit its prefill token budget after loading the model",
			"TGI warms up with --max-batch-prefill-tokens tokens and that batch does not fit", fix.MaxBatchedTokens, fix.NF4Weights, fix.TensorParallel)
		b.setLead("the prefill token budget at warm-up", fix.MaxBatchedTokens)
	}},
	{when: func(b *builder) bool {
		r := b.r
		return r.Format == FormatCPUAlloc || r.Extra["kind"] == "pinned-host-alloc-failed" || r.Device != nil && *r.Device == "cpu"
	}, then: (*builder).host},
	{when: func(b *builder) bool { return b.r.Format == FormatMPS }, then: func(b *builder) {
		r := b.r
		b.cause(CauseMPSWatermark, "Apple MPS hit its high-watermark limit",
			fmt.Sprintf("MPS allocated %s plus other allocations against a limit of %s", GiB(val(r.AllocatedByFrameworkBytes)), GiB(val(r.TotalCapacityBytes))),
			fix.GradAccum, fix.MPSWatermark, fix.MixedPrecision)
	}},
	{when: func(b *builder) bool { return b.r.Format == FormatCuBLAS }, then: func(b *builder) {
		b.cause(CauseFullBeforeFirstOp, "cuBLAS could not create its handle: the GPU was already full at the first matmul",
			"CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate — the workspace allocation failed", fix.KillOtherProcess, fix.NF4Weights, fix.LayerOffload)
	}},
	{when: func(b *builder) bool { return b.r.Extra["backend"] == "xpu-ipex-old" || b.r.Extra["backend"] == "xpu" }, then: (*builder).xpuSingleBlock},
	{when: func(b *builder) bool {
		return b.r.Format == FormatTFBFC || b.r.Framework == FrameworkTensorFlow && b.r.Format != FormatXLA
	}, then: (*builder).tfTensor},
	{when: func(b *builder) bool { return b.r.Format == FormatXLA || b.r.Framework == FrameworkJAX }, then: (*builder).xlaProgram},
}

// vllmKVBudget is vLLM's KV cache that does not fit its budget.
func (b *builder) vllmKVBudget() {
	r := b.r
	ev := "vLLM could not fit the KV cache for one full-length request in its memory budget"
	if n, ok := r.Extra["max_seq_len"].(int); ok {
		if kv, ok := r.Extra["kv_cache_tokens"].(int); ok {
			ev = fmt.Sprintf("max_model_len %d needs more KV cache than the %d tokens that fit", n, kv)
		}
	}
	b.cause(CauseVLLM, "vLLM's KV cache does not fit in gpu_memory_utilization × GPU after the weights", ev,
		fix.MaxModelLen, fix.GPUMemoryUtilization, fix.FP8KVCache, fix.TensorParallel, fix.NF4Weights, fix.BiggerGPU)
}

// xpuSingleBlock is Intel GPUs' 4 GiB limit on one allocation.
func (b *builder) xpuSingleBlock() {
	r := b.r
	if t := r.TriedToAllocateBytes; t != nil && *t > 4*gib && val(r.AllocatedByFrameworkBytes) == 0 {
		b.cause(CauseSingleBlockLimit, "Intel GPUs refuse single allocations above 4 GiB by default",
			fmt.Sprintf("one allocation of %s on an otherwise empty XPU", GiB(*t)), fix.GradAccum, fix.XPULargeAllocations)
	}
}

// tfTensor is a tensor TensorFlow's BFC allocator could not place.
func (b *builder) tfTensor() {
	ev := "TensorFlow's BFC allocator could not place the tensor"
	if s, ok := b.r.Extra["shape"].([]int); ok && len(s) > 0 {
		ev = fmt.Sprintf("tensor of shape %v (%s as float32); the first dimension is usually the batch", s, GiB(shapeBytes(s, 4)))
	}
	b.cause(CauseTFPrealloc, "The tensor does not fit in TensorFlow's GPU allocator", ev, fix.GradAccum, fix.MixedPrecision, fix.TFMemoryGrowth)
}

// xlaProgram is an XLA program (JAX, TensorFlow on TPU) that does not fit.
func (b *builder) xlaProgram() {
	r := b.r
	ev := "XLA could not allocate the buffer"
	if u, ok := r.Extra["hbm_used_bytes"].(int64); ok && r.TotalCapacityBytes != nil {
		ev = fmt.Sprintf("the compiled program needs %s of HBM; the chip has %s", GiB(u), GiB(*r.TotalCapacityBytes))
	}
	fixes := []string{fix.JAXMemFraction, fix.GradAccum, fix.GradCheckpointing, fix.Zero3}
	if r.Framework == FrameworkTensorFlow {
		// TensorFlow on a TPU: XLA's own limit, with Keras's knobs (JAX's
		// allocator fraction and sharding do not apply).
		fixes = []string{fix.GradAccum, fix.MixedPrecision, fix.GradCheckpointing}
	}
	b.cause(CauseJAXPrealloc, "The XLA program does not fit in device memory", ev, fixes...)
}

func shapeBytes(shape []int, elem int64) int64 {
	n := elem
	for _, d := range shape {
		if d <= 0 || n > (1<<62)/int64(d) {
			return n
		}
		n *= int64(d)
	}
	return n
}

// byPhase adds the cause the phase points at.
func (b *builder) byPhase() {
	r := b.r
	ev := "the stack shows it"
	if r.PhaseEvidence != "" {
		ev = "the stack shows " + r.PhaseEvidence
	}
	if r.Extra["stack"] == StackLlamaCPP || r.Extra["stack"] == StackOllama || r.Extra["kind"] == KindNCCL {
		return // llama.cpp's buffers and NCCL's say more than the phase
	}
	graphStack := b.stack == fix.FrameworkKeras || b.stack == fix.FrameworkJAX
	switch r.Phase {
	case PhaseLoad:
		if r.Format == FormatVLLMKV || r.Framework == FrameworkVLLM || r.Extra["stack"] != nil || r.Device != nil && *r.Device == "cpu" {
			// Engines and host RAM have their own reading.
			return
		}
		title, evidence := "The model's weights do not fit while loading", ev
		if est, ok := weightsEstimate(r); ok {
			evidence += "; " + est
		}
		b.cause(CauseLoad, title, evidence, fix.NF4Weights, fix.LayerOffload, fix.KillOtherProcess, fix.BiggerGPU)
	case PhaseBackward, PhaseForward:
		if graphStack {
			// Keras and JAX: the batch and precision are the levers.
			b.cause(CauseForward, "Activations of the batch do not fit", ev, fix.GradAccum, fix.MixedPrecision, fix.GradCheckpointing, fix.MixedPrecision, fix.GradCheckpointing)
		} else if r.Phase == PhaseBackward {
			b.cause(CauseBackward, "Activations saved for backward exceed the memory left after weights, gradients and optimizer states", ev,
				fix.GradAccum, fix.GradCheckpointing, fix.MixedPrecision, fix.FlashAttention, fix.LoRA, fix.Optim8bit, fix.Zero2)
		} else {
			b.cause(CauseForward, "Forward activations of the batch do not fit", ev,
				fix.GradAccum, fix.GradCheckpointing, fix.MixedPrecision, fix.FlashAttention, fix.InferenceMode)
		}
	case PhaseOptimizer:
		if b.has(CauseOptimizerInit) {
			return
		}
		b.cause(CauseOptimizer, "Optimizer states (Adam keeps two fp32 copies per parameter) do not fit", ev,
			fix.Optim8bit, fix.LoRA, fix.Zero2, fix.BiggerGPU)
	case PhaseEval:
		b.cause(CauseEval, "Evaluation keeps more than it needs: autograd graphs, accumulated outputs, a bigger eval batch", ev,
			fix.InferenceMode, fix.ItemForLoggedLosses, fix.FreeReferences, fix.SmallerEvalBatch, fix.MixedPrecision)
	case PhaseGenerate:
		b.cause(CauseGenerate, "Generation's KV cache and logits grow with batch × length", ev,
			fix.InferenceMode, fix.SmallerBatch, fix.MaxModelLen, fix.NF4Weights)
	}
}

// weightsEstimate states the weights size from the estimator when the
// paste names a model the catalog knows, and sets the bigger-GPU need.
func weightsEstimate(r Report) (string, bool) {
	if r.ModelHint == nil {
		return "", false
	}
	m, ok := catalog.LookupModel(*r.ModelHint)
	if !ok {
		return "", false
	}
	br := memory.Estimate(memory.Workload{ModelName: m.Name, Method: memory.MethodInference, Precision: memory.PrecisionBF16, Batch: 1, SeqLen: 2048})
	s := fmt.Sprintf("%s's weights alone are about %s in bf16 (estimate; %s with a 2k-token request)", m.Name, GiB(br.WeightsBytes), GiB(br.TotalBytes))
	if r.TotalCapacityBytes != nil {
		s += fmt.Sprintf(", on a %s GPU", GiB(*r.TotalCapacityBytes))
	}
	return s, true
}

// loadNeed is the per-GPU memory the hardware stage asks for when the
// paste names a known model that failed to load.
func loadNeed(r Report) int64 {
	if r.Phase != PhaseLoad || r.ModelHint == nil {
		return 0
	}
	m, ok := catalog.LookupModel(*r.ModelHint)
	if !ok {
		return 0
	}
	return memory.Estimate(memory.Workload{ModelName: m.Name, Method: memory.MethodInference, Precision: memory.PrecisionBF16, Batch: 1, SeqLen: 2048}).TotalBytes
}

// GiB formats bytes as the frameworks do ("2.00 GiB", "512.00 MiB").
func GiB(n int64) string {
	switch {
	case n < 0:
		return "-" + GiB(-n)
	case n >= gib:
		return fmt.Sprintf("%.2f GiB", float64(n)/float64(gib))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/float64(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2f KiB", float64(n)/float64(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
