package hfconfig_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/advisor/arch"
	"github.com/vrambot/vrambot/advisor/hfconfig"
	"github.com/vrambot/vrambot/advisor/memory"
)

// realConfig is one real config.json: the catalog's (../catalog/models,
// SOURCES.md there) and this package's testdata/configs (SOURCES.md).
type realConfig struct {
	id   string
	data []byte
	raw  map[string]any
}

func realConfigs(t testing.TB) []realConfig {
	t.Helper()
	var files []string
	for _, pattern := range []string{"../catalog/models/*.json", "testdata/configs/*.json"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	var out []realConfig
	for _, f := range files {
		if filepath.Base(f) == "index.json" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// The reference formula below reads the file with Python's
		// literals made strict, as the reader does.
		clean := strings.NewReplacer("-Infinity", "null", "Infinity", "null", "NaN", "null").Replace(string(data))
		var raw map[string]any
		if err := json.Unmarshal([]byte(clean), &raw); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, realConfig{id: strings.Replace(strings.TrimSuffix(filepath.Base(f), ".json"), "__", "/", 1), data: data, raw: raw})
	}
	if len(out) < 70 {
		t.Fatalf("only %d real configs", len(out))
	}
	return out
}

// num reads a number from a decoded config (-1 when absent or null).
func num(c map[string]any, key string) float64 {
	if v, ok := c[key].(float64); ok {
		return v
	}
	return -1
}

func numOr(c map[string]any, key string, def float64) float64 {
	if v := num(c, key); v >= 0 {
		return v
	}
	return def
}

// refKVBytes is the KV cache (and linear-attention state) of batch
// sequences of seq tokens at 2 bytes per element, by each family's
// per-token formula (docs/architectures.md §1–§13), written independently
// of the reader: full layers 2·kv·head_dim per token, sliding and chunked
// layers capped at their window, MLA kv_lora_rank + qk_rope_head_dim,
// linear layers a fixed state per sequence, shared-KV layers nothing.
func refKVBytes(t *testing.T, raw map[string]any, seq, batch float64) float64 {
	c := raw
	for _, k := range []string{"text_config", "llm_config", "language_config"} {
		if tc, ok := raw[k].(map[string]any); ok && num(tc, "hidden_size") > 0 {
			c = tc
		}
	}
	mt, _ := c["model_type"].(string)
	if mt == "" {
		mt, _ = raw["model_type"].(string)
	}
	h := num(c, "hidden_size")
	heads := num(c, "num_attention_heads")
	if mt == "gemma3_text" && heads < 0 {
		heads = 8 // Gemma3TextConfig defaults (docs/architectures.md §0 rule 4)
	}
	kv := numOr(c, "num_key_value_heads", heads)
	if mt == "gemma3_text" && num(c, "num_key_value_heads") < 0 {
		kv = 4
	}
	hd := numOr(c, "head_dim", h/heads)
	if mt == "gemma3_text" && num(c, "head_dim") < 0 {
		hd = 256
	}
	layers := num(c, "num_hidden_layers")
	perToken := func(kvh, k, v float64) float64 { return kvh * (k + v) * 2 }
	gqa := perToken(kv, hd, hd)
	window := num(c, "sliding_window")
	capped := func(w float64) float64 { return math.Min(seq, w) }

	switch {
	case num(c, "kv_lora_rank") > 0:
		// A DSA indexer's FP8 key and its float32 scale per 128 values
		// (SGLang NSATokenToKVPool, vLLM DeepseekV32IndexerCache).
		index := 0.0
		if d := num(c, "index_head_dim"); d > 0 && (num(c, "index_topk") > 0 || num(c, "index_n_heads") > 0) {
			index = d + math.Floor(d/128)*4
		}
		return layers * ((num(c, "kv_lora_rank")+num(c, "qk_rope_head_dim"))*2 + index) * seq * batch
	case mt == "nemotron_h":
		pattern, _ := c["hybrid_override_pattern"].(string)
		if pattern == "" {
			types, _ := c["layers_block_type"].([]any)
			for _, ty := range types {
				pattern += map[string]string{"mamba": "M", "attention": "*", "mlp": "-", "moe": "E"}[ty.(string)]
			}
		}
		nh, mhd, ng, ds, k := num(c, "mamba_num_heads"), num(c, "mamba_head_dim"), num(c, "n_groups"), num(c, "ssm_state_size"), num(c, "conv_kernel")
		ssm := 2.0
		if c["mamba_ssm_cache_dtype"] == "float32" {
			ssm = 4
		}
		state := (nh*mhd+2*ng*ds)*(k-1)*2 + nh*mhd*ds*ssm
		return float64(strings.Count(pattern, "*"))*gqa*seq*batch + float64(strings.Count(pattern, "M"))*state*batch
	case mt == "nemotron-nas":
		var n float64
		for _, b := range c["block_configs"].([]any) {
			a := b.(map[string]any)["attention"].(map[string]any)
			if a["no_op"] == true || a["replace_with_linear"] == true {
				continue
			}
			n += perToken(heads/num(a, "n_heads_in_group"), hd, hd) * seq * batch
		}
		return n
	}

	// Layer types.
	types := make([]string, int(layers))
	if list, ok := c["layer_types"].([]any); ok {
		for i, v := range list {
			types[i] = v.(string)
		}
	} else {
		for i := range types {
			types[i] = "full_attention"
			switch mt {
			case "gemma2", "gpt_oss":
				if i%2 == 0 {
					types[i] = "sliding_attention"
				}
			case "gemma3_text", "cohere2":
				if int(i+1)%int(numOr(c, "sliding_window_pattern", 6)) != 0 {
					types[i] = "sliding_attention"
				}
			case "llama4_text":
				if (i+1)%4 != 0 {
					types[i] = "chunked_attention"
				}
			case "qwen3_next", "qwen3_5_text", "qwen3_5_moe_text":
				if (i+1)%int(numOr(c, "full_attention_interval", 4)) != 0 {
					types[i] = "linear_attention"
				}
			case "mistral", "mixtral", "phi3", "phimoe", "ministral", "ministral3", "starcoder2":
				if window > 0 {
					types[i] = "sliding_attention"
				}
			case "qwen2", "qwen3", "qwen2_moe", "qwen3_moe", "qwen2_5_vl", "mimo":
				if c["use_sliding_window"] == true && float64(i) >= num(c, "max_window_layers") {
					types[i] = "sliding_attention"
				}
			case "mimo_v2_flash":
				if c["hybrid_layer_pattern"].([]any)[i].(float64) == 1 {
					types[i] = "sliding_attention"
				}
			case "minimax", "minimax_m1", "minimax_text_01":
				// attn_type_list: 0 = lightning (linear), 1 = softmax.
				if c["attn_type_list"].([]any)[i].(float64) == 0 {
					types[i] = "lightning_attention"
				}
			}
		}
	}
	var n float64
	shared := numOr(c, "num_kv_shared_layers", 0)
	for i, ty := range types {
		if mt == "gemma4_text" && float64(i) >= layers-shared {
			continue // reuses an earlier layer's cache
		}
		switch ty {
		case "linear_attention":
			nk, nv, dk, dv, k := num(c, "linear_num_key_heads"), num(c, "linear_num_value_heads"), num(c, "linear_key_head_dim"), num(c, "linear_value_head_dim"), num(c, "linear_conv_kernel_dim")
			ssm := 2.0
			if c["mamba_ssm_dtype"] == "float32" {
				ssm = 4
			}
			n += ((2*nk*dk+nv*dv)*(k-1)*2 + nv*dk*dv*ssm) * batch
		case "lightning_attention":
			// A float32 key-value state of head_dim × head_dim per head.
			n += heads * hd * hd * 4 * batch
		case "sliding_attention":
			per := gqa
			if mt == "mimo_v2_flash" {
				per = perToken(num(c, "swa_num_key_value_heads"), num(c, "swa_head_dim"), num(c, "swa_v_head_dim"))
			}
			n += per * capped(window) * batch
		case "chunked_attention":
			n += gqa * capped(num(c, "attention_chunk_size")) * batch
		default:
			per := gqa
			switch mt {
			case "gemma4_text":
				g := numOr(c, "global_head_dim", 512)
				k := kv
				if c["attention_k_eq_v"] == true && num(c, "num_global_key_value_heads") > 0 {
					k = num(c, "num_global_key_value_heads")
				}
				per = perToken(k, g, g)
			case "mimo_v2_flash":
				per = perToken(kv, hd, num(c, "v_head_dim"))
			}
			n += per * seq * batch
		}
	}
	return n
}

// TestEveryRealConfigKVMatchesFamilyFormula: hfconfig.Read then
// memory.Estimate (what vram --json --config FILE inference runs) gives
// kv_cache_bytes equal to the family formula, below and above the
// sliding windows, for every real config gathered.
func TestEveryRealConfigKVMatchesFamilyFormula(t *testing.T) {
	skip := map[string]string{
		"deepseek-ai/DeepSeek-V4-Flash": "compressed sparse attention (compress_ratios): read approximately",
		"stepfun-ai/Step-3.7-Flash":     "no reference formula for step3p7",
		"moonshotai/Kimi-K3":            "KDA linear attention: read approximately",
		"MiniMaxAI/MiniMax-M3":          "block-sparse attention: read as full attention",
	}
	checked := 0
	for _, rc := range realConfigs(t) {
		if why, ok := skip[rc.id]; ok {
			t.Logf("%s: skipped (%s)", rc.id, why)
			continue
		}
		m, _, err := hfconfig.Read(rc.data, rc.id)
		if err != nil {
			t.Errorf("%s: %v", rc.id, err)
			continue
		}
		if m.Family != arch.FamilyDecoderOnly {
			continue
		}
		for _, seq := range []int{100, 32775} {
			const batch = 3
			w := memory.Workload{Model: m, Method: memory.MethodInference, Precision: memory.PrecisionBF16, Batch: batch,
				SeqLen: seq, KVCacheDtype: "fp16", Engine: "hf", TP: 1, PP: 1, GPUs: 1}
			got := memory.Estimate(w).KVCacheBytes
			want := int64(math.Ceil(refKVBytes(t, rc.raw, float64(seq), batch)))
			if got != want {
				t.Errorf("%s at seq %d × %d: kv_cache_bytes %d, family formula %d", rc.id, seq, batch, got, want)
			}
		}
		checked++
	}
	if checked < 65 {
		t.Errorf("only %d configs checked", checked)
	}
}

// TestQuantisedCheckpointsKeepTheirBaseCount: a pre-quantised checkpoint
// has its base model's logical parameters, and its quantization_config is
// read into bytes per tensor group.
func TestQuantisedCheckpointsKeepTheirBaseCount(t *testing.T) {
	byID := map[string]realConfig{}
	for _, rc := range realConfigs(t) {
		byID[rc.id] = rc
	}
	read := func(id string) arch.Model {
		rc, ok := byID[id]
		if !ok {
			t.Fatalf("no config %s", id)
		}
		m, _, err := hfconfig.Read(rc.data, id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		return m
	}
	tests := []struct {
		quantised, base, method string
		bytes                   float64 // per parameter of the attention group (0: not quantised)
		expertBytes             float64 // of the experts group (which a dense model has none of)
	}{
		{"Qwen/Qwen3-30B-A3B-FP8", "Qwen/Qwen3-30B-A3B", "fp8", arch.FP8BlockBytes, arch.FP8BlockBytes},
		{"Qwen/Qwen3-32B-FP8", "Qwen/Qwen3-32B", "fp8", arch.FP8BlockBytes, arch.FP8BlockBytes},
		{"Qwen/Qwen3-32B-FP8-Static-PerTensor", "Qwen/Qwen3-32B", "fp8", arch.FP8Bytes, arch.FP8Bytes},
		// NVIDIA's NVFP4 Qwen3.5 keeps its (mostly linear) attention in 16-bit.
		{"nvidia/Qwen3.5-397B-A17B-NVFP4", "Qwen/Qwen3.5-397B-A17B", "nvfp4", 0, arch.NVFP4Bytes},
		// ModelOpt keeps every self_attn in 16-bit, listing it layer by layer.
		{"nvidia/Kimi-K2.5-NVFP4", "moonshotai/Kimi-K2.5", "nvfp4", 0, arch.NVFP4Bytes},
		{"nvidia/GLM-5.1-NVFP4", "zai-org/GLM-5", "nvfp4", 0, arch.NVFP4Bytes},
		// Kimi-K2.5 ships INT4 (g32, symmetric) experts, attention in 16-bit.
		{"moonshotai/Kimi-K2.5", "moonshotai/Kimi-K2.5", "int4", 0, arch.GroupwiseIntBytes(4, 32, false)},
		{"openai/gpt-oss-20b", "openai/gpt-oss-20b", "mxfp4", 0, arch.MXFP4Bytes},
		{"deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-R1", "fp8", arch.FP8BlockBytes, arch.FP8BlockBytes},
		// ModelOpt MIXED_PRECISION: every module with its own algorithm
		// (quantized_layers): FP8 attention and NVFP4 MLPs, or MXFP8
		// attention and NVFP4 experts.
		{"nvidia/Qwen3.6-27B-NVFP4", "nvidia/Qwen3.6-27B-NVFP4", "mixed", arch.FP8Bytes, 0},
		{"nvidia/Qwen3.6-35B-A3B-NVFP4", "nvidia/Qwen3.6-35B-A3B-NVFP4", "mixed", arch.FP8Bytes, arch.NVFP4Bytes},
		{"nvidia/MiniMax-M3-NVFP4", "nvidia/MiniMax-M3-NVFP4", "mixed", 1 + 1.0/32, arch.NVFP4Bytes},
		// DeepSeek-V4's FP8 blocks with FP4 experts (expert_dtype fp4).
		{"deepseek-ai/DeepSeek-V4-Flash", "deepseek-ai/DeepSeek-V4-Flash", "mixed", arch.FP8BlockBytes, arch.MXFP4Bytes},
	}
	for _, tt := range tests {
		q, b := read(tt.quantised), read(tt.base)
		if q.Params != b.Params {
			t.Errorf("%s: %d parameters, its base %s %d", tt.quantised, q.Params, tt.base, b.Params)
		}
		if q.Quant == nil || q.Quant.Method != tt.method {
			t.Errorf("%s: quantisation %+v, want %s", tt.quantised, q.Quant, tt.method)
			continue
		}
		if got := q.Quant.BytesPerParam[arch.TensorAttention]; math.Abs(got-tt.bytes) > 1e-9 {
			t.Errorf("%s: attention at %g B/param, want %g", tt.quantised, got, tt.bytes)
		}
		if got := q.Quant.BytesPerParam[arch.TensorExperts]; math.Abs(got-tt.expertBytes) > 1e-9 {
			t.Errorf("%s: experts at %g B/param, want %g", tt.quantised, got, tt.expertBytes)
		}
		if q.Quant.BytesPerParam[arch.TensorEmbedding] != 0 {
			t.Errorf("%s: embeddings quantised", tt.quantised)
		}
	}
	// docs/architectures.md §7: gpt-oss-20b loads ~13.76 GB of weights.
	w := memory.Estimate(memory.Workload{Model: read("openai/gpt-oss-20b"), Method: memory.MethodInference, Batch: 1, SeqLen: 1})
	if got := float64(w.WeightsBytes); math.Abs(got-13.76e9)/13.76e9 > 0.01 {
		t.Errorf("gpt-oss-20b weights %.4g bytes, want ~13.76e9", got)
	}
}

// gemma3_4b is google/gemma-3-4b-it's config.json as transcribed in a
// public test file (search index id 70892509106): the text_config leaves out
// heads, KV heads, head_dim and vocab_size, which Gemma3TextConfig's
// defaults supply (docs/architectures.md §0 rule 4). Hub total
// 4,300,079,472 (docs/architectures.md §5).
const gemma3_4b = `{"architectures": ["Gemma3ForConditionalGeneration"], "boi_token_index": 255999, "eoi_token_index": 256000, "image_token_index": 262144,
 "mm_tokens_per_image": 256, "model_type": "gemma3", "torch_dtype": "bfloat16",
 "text_config": {"hidden_size": 2560, "intermediate_size": 10240, "model_type": "gemma3_text", "num_hidden_layers": 34,
                 "rope_scaling": {"factor": 8.0, "rope_type": "linear"}, "sliding_window": 1024, "final_logit_softcapping": 30.0},
 "vision_config": {"hidden_size": 1152, "image_size": 896, "intermediate_size": 4304, "model_type": "siglip_vision_model",
                   "num_attention_heads": 16, "num_hidden_layers": 27, "patch_size": 14, "vision_use_head": false}}`

func TestGemma3DefaultsAndVisionTower(t *testing.T) {
	m, notes, err := hfconfig.Read([]byte(gemma3_4b), "google/gemma-3-4b-it")
	if err != nil {
		t.Fatal(err)
	}
	if m.Params != 4_300_079_472 || m.VisionParams != 416_866_032+2_950_272 {
		t.Errorf("gemma-3-4b-it: %d parameters (vision %d), Hub 4,300,079,472", m.Params, m.VisionParams)
	}
	if m.ActiveParams() != m.Params {
		t.Errorf("dense model: active %d", m.ActiveParams())
	}
	g := m.AttentionGroups()
	if len(g) != 2 || g[0].Kind != arch.KindSliding || g[0].Layers != 29 || g[0].Window != 1024 || g[1].Layers != 5 {
		t.Errorf("layer groups %+v", g)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "transformers default") {
		t.Errorf("the defaults taken are not noted: %q", notes)
	}
}

func BenchmarkRead(b *testing.B) {
	var cfgs []realConfig
	for _, rc := range realConfigs(b) {
		switch rc.id {
		case "Qwen/Qwen3-8B", "deepseek-ai/DeepSeek-V3", "Qwen/Qwen3.5-397B-A17B", "google/gemma-4-26B-A4B", "nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8":
			cfgs = append(cfgs, rc)
		}
	}
	for _, rc := range cfgs {
		b.Run(rc.id, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := hfconfig.Read(rc.data, rc.id); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestOlderFamiliesReproduceTheCatalogRows: the catalog rows written as
// shapes (../catalog/models.json, each with its published count and
// source) are read back from config.json text in their family's own keys
// (GPT-2's n_embd, OPT's ffn_dim, T5's d_kv, Falcon's multi_query, ...)
// and give the same count.
func TestOlderFamiliesReproduceTheCatalogRows(t *testing.T) {
	data, err := os.ReadFile("../catalog/models.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Models []arch.Model `json:"models"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	families := map[string]int{}
	for _, r := range doc.Models {
		var cfg map[string]any
		base := map[string]any{"hidden_size": r.HiddenSize, "num_hidden_layers": r.NumLayers, "num_attention_heads": r.NumAttentionHeads,
			"intermediate_size": r.IntermediateSize, "vocab_size": r.VocabSize, "max_position_embeddings": r.MaxPositionEmbeddings,
			"tie_word_embeddings": r.TieWordEmbeddings}
		switch {
		case r.Family == arch.FamilyEncoderDecoder:
			cfg = map[string]any{"model_type": "t5", "d_model": r.HiddenSize, "d_ff": r.IntermediateSize, "d_kv": r.HeadDim,
				"num_layers": r.NumLayers, "num_decoder_layers": r.NumDecoderLayers, "num_heads": r.NumAttentionHeads,
				"vocab_size": r.VocabSize, "feed_forward_proj": "relu", "tie_word_embeddings": r.TieWordEmbeddings}
		case r.Family == arch.FamilyEncoderOnly:
			cfg = base
			cfg["model_type"], cfg["type_vocab_size"] = "bert", r.TypeVocabSize
		case strings.HasPrefix(r.Name, "GPT-2"):
			cfg = map[string]any{"model_type": "gpt2", "n_embd": r.HiddenSize, "n_layer": r.NumLayers, "n_head": r.NumAttentionHeads,
				"n_positions": r.MaxPositionEmbeddings, "vocab_size": r.VocabSize, "n_inner": nil}
		case strings.HasPrefix(r.Name, "OPT"):
			cfg = map[string]any{"model_type": "opt", "hidden_size": r.HiddenSize, "num_hidden_layers": r.NumLayers, "num_attention_heads": r.NumAttentionHeads,
				"ffn_dim": r.IntermediateSize, "max_position_embeddings": r.MaxPositionEmbeddings, "vocab_size": r.VocabSize,
				"word_embed_proj_dim": r.HiddenSize, "do_layer_norm_before": true}
		case strings.HasPrefix(r.Name, "Falcon"):
			cfg = map[string]any{"model_type": "falcon", "hidden_size": r.HiddenSize, "num_hidden_layers": r.NumLayers, "num_attention_heads": r.NumAttentionHeads,
				"vocab_size": r.VocabSize, "multi_query": r.NumKVHeads == 1, "parallel_attn": true, "bias": false, "new_decoder_architecture": false}
		case r.Name == "GPT-NeoX-20B" || strings.HasPrefix(r.Name, "StableLM"):
			cfg = base
			cfg["model_type"] = "gpt_neox"
		case strings.HasPrefix(r.Name, "Phi-1") || r.Name == "Phi-2":
			cfg = base
			cfg["model_type"] = "phi"
		case r.MLP == "geglu":
			cfg = base
			cfg["model_type"], cfg["head_dim"], cfg["num_key_value_heads"] = "gemma", r.HeadDim, r.NumKVHeads
		case r.QKVBias:
			cfg = base
			cfg["model_type"], cfg["num_key_value_heads"] = "qwen2", r.NumKVHeads
		case r.NumExperts > 1:
			cfg = base
			cfg["model_type"], cfg["num_key_value_heads"], cfg["num_local_experts"], cfg["num_experts_per_tok"] = "mixtral", r.NumKVHeads, r.NumExperts, r.ExpertsPerToken
		default:
			cfg = base
			cfg["model_type"], cfg["num_key_value_heads"], cfg["head_dim"] = "llama", r.NumKVHeads, r.HeadDim
			if r.SlidingWindow > 0 {
				cfg["model_type"], cfg["sliding_window"] = "mistral", r.SlidingWindow
			}
		}
		text, _ := json.Marshal(cfg)
		m, _, err := hfconfig.Read(text, r.HFID)
		if err != nil {
			t.Errorf("%s: %v", r.Name, err)
			continue
		}
		families[m.ModelType]++
		if m.Params != r.Params {
			t.Errorf("%s (%s): %d parameters from config.json, the row's published %d", r.Name, m.ModelType, m.Params, r.Params)
		}
		if m.KVCacheBytesPerToken() != r.KVCacheBytesPerToken() && m.Family != arch.FamilyEncoderOnly {
			t.Errorf("%s: KV/token %d, row %d", r.Name, m.KVCacheBytesPerToken(), r.KVCacheBytesPerToken())
		}
	}
	for _, f := range []string{"gpt2", "opt", "bert", "t5", "falcon", "gpt_neox", "phi", "gemma", "qwen2", "llama", "mistral"} {
		if families[f] == 0 {
			t.Errorf("no catalog row read as %s", f)
		}
	}
}

// gpt2Config is openai-community/gpt2's config.json as a public script
// pastes it (search index id 22143934244); 124,439,808 parameters (the
// catalog's GPT-2 row).
const gpt2Config = `{"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1, "bos_token_id": 50256,
 "embd_pdrop": 0.1, "eos_token_id": 50256, "initializer_range": 0.02, "layer_norm_epsilon": 1e-05, "model_type": "gpt2",
 "n_ctx": 1024, "n_embd": 768, "n_head": 12, "n_layer": 12, "n_positions": 1024, "resid_pdrop": 0.1, "summary_activation": null,
 "summary_first_dropout": 0.1, "summary_proj_to_labels": true, "summary_type": "cls_index", "summary_use_proj": true,
 "task_specific_params": {"text-generation": {"do_sample": true, "max_length": 50}}, "vocab_size": 50257}`

// glm45Air is zai-org/GLM-4.5-Air's shape as a public conversion script
// writes its config.json (search index id 54377337437), without the
// num_nextn_predict_layers key of the Hub file: docs/architectures.md §11
// gives 106,852,251,264 runtime parameters and 13,424,129,664 active.
const glm45Air = `{"architectures": ["Glm4MoeForCausalLM"], "attention_bias": true, "attention_dropout": 0.0, "pad_token_id": 151329,
 "eos_token_id": [151329, 151336, 151338], "head_dim": 128, "hidden_act": "silu", "hidden_size": 4096, "decoder_sparse_step": 1,
 "initializer_range": 0.02, "intermediate_size": 10944, "max_position_embeddings": 131072, "model_type": "glm4_moe",
 "moe_intermediate_size": 1408, "norm_topk_prob": true, "num_attention_heads": 96, "n_group": 1, "topk_group": 1,
 "n_routed_experts": 128, "n_shared_experts": 1, "routed_scaling_factor": 1.0, "topk_method": "noaux_tc", "moe_router_dtype": "float32",
 "num_experts_per_tok": 8, "first_k_dense_replace": 1, "num_hidden_layers": 46, "num_key_value_heads": 8, "partial_rotary_factor": 0.5,
 "output_router_logits": false, "rms_norm_eps": 1e-5, "rope_scaling": null, "rope_theta": 10000, "router_aux_loss_coef": 0.001,
 "tie_word_embeddings": false, "torch_dtype": "bfloat16", "transformers_version": "4.54.0dev", "use_cache": true, "vocab_size": 151552}`

func TestTranscribedConfigs(t *testing.T) {
	tests := []struct {
		name, id, cfg  string
		params, active int64
	}{
		{"gpt2", "openai-community/gpt2", gpt2Config, 124_439_808, 124_439_808},
		{"GLM-4.5-Air", "zai-org/GLM-4.5-Air", glm45Air, 106_852_251_264, 13_424_129_664},
		// With its Hub file's one MTP layer (own embedding and head copies): the Hub total.
		{"GLM-4.5-Air + MTP", "zai-org/GLM-4.5-Air", strings.TrimSuffix(glm45Air, "}") + `, "num_nextn_predict_layers": 1}`, 110_468_824_832, 13_424_129_664},
		// PhiMoEConfig's defaults are microsoft/Phi-3.5-MoE-instruct (docs/architectures.md §9).
		{"Phi-3.5-MoE (class defaults)", "microsoft/Phi-3.5-MoE-instruct", `{"model_type": "phimoe"}`, 41_873_153_344, 6_640_999_744},
	}
	for _, tt := range tests {
		m, _, err := hfconfig.Read([]byte(tt.cfg), tt.id)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if m.Params != tt.params || m.ActiveParams() != tt.active {
			t.Errorf("%s: %d parameters, %d active; want %d, %d", tt.name, m.Params, m.ActiveParams(), tt.params, tt.active)
		}
	}
}

// TestMixedPrecisionCheckpoints: NVIDIA's Qwen3.6-27B NVFP4 release
// (ModelOpt MIXED_PRECISION, FP8 attention and NVFP4 MLPs and head) is
// sized at its stored bytes, not at 16-bit (issue 25: 1.97 B/param); its
// hf_quant_config.json reads the same, and so do the config_groups alone
// (compressed-tensors with one scheme per group of named modules).
func TestMixedPrecisionCheckpoints(t *testing.T) {
	data, err := os.ReadFile("testdata/configs/nvidia__Qwen3.6-27B-NVFP4.json")
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := hfconfig.Read(data, "nvidia/Qwen3.6-27B-NVFP4")
	if err != nil {
		t.Fatal(err)
	}
	w := memory.Estimate(memory.Workload{Model: m, Method: memory.MethodInference, Batch: 1, SeqLen: 1})
	perParam := float64(w.WeightsBytes) / float64(m.ResidentParams())
	if perParam < 0.7 || perParam > 0.85 {
		t.Errorf("Qwen3.6-27B-NVFP4 at %.2f B/param, want NVFP4 MLPs and FP8 attention (0.7-0.85)", perParam)
	}
	want := m.Quant.BytesPerParam

	// The same checkpoint's hf_quant_config.json.
	hfq, err := os.ReadFile("testdata/hf_quant/nvidia__Qwen3.6-27B-NVFP4.json")
	if err != nil {
		t.Fatal(err)
	}
	q, _, err := hfconfig.ReadQuantConfig(hfq, m)
	if err != nil {
		t.Fatal(err)
	}
	for g := range arch.NumTensorGroups {
		if g == arch.TensorMTP {
			continue // excluded by the hf_quant_config's exclude_modules, by name
		}
		if math.Abs(q.BytesPerParam[g]-want[g]) > 1e-9 {
			t.Errorf("hf_quant_config.json: %s at %g B/param, config.json %g", arch.TensorGroup(g), q.BytesPerParam[g], want[g])
		}
	}

	// Only its config_groups (a compressed-tensors style file).
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	qc := raw["quantization_config"].(map[string]any)
	delete(qc, "quantized_layers")
	delete(qc, "quant_algo")
	qc["quant_method"] = "compressed-tensors"
	groups, _ := json.Marshal(raw)
	g, _, err := hfconfig.Read(groups, "config_groups")
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range []arch.TensorGroup{arch.TensorAttention, arch.TensorMLP, arch.TensorLMHead} {
		if got := g.Quant.BytesPerParam[tg]; math.Abs(got-want[tg]) > 1e-9 {
			t.Errorf("config_groups: %s at %g B/param, quantized_layers %g", tg, got, want[tg])
		}
	}

	for name, in := range map[string]string{"not json": "{", "no quantization": `{"producer": {}}`} {
		if _, _, err := hfconfig.ReadQuantConfig([]byte(in), m); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestSparseAttentionIndexerCache: GLM-5's DSA indexer keeps an FP8 key
// of index_head_dim and a float32 scale per 128 for every token and layer
// beside the MLA latent, as SGLang's NSATokenToKVPool and vLLM's
// DeepseekV32IndexerCache allocate it.
func TestSparseAttentionIndexerCache(t *testing.T) {
	data, err := os.ReadFile("../catalog/models/zai-org__GLM-5.json")
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := hfconfig.Read(data, "zai-org/GLM-5")
	if err != nil {
		t.Fatal(err)
	}
	groups := m.AttentionGroups()
	if len(groups) != 1 || groups[0].Kind != arch.KindMLA || groups[0].IndexBytes != 128+4 {
		t.Fatalf("attention groups %+v, want one MLA group with a 132 B indexer", groups)
	}
	if got := groups[0].BytesPerToken(1); got != 576+132 {
		t.Errorf("fp8 cache %g B per token and layer, want 708", got)
	}
}
