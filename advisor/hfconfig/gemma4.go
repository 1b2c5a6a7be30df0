package hfconfig

import "github.com/vrambot/vrambot/advisor/arch"

// readGemma4 applies what Gemma 4's text decoder (transformers
// models/gemma4, Gemma4TextAttention and Gemma4TextDecoderLayer) does
// beyond Gemma 3: full-attention layers use global_head_dim and
// num_global_key_value_heads, and with attention_k_eq_v take their values
// from the key projection (both still cached); the last
// num_kv_shared_layers layers reuse earlier keys and values (no k/v
// weights, no cache) and may have a double-wide MLP; the MoE block sits
// beside the dense MLP with its own router scales and three more norms;
// per-layer embeddings (hidden_size_per_layer_input) add a table and
// projections.
func (r *reader) readGemma4(c *config, m *arch.Model, specs []layerSpec, kinds []arch.LayerKind, dense int) {
	n := len(specs)
	globalDim := c.optInt(512, "global_head_dim")
	kEqV := c.optBool(false, "attention_k_eq_v")
	globalKV := c.optInt(0, "num_global_key_value_heads")
	shared := c.count(0, "num_kv_shared_layers")
	doubleWide := c.optBool(false, "use_double_wide_mlp")
	for i := range specs {
		s := &specs[i]
		s.norms = 4
		if kinds[i] == arch.KindFull {
			s.attn.HeadDim = globalDim
			if kEqV {
				s.attn.ValueFromKey = true
				if globalKV > 0 {
					s.attn.KVHeads = globalKV
				}
			}
		}
		if shared > 0 && i >= n-shared {
			s.attn.SharesKV = true
			if doubleWide {
				s.ffn.Intermediate = 2 * dense
			}
		}
		if s.ffn.IsMoE() {
			s.ffn.Intermediate = dense
			s.norms += 3 // post_feedforward_layernorm_1/_2, pre_feedforward_layernorm_2
		}
	}
	if p := c.count(0, "hidden_size_per_layer_input"); p > 0 {
		h, l := int64(m.HiddenSize), int64(n)
		vp := int64(c.optInt(m.VocabSize, "vocab_size_per_layer_input"))
		pp := int64(p)
		// embed_tokens_per_layer; per_layer_model_projection and its norm;
		// per layer: input gate, projection and norm.
		m.ExtraParams[arch.TensorEmbedding] += vp * l * pp
		m.ExtraParams[arch.TensorMLP] += h*l*pp + pp + l*(2*h*pp+h)
		r.note("per-layer embeddings (hidden_size_per_layer_input %d): %.2fB parameters", p, float64(vp*l*pp+h*l*pp+pp+l*(2*h*pp+h))/1e9)
	}
}

// readMiMoV2 applies MiMo-V2's hybrid_layer_pattern (0 full, 1 sliding)
// and its sliding layers' own head counts and sizes (swa_*).
func (r *reader) readMiMoV2(c *config, specs []layerSpec, kinds []arch.LayerKind) {
	pattern := c.ints("hybrid_layer_pattern")
	if len(pattern) != len(specs) {
		return
	}
	window := c.optInt(0, "sliding_window", "sliding_window_size")
	vhd := c.optInt(0, "v_head_dim")
	for i := range specs {
		a := &specs[i].attn
		a.VHeadDim = vhd
		if pattern[i] == 1 && window > 0 {
			kinds[i] = arch.KindSliding
			a.Kind, a.Window = arch.KindSliding, window
			a.Heads = c.optInt(a.Heads, "swa_num_attention_heads")
			a.KVHeads = c.optInt(a.KVHeads, "swa_num_key_value_heads")
			a.HeadDim = c.optInt(a.HeadDim, "swa_head_dim")
			a.VHeadDim = c.optInt(vhd, "swa_v_head_dim")
			a.Sinks = c.optBool(false, "add_swa_attention_sink_bias")
		} else {
			kinds[i] = arch.KindFull
			a.Kind, a.Window = arch.KindFull, 0
			a.Sinks = c.optBool(false, "add_full_attention_sink_bias")
		}
	}
}
