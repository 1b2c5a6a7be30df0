package vram_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/advisor/memory"
	"github.com/vrambot/vrambot/command/vram"
	"github.com/vrambot/vrambot/query"

	"github.com/vrambot/vrambot/advisor/fix"

	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/internal/golden"
	"github.com/vrambot/vrambot/internal/pricetest"
	"github.com/vrambot/vrambot/pricing"
	"github.com/vrambot/vrambot/reply"
)

// The price cache is the production OfferFinder.
var _ vram.OfferFinder = (*pricing.Book)(nil)

// newVRAMOffers is the fixed offer book of these tests (internal/pricetest).
func newVRAMOffers() *pricetest.Book {
	return &pricetest.Book{Offers: offerBook, Provenance: []string{"prices: embedded snapshot of 2026-01-21 (offline default)"}}
}

var offerBook = []pricing.Offer{
	{Provider: "vast", InstanceType: "1x RTX 4090", GPU: "GeForce RTX 4090", GPUKey: "RTX4090", GPUCount: 1, GPUMemoryBytes: 24564 << 20, PricePerHourUSD: 0.35, PricePerGPUHourUSD: 0.35, Region: "us", AsOf: "2026-11-29", AgeDays: 2, Source: "embedded snapshot"},
	{Provider: "aws", InstanceType: "g6e.xlarge", GPU: "L40S", GPUKey: "L40S", GPUCount: 1, GPUMemoryBytes: 48 << 30, PricePerHourUSD: 1.861, PricePerGPUHourUSD: 1.861, Region: "us-east-1", AsOf: "2026-11-29", AgeDays: 2, Source: "embedded snapshot"},
	{Provider: "lambda", InstanceType: "gpu_1x_a100_sxm4_80gb", GPU: "A100 80GB", GPUKey: "A100-80GB", GPUCount: 1, GPUMemoryBytes: 80 << 30, PricePerHourUSD: 1.79, PricePerGPUHourUSD: 1.79, Region: "us-east-1", AsOf: "2026-11-29", AgeDays: 2, Source: "embedded snapshot"},
	{Provider: "lambda", InstanceType: "gpu_8x_h100_sxm5", GPU: "H100 80GB SXM", GPUKey: "H100-SXM", GPUCount: 8, GPUMemoryBytes: 80 << 30, PricePerHourUSD: 23.92, PricePerGPUHourUSD: 2.99, Region: "us-east-1", AsOf: "2026-11-29", AgeDays: 2, Source: "embedded snapshot"},
}

var goldenQueries = []struct {
	name  string
	query string
}{
	{"lora-a100", "7b lora a100"},
	{"full-a100-tokens", "llama-2-7b full a100 tokens=2B"},
	{"qlora-4090", "llama-3-8b qlora bs=4 seq=4096 4090"},
	{"lora-budget-24gb", "meta-llama/Llama-2-7b-hf lora bs=8 seq=4096 24gb framework=hf"},
	{"vllm-l4", "llama-3.1-8b engine=vllm l4"},
	{"inference-70b-v100", "llama-2-70b v100"},
	{"fsdp-selective-torchtune", "llama-3.1-8b full 8xh100 fsdp gc=selective bs=2 seq=8192 framework=torchtune tokens=2B"},
	{"qlora-2x3090-zero3", "llama-3.1-70b qlora 2x3090 gc=on zero=3"},
	{"full-v100-fp16", "llama-3.2-1b full v100 bs=4 seq=1024 tokens=500M"},
	{"vllm-72b-4xa100", "qwen2.5-72b inference engine=vllm 4xa100"},
	{"vllm-users-h100", "llama-3.1-8b users=64 seq=8k h100"},
	{"vllm-4090-32k", "llama-3.1-8b engine=vllm seq=32k 4090"},
	{"sglang-4090", "llama-3.1-8b engine=sglang seq=16k 4090"},
	{"ollama-70b-4090", "llama-3.1-70b engine=ollama 4090"},
	// Issue 22: a yes-question, a no-question with its smallest fix, a
	// serving users= answer, and what an apply button gives (apply-result:
	// the second fix's button of "llama-3.1-8b full 4090", fixes 1 and 2).
	{"question-yes-with", "can I finetune llama 3 8b on a 4090?"},
	{"question-no", "can I full finetune llama 3 8b on a 4090?"},
	{"users-50-llama-3.3-70b", "what gpu do I need to serve llama 3.3 70b for 50 users"},
	{"apply-result", "llama-3.1-8b lora 4090 gc=on"},
}

func TestVRAMGolden(t *testing.T) {
	for _, tt := range goldenQueries {
		t.Run(tt.name, func(t *testing.T) {
			r, err := vram.Estimate(context.Background(), tt.query, vram.Deps{Offers: newVRAMOffers()})
			if err != nil {
				t.Fatalf("VRAM(%q): %v", tt.query, err)
			}
			golden.Check(t, tt.name+".txt", []byte(reply.Text(r.Reply)))
			js, err := json.MarshalIndent(r.Result, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tt.name+".json", append(js, '\n'))
		})
	}
}

func TestVRAMReply(t *testing.T) {
	offers := newVRAMOffers()
	r, err := vram.Estimate(context.Background(), "llama-2-7b full a100 tokens=2B", vram.Deps{Offers: offers})
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != "vram" || !r.Ephemeral {
		t.Errorf("kind %q, ephemeral %v", r.Kind, r.Ephemeral)
	}
	if r.Title != "llama-2-7b · full fine-tuning · A100 80GB" {
		t.Errorf("title %q", r.Title)
	}
	if len(r.Actions) != 1 || r.Actions[0].ID != vram.ShareActionID || r.Actions[0].Text != "Share in channel" || r.Actions[0].Value != "llama-2-7b full a100 tokens=2B" {
		t.Errorf("actions %+v", r.Actions)
	}
	res := r.Result
	if res.Fits || !strings.HasPrefix(r.Summary, "Does not fit") {
		t.Errorf("7B full FT in AMP fits an A100 80GB? summary %q", r.Summary)
	}
	if len(res.Stages) == 0 {
		t.Fatal("no stages")
	}
	// The requirement is the plan's final workload, not the one asked.
	req := offers.Last()
	lastStage := res.Stages[len(res.Stages)-1]
	final := *lastStage.Fixes[len(lastStage.Fixes)-1].TotalAfterBytes
	if req.MemoryPerGPUBytes != final || req.GPUCount != 1 || req.RequestedGPU != "A100-80GB" {
		t.Errorf("requirement %+v, want %d bytes on 1 GPU, A100-80GB requested", req, final)
	}
	// The plan's final workload: full fine-tuning (6N) with whatever
	// checkpointing the fixes added (+2N).
	perToken := 6.0
	for _, st := range res.Stages {
		for _, f := range st.Fixes {
			if f.ID == fix.GradCheckpointing {
				perToken = 8
			}
		}
	}
	if want := perToken * float64(res.Workload.Params) * 2e9; math.Abs(req.TrainFLOPs-want) > 1e-9*want {
		t.Errorf("TrainFLOPs %g, want %g × params × tokens = %g", req.TrainFLOPs, perToken, want)
	}
	if res.CostToFinish == nil || res.CostToFinish.FLOPs != req.TrainFLOPs || !strings.Contains(res.CostToFinish.Formula, "6N") {
		t.Errorf("cost_to_finish %+v, want the requirement's FLOPs and a 6N formula", res.CostToFinish)
	}
	if req.Utilisation["RTX4090"] >= 0.4 || req.Utilisation["H100-SXM"] <= 0 || !strings.Contains(req.UtilisationNote, "torchtitan") {
		t.Errorf("utilisation %v (%q): want per GPU class with its source, consumer cards below 40%%", req.Utilisation, req.UtilisationNote)
	}
	if req.NeedBF16 {
		t.Error("a defaulted bf16 must not rule out GPUs without bf16")
	}
	if !slices.ContainsFunc(r.Context, func(s string) bool { return strings.Contains(s, "embedded snapshot") }) {
		t.Errorf("provenance missing from context %q", r.Context)
	}
	if !slices.ContainsFunc(r.Context, func(s string) bool { return strings.Contains(s, "GPU") || strings.Contains(s, "precision") }) {
		t.Errorf("assumptions missing from context %q", r.Context)
	}
}

func TestVRAMRequirement(t *testing.T) {
	tests := []struct {
		query    string
		bf16     bool
		fp8      bool
		flops    float64 // per parameter and token: 6 full, 4 LoRA, +2 checkpointing, 2 inference, 0 without tokens=
		gpus     int
		request  string
		minBytes int64
	}{
		{"7b lora a100", false, false, 0, 1, "A100-80GB", 1 << 30},
		{"7b lora a100 precision=bf16", true, false, 0, 1, "A100-80GB", 1 << 30},
		{"7b inference 4090 tokens=1e9", false, false, 2, 1, "RTX4090", 1 << 30},
		{"1b full 24gb tokens=1B gc=on", false, false, 8, 1, "", 1 << 30},
		{"1b full h100 tokens=1B gc=off", false, false, 6, 1, "H100-SXM", 1 << 30},
		{"llama-2-70b 8xh100 kv=fp8 engine=vllm", false, true, 0, 8, "H100-SXM", 1 << 30},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			f := newVRAMOffers()
			r, err := vram.Estimate(context.Background(), tt.query, vram.Deps{Offers: f})
			if err != nil {
				t.Fatal(err)
			}
			res := r.Result
			req := f.Last()
			if req.NeedBF16 != tt.bf16 || req.NeedFP8 != tt.fp8 || req.RequestedGPU != tt.request || req.GPUCount < tt.gpus || req.MemoryPerGPUBytes < tt.minBytes {
				t.Errorf("requirement %+v", req)
			}
			if want := tt.flops * float64(res.Workload.Params) * float64(res.Workload.Tokens); math.Abs(req.TrainFLOPs-want) > 1e-9*want {
				t.Errorf("TrainFLOPs %g, want %g", req.TrainFLOPs, want)
			}
		})
	}
}

func TestVRAMBadInput(t *testing.T) {
	for _, q := range []string{"", "7b lorra", "7b bs=-4", "7b a100 h100", strings.Repeat("x", 5000)} {
		t.Run(q[:min(len(q), 20)], func(t *testing.T) {
			_, err := vram.Estimate(context.Background(), q, vram.Deps{Offers: newVRAMOffers()})
			var qe *query.Error
			if !errors.As(err, &qe) {
				t.Fatalf("VRAM(%q) error %v, want a *QueryError", q, err)
			}
		})
	}
}

// TestVRAMJSONContract checks the key names of docs/contracts.md §3 `vram --json`.
func TestVRAMJSONContract(t *testing.T) {
	r, err := vram.Estimate(context.Background(), "llama-2-7b lora a100 rank=8 targets=qv", vram.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(r.Result)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"workload", "estimate", "gpu", "fits", "headroom_bytes", "stages", "offers"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("top-level key %q missing: %s", k, js)
		}
	}
	if string(doc["stages"]) != "[]" || string(doc["offers"]) != "[]" {
		t.Errorf("stages %s, offers %s: want empty arrays, not null", doc["stages"], doc["offers"])
	}
	keys := func(raw json.RawMessage) map[string]json.RawMessage {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	w := keys(doc["workload"])
	for _, k := range []string{"model", "params", "trainable_params", "method", "precision", "optimizer", "batch", "seq_len", "grad_checkpointing", "zero_stage", "gpus", "assumptions"} {
		if _, ok := w[k]; !ok {
			t.Errorf("workload key %q missing", k)
		}
	}
	if string(w["model"]) != `"llama-2-7b"` || string(w["params"]) != "6738415616" || string(w["trainable_params"]) != "4194304" {
		t.Errorf("workload model %s params %s trainable %s: want llama-2-7b, 6738415616, 4194304 (PEFT's count)", w["model"], w["params"], w["trainable_params"])
	}
	e := keys(doc["estimate"])
	for _, k := range []string{"weights_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes", "logits_bytes", "kv_cache_bytes", "peak_allocated_bytes", "runtime_overhead_bytes", "total_bytes"} {
		if _, ok := e[k]; !ok {
			t.Errorf("estimate key %q missing", k)
		}
	}
	g := keys(doc["gpu"])
	if string(g["name"]) != `"A100 80GB"` {
		t.Errorf("gpu name %s", g["name"])
	}
	if _, ok := g["usable_bytes"]; !ok {
		t.Error("gpu.usable_bytes missing")
	}
}

func BenchmarkVRAM(b *testing.B) {
	f := newVRAMOffers()
	for b.Loop() {
		if _, err := vram.Estimate(context.Background(), "llama-3-8b qlora bs=4 seq=4096 4090", vram.Deps{Offers: f}); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzVRAM: any query gets a reply or a *QueryError, never a panic; a reply
// always has a title, a summary and its structured result.
func FuzzVRAM(f *testing.F) {
	for _, q := range goldenQueries {
		f.Add(q.query)
	}
	for _, s := range []string{"7b bs=1000000 seq=10000000", "10t full t4 bs=720720", "405b 8xmi300x zero=3 offload=param full", "7b lora seq=10m", "gpt2 inference eager bs=64",
		"llama-3.1-8b --max-model-len 8192 --gpu-memory-utilization 0.8 2xh100", "7b users=1000000 seq=16m h100", "405b engine=ollama t4", "70b engine=llama.cpp 64xl4 seq=10m",
		"7b gpu-util=0.01 engine=sglang h100", "7b engine=tgi 3xh100", "bert-large engine=vllm a100", "t5-11b engine=sglang 8xh100", "10t engine=vllm 512xh200 max-num-batched-tokens=16777216"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		r, err := vram.Estimate(context.Background(), q, vram.Deps{Offers: newVRAMOffers()})
		if err != nil {
			var qe *query.Error
			if !errors.As(err, &qe) {
				t.Fatalf("error %v is not a *QueryError", err)
			}
			return
		}
		if r.Title == "" || r.Summary == "" {
			t.Fatalf("empty title or summary for %q", q)
		}
		if r.Result.GPU.Name == "" || r.Result.Verdict == "" {
			t.Fatalf("no GPU or verdict in the result of %q", q)
		}
	})
}

// TestVRAMArchitectureFacts: the JSON states what the estimate used about
// the model, and the KV cache follows each family's per-token formula.
func TestVRAMArchitectureFacts(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		query   string
		kv      int64 // kv_cache_bytes
		active  int64 // 0: equal to params
		kinds   []string
		experts int
	}{
		// A bare 8b is today's shape: 32 layers × 8 KV heads × 128 → 128 KiB/token.
		{"8b inference engine=vllm seq=32k bs=8 h100", 32 * gib, 0, []string{"full"}, 0},
		// MLA: (512 + 64) × 2 B × 61 layers per token.
		{"deepseek-v3 inference seq=4096 bs=2 h200", 576 * 2 * 61 * 4096 * 2, 37_552_297_472, []string{"mla"}, 256},
		// gpt-oss-20b: 12 full layers grow, 12 sliding ones stop at 128 tokens.
		{"gpt-oss-20b inference seq=8192 h100", 12*2048*8192 + 12*2048*128, 4_187_440_704, []string{"sliding", "full"}, 32},
		// Qwen3-Next: 12 full layers × 2 KiB/token + 36 linear layers' fixed state.
		{"qwen3-next inference seq=16384 bs=4 h100", 12*2048*16384*4 + 36*(8192*3+32*128*128)*2*4, 3_874_929_408, []string{"linear", "full"}, 512},
		{"qwen3-8b inference seq=1000 kv=int8 h100", 36 * 2 * 8 * 128 * 1000, 0, []string{"full"}, 0},
	}
	for _, tt := range tests {
		r, err := vram.Estimate(context.Background(), tt.query, vram.Deps{})
		if err != nil {
			t.Fatalf("%s: %v", tt.query, err)
		}
		res := r.Result
		if res.Estimate.KVCacheBytes != tt.kv {
			t.Errorf("%s: kv_cache_bytes %d, want %d", tt.query, res.Estimate.KVCacheBytes, tt.kv)
		}
		want := tt.active
		if want == 0 {
			want = res.Workload.Params
		}
		if res.Workload.ActiveParams != want {
			t.Errorf("%s: active_params %d, want %d", tt.query, res.Workload.ActiveParams, want)
		}
		a := res.Workload.Architecture
		var kinds []string
		for _, g := range a.Attention {
			kinds = append(kinds, string(g.Kind))
		}
		if !slices.Equal(kinds, tt.kinds) {
			t.Errorf("%s: attention kinds %v, want %v", tt.query, kinds, tt.kinds)
		}
		if got := 0; a.Experts != nil {
			got = a.Experts.Routed
			if got != tt.experts {
				t.Errorf("%s: %d experts, want %d", tt.query, got, tt.experts)
			}
		} else if tt.experts != 0 {
			t.Errorf("%s: no experts reported", tt.query)
		}
	}
}

// TestVRAMKeepsTheUsersHardware is issue 11's planner acceptance: the
// plans keep the GPU model and count the user named and the method, reach
// a fit with the cheap changes on that hardware, and book no gradient
// memory a model does not have.
func TestVRAMKeepsTheUsersHardware(t *testing.T) {
	tests := []struct {
		query string
		gpus  int
		want  string // a fix id the plan must use
	}{
		{"llama-3.1-70b qlora 2x3090 gc=on zero=3", 2, fix.ParamOffload},
		// Issue 22: another method on the user's GPUs before an offload.
		{"llama-3.1-70b full zero=3 gpus=8 h100 gc=on", 8, fix.LoRA},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r, err := vram.Estimate(context.Background(), tt.query, vram.Deps{})
			if err != nil {
				t.Fatal(err)
			}
			res := r.Result
			var ids []string
			var last fix.Fix
			for _, st := range res.Stages {
				for _, f := range st.Fixes {
					ids = append(ids, f.ID)
					last = f
					if strings.Contains(f.Title, "more than") || strings.Contains(f.Detail, "more than the") {
						t.Errorf("fix %s adds GPUs: %q", f.ID, f.Heading())
					}
				}
			}
			if !slices.Contains(ids, tt.want) {
				t.Errorf("fixes %v, want %s on the user's %d GPUs", ids, tt.want, tt.gpus)
			}
			if last.TotalAfterBytes == nil || *last.TotalAfterBytes > res.GPU.UsableBytes {
				t.Errorf("the plan does not fit: %v", last.TotalAfterBytes)
			}
			if res.Workload.GPUs != tt.gpus || res.Workload.Method == "" {
				t.Errorf("workload on %d GPUs", res.Workload.GPUs)
			}
			if res.Workload.Method == memory.MethodQLoRA && res.Estimate.GradientsBytes > 1<<30 {
				t.Errorf("QLoRA adapters book %d bytes of gradients", res.Estimate.GradientsBytes)
			}
			if res.ErrorBand == nil || res.ErrorBand.Cases == 0 || !strings.Contains(r.Summary, "measured") {
				t.Errorf("no error band in %q / %+v", r.Summary, res.ErrorBand)
			}
		})
	}
	// QLoRA's headline fits where checkpointing alone would make it fit:
	// checkpointing is QLoRA's default, as the tools have it.
	r, err := vram.Estimate(context.Background(), "llama-3.1-8b-instruct qlora 4090", vram.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	if res := r.Result; res.Fit != memory.FitFits || !res.Workload.GradCheckpointing {
		t.Errorf("llama-3.1-8b-instruct qlora 4090: %s (checkpointing %v); want the headline to fit with QLoRA's default checkpointing", res.Fit, res.Workload.GradCheckpointing)
	}
}

// TestSeparatorOnlyWordsAreRefusedNotFatal: a word made only of separators
// once indexed an empty split (a panic found by the estimator's validation).
func TestSeparatorOnlyWordsAreRefusedNotFatal(t *testing.T) {
	for _, q := range []string{"_._", "-", "7b ._. a100", "..."} {
		if _, err := vram.Estimate(context.Background(), q, vram.Deps{}); err == nil {
			t.Errorf("Estimate(%q) accepted a query with no model word", q)
		} else if errs.KindOf(err) != errs.Invalid {
			t.Errorf("Estimate(%q) = %v (kind %v), want bad input", q, err, errs.KindOf(err))
		}
	}
}

// TestApplyButtonsDoWhatTheirRowsSay: every fix button of a lead runs the
// query with fixes 1 to n applied, and that query's estimate is the
// memory the row shows (issue 22: a button that applied one fix of three
// gave 237.3 GiB where its row said 20.6).
func TestApplyButtonsDoWhatTheirRowsSay(t *testing.T) {
	for _, q := range []string{"llama-3.1-8b full 4090", "llama-3.1-8b lora bs=8 seq=8192 4090", "7b full 24gb tokens=1B", "llama-3-70b full 4x a100", "qwen2.5-14b lora l4 bs=4"} {
		a, err := vram.Estimate(context.Background(), q, vram.Deps{})
		if err != nil {
			t.Fatal(err)
		}
		var fixes []fix.Fix
		for _, st := range a.Result.Stages {
			fixes = append(fixes, st.Fixes...)
		}
		for i, sec := range a.Sections {
			if sec.Action == nil || !strings.HasPrefix(sec.Action.ID, reply.ActionApplyPrefix) || i >= len(fixes) {
				continue
			}
			if i > 0 && sec.Action.Text != fmt.Sprintf("Apply fixes 1–%d", i+1) {
				t.Errorf("%q row %d: label %q", q, i+1, sec.Action.Text)
			}
			applied, err := vram.Estimate(context.Background(), sec.Action.Value, vram.Deps{})
			if err != nil {
				t.Errorf("%q row %d: %q refused: %v", q, i+1, sec.Action.Value, err)
				continue
			}
			shown, got := *fixes[i].TotalAfterBytes, applied.Result.Estimate.TotalBytes
			if math.Abs(float64(got-shown)) > 0.02*float64(shown) {
				t.Errorf("%q row %d shows %.1f GiB; its button %q gives %.1f GiB", q, i+1, float64(shown)/(1<<30), sec.Action.Value, float64(got)/(1<<30))
			}
		}
	}
}
