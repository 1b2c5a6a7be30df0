// Package catalog holds the embedded GPU and model-architecture catalogs
// (data files with their sources) and name lookup with "did you mean".
// The GPU side lives in the gpu*.go files, the model side in the others.
package catalog

// Model is a transformer architecture from the catalog (or scaled from a size).
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
	MLP                   string `json:"mlp"`
	NumExperts            int    `json:"num_experts,omitempty"`
	ExpertsPerToken       int    `json:"experts_per_token,omitempty"`
	SlidingWindow         int    `json:"sliding_window,omitempty"`
	Params                int64  `json:"params"`
	Source                string `json:"source,omitempty"`

	// Fields below describe the layer shapes precisely enough for
	// ComputeParams to reproduce the published parameter totals.

	Aliases        []string `json:"aliases,omitempty"`
	Norm           string   `json:"norm,omitempty"`            // rmsnorm (weight only) or layernorm (weight and bias)
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

// KVCacheBytesPerToken is 2 (K and V) × decoder layers × KV heads × head_dim
// × 2 bytes: the fp16 KV cache of one token (memory-model.md §1.4).
func (m Model) KVCacheBytesPerToken() int64 {
	return 2 * int64(m.DecoderLayers()) * int64(m.NumKVHeads) * int64(m.HeadDim) * 2
}

// normParams is the size of one normalisation layer.
func (m Model) normParams() int64 {
	if m.Norm == "layernorm" {
		return 2 * int64(m.HiddenSize)
	}
	return int64(m.HiddenSize)
}

// AttentionParams is one self-attention block: q and o are h × heads·head_dim,
// k and v are h × kv_heads·head_dim (GQA), plus biases where the model has them.
func (m Model) AttentionParams() int64 {
	h := int64(m.HiddenSize)
	q := int64(m.AttentionWidth())
	kv := int64(m.NumKVHeads) * int64(m.HeadDim)
	n := 2*h*q + 2*h*kv
	if m.QKVBias || m.LinearBias {
		n += q + 2*kv
	}
	if m.LinearBias {
		n += h
	}
	return n
}

// MLPParams is the feed-forward block of one layer (all experts and the router
// for a mixture of experts).
func (m Model) MLPParams() int64 {
	h, i := int64(m.HiddenSize), int64(m.IntermediateSize)
	var n int64
	if m.Gated() {
		n = 3 * h * i
	} else {
		n = 2 * h * i
	}
	if m.LinearBias {
		n += i + h
	}
	if m.NumExperts > 1 {
		n = n*int64(m.NumExperts) + h*int64(m.NumExperts)
	}
	return n
}

// LayerParams is one (encoder or decoder-only) transformer block.
func (m Model) LayerParams() int64 {
	norms := int64(m.NormsPerLayer)
	if norms == 0 {
		norms = 2
	}
	return m.AttentionParams() + m.MLPParams() + norms*m.normParams()
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

// ComputeParams counts the parameters from the shapes: embeddings, positions,
// every block, final norms, the untied output head. It reproduces the
// published totals of every catalog model (see catalog_test.go).
func (m Model) ComputeParams() int64 {
	h := int64(m.HiddenSize)
	n := m.EmbeddingParams() + m.LMHeadParams()
	if m.Position == "learned" {
		n += int64(m.MaxPositionEmbeddings+m.PositionOffset) * h
	}
	switch m.Family {
	case FamilyEncoderDecoder:
		// Decoder blocks add cross-attention and its norm.
		dec := m.LayerParams() + m.AttentionParams() + m.normParams()
		n += int64(m.NumLayers)*m.LayerParams() + int64(m.NumDecoderLayers)*dec + 2*m.normParams()
		n += 2 * int64(m.RelativeBuckets) * int64(m.NumAttentionHeads)
	case FamilyEncoderOnly:
		// One embedding LayerNorm (post-LN models have no final norm).
		n += int64(m.NumLayers)*m.LayerParams() + m.normParams() + int64(m.TypeVocabSize)*h
		if m.Pooler {
			n += h*h + h
		}
	default:
		n += int64(m.NumLayers)*m.LayerParams() + m.normParams()
	}
	return n
}
