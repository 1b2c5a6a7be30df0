// Package arch is the estimator's picture of a transformer architecture:
// the shapes that decide its parameter count, its weight bytes (by tensor
// group, under the checkpoint's quantisation), the key/value cache or
// recurrent state it keeps per token and per sequence, and the parameters a
// token passes through (mixture of experts). It is pure data and arithmetic:
// advisor/hfconfig builds a Model from a Hugging Face config.json,
// advisor/catalog holds the named ones (catalog.Model is this type), and the
// estimator and planners read it. How each family maps onto these fields:
// docs/architectures.md.
package arch

// Model is a transformer architecture from the catalog, a config.json, or
// scaled from a size.
//
// The fields up to Scaled describe a uniform stack (every layer alike) and
// are what older code reads. Models whose layers differ (mixture of experts
// with dense first layers, sliding-window or linear-attention layers,
// multi-head latent attention) also carry Groups, which then decide the
// parameter count, the KV cache and the activations; the uniform fields stay
// filled with the model's representative values (the full-attention layers'
// heads, the dense or per-expert MLP width) for display and for code that
// only needs a rough shape.
//
// Params is the logical parameter count of the checkpoint: every weight,
// bias and norm tensor the model's modelling code creates, counted once
// when tied, in unpacked elements (a GPTQ checkpoint's int32-packed tensors
// count the weights they hold, not the int32 words; scale and zero-point
// tensors of a quantised checkpoint are not parameters), including the
// vision tower of a multimodal model and the multi-token-prediction modules
// that ship in the checkpoint. It is what the Hub's safetensors count shows
// for an unquantised checkpoint (docs/architectures.md §0).
type Model struct {
	Name                  string `json:"name"`
	HFID                  string `json:"hf_id,omitempty"`
	Family                string `json:"family"` // decoder-only, encoder-only, encoder-decoder
	HiddenSize            int    `json:"hidden_size"`
	NumLayers             int    `json:"num_layers"`
	NumDecoderLayers      int    `json:"num_decoder_layers,omitempty"`
	NumAttentionHeads     int    `json:"num_attention_heads"`
	NumKVHeads            int    `json:"num_kv_heads"`
	HeadDim               int    `json:"head_dim"`
	IntermediateSize      int    `json:"intermediate_size"`
	VocabSize             int    `json:"vocab_size"`
	MaxPositionEmbeddings int    `json:"max_position_embeddings,omitempty"`
	TieWordEmbeddings     bool   `json:"tie_word_embeddings"`
	MLP                   string `json:"mlp"` // swiglu, geglu (gated: three h×I matrices), gelu, relu
	NumExperts            int    `json:"num_experts,omitempty"`
	ExpertsPerToken       int    `json:"experts_per_token,omitempty"`
	SlidingWindow         int    `json:"sliding_window,omitempty"`
	Params                int64  `json:"params"`
	Source                string `json:"source,omitempty"`

	// Fields below describe the layer shapes precisely enough for
	// ComputeParams to reproduce the published parameter totals.

	Aliases        []string `json:"aliases,omitempty"`
	Norm           string   `json:"norm,omitempty"`            // rmsnorm (weight only), layernorm (weight and bias), layernorm-nobias, none
	Position       string   `json:"position,omitempty"`        // rope, learned (an embedding table) or relative (T5 buckets)
	QKVBias        bool     `json:"qkv_bias,omitempty"`        // biases on the q, k, v projections only (Qwen2)
	LinearBias     bool     `json:"linear_bias,omitempty"`     // biases on every linear layer (GPT-2, BERT, OPT, Phi-2)
	NormsPerLayer  int      `json:"norms_per_layer,omitempty"` // 0 means 2; parallel attention+MLP blocks have 1
	PositionOffset int      `json:"position_offset,omitempty"` // extra learned positions (OPT keeps 2)
	TypeVocabSize  int      `json:"type_vocab_size,omitempty"` // BERT token-type embeddings
	Pooler         bool     `json:"pooler,omitempty"`          // BERT pooler dense layer
	LMHeadBias     bool     `json:"lm_head_bias,omitempty"`
	// RelativeBuckets is T5's relative-position bias table size, held by the first layer of each stack.
	RelativeBuckets int `json:"relative_buckets,omitempty"`
	// Scaled is true when the architecture was made up from a size ("7b"), not read from the catalog.
	Scaled bool `json:"scaled,omitempty"`
	// StandInFor names the catalog model whose config.json this entry is
	// read from when the model itself has no config of its own in the
	// catalog but the same architecture (GLM-4.5 read with GLM-4.7's); the
	// reply states it. Empty for a model read from its own config.
	StandInFor string `json:"stand_in_for,omitempty"`

	// ModelType is the config.json model_type ("qwen3_moe", "deepseek_v3");
	// empty for catalog rows written as shapes.
	ModelType string `json:"model_type,omitempty"`
	// Groups are the decoder layers grouped by shape (see LayerGroup); the
	// counts add up to NumLayers. Empty means every layer is the uniform
	// shape above (Layers derives that single group).
	Groups []LayerGroup `json:"layer_groups,omitempty"`
	// MTP is the multi-token-prediction modules that ship in the checkpoint
	// (DeepSeek-V3 num_nextn_predict_layers, GLM-4.5, Qwen3-Next mtp.*):
	// counted in Params, not loaded by inference engines unless speculative
	// decoding with MTP is switched on (docs/architectures.md §0 rule 6).
	MTP *MTP `json:"mtp,omitempty"`
	// VisionParams is the vision tower and its projector of a multimodal
	// model, counted by the config reader from vision_config
	// (docs/architectures.md §4, §5, §8). It holds no KV cache.
	VisionParams int64 `json:"vision_params,omitempty"`
	// ExtraParams are tensors the shapes above do not describe, counted by
	// the config reader per tensor group (Gemma 4's per-layer embedding
	// tables and projections).
	ExtraParams ByGroup[int64] `json:"extra_params,omitempty"`
	// Quant is how a pre-quantised checkpoint stores its weights; nil for a
	// 16-bit (or fp32) checkpoint, whose weights follow the workload's
	// precision.
	Quant *Quantization `json:"quantization,omitempty"`
	// DType is the checkpoint's stored dtype from config.json
	// (torch_dtype/dtype): "bfloat16", "float16", "float32"; "" unknown.
	DType string `json:"dtype,omitempty"`
}

// Model families.
const (
	FamilyDecoderOnly    = "decoder-only"
	FamilyEncoderOnly    = "encoder-only"
	FamilyEncoderDecoder = "encoder-decoder"
)

// Gated reports whether the MLP is gated (SwiGLU/GeGLU: three h×I matrices
// instead of two).
func (m Model) Gated() bool { return m.MLP == "swiglu" || m.MLP == "geglu" }

// AttentionWidth is heads × head_dim, which differs from the hidden size in
// Gemma-7B and T5-3B/11B.
func (m Model) AttentionWidth() int { return m.NumAttentionHeads * m.HeadDim }

// DecoderLayers is the number of layers that hold a KV cache when generating:
// all layers of a decoder-only model, the decoder stack of an encoder-decoder.
func (m Model) DecoderLayers() int {
	if m.Family == FamilyEncoderDecoder && m.NumDecoderLayers > 0 {
		return m.NumDecoderLayers
	}
	return m.NumLayers
}

// TotalLayers counts every transformer block (encoder and decoder stacks).
func (m Model) TotalLayers() int {
	if m.Family == FamilyEncoderDecoder {
		return m.NumLayers + m.NumDecoderLayers
	}
	return m.NumLayers
}

// IsMoE reports whether any layer routes tokens to a subset of experts.
func (m Model) IsMoE() bool {
	for _, g := range m.Layers() {
		if g.FFN.Experts > 1 {
			return true
		}
	}
	return false
}
