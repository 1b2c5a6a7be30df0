package memory

import (
	"math"

	"github.com/vrambot/vrambot/advisor/arch"
	"github.com/vrambot/vrambot/advisor/catalog"
)

// Activation memory is counted tensor by tensor: what autograd saves for
// backward in one block, per token, following Korthikanti et al. 2022
// (arXiv:2205.05198, Table 2: s·b·h·(34 + 5·a·s/h) bytes per layer for a GPT
// block in 16-bit) but with the model's real widths (GQA, SwiGLU/GeGLU,
// head_dim ≠ h/a), its norms (RMSNorm computed in fp32 as HF, litgpt and
// torchtune do), dropout only where the model has it, and nothing saved for
// frozen weights (a linear layer whose weight needs no gradient keeps only the
// weight, not its input).

// dropoutMaskBytes is one byte per element of a dropout mask.
const dropoutMaskBytes = 1

// doraSavedOutputs is how many out-wide tensors DoRA's rescaling keeps per
// adapted layer: the base output and the adapter output.
const doraSavedOutputs = 2

// hasDropout tells whether the architecture trains with dropout: the
// BERT/GPT-2/OPT/T5 generation does (p=0.1), Llama-style models do not.
func hasDropout(m catalog.Model) bool { return m.Position == "learned" || m.Position == "relative" }

// layerShape is what activations and adapters depend on in one layer
// group: widths per token (the experts a token is routed to, not all of
// them), heads, and the tokens an attention score row spans.
type layerShape struct {
	layers float64
	h      float64
	q      float64 // query width
	kv     float64 // key/value width (the mean of K and V)
	i      float64 // MLP width a token passes through (active experts + shared + dense)
	heads  float64
	// window caps the score row of sliding and chunked layers (0: none);
	// linear layers have no score matrix.
	window float64
	linear bool
	// widestLinear is the largest single MLP/expert projection's output
	// width (one expert, not the sum), for gathered or dequantised matrices.
	widestLinear float64
	gated        bool
}

// shapeAt is the shape of layer group i (the uniform shape for catalog
// rows written without groups); with catalog.Model.NumLayerGroups it walks
// the groups without allocating.
func shapeAt(m catalog.Model, i int) layerShape { return shapeOf(m, m.LayerGroupAt(i)) }

func shapeOf(m catalog.Model, g arch.LayerGroup) layerShape {
	a, f := g.Attention, g.FFN
	s := layerShape{layers: float64(g.Layers), h: float64(m.HiddenSize), heads: float64(a.Heads), gated: m.Gated()}
	switch a.Kind {
	case arch.KindMLA:
		// The decompressed q, k and v autograd keeps: nq·(dn+dr) and nq·dv.
		vhd := a.VHeadDim
		if vhd == 0 {
			vhd = a.HeadDim
		}
		s.q = float64(a.Heads * a.HeadDim)
		s.kv = float64(a.Heads*(a.HeadDim+vhd)) / 2
	case arch.KindLinear:
		s.linear = true
		s.q = float64(a.LinearKeyHeads * a.LinearKeyDim)
		s.kv = float64(a.LinearKeyHeads*a.LinearKeyDim+a.LinearValueHeads*a.LinearValueDim) / 2
		if a.LinearType == arch.LinearLightning {
			s.q, s.kv = float64(a.Heads*a.HeadDim), float64(a.Heads*a.HeadDim)
		}
	default:
		vhd := a.VHeadDim
		if vhd == 0 {
			vhd = a.HeadDim
		}
		s.q = float64(a.Heads * a.HeadDim)
		s.kv = float64(a.KVHeads*(a.HeadDim+vhd)) / 2
		if a.Kind == arch.KindSliding || a.Kind == arch.KindChunked {
			s.window = float64(a.Window)
		}
	}
	s.i = float64(f.Intermediate + f.SharedIntermediate)
	s.widestLinear = float64(max(f.Intermediate, f.ExpertIntermediate, f.SharedIntermediate))
	if f.IsMoE() {
		s.i += float64(max(1, f.ActiveExperts) * f.ExpertIntermediate)
	}
	return s
}

// blockBytes is the activation memory of one block, split into the part that
// tensor parallelism divides (attention and MLP internals) and the parts it
// does not (Korthikanti §4.2.2): the norm inputs and dropout masks, which
// sequence parallelism divides too (Korthikanti §4.2.2, Table 2: 34/t), and
// the inputs of the column-parallel linears, which stay whole on every rank
// when the linear saves the all-gathered tensor (PyTorch DTensor's
// PrepareModuleInput + ColwiseParallel, as torchtitan runs it).
type blockBytes struct {
	perToken         float64 // bytes per token, split by TP
	perTokenShared   float64 // bytes per token, replicated across TP ranks unless sequence-parallel
	perTokenGathered float64 // bytes per token, the column-parallel linears' inputs: replicated across TP ranks
	perTokenSq       float64 // bytes per token per token of context (eager attention scores), split by TP
}

// blockActivations is what one block saves for backward. The block's linear
// layers keep their inputs when their weights get gradients (full
// fine-tuning, the trained freeze layers) and under QLoRA, where they are
// bitsandbytes 4-bit layers, whose MatMul4Bit.forward keeps its
// input whenever any input needs a gradient (`ctx.tensors = (A, B)` in
// bitsandbytes/autograd/_functions.py). That is why litgpt's QLoRA of
// Llama-2-7B at 1304 tokens holds ~2 GB more activations than its LoRA.
// LoRA adapters add their own inputs. crossAttention adds an encoder-decoder
// block's second attention.
func blockActivations(w Workload, m catalog.Model, ls layerShape, r regime, crossAttention bool) blockBytes {
	fw := frameworks[w.Framework]
	trainWeights := w.Method == MethodFull || w.Method == MethodFreeze
	trainLinear := trainWeights || (w.Method.IsAdapter() && quantisedBase(w) && !fw.torchaoNF4)
	if fw.fusedLoRA && w.Method.IsAdapter() && !ls.linear {
		return fusedLoRABlock(w, m, ls, r)
	}
	// The parts take w and m by pointer: Estimate runs this for every
	// layer group hundreds of times per plan, and a Workload is ~1 KB.
	var b blockBytes
	b.perTokenShared = normActivations(&m, ls, r, fw.fusedNorms, trainWeights, crossAttention)
	gathered, lin, sq := attentionActivations(&w, &m, ls, r, trainLinear)
	b.perTokenGathered += gathered
	b.perToken += lin
	b.perTokenSq += sq
	if crossAttention {
		gathered, lin, sq := attentionActivations(&w, &m, ls, r, trainLinear)
		b.perTokenGathered += gathered
		b.perToken += lin
		b.perTokenSq += sq
	}
	addMLPActivations(&b, &m, ls, r.act, trainLinear)
	if hasDropout(m) {
		b.perTokenShared += 2 * dropoutMaskBytes * ls.h // after attention and after the MLP
	}
	if w.Method.IsAdapter() {
		addAdapterActivations(&b, &w, &m, ls, r.act, !fw.noLoRADropout, trainLinear)
	}
	return b
}

// normActivations is what a block's norms save per token.
func normActivations(m *catalog.Model, ls layerShape, r regime, fused, trainWeights, crossAttention bool) float64 {
	// Norms save their input; RMSNorm upcasts to fp32, so does LayerNorm
	// under autocast. Trainable norm weights also keep the normalised output.
	e, h := r.act, ls.h
	normIn := e
	if (m.Norm != "layernorm" || r.amp) && !fused {
		normIn = fp32Bytes
	}
	norms := 2.0
	if m.NormsPerLayer > 0 {
		norms = float64(m.NormsPerLayer)
	}
	if crossAttention {
		norms++
	}
	b := norms * normIn * h
	if trainWeights && m.Norm != "layernorm" && !fused {
		// HF-style RMSNorm computes weight × normalised input in Python,
		// so autograd also keeps the normalised input for the weight's
		// gradient (LayerNorm's fused kernel recomputes it).
		b += norms * e * h
	}
	return b
}

// attentionActivations is what one attention saves per token: the
// gathered inputs of its column-parallel linears, what tensor parallelism
// splits, and per token of context the eager scores.
func attentionActivations(w *Workload, m *catalog.Model, ls layerShape, r regime, trainLinear bool) (shared, lin, sq float64) {
	e, h, q, kvw, a := r.act, ls.h, ls.q, ls.kv, ls.heads
	// q, k, v and the output, as flash/SDPA saves them for backward.
	lin = e * (2*q + 2*kvw)
	if trainLinear {
		// Inputs of the qkv projection (replicated under TP) and of
		// the output projection (split).
		shared = e * h
		lin += e * q
	}
	if w.Attention == AttentionEager && !ls.linear {
		// The s×s scores: softmax output (fp32 where the model
		// upcasts it: RMSNorm-era code and autocast), its cast back
		// for the matmul with V, and dropout's mask and output where
		// the model has dropout (Korthikanti's 5 = 2 + 1 + 2 in fp16).
		soft := e
		cast := 0.0
		if m.Norm != "layernorm" || r.amp {
			soft = fp32Bytes
			if e != fp32Bytes {
				cast = e
			}
		}
		sq = a * (soft + cast)
		if hasDropout(*m) {
			// The mask is kept; the dropped copy only when the next
			// matmul saves it as is (without a cast that it saves instead).
			sq += a * dropoutMaskBytes
			if cast == 0 {
				sq += a * soft
			}
		}
		lin -= e * q // eager keeps no separate output tensor
	}
	return shared, lin, sq
}

// addMLPActivations adds what the MLP saves: the activation function's
// input, and for gated MLPs its output and the up projection (both needed
// for the product's backward).
func addMLPActivations(b *blockBytes, m *catalog.Model, ls layerShape, e float64, trainLinear bool) {
	h, i := ls.h, ls.i
	if trainLinear {
		b.perTokenGathered += e * h // input of the first MLP projection(s)
	}
	if ls.gated {
		b.perToken += 3 * e * i
		if trainLinear {
			b.perToken += e * i // input of down
		}
	} else {
		b.perToken += e * i
		if trainLinear {
			if m.MLP != "relu" { // ReLU's output is what down saves: shared
				b.perToken += e * i
			}
		}
	}
}

// addAdapterActivations adds what the LoRA (or DoRA) adapters save, with
// lora_dropout (dropout) or without.
func addAdapterActivations(b *blockBytes, w *Workload, m *catalog.Model, ls layerShape, e float64, dropout, trainLinear bool) {
	h, q, i := ls.h, ls.q, ls.i
	mods, n := loraModules(*m, ls, w.LoRATargets, w.LoRAExperts.On())
	if !dropout && !trainLinear {
		// Without dropout an adapter reads the very tensor its base
		// layer reads, kept once however many adapters read it: the
		// attention input (q, k, v), the attention output (o, kept by
		// flash attention already), the MLP input and the down
		// projection's input.
		b.perTokenGathered += e * h
		if w.LoRATargets == "all" {
			b.perTokenGathered += e * h
			b.perToken += e * i
		}
		if w.Attention == AttentionEager && w.LoRATargets != "qv" {
			b.perToken += e * q
		}
	}
	for _, mod := range mods[:n] {
		per := e * float64(w.LoRARank) // the adapter's A output
		if dropout {
			// Each adapter keeps its own dropout mask and dropped
			// input (PEFT, litgpt lora_dropout > 0).
			per += (e + dropoutMaskBytes + e) * mod.in
		}
		if w.Method == MethodDoRA {
			// DoRA rescales the base and the adapter outputs by the
			// magnitude over the (detached) weight norm; both products
			// keep their out-wide operand for backward (PEFT
			// DoraLinearLayer.forward; DoRA paper §4.3).
			per += doraSavedOutputs * e * mod.out
		}
		b.perToken += mod.active * per
	}
}

// activationBytes is the activation memory of a training step at its peak
// (start of backward), per GPU, summed over the layer groups.
func activationBytes(w Workload, m catalog.Model, r regime) float64 {
	tokens := float64(w.Batch) * float64(w.SeqLen)
	s := float64(w.SeqLen)
	tp := float64(w.TP)
	if w.Method == MethodInference {
		return inferenceActivationBytes(w, m, r)
	}
	sp := sequenceParallelSplit(w)
	perLayer := func(b blockBytes, ls layerShape) float64 {
		span := s
		if ls.window > 0 {
			span = math.Min(s, ls.window)
		}
		return tokens * (b.perTokenShared/sp + b.perTokenGathered + (b.perToken+b.perTokenSq*span)/tp)
	}
	var total, largest, layers float64
	switch {
	case m.Family == catalog.FamilyEncoderDecoder:
		ls := shapeAt(m, 0)
		enc, dec := blockActivations(w, m, ls, r, false), blockActivations(w, m, ls, r, true)
		layers = float64(m.NumLayers + m.NumDecoderLayers)
		total = float64(m.NumLayers)*perLayer(enc, ls) + float64(m.NumDecoderLayers)*perLayer(dec, ls)
		largest = perLayer(dec, ls)
	case w.Method == MethodFreeze:
		// Frozen blocks before the trainable ones need no backward at all:
		// the last FreezeTrainableLayers, at the average layer's size.
		var sum float64
		for i := range m.NumLayerGroups() {
			ls := shapeAt(m, i)
			p := perLayer(blockActivations(w, m, ls, r, false), ls)
			sum += ls.layers * p
			largest = math.Max(largest, p)
		}
		layers = math.Min(float64(m.NumLayers), FreezeTrainableLayers)
		total = sum / math.Max(1, float64(m.NumLayers)) * layers
	default:
		for i := range m.NumLayerGroups() {
			ls := shapeAt(m, i)
			p := perLayer(blockActivations(w, m, ls, r, false), ls)
			total += ls.layers * p
			layers += ls.layers
			largest = math.Max(largest, p)
		}
	}
	total = checkpointed(w, m, r, total, largest, layers, tokens)
	// The final norm saves its input too (sequence-parallel under SP).
	total += tokens * fp32Bytes * float64(m.HiddenSize) / sp
	return total
}

// sequenceParallelSplit is how many ways sequence parallelism divides what
// tensor parallelism leaves whole outside the matmuls: the block inputs and
// outputs, the norms and their saved inputs, split along the sequence over
// the TP ranks (Korthikanti et al. 2022 §4.2.2). torchtitan's TP plan
// always applies it (SequenceParallel on every norm, block inputs
// Shard(1): "Apply tensor + sequence parallelism to every transformer
// block", torchtitan parallelize_llama.py apply_tp); other stacks' TP
// replicates them (1).
func sequenceParallelSplit(w Workload) float64 {
	if w.TP > 1 && frameworks[w.Framework].sequenceParallel {
		return float64(w.TP)
	}
	return 1
}

// inferenceActivationBytes is the transient working set of a forward pass:
// one block's largest intermediates for the whole prefill, and with eager
// attention one layer's score matrix. (Serving engines profile their own:
// advisor/serving.)
func inferenceActivationBytes(w Workload, m catalog.Model, r regime) float64 {
	tokens := float64(w.Batch) * float64(w.SeqLen)
	e := r.act
	var work float64
	for i := range m.NumLayerGroups() {
		ls := shapeAt(m, i)
		mlp := 2 * ls.i
		if ls.gated {
			mlp = 3 * ls.i
		}
		work = math.Max(work, tokens*e*(2*ls.h+mlp)/float64(w.TP))
	}
	if w.Attention == AttentionEager {
		s := float64(w.SeqLen)
		work += float64(w.Batch) * float64(m.NumAttentionHeads) * s * s * (fp32Bytes + e) / float64(w.TP)
	}
	return work
}

// logitsBytes is the b·s·V logits tensor in the working dtype, its fp32
// upcast for cross-entropy and the fp32 gradient (docs/memory-model.md §1.3, §5),
// split over TP ranks (vocab-parallel). A chunked loss materialises one
// chunk at a time; free is what the GPU has free when the loss runs, for
// the losses that size their chunks by it. Encoder-only models carry a small task head instead.
// Inference keeps only the last position's logits.
func logitsBytes(w Workload, m catalog.Model, r regime, free float64) float64 {
	if m.Family == catalog.FamilyEncoderOnly {
		return 0
	}
	v := float64(m.VocabSize)
	if w.Method == MethodInference {
		return float64(w.Batch) * v * (r.act + fp32Bytes)
	}
	tokens := float64(w.Batch) * float64(w.SeqLen)
	if w.ChunkedLoss {
		return chunkedLogitsBytes(w, m, r, tokens, v, free)
	}
	return tokens * v * (r.act + logitsUpcastBytes) / float64(w.TP)
}

// kvCacheBytes is the KV cache of the batch at the workload's sequence
// length (arch.Model.KVCacheBytes: every attention layer's K and V, GQA-aware,
// docs/memory-model.md §1.4; sliding and chunked layers capped at their window;
// MLA's latent; linear-attention layers' fixed state). fp8 halves the KV.
// Split over TP ranks by heads (an MLA latent is replicated on every rank)
// and over PP stages by layers.
func kvCacheBytes(w Workload, m catalog.Model) float64 {
	if w.Method != MethodInference {
		return 0
	}
	elem := kvElemBytes(w.KVCacheDtype)
	if m.Family != catalog.FamilyDecoderOnly {
		return m.KVCacheBytes(w.SeqLen, w.Batch, elem) / float64(w.TP) / float64(w.PP)
	}
	var kv float64
	for i := range m.NumLayerGroups() {
		g, ok := m.CacheGroupAt(i)
		if !ok {
			continue
		}
		b := g.CacheBytes(w.SeqLen, w.Batch, elem)
		if g.Kind != arch.KindMLA {
			b /= float64(w.TP)
		}
		kv += b
	}
	return kv / float64(w.PP)
}

// kvElemBytes is the bytes of one cached K or V element: one for fp8 and
// int8 caches, two for 16-bit.
func kvElemBytes(dtype string) float64 {
	if dtype == "fp8" || dtype == "int8" {
		return 1
	}
	return halfBytes
}
