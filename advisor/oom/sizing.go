package oom

import (
	"fmt"
	"math"
	"strings"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/advisor/memory"
	"github.com/vrambot/vrambot/advisor/plan"
)

// Sizing is the estimator's view of the workload the paste names, when it
// names one (a catalog model, with a batch, a sequence length or a config):
// the same estimate and plan /vram gives, so the fixes carry their savings.
type Sizing struct {
	Workload memory.Workload  `json:"workload"`
	Estimate memory.Breakdown `json:"estimate"`
	GPU      string           `json:"gpu"`
	// UsableBytes is the GPU's memory the estimate is compared with: the
	// paste's total capacity when it gives one.
	UsableBytes int64      `json:"usable_bytes"`
	Fit         memory.Fit `json:"fit"`
	// plan holds the quantified fixes by id, for the stages; microBatch is
	// the micro-batch the plan ends with.
	plan       map[string]fix.Fix
	microBatch int
}

// contextShare is how close to an engine's own estimate of the longest
// context that fits a proposed cap stays: at most the estimate and no more
// than a fifth below it, rounded as far as that allows.
const contextShare = 0.8

// cappedContext is the context length to propose when est tokens fit: the
// largest power of two, else multiple of 1024 (256, 64), that is at most
// est and at least contextShare of it.
func cappedContext(est int) int {
	if est <= 0 {
		return 0
	}
	lo := int(math.Ceil(contextShare * float64(est)))
	p := 1
	for p*2 <= est {
		p *= 2
	}
	if p >= lo {
		return p
	}
	for _, step := range []int{1024, 256, 64, 16} {
		if v := est / step * step; v >= lo && v > 0 {
			return v
		}
	}
	return est
}

// vllmDefaultUtilization is vLLM's default gpu_memory_utilization.
const vllmDefaultUtilization = 0.9

// engineNeed is the per-GPU memory on which an engine that failed to size
// its KV cache would start with the context it was asked for, from its
// own numbers: what it holds besides the KV cache (budget minus the KV
// memory it had) plus the KV cache it needed, over the same utilization.
// 0 when the paste does not give the numbers.
func engineNeed(total int64, util float64, kvAvailable, kvNeeded int64) int64 {
	if total <= 0 || kvNeeded <= kvAvailable || kvAvailable < 0 {
		return 0
	}
	if util <= 0 || util > 1 {
		util = vllmDefaultUtilization
	}
	other := util*float64(total) - float64(kvAvailable)
	if other < 0 {
		return 0
	}
	return int64(math.Ceil((other + float64(kvNeeded)) / util))
}

// ggmlBitsPerWeight are the average bits per weight of GGUF quantisation
// types (llama.cpp's quantize tool lists them), for the size of the same
// model in a smaller type.
var ggmlBitsPerWeight = map[string]float64{
	"F16": 16, "BF16": 16, "Q8_0": 8.5, "Q6_K": 6.56, "Q5_K_M": 5.69, "Q5_K_S": 5.54, "Q5_0": 5.5, "Q5_1": 6,
	"Q4_K_M": 4.85, "Q4_K_S": 4.58, "Q4_0": 4.5, "Q4_1": 5, "IQ4_XS": 4.25, "IQ4_NL": 4.5, "Q3_K_M": 3.91, "Q3_K_L": 4.27, "Q3_K_S": 3.5, "Q2_K": 2.63,
}

// smallerQuant is the 4-bit type proposed in place of a bigger one.
const smallerQuant = "Q4_K_M"

// quantSteps are the GGUF types a model is commonly published in, largest
// first: the next smaller one is what a model that does not fit steps down
// to (a 4-bit model to a 3-bit one).
var quantSteps = []string{"F16", "BF16", "Q8_0", "Q6_K", "Q5_K_M", "Q5_K_S", "Q4_K_M", "Q4_K_S", "IQ4_XS", "Q3_K_M", "IQ3_XS", "Q2_K"}

// nextQuant is the GGUF type to step down to from q: Q4_K_M for anything
// above 4.5 bits, else the next of quantSteps; "" when q is the smallest
// or unknown.
func nextQuant(q string) string {
	bits, ok := ggmlBitsPerWeight[q]
	if !ok {
		return ""
	}
	if bits > ggmlBitsPerWeight[smallerQuant]+0.5 {
		return smallerQuant
	}
	for _, t := range quantSteps {
		if b, ok := ggmlBitsPerWeight[t]; ok && b < bits-0.3 {
			return t
		}
	}
	return ""
}

// ggmlComputeReserve is what llama.cpp's compute buffer is taken to need
// when the log has not printed it yet (it is allocated after the KV
// cache): about a GiB for a 16k context on a large model.
const ggmlComputeReserve = gib

// ggmlMargin is what llama.cpp needs on the GPU beyond its buffers: the
// CUDA context and the scratch of the backend (~300-500 MiB).
const ggmlMargin = 512 << 20

// ggmlSizes is what the llama.cpp numbers say fits: the layers to keep on
// the GPU (-ngl), the context (-c), the weights in a 4-bit type, and the
// memory the GPU would need to hold it all. Zero values are unknown.
type ggmlSizes struct {
	free, weights, kv, compute, need int64
	// perLayer is what one layer on the GPU costs (its weights and KV).
	perLayer                       int64
	layers, fitLayers, ctx, fitCtx int
	// quant is the GGUF type loaded, smaller the one to step down to and
	// weightsSmaller the GPU's weights in it.
	quant, smaller string
	weightsSmaller int64
}

// sizeGGML reads the sizes from the report: the engine numbers the log
// printed, with the failed buffer counted where it belongs.
func sizeGGML(r Report, total int64) ggmlSizes {
	e := r.Facts.Engine
	s := ggmlSizes{free: e.GPUFreeBytes, weights: e.GPUModelBytes, kv: e.GPUKVBytes, compute: e.GPUComputeBytes,
		layers: max(e.OffloadedLayers, e.Layers), ctx: e.Ctx, quant: r.Facts.Workload.Quant}
	if s.free == 0 {
		s.free = total
	}
	if t := r.TriedToAllocateBytes; t != nil && r.Device != nil && strings.HasPrefix(*r.Device, "cuda") {
		switch r.Facts.GGMLBuffer {
		case "kv":
			s.kv = max(s.kv, *t)
		case "compute":
			s.compute = max(s.compute, *t)
		case "weights":
			s.weights = max(s.weights, *t)
		}
	}
	if s.weights == 0 && e.RepeatingWeightsBytes > 0 && e.Layers > 1 && e.OffloadedLayers > 0 {
		// Ollama's plan: its repeating layers' weights, for the layers it offloads.
		s.weights = e.RepeatingWeightsBytes * int64(min(e.OffloadedLayers, e.Layers-1)) / int64(e.Layers-1)
	}
	if s.weights == 0 || s.free == 0 {
		return s
	}
	s.need = s.weights + s.kv + s.compute + ggmlMargin
	if s.need <= s.free {
		// The logged buffers fit: the numbers do not explain the failure.
		s.need = 0
		return s
	}
	if onGPU := layersOnGPU(r, s.layers); onGPU > 1 {
		s.perLayer = layerCost(r, s, onGPU)
		compute := s.compute
		if compute == 0 {
			compute = ggmlComputeReserve
		}
		if room := s.free - compute - ggmlMargin; room > 0 && s.perLayer > 0 {
			s.fitLayers = min(onGPU-1, int(room/s.perLayer))
		}
	}
	if s.kv > 0 && s.ctx > 0 {
		perToken := float64(s.kv) / float64(s.ctx)
		if room := s.free - s.weights - s.compute - ggmlMargin; room > 0 {
			if n := int(float64(room) / perToken); n >= 512 && n < s.ctx {
				s.fitCtx = cappedContext(n)
			}
		}
	}
	if s.smaller = nextQuant(s.quant); s.smaller != "" {
		s.weightsSmaller = int64(float64(s.weights) * ggmlBitsPerWeight[s.smaller] / ggmlBitsPerWeight[s.quant])
	}
	return s
}

// layersOnGPU is how many layers the failing run put on the GPU: what
// llama.cpp logged it offloaded, else the -ngl asked (99 is "all"), else
// every layer.
func layersOnGPU(r Report, layers int) int {
	e, w := r.Facts.Engine, r.Facts.Workload
	switch {
	case e.OffloadedLayers > 0:
		return e.OffloadedLayers
	case w.GPULayers > 0 && layers > 0:
		return min(w.GPULayers, layers)
	}
	return layers
}

// layerCost is what one layer on the GPU costs: its weights and its share
// of the KV cache, since llama.cpp keeps a layer's cache on the layer's
// device (docs/oom-diagnosis.md §5). The weights are the GPU buffer over
// its layers (or Ollama's repeating weights over the model's); the KV
// cache the GPU's KV buffer over its layers, else Ollama's whole cache
// over the model's layers, else the context times what a token of one
// layer takes (print_info's n_embd_k_gqa + n_embd_v_gqa in the cache's
// type).
func layerCost(r Report, s ggmlSizes, onGPU int) int64 {
	e := r.Facts.Engine
	repeating := max(1, e.Layers-1) // llama.cpp counts the output layer as one more
	weights := s.weights / int64(onGPU)
	if e.GPUModelBytes == 0 && r.Facts.GGMLBuffer != "weights" && e.RepeatingWeightsBytes > 0 {
		weights = e.RepeatingWeightsBytes / int64(repeating)
	}
	var kv int64
	switch {
	case s.kv > 0:
		kv = s.kv / int64(onGPU)
	case e.OllamaKVBytes > 0:
		kv = e.OllamaKVBytes / int64(repeating)
	case e.KVTokenLayerBytes > 0:
		ctx := max(s.ctx, r.Facts.Workload.NCtx)
		kv = int64(ctx) * e.KVTokenLayerBytes
	}
	return weights + kv
}

// gpuOf is the GPU the paste ran on: the catalog card whose usable memory
// is the reported total (within gpuMatch), else the one the paste names,
// else a card of the reported size.
func gpuOf(r Report) (catalog.GPU, bool) {
	var total int64
	if r.TotalCapacityBytes != nil {
		total = *r.TotalCapacityBytes
	}
	if r.GPUHint != nil {
		if g, ok := catalog.LookupGPU(*r.GPUHint); ok && (total == 0 || within(g.UsableBytes, total, gpuMatch)) {
			return g, true
		}
	}
	if total <= 0 {
		return catalog.GPU{}, false
	}
	best, found := catalog.GPU{}, false
	vendor := pasteVendor(r)
	for _, g := range catalog.GPUs() {
		if vendor != "" && g.Vendor != vendor {
			continue
		}
		if within(g.UsableBytes, total, gpuMatch) && (!found || abs(g.UsableBytes-total) < abs(best.UsableBytes-total)) {
			best, found = g, true
		}
	}
	if found {
		return best, true
	}
	return catalog.GPU{Name: GiB(total) + " GPU", MemoryBytes: total, UsableBytes: total, BF16: true, Source: "the total capacity in the paste"}, true
}

// pasteVendor is the vendor whose cards the paste's message comes from
// ("" when it does not say): a 16 GB card in a HIP message is AMD's, never
// an NVIDIA card of the same size.
func pasteVendor(r Report) string {
	switch {
	case r.Format == FormatHIP || r.Framework == FrameworkROCm:
		return "AMD"
	case r.Format == FormatMPS:
		return "Apple"
	case r.Device != nil && strings.HasPrefix(*r.Device, "xpu"):
		return "Intel"
	}
	return ""
}

// gpuMatch is how close a catalog card's usable memory must be to the
// paste's total to be taken for it (drivers and MIG report a little less).
const gpuMatch = 0.03

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

func within(a, b int64, share float64) bool {
	return math.Abs(float64(a-b)) <= share*float64(b)
}

// hintGPUBytes is the usable memory of the GPU the paste names, or 0.
func hintGPUBytes(r Report) int64 {
	if r.GPUHint == nil {
		return 0
	}
	if g, ok := catalog.LookupGPU(*r.GPUHint); ok {
		return g.UsableBytes
	}
	return 0
}

// estimate runs the estimator and the planner on the workload the paste
// names: a catalog model (or the parameter count PEFT prints) with a
// batch, a sequence length, or settings that say how it was trained or
// served. It returns nil when the paste does not name one, and for
// llama.cpp whose own buffer sizes say more; model lookup is the catalog's
// only (no network here).
func estimate(r Report, stack fix.Framework) *Sizing {
	e := r.Facts.Engine
	if e.GPUModelBytes > 0 && e.GPUFreeBytes > 0 {
		return nil
	}
	w, ok := workloadOf(r)
	if !ok {
		return nil
	}
	gpu, ok := gpuOf(r)
	if !ok {
		return nil
	}
	return size(w, gpu, stack)
}

// estimateJob sizes the job a paste holds on the GPU the paste measured
// (its total capacity), else the one the job names; nil when neither says.
// An engine's own buffer sizes (llama.cpp) say more than any estimate.
func estimateJob(r Report, j PastedJob, stack fix.Framework) *Sizing {
	e := r.Facts.Engine
	if e.GPUModelBytes > 0 && e.GPUFreeBytes > 0 {
		return nil
	}
	gpu, ok := gpuOf(r)
	if !ok && j.HasGPU {
		gpu, ok = j.GPU, true
	}
	if !ok {
		return nil
	}
	w := j.Workload
	overlayRun(r, &w)
	w.GPUs = max(w.GPUs, 1)
	return size(w, gpu, stack)
}

// overlayRun applies what only the paste knows to the job's workload:
// an OOM in the full logits' loss computed the standard one, whatever the
// stack's default, and the trainable count PEFT printed fixes the
// adapter's shape. The run's settings themselves (its batch, sequence,
// precision) are taken over the job's before it is read (RunPrecision,
// PasteGPU; command/oom).
func overlayRun(r Report, w *memory.Workload) {
	if w.Method == memory.MethodInference {
		return
	}
	pw := r.Facts.Workload
	if w.Method.IsAdapter() && pw.TrainableParams > 0 && w.LoRARank == 0 {
		fitLoRA(w, pw.TrainableParams)
	}
	if r.Job != nil && r.Job.Where == WhereLogits {
		w.Loss = memory.LossStandard
	}
}

// RunPrecision is the weights' storage and compute regime the paste shows
// for a job of method ("" when it shows none): a GGUF type, a quantisation,
// or the 16-bit dtype (AMP for full training).
func RunPrecision(r Report, method memory.Method) memory.Precision {
	w := memory.Workload{Method: method}
	setPrecision(r.Facts.Workload, &w)
	return w.Precision
}

// PasteGPU is the GPU the paste measured: the card its total capacity
// (or its named GPU) matches, else a GPU of that capacity.
func PasteGPU(r Report) (catalog.GPU, bool) { return gpuOf(r) }

// size runs the estimator and the planner on w for gpu, whose memory is
// what the tools that size their buffers by free memory see.
func size(w memory.Workload, gpu catalog.GPU, stack fix.Framework) *Sizing {
	w.GPUMemoryBytes = gpu.UsableBytes
	w = memory.Resolve(w)
	est := memory.Estimate(w)
	fit, _ := memory.Assess(est, gpu)
	s := &Sizing{Workload: w, Estimate: est, GPU: gpu.Name, UsableBytes: gpu.UsableBytes, Fit: fit, plan: map[string]fix.Fix{}}
	if stack == stackNone {
		stack = fix.FrameworkPyTorch
	}
	p := plan.Plan(w, gpu, stack)
	s.microBatch = p.Final.Batch
	stages := p.Stages
	if p.ScaleOut != nil {
		stages = append(stages, p.ScaleOut.Stages...)
	}
	for _, st := range stages {
		for _, f := range st.Fixes {
			if _, seen := s.plan[f.ID]; !seen {
				s.plan[f.ID] = f
			}
		}
	}
	return s
}

// workloadOf is the estimator's workload for the job the paste shows:
// its model, method, precision, sizes, sharding and engine as read.
func workloadOf(r Report) (memory.Workload, bool) {
	pw := r.Facts.Workload
	m, ok := catalog.LookupModel(pw.Model)
	if !ok && r.ModelHint != nil {
		m, ok = catalog.LookupModel(*r.ModelHint)
	}
	w := memory.Workload{Model: m, ModelName: m.Name, Batch: pw.Batch, SeqLen: pw.SeqLen, GPUs: max(1, pw.GPUs), TP: pw.TP}
	if !ok {
		// PEFT's "all params" is the model's size, but for 4-bit weights it
		// counts each packed pair as one.
		if pw.AllParams <= 0 || pw.Quantization == "bnb-4bit" || pw.Method == "qlora" {
			return memory.Workload{}, false
		}
		w = memory.Workload{Params: pw.AllParams - pw.TrainableParams, Batch: pw.Batch, SeqLen: pw.SeqLen, GPUs: max(1, pw.GPUs)}
		w.Assumptions = append(w.Assumptions, fmt.Sprintf("the model is no catalog model: a typical architecture of the %s parameters PEFT prints", paramWords(pw.AllParams)))
	}
	if pw.Batch == 0 && pw.SeqLen == 0 && pw.Method == "" && pw.ZeroStage < 0 && pw.MaxModelLen == 0 && pw.NCtx == 0 {
		return memory.Workload{}, false
	}
	if pw.AccumSteps > 1 {
		w.Assumptions = append(w.Assumptions, fmt.Sprintf("gradient_accumulation_steps %d does not change memory: the micro-batch is %d", pw.AccumSteps, pw.Batch))
	}
	setMethod(r, &w)
	setPrecision(pw, &w)
	if pw.GradCheckpointing != nil {
		w.GradCheckpointing = *pw.GradCheckpointing
	}
	if pw.ZeroStage > 0 {
		w.ZeroStage = pw.ZeroStage
	}
	switch pw.Sharding {
	case "full-shard":
		w.Sharding, w.ZeroStage = memory.ShardingFSDP, 3
	case "shard-grad-op":
		w.Sharding, w.ZeroStage = memory.ShardingFSDP, 2
	}
	switch pw.Offload {
	case "optimizer":
		w.Offload = memory.OffloadOptimizer
	case "param":
		w.Offload = memory.OffloadParam
	}
	if w.Method.IsAdapter() && pw.TrainableParams > 0 {
		fitLoRA(&w, pw.TrainableParams)
	}
	if w.Method != memory.MethodInference {
		w.Framework = memory.Framework(pw.Trainer)
		if r.Job != nil && r.Job.Where == WhereLogits {
			// The OOM is in the full logits' loss: whatever the stack's
			// default, this run computes the standard one.
			w.Loss = memory.LossStandard
		}
	}
	return w, true
}

// setMethod sets the method and the serving engine the paste shows.
func setMethod(r Report, w *memory.Workload) {
	pw := r.Facts.Workload
	switch {
	case pw.Method == "qlora":
		w.Method, w.Precision = memory.MethodQLoRA, memory.PrecisionNF4
	case pw.Method == "lora":
		w.Method = memory.MethodLoRA
	case pw.Method == "inference" || r.Framework == FrameworkVLLM || r.Phase == PhaseGenerate || r.Phase == PhaseEval || r.Phase == PhaseLoad && !training(r):
		w.Method = memory.MethodInference
	default:
		w.Method = memory.MethodFull
	}
	if w.Method != memory.MethodInference {
		return
	}
	switch pw.Engine {
	case EngineVLLM, EngineSGLang, EngineTGI:
		w.Engine = pw.Engine
		if pw.MaxModelLen > 0 {
			w.SeqLen = pw.MaxModelLen
		}
	case EngineLlamaCPP, EngineOllama:
		w.Engine = pw.Engine
		if pw.NCtx > 0 {
			w.SeqLen = pw.NCtx
		}
	}
	if r.Framework == FrameworkVLLM && w.Engine == "" {
		w.Engine = EngineVLLM
	}
	if w.Engine == EngineVLLM && pw.GPUMemoryUtilization > 0 {
		w.GPUMemoryUtilization = pw.GPUMemoryUtilization
	}
}

// setPrecision sets the weights' storage and the compute regime read.
func setPrecision(pw PasteWorkload, w *memory.Workload) {
	if w.Precision != "" {
		return
	}
	if q := memory.Precision(strings.ToLower(pw.Quant)); pw.Quant != "" && memory.IsCheckpointPrecision(q) {
		w.Precision = q
		return
	}
	switch pw.Quantization {
	case "bnb-4bit":
		w.Precision = memory.PrecisionNF4
		return
	case "bnb-8bit":
		w.Precision = memory.PrecisionInt8
		return
	case "awq", "awq_marlin":
		w.Precision = memory.PrecisionAWQ
		return
	case "gptq", "gptq_marlin":
		w.Precision = memory.PrecisionGPTQ
		return
	case "fp8":
		w.Precision = memory.PrecisionFP8
		return
	}
	// An adapter's base weights stay in the 16-bit dtype they were loaded
	// in; AMP keeps fp32 copies of the adapters only.
	inference := w.Method == memory.MethodInference || w.Method.IsAdapter()
	switch {
	case pw.Precision == "bf16" && inference:
		w.Precision = memory.PrecisionBF16
	case pw.Precision == "bf16":
		w.Precision = memory.PrecisionMixedBF16
	case pw.Precision == "fp16" && inference:
		w.Precision = memory.PrecisionFP16
	case pw.Precision == "fp16":
		w.Precision = memory.PrecisionMixedFP16
	}
}

// loraShapes are the adapter shapes tried against the trainable count
// the paste prints: PEFT's default (r=8 on q,v) first.
var loraShapes = []struct {
	rank    int
	targets string
}{{8, "qv"}, {16, "qv"}, {4, "qv"}, {32, "qv"}, {64, "qv"}, {8, "all"}, {16, "all"}, {32, "all"}, {64, "all"}, {128, "all"},
	{4, "all"}, {256, "all"}, {8, "attn"}, {16, "attn"}, {32, "attn"}, {64, "attn"}}

// loraMatch is how close a shape's trainable count must be to the paste's.
const loraMatch = 0.02

// fitLoRA sets the LoRA rank and targets whose trainable parameters match
// the count the paste prints, and says so; the defaults stand when none
// does.
func fitLoRA(w *memory.Workload, trainable int64) {
	for _, sh := range loraShapes {
		c := *w
		c.LoRARank, c.LoRATargets, c.Assumptions = sh.rank, sh.targets, nil
		c = memory.Resolve(c)
		if within(c.TrainableParams, trainable, loraMatch) {
			w.LoRARank, w.LoRATargets = sh.rank, sh.targets
			w.Assumptions = append(w.Assumptions, fmt.Sprintf("LoRA rank %d on %s: the %s trainable parameters the paste prints", sh.rank, loraTargetWords[sh.targets], paramWords(trainable)))
			return
		}
	}
}

var loraTargetWords = map[string]string{"qv": "q and v", "attn": "the attention projections", "all": "all linear layers"}

// paramWords writes a parameter count as people say it ("3.8M", "8.19B").
func paramWords(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
	return fmt.Sprintf("%d", n)
}

// training reports a paste that shows a training step.
func training(r Report) bool {
	return r.Facts.Workload.Method != "" || r.Facts.Workload.ZeroStage >= 0 || r.Facts.Workload.AccumSteps > 0
}

// vllmEstimate is the estimator's memory for one request of seq tokens of
// the model the paste names, served by vLLM: the smallest GPU it starts on
// (memory.Breakdown's vLLM semantics). 0 when the catalog does not know
// the model.
func vllmEstimate(r Report, seq int) int64 {
	name := r.Facts.Workload.Model
	if name == "" && r.ModelHint != nil {
		name = *r.ModelHint
	}
	m, ok := catalog.LookupModel(name)
	if !ok || seq <= 0 {
		return 0
	}
	w := memory.Resolve(memory.Workload{Model: m, ModelName: m.Name, Method: memory.MethodInference, Precision: memory.PrecisionBF16,
		Batch: 1, SeqLen: seq, Engine: "vllm"})
	return memory.Estimate(w).TotalBytes
}
