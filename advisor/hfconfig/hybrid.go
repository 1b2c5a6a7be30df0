package hfconfig

import (
	"fmt"

	"github.com/vrambot/vrambot/advisor/arch"
)

// readNemotronH reads NVIDIA's Nemotron-H hybrids (configuration_nemotron_h
// in the model repos, docs/architectures.md §13): hybrid_override_pattern
// names each block, M a Mamba-2 mixer, * attention, - an MLP, E a mixture
// of experts; every block is one norm and one of those. The MLPs are
// non-gated squared-ReLU; the Mamba state is per sequence.
func (r *reader) readNemotronH(c *config, mt string) arch.Model {
	pattern := c.optString("", "hybrid_override_pattern")
	if pattern == "" {
		pattern = blockTypesPattern(c.strings("layers_block_type"))
	}
	h := c.int("hidden_size")
	heads := c.int("num_attention_heads")
	vocab := c.int("vocab_size")
	if r.err != nil {
		return arch.Model{}
	}
	if pattern == "" {
		c.fail("config.json has no %q (or %q)", c.path("hybrid_override_pattern"), c.path("layers_block_type"))
		return arch.Model{}
	}
	if len(pattern) > maxLayers {
		c.fail("config.json %q has %d layers, more than any real model", c.path("hybrid_override_pattern"), len(pattern))
		return arch.Model{}
	}
	kv := c.optInt(heads, "num_key_value_heads")
	hd := c.optInt(h/max(heads, 1), "head_dim", "attention_head_dim")
	attn := arch.Attention{Kind: arch.KindFull, Heads: heads, KVHeads: kv, HeadDim: hd, QKVBias: c.optBool(false, "attention_bias"), OutBias: c.optBool(false, "attention_bias")}
	nh := c.optInt(0, "mamba_num_heads")
	mhd := c.optInt(0, "mamba_head_dim")
	if nh == 0 || mhd == 0 {
		inner := c.optInt(2, "expand") * h
		mhd = c.optInt(64, "mamba_head_dim")
		nh = inner / max(mhd, 1)
	}
	groups := c.optInt(1, "n_groups", "mamba_n_groups")
	state := c.int("ssm_state_size", "mamba_d_state")
	kernel := c.optInt(4, "conv_kernel", "mamba_d_conv")
	ssmBytes := int64(stateHalfBytes)
	if c.optString("", "mamba_ssm_cache_dtype") == "float32" {
		ssmBytes = stateFP32Bytes
	}
	convDim := int64(nh*mhd + 2*groups*state)
	mamba := arch.Attention{Kind: arch.KindLinear, LinearType: arch.LinearMamba2, Heads: nh,
		LinearKeyHeads: groups, LinearKeyDim: state, LinearValueHeads: nh, LinearValueDim: mhd, ConvKernel: kernel,
		StateBytes: convDim*int64(kernel-1)*stateHalfBytes + int64(nh)*int64(mhd)*int64(state)*ssmBytes}
	var moe arch.FFN
	if e := c.count(0, "n_routed_experts", "num_experts"); e > 1 {
		moe = arch.FFN{Experts: e, ActiveExperts: c.int("num_experts_per_tok"), ExpertIntermediate: c.int("moe_intermediate_size"),
			SharedIntermediate: c.count(0, "n_shared_experts") * c.count(0, "moe_shared_expert_intermediate_size"), ScoreBias: true,
			ExpertLatent: c.count(0, "moe_latent_size")}
	}
	dense := c.count(0, "intermediate_size")
	block := func(ch rune) layerSpec {
		s := layerSpec{attn: arch.Attention{Kind: arch.KindNone}, norms: 1}
		switch ch {
		case 'M':
			s.attn = mamba
		case '*':
			s.attn = attn
		case '-':
			if dense == 0 {
				c.fail("config.json has MLP blocks but no %q", c.path("intermediate_size"))
			}
			s.ffn = arch.FFN{Intermediate: dense, Bias: c.optBool(false, "mlp_bias")}
		case 'E':
			if moe.Experts == 0 {
				c.fail("config.json has MoE blocks but no %q", c.path("n_routed_experts"))
			}
			s.ffn = moe
		default:
			c.fail("config.json %q has block %q, which vrambot cannot size", c.path("hybrid_override_pattern"), string(ch))
		}
		return s
	}
	specs := make([]layerSpec, 0, len(pattern))
	for _, ch := range pattern {
		specs = append(specs, block(ch))
	}
	if r.err != nil {
		return arch.Model{}
	}
	m := arch.Model{
		Family: arch.FamilyDecoderOnly, HiddenSize: h, NumLayers: len(specs), NumAttentionHeads: heads, NumKVHeads: kv, HeadDim: hd,
		IntermediateSize: dense, VocabSize: vocab, MaxPositionEmbeddings: c.optInt(0, "max_position_embeddings"),
		TieWordEmbeddings: c.optBool(false, "tie_word_embeddings"), MLP: "relu2", Norm: "rmsnorm", Position: "rope",
		NormsPerLayer: 1, Groups: groupLayers(specs),
	}
	if moe.Experts > 1 {
		m.NumExperts, m.ExpertsPerToken = moe.Experts, moe.ActiveExperts
	}
	// MTP modules: the blocks mtp_hybrid_override_pattern names, the
	// heaviest as the module's main block.
	mtpPattern := c.optString("", "mtp_hybrid_override_pattern")
	if mtpPattern == "" {
		mtpPattern = blockTypesPattern(c.strings("mtp_layers_block_type"))
	}
	if n := c.count(0, "num_nextn_predict_layers"); n > 0 && mtpPattern != "" {
		var blocks []arch.LayerGroup
		for _, ch := range mtpPattern {
			s := block(ch)
			blocks = append(blocks, arch.LayerGroup{Layers: 1, Attention: s.attn, FFN: s.ffn, Norms: s.norms})
		}
		main := len(blocks) - 1
		mtp := &arch.MTP{LayerGroup: blocks[main]}
		mtp.Layers = n
		mtp.ExtraBlocks = append(blocks[:main:main], blocks[main+1:]...)
		m.MTP = mtp
		r.note("%d multi-token-prediction module(s) (%s) counted in the parameters, not in the weights an engine loads unless MTP speculative decoding is on", n, mtpPattern)
	}
	r.note("architecture read from config.json (model_type %s): %s", mt, describePattern(pattern, mamba.StateBytes))
	return m
}

// blockTypesPattern turns layers_block_type names into pattern letters.
func blockTypesPattern(types []string) string {
	letters := map[string]string{"mamba": "M", "attention": "*", "mlp": "-", "moe": "E"}
	var b []byte
	for _, t := range types {
		l, ok := letters[t]
		if !ok {
			l = "?"
		}
		b = append(b, l...)
	}
	return string(b)
}

// describePattern counts a Nemotron-H pattern's blocks.
func describePattern(pattern string, state int64) string {
	count := map[rune]int{}
	for _, ch := range pattern {
		count[ch]++
	}
	return fmt.Sprintf("%d Mamba-2 blocks (%d B state per sequence each), %d attention blocks, %d MLP blocks, %d MoE blocks",
		count['M'], state, count['*'], count['-'], count['E'])
}

// readDeciLM reads NVIDIA's Llama-Nemotron NAS models (model_type
// nemotron-nas, DeciLMForCausalLM): a Llama whose block_configs give each
// layer its own attention (n_heads_in_group, or no_op, or one linear
// layer) and MLP (ffn_mult, or no_op, or one linear layer). The MLP width
// is DeciLM's _ffn_mult_to_intermediate_size: 2·ffn_mult·h/3 rounded up
// to a multiple of 256 (as vLLM, SGLang and TensorRT-LLM compute it).
func (r *reader) readDeciLM(c *config, mt string) arch.Model {
	h := c.int("hidden_size")
	heads := c.int("num_attention_heads")
	vocab := c.int("vocab_size")
	blocks := c.objects("block_configs")
	if r.err != nil {
		return arch.Model{}
	}
	if len(blocks) == 0 || len(blocks) > maxLayers {
		c.fail("config.json has no usable %q", c.path("block_configs"))
		return arch.Model{}
	}
	hd := c.optInt(h/max(heads, 1), "head_dim")
	specs := make([]layerSpec, 0, len(blocks))
	var linearParams int64
	attnLayers := 0
	for _, b := range blocks {
		s := layerSpec{attn: arch.Attention{Kind: arch.KindNone}}
		if a := b.sub("attention"); a != nil && !a.optBool(false, "no_op") {
			s.norms++
			if a.optBool(false, "replace_with_linear") {
				linearParams += int64(h) * int64(h)
			} else {
				group := a.optInt(1, "n_heads_in_group")
				s.attn = arch.Attention{Kind: arch.KindFull, Heads: heads, KVHeads: heads / max(group, 1), HeadDim: hd}
				attnLayers++
			}
		}
		if f := b.sub("ffn"); f != nil && !f.optBool(false, "no_op") {
			s.norms++
			if f.optBool(false, "replace_with_linear") {
				linearParams += int64(h) * int64(h)
			} else {
				width := int(2 * f.optFloat(0, "ffn_mult") * float64(h) / 3)
				width = (width + 255) / 256 * 256
				if width <= 0 {
					f.fail("config.json %q has no positive ffn_mult", f.where)
				}
				s.ffn = arch.FFN{Intermediate: width}
			}
		}
		specs = append(specs, s)
	}
	if r.err != nil {
		return arch.Model{}
	}
	m := arch.Model{
		Family: arch.FamilyDecoderOnly, HiddenSize: h, NumLayers: len(specs), NumAttentionHeads: heads, HeadDim: hd,
		VocabSize: vocab, MaxPositionEmbeddings: c.optInt(0, "max_position_embeddings"),
		TieWordEmbeddings: c.optBool(false, "tie_word_embeddings"), MLP: "swiglu", Norm: "rmsnorm", Position: "rope",
		Groups: groupLayers(specs),
	}
	m.NumKVHeads = heads
	for _, s := range specs {
		if s.attn.Kind == arch.KindFull {
			m.NumKVHeads = s.attn.KVHeads
			break
		}
	}
	for _, s := range specs {
		m.IntermediateSize = max(m.IntermediateSize, s.ffn.Intermediate)
	}
	m.ExtraParams[arch.TensorAttention] += linearParams
	r.note("architecture read from config.json (model_type %s): %d layers from block_configs, %d with attention", mt, len(specs), attnLayers)
	return m
}
