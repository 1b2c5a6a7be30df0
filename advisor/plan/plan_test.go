package plan

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/advisor/memory"
)

func mustModel(t testing.TB, name string) catalog.Model {
	t.Helper()
	m, ok := catalog.LookupModel(name)
	if !ok {
		t.Fatalf("model %q not in the catalog", name)
	}
	return m
}

func mustGPU(t testing.TB, name string) catalog.GPU {
	t.Helper()
	g, ok := catalog.LookupGPU(name)
	if !ok {
		t.Fatalf("GPU %q not in the catalog", name)
	}
	return g
}

func fixIDs(stages []fix.Stage) []string {
	var ids []string
	for _, s := range stages {
		for _, f := range s.Fixes {
			ids = append(ids, f.ID)
		}
	}
	return ids
}

// checkInvariants holds for every plan: stages numbered from 1 with their
// level's title, levels easiest first, every fix saving memory, totals
// re-estimated (the last equals Estimate of the final workload).
func checkInvariants(t *testing.T, w memory.Workload, gpu catalog.GPU, r Result) {
	t.Helper()
	prev := memory.Estimate(w).TotalBytes
	lastLevel := fix.Level(-1)
	for i, s := range r.Stages {
		if s.Stage != i+1 {
			t.Errorf("stage %d numbered %d", i+1, s.Stage)
		}
		if s.Title != s.Level.Title() {
			t.Errorf("stage %d title %q, want %q", s.Stage, s.Title, s.Level.Title())
		}
		if s.Level <= lastLevel {
			t.Errorf("stage %d level %d after level %d: not easiest first", s.Stage, s.Level, lastLevel)
		}
		lastLevel = s.Level
		if len(s.Fixes) == 0 {
			t.Errorf("stage %d has no fixes", s.Stage)
		}
		for _, f := range s.Fixes {
			if f.SavesBytes == nil || f.TotalAfterBytes == nil {
				t.Fatalf("fix %s has no numbers", f.ID)
			}
			if *f.TotalAfterBytes >= prev {
				t.Errorf("fix %s: total after %d is not below %d", f.ID, *f.TotalAfterBytes, prev)
			}
			if *f.SavesBytes != prev-*f.TotalAfterBytes {
				t.Errorf("fix %s: saves %d, want %d - %d", f.ID, *f.SavesBytes, prev, *f.TotalAfterBytes)
			}
			if f.Title == "" || f.Cost == "" || f.Snippet == "" || f.SnippetLang == "" {
				t.Errorf("fix %s lacks title, cost or snippet: %+v", f.ID, f)
			}
			prev = *f.TotalAfterBytes
		}
	}
	if got := memory.Estimate(r.Final); got != r.FinalEstimate {
		t.Errorf("FinalEstimate %+v is not Estimate(Final) %+v", r.FinalEstimate, got)
	}
	if r.FinalEstimate.TotalBytes != prev {
		t.Errorf("final total %d, last fix total after %d", r.FinalEstimate.TotalBytes, prev)
	}
	fit, headroom := memory.Assess(r.FinalEstimate, gpu)
	if fit != r.Fit || headroom != r.HeadroomBytes || r.Fits != (fit != memory.FitDoesNotFit) {
		t.Errorf("Fit %s/%d/%v, Assess says %s/%d", r.Fit, r.HeadroomBytes, r.Fits, fit, headroom)
	}
	if !gpu.BF16 {
		for _, s := range r.Stages {
			for _, f := range s.Fixes {
				if strings.Contains(f.Snippet, "bfloat16") || strings.HasPrefix(f.Title, "bf16") || strings.Contains(f.Title, "in bf16") {
					t.Errorf("%s has no bf16 but fix %s proposes it: %q", gpu.Name, f.ID, f.Title)
				}
			}
		}
		if p := r.Final.Precision; p == memory.PrecisionBF16 || p == memory.PrecisionMixedBF16 {
			if p != w.Precision {
				t.Errorf("the plan moved to %s on %s", p, gpu.Name)
			}
		}
	}
	if !gpu.FP8 && slices.Contains(fixIDs(r.Stages), fix.FP8KVCache) {
		t.Errorf("fp8 KV cache proposed on %s, which has no fp8", gpu.Name)
	}
}

func TestPlan(t *testing.T) {
	tests := []struct {
		name  string
		w     func(t testing.TB) memory.Workload
		gpu   string
		check func(t *testing.T, r Result)
	}{
		{
			name: "7B full fine-tuning on an A100 80GB ends with a fit: a smaller optimizer state or LoRA",
			w: func(t testing.TB) memory.Workload {
				return memory.Workload{Model: mustModel(t, "llama-2-7b"), Method: memory.MethodFull, Precision: memory.PrecisionMixedBF16, Optimizer: memory.OptimizerAdamW, Batch: 1, SeqLen: 2048}
			},
			gpu: "a100",
			check: func(t *testing.T, r Result) {
				if r.Fit != memory.FitFits {
					t.Fatalf("plan ends %s, want fits", r.Fit)
				}
				ids := fixIDs(r.Stages)
				if !slices.Contains(ids, fix.Optim8bit) && !slices.Contains(ids, fix.LoRA) && !slices.Contains(ids, fix.QLoRA) {
					t.Errorf("route %v: want an 8-bit/paged optimizer or LoRA for 7B full FT on one 80 GB card", ids)
				}
				if r.ChangedMethod && (r.ScaleOut == nil || r.ScaleOut.Workload.Method != memory.MethodFull) {
					t.Errorf("the method changed: want a scale-out that keeps full fine-tuning, got %+v", r.ScaleOut)
				}
			},
		},
		{
			// Issue 22: the cheapest change that keeps the user's GPU comes
			// before CPU offload (several times slower) or more GPUs; the
			// scale-out keeps full fine-tuning.
			name: "13B full fine-tuning on an A100 80GB: the one GPU kept, a method change before an offload",
			w: func(t testing.TB) memory.Workload {
				return memory.Workload{Model: mustModel(t, "llama-2-13b"), Method: memory.MethodFull, Precision: memory.PrecisionMixedBF16, Optimizer: memory.OptimizerAdamW, Batch: 1, SeqLen: 2048}
			},
			gpu: "a100",
			check: func(t *testing.T, r Result) {
				if r.Fit != memory.FitFits {
					t.Fatalf("plan ends %s, want fits", r.Fit)
				}
				ids := fixIDs(r.Stages)
				if slices.Contains(ids, fix.ZeroOffload) || slices.Contains(ids, fix.ParamOffload) || r.Final.GPUs != 1 {
					t.Errorf("route %v on %d GPUs: want no offload to CPU RAM and the one card while another method fits", ids, r.Final.GPUs)
				}
				if r.ScaleOut == nil || r.ScaleOut.Workload.Method != memory.MethodFull {
					t.Errorf("want a scale-out that keeps full fine-tuning, got %+v", r.ScaleOut)
				}
			},
		},
		{
			name: "13B full fine-tuning on two A100 80GB under DDP: shard across them, never more GPUs",
			w: func(t testing.TB) memory.Workload {
				return memory.Workload{Model: mustModel(t, "llama-2-13b"), Method: memory.MethodFull, Precision: memory.PrecisionMixedBF16, Optimizer: memory.OptimizerAdamW, Batch: 1, SeqLen: 2048,
					GPUs: 2, Sharding: memory.ShardingDDP}
			},
			gpu: "a100",
			check: func(t *testing.T, r Result) {
				if r.Fit == memory.FitDoesNotFit {
					t.Fatalf("plan does not fit: %v", fixIDs(r.Stages))
				}
				if r.Final.GPUs != 2 || r.Final.Method != memory.MethodFull || r.Final.ZeroStage < 2 {
					t.Errorf("final %d GPUs, %s, zero %d: want full FT sharded across the user's 2", r.Final.GPUs, r.Final.Method, r.Final.ZeroStage)
				}
			},
		},
		{
			name: "70B full fine-tuning on one A100: nothing on one card without changing the method; more GPUs say how many more",
			w: func(t testing.TB) memory.Workload {
				return memory.Workload{Model: mustModel(t, "llama-3.1-70b"), Method: memory.MethodFull, Precision: memory.PrecisionMixedBF16, Optimizer: memory.OptimizerAdamW, Batch: 1, SeqLen: 2048}
			},
			gpu: "a100",
			check: func(t *testing.T, r Result) {
				if r.ScaleOut == nil {
					t.Fatalf("no scale-out that keeps full FT: %v", fixIDs(r.Stages))
				}
				so := r.ScaleOut
				if so.Workload.Method != memory.MethodFull || so.GPUs < 2 {
					t.Errorf("scale-out %d GPUs, method %s", so.GPUs, so.Workload.Method)
				}
				last := so.Stages[len(so.Stages)-1].Fixes
				if f := last[len(last)-1]; f.ID != fix.Zero3 || !strings.Contains(f.Detail, fmt.Sprintf("%d more than the 1 you have", so.GPUs-1)) {
					t.Errorf("scale-out ends with %s %q: want ZeRO-3 saying how many more GPUs", f.ID, f.Detail)
				}
			},
		},
		{
			name: "7B LoRA bs=8 seq=4096 on a 24 GB card: micro-batch and checkpointing first",
			w: func(t testing.TB) memory.Workload {
				return memory.Workload{Model: mustModel(t, "llama-2-7b"), Method: memory.MethodLoRA, Precision: memory.PrecisionBF16, Optimizer: memory.OptimizerAdamW, Batch: 8, SeqLen: 4096}
			},
			gpu: "4090",
			check: func(t *testing.T, r Result) {
				if !r.Fits {
					t.Fatalf("does not fit after %v", fixIDs(r.Stages))
				}
				first := r.Stages[0]
				if first.Level != fix.LevelOneLiner {
					t.Fatalf("first stage is level %d, want one-liners", first.Level)
				}
				ids := fixIDs(r.Stages[:1])
				if !slices.Contains(ids, fix.GradAccum) || !slices.Contains(ids, fix.GradCheckpointing) {
					t.Errorf("first stage %v, want micro-batch + accumulation and checkpointing", ids)
				}
				if r.Final.Method != memory.MethodLoRA {
					t.Errorf("method changed to %s although one-liners suffice", r.Final.Method)
				}
				if r.Final.Batch < 1 || 8%r.Final.Batch != 0 {
					t.Errorf("micro-batch %d does not divide the effective batch 8", r.Final.Batch)
				}
			},
		},
		{
			name: "fp32 full fine-tuning on a V100: fp16 autocast with GradScaler, never bf16",
			w: func(t testing.TB) memory.Workload {
				return memory.Workload{Model: mustModel(t, "gpt2-large"), Method: memory.MethodFull, Precision: memory.PrecisionFP32, Optimizer: memory.OptimizerAdamW, Batch: 32, SeqLen: 1024}
			},
			gpu: "v100",
			check: func(t *testing.T, r Result) {
				for _, s := range r.Stages {
					for _, f := range s.Fixes {
						if f.ID == fix.MixedPrecision && !strings.Contains(f.Snippet, "GradScaler") {
							t.Errorf("fp16 autocast without GradScaler: %q", f.Snippet)
						}
					}
				}
			},
		},
		{
			name: "T4 inference of a 13B model in fp32: fp16, never bf16",
			w: func(t testing.TB) memory.Workload {
				return memory.Workload{Model: mustModel(t, "llama-2-13b"), Method: memory.MethodInference, Precision: memory.PrecisionFP32, Batch: 1, SeqLen: 2048, Engine: "hf"}
			},
			gpu:   "t4",
			check: func(t *testing.T, r Result) {},
		},
		{
			name: "vLLM at 128k on an H100: fp8 KV cache (Hopper has fp8)",
			w: func(t testing.TB) memory.Workload {
				return memory.Workload{Model: mustModel(t, "llama-3.1-70b"), Method: memory.MethodInference, Precision: memory.PrecisionNF4, Batch: 1, SeqLen: 131072, Engine: "vllm"}
			},
			gpu: "h100",
			check: func(t *testing.T, r Result) {
				if ids := fixIDs(r.Stages); len(ids) == 0 || ids[0] != fix.FP8KVCache {
					t.Errorf("route %v: want the fp8 KV cache first", ids)
				}
			},
		},
		{
			name: "the same on an A100: no fp8, a shorter context instead",
			w: func(t testing.TB) memory.Workload {
				return memory.Workload{Model: mustModel(t, "llama-3.1-70b"), Method: memory.MethodInference, Precision: memory.PrecisionNF4, Batch: 1, SeqLen: 131072, Engine: "vllm"}
			},
			gpu: "a100",
			check: func(t *testing.T, r Result) {
				if ids := fixIDs(r.Stages); !slices.Contains(ids, fix.MaxModelLen) {
					t.Errorf("route %v: want max-model-len", ids)
				}
				if r.Final.SeqLen >= 131072 || r.Final.SeqLen < minModelLen {
					t.Errorf("final context %d", r.Final.SeqLen)
				}
			},
		},
		{
			name: "70B bf16 inference on an L40S: quantised weights or tensor parallel",
			w: func(t testing.TB) memory.Workload {
				return memory.Workload{Model: mustModel(t, "llama-2-70b"), Method: memory.MethodInference, Precision: memory.PrecisionBF16, Batch: 1, SeqLen: 4096, Engine: "vllm"}
			},
			gpu: "l40s",
			check: func(t *testing.T, r Result) {
				if !r.Fits {
					t.Fatalf("no fit: %v", fixIDs(r.Stages))
				}
				if r.ScaleOut == nil || r.ScaleOut.Workload.Precision != memory.PrecisionBF16 || r.ScaleOut.Workload.TP < 2 {
					t.Errorf("want a bf16 tensor-parallel alternative, got %+v", r.ScaleOut)
				}
			},
		},
		{
			name: "a workload that fits needs no stages",
			w: func(t testing.TB) memory.Workload {
				return memory.Workload{Model: mustModel(t, "llama-2-7b"), Method: memory.MethodInference, Precision: memory.PrecisionBF16, Batch: 1, SeqLen: 2048}
			},
			gpu: "a100",
			check: func(t *testing.T, r Result) {
				if len(r.Stages) != 0 || r.Fit != memory.FitFits || r.ScaleOut != nil {
					t.Errorf("stages %v, fit %s, scale-out %v: want nothing to do", fixIDs(r.Stages), r.Fit, r.ScaleOut)
				}
			},
		},
		{
			name: "405B full fine-tuning on one 4090: many GPUs or nothing, never a false fit",
			w: func(t testing.TB) memory.Workload {
				return memory.Workload{Model: catalog.ModelForSize(405e9), Method: memory.MethodFull, Precision: memory.PrecisionMixedBF16, Optimizer: memory.OptimizerAdamW, Batch: 1, SeqLen: 4096}
			},
			gpu: "4090",
			check: func(t *testing.T, r Result) {
				if r.Fits && r.Final.GPUs == 1 && r.Final.Offload == memory.OffloadNone {
					t.Errorf("405B claimed to fit one 24 GB GPU without offload: %v", fixIDs(r.Stages))
				}
				if r.ScaleOut != nil && r.ScaleOut.GPUs > MaxScaleOutGPUs {
					t.Errorf("scale-out of %d GPUs beyond the limit", r.ScaleOut.GPUs)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := tt.w(t)
			gpu := mustGPU(t, tt.gpu)
			r := Plan(w, gpu, fix.FrameworkUnknown)
			checkInvariants(t, memory.Resolve(w), gpu, r)
			tt.check(t, r)
		})
	}
}

// TestMixedPrecisionFollowsTheGPU pins the fix itself, whatever the
// estimator's numbers: bf16 where the GPU has it, fp16 + GradScaler elsewhere.
func TestMixedPrecisionFollowsTheGPU(t *testing.T) {
	w := memory.Workload{Model: mustModel(t, "gpt2-large"), Method: memory.MethodFull, Precision: memory.PrecisionFP32, Optimizer: memory.OptimizerAdamW, Batch: 8, SeqLen: 1024}
	tests := []struct {
		gpu       string
		precision memory.Precision
		snippet   string
	}{
		{"v100", memory.PrecisionMixedFP16, "GradScaler"},
		{"t4", memory.PrecisionMixedFP16, "GradScaler"},
		{"a100", memory.PrecisionMixedBF16, "torch.bfloat16"},
		{"4090", memory.PrecisionMixedBF16, "torch.bfloat16"},
	}
	for _, tt := range tests {
		t.Run(tt.gpu, func(t *testing.T) {
			g := mustGPU(t, tt.gpu)
			if got := mixedPrecision.params(w, g); len(got) != 1 {
				t.Fatalf("mixed precision does not apply to fp32 training: %v", got)
			}
			after := mixedPrecision.apply(w, g, 0)
			if after.Precision != tt.precision {
				t.Errorf("precision %s, want %s", after.Precision, tt.precision)
			}
			f := mixedPrecision.describe(w, after, g, fix.FrameworkPyTorch, 0)
			if !strings.Contains(f.Snippet, tt.snippet) {
				t.Errorf("snippet %q lacks %q", f.Snippet, tt.snippet)
			}
			if !g.BF16 && (strings.Contains(f.Snippet, "bfloat16") || strings.Contains(f.Title, "bf16 autocast")) {
				t.Errorf("bf16 proposed on %s: %q", g.Name, f.Title)
			}
		})
	}
}

// TestFP8KVCacheOnlyOnFP8GPUs: the fix applies exactly where the GPU has fp8.
func TestFP8KVCacheOnlyOnFP8GPUs(t *testing.T) {
	w := memory.Workload{Model: mustModel(t, "llama-3.1-8b"), Method: memory.MethodInference, Precision: memory.PrecisionBF16, KVCacheDtype: "fp16", Batch: 1, SeqLen: 131072}
	tests := []struct {
		gpu string
		fp8 bool
	}{
		{"h100", true}, {"h200", true}, {"l40s", true}, {"4090", true}, {"l4", true}, {"mi300x", true},
		{"a100", false}, {"a100-40gb", false}, {"a10g", false}, {"3090", false}, {"a6000", false}, {"v100", false}, {"t4", false},
	}
	for _, tt := range tests {
		t.Run(tt.gpu, func(t *testing.T) {
			g := mustGPU(t, tt.gpu)
			if got := len(fp8KVCache.params(w, g)) > 0; got != tt.fp8 {
				t.Errorf("fp8 KV cache applies on %s: %v, want %v", g.Name, got, tt.fp8)
			}
			r := Plan(w, g, fix.FrameworkVLLM)
			if got := slices.Contains(fixIDs(r.Stages), fix.FP8KVCache); got && !tt.fp8 {
				t.Errorf("plan on %s proposes an fp8 KV cache", g.Name)
			}
		})
	}
}

func TestPlanSnippetsFollowTheFramework(t *testing.T) {
	// Plain data parallel, as asked with ddp: sharding is the fix.
	w := memory.Workload{Model: mustModel(t, "llama-2-13b"), Method: memory.MethodFull, Precision: memory.PrecisionMixedBF16, Optimizer: memory.OptimizerAdamW, Batch: 4, SeqLen: 4096, GPUs: 8,
		Sharding: memory.ShardingDDP}
	gpu := mustGPU(t, "a100")
	tests := []struct {
		fw   fix.Framework
		lang string // of the ZeRO fix
		want string // in the ZeRO fix's snippet
	}{
		{fix.FrameworkUnknown, "python", "fully_shard"},
		{fix.FrameworkPyTorch, "python", "fully_shard"},
		{fix.FrameworkHF, "python", `deepspeed="ds_config.json"`},
		{fix.FrameworkDeepSpeed, "json", `"stage": `},
		{fix.FrameworkLightning, "python", `strategy="deepspeed_stage_`},
		{fix.FrameworkJAX, "python", "NamedSharding"},
		{fix.FrameworkKeras, "python", "no keras idiom"},
	}
	for _, tt := range tests {
		t.Run(string(tt.fw), func(t *testing.T) {
			r := Plan(w, gpu, tt.fw)
			var zero *fix.Fix
			for _, s := range r.Stages {
				for i, f := range s.Fixes {
					if strings.HasPrefix(f.ID, "zero-") {
						zero = &s.Fixes[i]
					}
				}
			}
			if zero == nil {
				t.Fatalf("no ZeRO fix for 13B full FT on 8 GPUs: %v", fixIDs(r.Stages))
			}
			if zero.SnippetLang != tt.lang || !strings.Contains(zero.Snippet, tt.want) {
				t.Errorf("%s snippet (%s) %q lacks %q", zero.ID, zero.SnippetLang, zero.Snippet, tt.want)
			}
		})
	}
}

func TestPlanVLLMSnippetsAreCommands(t *testing.T) {
	w := memory.Workload{Model: mustModel(t, "llama-3.1-8b"), Method: memory.MethodInference, Precision: memory.PrecisionBF16, Batch: 1, SeqLen: 131072, Engine: "vllm"}
	r := Plan(w, mustGPU(t, "l4"), fix.FrameworkVLLM)
	if len(r.Stages) == 0 {
		t.Fatal("no stages for 8B at 128k on an L4")
	}
	for _, s := range r.Stages {
		for _, f := range s.Fixes {
			if f.SnippetLang != "bash" || !strings.HasPrefix(f.Snippet, "vllm serve meta-llama/Llama-3.1-8B") {
				t.Errorf("fix %s: %s snippet %q, want a vllm serve command", f.ID, f.SnippetLang, f.Snippet)
			}
		}
	}
}

// TestPlanRandomWorkloads runs the planner on random workloads: it never
// panics and every plan keeps the invariants.
func TestPlanRandomWorkloads(t *testing.T) {
	models := catalog.Models()
	gpus := catalog.GPUs()
	methods := []memory.Method{memory.MethodFull, memory.MethodLoRA, memory.MethodQLoRA, memory.MethodFreeze, memory.MethodInference}
	precisions := []memory.Precision{memory.PrecisionFP32, memory.PrecisionFP16, memory.PrecisionBF16, memory.PrecisionMixedBF16, memory.PrecisionMixedFP16, memory.PrecisionInt8, memory.PrecisionNF4}
	optims := []memory.Optimizer{memory.OptimizerAdamW, memory.OptimizerAdamW8bit, memory.OptimizerPagedAdamW8bit, memory.OptimizerAdafactor, memory.OptimizerSGD}
	rng := rand.New(rand.NewPCG(1, 2))
	n := 300
	if testing.Short() {
		n = 50
	}
	for i := 0; i < n; i++ {
		w := memory.Workload{
			Model:     models[rng.IntN(len(models))],
			Method:    methods[rng.IntN(len(methods))],
			Precision: precisions[rng.IntN(len(precisions))],
			Optimizer: optims[rng.IntN(len(optims))],
			Batch:     1 + rng.IntN(64),
			SeqLen:    256 << rng.IntN(9),
			GPUs:      1 << rng.IntN(4),
			Attention: []memory.Attention{memory.AttentionFlash, memory.AttentionEager}[rng.IntN(2)],
			Engine:    []string{"", "hf", "vllm"}[rng.IntN(3)],
		}
		if w.Method != memory.MethodInference {
			w.Engine = ""
		}
		gpu := gpus[rng.IntN(len(gpus))]
		r := Plan(w, gpu, fix.FrameworkUnknown)
		t.Run("", func(t *testing.T) { checkInvariants(t, memory.Resolve(w), gpu, r) })
	}
}

func BenchmarkPlan(b *testing.B) {
	cases := []struct {
		name string
		w    memory.Workload
		gpu  string
	}{
		{"7b-full-a100", memory.Workload{Model: mustModel(b, "llama-2-7b"), Method: memory.MethodFull, Batch: 8, SeqLen: 2048}, "a100"},
		{"7b-lora-4090", memory.Workload{Model: mustModel(b, "llama-2-7b"), Method: memory.MethodLoRA, Batch: 8, SeqLen: 4096}, "4090"},
		{"70b-vllm-t4", memory.Workload{Model: mustModel(b, "llama-2-70b"), Method: memory.MethodInference, Batch: 1, SeqLen: 4096, Engine: "vllm"}, "t4"},
	}
	for _, c := range cases {
		gpu := mustGPU(b, c.gpu)
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				Plan(c.w, gpu, fix.FrameworkHF)
			}
		})
	}
}

func TestDivisorsBelow(t *testing.T) {
	tests := []struct {
		n    int
		want []int
	}{
		{1, nil},
		{2, []int{1}},
		{8, []int{4, 2, 1}},
		{12, []int{6, 4, 3, 2, 1}},
		{49, []int{7, 1}},
		{720720, []int{360360, 240240, 180180, 144144, 120120, 102960, 90090, 80080, 72072, 65520, 60060, 55440, 51480, 48048, 45045, 1}},
	}
	for _, tt := range tests {
		if got := divisorsBelow(tt.n); !slices.Equal(got, tt.want) {
			t.Errorf("divisorsBelow(%d) = %v, want %v", tt.n, got, tt.want)
		}
	}
}

// TestCandidatesAreInTheCatalogue: every fix the planner can emit is a fix
// of the one catalogue (advisor/fix), so /vram and the OOM diagnosis name
// it the same.
func TestCandidatesAreInTheCatalogue(t *testing.T) {
	all := append(append(append([]*candidate{}, trainingCandidates...), inferenceCandidates...), &zero3ScaleOut, &tensorParallel)
	for _, c := range all {
		d, ok := fix.Lookup(c.id)
		if !ok {
			t.Errorf("planner fix %q is not in the catalogue", c.id)
			continue
		}
		if c.level() != d.Level {
			t.Errorf("%s: level %d, the catalogue says %d", c.id, c.level(), d.Level)
		}
	}
}
