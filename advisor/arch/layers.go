package arch

// LayerKind is what a layer's token mixer keeps while generating
// (docs/architectures.md, docs/vllm-kv.md).
type LayerKind string

// Layer kinds.
const (
	// KindFull is softmax attention over the whole sequence: its KV cache
	// grows with every token.
	KindFull LayerKind = "full"
	// KindSliding attends to the last Window tokens (Mistral-7B-v0.1,
	// Gemma 2/3 local layers, gpt-oss): the cache stops growing at Window.
	KindSliding LayerKind = "sliding"
	// KindChunked attends within fixed chunks of Window tokens (Llama 4's
	// local layers): at most Window tokens are cached.
	KindChunked LayerKind = "chunked"
	// KindLinear is linear attention or a state-space mixer (Qwen3-Next
	// Gated DeltaNet, MiniMax lightning attention): a fixed state per
	// sequence, whatever its length.
	KindLinear LayerKind = "linear"
	// KindMLA is multi-head latent attention (DeepSeek V2/V3, Kimi-K2): the
	// cache holds one compressed latent of kv_lora_rank + qk_rope_head_dim
	// per token, not heads × head_dim.
	KindMLA LayerKind = "mla"
	// KindNone is a block without a token mixer (Nemotron-H's MLP-only and
	// MoE-only blocks): no attention weights, no cache.
	KindNone LayerKind = "none"
)

// Linear-attention mixers whose weights and state Attention can count.
const (
	LinearGatedDeltaNet = "gated_deltanet" // Qwen3-Next, Qwen3.5 (docs/architectures.md §3)
	LinearLightning     = "lightning"      // MiniMax-Text-01 / M1 lightning attention
	LinearMamba2        = "mamba2"         // Nemotron-H, Granite 4 (docs/architectures.md §12, §13)
)

// QK-norm layouts: per head (one head_dim-wide weight shared by all heads of
// q, one for k: Qwen3, Gemma 3) or over every head (OLMo 2's norm over the
// whole projection, Cohere's per-head weights): (heads + kv_heads) × head_dim.
const (
	QKNormHead = "head"
	QKNormAll  = "all"
)

// LayerGroup is a set of decoder layers of one shape. Order is not kept:
// memory does not depend on it.
type LayerGroup struct {
	Layers    int       `json:"layers"`
	Attention Attention `json:"attention"`
	FFN       FFN       `json:"ffn"`
	// Norms is how many hidden-size norms each layer has: 2 for pre-norm
	// blocks, 4 for Gemma 2/3's sandwich norms, 1 for parallel blocks.
	Norms int `json:"norms"`
}

// Attention is one layer's token mixer.
type Attention struct {
	Kind     LayerKind `json:"kind"`
	Heads    int       `json:"heads"`              // query heads
	KVHeads  int       `json:"kv_heads,omitempty"` // key/value heads (GQA); 0 for MLA and linear layers
	HeadDim  int       `json:"head_dim"`           // query/key head size (MLA: qk_nope + qk_rope)
	VHeadDim int       `json:"v_head_dim,omitempty"`
	// Window is the tokens a sliding or chunked layer attends to.
	Window int `json:"window,omitempty"`
	// QKVBias: the q, k and v projections have biases (Qwen2, gpt-oss,
	// GLM-4.5); OutBias: the output projection too (gpt-oss, GPT-2 style).
	QKVBias bool   `json:"qkv_bias,omitempty"`
	OutBias bool   `json:"out_bias,omitempty"`
	QKNorm  string `json:"qk_norm,omitempty"` // "", QKNormHead or QKNormAll
	// OutputGate: q_proj also produces a sigmoid gate on the output, so it
	// is twice as wide (Qwen3-Next full-attention layers).
	OutputGate bool `json:"output_gate,omitempty"`
	// Sinks: a learned attention-sink logit per head (gpt-oss); no cache.
	Sinks bool `json:"sinks,omitempty"`
	// ValueFromKey: no v_proj, the values come from the key projection
	// (Gemma 4 global layers, attention_k_eq_v); both are still cached.
	ValueFromKey bool `json:"value_from_key,omitempty"`
	// SharesKV: the layer reuses an earlier layer's keys and values
	// (Gemma 4 num_kv_shared_layers): no k/v projections, no cache.
	SharesKV bool `json:"shares_kv,omitempty"`

	// Multi-head latent attention (KindMLA).
	QLoRARank  int `json:"q_lora_rank,omitempty"`
	KVLoRARank int `json:"kv_lora_rank,omitempty"`
	RopeDim    int `json:"qk_rope_head_dim,omitempty"`
	// IndexHeadDim is the key width of a sparse-attention indexer
	// (DeepSeek-V3.2's and GLM-5's DSA lightning indexer, index_head_dim):
	// the engines cache one FP8 key of it per token and layer beside the
	// attention's own cache (IndexCacheBytes).
	IndexHeadDim int `json:"index_head_dim,omitempty"`

	// Linear attention (KindLinear).
	LinearType string `json:"linear_type,omitempty"` // LinearGatedDeltaNet, LinearLightning
	// Gated DeltaNet: key/value heads and sizes. Mamba-2: value heads are
	// mamba_num_heads of LinearValueDim (mamba_head_dim), LinearKeyHeads
	// are n_groups of LinearKeyDim (ssm_state_size).
	LinearKeyHeads   int `json:"linear_key_heads,omitempty"`
	LinearValueHeads int `json:"linear_value_heads,omitempty"`
	LinearKeyDim     int `json:"linear_key_dim,omitempty"`
	LinearValueDim   int `json:"linear_value_dim,omitempty"`
	ConvKernel       int `json:"conv_kernel,omitempty"`
	// StateBytes is the fixed state one sequence keeps in this layer
	// (convolution and recurrent state, in the dtypes the config sets).
	StateBytes int64 `json:"state_bytes,omitempty"`
}

// vHeadDim is the value head size (the key's when not set).
func (a Attention) vHeadDim() int {
	if a.VHeadDim > 0 {
		return a.VHeadDim
	}
	return a.HeadDim
}

// LatentDim is what an MLA layer caches per token: kv_lora_rank +
// qk_rope_head_dim (576 for DeepSeek-V3).
func (a Attention) LatentDim() int { return a.KVLoRARank + a.RopeDim }

// indexQuantBlock is the values per float32 scale of a DSA indexer key.
const indexQuantBlock = 128

// IndexCacheBytes is what a sparse-attention indexer caches per token and
// layer, in bytes whatever the KV dtype: an FP8 key of IndexHeadDim and a
// float32 scale per 128 of it — 132 B for index_head_dim 128 (SGLang
// NSATokenToKVPool index_k_with_scale_buffer, uint8; vLLM's
// DeepseekV32IndexerCache head size index_head_dim + index_head_dim //
// 128 * 4).
func (a Attention) IndexCacheBytes() int64 {
	if a.IndexHeadDim <= 0 {
		return 0
	}
	return int64(a.IndexHeadDim + a.IndexHeadDim/indexQuantBlock*4)
}

// FFN is one layer's feed-forward block: a dense MLP, a mixture of experts,
// or both (a dense branch beside the experts).
type FFN struct {
	// Intermediate is the dense MLP's width (0 when the layer has only experts).
	Intermediate int `json:"intermediate,omitempty"`
	// Bias: the MLP (or every expert's) projections have biases.
	Bias bool `json:"bias,omitempty"`

	Experts            int `json:"experts,omitempty"`        // routed experts
	ActiveExperts      int `json:"active_experts,omitempty"` // routed experts per token
	ExpertIntermediate int `json:"expert_intermediate,omitempty"`
	// ExpertLatent: the routed experts work in a latent of this width,
	// reached through a hidden→latent and a latent→hidden projection
	// (Nemotron 3 LatentMoE, moe_latent_size); 0 means the hidden size.
	ExpertLatent int `json:"expert_latent,omitempty"`
	// SharedIntermediate is the width of the always-active shared
	// expert(s) taken together (DeepSeek: n_shared_experts ×
	// moe_intermediate_size; Qwen2-MoE: shared_expert_intermediate_size).
	SharedIntermediate int `json:"shared_intermediate,omitempty"`
	// SharedGate: a Linear(hidden, 1) gates the shared expert (Qwen2-MoE, Qwen3-Next).
	SharedGate bool `json:"shared_gate,omitempty"`
	// RouterBias: the router Linear has a bias (gpt-oss); ScoreBias: an
	// e_score_correction_bias per expert (DeepSeek-V3 noaux_tc, GLM-4.5);
	// RouterScale: a hidden-size input scale and a per-expert scale
	// (Gemma 4).
	RouterBias  bool `json:"router_bias,omitempty"`
	ScoreBias   bool `json:"score_bias,omitempty"`
	RouterScale bool `json:"router_scale,omitempty"`
}

// IsMoE reports whether the block routes tokens to experts.
func (f FFN) IsMoE() bool { return f.Experts > 1 }

// MTP is the multi-token-prediction modules of a checkpoint: each is one
// decoder block of the given shape plus eh_proj (2h × h) and three norms;
// DeepSeek-V3 and GLM-4.5 modules also store their own copies of the token
// embedding and the output head (docs/architectures.md §6, §11, §3).
type MTP struct {
	LayerGroup
	OwnEmbeddings bool `json:"own_embeddings,omitempty"`
	// ExtraBlocks are further blocks in each module (Nemotron-H's MTP is
	// an attention block and a MoE block).
	ExtraBlocks []LayerGroup `json:"extra_blocks,omitempty"`
}

// Layers returns the decoder layer groups: Groups, or for a uniform model
// the single group its shape fields describe.
func (m Model) Layers() []LayerGroup {
	if len(m.Groups) > 0 {
		return m.Groups
	}
	return []LayerGroup{m.uniformGroup()}
}

// NumLayerGroups and LayerGroupAt walk Layers without allocating, for the
// estimator's hot loops.
func (m Model) NumLayerGroups() int { return max(1, len(m.Groups)) }

// LayerGroupAt is Layers()[i].
func (m Model) LayerGroupAt(i int) LayerGroup {
	if len(m.Groups) > 0 {
		return m.Groups[i]
	}
	return m.uniformGroup()
}

// uniformGroup is the layer every layer of a uniform model is.
func (m Model) uniformGroup() LayerGroup {
	a := Attention{
		Kind:     KindFull,
		Heads:    m.NumAttentionHeads,
		KVHeads:  m.NumKVHeads,
		HeadDim:  m.HeadDim,
		QKVBias:  m.QKVBias || m.LinearBias,
		OutBias:  m.LinearBias,
		VHeadDim: 0,
	}
	if m.SlidingWindow > 0 {
		a.Kind, a.Window = KindSliding, m.SlidingWindow
	}
	f := FFN{Bias: m.LinearBias}
	if m.NumExperts > 1 {
		f.Experts, f.ActiveExperts, f.ExpertIntermediate = m.NumExperts, m.ExpertsPerToken, m.IntermediateSize
	} else {
		f.Intermediate = m.IntermediateSize
	}
	norms := m.NormsPerLayer
	if norms == 0 {
		norms = 2
	}
	return LayerGroup{Layers: m.NumLayers, Attention: a, FFN: f, Norms: norms}
}

// AttentionGroup is the cache view of a set of layers: what each keeps per
// token (KVHeads × (HeadDim + VHeadDim) elements) or per sequence
// (StateBytes). An MLA group reads as vLLM's MLAAttentionSpec does: one
// "head" of LatentDim elements and no separate value (KVHeads 1, HeadDim =
// LatentDim, VHeadDim 0); MLA caches are not split by tensor parallelism.
type AttentionGroup struct {
	Kind       LayerKind `json:"kind"`
	Layers     int       `json:"layers"`
	KVHeads    int       `json:"kv_heads"`
	HeadDim    int       `json:"head_dim"`
	VHeadDim   int       `json:"v_head_dim"`
	Window     int       `json:"window,omitempty"`     // tokens kept by sliding/chunked layers
	LatentDim  int       `json:"latent_dim,omitempty"` // MLA
	StateBytes int64     `json:"state_bytes,omitempty"`
	// IndexBytes is a sparse-attention indexer's cache per token and
	// layer, in bytes at any KV dtype (Attention.IndexCacheBytes).
	IndexBytes int64 `json:"index_bytes,omitempty"`
}

// BytesPerToken is one layer's cache growth per token at elemBytes per
// element (2 for fp16/bf16, 1 for fp8/int8); 0 for linear layers.
func (g AttentionGroup) BytesPerToken(elemBytes float64) float64 {
	if g.Kind == KindLinear {
		return 0
	}
	return float64(g.KVHeads)*float64(g.HeadDim+g.VHeadDim)*elemBytes + float64(g.IndexBytes)
}

// TokensKept is how many tokens of a seqLen-token sequence one layer
// caches: all for full and MLA layers, at most Window for sliding and
// chunked ones, none for linear ones.
func (g AttentionGroup) TokensKept(seqLen int) int {
	switch g.Kind {
	case KindLinear:
		return 0
	case KindSliding, KindChunked:
		if g.Window > 0 {
			return min(seqLen, g.Window)
		}
	}
	return seqLen
}

// CacheBytes is the group's cache (all its layers) for batch sequences of
// seqLen tokens: the windowed KV and, for linear layers, their fixed state.
func (g AttentionGroup) CacheBytes(seqLen, batch int, elemBytes float64) float64 {
	perSeq := float64(g.TokensKept(seqLen))*g.BytesPerToken(elemBytes) + float64(g.StateBytes)
	return float64(g.Layers) * perSeq * float64(batch)
}

// AttentionGroups is the per-layer-group view of the cache, merging layer
// groups that cache alike (a dense and a MoE layer with the same attention
// are one group). Encoder-decoder models list their decoder stack (the
// encoder keeps no cache); encoder-only models have none.
func (m Model) AttentionGroups() []AttentionGroup {
	if m.Family == FamilyEncoderOnly {
		return nil
	}
	var out []AttentionGroup
	add := func(g AttentionGroup) {
		for i := range out {
			o := out[i]
			if o.Kind == g.Kind && o.KVHeads == g.KVHeads && o.HeadDim == g.HeadDim && o.VHeadDim == g.VHeadDim &&
				o.Window == g.Window && o.LatentDim == g.LatentDim && o.StateBytes == g.StateBytes && o.IndexBytes == g.IndexBytes {
				out[i].Layers += g.Layers
				return
			}
		}
		out = append(out, g)
	}
	if m.Family == FamilyEncoderDecoder {
		add(AttentionGroup{Kind: KindFull, Layers: m.DecoderLayers(), KVHeads: m.NumKVHeads, HeadDim: m.HeadDim, VHeadDim: m.HeadDim})
		return out
	}
	for i := range m.NumLayerGroups() {
		if g, ok := m.CacheGroupAt(i); ok {
			add(g)
		}
	}
	return out
}

// CacheGroupAt is the cache view of layer group i alone (false when its
// layers keep no cache), for summing caches without merging groups.
func (m Model) CacheGroupAt(i int) (AttentionGroup, bool) {
	l := m.LayerGroupAt(i)
	a := l.Attention
	g := AttentionGroup{Kind: a.Kind, Layers: l.Layers}
	switch {
	case a.Kind == KindNone || a.SharesKV:
		return g, false
	case a.Kind == KindMLA:
		g.KVHeads, g.HeadDim, g.LatentDim, g.IndexBytes = 1, a.LatentDim(), a.LatentDim(), a.IndexCacheBytes()
	case a.Kind == KindLinear:
		g.StateBytes = a.StateBytes
	default:
		g.KVHeads, g.HeadDim, g.VHeadDim, g.Window = a.KVHeads, a.HeadDim, a.vHeadDim(), a.Window
	}
	return g, true
}

// KVCacheBytes is the cache of batch sequences of seqLen tokens at
// elemBytes per KV element: every attention layer's K and V (MLA: the
// latent), sliding and chunked layers capped at their window, plus the
// fixed state of linear-attention layers (whose dtype the config sets, so
// elemBytes does not apply to it). docs/architectures.md, docs/vllm-kv.md.
func (m Model) KVCacheBytes(seqLen, batch int, elemBytes float64) float64 {
	if m.Family == FamilyEncoderDecoder || m.Family == FamilyEncoderOnly {
		var n float64
		for _, g := range m.AttentionGroups() {
			n += g.CacheBytes(seqLen, batch, elemBytes)
		}
		return n
	}
	var n float64
	for i := range m.NumLayerGroups() {
		if g, ok := m.CacheGroupAt(i); ok {
			n += g.CacheBytes(seqLen, batch, elemBytes)
		}
	}
	return n
}

// KVCacheBytesPerToken is the fp16 cache one more token adds across all
// attention layers, before any window binds: 2 (K and V) × layers × KV
// heads × head_dim × 2 bytes for a uniform model (docs/memory-model.md §1.4),
// the latent for MLA layers, nothing for linear ones.
func (m Model) KVCacheBytesPerToken() int64 {
	var n float64
	for _, g := range m.AttentionGroups() {
		n += float64(g.Layers) * g.BytesPerToken(2)
	}
	return int64(n)
}
