package hfconfig

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vrambot/vrambot/advisor/arch"
)

// layerSpec is one decoder layer before grouping.
type layerSpec struct {
	attn  arch.Attention
	ffn   arch.FFN
	norms int
}

// readDecoder reads a decoder-only stack, layer by layer, then groups the
// layers by shape.
func (r *reader) readDecoder(c *config, mt string, fam family) arch.Model {
	m := r.readDecoderSize(c, mt, fam)
	if r.err != nil {
		return arch.Model{}
	}
	s := decoderStack{heads: m.NumAttentionHeads}
	s.kvHeads, s.headDim = r.readAttentionShape(c, mt, m.HiddenSize, s.heads)
	if r.err != nil {
		return arch.Model{}
	}
	s.base = r.readFullAttention(c, mt, fam, s)

	// FFN shape: the dense width is required only if some layer is dense.
	s.moe = r.readExperts(c, mt, fam, m.HiddenSize, m.NumLayers)
	s.dense, s.mlpBias = r.readDenseFFN(c, mt, fam, m.HiddenSize, m.NumLayers, s.moe)
	if r.err != nil {
		return arch.Model{}
	}

	// Layer by layer.
	kinds := r.layerKinds(c, fam, m.NumLayers)
	s.window = c.optInt(0, "sliding_window", "sliding_window_size")
	s.chunk = c.optInt(0, "attention_chunk_size")
	specs := r.layerSpecs(c, fam, s, kinds)
	r.readFamilyLayers(c, mt, &m, specs, kinds, s.dense)
	if r.err != nil {
		return arch.Model{}
	}
	m.Groups = groupLayers(specs)
	r.setUniformShape(c, mt, fam, s, kinds, &m)
	r.readMTP(c, fam, specs, &m)
	r.describeDecoder(mt, m, kinds)
	return m
}

// decoderStack is what readDecoder reads before it builds the layers: the
// attention every full-attention layer has and the widths of the FFNs.
type decoderStack struct {
	heads, kvHeads, headDim int
	base                    arch.Attention // a full-attention layer
	moe                     experts
	dense                   int // the dense MLP width; 0 when no layer is dense
	mlpBias                 bool
	window                  int // sliding_window; 0 for none
	chunk                   int // attention_chunk_size; 0 for none
}

// readDecoderSize reads the stack's size (hidden size, layers, heads,
// vocabulary) and what the whole model shares: the family's MLP, norm and
// positions, tied embeddings, the context.
func (r *reader) readDecoderSize(c *config, mt string, fam family) arch.Model {
	if mt == "chatglm" {
		renameChatGLM(c)
	}
	h := c.int("hidden_size", "n_embd", "d_model", "model_dim")
	layers := c.int("num_hidden_layers", "n_layer", "num_layers", "n_layers")
	heads := c.int("num_attention_heads", "n_head", "num_heads", "n_heads")
	vocab := c.int("vocab_size", "padded_vocab_size", "n_vocab")
	if r.err != nil {
		return arch.Model{}
	}
	if layers > maxLayers {
		c.fail("config.json %q is %d, more layers than any real model", c.path("num_hidden_layers"), layers)
		return arch.Model{}
	}
	m := arch.Model{
		Family:            arch.FamilyDecoderOnly,
		HiddenSize:        h,
		NumLayers:         layers,
		NumAttentionHeads: heads,
		VocabSize:         vocab,
		MLP:               fam.mlp,
		Norm:              fam.norm,
		Position:          firstNonEmpty(fam.position, "rope"),
		TieWordEmbeddings: c.optBool(r.tiedDefault(fam), "tie_word_embeddings", "tie_embeddings"),
		MaxPositionEmbeddings: c.optInt(0, "max_position_embeddings", "n_positions", "seq_length",
			"max_sequence_length", "n_ctx", "model_max_length"),
	}
	if strings.Contains(strings.ToLower(c.optString("", "hidden_act", "activation_function", "hidden_activation")), "relu") && fam.mlp != "swiglu" && fam.mlp != "geglu" {
		m.MLP = "relu"
	}
	if mt == "opt" || mt == "bloom" {
		r.readOPTBloom(c, mt, &m)
	}
	return m
}

// readAttentionShape reads the key/value heads and the head width, and
// checks that they make a grouped-query layout.
func (r *reader) readAttentionShape(c *config, mt string, h, heads int) (kv, hd int) {
	kv = c.optInt(heads, "num_key_value_heads", "num_kv_heads", "n_head_kv", "multi_query_group_num")
	if mt == "falcon" && !c.optBool(false, "new_decoder_architecture") {
		kv = heads
		if c.optBool(true, "multi_query") {
			kv = 1
		}
	}
	hd = c.optInt(h/max(heads, 1), "head_dim", "kv_channels", "attention_head_dim")
	if hd == 0 {
		c.fail("config.json hidden_size %d is smaller than its %d attention heads", h, heads)
	}
	if kv > heads || heads%max(kv, 1) != 0 {
		c.fail("config.json has %d key/value heads for %d attention heads: not a grouped-query layout", kv, heads)
	}
	return kv, hd
}

// readFullAttention reads a full-attention layer: its biases, q/k norms,
// sinks and output gate, or multi-head latent attention.
func (r *reader) readFullAttention(c *config, mt string, fam family, s decoderStack) arch.Attention {
	base := arch.Attention{Kind: arch.KindFull, Heads: s.heads, KVHeads: s.kvHeads, HeadDim: s.headDim}
	attnBias := c.optBool(false, "attention_bias", "bias", "add_qkv_bias", "use_qkv_bias", "qkv_bias", "use_bias")
	base.QKVBias = attnBias || fam.qkvBias || fam.linearBias
	base.OutBias = (attnBias && !fam.noOutBias) || fam.linearBias || (mt == "chatglm" && c.optBool(false, "add_bias_linear"))
	if mt == "stablelm" {
		base.OutBias = false // StableLM: use_qkv_bias reaches q, k, v only
	}
	base.QKNorm = readQKNorm(c, mt, fam)
	if mt == "gpt_oss" {
		base.Sinks = true
	}
	if strings.HasPrefix(mt, "qwen3_next") || strings.HasPrefix(mt, "qwen3_5") {
		base.OutputGate = c.optBool(true, "attn_output_gate")
	}
	if fam.mla || c.has("kv_lora_rank") {
		base = r.readMLA(c, s.heads, attnBias)
	}
	return base
}

// readQKNorm is the q/k norm: the family's own, or the one its switch
// (use_qk_norm) turns on, per head or over all heads.
func readQKNorm(c *config, mt string, fam family) string {
	if fam.qkNormKey == "" || !c.optBool(false, fam.qkNormKey) {
		return fam.qkNorm
	}
	if mt == "cohere" || (mt == "minimax_m2" && c.optString("per_layer", "qk_norm_type") == "per_layer") {
		return arch.QKNormAll
	}
	return arch.QKNormHead
}

// readDenseFFN reads the dense MLP width and whether its projections have
// biases.
func (r *reader) readDenseFFN(c *config, mt string, fam family, h, layers int, moe experts) (dense int, bias bool) {
	dense = c.optInt(r.defaultIntermediate(mt, h), "intermediate_size_mlp", "dense_intermediate_size", "intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim", "d_ff")
	if dense == 0 && moe.layers < layers {
		dense = c.int("intermediate_size")
	}
	bias = fam.linearBias || c.optBool(false, "mlp_bias") || (mt == "falcon" && c.optBool(false, "bias")) ||
		(mt == "chatglm" && c.optBool(false, "add_bias_linear")) || mt == "gptj" || (mt == "starcoder2" && c.optBool(true, "use_bias"))
	return dense, bias
}

// layerSpecs builds each layer from its kind: sliding and chunked layers
// take their window (full attention when the config gives none, which
// kinds then records), linear-attention layers their own shape, MoE
// layers the experts.
func (r *reader) layerSpecs(c *config, fam family, s decoderStack, kinds []arch.LayerKind) []layerSpec {
	specs := make([]layerSpec, len(kinds))
	for i := range specs {
		a := s.base
		switch kinds[i] {
		case arch.KindSliding:
			if s.window == 0 {
				kinds[i] = arch.KindFull
			} else {
				a.Kind, a.Window = arch.KindSliding, s.window
			}
		case arch.KindChunked:
			if s.chunk == 0 {
				kinds[i] = arch.KindFull
			} else {
				a.Kind, a.Window = arch.KindChunked, s.chunk
			}
		case arch.KindLinear:
			a = r.readLinear(c, fam, s.heads, s.headDim)
		}
		f := arch.FFN{Intermediate: s.dense, Bias: s.mlpBias}
		if s.moe.isMoELayer(i) {
			f = s.moe.ffn
			f.Bias = fam.expertBias
		}
		specs[i] = layerSpec{attn: a, ffn: f, norms: fam.norms}
	}
	return specs
}

// readFamilyLayers applies what some families' layers do beyond their
// kinds: Falcon-40B/180B's two norms, Gemma 4's and MiMo-V2's own layers.
func (r *reader) readFamilyLayers(c *config, mt string, m *arch.Model, specs []layerSpec, kinds []arch.LayerKind, dense int) {
	if mt == "falcon" && c.optBool(false, "new_decoder_architecture") && c.optInt(2, "num_ln_in_parallel_attn") == 2 {
		for i := range specs {
			specs[i].norms = 2 // Falcon-40B/180B: ln_attn and ln_mlp
		}
	}
	switch mt {
	case "gemma4_text":
		r.readGemma4(c, m, specs, kinds, dense)
	case "mimo_v2_flash":
		r.readMiMoV2(c, specs, kinds)
	}
}

// setUniformShape fills the model's uniform fields: the representative
// shape.
func (r *reader) setUniformShape(c *config, mt string, fam family, s decoderStack, kinds []arch.LayerKind, m *arch.Model) {
	m.NumKVHeads, m.HeadDim = s.kvHeads, s.headDim
	if s.base.Kind == arch.KindMLA {
		m.NumKVHeads, m.HeadDim = s.heads, s.base.HeadDim
	}
	m.IntermediateSize = s.dense
	if f := s.moe.ffn; f.Experts > 1 && s.moe.layers > 0 {
		m.NumExperts, m.ExpertsPerToken, m.IntermediateSize = f.Experts, f.ActiveExperts, f.ExpertIntermediate
	}
	if s.window > 0 && slices.Contains(kinds, arch.KindSliding) {
		m.SlidingWindow = s.window
	}
	m.QKVBias = s.base.QKVBias && !s.base.OutBias
	m.LinearBias = fam.linearBias
	m.NormsPerLayer = fam.norms
	m.LMHeadBias = c.optBool(mt == "phi" || mt == "gptj", "lm_head_bias")
}

// tiedDefault is tie_word_embeddings when the file leaves it out: the
// family's class default; for an unknown family, the base PretrainedConfig
// default (true) when transformers wrote the file, since save_pretrained
// omits the key only when it equals that default, and false otherwise.
func (r *reader) tiedDefault(fam family) bool {
	if r.known {
		return fam.tied
	}
	return r.savedByTransformers
}

// defaultIntermediate is the MLP width the classes default to when the
// file gives none: 4·h for GPT-2, GPT-J, Falcon and BLOOM; 0 (required)
// elsewhere.
func (r *reader) defaultIntermediate(mt string, h int) int {
	switch mt {
	case "gpt2", "gptj", "falcon", "bloom":
		return 4 * h
	}
	return 0
}

// renameChatGLM maps THUDM's ChatGLM keys (configuration_chatglm.py in the
// model repos) onto the usual names.
func renameChatGLM(c *config) {
	if c.optBool(false, "multi_query_attention") && !c.has("num_key_value_heads") {
		c.raw["num_key_value_heads"] = c.raw["multi_query_group_num"]
	}
	if !c.has("num_key_value_heads") {
		delete(c.raw, "multi_query_group_num")
	}
}

// readOPTBloom handles OPT's learned positions (offset 2) and BLOOM's
// embedding LayerNorm and ALiBi.
func (r *reader) readOPTBloom(c *config, mt string, m *arch.Model) {
	if mt == "opt" {
		m.PositionOffset = 2
		if p := c.optInt(m.HiddenSize, "word_embed_proj_dim"); p != m.HiddenSize {
			r.note("word_embed_proj_dim %d ≠ hidden_size %d: the project_in/project_out layers (%d parameters) are not counted", p, m.HiddenSize, 2*p*m.HiddenSize)
		}
	}
}

// groupLayers merges identical layers into groups, in first-seen order.
func groupLayers(specs []layerSpec) []arch.LayerGroup {
	var out []arch.LayerGroup
	for _, s := range specs {
		found := false
		for i := range out {
			if out[i].Attention == s.attn && out[i].FFN == s.ffn && out[i].Norms == s.norms {
				out[i].Layers++
				found = true
				break
			}
		}
		if !found {
			out = append(out, arch.LayerGroup{Layers: 1, Attention: s.attn, FFN: s.ffn, Norms: s.norms})
		}
	}
	return out
}

// layerKinds is each layer's attention kind: layer_types when the file
// has it (transformers ≥ 4.5x writes it), the family's rule otherwise.
func (r *reader) layerKinds(c *config, fam family, n int) []arch.LayerKind {
	if types := c.strings("layer_types"); types != nil {
		return r.namedLayerKinds(c, types, n)
	}
	kinds := make([]arch.LayerKind, n)
	for i := range kinds {
		kinds[i] = arch.KindFull
	}
	// The families' rules mark the layers that attend to a window or a
	// chunk, or are linear attention. (A switch, not a table of funcs: a
	// call through a func value would move the config to the heap.)
	switch fam.sliding {
	case slideAll:
		slideEveryLayer(c, kinds)
	case slideQwen:
		slideFromMaxWindowLayers(c, kinds)
	case slideAlternate:
		slideEvenLayers(kinds)
	case slidePattern:
		slideByPattern(c, kinds)
	case slideChunked:
		chunkRopeLayers(c, kinds)
	case slideLinearInterval:
		linearBetweenFullLayers(c, kinds)
	case slideLinearAlternate:
		linearByTypeList(c, kinds)
	}
	return kinds
}

// layerTypeKinds are the layer_types names and the kind each is.
var layerTypeKinds = map[string]arch.LayerKind{
	"full_attention": arch.KindFull, "attention": arch.KindFull, "global": arch.KindFull, "full": arch.KindFull,
	"sliding_attention": arch.KindSliding, "sliding": arch.KindSliding, "local": arch.KindSliding, "local_attention": arch.KindSliding,
	"chunked_attention": arch.KindChunked,
	"linear_attention":  arch.KindLinear, "linear": arch.KindLinear,
}

// namedLayerKinds reads layer_types, one name per layer.
func (r *reader) namedLayerKinds(c *config, types []string, n int) []arch.LayerKind {
	kinds := make([]arch.LayerKind, n)
	if len(types) != n {
		c.fail("config.json %q lists %d layers but num_hidden_layers is %d", c.path("layer_types"), len(types), n)
		return kinds
	}
	for i, t := range types {
		k, ok := layerTypeKinds[t]
		if !ok {
			// Sparse or compressed variants of full attention
			// (deepseek_sparse_attention, ...) cache like it.
			k = arch.KindFull
			r.unknownLayerType(t)
		}
		kinds[i] = k
	}
	return kinds
}

// slideEveryLayer: every layer slides when sliding_window is set (Mistral,
// Mixtral, Phi-3).
func slideEveryLayer(c *config, kinds []arch.LayerKind) {
	if c.has("sliding_window") && c.optBool(true, "use_sliding_window") {
		for i := range kinds {
			kinds[i] = arch.KindSliding
		}
	}
}

// slideFromMaxWindowLayers: with use_sliding_window, the layers from
// max_window_layers on slide (Qwen2/Qwen3).
func slideFromMaxWindowLayers(c *config, kinds []arch.LayerKind) {
	if c.optBool(false, "use_sliding_window") {
		from := c.count(0, "max_window_layers")
		for i := from; i < len(kinds); i++ {
			kinds[i] = arch.KindSliding
		}
	}
}

// slideEvenLayers: even layers slide (Gemma 2, gpt-oss).
func slideEvenLayers(kinds []arch.LayerKind) {
	for i := 0; i < len(kinds); i += 2 {
		kinds[i] = arch.KindSliding
	}
}

// slideByPattern: every layer but each sliding_window_pattern-th slides
// (Gemma 3, Cohere 2).
func slideByPattern(c *config, kinds []arch.LayerKind) {
	p := c.optInt(0, "sliding_window_pattern", "_sliding_window_pattern")
	if p > 0 {
		for i := range kinds {
			if (i+1)%p != 0 {
				kinds[i] = arch.KindSliding
			}
		}
	}
}

// chunkRopeLayers: the layers with rotary positions attend in chunks, from
// no_rope_layers or else every no_rope_layer_interval-th layer being the
// one without (Llama 4).
func chunkRopeLayers(c *config, kinds []arch.LayerKind) {
	n := len(kinds)
	rope := c.ints("no_rope_layers")
	if len(rope) != n {
		interval := max(1, c.optInt(4, "no_rope_layer_interval"))
		rope = make([]int, n)
		for i := range rope {
			if (i+1)%interval != 0 {
				rope[i] = 1
			}
		}
	}
	for i, v := range rope {
		if v != 0 {
			kinds[i] = arch.KindChunked
		}
	}
}

// linearBetweenFullLayers: every layer but each full_attention_interval-th
// is linear attention (Qwen3-Next).
func linearBetweenFullLayers(c *config, kinds []arch.LayerKind) {
	interval := max(1, c.optInt(4, "full_attention_interval"))
	for i := range kinds {
		if (i+1)%interval != 0 {
			kinds[i] = arch.KindLinear
		}
	}
}

// linearByTypeList: odd layers are softmax attention, the others linear,
// unless attn_type_list names them.
func linearByTypeList(c *config, kinds []arch.LayerKind) {
	// MiniMax-Text-01 names them in attn_type_list (0 = lightning, 1 = softmax).
	if list := c.ints("attn_type_list"); len(list) == len(kinds) {
		for i, v := range list {
			if v == 0 {
				kinds[i] = arch.KindLinear
			}
		}
	} else {
		for i := range kinds {
			if (i+1)%2 == 0 {
				kinds[i] = arch.KindLinear
			}
		}
	}
}

// unknownLayerType notes a layer type read as full attention.
func (r *reader) unknownLayerType(t string) {
	n := fmt.Sprintf("layer type %q read as full attention (its cache is sized like one)", showValue(t))
	if !slices.Contains(r.notes, n) {
		r.notes = append(r.notes, n)
	}
}

// readMLA reads multi-head latent attention (docs/architectures.md §6).
func (r *reader) readMLA(c *config, heads int, bias bool) arch.Attention {
	nope := c.int("qk_nope_head_dim")
	rope := c.int("qk_rope_head_dim")
	return arch.Attention{
		Kind:       arch.KindMLA,
		Heads:      heads,
		HeadDim:    nope + rope,
		VHeadDim:   c.int("v_head_dim"),
		QLoRARank:  c.count(0, "q_lora_rank"),
		KVLoRARank: c.int("kv_lora_rank"),
		RopeDim:    rope,
		QKVBias:    bias,
		OutBias:    bias,
		// DeepSeek-V3.2's and GLM-5's DSA indexer (index_topk, index_n_heads).
		IndexHeadDim: indexHeadDim(c),
	}
}

// indexHeadDim is a sparse-attention indexer's key width, 0 for none.
func indexHeadDim(c *config) int {
	if !c.has("index_topk") && !c.has("index_n_heads") {
		return 0
	}
	return c.count(0, "index_head_dim")
}

// Bytes per element of the linear-attention state: the model dtype (bf16)
// unless the config pins the recurrent state (Qwen3.5: mamba_ssm_dtype
// float32); MiniMax's lightning-attention state is kept in float32 by vLLM
// (docs/architectures.md §3, docs/vllm-kv.md §5).
const (
	stateHalfBytes = 2
	stateFP32Bytes = 4
)

// readLinear reads a linear-attention layer's shape and its fixed state.
func (r *reader) readLinear(c *config, fam family, heads, hd int) arch.Attention {
	switch fam.linear {
	case arch.LinearLightning:
		return arch.Attention{Kind: arch.KindLinear, LinearType: arch.LinearLightning, Heads: heads, HeadDim: hd,
			StateBytes: int64(heads) * int64(hd) * int64(hd) * stateFP32Bytes}
	case arch.LinearGatedDeltaNet:
		nk := c.int("linear_num_key_heads")
		nv := c.int("linear_num_value_heads")
		dk := c.int("linear_key_head_dim")
		dv := c.int("linear_value_head_dim")
		k := c.int("linear_conv_kernel_dim")
		ssm := int64(stateHalfBytes)
		if d := c.optString("", "mamba_ssm_dtype", "mamba_ssm_cache_dtype"); d == "float32" {
			ssm = stateFP32Bytes
		}
		convDim := int64(2*nk*dk + nv*dv)
		state := convDim*int64(k-1)*stateHalfBytes + int64(nv)*int64(dk)*int64(dv)*ssm
		return arch.Attention{Kind: arch.KindLinear, LinearType: arch.LinearGatedDeltaNet, Heads: heads,
			LinearKeyHeads: nk, LinearValueHeads: nv, LinearKeyDim: dk, LinearValueDim: dv, ConvKernel: k, StateBytes: state}
	}
	c.fail("config.json has linear_attention layers of a kind vrambot cannot size (model_type %q)", c.optString("", "model_type"))
	return arch.Attention{}
}

// experts is the MoE layout of a config.
type experts struct {
	ffn    arch.FFN
	layers int // how many layers are MoE
	isMoE  []bool
}

func (e experts) isMoELayer(i int) bool { return i < len(e.isMoE) && e.isMoE[i] }

// readExperts reads the experts and which layers have them. Every family's
// placement keys are honoured together, since their defaults are neutral:
// moe_layers (Llama 4), interleave_moe_layer_step (Llama 4),
// first_k_dense_replace and moe_layer_freq (DeepSeek, GLM-4.5),
// decoder_sparse_step and mlp_only_layers (Qwen2/3-MoE).
func (r *reader) readExperts(c *config, mt string, fam family, h, layers int) experts {
	var e experts
	n := c.count(0, "num_experts", "num_local_experts", "n_routed_experts", "moe_num_experts")
	if n <= 1 || (mt == "gemma4_text" && !c.optBool(false, "enable_moe_block")) {
		return e
	}
	f := arch.FFN{
		Experts:            n,
		ActiveExperts:      c.int("num_experts_per_tok", "experts_per_token", "num_experts_per_token", "moe_topk", "top_k_experts", "moe_k"),
		ExpertIntermediate: c.optInt(0, "moe_intermediate_size"),
		RouterBias:         fam.routerBias,
		ScoreBias:          fam.scoreBias || c.optString("", "topk_method") == "noaux_tc" || c.optBool(false, "use_routing_bias"),
	}
	if f.ExpertIntermediate == 0 {
		f.ExpertIntermediate = c.int("intermediate_size")
	}
	if f.ActiveExperts > n {
		c.fail("config.json routes each token to %d of %d experts", f.ActiveExperts, n)
	}
	switch {
	case c.has("shared_expert_intermediate_size"):
		f.SharedIntermediate = c.count(0, "shared_expert_intermediate_size")
		f.SharedGate = f.SharedIntermediate > 0
	case c.has("moe_shared_expert_intermediate_size"), c.has("shared_intermediate_size") && c.has("n_shared_experts"):
		f.SharedIntermediate = c.count(0, "n_shared_experts") * c.count(0, "moe_shared_expert_intermediate_size", "shared_intermediate_size")
		if !c.has("n_shared_experts") {
			f.SharedIntermediate = c.count(0, "moe_shared_expert_intermediate_size")
		}
	case c.has("n_shared_experts"), c.has("moe_num_shared_experts"):
		f.SharedIntermediate = c.count(0, "n_shared_experts", "moe_num_shared_experts") * f.ExpertIntermediate
	case fam.llama4Shared:
		f.SharedIntermediate = f.ExpertIntermediate
	}
	if mt == "gemma4_text" {
		f.ActiveExperts = c.int("top_k_experts")
		f.RouterScale = true
	}
	e.ffn = f
	e.isMoE = make([]bool, layers)
	moeLayers := c.ints("moe_layers")
	step := max(1, c.optInt(1, "interleave_moe_layer_step"))
	firstDense := c.count(0, "first_k_dense_replace", "moe_layer_start_index")
	// moe_layer_freq is a stride (DeepSeek) or a 0/1 flag per layer
	// (MiniMax-M3, MiMo-V2); mlp_layer_types names each layer (GLM-5).
	freqList := c.ints("moe_layer_freq")
	freq := 1
	if freqList == nil {
		freq = max(1, c.optInt(1, "moe_layer_freq"))
	}
	mlpTypes := c.strings("mlp_layer_types")
	sparseStep := max(1, c.optInt(1, "decoder_sparse_step"))
	mlpOnly := c.ints("mlp_only_layers")
	for i := range e.isMoE {
		on := i >= firstDense && i%freq == 0 && (i+1)%sparseStep == 0 && (i+1)%step == 0 && !slices.Contains(mlpOnly, i)
		switch {
		case moeLayers != nil && c.has("moe_layers"):
			on = slices.Contains(moeLayers, i)
		case len(freqList) == layers:
			on = freqList[i] != 0
		case len(mlpTypes) == layers:
			on = mlpTypes[i] != "dense"
		}
		e.isMoE[i] = on
		if on {
			e.layers++
		}
	}
	return e
}

// readMTP adds the multi-token-prediction modules the checkpoint ships:
// each has the shape of the model's last layer (docs/architectures.md §0
// rule 6).
func (r *reader) readMTP(c *config, fam family, specs []layerSpec, m *arch.Model) {
	n := fam.mtpAlways
	own := fam.mtpOwnEmbeddings
	switch {
	case fam.mtpKey != "":
		n = c.count(0, fam.mtpKey)
	case c.has("num_nextn_predict_layers"):
		n, own = c.count(0, "num_nextn_predict_layers"), true
	}
	if n == 0 || len(specs) == 0 {
		return
	}
	last := specs[len(specs)-1]
	m.MTP = &arch.MTP{LayerGroup: arch.LayerGroup{Layers: n, Attention: last.attn, FFN: last.ffn, Norms: last.norms}, OwnEmbeddings: own}
	if fam.mtpAlways > 0 && fam.mtpKey == "" {
		r.note("%d multi-token-prediction block shipped in the checkpoint (mtp.*) counted in the parameters, not in the weights an engine loads", n)
	} else {
		r.note("%d multi-token-prediction layer(s) (%s) counted in the parameters, not in the weights an engine loads unless MTP speculative decoding is on", n, firstNonEmpty(fam.mtpKey, "num_nextn_predict_layers"))
	}
}

// describeDecoder notes how the stack was read.
func (r *reader) describeDecoder(mt string, m arch.Model, kinds []arch.LayerKind) {
	var parts []string
	count := map[arch.LayerKind]int{}
	for _, k := range kinds {
		count[k]++
	}
	for _, g := range m.AttentionGroups() {
		switch g.Kind {
		case arch.KindMLA:
			parts = append(parts, fmt.Sprintf("%d MLA layers (latent %d per token)", g.Layers, g.LatentDim))
		case arch.KindLinear:
			parts = append(parts, fmt.Sprintf("%d linear-attention layers (%d B state per sequence each)", g.Layers, g.StateBytes))
		case arch.KindSliding, arch.KindChunked:
			parts = append(parts, fmt.Sprintf("%d %s layers (window %d, %d KV heads × %d)", g.Layers, g.Kind, g.Window, g.KVHeads, g.HeadDim))
		default:
			parts = append(parts, fmt.Sprintf("%d full-attention layers (%d KV heads × %d)", g.Layers, g.KVHeads, g.HeadDim))
		}
	}
	for _, g := range m.Groups {
		if f := g.FFN; f.IsMoE() {
			s := fmt.Sprintf("%d MoE layers of %d experts (%d active, width %d)", g.Layers, f.Experts, f.ActiveExperts, f.ExpertIntermediate)
			if f.SharedIntermediate > 0 {
				s += fmt.Sprintf(" + shared width %d", f.SharedIntermediate)
			}
			parts = append(parts, s)
		}
	}
	label := mt
	if label == "" {
		label = "none"
	}
	r.note("architecture read from config.json (model_type %s): %s", label, strings.Join(parts, "; "))
}
