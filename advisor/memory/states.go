package memory

import (
	"math"

	"github.com/vrambot/vrambot/advisor/arch"
	"github.com/vrambot/vrambot/advisor/catalog"
)

// fsdpGatheredLayers is how many blocks FSDP holds unsharded at once: the
// one computing and the one prefetched (FSDP2's implicit forward prefetch,
// FSDP1's BACKWARD_PRE; docs/memory-model.md §6.2).
const fsdpGatheredLayers = 2

// modelStates computes weights, gradients and optimizer state per GPU:
// divided by TP×PP, then held as the workload's Sharding holds them across
// the data-parallel GPUs: DeepSpeed ZeRO as its
// estimate_zero2/3_model_states_mem_needs code does (docs/memory-model.md
// §1.2), FSDP with its gathered working set (§6.2), DDP with its gradient
// buckets (§6.2).
func modelStates(w Workload, m catalog.Model, r regime, scale float64) states {
	linear, other := paramSplit(m, scale)
	trainable := float64(w.TrainableParams)
	frozenLinear := linear
	if w.Method == MethodFull {
		frozenLinear = 0
	}
	mp := float64(w.TP * w.PP)
	// DeepSpeed's fp16 and bf16 modes are mixed precision whatever dtype
	// the model was loaded in: its ZeRO optimizers keep fp32 master
	// partitions and fp32 optimizer states (docs/memory-model.md §1.2).
	deepspeedMixed := w.Sharding == ShardingDeepSpeed && (r.amp || w.Precision == PrecisionBF16 || w.Precision == PrecisionFP16)
	if deepspeedMixed {
		r.stateScale = 1
	}

	var s states
	optim := optimizerStateBytes(w, m, r)
	switch {
	case w.Method == MethodInference && m.Quant != nil:
		s.weights = quantisedWeightBytes(m, r, scale)
	case w.Method == MethodInference:
		s.weights = linear*r.quant + other*r.weight // under autocast the fp32 weights stay resident
	case m.Quant != nil && w.Method.IsAdapter():
		// Adapters on a pre-quantised checkpoint (PEFT over GPTQ/AWQ/FP8):
		// the frozen base keeps its stored bytes.
		s.weights = quantisedWeightBytes(m, r, scale) + adapterBytes(w, r)
		s.grads = trainable * r.grad
	case deepspeedMixed:
		// DeepSpeed fp16/bf16: 16-bit model and gradients; the optimizer
		// holds the fp32 master, the fp32 gradient partition and Adam's states.
		s.weights = (linear + other) * halfBytes
		s.grads = trainable * halfBytes
		optim += masterWeightBytes + fp32GradPartitionBytes
	case quantisedBase(w):
		s.weights = frozenLinearBytes(w, m, r, scale, frozenLinear) + (linear-frozenLinear+other)*r.weight + adapterBytes(w, r)
		s.grads = trainable * r.grad
	default:
		base := (linear + other) * r.weight
		if r.amp && w.Sharding != ShardingFSDP {
			// Autocast keeps the 16-bit copies of the matmul weights from
			// forward until backward has used them. FSDP's mixed precision
			// casts only the gathered blocks (its working set, below).
			base += linear * halfBytes
		}
		s.weights = base + adapterBytes(w, r)
		s.grads = trainable * r.grad
	}
	s.optim = trainable * optim

	s.weights /= mp
	s.grads /= mp
	s.optim /= mp

	dp := float64(dataParallel(w))
	switch w.Sharding {
	case ShardingDeepSpeed:
		deepSpeedShard(&s, w, m, scale, dp, deepspeedMixed)
	case ShardingFSDP:
		fsdpShard(&s, w, m, r, scale, dp)
	case ShardingDDP:
		if dp > 1 && w.Method != MethodInference {
			// DDP all-reduces gradients through buckets that, by default
			// (gradient_as_bucket_view=False), are a second copy of them:
			// "the saved memory size will be equal to the total gradients
			// size" (torch DistributedDataParallel docs).
			s.grads *= 2
		}
	}
	if w.OptimizerInBackward && w.Sharding != ShardingFSDP {
		// Each gradient is applied and freed as soon as it is produced, so
		// at most the largest parameter's gradient is alive (torchtune
		// optimizer_in_bwd, docs/memory-model.md §6.4).
		s.grads = math.Min(s.grads, largestTrainableTensor(w, m)*scale*r.grad/mp)
	}
	return s
}

// quantisedBase reports whether the frozen base weights are 4- or 8-bit
// bitsandbytes layers (QLoRA, or LoRA/DoRA over an nf4/int8 base).
func quantisedBase(w Workload) bool {
	return w.Method == MethodQLoRA || w.Precision == PrecisionNF4 || w.Precision == PrecisionInt8
}

// deepSpeedShard shards s across dp GPUs by ZeRO stage, as DeepSpeed's
// estimate_zero2/3_model_states_mem_needs code does (docs/memory-model.md §1.2).
func deepSpeedShard(s *states, w Workload, m catalog.Model, scale, dp float64, deepspeedMixed bool) {
	zero := w.ZeroStage
	if zero >= 1 {
		if w.Offload != OffloadNone {
			s.optim = 0
		} else {
			s.optim /= dp
		}
	}
	if zero >= 2 {
		if w.Offload != OffloadNone {
			s.grads = 0
		} else {
			s.grads /= dp
		}
	}
	if zero != 3 {
		return
	}
	// The gathered largest layer: its 16-bit parameters, and the gradient
	// of the largest trainable one (an adapter's is tiny: a frozen
	// embedding gets no gradient).
	gathered := largestLayerParams(m) * scale * halfBytes
	if w.Offload == OffloadParam {
		s.weights = gathered
	} else {
		s.weights = s.weights/dp + gathered
	}
	gatheredGrad := largestTrainableTensor(w, m) * scale * halfBytes
	switch {
	case w.Method == MethodInference:
		s.grads = 0
	case deepspeedMixed:
		// estimate_zero3_model_states_mem_needs: 4·LL + 18Ψ/N, the 18
		// being the 16-bit parameter shard and the optimizer's 16 B;
		// gradients are reduced straight into the fp32 partition.
		s.grads = gatheredGrad
	default:
		s.grads += gatheredGrad
	}
}

// fsdpShard holds s as FSDP does (docs/memory-model.md §6.2): FULL_SHARD
// (stage 3) shards parameters, gradients and optimizer states over dp GPUs,
// SHARD_GRAD_OP (stage 2) gradients and optimizer states; CPU offload keeps
// all three shards in CPU RAM and runs the optimizer step there. The
// working set stays on the GPU: the blocks gathered unsharded in the
// compute dtype (the one running and the one prefetched), the root
// module's embeddings and output head, and a block's unsharded gradients
// with their fp32 reduce-scatter copy under mixed precision.
func fsdpShard(s *states, w Workload, m catalog.Model, r regime, scale, dp float64) {
	if w.ZeroStage == 3 {
		s.weights /= dp
	}
	s.grads /= dp
	s.optim /= dp
	offload := w.Offload != OffloadNone
	if offload {
		s.weights, s.grads, s.optim = 0, 0, 0
	}
	if w.OptimizerInBackward {
		s.grads = 0 // each shard is stepped and freed as it is reduced
	}
	if dp <= 1 && !offload {
		return // one GPU: the parameters are whole already
	}
	layers := float64(max(1, m.TotalLayers()))
	if w.ZeroStage == 3 || offload {
		layerParams := float64(m.LayerParams()) * scale
		layerBytes := layerParams * halfBytes
		if quantisedBase(w) {
			// The quantised storage is gathered as it is stored.
			linear, _ := paramSplit(m, scale)
			layerBytes = frozenLinearBytes(w, m, r, scale, linear)/layers + (layerParams-linear/layers)*halfBytes
		}
		root := float64(m.EmbeddingParams()+m.LMHeadParams()) * scale * halfBytes
		s.weights += (fsdpGatheredLayers*layerBytes + root) / float64(w.TP)
	}
	if w.Method != MethodInference {
		if g, ok := fsdpGradientBytes(w, m, r, scale, dp); ok && !w.OptimizerInBackward {
			s.grads = g
		}
		reduce := float64(halfBytes)
		if r.amp {
			reduce += fp32Bytes // reduce_dtype float32
		}
		s.grads += float64(w.TrainableParams) / layers * reduce / float64(w.TP)
	}
}

// fsdpGradientBytes is FSDP's gradient memory per GPU where it is not the
// trainable parameters' shard (ok false otherwise):
//
//   - Gradient accumulation between syncs (GradAccumSteps > 1 under the
//     HF Trainer and the frameworks built on it, whose accelerate no_sync
//     is FSDP1's no_sync or FSDP2's set_requires_gradient_sync(False), and
//     under Lightning's no_backward_sync) accumulates every gradient
//     unsharded on every GPU until the micro-batch that syncs: "no_sync
//     ... will accumulate unsharded gradients" (torch
//     FullyShardedDataParallel.no_sync docs). A plain PyTorch loop,
//     torchtune's and torchtitan's recipes reduce-scatter every
//     micro-batch instead.
//     Under CPU offload they stay on the GPU all the same: only the
//     reduce-scattered shard moves to the CPU (torch
//     _fully_shard/_fsdp_collectives.py).
//   - FSDP1 with use_orig_params=True and whole blocks wrapped (Lightning's
//     FSDPStrategy) gives a block's frozen weights and its adapters one
//     FlatParameter: "the gradient memory usage will be higher than
//     expected (namely, equal to not freezing those parameters)" (torch
//     FullyShardedDataParallel docs, use_orig_params).
//
// Divided by TP ranks.
func fsdpGradientBytes(w Workload, m catalog.Model, r regime, scale, dp float64) (float64, bool) {
	fw := frameworks[w.Framework]
	params := float64(w.TrainableParams)
	mixed := fw.fsdpMixedFlatParams && w.Method.IsAdapter()
	if mixed {
		params += float64(m.MeanLayerParams()) * float64(max(1, m.TotalLayers())) * scale
	}
	accumulating := w.GradAccumSteps > 1 && fw.accumulatesUnsharded && !w.SyncEachBatch.On()
	if !accumulating && (!mixed || w.Offload != OffloadNone) {
		// CPU offload moves the reduce-scattered shards to the CPU.
		return 0, false
	}
	if !accumulating {
		return params * r.grad / float64(w.TP) / dp, true // sharded, in the parameters' dtype
	}
	// Autograd's gradient of the gathered parameter, in the compute dtype.
	return params * r.act / float64(w.TP), true
}

// largestTrainableTensor is the parameter count of the largest tensor that
// gets a gradient: the embedding or a block's widest matrix for full
// fine-tuning, a block's widest matrix for freeze, one adapter matrix
// (rank × the widest adapted width) for LoRA, QLoRA and DoRA.
func largestTrainableTensor(w Workload, m catalog.Model) float64 {
	var widest float64
	for i := range m.NumLayerGroups() {
		ls := shapeAt(m, i)
		widest = math.Max(widest, ls.h*math.Max(ls.widestLinear, ls.q))
	}
	switch {
	case w.Method == MethodFull:
		return math.Max(largestLayerParams(m), float64(m.LMHeadParams()))
	case w.Method == MethodFreeze:
		return widest
	case w.Method.IsAdapter():
		var width float64
		for i := range m.NumLayerGroups() {
			mods, n := loraModules(m, shapeAt(m, i), w.LoRATargets, w.LoRAExperts.On())
			for _, mod := range mods[:n] {
				width = math.Max(width, math.Max(mod.in, mod.out))
			}
		}
		return float64(w.LoRARank) * width
	}
	return 0
}

// adapterBytes is the LoRA adapters' own weights (and DoRA's magnitude vector).
func adapterBytes(w Workload, r regime) float64 {
	if !w.Method.IsAdapter() {
		return 0
	}
	return float64(w.TrainableParams) * r.grad
}

// frozenLinearBytes is the storage of frozen linear weights (frozen of the
// block linears' parameters) over a bitsandbytes base: at the quantised
// bytes, except a mixture of experts' routed experts when they are not
// quantised (Workload.QuantizeExperts off), which stay in 16-bit.
func frozenLinearBytes(w Workload, m catalog.Model, r regime, scale, frozen float64) float64 {
	if frozen <= 0 || w.QuantizeExperts != SwitchOff {
		return frozen * r.quant
	}
	experts := math.Min(frozen, float64(m.ParamsByGroup()[arch.TensorExperts])*scale)
	return (frozen-experts)*r.quant + experts*halfBytes
}
