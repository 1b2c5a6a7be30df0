package serving_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/advisor/arch"
	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/serving"
	"github.com/vrambot/vrambot/internal/errs"
)

func mustModel(t testing.TB, name string) arch.Model {
	t.Helper()
	m, ok := catalog.LookupModel(name)
	if !ok {
		t.Fatalf("no model %q", name)
	}
	return m
}

func mustGPU(t testing.TB, name string) catalog.GPU {
	t.Helper()
	g, ok := catalog.LookupGPU(name)
	if !ok {
		t.Fatalf("no GPU %q", name)
	}
	return g
}

// TestSize checks users= answers against the same arithmetic: the
// configuration Size returns holds the load, and every configuration it
// tries before (fewer GPUs, or the same GPUs with less change) does not.
func TestSize(t *testing.T) {
	tests := []struct {
		model, gpu string
		users, seq int
		wantTP     int
		wantKV     string
		wantW      string
	}{
		{"llama-3.1-8b", "h100", 32, 8192, 1, "auto", serving.WeightsAsGiven},
		{"llama-3.1-8b", "h100", 64, 8192, 1, "fp8", serving.WeightsAsGiven},
		{"llama-3.1-8b", "a100", 64, 8192, 1, "auto", serving.WeightsInt4},
		{"llama-3.1-8b", "4090", 4, 8192, 1, "auto", serving.WeightsAsGiven},
		{"llama-3.1-8b", "4090", 8, 8192, 1, "fp8", serving.WeightsAsGiven},
		// One GPU with a 4-bit checkpoint beats two: fewest GPUs first.
		{"llama-3.1-70b", "h100", 16, 8192, 1, "fp8", serving.WeightsInt4},
		{"llama-3.1-70b", "a100", 8, 32768, 2, "auto", serving.WeightsInt4},
		{"llama-3.1-70b", "a100", 4, 8192, 1, "auto", serving.WeightsInt4},
		{"llama-3.1-70b", "h200", 4, 8192, 1, "auto", serving.WeightsFP8},
		{"llama-3.1-8b", "l4", 2, 8192, 1, "auto", serving.WeightsAsGiven},
		{"qwen2.5-72b", "h200", 1, 32768, 1, "auto", serving.WeightsFP8},
	}
	for _, tt := range tests {
		d := serving.Deployment{Engine: serving.EngineVLLM, Model: mustModel(t, tt.model), GPU: mustGPU(t, tt.gpu), MaxModelLen: tt.seq}
		s, ok := serving.Size(d, tt.users)
		name := tt.model + " " + tt.gpu
		if !ok {
			t.Errorf("%s: nothing holds %d × %d", name, tt.users, tt.seq)
			continue
		}
		if s.TP != tt.wantTP || s.KVCacheDtype != tt.wantKV || s.Weights != tt.wantW {
			t.Errorf("%s, %d × %d: tp=%d kv=%s weights=%s; want tp=%d kv=%s weights=%s", name, tt.users, tt.seq, s.TP, s.KVCacheDtype, s.Weights, tt.wantTP, tt.wantKV, tt.wantW)
		}
		if !s.Result.Holds(tt.users) || s.Concurrency < float64(tt.users) {
			t.Errorf("%s: the sized result holds %.2f, fewer than %d", name, s.Concurrency, tt.users)
		}
		// Fewer GPUs, with every KV and weight change, do not hold it.
		for _, tp := range serving.ValidTPDegrees(d.Model, s.TP-1) {
			for _, kv := range []string{serving.KVAuto, serving.KVFP8} {
				for _, q := range []*arch.Quantization{nil, serving.FP8Checkpoint(), serving.Int4Checkpoint()} {
					if (kv == serving.KVFP8 || q == serving.FP8Checkpoint()) && !d.GPU.FP8 {
						continue
					}
					nd := d
					nd.TP, nd.KVCacheDtype = tp, kv
					nd.Model.Quant = q
					if serving.Plan(nd).Holds(tt.users) {
						t.Errorf("%s: tp=%d kv=%q quant=%v already holds %d", name, tp, kv, q != nil, tt.users)
					}
				}
			}
		}
	}
}

// TestRequirement: the smallest GPU that holds the load, to 64 MiB.
func TestRequirement(t *testing.T) {
	for _, users := range []int{1, 8, 64} {
		d := serving.Deployment{Engine: serving.EngineVLLM, Model: mustModel(t, "llama-3.1-8b"), GPU: catalog.GPU{BF16: true}, MaxModelLen: 8192}
		bytes, r, ok := serving.Requirement(d, users)
		if !ok || !serving.HoldsLoad(users)(r) || r.TotalMemoryBytes != bytes {
			t.Fatalf("%d users: %d bytes, ok %v, holds %v", users, bytes, ok, r.Holds(users))
		}
		smaller := d
		smaller.GPU.UsableBytes = bytes - 64<<20
		if serving.Plan(smaller).Holds(users) {
			t.Errorf("%d users: %d bytes is not the smallest", users, bytes)
		}
	}
	// More users never need less memory.
	d := serving.Deployment{Engine: serving.EngineVLLM, Model: mustModel(t, "llama-3.1-8b"), MaxModelLen: 4096}
	var last int64
	for users := 1; users <= 512; users *= 2 {
		n, _, ok := serving.Requirement(d, users)
		if !ok || n < last {
			t.Fatalf("%d users need %d bytes, fewer than %d", users, n, last)
		}
		last = n
	}
}

// TestCheckTP: a degree that does not split the heads gets the engine's
// words and the nearest degrees that work.
func TestCheckTP(t *testing.T) {
	llama := mustModel(t, "llama-3.1-8b")
	err := serving.CheckTP(serving.EngineVLLM, llama, 3)
	if err == nil || !strings.Contains(err.Error(), "Total number of attention heads (32) must be divisible by tensor parallel size (3)") || !strings.Contains(err.Error(), "tp=2 or tp=4") {
		t.Errorf("vLLM tp=3: %v", err)
	}
	if errs.KindOf(err) != errs.Invalid {
		t.Errorf("kind %v", errs.KindOf(err))
	}
	if err := serving.CheckTP(serving.EngineTGI, llama, 3); err == nil || !strings.Contains(err.Error(), "`num_heads` must be divisible by `num_shards`") {
		t.Errorf("TGI tp=3: %v", err)
	}
	for _, tp := range []int{1, 2, 4, 8, 16, 32} {
		if err := serving.CheckTP(serving.EngineVLLM, llama, tp); err != nil {
			t.Errorf("tp=%d: %v", tp, err)
		}
	}
	// Qwen2.5-7B: 28 heads, 4 KV heads — 8 splits neither; 28 splits both
	// but not its 18,944-wide MLP, so 4 is the only degree near.
	qwen := mustModel(t, "qwen2.5-7b")
	if err := serving.CheckTP(serving.EngineVLLM, qwen, 8); err == nil || !strings.Contains(err.Error(), "use tp=4") || strings.Contains(err.Error(), "tp=28") {
		t.Errorf("qwen2.5-7b tp=8: %v", err)
	}
	if err := serving.CheckTP(serving.EngineVLLM, qwen, 28); err == nil || !strings.Contains(err.Error(), "18944 is not divisible by 28") {
		t.Errorf("qwen2.5-7b tp=28: %v", err)
	}
	if err := serving.CheckTP(serving.EngineLlamaCpp, llama, 3); err != nil {
		t.Errorf("llama.cpp splits layers, not heads: %v", err)
	}
	var target *errs.Error
	_ = errors.As(err, &target)
}

// TestCheckTPQuantGroups: a GPTQ/AWQ checkpoint's row-parallel widths must
// split into whole groups per rank, as its kernels require; the check
// reads the checkpoint's own widths (its config.json), which official
// releases pad, and a format only named in the query is not held to it.
func TestCheckTPQuantGroups(t *testing.T) {
	awq := func(intermediate int, source string) arch.Model {
		m := mustModel(t, "qwen2.5-72b")
		m.IntermediateSize = intermediate
		q, _ := arch.Scheme("awq")
		q.Source = source
		m.Quant = q
		return m
	}
	base := awq(29568, arch.SourceCheckpointConfig) // 29,568 / 2 = 14,784: 115.5 groups
	if err := serving.CheckTP(serving.EngineVLLM, base, 2); err == nil || !strings.Contains(err.Error(), "not aligned with the quantized weight shape") {
		t.Errorf("unpadded AWQ tp=2: %v", err)
	}
	if err := serving.CheckTP(serving.EngineVLLM, base, 1); err != nil {
		t.Errorf("unpadded AWQ tp=1: %v", err)
	}
	padded := awq(29696, arch.SourceCheckpointConfig) // Qwen's release: 29,696 / 8 = 29 groups
	for _, tp := range []int{2, 4, 8} {
		if err := serving.CheckTP(serving.EngineVLLM, padded, tp); err != nil {
			t.Errorf("padded AWQ tp=%d: %v", tp, err)
		}
		if err := serving.CheckTP(serving.EngineVLLM, awq(29568, "precision=awq"), tp); err != nil {
			t.Errorf("AWQ named in the query, tp=%d: %v", tp, err)
		}
	}
}

// TestChanges: each change listed makes it start on its own; the GPU
// asked comes before a bigger one.
func TestChanges(t *testing.T) {
	d := serving.Deployment{Engine: serving.EngineVLLM, Model: mustModel(t, "llama-3.1-8b"), GPU: mustGPU(t, "4090")}
	r := serving.Plan(d)
	if r.Starts {
		t.Fatal("llama-3.1-8b at its 131k context starts on a 4090?")
	}
	changes := serving.Changes(r, func(r serving.Result) bool { return r.Starts }, true, catalog.GPUs())
	if len(changes) < 3 {
		t.Fatalf("changes %+v", changes)
	}
	// Issue 16: a --max-model-len at most vLLM's estimate and within 20%
	// of it (32768 for 37728), not a fixed 8192.
	fits := r.MaxModelLenThatFits
	if first := changes[0]; first.ID != serving.ChangeMaxModelLen || first.Result.MaxModelLen > fits || float64(first.Result.MaxModelLen) < 0.8*float64(fits) ||
		!strings.Contains(first.Snippet, fmt.Sprintf("--max-model-len %d", first.Result.MaxModelLen)) {
		t.Errorf("first change %s %q (context %d), want a --max-model-len within 20%% under vLLM's estimate %d", first.ID, first.Snippet, first.Result.MaxModelLen, fits)
	}
	if last := changes[len(changes)-1]; last.ID != serving.ChangeBiggerGPU {
		t.Errorf("last change %s, want a bigger GPU", last.ID)
	}
	for _, c := range changes {
		if !c.Result.Starts {
			t.Errorf("%s does not make it start", c.ID)
		}
		if c.Result.MaxModelLen < 1024 {
			t.Errorf("%s: context %d", c.ID, c.Result.MaxModelLen)
		}
	}
}

// TestStartupFreeMemory: V1 refuses a budget larger than what an idle GPU
// has free beside its CUDA context (request_memory), says so in its own
// words, and the change offered is the highest utilisation that passes;
// just under the line it starts, with the risk stated; V0 has no check.
func TestStartupFreeMemory(t *testing.T) {
	tests := []struct {
		gpu    string
		util   float64
		gen    serving.Generation
		starts bool
		risk   bool // the note that vLLM may refuse
	}{
		{"4090", 0.95, "", true, false},
		{"4090", 0.98, "", true, true},
		{"4090", 0.99, "", false, false},
		{"4090", 1.0, "", false, false},
		{"4090", 0.99, serving.GenerationV0, true, false},
		{"h100", 0.99, "", true, false},
		{"h100", 1.0, "", false, false},
		// GB10's unified memory: the host keeps at least 8 GiB of the 121.69
		// CUDA counts, and the recipes' 0.85 is what passes surely.
		{"gb10", 0.85, "", true, false},
		{"gb10", 0.90, "", true, true},
		{"gb10", 0.93, "", true, true},
		{"gb10", 0.94, "", false, false},
		{"gb10", 0.94, serving.GenerationV0, true, false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s-%.2f-%s", tc.gpu, tc.util, tc.gen), func(t *testing.T) {
			d := serving.Deployment{Engine: serving.EngineVLLM, Model: mustModel(t, "llama-3.1-8b"), GPU: mustGPU(t, tc.gpu),
				MemoryFraction: tc.util, MaxModelLen: 8192, Generation: tc.gen}
			r := serving.Plan(d)
			if r.Starts != tc.starts {
				t.Fatalf("starts %v (%s %s), want %v", r.Starts, r.Failure, r.Error, tc.starts)
			}
			risk := false
			for _, a := range r.Assumptions {
				risk = risk || strings.Contains(a, "may refuse to start")
			}
			if risk != tc.risk {
				t.Errorf("risk noted %v, want %v (%q)", risk, tc.risk, r.Assumptions)
			}
			if tc.starts {
				return
			}
			if r.Failure != serving.FailStartupMemory || !strings.HasPrefix(r.Error, "ValueError: Free memory on device cuda:0 (") || r.KVCacheTokens != 0 {
				t.Errorf("failure %s %q, %d KV tokens", r.Failure, r.Error, r.KVCacheTokens)
			}
			changes := serving.Changes(r, func(r serving.Result) bool { return r.Starts }, true, catalog.GPUs())
			if len(changes) == 0 || changes[0].ID != serving.ChangeLowerGPUUtilization {
				t.Fatalf("changes %+v, want a lower gpu_memory_utilization first", changes)
			}
			safe := serving.SafeUtilization(d.GPU)
			if c := changes[0]; !c.Result.Starts || c.Result.MemoryFraction != safe || safe >= tc.util ||
				!strings.Contains(c.Snippet, fmt.Sprintf("--gpu-memory-utilization %v", safe)) {
				t.Errorf("change %q at %.2f (starts %v), want %.2f", c.Snippet, c.Result.MemoryFraction, c.Result.Starts, safe)
			}
		})
	}
}

// TestPascalIsNotOffered: vLLM, SGLang and TGI need compute capability
// 7.0 or newer, so Pascal cards are planned as asked, with the warning, but
// never offered; llama.cpp runs on them.
func TestPascalIsNotOffered(t *testing.T) {
	for _, tc := range []struct {
		gpu  string
		e    serving.Engine
		want bool
	}{
		{"p40", serving.EngineVLLM, false}, {"p100", serving.EngineSGLang, false}, {"1080ti", serving.EngineTGI, false},
		{"p40", serving.EngineLlamaCpp, true}, {"v100", serving.EngineVLLM, true}, {"t4", serving.EngineVLLM, true}, {"mi300x", serving.EngineVLLM, true},
	} {
		if got := tc.e.Supports(mustGPU(t, tc.gpu)); got != tc.want {
			t.Errorf("%s supports %s: %v, want %v", tc.e, tc.gpu, got, tc.want)
		}
	}
	d := serving.Deployment{Engine: serving.EngineVLLM, Model: mustModel(t, "llama-3.2-1b"), GPU: mustGPU(t, "p40"), MaxModelLen: 4096}
	r := serving.Plan(d)
	if !r.Starts || !slices.ContainsFunc(r.Assumptions, func(a string) bool { return strings.Contains(a, "compute capability 7.0 and newer") }) {
		t.Errorf("P40: starts %v, assumptions %q", r.Starts, r.Assumptions)
	}
	sized := serving.SizeAll(d, 8, catalog.GPUs())
	if len(sized) == 0 {
		t.Fatal("no GPU sized")
	}
	for _, s := range sized {
		if g, _ := catalog.LookupGPU(s.GPUKey); g.ComputeCapability > 0 && g.ComputeCapability < 7 {
			t.Errorf("%s offered for vLLM", s.GPUKey)
		}
	}
}

// TestEngines: each engine's own terms and defaults.
func TestEngines(t *testing.T) {
	llama := mustModel(t, "llama-3.1-8b")
	g := mustGPU(t, "4090")
	sg := serving.Plan(serving.Deployment{Engine: serving.EngineSGLang, Model: llama, GPU: g, MaxModelLen: 16384})
	wantTokens := (0.88*float64(g.UsableBytes) - float64(sg.WeightsBytes) - float64(sg.NonTorchBytes)) / (32 * 2 * 8 * 128 * 2)
	if !sg.Starts || sg.MemoryFraction != 0.88 || math.Abs(float64(sg.KVCacheTokens)-wantTokens) > 1 {
		t.Errorf("SGLang: starts %v, mem_fraction_static %v, tokens %d (want %.0f)", sg.Starts, sg.MemoryFraction, sg.KVCacheTokens, wantTokens)
	}
	if !strings.Contains(sg.Log[1].Text, "KV Cache is allocated. #tokens:") {
		t.Errorf("SGLang line %q", sg.Log[1].Text)
	}
	// SGLang's log in vllm-project/vllm#21348: Qwen3-235B-A22B-FP8 on 4×H100
	// at mem_fraction_static 0.93, "#tokens: 367404" (the point the
	// preload estimate is set by, so a check of the formula, not of it).
	fp8, _ := arch.Scheme("fp8")
	qwen := mustModel(t, "qwen3-235b-a22b")
	qwen.Quant = fp8
	big4 := serving.Plan(serving.Deployment{Engine: serving.EngineSGLang, Model: qwen, GPU: mustGPU(t, "h100"), TP: 4, MemoryFraction: 0.93})
	if got := float64(big4.KVCacheTokens); math.Abs(got-367404)/367404 > 0.03 {
		t.Errorf("SGLang Qwen3-235B-A22B-FP8 on 4×H100: %.0f tokens, logged 367,404", got)
	}
	tgi := serving.Plan(serving.Deployment{Engine: serving.EngineTGI, Model: llama, GPU: g})
	if !tgi.Starts || tgi.MaxModelLen >= 131072 || int64(tgi.MaxModelLen) != tgi.KVCacheTokens {
		t.Errorf("TGI without max_total_tokens should lower it to what fits: starts %v, %d of %d tokens", tgi.Starts, tgi.MaxModelLen, tgi.KVCacheTokens)
	}
	tgi = serving.Plan(serving.Deployment{Engine: serving.EngineTGI, Model: llama, GPU: g, MaxModelLen: 131072})
	if tgi.Starts || tgi.MaxModelLenThatFits == 0 {
		t.Errorf("TGI with max_total_tokens 131072 on a 4090 starts?")
	}
	big := mustModel(t, "llama-3.1-70b")
	oll := serving.Plan(serving.Deployment{Engine: serving.EngineOllama, Model: big, GPU: g})
	if !oll.Starts || oll.GPULayers <= 0 || oll.GPULayers >= oll.Layers || oll.MaxModelLen != 4096 {
		t.Errorf("Ollama 70B on a 4090: %d/%d layers, num_ctx %d", oll.GPULayers, oll.Layers, oll.MaxModelLen)
	}
	two := serving.Plan(serving.Deployment{Engine: serving.EngineOllama, Model: big, GPU: g, PP: 2})
	if two.GPULayers <= oll.GPULayers {
		t.Errorf("two GPUs hold %d layers, one %d", two.GPULayers, oll.GPULayers)
	}
	q8 := serving.Plan(serving.Deployment{Engine: serving.EngineLlamaCpp, Model: llama, GPU: g, KVCacheDtype: serving.KVInt8, MaxModelLen: 8192})
	f16 := serving.Plan(serving.Deployment{Engine: serving.EngineLlamaCpp, Model: llama, GPU: g, MaxModelLen: 8192})
	if r := float64(q8.KVCacheAvailableBytes) / float64(f16.KVCacheAvailableBytes); math.Abs(r-34.0/64) > 1e-6 {
		t.Errorf("q8_0 KV is %.4f of f16, want 34/64", r)
	}
	forced := serving.Plan(serving.Deployment{Engine: serving.EngineLlamaCpp, Model: big, GPU: g, GPULayers: 81})
	if forced.Starts || !strings.Contains(forced.Error, "cudaMalloc failed: out of memory") {
		t.Errorf("-ngl 81 of a 70B on a 4090: %v %q", forced.Starts, forced.Error)
	}
}

// TestSpeed: at one sequence decode is memory-bound: tokens/s = bandwidth
// × efficiency / bytes read per step; the cost follows the price.
func TestSpeed(t *testing.T) {
	g := mustGPU(t, "h100")
	r := serving.Plan(serving.Deployment{Engine: serving.EngineVLLM, Model: mustModel(t, "llama-3.1-8b"), GPU: g, MaxModelLen: 2048})
	s := serving.Speed(r, 1)
	bytes := float64(r.WeightsBytes) + 1024*131072
	want := g.BandwidthGBps * 1e9 * serving.DecodeBandwidthEfficiency / bytes
	if s.Bound != "memory bandwidth" || math.Abs(s.DecodeTokensPerS-want) > 1e-6*want {
		t.Errorf("decode %v tok/s (%s), want %v", s.DecodeTokensPerS, s.Bound, want)
	}
	if s64 := serving.Speed(r, 64); s64.DecodeTokensPerS <= s.DecodeTokensPerS || s64.PerSequence >= s.PerSequence {
		t.Errorf("64 sequences: %v tok/s, %v each", s64.DecodeTokensPerS, s64.PerSequence)
	}
	cost := serving.CostPerMillionTokens(2, 1, r, s)
	if want := 2 / (s.DecodeTokensPerS * 3600) * 1e6; math.Abs(cost-want) > 1e-9 {
		t.Errorf("cost %v, want %v", cost, want)
	}
	if serving.CostPerMillionTokens(2, 1, serving.Result{TP: 2}, s) != 0 {
		t.Error("one GPU cannot hold a tp=2 replica")
	}
}

func BenchmarkPlanVLLM(b *testing.B) {
	d := serving.Deployment{Engine: serving.EngineVLLM, Model: mustModel(b, "llama-3.1-70b"), GPU: mustGPU(b, "h100"), TP: 4}
	for b.Loop() {
		serving.Plan(d)
	}
}

// BenchmarkSizeAll is the users= sizing over every GPU of the catalog.
func BenchmarkSizeAll(b *testing.B) {
	d := serving.Deployment{Engine: serving.EngineVLLM, Model: mustModel(b, "llama-3.1-70b"), GPU: mustGPU(b, "h100"), MaxModelLen: 8192}
	gpus := catalog.GPUs()
	for b.Loop() {
		serving.SizeAll(d, 64, gpus)
	}
}
