package catalog

import (
	"encoding/json"
	"os"
	"testing"
)

func TestComputeParamsReproducesPublishedTotals(t *testing.T) {
	for _, m := range Models() {
		if got := m.ComputeParams(); got != m.Params {
			t.Errorf("%s: ComputeParams = %d, published %d (diff %d)", m.Name, got, m.Params, got-m.Params)
		}
	}
}

// TestKVBytesPerTokenMatchesReference checks the KV cache per token against
// testdata/model-archs.json (testdata/SOURCES.md) where it is present.
func TestKVBytesPerTokenMatchesReference(t *testing.T) {
	data, err := os.ReadFile("testdata/model-archs.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Models []struct {
			HFID string `json:"hf_id"`
			KV   int64  `json:"kv_cache_bytes_per_token_fp16"`
		} `json:"models"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, r := range doc.Models {
		m, ok := LookupModel(r.HFID)
		if !ok {
			t.Errorf("%s: not in catalog", r.HFID)
			continue
		}
		if r.KV == 0 {
			continue
		}
		checked++
		if got := m.KVCacheBytesPerToken(); got != r.KV {
			t.Errorf("%s: KV/token = %d, reference %d", r.HFID, got, r.KV)
		}
	}
	if checked < 15 {
		t.Errorf("only %d models checked", checked)
	}
}

func TestKVBytesPerTokenAnchors(t *testing.T) {
	const kib = 1024
	tests := []struct {
		model string
		want  int64
	}{
		{"llama-2-7b", 512 * kib},
		{"llama-3-8b", 128 * kib},
		{"llama-2-70b", 320 * kib},
		{"qwen2.5-7b", 56 * kib},
		{"gemma-2b", 18 * kib},
	}
	for _, tt := range tests {
		m, ok := LookupModel(tt.model)
		if !ok {
			t.Fatalf("%s not found", tt.model)
		}
		if got := m.KVCacheBytesPerToken(); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.model, got, tt.want)
		}
	}
}

func TestLookupModel(t *testing.T) {
	tests := []struct{ in, name string }{
		{"llama-2-7b", "Llama-2-7B"}, {"Llama-2-7B", "Llama-2-7B"}, {"meta-llama/Llama-2-7b-hf", "Llama-2-7B"},
		{"meta-llama/llama-2-7b-chat-hf", "Llama-2-7B"}, {"llama2-7b", "Llama-2-7B"},
		{"llama-3.1-8b", "Llama-3.1-8B"}, {"meta-llama/Llama-3.1-8B-Instruct", "Llama-3.1-8B"},
		{"meta-llama/Meta-Llama-3-8B-Instruct", "Llama-3-8B"}, {"llama-3-8b", "Llama-3-8B"},
		{"mistral-7b", "Mistral-7B-v0.1"}, {"mistralai/Mistral-7B-Instruct-v0.2", "Mistral-7B-v0.1"},
		{"qwen2.5-14b", "Qwen2.5-14B"}, {"Qwen/Qwen2.5-7B-Instruct", "Qwen2.5-7B"},
		{"bert-large", "BERT-large-uncased"}, {"bert-large-uncased", "BERT-large-uncased"},
		{"gpt2", "GPT-2"}, {"gpt2-xl", "GPT-2-XL"}, {"t5-3b", "T5-3B"}, {"bigscience/T0_3B", "T5-3B"},
		{"google/gemma-2b-it", "Gemma-2B"}, {"microsoft/Phi-3-mini-4k-instruct", "Phi-3-mini-4k"},
		{"tiiuae/falcon-7b", "Falcon-7B"}, {"facebook/opt-6.7b", "OPT-6.7B"}, {"llama-3.2-1b", "Llama-3.2-1B"},
	}
	for _, tt := range tests {
		m, ok := LookupModel(tt.in)
		if !ok || m.Name != tt.name {
			t.Errorf("LookupModel(%q) = %q, %v; want %q", tt.in, m.Name, ok, tt.name)
		}
	}
	for _, bad := range []string{"", "llama-9-7b", "7b", "/"} {
		if m, ok := LookupModel(bad); ok {
			t.Errorf("LookupModel(%q) = %q, want not found", bad, m.Name)
		}
	}
}

func TestAliasesDoNotCollide(t *testing.T) {
	seen := map[string]string{}
	for _, m := range modelList {
		for _, k := range modelKeys(m) {
			if prev, ok := seen[compact(k)]; ok && prev != m.Name {
				t.Errorf("alias %q of %s also names %s", k, m.Name, prev)
			}
			seen[compact(k)] = m.Name
		}
	}
}

func TestSuggest(t *testing.T) {
	tests := []struct {
		fn       func(string) string
		in, want string
	}{
		{SuggestModel, "lama-2-7b", "llama-2-7b"}, {SuggestModel, "mistrall-7b", "mistral-7b"},
		{SuggestModel, "qwen2.5-15b", "qwen2.5-14b"}, {SuggestModel, "completely-unrelated-thing", ""},
		{SuggestModel, "", ""},
	}
	for _, tt := range tests {
		if got := tt.fn(tt.in); got != tt.want {
			t.Errorf("suggest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"7b", 7e9, true}, {"6.7B", 6.7e9, true}, {"350m", 350e6, true}, {"1.5b", 1.5e9, true}, {"70B", 70e9, true},
		{"1.8t", 1.8e12, true}, {"b", 0, false}, {"7", 0, false}, {"-7b", 0, false}, {"nanb", 0, false},
		{"1e3b", 0, false}, {"0b", 0, false}, {"99999t", 0, false}, {"7gb", 0, false}, {"1..2b", 0, false},
	}
	for _, tt := range tests {
		got, ok := ParseSize(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestModelForSize(t *testing.T) {
	tests := []struct {
		params       int64
		hidden, kv   int
		layersAround int
	}{
		{7e9, 4096, 32, 32}, {13e9, 5120, 40, 40}, {70e9, 8192, 8, 80}, {350e6, 1024, 16, 22},
	}
	for _, tt := range tests {
		m := ModelForSize(tt.params)
		if !m.Scaled || m.Params != tt.params || m.HiddenSize != tt.hidden || m.NumKVHeads != tt.kv {
			t.Errorf("ModelForSize(%d) = %+v", tt.params, m)
		}
		if d := m.NumLayers - tt.layersAround; d < -2 || d > 2 {
			t.Errorf("ModelForSize(%d) layers = %d, want about %d", tt.params, m.NumLayers, tt.layersAround)
		}
		// The made-up shapes must add up to the requested size within 5%.
		if r := float64(m.ComputeParams()) / float64(tt.params); r < 0.95 || r > 1.05 {
			t.Errorf("ModelForSize(%d): shapes give %d params", tt.params, m.ComputeParams())
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"7b", "6.7B", "350m", "", "1e9b", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if p, ok := ParseSize(s); ok && (p < minModelParams || p > maxModelParams) {
			t.Fatalf("ParseSize(%q) = %d out of range", s, p)
		}
	})
}

func FuzzLookup(f *testing.F) {
	for _, s := range []string{"a100", "meta-llama/Llama-2-7b-chat-hf", "", "//", "\x00-it"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		LookupGPU(s)
		LookupModel(s)
		SuggestGPU(s)
		SuggestModel(s)
	})
}
