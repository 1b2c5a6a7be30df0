package serving

import (
	"math"

	"github.com/vrambot/vrambot/advisor/arch"
	"github.com/vrambot/vrambot/advisor/catalog"
)

// vocabPadding is the multiple vLLM pads the vocabulary to before
// splitting the embedding and the output head across tensor-parallel
// ranks (VocabParallelEmbedding, DEFAULT_VOCAB_PADDING_SIZE = 64).
const vocabPadding = 64

// stage is one pipeline stage: how many of the model's layers it holds
// and whether it is the first (embedding) or the last (output head and
// sampler). Without pipeline parallelism the one stage is both.
type stage struct {
	layers      int
	first, last bool
}

// stages splits the layers over pp stages as vLLM does (get_pp_indices:
// equal parts, the remainder to the stages before the last).
func stages(m arch.Model, pp int) []stage {
	n := max(1, m.NumLayers)
	pp = min(max(1, pp), n)
	out := make([]stage, pp)
	for i := range out {
		out[i].layers = n / pp
	}
	for i := 2; i < n%pp+2; i++ {
		out[pp-i].layers++
	}
	out[0].first, out[pp-1].last = true, true
	return out
}

// rankShares is the fraction of each tensor group's parameters that one
// GPU of stage st holds under tensor parallelism tp, as vLLM, SGLang and
// TGI shard a model:
//   - the vocabulary-parallel embedding and output head are split (padded
//     to vocabPadding) and live on the first and the last stage;
//   - column/row-parallel projections (attention, MLP, every expert's
//     slice, shared experts, the vision tower) are split;
//   - the KV projections of a model with fewer KV heads than tp are
//     replicated so that every rank holds one head;
//   - MLA's down-projections to the latent (q_a_proj, kv_a_proj_with_mqa)
//     and their norms are replicated (ReplicatedLinear);
//   - norms and routers are replicated;
//   - the MTP modules are not loaded (speculative decoding is off).
func rankShares(m arch.Model, tp int, st stage) arch.ByGroup[float64] {
	var s arch.ByGroup[float64]
	t := float64(tp)
	frac := float64(st.layers) / float64(max(1, m.NumLayers))
	vocab := float64(max(1, m.VocabSize))
	padded := math.Ceil(vocab/vocabPadding) * vocabPadding
	vocabShare := math.Ceil(padded/t) / vocab
	if st.first {
		s[arch.TensorEmbedding] = vocabShare
		s[arch.TensorVision] = 1 / t
	}
	if st.last {
		s[arch.TensorLMHead] = vocabShare
	}
	s[arch.TensorAttention] = attentionShare(m, tp) * frac
	s[arch.TensorMLP] = frac / t
	s[arch.TensorExperts] = frac / t
	s[arch.TensorSharedExperts] = frac / t
	s[arch.TensorRouter] = frac
	s[arch.TensorNorms] = frac
	return s
}

// attentionShare is the fraction of the attention parameters one
// tensor-parallel rank holds: everything split by tp except the replicated
// parts (KV heads when there are fewer than tp, MLA's latent projections).
func attentionShare(m arch.Model, tp int) float64 {
	if tp <= 1 {
		return 1
	}
	total := float64(m.ParamsByGroup()[arch.TensorAttention])
	if total <= 0 {
		return 1 / float64(tp)
	}
	h := float64(m.HiddenSize)
	var replicated float64 // parameters every rank holds in full
	for _, g := range m.Layers() {
		a := g.Attention
		n := float64(g.Layers)
		switch a.Kind {
		case arch.KindMLA:
			// fused q_a_proj + kv_a_proj_with_mqa and their norms.
			r := h*float64(a.KVLoRARank+a.RopeDim) + float64(a.KVLoRARank)
			if a.QLoRARank > 0 {
				r += h*float64(a.QLoRARank) + float64(a.QLoRARank)
			}
			replicated += n * r
		case arch.KindLinear:
		default:
			if a.KVHeads > 0 && a.KVHeads < tp {
				// Every rank keeps one KV head: the KV projections count
				// KVHeads/tp more than a clean split would.
				vhd := a.VHeadDim
				if vhd == 0 {
					vhd = a.HeadDim
				}
				kv := h * float64(a.KVHeads*(a.HeadDim+vhd))
				replicated += n * kv * (1/float64(a.KVHeads) - 1/float64(tp)) / (1 - 1/float64(tp))
			}
		}
	}
	replicated = math.Min(replicated, total)
	return (replicated + (total-replicated)/float64(tp)) / total
}

// weightsOnStage is the weight bytes of one GPU of stage st: the
// checkpoint's bytes per parameter (quantised groups at their format's
// size, the rest at dense bytes) times each group's share, plus the
// rotary cos/sin cache vLLM registers as a buffer (max_position ×
// rotary_dim in the model dtype), which "Model loading took" includes.
func weightsOnStage(m arch.Model, dense float64, tp int, st stage, g catalog.GPU) float64 {
	bytes := m.WeightBytesByGroup(dense)
	share := rankShares(m, tp, st)
	share[arch.TensorExperts] *= mxfp4Padding(m, tp, g)
	var w float64
	for g := range bytes {
		w += bytes[g] * share[g]
	}
	return w + rotaryCacheBytes(m, dense)
}

// weightsPerGPU is the weight bytes of the most loaded GPU.
func weightsPerGPU(m arch.Model, dense float64, tp, pp int, g catalog.GPU) float64 {
	var w float64
	for _, st := range stages(m, pp) {
		w = math.Max(w, weightsOnStage(m, dense, tp, st, g))
	}
	return w
}

// mxfp4Pad is how vLLM's MXFP4 MoE backend of a GPU pads each rank's
// expert weights (mxfp4.py get_mxfp4_backend and create_weights): the
// multiples the intermediate size per rank and the hidden size are
// rounded up to (0: not padded), and what the backend's layout adds.
type mxfp4Pad struct {
	intermediate, hidden int
	layout               float64
}

// hopperSwizzle is what the Triton kernels' swizzled Hopper layout
// (mxfp4_utils.py _swizzle_mxfp4) adds to the expert weights: a 16th,
// measured where create_weights pads nothing (gpt-oss's intermediate
// 2880 is a multiple of 64 on one GPU): 64.38 GiB for gpt-oss-120b,
// 13.64 GiB for gpt-oss-20b on one H100 (testdata/SOURCES.md).
const hopperSwizzle = 16.0 / 15

// mxfp4PadOf picks the backend as vLLM does: Triton's kernels on Hopper
// (compute capability 9.x; rank intermediate to 64, then the swizzle),
// FlashInfer's on datacenter Blackwell (10.x; both to 256), Marlin on
// everything else that runs MXFP4 — A100, Ada, consumer Blackwell ("n %
// 256 == 0 and k % 128 == 0": intermediate to 128, hidden to 256).
func mxfp4PadOf(g catalog.GPU) mxfp4Pad {
	switch g.Family {
	case "h100", "h200", "gh200", "h20":
		return mxfp4Pad{intermediate: 64, layout: hopperSwizzle}
	case "b200", "b300", "gb200", "gb300":
		return mxfp4Pad{intermediate: 256, hidden: 256, layout: 1}
	}
	return mxfp4Pad{intermediate: 128, hidden: 256, layout: 1}
}

// mxfp4Padding is the factor the expert weights grow by under that
// padding (1 for other formats): gpt-oss's 2880 × 2880 experts take a
// 16th more on an H100, 2944 × 3072 on an A100 — its "Model loading
// took" exceeds the checkpoint's 60.8 GiB by 4-5 GiB.
func mxfp4Padding(m arch.Model, tp int, g catalog.GPU) float64 {
	if m.Quant == nil || m.Quant.Method != "mxfp4" || !m.Quant.Quantises(arch.TensorExperts) {
		return 1
	}
	pad := mxfp4PadOf(g)
	round := func(n, to int) float64 {
		if to <= 0 || n <= 0 {
			return 1
		}
		return float64(ceilDiv(n, to)*to) / float64(n)
	}
	for _, l := range m.Layers() {
		if i := l.FFN.ExpertIntermediate; l.FFN.IsMoE() && i > 0 {
			return round(ceilDiv(i, tp), pad.intermediate) * round(m.HiddenSize, pad.hidden) * pad.layout
		}
	}
	return 1
}

// rotaryCacheBytes is the cos/sin table of rotary position embeddings.
func rotaryCacheBytes(m arch.Model, dense float64) float64 {
	if m.Position != "rope" && m.Position != "" {
		return 0
	}
	dim := m.HeadDim
	for _, g := range m.Layers() {
		if g.Attention.Kind == arch.KindMLA && g.Attention.RopeDim > 0 {
			dim = g.Attention.RopeDim
		}
	}
	return float64(m.MaxPositionEmbeddings) * float64(dim) * dense
}
