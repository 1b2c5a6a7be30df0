package arch

import (
	"encoding/json"
	"fmt"
)

// TensorGroup is a kind of weight tensor: quantisation schemes treat the
// groups differently (MXFP4 only the experts, GPTQ the linear layers but not
// the embeddings), and inference engines load some of them only on request
// (MTP).
type TensorGroup int

// Tensor groups, in report order.
const (
	// TensorEmbedding: token, position and token-type embeddings.
	TensorEmbedding TensorGroup = iota
	// TensorLMHead: the untied output head (and its bias), BERT's pooler.
	TensorLMHead
	// TensorAttention: attention and linear-attention projections with
	// their biases, q/k norms, sinks, MLA's latent norms, T5's position bias.
	TensorAttention
	// TensorMLP: dense feed-forward projections.
	TensorMLP
	// TensorExperts: routed experts.
	TensorExperts
	// TensorSharedExperts: always-active shared experts and their gate.
	TensorSharedExperts
	// TensorRouter: the router (gate) weights and biases.
	TensorRouter
	// TensorNorms: per-layer and final norms.
	TensorNorms
	// TensorVision: the vision tower and projector.
	TensorVision
	// TensorMTP: multi-token-prediction modules (not loaded by default).
	TensorMTP
	// NumTensorGroups is the number of groups.
	NumTensorGroups
)

var tensorGroupNames = [NumTensorGroups]string{"embedding", "lm_head", "attention", "mlp", "experts", "shared_experts", "router", "norms", "vision", "mtp"}

// String is the group's JSON name.
func (g TensorGroup) String() string {
	if g < 0 || g >= NumTensorGroups {
		return fmt.Sprintf("TensorGroup(%d)", int(g))
	}
	return tensorGroupNames[g]
}

// ByGroup holds one value per tensor group; JSON writes it as an object
// keyed by group name, leaving out zeros.
type ByGroup[T int64 | float64] [NumTensorGroups]T

// Total is the sum over the groups.
func (b ByGroup[T]) Total() T {
	var t T
	for _, v := range b {
		t += v
	}
	return t
}

// MarshalJSON writes {"embedding": ..., "attention": ...} without zeros.
func (b ByGroup[T]) MarshalJSON() ([]byte, error) {
	m := make(map[string]T, len(b))
	for g, v := range b {
		if v != 0 {
			m[TensorGroup(g).String()] = v
		}
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads what MarshalJSON writes; unknown names are an error.
func (b *ByGroup[T]) UnmarshalJSON(data []byte) error {
	var m map[string]T
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*b = ByGroup[T]{}
	for k, v := range m {
		found := false
		for g, name := range tensorGroupNames {
			if name == k {
				b[g], found = v, true
			}
		}
		if !found {
			return fmt.Errorf("unknown tensor group %q", k)
		}
	}
	return nil
}

// normParams is the size of one hidden-size normalisation layer: weight
// and bias for "layernorm", none for the parameter-free LayerNorm of OLMo 1
// ("none"), a weight otherwise (RMSNorm, Cohere's bias-free LayerNorm).
func (m Model) normParams() int64 {
	switch m.Norm {
	case "layernorm":
		return 2 * int64(m.HiddenSize)
	case "none":
		return 0
	}
	return int64(m.HiddenSize)
}

// AttentionParams is one self-attention block of the uniform shape: q and o
// are h × heads·head_dim, k and v are h × kv_heads·head_dim (GQA), plus
// biases where the model has them.
func (m Model) AttentionParams() int64 {
	return m.attentionParams(m.uniformGroup().Attention)
}

// MLPParams is the feed-forward block of one layer of the uniform shape (all
// experts and the router for a mixture of experts).
func (m Model) MLPParams() int64 {
	mlp, experts, shared, router := m.ffnParams(m.uniformGroup().FFN)
	return mlp + experts + shared + router
}

// LayerParams is one (encoder or decoder-only) transformer block of the
// uniform shape.
func (m Model) LayerParams() int64 {
	return m.layerParams(m.uniformGroup())
}

// MeanLayerParams is the parameters of an average decoder layer (the
// uniform layer's for a uniform model): what training the last few layers
// of a stack trains per layer.
func (m Model) MeanLayerParams() int64 {
	if len(m.Groups) == 0 {
		return m.LayerParams()
	}
	var n, l int64
	for _, g := range m.Groups {
		n += int64(g.Layers) * m.layerParams(g)
		l += int64(g.Layers)
	}
	return n / max(1, l)
}

// EmbeddingParams is the input token embedding table (V × h).
func (m Model) EmbeddingParams() int64 { return int64(m.VocabSize) * int64(m.HiddenSize) }

// LMHeadParams is the output projection when it is not tied to the input
// embedding (0 when tied, and for encoder-only models which have none).
func (m Model) LMHeadParams() int64 {
	if m.TieWordEmbeddings || m.Family == FamilyEncoderOnly {
		return 0
	}
	n := m.EmbeddingParams()
	if m.LMHeadBias {
		n += int64(m.VocabSize)
	}
	return n
}

// attentionParams counts one layer's token mixer (docs/architectures.md §1,
// §3, §6).
func (m Model) attentionParams(a Attention) int64 {
	h := int64(m.HiddenSize)
	nq, hd, vhd := int64(a.Heads), int64(a.HeadDim), int64(a.vHeadDim())
	switch a.Kind {
	case KindMLA:
		r, dr := int64(a.KVLoRARank), int64(a.RopeDim)
		var n int64
		if qr := int64(a.QLoRARank); qr > 0 {
			n += h*qr + qr + qr*nq*hd // q_a_proj, q_a_layernorm, q_b_proj
			if a.QKVBias {
				n += qr
			}
		} else {
			n += h * nq * hd
		}
		n += h*(r+dr) + r + r*nq*(hd-dr+vhd) // kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj
		if a.QKVBias {
			n += r + dr
		}
		n += nq * vhd * h // o_proj
		if a.OutBias {
			n += h
		}
		return n
	case KindLinear:
		return m.linearAttentionParams(a)
	case KindNone:
		return 0
	}
	kv := int64(a.KVHeads)
	q := nq * hd
	qProj := q
	if a.OutputGate {
		qProj *= 2
	}
	kProj, vProj := kv*hd, kv*vhd
	if a.ValueFromKey {
		vProj = 0
	}
	if a.SharesKV {
		kProj, vProj = 0, 0
	}
	n := h*qProj + h*kProj + h*vProj + nq*vhd*h
	if a.QKVBias {
		n += qProj + kProj + vProj
	}
	if a.OutBias {
		n += h
	}
	switch {
	case a.QKNorm == QKNormHead && a.SharesKV:
		n += hd
	case a.QKNorm == QKNormHead:
		n += 2 * hd
	case a.QKNorm == QKNormAll:
		n += (nq + kv) * hd
	}
	if a.Sinks {
		n += nq
	}
	return n
}

// linearAttentionParams counts a linear-attention layer.
func (m Model) linearAttentionParams(a Attention) int64 {
	h := int64(m.HiddenSize)
	switch a.LinearType {
	case LinearLightning:
		// MiniMax lightning attention: qkv_proj, output_gate, out_proj, norm.
		w := int64(a.Heads) * int64(a.HeadDim)
		return h*3*w + h*w + w*h + w
	case LinearMamba2:
		// Mamba2Mixer: in_proj (z, x, B, C, dt), depthwise conv1d with
		// bias, dt_bias, A_log and D per head, gated RMSNorm, out_proj.
		inner := int64(a.LinearValueHeads) * int64(a.LinearValueDim)
		bc := 2 * int64(a.LinearKeyHeads) * int64(a.LinearKeyDim)
		nh := int64(a.LinearValueHeads)
		conv := inner + bc
		return h*(2*inner+bc+nh) + conv*int64(a.ConvKernel) + conv + 3*nh + inner + inner*h
	default:
		// Gated DeltaNet (Qwen3NextGatedDeltaNet): in_proj_qkvz, in_proj_ba,
		// depthwise conv1d, dt_bias and A_log, gated RMSNorm, out_proj.
		nk, nv := int64(a.LinearKeyHeads), int64(a.LinearValueHeads)
		keyDim, valueDim := nk*int64(a.LinearKeyDim), nv*int64(a.LinearValueDim)
		conv := (2*keyDim + valueDim) * int64(a.ConvKernel)
		return h*(2*keyDim+2*valueDim) + h*2*nv + conv + 2*nv + int64(a.LinearValueDim) + valueDim*h
	}
}

// ffnParams counts one layer's feed-forward block by tensor group.
func (m Model) ffnParams(f FFN) (mlp, experts, shared, router int64) {
	h := int64(m.HiddenSize)
	blockAt := func(width, i int64, bias bool) int64 {
		n := 2 * width * i
		if m.Gated() {
			n = 3 * width * i
		}
		if bias {
			n += i + width
			if m.Gated() {
				n += i
			}
		}
		return n
	}
	block := func(i int64, bias bool) int64 { return blockAt(h, i, bias) }
	if f.Intermediate > 0 {
		mlp = block(int64(f.Intermediate), f.Bias)
	}
	if f.Experts > 1 {
		e := int64(f.Experts)
		if lat := int64(f.ExpertLatent); lat > 0 {
			experts = e*blockAt(lat, int64(f.ExpertIntermediate), f.Bias) + 2*h*lat
		} else {
			experts = e * block(int64(f.ExpertIntermediate), f.Bias)
		}
		router = h * e
		if f.RouterBias {
			router += e
		}
		if f.ScoreBias {
			router += e
		}
		if f.RouterScale {
			router += h + e
		}
	}
	if f.SharedIntermediate > 0 {
		shared = block(int64(f.SharedIntermediate), false)
		if f.SharedGate {
			shared += h
		}
	}
	return mlp, experts, shared, router
}

// layerParams counts one layer of a group.
func (m Model) layerParams(g LayerGroup) int64 {
	mlp, experts, shared, router := m.ffnParams(g.FFN)
	return m.attentionParams(g.Attention) + mlp + experts + shared + router + int64(g.Norms)*m.normParams()
}

// ParamsByGroup counts the parameters by tensor group. Its Total is
// ComputeParams.
func (m Model) ParamsByGroup() ByGroup[int64] {
	var p ByGroup[int64]
	h := int64(m.HiddenSize)
	p[TensorEmbedding] = m.EmbeddingParams() + int64(m.TypeVocabSize)*h
	if m.Position == "learned" {
		p[TensorEmbedding] += int64(m.MaxPositionEmbeddings+m.PositionOffset) * h
	}
	p[TensorLMHead] = m.LMHeadParams()
	p[TensorVision] = m.VisionParams
	addLayers := func(g LayerGroup, n int64) {
		mlp, experts, shared, router := m.ffnParams(g.FFN)
		p[TensorAttention] += n * m.attentionParams(g.Attention)
		p[TensorMLP] += n * mlp
		p[TensorExperts] += n * experts
		p[TensorSharedExperts] += n * shared
		p[TensorRouter] += n * router
		p[TensorNorms] += n * int64(g.Norms) * m.normParams()
	}
	switch m.Family {
	case FamilyEncoderDecoder:
		// Decoder blocks add cross-attention and its norm; each stack has a
		// final norm and a relative-position bias table in its first layer.
		u := m.uniformGroup()
		addLayers(u, int64(m.NumLayers)+int64(m.NumDecoderLayers))
		p[TensorAttention] += int64(m.NumDecoderLayers)*m.attentionParams(u.Attention) + 2*int64(m.RelativeBuckets)*int64(m.NumAttentionHeads)
		p[TensorNorms] += int64(m.NumDecoderLayers)*m.normParams() + 2*m.normParams()
	case FamilyEncoderOnly:
		// One embedding LayerNorm (post-LN models have no final norm).
		addLayers(m.uniformGroup(), int64(m.NumLayers))
		p[TensorNorms] += m.normParams()
		if m.Pooler {
			p[TensorLMHead] += h*h + h
		}
	default:
		for i := range m.NumLayerGroups() {
			g := m.LayerGroupAt(i)
			addLayers(g, int64(g.Layers))
		}
		p[TensorNorms] += m.normParams()
	}
	for g, n := range m.ExtraParams {
		p[g] += n
	}
	if t := m.MTP; t != nil && t.Layers > 0 {
		per := m.layerParams(t.LayerGroup) + 2*h*h + 3*m.normParams()
		for _, b := range t.ExtraBlocks {
			per += m.layerParams(b)
		}
		if t.OwnEmbeddings {
			per += 2 * m.EmbeddingParams()
		}
		p[TensorMTP] = int64(t.Layers) * per
	}
	return p
}

// ComputeParams counts the parameters from the shapes: embeddings,
// positions, every block, final norms, the untied output head, the vision
// tower and the MTP modules. It reproduces the published totals of every
// catalog model (see the catalog tests).
func (m Model) ComputeParams() int64 { return m.ParamsByGroup().Total() }

// inactiveExpertParams is the routed-expert weights a token does not use:
// (experts − active) of each MoE layer.
func (m Model) inactiveExpertParams() int64 {
	var n int64
	for i := range m.NumLayerGroups() {
		g := m.LayerGroupAt(i)
		f := g.FFN
		if !f.IsMoE() || f.ActiveExperts <= 0 || f.ActiveExperts >= f.Experts {
			continue
		}
		_, experts, _, _ := m.ffnParams(f)
		if lat := int64(f.ExpertLatent); lat > 0 {
			experts -= 2 * int64(m.HiddenSize) * lat // the latent projections run for every token
		}
		n += int64(g.Layers) * experts / int64(f.Experts) * int64(f.Experts-f.ActiveExperts)
	}
	return n
}

// ActiveParams is the parameters one token passes through at inference in
// a mixture of experts: everything but the routed experts it is not sent
// to and the MTP modules (which run only for speculative decoding), as the
// published active counts are (DeepSeek-V3 37.6B, Qwen3-Next 3.9B); the
// input embedding is included (vendors differ: docs/architectures.md §0
// rule 7). For a dense model it is Params (the contract of
// workload.active_params), whatever MTP modules ship with it.
func (m Model) ActiveParams() int64 {
	inactive := m.inactiveExpertParams()
	if inactive == 0 {
		return m.Params
	}
	inactive += m.ParamsByGroup()[TensorMTP]
	return max(0, m.Params-int64(float64(inactive)*m.paramScale()))
}

// paramScale maps shape counts to Params (1 unless the shapes were scaled
// from a size and do not add up exactly).
func (m Model) paramScale() float64 {
	c := m.ComputeParams()
	if c <= 0 || m.Params <= 0 {
		return 1
	}
	return float64(m.Params) / float64(c)
}

// ResidentParams is the parameters an inference engine or trainer loads:
// Params less the MTP modules.
func (m Model) ResidentParams() int64 {
	mtp := m.ParamsByGroup()[TensorMTP]
	return max(0, m.Params-int64(float64(mtp)*m.paramScale()))
}
