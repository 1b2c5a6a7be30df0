package catalog

import (
	"encoding/json"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
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
		{SuggestModel, "qwen2.5-15b", ""}, {SuggestModel, "qwen-2.5-14b", "qwen2.5-14b"}, {SuggestModel, "completely-unrelated-thing", ""},
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

// TestModelForSize: a bare size takes the nearest real model's shape
// (7b and 8b: Llama-3.1-8B's 32 layers and 8 KV heads × 128; 70b:
// Llama-3.3-70B's 80 layers) and adds up to the size.
func TestModelForSize(t *testing.T) {
	tests := []struct {
		params             int64
		hidden, kv, layers int
		vocab              int
	}{
		{7e9, 4096, 8, 32, 128256}, {8e9, 4096, 8, 32, 128256}, {13e9, 5120, 8, 40, 151936},
		{70e9, 8192, 8, 80, 128256}, {350e6, 960, 5, 32, 49152}, {1.5e9, 2048, 8, 28, 151936},
	}
	for _, tt := range tests {
		m := ModelForSize(tt.params)
		if !m.Scaled || m.Params != tt.params || m.HiddenSize != tt.hidden || m.NumKVHeads != tt.kv || m.NumLayers != tt.layers || m.VocabSize != tt.vocab {
			t.Errorf("ModelForSize(%d): hidden %d, %d KV heads, %d layers, vocab %d", tt.params, m.HiddenSize, m.NumKVHeads, m.NumLayers, m.VocabSize)
		}
		// The made-up shapes add up to the requested size within 1%.
		if r := float64(m.ComputeParams()) / float64(tt.params); r < 0.99 || r > 1.01 {
			t.Errorf("ModelForSize(%d): shapes give %d params", tt.params, m.ComputeParams())
		}
	}
	// Far beyond the ladder the depth grows instead of the width.
	if m := ModelForSize(1.8e12); m.NumLayers <= 126 || m.IntermediateSize != 53248 {
		t.Errorf("1.8T: %d layers, width %d", m.NumLayers, m.IntermediateSize)
	}
	// 8b at 32k tokens × 8 sequences: a current 8B model's 32 GiB KV cache.
	if kv := ModelForSize(8e9).KVCacheBytes(32768, 8, 2); kv != 32<<30 {
		t.Errorf("8b KV at 32k×8 = %.1f GiB, want 32", kv/(1<<30))
	}
	for _, name := range sizeLadder {
		if m, ok := LookupModel(name); !ok || m.NumKVHeads >= m.NumAttentionHeads || m.IsMoE() {
			t.Errorf("size ladder model %s missing or not a dense GQA model", name)
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

// indexEntry is one row of models/index.json (models/SOURCES.md).
type indexEntry struct {
	File                  string `json:"file"`
	HFID                  string `json:"hf_id"`
	Name                  string `json:"name"`
	PublishedParams       int64  `json:"published_params"`
	PublishedActiveParams int64  `json:"published_active_params"`
	// ActiveExcludesVision: the published active count is the text
	// tower's (Llama 4), while ActiveParams keeps the vision tower.
	ActiveExcludesVision bool   `json:"active_excludes_vision"`
	ParamsSource         string `json:"params_source"`
	StandIns             []struct {
		Name string `json:"name"`
		Why  string `json:"why"`
	} `json:"stand_ins"`
}

func readIndex(t *testing.T) []indexEntry {
	t.Helper()
	data, err := os.ReadFile("models/index.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Models []indexEntry `json:"models"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Models
}

// TestEmbeddedConfigsReproducePublishedParams is the parameter-count table:
// every catalog model read from its config.json reproduces its published
// total (the Hub's safetensors count unless the source says otherwise)
// within 0.5%, and its published active count for a mixture of experts.
// Each row names its source; rows without a published total say why.
func TestEmbeddedConfigsReproducePublishedParams(t *testing.T) {
	const tolerance = 0.005
	var worst float64
	var worstName string
	checked := 0
	for _, e := range readIndex(t) {
		m, ok := LookupModel(e.HFID)
		if !ok || m.Name != e.Name {
			t.Errorf("%s: LookupModel(%q) = %q, %v", e.File, e.HFID, m.Name, ok)
			continue
		}
		if e.PublishedParams == 0 {
			if e.ParamsSource == "" {
				t.Errorf("%s: no published count and no reason given", e.Name)
			}
			t.Logf("%-30s %16d  computed only: %s", e.Name, m.Params, e.ParamsSource)
			continue
		}
		checked++
		rel := math.Abs(float64(m.Params)/float64(e.PublishedParams) - 1)
		if rel > worst {
			worst, worstName = rel, e.Name
		}
		t.Logf("%-30s %16d  published %16d  %+.3f%%  (%s)", e.Name, m.Params, e.PublishedParams, 100*(float64(m.Params)/float64(e.PublishedParams)-1), e.ParamsSource)
		if rel > tolerance {
			t.Errorf("%s: %d parameters, published %d (%s): off by %.2f%%", e.Name, m.Params, e.PublishedParams, e.ParamsSource, 100*rel)
		}
		if e.PublishedActiveParams > 0 {
			active := m.ActiveParams()
			if e.ActiveExcludesVision {
				active -= m.VisionParams
			}
			if rel := math.Abs(float64(active)/float64(e.PublishedActiveParams) - 1); rel > tolerance {
				t.Errorf("%s: %d active parameters, published %d: off by %.2f%%", e.Name, active, e.PublishedActiveParams, 100*rel)
			}
		}
	}
	if checked < 25 {
		t.Errorf("only %d catalog models have a published count", checked)
	}
	t.Logf("worst: %s %.4f%% over %d models", worstName, 100*worst, checked)
}

// TestLookupVariantsOfCurrentModels: fine-tunes, re-releases and quantised
// repos of a catalog model resolve to it where the name says so, and a
// quantisation ending marks the checkpoint's storage.
func TestLookupVariantsOfCurrentModels(t *testing.T) {
	tests := []struct{ in, name, quant string }{
		{"qwen3-8b", "Qwen3-8B", ""}, {"Qwen/Qwen3-8B", "Qwen3-8B", ""}, {"Qwen/Qwen3-8B-AWQ", "Qwen3-8B", "int4"},
		{"Qwen/Qwen3-8B-FP8", "Qwen3-8B", "fp8"}, {"unsloth/Qwen3-8B-unsloth-bnb-4bit", "Qwen3-8B", "nf4"},
		{"Qwen/Qwen3-30B-A3B-Instruct-2507", "Qwen3-30B-A3B", ""}, {"Qwen/Qwen3-Next-80B-A3B-Instruct", "Qwen3-Next-80B-A3B", ""},
		{"llama-3.3-70b", "Llama-3.3-70B", ""}, {"meta-llama/Llama-3.3-70B-Instruct", "Llama-3.3-70B", ""},
		{"RedHatAI/Llama-3.3-70B-Instruct-FP8-dynamic", "Llama-3.3-70B", "fp8"},
		{"NousResearch/Hermes-3-Llama-3.1-8B", "Llama-3.1-8B", ""},
		{"gpt-oss-20b", "gpt-oss-20b", "mxfp4"}, {"openai/gpt-oss-120b", "gpt-oss-120b", "mxfp4"},
		{"deepseek-ai/DeepSeek-R1-0528", "DeepSeek-R1", "fp8"}, {"deepseek-v3", "DeepSeek-V3", "fp8"},
		{"moonshotai/Kimi-K2-Instruct-0905", "Kimi-K2", "fp8"}, {"google/gemma-2-9b-it", "Gemma-2-9B", ""},
		{"microsoft/phi-4", "Phi-4", ""}, {"llama-4-scout", "Llama-4-Scout-17B-16E", ""},
		{"meta-llama/Llama-4-Scout-17B-16E-Instruct", "Llama-4-Scout-17B-16E", ""},
		{"TheBloke/Llama-2-7B-Chat-GPTQ", "Llama-2-7B", "int4"}, {"mistralai/Mistral-7B-Instruct-v0.3", "Mistral-7B-v0.3", ""},
		{"mistralai/Mistral-7B-Instruct-v0.2", "Mistral-7B-v0.1", ""}, {"Qwen/Qwen3.5-35B-A3B-FP8", "Qwen3.5-35B-A3B", "fp8"},
	}
	for _, tt := range tests {
		m, ok := LookupModel(tt.in)
		got := ""
		if m.Quant != nil {
			got = m.Quant.Method
		}
		if !ok || m.Name != tt.name || got != tt.quant {
			t.Errorf("LookupModel(%q) = %q (quant %q), %v; want %q (quant %q)", tt.in, m.Name, got, ok, tt.name, tt.quant)
		}
	}
	for _, bad := range []string{"gemma-5-27b", "google/gemma-5-27b-it", "phi-5", "qwen4-8b", "llama-9-7b", "some-org/totally-new-model", strings.Repeat("a", 300)} {
		if m, ok := LookupModel(bad); ok {
			t.Errorf("LookupModel(%q) = %q, want not found", bad, m.Name)
		}
	}
	// The catalog's own rows are never modified by a name's quantisation.
	if m, _ := LookupModel("qwen3-8b"); m.Quant != nil {
		t.Errorf("qwen3-8b gained a quantisation: %+v", m.Quant)
	}
}

// TestSuggestModelRespectsGenerationAndSize: "did you mean" keeps the
// family, generation and size; otherwise it offers nothing.
func TestSuggestModelRespectsGenerationAndSize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"gemma-5-27b", ""}, {"gemma-3-28b", ""}, {"gema-3-27b", "gemma-3-27b"}, {"phi-4-vision", ""}, {"phi-5", ""}, {"qwen4-8b", ""}, {"llama-5-70b", ""},
		{"lama-3.3-70b", "llama-3.3-70b"}, {"qwen3-9b", ""}, {"qwen2.5-15b", ""}, {"qwen2.5-14b", "qwen2.5-14b"},
		{"gemma-2-28b", ""}, {"gema-2-27b", "gemma-2-27b"}, {"deepsek-v3", "deepseek-v3"}, {"gpt-os-20b", "gpt-oss-20b"},
		{"mistral-7b-v5", ""}, {"Qwen/Qwen3-9B", ""}, {"qwen-3-8b", "qwen3-8b"},
	}
	for _, tt := range tests {
		if got := SuggestModel(tt.in); got != tt.want {
			t.Errorf("SuggestModel(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestFamilyModels: a family named without a size lists its sizes, never
// picks one, and never reaches into another family (the organisation of a
// Hub id is no family: "mistral" is not mistralai/Mixtral).
func TestFamilyModels(t *testing.T) {
	tests := []struct {
		in        string
		want      []string // each must be listed
		wantNone  bool
		forbidden string // a prefix no listed name may have
	}{
		{in: "llama3", want: []string{"llama-3.1-8b", "llama-3.3-70b"}, forbidden: "llama-2"},
		{in: "gemma3", want: []string{"gemma-3-1b", "gemma-3-27b"}, forbidden: "gemma-2"},
		{in: "phi3", want: []string{"phi-3.5-mini", "phi-3-medium-14b"}, forbidden: "phi-4"},
		{in: "mistral", want: []string{"mistral-small-3.2-24b"}, forbidden: "mixtral"},
		{in: "Qwen2.5", want: []string{"qwen2.5-14b"}, forbidden: "qwen3"},
		{in: "qwen3", wantNone: true},     // an alias of Qwen3-8B
		{in: "llama3-8b", wantNone: true}, // a size: the resolver's answer
		{in: "xyz", wantNone: true},       // no family
		{in: "ph", wantNone: true},        // too short to be one
	}
	for _, tt := range tests {
		got := FamilyModels(tt.in)
		if tt.wantNone {
			if len(got) != 0 {
				t.Errorf("FamilyModels(%q) = %q, want none", tt.in, got)
			}
			continue
		}
		if len(got) == 0 || len(got) > maxFamilyShown {
			t.Errorf("FamilyModels(%q) = %q: want 1 to %d names", tt.in, got, maxFamilyShown)
		}
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("FamilyModels(%q) = %q, missing %q", tt.in, got, w)
			}
		}
		for _, g := range got {
			if strings.HasPrefix(g, tt.forbidden) {
				t.Errorf("FamilyModels(%q) lists %q, of another family", tt.in, g)
			}
			if _, ok := LookupModel(g); !ok {
				t.Errorf("FamilyModels(%q) lists %q, which the catalog does not resolve", tt.in, g)
			}
		}
	}
}

// TestConfigModelsMatchTheirNames is the weaker check for catalog models
// without a published count: the total read from the config is between
// 90% and 130% of the size in the name, which rounds down and leaves out
// MTP modules and vision towers (Nemotron-3-Nano-30B-A3B is 31.6B,
// Ministral-3-3B 3.4B of text and a 0.4B vision tower). Names that give
// experts (Mixtral-8x22B, Llama-4-Scout-17B-16E) are skipped. It catches a
// misread family, not a small slip.
func TestConfigModelsMatchTheirNames(t *testing.T) {
	for _, e := range readIndex(t) {
		if e.PublishedParams != 0 {
			continue
		}
		want := parseModelName(e.Name).size
		if want == 0 || regexp.MustCompile(`\d+x\d|-\d+E`).MatchString(e.Name) {
			continue
		}
		m, _ := LookupModel(e.HFID)
		if r := float64(m.Params) / want; r < 0.90 || r > 1.30 {
			t.Errorf("%s: %d parameters, %.0f%% of the %.3gB its name says", e.Name, m.Params, 100*r, want/1e9)
		}
	}
}

// TestStandInsAnswerUnderTheirOwnName checks that a model read with another
// model's config.json keeps its own name, id and context and says whose
// config it is, while the model whose config it borrows is unchanged.
func TestStandInsAnswerUnderTheirOwnName(t *testing.T) {
	m, ok := LookupModel("zai-org/GLM-4.5")
	if !ok || m.Name != "GLM-4.5" || m.StandInFor != "GLM-4.7" || m.MaxPositionEmbeddings != 131072 {
		t.Fatalf("LookupModel(zai-org/GLM-4.5) = %q (stand-in for %q, context %d), %v", m.Name, m.StandInFor, m.MaxPositionEmbeddings, ok)
	}
	base, ok := LookupModel("glm-4.7")
	if !ok || base.StandInFor != "" || base.MaxPositionEmbeddings != 202752 || base.Params != m.Params {
		t.Fatalf("GLM-4.7 = %q (stand-in for %q, context %d, %d params), GLM-4.5 %d params", base.Name, base.StandInFor, base.MaxPositionEmbeddings, base.Params, m.Params)
	}
	for _, e := range readIndex(t) {
		for _, si := range e.StandIns {
			got, ok := LookupModel(si.Name)
			if !ok || got.Name != si.Name || got.StandInFor != e.Name || !strings.Contains(got.Source, si.Why) {
				t.Errorf("stand-in %s of %s: LookupModel = %q (for %q), %v", si.Name, e.Name, got.Name, got.StandInFor, ok)
			}
		}
	}
}

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b []string
		want int
	}{
		{[]string{"3.3"}, []string{"3.1"}, 1},
		{[]string{"3"}, []string{"3.1"}, -1},
		{[]string{"10"}, []string{"9"}, 1},
		{[]string{"2409"}, nil, 0}, // a release date is no version
		{[]string{"3", "2507"}, []string{"3"}, 0},
		{nil, []string{"2"}, -1},
	}
	for _, tt := range tests {
		if got := compareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("compareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
