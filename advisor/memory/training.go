package memory

import (
	"maps"
	"math"
	"slices"

	"github.com/vrambot/vrambot/advisor/catalog"
)

// Checkpointing is the activation checkpointing mode (docs/memory-model.md §6.1).
type Checkpointing string

// Checkpointing modes.
const (
	// CheckpointOff keeps every block's activations for backward.
	CheckpointOff Checkpointing = "off"
	// CheckpointFull keeps each block's input and recomputes the block in
	// backward (Korthikanti et al. 2022, "full recomputation").
	CheckpointFull Checkpointing = "full"
	// CheckpointSelective is per-op selective checkpointing as torchtitan
	// runs it by default (mode "selective", option "op"): the outputs of
	// every other matmul and of attention are kept, the cheap pointwise ops
	// (norms, activations, products) and the other matmuls are recomputed;
	// the attention scores are never kept (Megatron's selective recompute).
	CheckpointSelective Checkpointing = "selective"
	// CheckpointOffloaded is Unsloth's offloaded checkpointing
	// (use_gradient_checkpointing="unsloth"): full checkpointing whose
	// block inputs are copied to CPU RAM asynchronously.
	CheckpointOffloaded Checkpointing = "offloaded"
)

// Sharding is how data-parallel GPUs hold the model states (docs/memory-model.md §6.2).
type Sharding string

// Sharding strategies.
const (
	// ShardingNone is one GPU, or data parallel where nothing is sharded.
	ShardingNone Sharding = "none"
	// ShardingDDP is PyTorch DistributedDataParallel: every GPU holds the
	// whole model, its gradients and an all-reduce bucket copy of them.
	ShardingDDP Sharding = "ddp"
	// ShardingDeepSpeed is DeepSpeed ZeRO at Workload.ZeroStage.
	ShardingDeepSpeed Sharding = "deepspeed"
	// ShardingFSDP is PyTorch FSDP: ZeroStage 3 is FULL_SHARD (FSDP2
	// fully_shard), 2 is SHARD_GRAD_OP.
	ShardingFSDP Sharding = "fsdp"
)

// Loss is the cross-entropy implementation (docs/memory-model.md §6.3).
type Loss string

// Losses.
const (
	// LossStandard materialises the b·s·V logits, their fp32 upcast and
	// the fp32 gradient.
	LossStandard Loss = "standard"
	// LossChunked computes the logits and the loss a chunk of tokens at a
	// time (Liger fused linear cross-entropy, torchtune chunked losses,
	// Unsloth's fused loss, TRL chunked_nll).
	LossChunked Loss = "chunked"
)

// Framework is a training stack whose defaults decide memory (docs/memory-model.md §6.6).
type Framework string

// Training frameworks with memory-relevant defaults. Others (plain
// PyTorch, the HF Trainer, Lightning, DeepSpeed) train with checkpointing
// off and the standard loss unless told otherwise.
const (
	FrameworkUnsloth      Framework = "unsloth"
	FrameworkAxolotl      Framework = "axolotl"
	FrameworkTorchtune    Framework = "torchtune"
	FrameworkTRL          Framework = "trl"
	FrameworkLlamaFactory Framework = "llama-factory"
	FrameworkTorchtitan   Framework = "torchtitan"
	// FrameworkHF is the HF Trainer (and accelerate, PEFT): the default
	// stack's checkpointing and loss, with its gradient accumulation.
	FrameworkHF Framework = "hf"
	// FrameworkLightning is Lightning (Fabric or Trainer) with its
	// FSDPStrategy: FSDP1 with use_orig_params=True.
	FrameworkLightning Framework = "lightning"
)

// frameworkDefaults is what a framework's recipes do when the user does
// not say, with the file that says so (docs/memory-model.md §6.6).
type frameworkDefaults struct {
	checkpointing Checkpointing
	loss          Loss
	// pureBF16: parameters, gradients and optimizer states in bf16 (no
	// fp32 master copy).
	pureBF16 bool
	// shardsAdapters: multi-GPU LoRA recipes shard the frozen base with
	// FSDP (not DDP).
	shardsAdapters bool
	// fusedNorms: the framework's RMSNorm kernel keeps its 16-bit input
	// and the inverse RMS, not an fp32 copy and the normalised output.
	fusedNorms bool
	// noLoRADropout: the recipes set lora_dropout 0, so adapters read the
	// base layers' own inputs instead of a dropped copy each.
	noLoRADropout bool
	// torchaoNF4: 4-bit weights are torchao NF4 tensors (double-quantised
	// scales; their linear saves the weight, not its input), not
	// bitsandbytes Linear4bit.
	torchaoNF4 bool
	// doubleQuant: bitsandbytes 4-bit with double-quantised scales.
	doubleQuant bool
	// fusedLoRA: the adapted block runs as the framework's fused autograd
	// functions (fusedLoRABlock), not module by module.
	fusedLoRA bool
	// lossChunks: the chunked loss computes the logits and their fp32
	// upcast in this many pieces of tokens (torchtune's 8); 0 is a fused
	// linear cross-entropy sized like Liger's (chunkedLogitsBytes).
	lossChunks int
	// lossFreeShare: the chunked loss sizes its pieces so that one
	// piece's fp32 logits stay within this share of the GPU's free memory
	// (Unsloth's fused loss; chunkedLogitsBytes).
	lossFreeShare float64
	// sequenceParallel: tensor parallelism comes with sequence
	// parallelism (sequenceParallelSplit).
	sequenceParallel bool
	// accumulatesUnsharded: under FSDP, gradient accumulation skips the
	// gradient sync on every micro-batch but the last, so the gradients
	// accumulate unsharded (the HF Trainer's accelerate no_sync,
	// Lightning's no_backward_sync; fsdpGradientBytes). A plain PyTorch
	// loop, torchtune and torchtitan reduce-scatter every micro-batch.
	accumulatesUnsharded bool
	// fsdpMixedFlatParams: FSDP1 with use_orig_params=True, wrapping whole
	// blocks, so that a block's frozen weights and its adapters share one
	// FlatParameter whose gradient covers all of them (fsdpGradientBytes).
	fsdpMixedFlatParams bool
	// loraExperts: LoRA on a mixture of experts adapts the routed experts
	// too; quantizesExperts: a 4-bit base quantises them too
	// (docs/memory-model.md §6.9).
	loraExperts, quantizesExperts bool
	// moeKernels: the framework's MoE kernels apply expert adapters as
	// x·A·B and dequantise one expert at a time, holding no whole layer's
	// merged or dequantised experts (fusedExpertBytes).
	moeKernels bool
	// loraRank and loraTargets are the recipes' LoRA rank and targets (0
	// and "": PEFT's LoraConfig, r=8 on q and v); seqLen the sequence
	// length they truncate to (0: DefaultSeqLen).
	loraRank    int
	loraTargets string
	seqLen      int
	// lossChunkTokens: the chunked loss computes the logits this many
	// tokens at a time, each chunk checkpointed (TRL's chunked_nll).
	lossChunkTokens int
	source          string
}

var frameworks = map[Framework]frameworkDefaults{
	FrameworkUnsloth: {
		checkpointing: CheckpointOffloaded, loss: LossChunked, pureBF16: true, fusedNorms: true, noLoRADropout: true, doubleQuant: true, fusedLoRA: true, accumulatesUnsharded: true,
		loraExperts: true, quantizesExperts: true, moeKernels: true, lossFreeShare: unslothLossFreeShare, loraRank: 16, loraTargets: "all",
		source: `Unsloth get_peft_model(r=16, target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"], use_gradient_checkpointing="unsloth", lora_dropout=0), its fused LoRA, RMSNorm and cross-entropy kernels, 4-bit loading with double quantisation, LoRA on a mixture of experts' expert weights ("Enabling LoRA on MoE parameters") and their 4-bit storage (unsloth_zoo temporary_patches/moe_utils_bnb4bit.py)`,
	},
	FrameworkTorchtune: {
		checkpointing: CheckpointFull, loss: LossChunked, pureBF16: true, shardsAdapters: true, noLoRADropout: true, torchaoNF4: true, lossChunks: torchtuneLossChunks,
		loraRank: 8, loraTargets: "all",
		source: "torchtune recipe configs: enable_activation_checkpointing: True, loss LinearCrossEntropyLoss (8 chunks), dtype: bf16, lora_rank: 8 on q_proj, v_proj, output_proj with apply_lora_to_mlp: True, lora_dropout: 0.0, torchao NF4, FSDP2 distributed recipes",
	},
	FrameworkAxolotl: {
		checkpointing: CheckpointFull, loss: LossStandard, accumulatesUnsharded: true, loraRank: 32, loraTargets: "all",
		source: "axolotl example configs: gradient_checkpointing: true, lora_r: 32, lora_target_linear: true",
	},
	FrameworkTRL: {
		checkpointing: CheckpointFull, loss: LossChunked, accumulatesUnsharded: true, seqLen: 1024, lossChunkTokens: trlLossChunkTokens, loraRank: 16,
		source: `TRL SFTConfig defaults: gradient_checkpointing=True, bf16=True, max_length=1024, loss_type="chunked_nll" (256-token chunks); ModelConfig lora_r=16 on PEFT's default targets`,
	},
	FrameworkTorchtitan: {
		checkpointing: CheckpointSelective, loss: LossChunked, lossChunks: torchtitanLossChunks, shardsAdapters: true, sequenceParallel: true,
		source: `torchtitan's Llama and Qwen3 configs: SelectiveAC (per-op), ChunkedLossWrapper with 8 chunks (since June 2026; a full cross-entropy before), FSDP2 over every data-parallel GPU, tensor parallelism with sequence parallelism (apply_tp)`,
	},
	FrameworkHF: {
		accumulatesUnsharded: true,
		source:               "the HF Trainer: accelerator.no_sync on every micro-batch but the last (FSDP1 no_sync, FSDP2 set_requires_gradient_sync(False)); checkpointing and loss as the default stack",
	},
	FrameworkLightning: {
		checkpointing: CheckpointOff, loss: LossStandard, fsdpMixedFlatParams: true, accumulatesUnsharded: true,
		source: "Lightning's FSDPStrategy: FSDP1 with use_orig_params=True by default (lightning/fabric/strategies/fsdp.py), auto-wrapping whole blocks; fabric.no_backward_sync during gradient accumulation",
	},
	FrameworkLlamaFactory: {
		checkpointing: CheckpointFull, loss: LossStandard, noLoRADropout: true, accumulatesUnsharded: true, loraRank: 8, loraTargets: "all",
		source: "LLaMA-Factory model and finetuning args: disable_gradient_checkpointing=False (checkpointing on), lora_rank=8, lora_target=all, lora_dropout=0.0, cutoff_len=2048",
	},
}

// Frameworks lists the training frameworks with memory defaults, sorted.
func Frameworks() []Framework {
	return slices.Sorted(maps.Keys(frameworks))
}

// FrameworkPureBF16 reports whether fw trains in pure bf16 (parameters,
// gradients and optimizer states), so that a query without precision= is
// estimated as bf16 rather than AMP with fp32 master weights.
func FrameworkPureBF16(fw Framework) bool { return frameworks[fw].pureBF16 }

var (
	checkpointings = []Checkpointing{CheckpointOff, CheckpointFull, CheckpointSelective, CheckpointOffloaded}
	shardings      = []Sharding{ShardingNone, ShardingDDP, ShardingDeepSpeed, ShardingFSDP}
	losses         = []Loss{LossStandard, LossChunked}
)

// dataParallel is the data-parallel degree: the GPUs that are neither
// tensor- nor pipeline-parallel ranks of one another.
func dataParallel(w Workload) int { return max(1, w.GPUs/max(1, w.TP*w.PP)) }

// resolveTraining fills the training techniques' defaults as the tools
// have them, each noted (docs/memory-model.md §6.6): checkpointing, the
// loss, and how several GPUs share the model states.
func resolveTraining(w *Workload, a assumptions) {
	fw, known := frameworks[w.Framework]
	if !known {
		w.Framework = ""
	}
	resolveCheckpointing(w, fw, known, a)
	resolveLoss(w, fw, known, a)
	if w.Method == MethodInference {
		w.OptimizerInBackward, w.ActivationOffload = false, false
	}
	if w.OptimizerInBackward {
		a.note("optimizer step fused into backward: each gradient is freed once its parameter is updated (needs no gradient accumulation)")
	}
	resolveSharding(w, fw, known, a)
	resolveGradAccum(w, fw, a)
	if w.Sharding == ShardingFSDP && w.Offload == OffloadOptimizer {
		w.Offload = OffloadParam
		a.note("FSDP's CPU offload moves parameters, gradients and the optimizer step to the CPU together (FSDP has no optimizer-only offload)")
	}
}

// resolveCheckpointing fills the activation checkpointing: off for
// inference; the framework's; on for QLoRA; off otherwise.
func resolveCheckpointing(w *Workload, fw frameworkDefaults, known bool, a assumptions) {
	if !slices.Contains(checkpointings, w.Checkpointing) {
		w.Checkpointing = ""
	}
	switch {
	case w.Method == MethodInference:
		w.Checkpointing = CheckpointOff
	case w.Checkpointing != "":
	case w.GradCheckpointing:
		w.Checkpointing = CheckpointFull
	case known && fw.checkpointing != "":
		w.Checkpointing = fw.checkpointing
		a.note("activation checkpointing not given: %s, as %s (%s)", checkpointWords(fw.checkpointing), w.Framework, fw.source)
	case w.Method == MethodQLoRA:
		w.Checkpointing = CheckpointFull
		a.note("activation checkpointing not given: on for QLoRA, as PEFT's prepare_model_for_kbit_training, TRL, Unsloth and torchtune turn it on (gc=off to estimate without)")
	default:
		w.Checkpointing = CheckpointOff
		a.note("activation checkpointing not given: off (gc=on, gc=selective to estimate with)")
	}
	w.GradCheckpointing = w.Checkpointing != CheckpointOff
}

// resolveLoss fills the loss: none for inference; chunked where the
// framework's is; standard otherwise.
func resolveLoss(w *Workload, fw frameworkDefaults, known bool, a assumptions) {
	if !slices.Contains(losses, w.Loss) {
		w.Loss = ""
	}
	switch {
	case w.Method == MethodInference:
		w.Loss = ""
	case w.Loss != "":
	case w.ChunkedLoss:
		w.Loss = LossChunked
	case known && fw.loss == LossChunked:
		w.Loss = LossChunked
		a.note("loss not given: chunked cross-entropy, as %s", w.Framework)
	default:
		w.Loss = LossStandard
	}
	w.ChunkedLoss = w.Loss == LossChunked
}

// resolveSharding reconciles the sharding with the ZeRO stage and, when
// neither is given, fills how data-parallel GPUs share the model states:
// FSDP full shard for full and freeze fine-tuning, for the frameworks
// that shard adapters' bases and for weights that do not fit one GPU;
// DDP otherwise.
func resolveSharding(w *Workload, fw frameworkDefaults, known bool, a assumptions) {
	if !slices.Contains(shardings, w.Sharding) {
		w.Sharding = ""
	}
	dp := dataParallel(*w)
	switch {
	case w.Sharding == ShardingDDP:
		w.ZeroStage = 0
	case w.Sharding == ShardingFSDP:
		if w.ZeroStage < 2 {
			w.ZeroStage = 3
		}
	case w.Sharding == ShardingDeepSpeed:
		if w.ZeroStage == 0 {
			w.Sharding = ShardingNone
			if dp > 1 {
				w.Sharding = ShardingDDP
			}
		}
	case w.ZeroStage > 0:
		w.Sharding = ShardingDeepSpeed
	case w.Method == MethodInference || dp == 1:
		w.Sharding = ShardingNone
	case w.Method == MethodFull || w.Method == MethodFreeze:
		w.Sharding, w.ZeroStage = ShardingFSDP, 3
		a.note("sharding not given: FSDP full shard (ZeRO-3 equivalent) across the %d data-parallel GPUs, as multi-GPU full fine-tuning runs (ddp or zero= to say otherwise)", dp)
	case known && fw.shardsAdapters:
		w.Sharding, w.ZeroStage = ShardingFSDP, 3
		a.note("sharding not given: FSDP full shard of the frozen base, as %s's distributed LoRA recipes", w.Framework)
	case w.GPUMemoryBytes > 0 && baseWeightBytes(*w) > float64(w.GPUMemoryBytes):
		// Nobody runs DDP with weights that do not fit one card: accelerate
		// and torchrun users shard them (accelerate config's FSDP, PEFT's
		// FSDP and DeepSpeed guides).
		w.Sharding, w.ZeroStage = ShardingFSDP, 3
		a.note("sharding not given: FSDP full shard across the %d data-parallel GPUs, since the weights (%.0f GiB) do not fit one GPU (ddp or zero= to say otherwise)", dp, baseWeightBytes(*w)/(1<<30))
	default:
		w.Sharding = ShardingDDP
		a.note("sharding not given: plain data parallel (DDP), each of the %d GPUs holding the whole model (fsdp or zero=3 to shard it)", dp)
	}
}

// resolveGradAccum bounds the gradient accumulation steps (none for
// inference) and notes how FSDP accumulates the gradients.
func resolveGradAccum(w *Workload, fw frameworkDefaults, a assumptions) {
	training := w.Method != MethodInference
	w.GradAccumSteps = max(0, w.GradAccumSteps)
	if !training {
		w.GradAccumSteps = 0
	}
	if w.Sharding != ShardingFSDP || !training {
		return
	}
	switch {
	case w.GradAccumSteps > 1 && w.SyncEachBatch.On():
		a.note("gradient accumulation over %d micro-batches, reduce-scattered every micro-batch (sync-each-batch=on): the gradients stay sharded", w.GradAccumSteps)
	case w.GradAccumSteps > 1 && fw.accumulatesUnsharded:
		a.note("gradient accumulation over %d micro-batches under FSDP: every GPU accumulates the gradients unsharded between syncs (the HF Trainer's and accelerate's no_sync, Lightning's no_backward_sync; FSDP2 since accelerate 1.11); sync-each-batch=on keeps them sharded, as FSDP2 under accelerate before 1.11 did", w.GradAccumSteps)
	case w.GradAccumSteps > 1:
		a.note("gradient accumulation over %d micro-batches, reduce-scattered every micro-batch: the gradients stay sharded (the HF Trainer and Lightning accumulate them unsharded: framework=hf, framework=lightning)", w.GradAccumSteps)
	}
	if fw.fsdpMixedFlatParams && w.Method.IsAdapter() {
		a.note("%s's FSDP (FSDP1, use_orig_params=True, whole blocks wrapped): a block's frozen weights share a FlatParameter with its adapters, so gradient memory is that of the whole block", w.Framework)
	}
}

// checkpointWords names a checkpointing mode for an assumption.
func checkpointWords(c Checkpointing) string {
	switch c {
	case CheckpointFull:
		return "on (full)"
	case CheckpointSelective:
		return "selective (per-op)"
	case CheckpointOffloaded:
		return "offloaded to CPU RAM (Unsloth's)"
	}
	return string(c)
}

// trlLossChunkTokens is TRL's chunked_nll chunk: the output head and the
// cross-entropy over 256 valid tokens at a time, each chunk checkpointed
// (trl/trainer/sft_trainer.py _CHUNKED_LM_HEAD_CHUNK_SIZE).
const trlLossChunkTokens = 256

// torchtuneLossChunks is torchtune's num_output_chunks (CEWithChunkedOutputLoss,
// LinearCrossEntropyLoss).
const torchtuneLossChunks = 8

// torchtitanLossChunks is torchtitan's ChunkedLossWrapper num_chunks: the
// output head and the loss run over one of 8 pieces of the tokens at a
// time, each backward-ed before the next (torchtitan/components/loss.py).
const torchtitanLossChunks = 8

// chunkedLogitsBytes is the loss's share of memory under a chunked loss
// (docs/memory-model.md §6.3). torchtune computes the logits, their fp32
// upcast and gradient in lossChunks pieces. A fused linear cross-entropy
// (Liger, Unsloth, TRL's chunked_nll) never holds more than one chunk of
// logits, which it sizes as Liger does so that a chunk weighs about as
// much as the hidden states (inc_factor = ceil(V/H), chunk =
// next_power_of_2(ceil(b·s/inc_factor)) tokens; the cross-entropy kernel
// writes its gradient into the chunk), plus the gradient of the hidden
// states, allocated whole, and for a trained output head its gradient
// accumulator (liger_kernel/ops/fused_linear_cross_entropy.py).
func chunkedLogitsBytes(w Workload, m catalog.Model, r regime, tokens, vocab, free float64) float64 {
	tp := float64(w.TP)
	fw := frameworks[w.Framework]
	if n := fw.lossChunks; n > 0 {
		return tokens * vocab * (r.act + logitsUpcastBytes) / float64(n) / tp
	}
	if c := fw.lossChunkTokens; c > 0 {
		// One checkpointed chunk's logits, upcast and gradient, and the
		// hidden states' gradient (trl/trainer/sft_trainer.py).
		b := math.Min(tokens, float64(c))*vocab*(r.act+logitsUpcastBytes) + tokens*float64(m.HiddenSize)*r.act
		if w.Method == MethodFull {
			b += vocab * float64(m.HiddenSize) * r.grad
		}
		return b / tp
	}
	if fw.lossFreeShare > 0 {
		return targetChunkedLogitsBytes(w, m, r, tokens, vocab, math.Max(0, free)*fw.lossFreeShare) / tp
	}
	h := float64(m.HiddenSize)
	inc := math.Ceil(vocab / math.Max(1, h))
	chunk := math.Min(tokens, math.Exp2(math.Ceil(math.Log2(math.Max(1, math.Ceil(tokens/inc))))))
	b := chunk*vocab*r.act + tokens*h*r.act
	if w.Method == MethodFull {
		b += vocab * h * r.grad
	}
	return b / tp
}

// fusedLoRABlock is what Unsloth's fused kernels keep for backward per
// token of an adapted block (unsloth/kernels/fast_lora.py: LoRA_QKV and
// LoRA_W keep their input, LoRA_MLP its input and the gate and up outputs,
// recomputing their product; rms_layernorm.py keeps its 16-bit input and
// the inverse RMS): the two norms' inputs, the attention input, the MLP
// input, flash attention's q, k, v and output, the gate and up outputs,
// and each adapter's rank-wide A output. The frozen 4-bit weights are
// dequantised inside the kernels and keep nothing of their own.
func fusedLoRABlock(w Workload, m catalog.Model, ls layerShape, r regime) blockBytes {
	e := r.act
	var b blockBytes
	b.perTokenShared = 2 * e * ls.h   // the norms' inputs
	b.perTokenGathered = 2 * e * ls.h // the attention and MLP inputs
	b.perToken = e * (2*ls.q + 2*ls.kv)
	if ls.gated {
		b.perToken += 2 * e * ls.i
	} else {
		b.perToken += e * ls.i
	}
	mods, n := loraModules(m, ls, w.LoRATargets, w.LoRAExperts.On())
	for _, mod := range mods[:n] {
		b.perToken += mod.active * e * float64(w.LoRARank)
		if w.Method == MethodDoRA {
			b.perToken += mod.active * doraSavedOutputs * e * mod.out
		}
	}
	return b
}

// resolveExperts fills the mixture-of-experts switches (docs/memory-model.md
// §6.9): whether LoRA adapts the routed experts (the framework's default:
// Unsloth does, PEFT's target_modules and axolotl's lora_target_linear do
// not, the experts being fused 3-D parameters under transformers 5) and
// whether a bitsandbytes base quantises them (Unsloth does; transformers'
// own bitsandbytes integration converts only nn.Linear layers and leaves
// the fused experts in 16-bit, bitsandbytes#1849, unless axolotl's
// quantize_moe_experts says otherwise). Both are empty for dense models
// and where they do not apply.
func resolveExperts(w *Workload, a assumptions) {
	valid := func(s Switch) bool { return s == SwitchOn || s == SwitchOff }
	fw, known := frameworks[w.Framework]
	if !w.Model.IsMoE() || w.Method == MethodInference {
		w.LoRAExperts, w.QuantizeExperts = "", ""
		return
	}
	switch {
	case !w.Method.IsAdapter():
		w.LoRAExperts = ""
	case w.Method == MethodDoRA:
		w.LoRAExperts = SwitchOff // PEFT's ParamWrapper refuses DoRA
	case valid(w.LoRAExperts):
	case known && fw.loraExperts:
		w.LoRAExperts = SwitchOn
		a.note("LoRA on the routed experts not given: on, as %s adapts a mixture of experts' expert weights too (lora-experts=off for the attention and dense layers only)", w.Framework)
	default:
		w.LoRAExperts = SwitchOff
		a.note("LoRA on the routed experts not given: off, as PEFT's target modules leave the fused expert weights alone (lora-experts=on for target_parameters / axolotl lora_target_parameters)")
	}
	switch {
	case !quantisedBase(*w) || w.Model.Quant != nil:
		w.QuantizeExperts = ""
	case valid(w.QuantizeExperts):
	case known && fw.quantizesExperts:
		w.QuantizeExperts = SwitchOn
		a.note("the routed experts are quantised with the rest of the base, as %s does (quantize-experts=off to keep them 16-bit)", w.Framework)
	default:
		w.QuantizeExperts = SwitchOff
		a.note("the routed experts stay in 16-bit: transformers 5 stores them as fused 3-D parameters, which bitsandbytes does not quantise (quantize-experts=on for axolotl's quantize_moe_experts)")
	}
}

// unslothLossFreeShare is the share of the GPU's free memory (read when
// the loss first runs) that one chunk of Unsloth's fused loss may fill
// with fp32 logits (unsloth_zoo fused_losses/cross_entropy_loss.py,
// _get_chunk_multiplier, get_chunk_size, since September 2025). Releases
// from July 2026 also cap it at 4 GiB (unsloth-zoo #857), which the
// measured runs predate; on a large card the estimate is then an upper
// bound.
const unslothLossFreeShare = 0.5

// targetChunkedLogitsBytes is a fused loss that splits the tokens into the
// fewest chunks, in multiples of 4, whose fp32 logits fit target (Unsloth's
// UnslothFusedLoss, "target_gb specifies the max GB memory the fused loss
// can use"; docs/memory-model.md §6.3): each chunk's 16-bit logits and
// their 16-bit gradient (the loss is compiled, torch_compile=True, which
// fuses the fp32 upcast into the cross-entropy kernel), the hidden states'
// gradient allocated whole up front (grad_inputs =
// torch.empty_like(hidden_states)) and, when the output head is trained,
// its gradient accumulator. At a 256k vocabulary even 2,048 tokens fill
// one 4 GiB chunk.
func targetChunkedLogitsBytes(w Workload, m catalog.Model, r regime, tokens, vocab, target float64) float64 {
	fp32 := tokens * vocab * fp32Bytes
	n := 1.0
	if fp32 > target {
		n = math.Min(tokens, 4*math.Ceil(fp32/math.Max(1, target)/4))
	}
	h := float64(m.HiddenSize)
	b := tokens/n*vocab*2*r.act + tokens*h*r.act
	if w.Method == MethodFull {
		b += vocab * h * r.grad
	}
	return b
}

// baseWeightBytes is the model's weights per model-parallel rank at the
// workload's precision (the checkpoint's storage where it keeps it), for
// deciding whether they fit one GPU.
func baseWeightBytes(w Workload) float64 {
	m := w.Model
	r := regimeFor(w.Precision)
	scale := float64(w.Params) / math.Max(1, float64(m.ComputeParams()))
	var b float64
	if m.Quant != nil {
		b = quantisedWeightBytes(m, r, scale)
	} else {
		linear, other := paramSplit(m, scale)
		b = linear*r.quant + other*r.weight
	}
	return b / float64(max(1, w.TP*w.PP))
}
