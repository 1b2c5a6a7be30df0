package hfconfig

import "github.com/vrambot/vrambot/advisor/arch"

// familyKind is how a family's stack is built.
type familyKind int

const (
	kindDecoder familyKind = iota
	kindEncoder
	kindEncoderDecoder
	kindHybrid // Mamba-2 / attention / MLP blocks named by a pattern (Nemotron-H)
	kindNAS    // per-layer block_configs (Llama-Nemotron NAS)
)

// family is what a model_type's modelling code does that its config.json
// does not say (docs/architectures.md §1–§12; transformers
// models/<type>/configuration_<type>.py and modeling_<type>.py).
type family struct {
	kind familyKind
	// tied is the class default of tie_word_embeddings.
	tied bool
	norm string // rmsnorm, layernorm, layernorm-nobias (Cohere), none (OLMo 1)
	mlp  string // swiglu, geglu, gelu, relu
	// norms is the hidden-size norms per layer.
	norms int
	// qkvBias: q, k, v always have biases (Qwen2); noOutBias: attention_bias
	// does not reach the output projection (Qwen2, GLM).
	qkvBias, noOutBias bool
	// qkNorm is the q/k norm the family always has; qkNormKey the switch
	// that turns it on (use_qk_norm).
	qkNorm    string
	qkNormKey string
	// linearBias: every linear layer has a bias (GPT-2, BERT, OPT, NeoX).
	linearBias bool
	// position: rope (default), learned, alibi, relative.
	position string
	// sliding is the rule that picks sliding-window layers when the config
	// has no layer_types.
	sliding slidingRule
	// llama4Shared: every MoE layer also has one shared expert as wide as a
	// routed one (Llama 4); routerBias, expertBias: the router and the
	// experts' projections have biases (gpt-oss).
	llama4Shared, routerBias, expertBias bool
	// scoreBias: the router keeps an e_score_correction_bias per expert
	// (DeepSeek-V3, GLM-4.5), whatever topk_method says.
	scoreBias bool
	// mla: multi-head latent attention (DeepSeek V2/V3).
	mla bool
	// mtpKey names the MTP layer count; mtpOwnEmbeddings: each module has
	// its own embedding and head copies; mtpAlways: checkpoints ship this
	// many MTP modules although the config has no key (Qwen3-Next).
	mtpKey           string
	mtpOwnEmbeddings bool
	mtpAlways        int
	// linear: the linear-attention mixer of linear_attention layers.
	linear string
	// defaults are the configuration class's defaults for keys released
	// files leave out.
	defaults map[string]any
	// parallel: attention and MLP read the same norm (one norm per layer).
	parallel bool
}

// slidingRule picks sliding-window layers without layer_types.
type slidingRule int

const (
	slideNone            slidingRule = iota
	slideAll                         // every layer when sliding_window is set (Mistral, Mixtral, Phi-3)
	slideQwen                        // use_sliding_window: layers ≥ max_window_layers (Qwen2/Qwen3)
	slideAlternate                   // even layers slide (Gemma 2, gpt-oss)
	slidePattern                     // (i+1) % sliding_window_pattern != 0 slides (Gemma 3, Cohere 2)
	slideChunked                     // Llama 4: no_rope_layers pick chunked layers
	slideLinearInterval              // Qwen3-Next: (i+1) % full_attention_interval != 0 is linear
	slideLinearAlternate             // MiniMax: odd layers linear
)

var llamaLike = family{norm: "rmsnorm", mlp: "swiglu", norms: 2}

// genericFamily reads an unknown model_type from the usual keys.
var genericFamily = family{norm: "rmsnorm", mlp: "swiglu", norms: 2, sliding: slideAll}

func with(f family, edit func(*family)) family { edit(&f); return f }

// minimaxLightning is MiniMax's lightning-attention MoE (§3): attn_type_list
// marks the softmax layers among linear ones.
var minimaxLightning = with(llamaLike, func(f *family) {
	f.sliding, f.linear = slideLinearAlternate, arch.LinearLightning
})

// families maps model_type to what its code does. Sources: the
// configuration and modelling files of each type in huggingface/transformers
// (named per entry), as summarised in docs/architectures.md.
var families = map[string]family{
	// §1 dense Llama-style.
	"llama":      llamaLike,
	"mistral":    with(llamaLike, func(f *family) { f.sliding = slideAll }),
	"ministral":  with(llamaLike, func(f *family) { f.sliding = slideAll }),
	"ministral3": with(llamaLike, func(f *family) { f.sliding = slideAll }),
	"qwen2":      with(llamaLike, func(f *family) { f.qkvBias, f.noOutBias, f.sliding = true, true, slideQwen }),
	"qwen3":      with(llamaLike, func(f *family) { f.qkNorm, f.sliding = arch.QKNormHead, slideQwen }),
	// Qwen2-VL / Qwen2.5-VL keep the qwen2 LM at the top level (§4).
	"qwen2_vl":          with(llamaLike, func(f *family) { f.qkvBias, f.noOutBias, f.sliding = true, true, slideQwen }),
	"qwen2_5_vl":        with(llamaLike, func(f *family) { f.qkvBias, f.noOutBias, f.sliding = true, true, slideQwen }),
	"qwen3_vl_text":     with(llamaLike, func(f *family) { f.qkNorm = arch.QKNormHead }),
	"qwen3_vl_moe_text": with(llamaLike, func(f *family) { f.qkNorm = arch.QKNormHead }),
	"granite":           llamaLike, // scalar multipliers only
	"olmo2":             with(llamaLike, func(f *family) { f.qkNorm = arch.QKNormAll }),
	"olmo3":             with(llamaLike, func(f *family) { f.qkNorm, f.sliding = arch.QKNormAll, slideNone }),
	"olmo":              with(llamaLike, func(f *family) { f.norm = "none" }),
	"smollm3":           llamaLike,
	"yi":                llamaLike,
	"internlm2":         llamaLike,
	"internlm3":         llamaLike,
	"exaone":            llamaLike,
	"exaone4":           with(llamaLike, func(f *family) { f.qkNorm, f.sliding = arch.QKNormHead, slidePattern }),
	"seed_oss":          with(llamaLike, func(f *family) { f.sliding = slideNone }),
	"helium":            llamaLike,
	"starcoder2": with(llamaLike, func(f *family) {
		f.norm, f.mlp, f.linearBias, f.sliding = "layernorm", "gelu", true, slideAll
	}),
	"phi3": with(llamaLike, func(f *family) { f.sliding = slideAll }), // fused qkv/gate_up: same count (§9)
	"glm":  with(llamaLike, func(f *family) { f.noOutBias = true }),
	"glm4": with(llamaLike, func(f *family) { f.noOutBias, f.norms = true, 4 }),
	"gemma": with(llamaLike, func(f *family) {
		f.tied, f.mlp = true, "geglu"
	}),
	// §5: sandwich norms, alternating sliding layers.
	"gemma2": with(llamaLike, func(f *family) {
		f.tied, f.mlp, f.norms, f.sliding = true, "geglu", 4, slideAlternate
		f.defaults = map[string]any{"sliding_window": 4096.0, "head_dim": 256.0}
	}),
	// §5: Gemma3TextConfig defaults (google's multimodal files omit them).
	"gemma3_text": with(llamaLike, func(f *family) {
		f.tied, f.mlp, f.norms, f.qkNorm, f.sliding = true, "geglu", 4, arch.QKNormHead, slidePattern
		f.defaults = map[string]any{
			"vocab_size": 262208.0, "hidden_size": 2304.0, "intermediate_size": 9216.0, "num_hidden_layers": 26.0,
			"num_attention_heads": 8.0, "num_key_value_heads": 4.0, "head_dim": 256.0, "max_position_embeddings": 131072.0,
			"sliding_window": 4096.0, "sliding_window_pattern": 6.0,
		}
	}),
	"cohere": with(llamaLike, func(f *family) {
		f.tied, f.norm, f.norms, f.parallel, f.qkNormKey = true, "layernorm-nobias", 1, true, "use_qk_norm"
	}),
	"cohere2": with(llamaLike, func(f *family) {
		f.tied, f.norm, f.norms, f.parallel, f.sliding = true, "layernorm-nobias", 1, true, slidePattern
		f.defaults = map[string]any{"sliding_window_pattern": 4.0}
	}),
	// §2 token-choice MoE.
	"mixtral":    with(llamaLike, func(f *family) { f.sliding = slideAll }),
	"qwen2_moe":  with(llamaLike, func(f *family) { f.qkvBias, f.noOutBias, f.sliding = true, true, slideQwen }),
	"qwen3_moe":  with(llamaLike, func(f *family) { f.qkNorm, f.sliding = arch.QKNormHead, slideQwen }),
	"olmoe":      with(llamaLike, func(f *family) { f.qkNorm = arch.QKNormAll }),
	"granitemoe": llamaLike,
	// §9: LayerNorm with biases, attention and lm_head biases.
	"phimoe": with(llamaLike, func(f *family) {
		f.norm, f.sliding = "layernorm", slideAll
		f.defaults = map[string]any{"vocab_size": 32064.0, "hidden_size": 4096.0, "intermediate_size": 6400.0, "num_hidden_layers": 32.0,
			"num_attention_heads": 32.0, "num_key_value_heads": 8.0, "num_local_experts": 16.0, "num_experts_per_tok": 2.0,
			"attention_bias": true, "lm_head_bias": true}
	}),
	// §3 hybrid linear attention.
	"qwen3_next": with(llamaLike, func(f *family) {
		f.qkNorm, f.sliding, f.linear, f.mtpAlways = arch.QKNormHead, slideLinearInterval, arch.LinearGatedDeltaNet, 1
	}),
	"qwen3_5_text": with(llamaLike, func(f *family) {
		f.qkNorm, f.sliding, f.linear, f.mtpKey = arch.QKNormHead, slideLinearInterval, arch.LinearGatedDeltaNet, "mtp_num_hidden_layers"
	}),
	"qwen3_5_moe_text": with(llamaLike, func(f *family) {
		f.qkNorm, f.sliding, f.linear, f.mtpKey = arch.QKNormHead, slideLinearInterval, arch.LinearGatedDeltaNet, "mtp_num_hidden_layers"
		f.defaults = map[string]any{"moe_intermediate_size": 512.0, "shared_expert_intermediate_size": 512.0, "num_experts_per_tok": 8.0, "num_experts": 256.0,
			"head_dim": 256.0, "linear_conv_kernel_dim": 4.0, "linear_key_head_dim": 128.0, "linear_value_head_dim": 128.0,
			"linear_num_key_heads": 16.0, "linear_num_value_heads": 32.0}
	}),
	"minimax": minimaxLightning,
	// MiniMax-Text-01 and MiniMax-M1 under the model_type of their remote
	// code (configuration_minimax_text_01.py, configuration_minimax_m1.py):
	// the same lightning/softmax stack transformers names "minimax".
	"minimax_text_01": minimaxLightning,
	"minimax_m1":      minimaxLightning,
	"minimax_m2": with(llamaLike, func(f *family) {
		f.qkNormKey = "use_qk_norm"
	}),
	// §6 MLA + fine-grained MoE.
	"deepseek_v2": with(llamaLike, func(f *family) { f.mla = true }),
	"deepseek_v3": with(llamaLike, func(f *family) {
		f.mla, f.scoreBias, f.mtpKey, f.mtpOwnEmbeddings = true, true, "num_nextn_predict_layers", true
	}),
	"deepseek_v32": with(llamaLike, func(f *family) {
		f.mla, f.scoreBias, f.mtpKey, f.mtpOwnEmbeddings = true, true, "num_nextn_predict_layers", true
	}),
	"kimi_k2": with(llamaLike, func(f *family) { f.mla, f.scoreBias = true, true }),
	// GLM-4.7-Flash (Glm4MoeLite): DeepSeek-V3's layout at a smaller size,
	// MLA, a dense first layer, noaux_tc routing and one MTP module
	// (transformers models/glm4_moe_lite, modular on deepseek_v3).
	"glm4_moe_lite": with(llamaLike, func(f *family) {
		f.mla, f.scoreBias, f.mtpKey, f.mtpOwnEmbeddings = true, true, "num_nextn_predict_layers", true
	}),
	// ERNIE 4.5 MoE: moe_k experts per token, moe_num_shared_experts of
	// the experts' width, MoE from moe_layer_start_index (transformers
	// models/ernie4_5_moe/configuration_ernie4_5_moe.py).
	"ernie4_5_moe": llamaLike,
	"deepseek":     llamaLike,
	"dots1":        with(llamaLike, func(f *family) { f.qkNorm, f.scoreBias = arch.QKNormHead, true }),
	// §11 GLM-4.5.
	"glm4_moe": with(llamaLike, func(f *family) {
		f.noOutBias, f.qkNormKey, f.scoreBias, f.mtpKey, f.mtpOwnEmbeddings = true, "use_qk_norm", true, "num_nextn_predict_layers", true
	}),
	// §7 gpt-oss.
	"gpt_oss": with(llamaLike, func(f *family) {
		f.sliding, f.routerBias, f.expertBias = slideAlternate, true, true
		f.defaults = map[string]any{"head_dim": 64.0, "sliding_window": 128.0}
	}),
	// §8 Llama 4: Llama4TextConfig defaults.
	"llama4_text": with(llamaLike, func(f *family) {
		f.sliding, f.llama4Shared = slideChunked, true
		f.defaults = map[string]any{"vocab_size": 202048.0, "hidden_size": 5120.0, "intermediate_size": 8192.0, "intermediate_size_mlp": 16384.0,
			"num_hidden_layers": 48.0, "num_attention_heads": 40.0, "num_key_value_heads": 8.0, "head_dim": 128.0,
			"num_experts_per_tok": 1.0, "num_local_experts": 16.0, "interleave_moe_layer_step": 1.0, "no_rope_layer_interval": 4.0,
			"attention_chunk_size": 8192.0}
	}),
	// Xiaomi MiMo: Qwen2 layout with MTP layers that share the embedding;
	// MiMo-V2: hybrid sliding/full attention with sinks (readMiMoV2).
	"mimo": with(llamaLike, func(f *family) {
		f.qkvBias, f.noOutBias, f.sliding, f.mtpKey = true, true, slideQwen, "num_nextn_predict_layers"
	}),
	"mimo_v2_flash": llamaLike,
	// Gemma 4 (readGemma4): Gemma 3's layout with global layers of their own shape.
	"gemma4_text": with(llamaLike, func(f *family) {
		f.tied, f.mlp, f.norms, f.qkNorm, f.sliding = true, "geglu", 4, arch.QKNormHead, slideAll
	}),
	// Nemotron-H hybrids (readNemotronH).
	"nemotron_h":   {kind: kindHybrid},
	"nemotron-nas": {kind: kindNAS},
	// Older decoders (docs/memory-model.md; the catalog's shape rows).
	"gpt2":     {norm: "layernorm", mlp: "gelu", norms: 2, tied: true, linearBias: true, position: "learned"},
	"gpt_neox": {norm: "layernorm", mlp: "gelu", norms: 2, linearBias: true},
	"gptj":     {norm: "layernorm", mlp: "gelu", norms: 1, parallel: true},
	"opt":      {norm: "layernorm", mlp: "relu", norms: 2, tied: true, linearBias: true, position: "learned"},
	"phi":      {norm: "layernorm", mlp: "gelu", norms: 1, parallel: true, linearBias: true},
	"falcon":   {norm: "layernorm", mlp: "gelu", norms: 1, tied: true, parallel: true},
	"bloom":    {norm: "layernorm", mlp: "gelu", norms: 2, tied: true, linearBias: true, position: "alibi"},
	"stablelm": with(llamaLike, func(f *family) {
		f.norm = "layernorm"
	}),
	"chatglm": with(llamaLike, func(f *family) {
		f.noOutBias = true
	}),
	// Encoders and encoder-decoders (docs/memory-model.md §1; BERT, T5).
	"bert":        {kind: kindEncoder, norm: "layernorm", mlp: "gelu", linearBias: true, position: "learned"},
	"roberta":     {kind: kindEncoder, norm: "layernorm", mlp: "gelu", linearBias: true, position: "learned"},
	"xlm-roberta": {kind: kindEncoder, norm: "layernorm", mlp: "gelu", linearBias: true, position: "learned"},
	"t5":          {kind: kindEncoderDecoder, norm: "rmsnorm", mlp: "relu", tied: true, position: "relative"},
	"mt5":         {kind: kindEncoderDecoder, norm: "rmsnorm", mlp: "relu", position: "relative"},
	"umt5":        {kind: kindEncoderDecoder, norm: "rmsnorm", mlp: "relu", position: "relative"},
}
