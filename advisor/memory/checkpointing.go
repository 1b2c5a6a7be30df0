package memory

import (
	"math"

	"github.com/vrambot/vrambot/advisor/catalog"
)

// offloadInFlightBlocks is how many blocks' saved tensors an offloading
// scheme keeps on the GPU while the rest sit in CPU RAM: the block being
// computed and the one whose copy is in flight on the side stream
// (torchtune OffloadActivations, Unsloth's offloaded checkpointing;
// docs/memory-model.md §6.1).
const offloadInFlightBlocks = 2

// checkpointed is the activation memory kept for backward under w's
// checkpointing mode (docs/memory-model.md §6.1), given what every block
// saves without checkpointing (total), the largest block's share (largest),
// the number of blocks and the tokens per micro-batch.
//
//   - off: every block's saved tensors (total).
//   - full: each block's input, 2·s·b·h in 16-bit (Korthikanti et al.
//     2022, full recomputation), plus one block's activations while it is
//     recomputed in backward.
//   - selective: per block what the per-op policy keeps
//     (selectiveBytesPerToken), plus one block being recomputed.
//   - offloaded (Unsloth): the block inputs live in CPU RAM; the GPU keeps
//     the ones in flight and one block being recomputed.
//
// Activation offloading (torchtune, TRL) moves what the mode keeps per
// block to CPU RAM in the same way.
func checkpointed(w Workload, m catalog.Model, r regime, total, largest, blocks, tokens float64) float64 {
	resident := blocks
	if w.ActivationOffload || w.Checkpointing == CheckpointOffloaded {
		resident = math.Min(blocks, offloadInFlightBlocks)
	}
	sp := sequenceParallelSplit(w)
	input := tokens * r.act * float64(m.HiddenSize) / sp
	switch w.Checkpointing {
	case CheckpointFull, CheckpointOffloaded:
		return resident*input + largest
	case CheckpointSelective:
		var kept, layers float64
		for i := range m.NumLayerGroups() {
			ls := shapeAt(m, i)
			kept += ls.layers * selectiveBytesPerToken(ls, r, float64(w.TP), sp)
			layers += ls.layers
		}
		return resident*tokens*kept/math.Max(1, layers) + largest
	}
	if blocks <= 0 {
		return total
	}
	return total * resident / blocks
}

// selectiveBytesPerToken is what torchtitan's per-op selective
// checkpointing keeps per token of one block (torchtitan
// distributed/activation_checkpoint.py, SelectiveAC: save the outputs of
// compute-intensive ops and attention, "except every second mm"; the
// counter restarts in every block): the block input; of the matmuls in
// forward order (q, k, v, o, then gate, up, down or fc1, fc2) the 1st,
// 3rd, 5th and 7th outputs; the attention output and its fp32 log-sum-exp
// per head. The attention scores are never kept, which is Megatron's
// selective recompute of the attention core (Korthikanti et al. 2022 §5,
// Table 2: TP + selective recompute). Matmul and attention outputs are
// split over TP ranks, the block input only under sequence parallelism (sp).
func selectiveBytesPerToken(ls layerShape, r regime, tp, sp float64) float64 {
	h, q, kv, i := ls.h, ls.q, ls.kv, ls.i
	outs := [7]float64{q, kv, kv, h, i, i, h}
	n := 7
	if !ls.gated {
		outs[5], n = h, 6
	}
	var kept float64
	for k := 0; k < n; k += 2 {
		kept += outs[k]
	}
	kept += q // attention output
	split := r.act*kept + fp32Bytes*ls.heads
	return r.act*h/sp + split/tp
}
