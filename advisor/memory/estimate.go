package memory

import (
	"math"

	"github.com/vrambot/vrambot/advisor/arch"
	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/serving"
)

// Calibration terms. Each is a physical quantity with its source; none is
// fitted to a single case. Formulas: docs/memory-model.md.
const (
	// nf4BytesPerParam is 4 bits plus one fp32 absmax per 64 weights (QLoRA
	// paper §3, bitsandbytes default: no double quantisation).
	nf4BytesPerParam = 0.5 + 4.0/64
	// nf4DoubleQuantBytesPerParam quantises those scales again: 0.127 bits
	// per parameter of overhead instead of 0.5 (QLoRA paper §3); torchao's
	// NF4 (torchtune) and Unsloth's 4-bit loading store weights this way.
	nf4DoubleQuantBytesPerParam = 0.5 + 0.127/8
	// int8BytesPerParam is LLM.int8: one byte plus an fp32 scale per row,
	// which is negligible.
	int8BytesPerParam = 1.0

	// adamStateBytesFP32 is AdamW's exp_avg and exp_avg_sq in fp32; pure
	// 16-bit training (torchtune, litgpt bf16-true) keeps them in bf16 (4 B).
	adamStateBytesFP32 = 8
	// adam8bitStateBytes is bitsandbytes 8-bit Adam: two 1-byte states,
	// each with a float32 absmax per block of 256 ("75% less memory",
	// bitsandbytes docs; Optimizer2State's blockwise state). torchao's
	// AdamW8bit is the same: 1 byte and a float32 scale per 256 values.
	adam8bitStateBytes = 2 * (1 + 4.0/256)
	// adam4bitStateBytes is torchao's AdamW4bit: two states of 4-bit codes
	// with a float32 scale per 128 values (torchao/optim/README.md,
	// subclass_4bit.py OptimState4bit.zeros).
	adam4bitStateBytes = 2 * (0.5 + 4.0/128)
	// adamFP8StateBytes is torchao's AdamWFp8: two float8 e4m3 states with
	// a float32 scale per 256 values.
	adamFP8StateBytes = 2 * (1 + 4.0/256)
	// sgdMomentumBytesFP32 is SGD's momentum buffer (EleutherAI Transformer Math 101).
	sgdMomentumBytesFP32 = 4
	// masterWeightBytes is the fp32 master copy kept under mixed precision (ZeRO paper K=12 = 4+4+4).
	masterWeightBytes = 4
	// fp32GradPartitionBytes is the fp32 gradient partition DeepSpeed ZeRO
	// keeps next to the master weights (the 18 of estimate_zero2/3_model_states_mem_needs:
	// 2 fp16 grads + 4 fp32 grads + 4 fp32 params + 8 Adam).
	fp32GradPartitionBytes = 4

	// logitsUpcastBytes: cross-entropy upcasts the logits to fp32 and its
	// backward materialises an fp32 gradient of the same size (docs/memory-model.md
	// §5: b·s·V·(2+4+4)).
	logitsUpcastBytes = 4 + 4

	// cudaContextBytes is what nvidia-smi shows beyond PyTorch's reserved
	// memory: the CUDA context and the cuBLAS/cuDNN kernels and workspaces.
	// Measured: 287 MB context alone with lazy loading (pytorch/pytorch#86509),
	// ~300-400 MB (#107667, #109888), 1343 MiB with eager loading (HF
	// model_memory_anatomy, V100, CUDA 11.2); a training process that has run
	// its kernels sits between, so 768 MiB.
	cudaContextBytes = 768 << 20
	// PyTorch's caching allocator reserves more than it hands out. Static
	// tensors (weights, optimizer state) sit in exactly sized large blocks
	// (2 MiB rounding): staticSlack. Activations, logits and caches are
	// allocated and freed every step and fragment the cache (PyTorch devlog
	// "When does fragmentation occur in the CUDA caching allocator?"):
	// dynamicSlack. The HF V100 table (nvidia-smi minus its measured 1343 MiB
	// context) shows ~1% over weights alone and 20-27% over activations.
	staticSlack  = 0.02
	dynamicSlack = 0.25
	// multiGPUCommBytes is NCCL's buffers and communicator state per GPU when
	// more than one GPU takes part (docs/memory-model.md §1.7: +1-2 GB with NCCL).
	multiGPUCommBytes = 1 << 30
)

// dtypes in bytes.
const (
	fp32Bytes = 4
	halfBytes = 2
)

// regime is how a precision setting stores each kind of tensor.
type regime struct {
	weight     float64 // bytes per non-quantised parameter
	quant      float64 // bytes per parameter of quantised linear layers (= weight when not quantised)
	grad       float64 // bytes per trainable parameter's gradient
	stateScale float64 // optimizer state size relative to fp32 states
	act        float64 // activation element bytes
	amp        bool    // autocast: fp32 parameters, 16-bit copies for the matmuls
}

func regimeFor(p Precision) regime {
	switch p {
	case PrecisionFP32:
		return regime{weight: 4, quant: 4, grad: 4, stateScale: 1, act: fp32Bytes}
	case PrecisionFP16, PrecisionBF16:
		return regime{weight: 2, quant: 2, grad: 2, stateScale: 0.5, act: halfBytes}
	case PrecisionMixedBF16, PrecisionMixedFP16:
		// The fp32 parameters are the master copy; no separate one.
		return regime{weight: 4, quant: 4, grad: 4, stateScale: 1, act: halfBytes, amp: true}
	case PrecisionInt8:
		return regime{weight: 2, quant: int8BytesPerParam, grad: 2, stateScale: 1, act: halfBytes}
	case PrecisionNF4:
		return regime{weight: 2, quant: nf4BytesPerParam, grad: 2, stateScale: 1, act: halfBytes}
	default:
		// bf16, and the checkpoint formats (fp8, awq, gguf...), whose
		// stored layers come from Model.Quant; the rest and the compute
		// are 16-bit.
		return regime{weight: 2, quant: 2, grad: 2, stateScale: 0.5, act: halfBytes}
	}
}

// Estimate returns the per-GPU memory of w (resolved first, so a raw workload
// is fine). All sizes are bytes on one GPU.
func Estimate(w Workload) Breakdown {
	w = resolve(w, false)
	if w.Method == MethodInference && serving.Engine(w.Engine).Serving() {
		return servingEstimate(w)
	}
	m := w.Model
	r := regimeFor(w.Precision)
	fw := frameworks[w.Framework]
	if w.Precision == PrecisionNF4 && (fw.torchaoNF4 || fw.doubleQuant) {
		r.quant = nf4DoubleQuantBytesPerParam
	}
	if fw.pureBF16 && (w.Precision == PrecisionNF4 || w.Precision == PrecisionInt8) {
		r.stateScale = 0.5 // the adapters and their optimizer states in bf16 too
	}
	// scale maps the architecture's own parameter count to w.Params (1 for
	// catalog models; corrects rounding of scaled ones).
	scale := float64(w.Params) / math.Max(1, float64(m.ComputeParams()))

	states := modelStates(w, m, r, scale)
	act := activationBytes(w, m, r) + dequantBufferBytes(w, m) + fusedExpertBytes(w, m, scale)
	// What the loss finds free on the GPU (torch.cuda.mem_get_info: the
	// device's free memory, so the CUDA context and what the allocator
	// has reserved are taken).
	free := math.Inf(1)
	if w.GPUMemoryBytes > 0 {
		free = float64(w.GPUMemoryBytes) - cudaContextBytes - (states.weights+states.optim)*(1+staticSlack) - act*(1+dynamicSlack)
	}
	logits := logitsBytes(w, m, r, free)
	kv := kvCacheBytes(w, m)

	peak := states.weights + states.grads + states.optim + act + logits + kv
	static := states.weights + states.grads + states.optim
	// The allocator keeps every segment it reserved: the loader's staging
	// buffer stays cached and the step's transients reuse it
	// (docs/memory-model.md §6.10).
	reserved := static*(1+staticSlack) + math.Max((peak-static)*(1+dynamicSlack), loadStagingBytes(w, m, scale))
	total := reserved + cudaContextBytes
	if w.GPUs > 1 {
		total += multiGPUCommBytes
	}
	b := Breakdown{
		WeightsBytes:       sat(states.weights),
		GradientsBytes:     sat(states.grads),
		OptimizerBytes:     sat(states.optim),
		ActivationsBytes:   sat(act),
		LogitsBytes:        sat(logits),
		KVCacheBytes:       sat(kv),
		PeakAllocatedBytes: sat(peak),
		ReservedBytes:      sat(reserved),
		TotalBytes:         sat(total),
	}
	b.RuntimeOverheadBytes = max(0, b.TotalBytes-b.PeakAllocatedBytes)
	return b
}

// sat converts to int64, saturating instead of overflowing.
func sat(v float64) int64 {
	switch {
	case math.IsNaN(v) || v <= 0:
		return 0
	case v >= math.MaxInt64/2:
		return math.MaxInt64 / 2
	default:
		return int64(math.Ceil(v))
	}
}

// states is the model-state part of a breakdown.
type states struct{ weights, grads, optim float64 }

// paramSplit is the resident parameter count by kind: the linear layers
// inside the blocks (attention, dense MLP, experts: what weight
// quantisation converts) and everything else (embeddings, lm_head, norms,
// routers, the vision tower: kept in 16-bit by bitsandbytes). MTP modules
// are not loaded (arch.Model.ResidentParams).
func paramSplit(m catalog.Model, scale float64) (linear, other float64) {
	for g, n := range m.ParamsByGroup() {
		switch arch.TensorGroup(g) {
		case arch.TensorMTP:
		case arch.TensorAttention, arch.TensorMLP, arch.TensorExperts, arch.TensorSharedExperts:
			linear += float64(n)
		default:
			other += float64(n)
		}
	}
	return linear * scale, other * scale
}

// quantisedWeightBytes is the resident weights of a pre-quantised
// checkpoint (m.Quant): each group at its stored bytes per parameter, the
// others at the regime's (linear layers at r.quant, the rest at r.weight).
func quantisedWeightBytes(m catalog.Model, r regime, scale float64) float64 {
	var b float64
	for g, n := range m.ParamsByGroup() {
		tg := arch.TensorGroup(g)
		switch {
		case tg == arch.TensorMTP:
		case m.Quant.Quantises(tg):
			b += float64(n) * m.Quant.BytesPerParam[g]
		case tg == arch.TensorAttention || tg == arch.TensorMLP || tg == arch.TensorExperts || tg == arch.TensorSharedExperts:
			b += float64(n) * r.quant
		default:
			b += float64(n) * r.weight
		}
	}
	return b * scale
}

// largestLayerParams is DeepSpeed's largest_layer_params: the biggest single
// module, gathered whole under ZeRO-3 (usually the embedding).
func largestLayerParams(m catalog.Model) float64 {
	largest := float64(m.EmbeddingParams())
	for i := range m.NumLayerGroups() {
		s := shapeAt(m, i)
		largest = math.Max(largest, s.h*math.Max(s.widestLinear, s.q))
	}
	return largest
}

// optimizerStateBytes is the optimizer state per trainable parameter,
// excluding any fp32 master copy.
func optimizerStateBytes(w Workload, m catalog.Model, r regime) float64 {
	switch w.Optimizer {
	case OptimizerAdamW:
		return adamStateBytesFP32 * r.stateScale
	case OptimizerAdamW8bit:
		return adam8bitStateBytes
	case OptimizerAdamW4bit:
		return adam4bitStateBytes
	case OptimizerAdamWFP8:
		return adamFP8StateBytes
	case OptimizerPagedAdamW8bit:
		return 0 // in unified memory, outside the allocator (see Resolve's assumption)
	case OptimizerAdafactor:
		// Factored second moment: an h×k matrix keeps h+k fp32 values, about
		// 2/h of a value per parameter; no first moment by default.
		return fp32Bytes * 2 / math.Max(1, float64(m.HiddenSize))
	case OptimizerSGD:
		return sgdMomentumBytesFP32 * r.stateScale
	default:
		return 0
	}
}

// dequantBufferBytes is the transient 16-bit copy a bitsandbytes 4/8-bit
// layer makes of its weight for each matmul (dequantize_4bit, then
// F.linear): one copy of the largest quantised matrix at a time.
func dequantBufferBytes(w Workload, m catalog.Model) float64 {
	if w.Precision != PrecisionNF4 && w.Precision != PrecisionInt8 {
		return 0
	}
	var largest float64
	for i := range m.NumLayerGroups() {
		s := shapeAt(m, i)
		largest = math.Max(largest, s.h*math.Max(s.widestLinear, s.q))
	}
	return largest * halfBytes / float64(w.TP)
}

// loadStagingBytes is the loader's transient the caching allocator keeps
// reserved after loading (docs/memory-model.md §6.10): a bitsandbytes base
// is quantised on the GPU as it loads (transformers' bnb quantizer moves
// each 16-bit weight there and converts it; Params4bit.cuda), and the
// 16-bit tensors a pre-quantised checkpoint keeps (embeddings, output
// head) come in as checkpoint tensors and are cast to the compute dtype,
// so the largest 16-bit tensor's block stays in the allocator's cache. A
// 16-bit base loads straight into its parameters and stages nothing.
func loadStagingBytes(w Workload, m catalog.Model, scale float64) float64 {
	if w.Method == MethodInference || !quantisedBase(w) || m.Quant != nil {
		return 0
	}
	largest := math.Max(float64(m.EmbeddingParams()), float64(m.LMHeadParams()))
	for i := range m.NumLayerGroups() {
		g := m.LayerGroupAt(i)
		ls := shapeOf(m, g)
		largest = math.Max(largest, ls.h*math.Max(ls.widestLinear, ls.q))
		if f := g.FFN; f.IsMoE() && w.QuantizeExperts.On() {
			// A fused expert tensor [E, 2I, h] arrives whole before it is quantised.
			up := float64(f.ExpertIntermediate)
			if ls.gated {
				up *= 2
			}
			largest = math.Max(largest, float64(f.Experts)*up*ls.h)
		}
	}
	return largest * scale * halfBytes / float64(w.TP)
}

// fusedExpertBytes is the 16-bit working copies of a mixture of experts'
// fused expert weights that training holds beside the stored ones
// (docs/memory-model.md §6.9), per MoE layer in flight:
//
//   - quantised experts (Workload.QuantizeExperts) are dequantised whole
//     for each use: axolotl's quantize_moe_experts parametrization
//     (monkeypatch/moe_quant.py: the dequantised tensor is cached for the
//     module's forward) and Unsloth's 4-bit MoE experts
//     (moe_utils_bnb4bit.py, recomputed in backward): one copy;
//   - LoRA on the experts (Workload.LoRAExperts) runs as PEFT's
//     ParamWrapper (tuners/lora/layer.py: _activate_lora adds
//     get_delta_weight's einsum of B and A, E × in × out, to the base
//     weight for the forward): the delta, the merged weight and, in
//     backward, the merged weight's gradient: three copies.
//
// Under checkpointing one MoE layer is in flight (the one recomputed);
// without it autograd keeps every layer's dequantised and merged weight
// for backward. Unsloth's MoE kernels (grouped GEMMs with the adapters
// applied to the activations, experts dequantised one at a time) hold
// neither.
func fusedExpertBytes(w Workload, m catalog.Model, scale float64) float64 {
	if w.Method == MethodInference || !m.IsMoE() || frameworks[w.Framework].moeKernels {
		return 0
	}
	var saved, transient float64
	if w.QuantizeExperts.On() && quantisedBase(w) {
		saved++
	}
	if w.LoRAExperts.On() {
		saved++
		transient += 2
	}
	if saved+transient == 0 {
		return 0
	}
	var layer, layers float64
	for i := range m.NumLayerGroups() {
		g := m.LayerGroupAt(i)
		f := g.FFN
		if !f.IsMoE() {
			continue
		}
		up := float64(f.ExpertIntermediate)
		if m.Gated() {
			up *= 2
		}
		layer = math.Max(layer, float64(f.Experts)*(up+float64(f.ExpertIntermediate))*float64(m.HiddenSize))
		layers += float64(g.Layers)
	}
	inFlight := 1.0
	if w.Checkpointing == CheckpointOff {
		inFlight = layers
	}
	return (saved*inFlight + transient) * layer * scale * halfBytes / float64(w.TP)
}
