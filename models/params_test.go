package models_test

import (
	"strings"
	"testing"

	"github.com/vrambot/vrambot/advisor/hfconfig"
	"github.com/vrambot/vrambot/hub"
	"github.com/vrambot/vrambot/hub/hubtest"
	"github.com/vrambot/vrambot/models"
)

func TestParamsFromHub(t *testing.T) {
	m, _, err := hfconfig.Read([]byte(hubtest.Qwen3Config), "acme/Open-8B")
	if err != nil {
		t.Fatal(err)
	}
	tied := m
	tied.TieWordEmbeddings = true
	tied.Params = m.Params - m.EmbeddingParams()
	type tc struct {
		name string
		st   hub.Safetensors
		tied bool
		want int64
		note string
	}
	for _, tt := range []tc{
		{"confirms", hub.Safetensors{Parameters: map[string]int64{"BF16": m.Params + 1000}, Total: m.Params + 1000}, false, m.Params, "confirmed by the Hub's safetensors total"},
		// DeepSeek-style FP8 checkpoints add F32 block scales: still the same count.
		{"fp8 with scales", hub.Safetensors{Parameters: map[string]int64{"F8_E4M3": m.Params, "F32": m.Params / 10000}, Total: m.Params + m.Params/10000}, false, m.Params, "confirmed"},
		// Qwen3-0.6B: tie_word_embeddings, yet lm_head.weight is stored.
		{"tied lm_head stored", hub.Safetensors{Parameters: map[string]int64{"BF16": tied.Params + m.EmbeddingParams()}, Total: tied.Params + m.EmbeddingParams()}, true, tied.Params, "also counts the tied lm_head"},
		// gpt-oss: MXFP4 experts stored as U8 blocks count far fewer elements.
		{"packed mxfp4", hub.Safetensors{Parameters: map[string]int64{"BF16": 1e9, "U8": 3e9}, Total: 4e9}, false, m.Params, "counts packed quantised tensors (U8)"},
		{"packed gptq", hub.Safetensors{Parameters: map[string]int64{"F16": 1e9, "I32": 1e9}, Total: 2e9}, false, m.Params, "(I32)"},
		// A checkpoint with tensors the reading missed (a vision tower, MTP layers).
		{"more stored", hub.Safetensors{Parameters: map[string]int64{"BF16": m.Params * 11 / 10}, Total: m.Params * 11 / 10}, false, m.Params * 11 / 10, "is the Hub's safetensors total"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := m
			if tt.tied {
				in = tied
			}
			got, note := models.ParamsFromHub(in, tt.st)
			if got != tt.want || !strings.Contains(note, tt.note) {
				t.Errorf("ParamsFromHub = %d, %q; want %d and a note with %q", got, note, tt.want, tt.note)
			}
		})
	}
}

func TestSizeInName(t *testing.T) {
	for name, want := range map[string]int64{
		"someorg/Foo-8B-Instruct":                  8e9,
		"Qwen/Qwen2.5-0.5B":                        5e8,
		"HuggingFaceTB/SmolLM2-135M-Instruct":      135e6,
		"mistralai/Mixtral-8x7B-Instruct-v0.1":     56e9,
		"Qwen/Qwen3-30B-A3B":                       30e9,
		"Qwen/Qwen3-235B-A22B-Instruct-2507":       235e9,
		"deepseek-ai/DeepSeek-R1-Distill-Qwen-32B": 32e9,
		"unsloth/Llama-3.2-3B-Instruct-GGUF":       3e9,
		"x/model_7b_q4_k_m":                        7e9,
		"meta-llama/Llama-4-Scout-17B-16E":         0, // 17B is active; 16E counts experts
		"deepseek-ai/DeepSeek-V3":                  0,
		"moonshotai/Kimi-K2-Instruct":              0,
		"google/gemma-3n-E4B-it":                   0,
		"microsoft/Phi-3-mini-4k-instruct":         0,
	} {
		got, ok := models.SizeInName(name)
		if got != want || ok != (want > 0) {
			t.Errorf("SizeInName(%q) = %d, %v; want %d", name, got, ok, want)
		}
	}
}

func TestFromConfigAndName(t *testing.T) {
	res, err := models.FromConfig([]byte(hubtest.Qwen3Config), "Open-8B")
	if err != nil || res.Source != models.SourceFile || res.Model.NumLayers != 36 || res.Name() != "Open-8B" {
		t.Fatalf("FromConfig = %+v, %v", res, err)
	}
	hasNote(t, res, "read from the config.json given")
	if _, err := models.FromConfig([]byte(`{"hidden_size": 1}`), "x"); err == nil || !strings.Contains(err.Error(), "num_hidden_layers") {
		t.Errorf("bad config: %v", err)
	}
	withName := []byte(`{"_name_or_path": "acme/Private-8B", "hidden_size": 8}`)
	for _, tt := range []struct {
		path string
		data []byte
		want string
	}{
		{"/models/Foo-8B/config.json", nil, "Foo-8B"},
		{"config.json", nil, "config.json"},
		{"./config.json", nil, "config.json"},
		{"llama-ish.json", nil, "llama-ish"},
		{"-", nil, "config.json"},
		{"/tmp/x/config.json", withName, "acme/Private-8B"},
		{"/tmp/x/config.json", []byte(`{"_name_or_path": "/home/me/ckpt"}`), "x"},
	} {
		if got := models.ConfigName(tt.path, tt.data); got != tt.want {
			t.Errorf("ConfigName(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}
