package hfconfig

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/internal/errs"
)

// qwen3_8b is Qwen/Qwen3-8B's config.json (shape keys), whose published
// safetensors total is 8,190,735,360 parameters.
const qwen3_8b = `{"architectures": ["Qwen3ForCausalLM"], "head_dim": 128, "hidden_size": 4096,
 "intermediate_size": 12288, "max_position_embeddings": 40960, "model_type": "qwen3",
 "num_attention_heads": 32, "num_hidden_layers": 36, "num_key_value_heads": 8,
 "tie_word_embeddings": false, "vocab_size": 151936}`

func TestReadDecoder(t *testing.T) {
	m, notes, err := Read([]byte(qwen3_8b), "Qwen/Qwen3-8B")
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "Qwen3-8B" || m.NumKVHeads != 8 || m.HeadDim != 128 || m.NumLayers != 36 || m.ModelType != "qwen3" {
		t.Errorf("got %+v", m)
	}
	if want := int64(8_190_735_360); m.Params != want {
		t.Errorf("params %d, published %d", m.Params, want)
	}
	if len(notes) == 0 || !strings.Contains(notes[0], "36 full-attention layers") {
		t.Errorf("notes %q", notes)
	}
}

func TestReadRefusesWithTheMissingKey(t *testing.T) {
	tests := map[string]string{
		`{"hidden_size": 4096}`: `"num_hidden_layers"`,
		`[1, 2]`:                "not a JSON object",
		`null`:                  "not a JSON object",
		`{"hidden_size": -1, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 8, "vocab_size": 8}`: `"hidden_size" is -1`,
		`{"hidden_size": "big"}`: `"hidden_size" is big`,
		`{"model_type": "deepseek_v3", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 8, "intermediate_size": 8, "kv_lora_rank": 8}`: `"qk_nope_head_dim"`,
		`{"model_type": "mistral3", "text_config": {"model_type": "mistral", "hidden_size": 64}}`:                                                                        `"text_config.num_hidden_layers"`,
		`{"model_type": "qwen3_next", "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 2, "vocab_size": 8, "intermediate_size": 8}`:                     `"linear_num_key_heads"`,
		`{"hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 2, "vocab_size": 8, "intermediate_size": 8, "layer_types": ["full_attention"]}`:              `lists 1 layers but num_hidden_layers is 3`,
		`{"hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 3, "vocab_size": 8, "intermediate_size": 8}`:                       "not a grouped-query layout",
		`{"model_type": "nemotron_h", "hidden_size": 64, "num_attention_heads": 2, "vocab_size": 8, "ssm_state_size": 8}`:                                                `"hybrid_override_pattern"`,
	}
	for in, want := range tests {
		_, _, err := Read([]byte(in), "x/y")
		if err == nil || !strings.Contains(errs.UserMessage(err), want) || errs.KindOf(err) != errs.Invalid {
			t.Errorf("Read(%s) = %v, want an Invalid error naming %s", in, err, want)
		}
	}
}

func TestUnknownModelTypeReadAsGenericDecoder(t *testing.T) {
	cfg := `{"model_type": "brand_new_lm", "hidden_size": 2048, "num_hidden_layers": 24, "num_attention_heads": 16,
	 "num_key_value_heads": 4, "intermediate_size": 8192, "vocab_size": 100000, "tie_word_embeddings": false}`
	m, notes, err := Read([]byte(cfg), "org/brand-new-lm")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(notes, "\n"), `model_type "brand_new_lm" is not one vrambot knows: read as a generic decoder`) {
		t.Errorf("notes %q", notes)
	}
	// Llama formula: 2·V·h + L·(2h² + 2·h·(h/4) + 3·h·I + 2h) + h.
	const h, l, v, i = 2048, 24, 100000, 8192
	if want := int64(2*v*h + l*(2*h*h+2*h*h/4+3*h*i+2*h) + h); m.Params != want {
		t.Errorf("generic decoder: %d params, want %d", m.Params, want)
	}
}

func TestNonFiniteLiteralsRead(t *testing.T) {
	in := `{"a": [0.0, Infinity, -Infinity, NaN], "s": "Infinity \"NaN\" stays", "hidden_size": 64}`
	out := string(nonFiniteToNull([]byte(in)))
	if out != `{"a": [0.0, null, null, null], "s": "Infinity \"NaN\" stays", "hidden_size": 64}` {
		t.Errorf("%s", out)
	}
	if b := []byte(qwen3_8b); &nonFiniteToNull(b)[0] != &b[0] {
		t.Error("a file without such literals is copied")
	}
}

// zeroPatchViT is a vision tower of an unknown type with no patch: it
// once divided by zero.
const zeroPatchViT = `{"model_type":"llava","text_config":{"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"vocab_size":100,"intermediate_size":128},` +
	`"vision_config":{"model_type":"weird","hidden_size":64,"num_hidden_layers":2,"patch_size":0,"image_size":224}}`

// TestVisionTowerWithoutAPatch: a patch_size of 0 (or negative) is bad
// input that names the key, never a panic (it once divided by zero).
func TestVisionTowerWithoutAPatch(t *testing.T) {
	for _, patch := range []string{`0`, `-3`} {
		data := strings.Replace(zeroPatchViT, `"patch_size":0`, `"patch_size":`+patch, 1)
		_, _, err := Read([]byte(data), "x/llava")
		if errs.KindOf(err) != errs.Invalid || !strings.Contains(fmt.Sprint(err), "vision_config.patch_size") {
			t.Errorf("patch_size %s: %v, want bad input naming vision_config.patch_size", patch, err)
		}
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte(qwen3_8b))
	f.Add([]byte(`{"hidden_size": 1e300, "num_hidden_layers": 1}`))
	f.Add([]byte(`{"model_type": "nemotron_h", "hybrid_override_pattern": "M*-E", "hidden_size": 64, "num_attention_heads": 2, "vocab_size": 8, "ssm_state_size": 8, "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 8, "intermediate_size": 8}`))
	f.Add([]byte(`{"text_config": {"model_type": "gemma3_text"}, "model_type": "gemma3", "vision_config": {}}`))
	f.Add([]byte(`{"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 8, "num_experts": 4, "moe_layer_freq": 0, "num_experts_per_tok": 9, "intermediate_size": 8}`))
	f.Add([]byte(zeroPatchViT))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, _, err := Read(data, "fuzz/model")
		if err == nil && (m.Params <= 0 || m.HiddenSize <= 0 || m.Params != m.ComputeParams()) {
			t.Fatalf("accepted a config with no shape: %+v", m)
		}
		if err == nil && (m.KVCacheBytes(1<<20, 1<<10, 2) < 0 || m.ActiveParams() > m.Params) {
			t.Fatalf("inconsistent model: %+v", m)
		}
	})
}

// TestMiniMaxRemoteCodeTypesReadAsLightning: MiniMax-Text-01 and MiniMax-M1
// ship their remote code's model_type (minimax_text_01, minimax_m1); both
// are read as transformers' "minimax" stack, attn_type_list marking the
// softmax layers among lightning ones, not as a generic all-softmax decoder.
func TestMiniMaxRemoteCodeTypesReadAsLightning(t *testing.T) {
	const cfg = `{"model_type": %q, "hidden_size": 64, "num_hidden_layers": 8, "num_attention_heads": 4,
	 "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 32, "vocab_size": 100,
	 "num_local_experts": 4, "num_experts_per_tok": 2, "attn_type_list": [0, 0, 0, 1, 0, 0, 0, 1]}`
	var want int64
	for _, mt := range []string{"minimax", "minimax_text_01", "minimax_m1"} {
		m, notes, err := Read([]byte(strings.Replace(cfg, "%q", `"`+mt+`"`, 1)), "x/"+mt)
		if err != nil {
			t.Fatal(err)
		}
		linear := 0
		for _, g := range m.Layers() {
			if g.Attention.LinearType == "lightning" {
				linear += g.Layers
			}
		}
		if linear != 6 {
			t.Errorf("%s: %d lightning layers, want 6 (notes %q)", mt, linear, notes)
		}
		for _, n := range notes {
			if strings.Contains(n, "not one vrambot knows") {
				t.Errorf("%s read as a generic decoder: %q", mt, n)
			}
		}
		if want == 0 {
			want = m.Params
		} else if m.Params != want {
			t.Errorf("%s: %d parameters, minimax %d", mt, m.Params, want)
		}
	}
}
