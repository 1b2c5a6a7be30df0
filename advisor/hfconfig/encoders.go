package hfconfig

import (
	"strings"

	"github.com/vrambot/vrambot/advisor/arch"
)

// readEncoder reads a BERT-style encoder (bert, roberta, xlm-roberta):
// post-LN blocks with biases, learned and token-type embeddings, a pooler.
func (r *reader) readEncoder(c *config, mt string, fam family) arch.Model {
	m := arch.Model{
		Family:                arch.FamilyEncoderOnly,
		HiddenSize:            c.int("hidden_size"),
		NumLayers:             c.int("num_hidden_layers"),
		NumAttentionHeads:     c.int("num_attention_heads"),
		IntermediateSize:      c.int("intermediate_size"),
		VocabSize:             c.int("vocab_size"),
		MaxPositionEmbeddings: c.int("max_position_embeddings"),
		TypeVocabSize:         c.count(2, "type_vocab_size"),
		MLP:                   fam.mlp,
		Norm:                  fam.norm,
		Position:              fam.position,
		LinearBias:            true,
		Pooler:                true,
	}
	if r.err != nil || m.NumLayers > maxLayers {
		c.fail("config.json %q is %d, more layers than any real model", c.path("num_hidden_layers"), m.NumLayers)
		return arch.Model{}
	}
	m.NumKVHeads = m.NumAttentionHeads
	m.HeadDim = m.HiddenSize / m.NumAttentionHeads
	if m.HeadDim == 0 {
		c.fail("config.json hidden_size %d is smaller than its %d attention heads", m.HiddenSize, m.NumAttentionHeads)
	}
	r.note("architecture read from config.json (model_type %s): a %d-layer encoder (hidden %d), no KV cache", mt, m.NumLayers, m.HiddenSize)
	return m
}

// readT5 reads a T5-style encoder-decoder (t5, mt5, umt5): relative
// position buckets, no biases, ReLU or gated-GELU feed-forward.
func (r *reader) readT5(c *config, mt string, fam family) arch.Model {
	m := arch.Model{
		Family:            arch.FamilyEncoderDecoder,
		HiddenSize:        c.int("d_model", "hidden_size"),
		NumLayers:         c.int("num_layers", "num_hidden_layers"),
		NumAttentionHeads: c.int("num_heads", "num_attention_heads"),
		HeadDim:           c.int("d_kv"),
		IntermediateSize:  c.int("d_ff"),
		VocabSize:         c.int("vocab_size"),
		TieWordEmbeddings: c.optBool(fam.tied, "tie_word_embeddings"),
		RelativeBuckets:   c.optInt(32, "relative_attention_num_buckets"),
		MLP:               "relu",
		Norm:              fam.norm,
		Position:          fam.position,
	}
	m.NumDecoderLayers = c.optInt(m.NumLayers, "num_decoder_layers")
	if r.err != nil || m.NumLayers > maxLayers || m.NumDecoderLayers > maxLayers {
		c.fail("config.json %q is %d, more layers than any real model", c.path("num_layers"), max(m.NumLayers, m.NumDecoderLayers))
		return arch.Model{}
	}
	m.NumKVHeads = m.NumAttentionHeads
	proj := strings.ToLower(c.optString("relu", "feed_forward_proj"))
	if strings.HasPrefix(proj, "gated-") {
		m.MLP = "geglu"
	} else if proj != "relu" {
		m.MLP = "gelu"
	}
	r.note("architecture read from config.json (model_type %s): %d encoder + %d decoder layers (hidden %d, %s feed-forward); the KV cache is the decoder's", mt, m.NumLayers, m.NumDecoderLayers, m.HiddenSize, proj)
	return m
}
