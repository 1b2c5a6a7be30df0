package fix

import (
	"slices"
	"strings"
	"testing"
)

// full has every parameter set, as a planner would.
var full = Params{
	ModelID: "meta-llama/Llama-2-7b-hf", GPUName: "A100 80GB", FP8: true,
	MicroBatch: 2, AccumSteps: 4, Batch: 8, Paged: true, LoRARank: 16, GradCheckpointing: true,
	TrainableParams: "40M", WasTrainableParams: "6.74B", ZeroStage: 2, Offload: "param", HostRAM: "160 GiB",
	GPUs: 16, WasGPUs: 8, TP: 8, PP: 2, MaxModelLen: 32768, WasMaxModelLen: 131072, EngineMaxModelLen: 37728,
	Sequences: 4, WasSequences: 16, LogitsTokens: 8192, Vocab: 32000, GPUMemoryUtilization: 0.9,
	BatchedTokens: 1024, GPULayers: 20, TotalLayers: 33, Quant: "Q4_K_M", Workers: 2, ShmSize: "16g", NeedBytes: 40 << 30,
}

// TestCatalogueRenders renders every fix in every framework with no
// parameters and with all of them: each has a title and a cost, each
// template runs, and nothing shows Go's "<no value>".
func TestCatalogueRenders(t *testing.T) {
	if len(IDs()) < 40 {
		t.Fatalf("%d fixes: the catalogue is incomplete", len(IDs()))
	}
	for _, id := range IDs() {
		d, _ := Lookup(id)
		if d.Title == "" || d.Cost == "" || d.Level < LevelFreeWins || d.Level > LevelHardware {
			t.Errorf("%s: title %q, cost %q, level %d", id, d.Title, d.Cost, d.Level)
		}
		for _, fw := range append(Frameworks(), Any) {
			for name, p := range map[string]Params{"empty": {}, "full": full, "no bf16": {NoBF16: true}} {
				f, ok := Make(id, fw, p)
				if !ok || f.ID != id || f.Title != d.Title || f.Cost != d.Cost {
					t.Fatalf("%s/%s/%s: Make gave %+v", id, fw, name, f)
				}
				for _, s := range []string{f.Detail, f.Snippet} {
					if strings.Contains(s, "<no value>") || strings.Contains(s, "{{") {
						t.Errorf("%s/%s/%s: unrendered text %q", id, fw, name, s)
					}
				}
				if len(d.Snippets) > 0 && f.Snippet == "" && Applies(id, fw) {
					t.Errorf("%s/%s/%s: applies but renders no snippet (a template error?)", id, fw, name)
				}
				if f.Snippet != "" && f.SnippetLang == "" {
					t.Errorf("%s/%s/%s: snippet without a language", id, fw, name)
				}
			}
		}
	}
}

// TestDetailNeedsValues: a detail says only what the caller's numbers say.
func TestDetailNeedsValues(t *testing.T) {
	// The 16-bit type is always known (bf16 unless the GPU lacks it).
	derived := map[string]bool{HalfPrecision: true}
	for _, id := range IDs() {
		f, _ := Make(id, FrameworkPyTorch, Params{})
		if f.Detail != "" && !derived[id] {
			t.Errorf("%s: detail %q with no values", id, f.Detail)
		}
	}
	f, _ := Make(GradAccum, FrameworkHF, Params{MicroBatch: 2, AccumSteps: 4, Batch: 8})
	if f.Detail != "micro-batch 2 × 4 accumulation steps (effective batch 8 unchanged)" {
		t.Errorf("grad-accum detail %q", f.Detail)
	}
	if !strings.Contains(f.Snippet, "per_device_train_batch_size=2, gradient_accumulation_steps=4") {
		t.Errorf("grad-accum HF snippet %q", f.Snippet)
	}
	f, _ = Make(MaxModelLen, FrameworkVLLM, Params{ModelID: "Qwen/Qwen3-8B", MaxModelLen: 32768, EngineMaxModelLen: 37728})
	if f.Snippet != "vllm serve Qwen/Qwen3-8B --max-model-len 32768" || !strings.Contains(f.Detail, "37728") {
		t.Errorf("max-model-len: %q / %q", f.Snippet, f.Detail)
	}
}

// TestPlaceholders: unknown values become runnable placeholders.
func TestPlaceholders(t *testing.T) {
	f, _ := Make(GradAccum, FrameworkHF, Params{})
	if !strings.Contains(f.Snippet, "per_device_train_batch_size=1, gradient_accumulation_steps=8") || !strings.Contains(f.Snippet, "your old batch") {
		t.Errorf("grad-accum placeholder snippet %q", f.Snippet)
	}
	f, _ = Make(FlashAttention, FrameworkHF, Params{})
	if !strings.Contains(f.Snippet, Placeholders.ModelID) {
		t.Errorf("flash-attention placeholder snippet %q", f.Snippet)
	}
}

func TestApplies(t *testing.T) {
	tests := []struct {
		id   string
		fw   Framework
		want bool
	}{
		{GradAccum, FrameworkHF, true},
		{GradAccum, FrameworkKeras, true},
		{GradAccum, FrameworkVLLM, false},
		{ExpandableSegments, FrameworkLightning, true}, // a PyTorch setting, and Lightning runs PyTorch
		{ExpandableSegments, FrameworkKeras, false},    // not in TensorFlow
		{ExpandableSegments, FrameworkLlamaCPP, false}, // nor in ggml
		{InferenceMode, FrameworkJAX, false},           // JAX has no autograd mode to leave
		{TFMemoryGrowth, FrameworkKeras, true},
		{TFMemoryGrowth, FrameworkPyTorch, false},
		{JAXMemFraction, FrameworkUnknown, false},
		{KillOtherProcess, FrameworkLlamaCPP, true}, // a shell command holds everywhere
		{MaxModelLen, FrameworkLlamaCPP, true},
		{LayerOffload, FrameworkOllama, true},
		{Zero3, FrameworkJAX, true},
		{Zero3, FrameworkVLLM, false},
		{BiggerGPU, FrameworkKeras, true},
		{"no-such-fix", FrameworkPyTorch, false},
	}
	for _, tt := range tests {
		if got := Applies(tt.id, tt.fw); got != tt.want {
			t.Errorf("Applies(%s, %s) = %v, want %v", tt.id, tt.fw, got, tt.want)
		}
	}
}

// TestFallbackIsMarked: a snippet borrowed from another framework says so.
func TestFallbackIsMarked(t *testing.T) {
	f, _ := Make(Optim8bit, FrameworkKeras, Params{})
	if !strings.HasPrefix(f.Snippet, "# no keras idiom for this; the PyTorch / transformers form:\n") {
		t.Errorf("keras fallback %q", f.Snippet)
	}
	f, _ = Make(Optim8bit, FrameworkUnknown, Params{})
	if strings.Contains(f.Snippet, "idiom") {
		t.Errorf("unknown framework gets PyTorch unmarked: %q", f.Snippet)
	}
	f, _ = Make(Zero2, FrameworkDeepSpeed, Params{GPUs: 4})
	if f.SnippetLang != "json" || !strings.Contains(f.Snippet, `"stage": 2`) {
		t.Errorf("zero-2 DeepSpeed snippet %s %q", f.SnippetLang, f.Snippet)
	}
}

// TestZeROStages: each ZeRO fix sets its own stage and offload, whatever
// the caller passes.
func TestZeROStages(t *testing.T) {
	tests := []struct {
		id       string
		in       Params
		has, not []string
	}{
		{Zero2, Params{ZeroStage: 3, Offload: "param"}, []string{`"stage": 2`}, []string{"offload"}},
		{Zero3, Params{ZeroStage: 2}, []string{`"stage": 3`}, []string{"offload"}},
		{ZeroOffload, Params{}, []string{`"stage": 2`, "offload_optimizer"}, []string{"offload_param"}},
		{ZeroOffload, Params{ZeroStage: 3}, []string{`"stage": 3`, "offload_optimizer"}, []string{"offload_param"}},
		{ParamOffload, Params{}, []string{`"stage": 3`, "offload_optimizer", "offload_param"}, nil},
	}
	for _, tt := range tests {
		f, _ := Make(tt.id, FrameworkDeepSpeed, tt.in)
		for _, s := range tt.has {
			if !strings.Contains(f.Snippet, s) {
				t.Errorf("%s %+v: %q lacks %q", tt.id, tt.in, f.Snippet, s)
			}
		}
		for _, s := range tt.not {
			if strings.Contains(f.Snippet, s) {
				t.Errorf("%s %+v: %q has %q", tt.id, tt.in, f.Snippet, s)
			}
		}
	}
	f, _ := Make(Zero3, FrameworkHF, Params{GPUs: 16})
	if !strings.Contains(f.Snippet, "--num_nodes 2 --num_gpus 8") {
		t.Errorf("16 GPUs launch on two nodes: %q", f.Snippet)
	}
}

func TestMakeUnknown(t *testing.T) {
	if _, ok := Make("micro-batch", FrameworkPyTorch, Params{}); ok {
		t.Error("an old id must not be in the catalogue")
	}
	if _, ok := Lookup("grad-accum"); !ok {
		t.Error("grad-accum missing")
	}
	if !slices.IsSorted(IDs()) {
		t.Error("IDs not sorted")
	}
}
