package plan

import (
	"fmt"
	"slices"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/advisor/memory"
)

// candidate is one kind of fix the planner can try.
type candidate struct {
	id    string
	level fix.Level
	// changesMethod marks fixes that change what is trained or the weights'
	// precision (LoRA, QLoRA, quantised weights): quality may change.
	changesMethod bool
	// multiGPU marks fixes that add GPUs.
	multiGPU bool
	// offload marks fixes that move state to CPU memory (a slow route of its own).
	offload bool
	// costless marks fixes that cost neither speed nor accuracy (autocast,
	// SDPA, 16-bit inference weights): once proposed they are never pruned.
	costless bool
	// params lists the values to try, least invasive first (micro-batch,
	// context length, GPU count; [0] for fixes without one). Empty: the fix
	// does not apply to w on g.
	params func(w memory.Workload, g catalog.GPU) []int
	// apply returns w with the fix; the planner re-resolves the result.
	apply func(w memory.Workload, g catalog.GPU, param int) memory.Workload
	// describe fills Title, Cost, Snippet and SnippetLang.
	describe func(before, after memory.Workload, g catalog.GPU, fw fix.Framework, param int) fix.Fix
}

// Fix IDs. They are stable: clients and tests key on them.
const (
	IDGradAccum         = "grad-accum"
	IDMixedPrecision    = "mixed-precision"
	IDGradCheckpointing = "grad-checkpointing"
	IDFlashAttention    = "flash-attention"
	IDLoRA              = "lora"
	IDOptim8bit         = "optim-8bit"
	IDChunkedLoss       = "chunked-loss"
	IDQLoRA             = "qlora"
	IDZero2             = "zero-2"
	IDZero3             = "zero-3"
	IDZeroOffload       = "zero-offload"
	IDParamOffload      = "param-offload"
	IDTensorParallel    = "tensor-parallel"
	IDHalfPrecision     = "half-precision"
	IDFP8KVCache        = "fp8-kv-cache"
	IDMaxModelLen       = "max-model-len"
	IDSmallerBatch      = "smaller-batch"
	IDInt8Weights       = "int8-weights"
	IDNF4Weights        = "nf4-weights"
)

// Fix settings the planner proposes.
const (
	// loraRank and loraTargets follow the QLoRA paper (§4: adapters on all
	// linear layers are needed to match full fine-tuning; rank matters less).
	loraRank    = 16
	loraTargets = "all"
	// minModelLen is the shortest context the planner proposes: shorter
	// than 2k tokens no longer holds a typical chat prompt and answer.
	minModelLen = 2048
	// hostRAMBytesPerParam is DeepSpeed's CPU estimate for optimizer
	// offload: 16 bytes per parameter (fp32 master, Adam m and v, fp32
	// grads) × its 1.5 buffer factor (estimate_zero2_model_states_mem_needs).
	hostRAMBytesPerParam = 24
	// gpusPerNode is the common server size (8 GPUs: DGX/HGX, p4d/p5).
	gpusPerNode = 8
	// maxTensorParallel is one node: TP across nodes is too slow, so larger
	// layouts add pipeline stages.
	maxTensorParallel = gpusPerNode
)

var trainingCandidates = []*candidate{
	&mixedPrecision, &flashAttention, &gradAccum, &gradCheckpointing,
	&optim8bit, &chunkedLoss, &lora,
	&zero2, &zero3, &qlora, &zeroOffload, &paramOffload,
}

var inferenceCandidates = []*candidate{
	&halfPrecision, &flashAttention, &fp8KVCache, &maxModelLen, &smallerBatch,
	&int8Weights,
	&nf4Weights,
}

func candidatesFor(w memory.Workload) []*candidate {
	if w.Method == memory.MethodInference {
		return inferenceCandidates
	}
	return trainingCandidates
}

func scaleOutCandidate(w memory.Workload) *candidate {
	if w.Method == memory.MethodInference {
		return &tensorParallel
	}
	return &zero3ScaleOut
}

// when is the parameter list of a fix without a parameter: [0] when it
// applies, nothing when it does not.
func when(ok bool) []int {
	if ok {
		return []int{0}
	}
	return nil
}

// maxBatchChoices bounds the micro-batch sizes tried: a batch of 720720
// has 240 divisors, and the planner needs a handful of them.
const maxBatchChoices = 16

// divisorsBelow lists the divisors of n smaller than n, largest first; past
// maxBatchChoices it keeps the largest ones and 1.
func divisorsBelow(n int) []int {
	var small, large []int
	for d := 1; d*d <= n; d++ {
		if n%d == 0 {
			small = append(small, d)
			if d*d != n {
				large = append(large, n/d)
			}
		}
	}
	// large is n/1, n/2, ... (descending); small reversed continues below it.
	slices.Reverse(small)
	out := append(large, small...)[1:] // drop n itself
	if len(out) > maxBatchChoices {
		out = append(out[:maxBatchChoices-1], 1)
	}
	return out
}

// halfPrec is the 16-bit type the GPU supports: bf16, else fp16 (V100, T4).
func halfPrec(g catalog.GPU) string {
	if g.BF16 {
		return "bf16"
	}
	return "fp16"
}

func isTraining(w memory.Workload) bool { return w.Method != memory.MethodInference }

// ---- level 1: one-line changes ----

var mixedPrecision = candidate{
	id: IDMixedPrecision, level: fix.LevelOneLiner, costless: true,
	params: func(w memory.Workload, _ catalog.GPU) []int { return when(w.Precision == memory.PrecisionFP32) },
	apply: func(w memory.Workload, g catalog.GPU, _ int) memory.Workload {
		w.Precision = memory.Precision("mixed-" + halfPrec(g))
		return w
	},
	describe: func(_, _ memory.Workload, g catalog.GPU, fw fix.Framework, _ int) fix.Fix {
		if g.BF16 {
			return withSnippet(fix.Fix{
				Title: "bf16 autocast (mixed precision)",
				Cost:  "usually faster on tensor cores; bf16 trains as stably as fp32 for fine-tuning",
			}, fw, autocastSnippets(true))
		}
		return withSnippet(fix.Fix{
			Title: fmt.Sprintf("fp16 autocast with GradScaler (%s has no bf16)", g.Name),
			Cost:  "faster on tensor cores; fp16 needs loss scaling (GradScaler) to avoid underflow",
		}, fw, autocastSnippets(false))
	},
}

var flashAttention = candidate{
	id: IDFlashAttention, level: fix.LevelOneLiner, costless: true,
	// vLLM always runs fused attention kernels; the setting is for transformers and plain PyTorch.
	params: func(w memory.Workload, _ catalog.GPU) []int {
		return when(w.Attention == memory.AttentionEager && w.Engine != "vllm")
	},
	apply: func(w memory.Workload, _ catalog.GPU, _ int) memory.Workload {
		w.Attention = memory.AttentionFlash
		return w
	},
	describe: func(_, after memory.Workload, g catalog.GPU, fw fix.Framework, _ int) fix.Fix {
		return withSnippet(fix.Fix{
			Title: "SDPA / FlashAttention instead of eager attention",
			Cost:  "exact (same results) and faster; FlashAttention-2 needs Ampere or newer, SDPA's memory-efficient kernel runs everywhere",
		}, fw, attentionSnippets(after, g))
	},
}

var gradAccum = candidate{
	id: IDGradAccum, level: fix.LevelOneLiner,
	params: func(w memory.Workload, _ catalog.GPU) []int {
		if !isTraining(w) {
			return nil
		}
		return divisorsBelow(w.Batch)
	},
	apply: func(w memory.Workload, _ catalog.GPU, m int) memory.Workload {
		w.Batch = m
		return w
	},
	describe: func(before, _ memory.Workload, _ catalog.GPU, fw fix.Framework, m int) fix.Fix {
		k := before.Batch / m
		return withSnippet(fix.Fix{
			Title: fmt.Sprintf("Micro-batch %d with %d gradient-accumulation steps (effective batch %d unchanged)", m, k, before.Batch),
			Cost:  fmt.Sprintf("same results; %d smaller forward/backward passes per optimizer step, a little less throughput", k),
		}, fw, gradAccumSnippets(m, k))
	},
}

var gradCheckpointing = candidate{
	id: IDGradCheckpointing, level: fix.LevelOneLiner,
	params: func(w memory.Workload, _ catalog.GPU) []int { return when(isTraining(w) && !w.GradCheckpointing) },
	apply: func(w memory.Workload, _ catalog.GPU, _ int) memory.Workload {
		w.GradCheckpointing = true
		return w
	},
	describe: func(_, _ memory.Workload, _ catalog.GPU, fw fix.Framework, _ int) fix.Fix {
		return withSnippet(fix.Fix{
			Title: "Gradient (activation) checkpointing",
			Cost:  "about 20-30% slower steps (the forward pass is recomputed during backward); no accuracy change",
		}, fw, checkpointingSnippets)
	},
}

// ---- level 2: change the method ----

// Parameters of the optim-8bit fix, least invasive first.
const (
	optim8bitPlain = 0 // bitsandbytes AdamW8bit
	optim8bitPaged = 1 // PagedAdamW8bit: states in unified memory, paged to CPU RAM under pressure
)

var optim8bit = candidate{
	id: IDOptim8bit, level: fix.LevelMethod,
	params: func(w memory.Workload, _ catalog.GPU) []int {
		switch {
		case !isTraining(w):
			return nil
		case w.Optimizer == memory.OptimizerAdamW:
			return []int{optim8bitPlain, optim8bitPaged}
		case w.Optimizer == memory.OptimizerAdamW8bit:
			return []int{optim8bitPaged}
		}
		return nil
	},
	apply: func(w memory.Workload, _ catalog.GPU, kind int) memory.Workload {
		w.Optimizer = memory.OptimizerAdamW8bit
		if kind == optim8bitPaged {
			w.Optimizer = memory.OptimizerPagedAdamW8bit
		}
		return w
	},
	describe: func(_, _ memory.Workload, _ catalog.GPU, fw fix.Framework, kind int) fix.Fix {
		if kind == optim8bitPaged {
			return withSnippet(fix.Fix{
				Title: "Paged 8-bit AdamW (bitsandbytes)",
				Cost:  "8-bit states in CUDA unified memory that page to CPU RAM under pressure: steps slow down when they do; needs bitsandbytes (CUDA)",
			}, fw, optim8bitSnippets(true))
		}
		return withSnippet(fix.Fix{
			Title: "8-bit AdamW (bitsandbytes)",
			Cost:  "optimizer states in 8 bits: convergence close to 32-bit AdamW in published results; needs bitsandbytes (CUDA)",
		}, fw, optim8bitSnippets(false))
	},
}

var chunkedLoss = candidate{
	id: IDChunkedLoss, level: fix.LevelMethod,
	params: func(w memory.Workload, _ catalog.GPU) []int {
		return when(isTraining(w) && !w.ChunkedLoss && w.Model.VocabSize > 0)
	},
	apply: func(w memory.Workload, _ catalog.GPU, _ int) memory.Workload {
		w.ChunkedLoss = true
		return w
	},
	describe: func(before, _ memory.Workload, _ catalog.GPU, fw fix.Framework, _ int) fix.Fix {
		return withSnippet(fix.Fix{
			Title: fmt.Sprintf("Chunked (fused linear) cross-entropy: never materialise the %d-token × %d-vocab logits", before.Batch*before.SeqLen, before.Model.VocabSize),
			Cost:  "exact loss; about the same speed; needs Liger Kernel (or another chunked cross-entropy)",
		}, fw, chunkedLossSnippets)
	},
}

var lora = candidate{
	id: IDLoRA, level: fix.LevelMethod, changesMethod: true,
	params: func(w memory.Workload, _ catalog.GPU) []int {
		return when(w.Method == memory.MethodFull || w.Method == memory.MethodFreeze)
	},
	apply: func(w memory.Workload, g catalog.GPU, _ int) memory.Workload {
		w.Method = memory.MethodLoRA
		w.LoRARank, w.LoRATargets = loraRank, loraTargets
		// The frozen base needs no fp32 master copy: under AMP it is loaded
		// in the GPU's 16-bit type (fp16 on V100/T4, whatever was asked).
		if w.Precision == memory.PrecisionMixedBF16 || w.Precision == memory.PrecisionMixedFP16 {
			w.Precision = memory.Precision(halfPrec(g))
		}
		return w
	},
	describe: func(before, after memory.Workload, g catalog.GPU, fw fix.Framework, _ int) fix.Fix {
		return withSnippet(fix.Fix{
			Title: fmt.Sprintf("LoRA (rank %d on all linear layers) instead of %s", loraRank, methodWords(before.Method)),
			Cost: fmt.Sprintf("trains %s adapter parameters instead of %s: often within a point of full fine-tuning, but can lag on hard or very different tasks",
				countWords(after.TrainableParams), countWords(before.TrainableParams)),
		}, fw, loraSnippets(after, g))
	},
}

// ---- level 3: change the configuration ----

var (
	zero2 = zeroCandidate(IDZero2, 2, "DeepSpeed ZeRO-2 (FSDP SHARD_GRAD_OP) across your %d GPUs",
		"same results; gradients and optimizer states are sharded, communication about the same as plain data parallel")
	zero3 = zeroCandidate(IDZero3, 3, "DeepSpeed ZeRO-3 (FSDP full sharding) across your %d GPUs",
		"same results; parameters are gathered layer by layer, about 1.5× the communication of ZeRO-2")
)

// zeroCandidate shards model states to ZeRO stage across the GPUs the user
// already has; titleFormat takes the GPU count.
func zeroCandidate(id string, stage int, titleFormat, cost string) candidate {
	return candidate{
		id: id, level: fix.LevelConfig,
		params: func(w memory.Workload, _ catalog.GPU) []int {
			return when(isTraining(w) && w.GPUs > 1 && w.ZeroStage < stage)
		},
		apply: func(w memory.Workload, _ catalog.GPU, _ int) memory.Workload {
			w.ZeroStage = stage
			return w
		},
		describe: func(before, _ memory.Workload, _ catalog.GPU, fw fix.Framework, _ int) fix.Fix {
			return withSnippet(fix.Fix{Title: fmt.Sprintf(titleFormat, before.GPUs), Cost: cost},
				fw, zeroSnippets(stage, memory.OffloadNone, before.GPUs))
		},
	}
}

var qlora = candidate{
	id: IDQLoRA, level: fix.LevelConfig, changesMethod: true,
	params: func(w memory.Workload, _ catalog.GPU) []int {
		return when(w.Method == memory.MethodLoRA || w.Method == memory.MethodFull || w.Method == memory.MethodFreeze)
	},
	apply: func(w memory.Workload, _ catalog.GPU, _ int) memory.Workload {
		if w.Method != memory.MethodLoRA {
			w.LoRARank, w.LoRATargets = loraRank, loraTargets
		}
		w.Method = memory.MethodQLoRA
		w.Precision = memory.PrecisionNF4
		return w
	},
	describe: func(before, after memory.Workload, g catalog.GPU, fw fix.Framework, _ int) fix.Fix {
		title := "QLoRA: base weights in 4-bit NF4, LoRA adapters in 16-bit"
		if before.Method != memory.MethodLoRA {
			title = fmt.Sprintf("QLoRA (4-bit NF4 base, rank %d adapters on all linear layers) instead of %s", after.LoRARank, methodWords(before.Method))
		}
		return withSnippet(fix.Fix{
			Title: title,
			Cost:  "slower steps (weights are dequantised on the fly) and a small accuracy risk from 4-bit weights; the QLoRA paper matches 16-bit LoRA on its benchmarks",
		}, fw, qloraSnippets(after, g))
	},
}

var zeroOffload = candidate{
	id: IDZeroOffload, level: fix.LevelConfig, offload: true,
	params: func(w memory.Workload, _ catalog.GPU) []int {
		return when((w.Method == memory.MethodFull || w.Method == memory.MethodFreeze) &&
			w.Offload == memory.OffloadNone && w.Optimizer != memory.OptimizerNone)
	},
	apply: func(w memory.Workload, _ catalog.GPU, _ int) memory.Workload {
		w.Offload = memory.OffloadOptimizer
		w.ZeroStage = max(w.ZeroStage, 2)
		return w
	},
	describe: func(before, after memory.Workload, _ catalog.GPU, fw fix.Framework, _ int) fix.Fix {
		return withSnippet(fix.Fix{
			Title: "ZeRO-Offload: optimizer states and step on the CPU",
			Cost: fmt.Sprintf("much slower optimizer step (CPU Adam, PCIe transfers); needs about %s of host RAM per node",
				gibWords(hostRAMBytesPerParam*before.TrainableParams)),
		}, fw, zeroSnippets(after.ZeroStage, memory.OffloadOptimizer, after.GPUs))
	},
}

var paramOffload = candidate{
	id: IDParamOffload, level: fix.LevelConfig, offload: true,
	params: func(w memory.Workload, _ catalog.GPU) []int {
		return when(isTraining(w) && w.Method != memory.MethodQLoRA && w.Offload != memory.OffloadParam)
	},
	apply: func(w memory.Workload, _ catalog.GPU, _ int) memory.Workload {
		w.Offload = memory.OffloadParam
		w.ZeroStage = 3
		return w
	},
	describe: func(before, after memory.Workload, _ catalog.GPU, fw fix.Framework, _ int) fix.Fix {
		return withSnippet(fix.Fix{
			Title: "ZeRO-3 with parameters and optimizer offloaded to the CPU (ZeRO-Infinity)",
			Cost: fmt.Sprintf("several times slower (every layer's weights cross PCIe each step); needs %s+ of host RAM",
				gibWords(hostRAMBytesPerParam*before.Params)),
		}, fw, zeroSnippets(3, memory.OffloadParam, after.GPUs))
	},
}

// scaleOutGPUCounts are the GPU counts tried when adding GPUs: any count
// within one 8-GPU node, then whole nodes.
var scaleOutGPUCounts = []int{2, 3, 4, 5, 6, 7, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512}

func moreGPUs(w memory.Workload) []int {
	var out []int
	for _, n := range scaleOutGPUCounts {
		if n > w.GPUs && n <= MaxScaleOutGPUs {
			out = append(out, n)
		}
	}
	return out
}

var zero3ScaleOut = candidate{
	id: IDZero3, level: fix.LevelConfig, multiGPU: true,
	params: func(w memory.Workload, _ catalog.GPU) []int {
		if !isTraining(w) {
			return nil
		}
		var out []int
		for _, n := range moreGPUs(w) {
			if n%(max(1, w.TP)*max(1, w.PP)) == 0 {
				out = append(out, n)
			}
		}
		return out
	},
	apply: func(w memory.Workload, _ catalog.GPU, n int) memory.Workload {
		w.GPUs = n
		w.ZeroStage = 3
		return w
	},
	describe: func(_, after memory.Workload, g catalog.GPU, fw fix.Framework, n int) fix.Fix {
		return withSnippet(fix.Fix{
			Title: fmt.Sprintf("DeepSpeed ZeRO-3 (FSDP full sharding) across %d× %s", after.GPUs, g.Name),
			Cost:  fmt.Sprintf("%d GPUs instead of one; same results; multi-node runs need a fast interconnect (InfiniBand/EFA)", after.GPUs),
		}, fw, zeroSnippets(3, after.Offload, after.GPUs))
	},
}

// ---- inference ----

var halfPrecision = candidate{
	id: IDHalfPrecision, level: fix.LevelOneLiner, costless: true,
	params: func(w memory.Workload, _ catalog.GPU) []int {
		return when(!isTraining(w) && w.Precision == memory.PrecisionFP32)
	},
	apply: func(w memory.Workload, g catalog.GPU, _ int) memory.Workload {
		w.Precision = memory.Precision(halfPrec(g))
		return w
	},
	describe: func(_, after memory.Workload, g catalog.GPU, fw fix.Framework, _ int) fix.Fix {
		return withSnippet(fix.Fix{
			Title: fmt.Sprintf("Load the weights in %s instead of fp32", halfPrec(g)),
			Cost:  "no measurable quality loss for inference and about twice as fast",
		}, fw, halfPrecisionSnippets(after, g))
	},
}

var fp8KVCache = candidate{
	id: IDFP8KVCache, level: fix.LevelOneLiner,
	params: func(w memory.Workload, g catalog.GPU) []int {
		return when(!isTraining(w) && g.FP8 && w.KVCacheDtype != "fp8")
	},
	apply: func(w memory.Workload, _ catalog.GPU, _ int) memory.Workload {
		w.KVCacheDtype = "fp8"
		return w
	},
	describe: func(_, after memory.Workload, g catalog.GPU, fw fix.Framework, _ int) fix.Fix {
		return withSnippet(fix.Fix{
			Title: fmt.Sprintf("fp8 KV cache (%s supports fp8)", g.Name),
			Cost:  "halves the KV cache; small accuracy risk on long contexts, usually unmeasurable with calibrated scales",
		}, fw, fp8KVSnippets(after))
	},
}

var maxModelLen = candidate{
	id: IDMaxModelLen, level: fix.LevelOneLiner,
	params: func(w memory.Workload, _ catalog.GPU) []int {
		if isTraining(w) {
			return nil
		}
		var out []int
		for n := w.SeqLen / 2; n >= minModelLen; n /= 2 {
			out = append(out, n)
		}
		return out
	},
	apply: func(w memory.Workload, _ catalog.GPU, n int) memory.Workload {
		w.SeqLen = n
		return w
	},
	describe: func(before, after memory.Workload, _ catalog.GPU, fw fix.Framework, n int) fix.Fix {
		return withSnippet(fix.Fix{
			Title: fmt.Sprintf("Cap the context at %d tokens (max_model_len; was %d)", n, before.SeqLen),
			Cost:  fmt.Sprintf("requests longer than %d tokens (prompt + output) are refused", n),
		}, fw, maxModelLenSnippets(after, n))
	},
}

var smallerBatch = candidate{
	id: IDSmallerBatch, level: fix.LevelOneLiner,
	params: func(w memory.Workload, _ catalog.GPU) []int {
		if isTraining(w) {
			return nil
		}
		return divisorsBelow(w.Batch)
	},
	apply: func(w memory.Workload, _ catalog.GPU, n int) memory.Workload {
		w.Batch = n
		return w
	},
	describe: func(before, after memory.Workload, _ catalog.GPU, fw fix.Framework, n int) fix.Fix {
		return withSnippet(fix.Fix{
			Title: fmt.Sprintf("Serve %d sequences at a time instead of %d", n, before.Batch),
			Cost:  "lower throughput under load; latency per request unchanged",
		}, fw, smallerBatchSnippets(after, n))
	},
}

var int8Weights = candidate{
	id: IDInt8Weights, level: fix.LevelMethod, changesMethod: true,
	params: func(w memory.Workload, _ catalog.GPU) []int {
		return when(!isTraining(w) && w.Precision != memory.PrecisionInt8 && w.Precision != memory.PrecisionNF4)
	},
	apply: func(w memory.Workload, _ catalog.GPU, _ int) memory.Workload {
		w.Precision = memory.PrecisionInt8
		return w
	},
	describe: func(_, after memory.Workload, g catalog.GPU, fw fix.Framework, _ int) fix.Fix {
		cost := "small accuracy loss; bitsandbytes int8 is slower than 16-bit, W8A8 serving kernels are faster"
		if g.FP8 {
			cost = fmt.Sprintf("small accuracy loss; FP8 weights in vLLM are faster than 16-bit on %s (fp8 tensor cores), bitsandbytes int8 is slower", g.Name)
		}
		return withSnippet(fix.Fix{Title: "8-bit weights", Cost: cost}, fw, int8Snippets(after, g))
	},
}

var nf4Weights = candidate{
	id: IDNF4Weights, level: fix.LevelConfig, changesMethod: true,
	params: func(w memory.Workload, _ catalog.GPU) []int {
		return when(!isTraining(w) && w.Precision != memory.PrecisionNF4)
	},
	apply: func(w memory.Workload, _ catalog.GPU, _ int) memory.Workload {
		w.Precision = memory.PrecisionNF4
		return w
	},
	describe: func(_, after memory.Workload, g catalog.GPU, fw fix.Framework, _ int) fix.Fix {
		return withSnippet(fix.Fix{
			Title: "4-bit weights (NF4, or an AWQ/GPTQ checkpoint)",
			Cost:  "noticeable accuracy risk on reasoning and code; prefer a published AWQ/GPTQ checkpoint for serving speed",
		}, fw, nf4Snippets(after, g))
	},
}

var tensorParallel = candidate{
	id: IDTensorParallel, level: fix.LevelConfig, multiGPU: true,
	params: func(w memory.Workload, _ catalog.GPU) []int {
		if isTraining(w) {
			return nil
		}
		// Tensor parallel within a node, then whole nodes as pipeline stages.
		var out []int
		for _, n := range moreGPUs(w) {
			tp, pp := splitTP(n, w.Model)
			if tp == min(n, maxTensorParallel) && pp <= max(1, w.Model.NumLayers) {
				out = append(out, n)
			}
		}
		return out
	},
	apply: func(w memory.Workload, _ catalog.GPU, n int) memory.Workload {
		w.TP, w.PP = splitTP(n, w.Model)
		w.GPUs = n
		return w
	},
	describe: func(_, after memory.Workload, g catalog.GPU, fw fix.Framework, n int) fix.Fix {
		title := fmt.Sprintf("Tensor parallel across %d× %s", n, g.Name)
		if after.PP > 1 {
			title = fmt.Sprintf("Tensor parallel %d × pipeline parallel %d across %d× %s", after.TP, after.PP, n, g.Name)
		}
		return withSnippet(fix.Fix{
			Title: title,
			Cost:  fmt.Sprintf("%d GPUs (NVLink within a node preferred); lower latency per token, %d× the GPU cost", n, n),
		}, fw, tensorParallelSnippets(after))
	},
}

// splitTP divides n GPUs into tensor parallel within a node (a divisor of
// the attention heads, at most maxTensorParallel) and pipeline stages.
func splitTP(n int, m catalog.Model) (tp, pp int) {
	tp = 1
	for t := min(n, maxTensorParallel); t >= 1; t-- {
		if n%t == 0 && (m.NumAttentionHeads == 0 || m.NumAttentionHeads%t == 0) {
			tp = t
			break
		}
	}
	return tp, n / tp
}

func methodWords(m memory.Method) string {
	switch m {
	case memory.MethodFull:
		return "full fine-tuning"
	case memory.MethodFreeze:
		return "partial (frozen-layer) fine-tuning"
	}
	return string(m)
}

// countWords writes a parameter count as "4.2M" or "6.74B".
func countWords(n int64) string { return catalog.FormatSize(n) }

func gibWords(n int64) string {
	return fmt.Sprintf("%.0f GiB", float64(n)/(1<<30))
}
