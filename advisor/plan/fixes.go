package plan

import (
	"fmt"
	"math"
	"slices"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/advisor/memory"
)

// candidate is one kind of fix the planner can try: a fix of the
// catalogue (advisor/fix), which owns its id, level, title, cost and
// snippets, and the planner's own knowledge of when it applies and what it
// does to the workload.
type candidate struct {
	id string
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
	// values are the numbers the catalogue's detail and snippets are
	// written with, for the step from before to after.
	values func(before, after memory.Workload, g catalog.GPU, param int) fix.Params
}

// level is the catalogue's stage for the fix.
func (c *candidate) level() fix.Level {
	d, _ := fix.Lookup(c.id)
	return d.Level
}

// describe renders the fix for framework fw from the catalogue. A sharding
// fix for a DeepSpeed job whose stack the query did not name is written as
// DeepSpeed config, not as PyTorch's FSDP.
func (c *candidate) describe(before, after memory.Workload, g catalog.GPU, fw fix.Framework, param int) fix.Fix {
	if (fw == fix.FrameworkUnknown || fw == fix.FrameworkPyTorch) && after.Sharding == memory.ShardingDeepSpeed && after.ZeroStage > 0 {
		switch c.id {
		case fix.Zero2, fix.Zero3, fix.ZeroOffload, fix.ParamOffload:
			fw = fix.FrameworkDeepSpeed
		}
	}
	f, _ := fix.Make(c.id, fw, c.values(before, after, g, param))
	return f
}

// Fix settings the planner proposes.
const (
	// loraRank and loraTargets follow the QLoRA paper (§4: adapters on all
	// linear layers are needed to match full fine-tuning; rank matters less).
	loraRank    = 16
	loraTargets = "all"
	// minModelLen is the shortest context the planner proposes: shorter
	// than 2k tokens no longer holds a typical chat prompt and answer.
	minModelLen = 2048
	// offloadStateBytesPerParam is what DeepSpeed's CPU estimate for
	// optimizer offload counts per parameter on one GPU: fp32 master, Adam
	// m and v, fp32 grads (estimate_zero2_model_states_mem_needs:
	// Ψ·max(4·N, 16)·1.5, N the GPUs of the node).
	offloadStateBytesPerParam = 16
	// offloadGradBytesPerGPU is the 4 bytes per parameter per GPU of that
	// formula's max(4·N, 16): each GPU's fp32 gradient buffer.
	offloadGradBytesPerGPU = 4
	// gpusPerNode is the common server size (8 GPUs: DGX/HGX, p4d/p5).
	gpusPerNode = 8
	// maxTensorParallel is one node: TP across nodes is too slow, so larger
	// layouts add pipeline stages.
	maxTensorParallel = gpusPerNode
)

// trainingCandidates are in docs/contracts.md §6 order, easiest first. The plan
// first walks those that keep the user's hardware and method
// (keepsHardwareAndMethod: one-liners, checkpointing, a chunked loss,
// 8-bit states, the optimizer step in backward, a higher ZeRO stage across
// the GPUs they have, offloads to CPU RAM on those GPUs) and only when
// they cannot make it fit all of them, LoRA and QLoRA included.
var trainingCandidates = []*candidate{
	&mixedPrecision, &flashAttention, &gradAccum, &gradCheckpointing,
	&chunkedLoss, &optim8bit, &optimInBackward, &lora,
	&zero2, &zero3, &qlora, &activationOffload, &zeroOffload, &paramOffload,
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
	id: fix.MixedPrecision, costless: true,
	params: func(w memory.Workload, _ catalog.GPU) []int { return when(w.Precision == memory.PrecisionFP32) },
	apply: func(w memory.Workload, g catalog.GPU, _ int) memory.Workload {
		w.Precision = memory.Precision("mixed-" + halfPrec(g))
		return w
	},
	values: func(before, _ memory.Workload, g catalog.GPU, _ int) fix.Params { return base(before, g) },
}

var flashAttention = candidate{
	id: fix.FlashAttention, costless: true,
	// vLLM always runs fused attention kernels; the setting is for transformers and plain PyTorch.
	params: func(w memory.Workload, _ catalog.GPU) []int {
		return when(w.Attention == memory.AttentionEager && w.Engine != "vllm")
	},
	apply: func(w memory.Workload, _ catalog.GPU, _ int) memory.Workload {
		w.Attention = memory.AttentionFlash
		return w
	},
	values: func(_, after memory.Workload, g catalog.GPU, _ int) fix.Params { return base(after, g) },
}

var gradAccum = candidate{
	id: fix.GradAccum,
	params: func(w memory.Workload, _ catalog.GPU) []int {
		if !isTraining(w) || w.OptimizerInBackward {
			return nil // a step fused into backward cannot accumulate
		}
		return divisorsBelow(w.Batch)
	},
	apply: func(w memory.Workload, _ catalog.GPU, m int) memory.Workload {
		w.GradAccumSteps = max(1, w.GradAccumSteps) * (w.Batch / m)
		w.Batch = m
		return w
	},
	values: func(before, _ memory.Workload, g catalog.GPU, m int) fix.Params {
		p := base(before, g)
		p.MicroBatch, p.AccumSteps, p.Batch = m, before.Batch/m, before.Batch
		return p
	},
}

var gradCheckpointing = candidate{
	id: fix.GradCheckpointing,
	params: func(w memory.Workload, _ catalog.GPU) []int {
		return when(isTraining(w) && (w.Checkpointing == memory.CheckpointOff || w.Checkpointing == memory.CheckpointSelective))
	},
	apply: func(w memory.Workload, _ catalog.GPU, _ int) memory.Workload {
		w.Checkpointing, w.GradCheckpointing = memory.CheckpointFull, true
		return w
	},
	values: func(before, _ memory.Workload, g catalog.GPU, _ int) fix.Params { return base(before, g) },
}

// ---- level 2: change the method ----

// Parameters of the optim-8bit fix, least invasive first.
const (
	optim8bitPlain = 0 // bitsandbytes AdamW8bit
	optim8bitPaged = 1 // PagedAdamW8bit: states in unified memory, paged to CPU RAM under pressure
)

var optim8bit = candidate{
	id: fix.Optim8bit,
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
	values: func(before, _ memory.Workload, g catalog.GPU, kind int) fix.Params {
		p := base(before, g)
		p.Paged = kind == optim8bitPaged
		return p
	},
}

var chunkedLoss = candidate{
	id: fix.ChunkedLoss,
	params: func(w memory.Workload, _ catalog.GPU) []int {
		return when(isTraining(w) && !w.ChunkedLoss && w.Model.VocabSize > 0)
	},
	apply: func(w memory.Workload, _ catalog.GPU, _ int) memory.Workload {
		w.Loss, w.ChunkedLoss = memory.LossChunked, true
		return w
	},
	values: func(before, _ memory.Workload, g catalog.GPU, _ int) fix.Params {
		p := base(before, g)
		p.LogitsTokens, p.Vocab = before.Batch*before.SeqLen, before.Model.VocabSize
		return p
	},
}

var lora = candidate{
	id: fix.LoRA, changesMethod: true,
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
	values: func(before, after memory.Workload, g catalog.GPU, _ int) fix.Params {
		p := base(after, g)
		p.LoRARank = loraRank
		p.TrainableParams, p.WasTrainableParams = countWords(after.TrainableParams), countWords(before.TrainableParams)
		return p
	},
}

var optimInBackward = candidate{
	id: fix.OptimizerInBackward,
	// Worth it where the gradients are large (every weight trained); not
	// with DeepSpeed, whose engine owns the step, nor with accumulation.
	params: func(w memory.Workload, _ catalog.GPU) []int {
		return when((w.Method == memory.MethodFull || w.Method == memory.MethodFreeze) && !w.OptimizerInBackward &&
			w.Optimizer != memory.OptimizerNone && w.Sharding != memory.ShardingDeepSpeed && w.GradAccumSteps <= 1)
	},
	apply: func(w memory.Workload, _ catalog.GPU, _ int) memory.Workload {
		w.OptimizerInBackward = true
		return w
	},
	values: func(before, _ memory.Workload, g catalog.GPU, _ int) fix.Params { return base(before, g) },
}

var activationOffload = candidate{
	id: fix.ActivationOffload, offload: true,
	params: func(w memory.Workload, _ catalog.GPU) []int {
		return when(isTraining(w) && w.GradCheckpointing && !w.ActivationOffload && w.Checkpointing != memory.CheckpointOffloaded)
	},
	apply: func(w memory.Workload, _ catalog.GPU, _ int) memory.Workload {
		w.ActivationOffload = true
		return w
	},
	values: func(before, _ memory.Workload, g catalog.GPU, _ int) fix.Params { return base(before, g) },
}

// ---- level 3: change the configuration ----

var (
	zero2 = zeroCandidate(fix.Zero2, 2)
	zero3 = zeroCandidate(fix.Zero3, 3)
)

// zeroCandidate shards model states to ZeRO stage across the GPUs the user
// already has.
func zeroCandidate(id string, stage int) candidate {
	return candidate{
		id: id,
		params: func(w memory.Workload, _ catalog.GPU) []int {
			return when(isTraining(w) && w.GPUs/max(1, w.TP*w.PP) > 1 && w.ZeroStage < stage)
		},
		apply: func(w memory.Workload, _ catalog.GPU, _ int) memory.Workload {
			w.ZeroStage = stage
			w.Sharding = shardingFor(w)
			return w
		},
		values: func(before, _ memory.Workload, g catalog.GPU, _ int) fix.Params { return base(before, g) },
	}
}

var qlora = candidate{
	id: fix.QLoRA, changesMethod: true,
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
	values: func(before, after memory.Workload, g catalog.GPU, _ int) fix.Params {
		p := base(after, g)
		p.LoRARank = max(after.LoRARank, 1)
		p.GradCheckpointing = after.GradCheckpointing
		if before.Method != memory.MethodLoRA {
			p.WasTrainableParams = countWords(before.TrainableParams)
		}
		return p
	},
}

var zeroOffload = candidate{
	id: fix.ZeroOffload, offload: true,
	// DeepSpeed's optimizer offload; FSDP has only the full CPU offload
	// (paramOffload).
	params: func(w memory.Workload, _ catalog.GPU) []int {
		return when((w.Method == memory.MethodFull || w.Method == memory.MethodFreeze) && w.Sharding != memory.ShardingFSDP &&
			w.Offload == memory.OffloadNone && w.Optimizer != memory.OptimizerNone)
	},
	apply: func(w memory.Workload, _ catalog.GPU, _ int) memory.Workload {
		w.OptimizerInBackward = false // the step runs on the CPU now
		w.Offload = memory.OffloadOptimizer
		w.ZeroStage = max(w.ZeroStage, 2)
		w.Sharding = memory.ShardingDeepSpeed
		return w
	},
	values: func(before, after memory.Workload, g catalog.GPU, _ int) fix.Params {
		p := base(after, g)
		p.ZeroStage = after.ZeroStage
		p.HostRAM = gibWords(zeroOffloadHostBytes(before, after.ZeroStage))
		return p
	},
}

var paramOffload = candidate{
	id: fix.ParamOffload, offload: true,
	// ZeRO-3 offload_param, or FSDP's CPU offload (FSDP-QLoRA offloads the
	// 4-bit base this way).
	params: func(w memory.Workload, _ catalog.GPU) []int {
		return when(isTraining(w) && w.Offload != memory.OffloadParam)
	},
	apply: func(w memory.Workload, _ catalog.GPU, _ int) memory.Workload {
		w.OptimizerInBackward = false // the step runs on the CPU now
		w.Offload = memory.OffloadParam
		w.ZeroStage = 3
		w.Sharding = shardingFor(w)
		return w
	},
	values: func(before, after memory.Workload, g catalog.GPU, _ int) fix.Params {
		p := base(after, g)
		p.HostRAM = gibWords(paramOffloadHostBytes(before))
		return p
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
	id: fix.Zero3, multiGPU: true,
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
		w.Sharding = shardingFor(w)
		return w
	},
	values: func(before, after memory.Workload, g catalog.GPU, _ int) fix.Params {
		p := base(after, g)
		p.Offload = offloadWord(after.Offload)
		p.WasGPUs = before.GPUs
		return p
	},
}

// zeroOffloadHostBytes is DeepSpeed's own host RAM estimate for an
// optimizer offload, per node (docs/memory-model.md §6.9):
// estimate_zero2_model_states_mem_needs, Ψ·max(4·G, 16)·1.5 for G GPUs in
// all, at ZeRO-2; estimate_zero3_model_states_mem_needs with zero.Init
// (which the HF Trainer and accelerate use under ZeRO-3), Ψ·16·1.5 per
// node, at ZeRO-3. Ψ is the trained parameters.
func zeroOffloadHostBytes(w memory.Workload, stage int) int64 {
	psi := float64(w.TrainableParams)
	if stage == 3 {
		return int64(hostBufferFactor * offloadStateBytesPerParam * psi / float64(nodesOf(w)))
	}
	perParam := math.Max(offloadGradBytesPerGPU*float64(max(1, w.GPUs)), offloadStateBytesPerParam)
	return int64(hostBufferFactor * perParam * psi)
}

// nodesOf is how many nodes of gpusPerNode a workload's GPUs take.
func nodesOf(w memory.Workload) int { return (max(1, w.GPUs) + gpusPerNode - 1) / gpusPerNode }

// hostBufferFactor is DeepSpeed's CPU buffer factor in its offload
// estimates (the additional_buffer_factor default of both functions).
const hostBufferFactor = 1.5

// paramOffloadBytesPerParam is what estimate_zero3_model_states_mem_needs
// counts per parameter on the CPU when parameters are offloaded too, with
// zero.Init: Ψ·18·1.5 per node.
const paramOffloadBytesPerParam = 18

// paramOffloadHostBytes is the host RAM a parameter offload needs, per
// node: for full fine-tuning DeepSpeed's own estimate (Ψ·18·1.5 per node,
// estimate_zero3_model_states_mem_needs with zero.Init); for adapters,
// whose frozen base DeepSpeed's formula would count as trained, the whole
// job's model states as the workload stores them (a 4-bit base for
// QLoRA) × the same buffer factor.
func paramOffloadHostBytes(w memory.Workload) int64 {
	if w.Method == memory.MethodFull {
		return int64(hostBufferFactor * paramOffloadBytesPerParam * float64(w.TrainableParams) / float64(nodesOf(w)))
	}
	whole := w
	whole.GPUs, whole.TP, whole.PP = 1, 1, 1
	whole.Sharding, whole.ZeroStage, whole.Offload, whole.OptimizerInBackward = memory.ShardingNone, 0, memory.OffloadNone, false
	b := memory.Estimate(whole)
	return int64(hostBufferFactor * float64(b.WeightsBytes+b.GradientsBytes+b.OptimizerBytes))
}

// shardingFor is how a fix that shards keeps the user's stack: DeepSpeed
// stays DeepSpeed, anything else shards with FSDP (PyTorch's own).
func shardingFor(w memory.Workload) memory.Sharding {
	if w.Sharding == memory.ShardingDeepSpeed {
		return memory.ShardingDeepSpeed
	}
	return memory.ShardingFSDP
}

// ---- inference ----

var halfPrecision = candidate{
	id: fix.HalfPrecision, costless: true,
	params: func(w memory.Workload, _ catalog.GPU) []int {
		return when(!isTraining(w) && w.Precision == memory.PrecisionFP32)
	},
	apply: func(w memory.Workload, g catalog.GPU, _ int) memory.Workload {
		w.Precision = memory.Precision(halfPrec(g))
		return w
	},
	values: func(_, after memory.Workload, g catalog.GPU, _ int) fix.Params { return base(after, g) },
}

var fp8KVCache = candidate{
	id: fix.FP8KVCache,
	params: func(w memory.Workload, g catalog.GPU) []int {
		return when(!isTraining(w) && g.FP8 && w.KVCacheDtype != "fp8")
	},
	apply: func(w memory.Workload, _ catalog.GPU, _ int) memory.Workload {
		w.KVCacheDtype = "fp8"
		return w
	},
	values: func(_, after memory.Workload, g catalog.GPU, _ int) fix.Params { return base(after, g) },
}

var maxModelLen = candidate{
	id: fix.MaxModelLen,
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
	values: func(before, after memory.Workload, g catalog.GPU, n int) fix.Params {
		p := base(after, g)
		p.MaxModelLen, p.WasMaxModelLen = n, before.SeqLen
		return p
	},
}

var smallerBatch = candidate{
	id: fix.SmallerBatch,
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
	values: func(before, after memory.Workload, g catalog.GPU, n int) fix.Params {
		p := base(after, g)
		p.Sequences, p.WasSequences = n, before.Batch
		return p
	},
}

var int8Weights = candidate{
	id: fix.Int8Weights, changesMethod: true,
	params: func(w memory.Workload, _ catalog.GPU) []int {
		return when(!isTraining(w) && w.Precision != memory.PrecisionInt8 && w.Precision != memory.PrecisionNF4)
	},
	apply: func(w memory.Workload, _ catalog.GPU, _ int) memory.Workload {
		w.Precision = memory.PrecisionInt8
		return w
	},
	values: func(_, after memory.Workload, g catalog.GPU, _ int) fix.Params { return base(after, g) },
}

var nf4Weights = candidate{
	id: fix.NF4Weights, changesMethod: true,
	params: func(w memory.Workload, _ catalog.GPU) []int {
		return when(!isTraining(w) && w.Precision != memory.PrecisionNF4)
	},
	apply: func(w memory.Workload, _ catalog.GPU, _ int) memory.Workload {
		w.Precision = memory.PrecisionNF4
		return w
	},
	values: func(_, after memory.Workload, g catalog.GPU, _ int) fix.Params { return base(after, g) },
}

var tensorParallel = candidate{
	id: fix.TensorParallel, multiGPU: true,
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
	values: func(_, after memory.Workload, g catalog.GPU, _ int) fix.Params { return base(after, g) },
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

// base is what every fix's snippets know of the workload and the GPU.
func base(w memory.Workload, g catalog.GPU) fix.Params {
	return fix.Params{
		ModelID: w.Model.HFID,
		GPUName: g.Name,
		NoBF16:  !g.BF16,
		FP8:     g.FP8,
		GPUs:    w.GPUs,
		TP:      w.TP,
		PP:      w.PP,
	}
}

// offloadWord is the catalogue's name of an offload ("" for none).
func offloadWord(o memory.Offload) string {
	if o == memory.OffloadNone {
		return ""
	}
	return string(o)
}

// countWords writes a parameter count as "4.2M" or "6.74B".
func countWords(n int64) string { return catalog.FormatSize(n) }

func gibWords(n int64) string {
	return fmt.Sprintf("%.0f GiB", float64(n)/(1<<30))
}
