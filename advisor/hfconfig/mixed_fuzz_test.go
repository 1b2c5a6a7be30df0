package hfconfig_test

import (
	"math"
	"testing"

	"github.com/vrambot/vrambot/advisor/arch"
	"github.com/vrambot/vrambot/advisor/hfconfig"
)

// checkBytes: every group's bytes per parameter is 0 (not quantised) or a
// finite width: even a 16-bit weight with a scale and a zero point of its
// own, the most a malformed group or block size can make of it, is 6 bytes.
func checkBytes(t *testing.T, b arch.ByGroup[float64]) {
	t.Helper()
	for g, v := range b {
		if math.IsNaN(v) || v < 0 || v > 8 {
			t.Fatalf("group %d: %v bytes per parameter", g, v)
		}
	}
}

// fuzzShape is a small decoder with a mixture of experts whose checkpoint
// the mixed-precision readers (mixed.go) describe.
const fuzzShape = `{"model_type": "qwen3_moe", "hidden_size": 64, "num_hidden_layers": 2,
 "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 32,
 "moe_intermediate_size": 16, "num_experts": 4, "num_experts_per_tok": 2, "vocab_size": 128`

// FuzzReadQuantConfig: hf_quant_config.json is untrusted text; whatever it
// says, the reader answers an error or a quantization whose bytes per
// parameter are finite and in range, and never panics.
func FuzzReadQuantConfig(f *testing.F) {
	f.Add([]byte(`{"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "MIXED_PRECISION", "kv_cache_quant_algo": "FP8",
	 "quantized_layers": {"model.layers.0.self_attn.q_proj": {"quant_algo": "FP8"}, "model.layers.0.mlp.experts.0.up_proj": {"quant_algo": "NVFP4", "group_size": 16}},
	 "exclude_modules": ["lm_head", "model.layers.*.mlp.gate"]}}`))
	f.Add([]byte(`{"quantization": {"quant_algo": "NVFP4", "group_size": 16, "exclude_modules": ["lm_head"]}}`))
	f.Add([]byte(`{"quantization": {"quant_algo": "FP8"}}`))
	f.Add([]byte(`{"quantization": {"quant_algo": "MIXED_PRECISION", "quantized_layers": {"x": {"quant_algo": "W4A8_AWQ", "group_size": -1}}}}`))
	f.Add([]byte(`{"quantization": []}`))
	f.Add([]byte(`null`))
	m, _, err := hfconfig.Read([]byte(fuzzShape+`}`), "fuzz/moe")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		q, _, err := hfconfig.ReadQuantConfig(data, m)
		if err != nil || q == nil {
			return
		}
		checkBytes(t, q.BytesPerParam)
	})
}

// FuzzReadQuantizationConfig: a config.json's quantization_config in the
// 2026 formats (ModelOpt MIXED_PRECISION, compressed-tensors with several
// config_groups, DeepSeek-V4's expert_dtype) read through Read.
func FuzzReadQuantizationConfig(f *testing.F) {
	for _, q := range []string{
		`{"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION", "quantized_layers": {"model.layers.0.mlp.experts.0.down_proj": {"quant_algo": "NVFP4", "group_size": 16}}}`,
		`{"quant_method": "compressed-tensors", "format": "mixed-precision", "config_groups": {"group_0": {"targets": ["re:.*experts.*"], "weights": {"num_bits": 4, "type": "float", "group_size": 16}, "format": "nvfp4-pack-quantized"}, "group_1": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}}, "ignore": ["lm_head"]}`,
		`{"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128], "expert_dtype": "fp4"}`,
		`{"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 0}}}}`,
	} {
		f.Add([]byte(fuzzShape + `, "quantization_config": ` + q + `}`))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, _, err := hfconfig.Read(data, "fuzz/moe")
		if err != nil {
			return
		}
		if m.Params <= 0 || m.ActiveParams() > m.Params {
			t.Fatalf("inconsistent model: %+v", m)
		}
		if m.Quant != nil {
			checkBytes(t, m.Quant.BytesPerParam)
		}
	})
}
