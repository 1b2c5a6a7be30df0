package vram_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/memory"
	"github.com/vrambot/vrambot/advisor/serving"
	"github.com/vrambot/vrambot/command/vram"
	"github.com/vrambot/vrambot/query"
)

func servingAnswer(t *testing.T, query string) (vram.Result, *vram.Serving) {
	t.Helper()
	r, err := vram.Estimate(context.Background(), query, vram.Deps{Offers: newVRAMOffers()})
	if err != nil {
		t.Fatalf("VRAM(%q): %v", query, err)
	}
	res := r.Result
	if res.Serving == nil {
		t.Fatalf("%q: no serving object", query)
	}
	if !strings.HasPrefix(r.Summary, res.Verdict) || !strings.Contains(res.Verdict, "vLLM") && !strings.Contains(res.Verdict, "SGLang") && !strings.Contains(res.Verdict, "TGI") && !strings.Contains(res.Verdict, "llama.cpp") && !strings.Contains(res.Verdict, "Ollama") {
		t.Errorf("%q: the summary %q does not lead with the engine's verdict %q", query, r.Summary, res.Verdict)
	}
	return res, res.Serving
}

func hasText(list []string, sub string) bool {
	return slices.ContainsFunc(list, func(s string) bool { return strings.Contains(s, sub) })
}

// TestServingIssueAnswers are the wrong answers issue 16 lists, answered
// with the engines' own arithmetic.
func TestServingIssueAnswers(t *testing.T) {
	// No tp= on 4 GPUs means tensor parallel 4 under vLLM, stated.
	res, s := servingAnswer(t, "qwen2.5-72b inference engine=vllm 4xa100")
	if s.TP != 4 || !s.Starts || !hasText(res.Workload.Assumptions, "tensor parallel across the 4 GPUs") {
		t.Errorf("qwen2.5-72b 4×A100: tp=%d starts=%v assumptions %q", s.TP, s.Starts, res.Workload.Assumptions)
	}
	if s.WeightsBytes > 40<<30 {
		t.Errorf("qwen2.5-72b 4×A100: %d bytes of weights per GPU, want a quarter of 135 GiB", s.WeightsBytes)
	}
	// One 8×H200 node with tp=8 serves Llama-3.1-405B.
	_, s = servingAnswer(t, "llama-3.1-405b inference 8xh200 engine=vllm")
	if s.TP != 8 || !s.Starts || len(s.Changes) != 0 {
		t.Errorf("llama-3.1-405b 8×H200: tp=%d starts=%v changes %+v", s.TP, s.Starts, s.Changes)
	}
	// bs=64 at 8k on an H100: vLLM starts and runs ~50 requests at once.
	res, s = servingAnswer(t, "llama-3.1-8b inference engine=vllm seq=8k bs=64 h100")
	if !res.Fits || !s.Starts || s.MaxConcurrency < 45 || s.MaxConcurrency > 60 || !strings.HasPrefix(res.Verdict, "vLLM starts:") {
		t.Errorf("llama-3.1-8b 8k bs=64 H100: fits %v, concurrency %.1f, verdict %q", res.Fits, s.MaxConcurrency, res.Verdict)
	}
	// nvidia-smi shows the budget, not a "total" of what was asked.
	if s.NvidiaSMIBytes < s.BudgetBytes || float64(s.BudgetBytes) != float64(int64(0.9*float64(s.TotalGPUMemoryBytes)+0.999)) {
		t.Errorf("budget %d of %d, nvidia-smi %d", s.BudgetBytes, s.TotalGPUMemoryBytes, s.NvidiaSMIBytes)
	}
	// seq=32k on a 4090 starts.
	_, s = servingAnswer(t, "llama-3.1-8b engine=vllm seq=32k 4090")
	if !s.Starts || s.MaxModelLen != 32768 {
		t.Errorf("llama-3.1-8b 32k 4090: starts %v at %d", s.Starts, s.MaxModelLen)
	}
	// At its 128k context it does not, in vLLM's words, with the cheapest
	// change first: a max_model_len at most vLLM's estimate, within 20%.
	res, s = servingAnswer(t, "llama-3.1-8b engine=vllm 4090")
	if s.Starts || s.MaxModelLenThatFits == nil || *s.MaxModelLenThatFits < 30000 || !strings.Contains(s.Error, "estimated maximum model length is") {
		t.Fatalf("llama-3.1-8b 128k 4090: starts %v, fits %v, error %q", s.Starts, s.MaxModelLenThatFits, s.Error)
	}
	first := s.Changes[0]
	if first.ID != serving.ChangeMaxModelLen || !strings.Contains(first.Snippet, "--max-model-len") {
		t.Errorf("first change %+v", first)
	}
	if n := first.Result.MaxModelLen; n > *s.MaxModelLenThatFits || float64(n) < 0.8*float64(*s.MaxModelLenThatFits) {
		t.Errorf("proposed max_model_len %d for vLLM's estimate %d", n, *s.MaxModelLenThatFits)
	}
	if res.Fits || len(res.Stages) == 0 || res.Stages[0].Fixes[0].ID != serving.ChangeMaxModelLen {
		t.Errorf("stages %+v", res.Stages)
	}
}

// TestTGIContextDefault: TGI v3 sizes max_total_tokens from memory when it
// is not set, so a model whose whole context does not fit starts with what
// fits; given explicitly, the same context is refused.
func TestTGIContextDefault(t *testing.T) {
	_, s := servingAnswer(t, "llama-3.1-70b inference engine=tgi 2xa100")
	if !s.Starts || s.MaxModelLen >= 131072 || int64(s.MaxModelLen) != s.KVCacheTokens {
		t.Errorf("seq not given: starts %v at max_total_tokens %d with %d KV tokens, want it lowered to what fits", s.Starts, s.MaxModelLen, s.KVCacheTokens)
	}
	_, s = servingAnswer(t, "llama-3.1-70b inference engine=tgi 2xa100 seq=131072")
	if s.Starts || s.MaxModelLenThatFits == nil || *s.MaxModelLenThatFits >= 131072 {
		t.Errorf("seq=131072: starts %v (fits %v), want refused", s.Starts, s.MaxModelLenThatFits)
	}
}

// TestServingEnginesAndKeys: the engines and keys the issue found refused.
func TestServingEnginesAndKeys(t *testing.T) {
	for _, q := range []string{
		"llama-3.1-8b engine=sglang h100", "llama-3.1-8b engine=tgi h100", "llama-3.1-8b engine=llama.cpp 4090",
		"llama-3.1-8b engine=ollama 4090", "llama-3.1-8b gpu_memory_utilization=0.5 engine=vllm h100",
		"llama-3.1-8b gpu-util=95% h100", "llama-3.1-8b --max-model-len 8192 --gpu-memory-utilization 0.8 --tensor-parallel-size 2 2xh100",
		"llama-3.1-8b mem-fraction-static=0.8 engine=sglang h100", "llama-3.1-8b max-num-seqs=64 max-num-batched-tokens=4096 h100",
	} {
		_, s := servingAnswer(t, q)
		if len(s.LogLines) == 0 {
			t.Errorf("%q: no log lines", q)
		}
	}
	_, s := servingAnswer(t, "llama-3.1-8b --max-model-len 8192 --gpu-memory-utilization 0.8 --tensor-parallel-size 2 2xh100")
	if s.Engine != "vllm" || s.MaxModelLen != 8192 || s.GPUMemoryUtilization != 0.8 || s.TP != 2 {
		t.Errorf("vLLM flags: %+v", s)
	}
	_, s = servingAnswer(t, "llama-3.1-8b max-num-seqs=64 max-num-batched-tokens=4096 h100")
	if s.MaxNumSeqs != 64 || s.MaxNumBatchedTokens != 4096 {
		t.Errorf("scheduler limits %d %d", s.MaxNumSeqs, s.MaxNumBatchedTokens)
	}
	for _, tt := range []struct{ query, token, reason string }{
		{"7b gpu-util=1.5 h100", "1.5", "out of range"},
		{"7b gpu-util=abc h100", "abc", "fraction"},
		{"7b engine=hf gpu-util=0.8 h100", "gpu-util=0.8", "serving-engine setting"},
		{"7b full users=8 a100", "users=8", "does not apply to training"},
		{"7b max-num-seqs=0 h100", "0", "positive integer"},
		{"llama-3.1-8b engine=vllm tp=3 a100", "tp=3", "Total number of attention heads (32) must be divisible by tensor parallel size (3)"},
		{"llama-3.1-8b engine=vllm 3xa100", "3 GPUs", "tp=2 or tp=4"},
		{"llama-3.1-8b engine=tgi gpu-util=0.8 h100", "gpu-util=0.8", "no such setting"},
		{"7b engine=sglang full a100", "engine=sglang", "does not train"},
		{"7b engine-version=latest engine=vllm h100", "engine-version=latest", "release"},
	} {
		_, err := vram.Estimate(context.Background(), tt.query, vram.Deps{})
		var qe *query.Error
		if err == nil || !errorsAs(err, &qe) || !strings.Contains(err.Error(), tt.reason) || qe.Token != tt.token {
			t.Errorf("%q: error %v (token %q), want %q naming %q", tt.query, err, tokenOf(qe), tt.reason, tt.token)
		}
	}
	// transformers on 4 GPUs splits the layers (device_map="auto"), stated.
	r, err := vram.Estimate(context.Background(), "llama-2-70b inference 4xa100", vram.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Result
	if res.Workload.PP != 4 || res.Workload.TP != 1 || !hasText(res.Workload.Assumptions, `device_map="auto"`) || res.Serving != nil {
		t.Errorf("transformers on 4 GPUs: tp=%d pp=%d, %q", res.Workload.TP, res.Workload.PP, res.Workload.Assumptions)
	}
}

func tokenOf(e *query.Error) string {
	if e == nil {
		return ""
	}
	return e.Token
}

// TestServingUsers: users= sizes the smallest configuration of the GPU
// asked, states it, prices offers for it and names the log lines.
func TestServingUsers(t *testing.T) {
	offers := newVRAMOffers()
	r, err := vram.Estimate(context.Background(), "llama-3.1-8b users=64 seq=8k h100", vram.Deps{Offers: offers})
	if err != nil {
		t.Fatal(err)
	}
	res := r.Result
	s := res.Serving
	if s.Engine != "vllm" || s.Users == nil || s.Users.Users != 64 || s.Users.Holds || s.Users.Smallest == nil {
		t.Fatalf("users: %+v", s.Users)
	}
	small := s.Users.Smallest
	if small.TP != 1 || small.KVCacheDtype != "fp8" || small.Concurrency < 64 {
		t.Errorf("smallest H100 setup for 64 × 8k: %+v, want one GPU with an fp8 KV cache", small)
	}
	if !offers.Last().NeedFP8 || offers.Last().GPUCount != 1 || offers.Last().RequestedGPU != "H100-SXM" {
		t.Errorf("requirement %+v", offers.Last())
	}
	if len(s.Users.GPUs) < 5 || s.CostPerMillionTokensUSD == nil || s.PricedOn == nil || s.DecodeTokensPerS <= 0 {
		t.Errorf("%d GPUs sized, cost %v on %+v, decode %v", len(s.Users.GPUs), s.CostPerMillionTokensUSD, s.PricedOn, s.DecodeTokensPerS)
	}
	// The same arithmetic as the package's.
	want, ok := serving.Size(memory.ServingDeployment(res.Workload.Workload, mustGPU(t, "h100")), 64)
	if !ok || want.TP != small.TP || want.KVCacheDtype != small.KVCacheDtype || want.Weights != small.Weights {
		t.Errorf("serving.Size %+v, reply %+v", want, small)
	}
	// The log lines and every assumption are in the details (the thread).
	text := strings.Join(r.Details.Sections[0].Items, "\n")
	for _, line := range []string{"Model loading took", "Available KV cache memory", "GPU KV cache size", "Maximum concurrency for 8,192 tokens per request"} {
		if !strings.Contains(text, line) {
			t.Errorf("the reply does not name the log line %q:\n%s", line, text)
		}
	}
	if !hasText(r.Details.Context, "engine not given: users= is a serving setting, so assuming vLLM") {
		t.Errorf("context %q", r.Details.Context)
	}
	if !hasText(r.Context, "engine=vllm") {
		t.Errorf("the lead's context does not say the engine was assumed: %q", r.Context)
	}
}

func mustGPU(t *testing.T, name string) catalog.GPU {
	t.Helper()
	g, ok := catalog.LookupGPU(name)
	if !ok {
		t.Fatalf("no GPU %q", name)
	}
	return g
}

// TestServingLogQueries: every logged start-up, asked as its query
// (advisor/serving/testdata/vllm-logs.jsonl), starts or not as it did.
func TestServingLogQueries(t *testing.T) {
	f, err := os.Open("../../advisor/serving/testdata/vllm-logs.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	checked := 0
	for sc.Scan() {
		var c struct {
			ID, Query string
			Observed  struct {
				Starts bool `json:"starts"`
			} `json:"observed"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		_, s := servingAnswer(t, c.Query)
		if s.Starts != c.Observed.Starts {
			t.Errorf("%s (%q): starts %v, logged %v", c.ID, c.Query, s.Starts, c.Observed.Starts)
		}
		checked++
	}
	if checked < 12 {
		t.Errorf("only %d logged start-ups asked through the grammar", checked)
	}
}

func errorsAs(err error, target **query.Error) bool { return errors.As(err, target) }

// BenchmarkVRAMServingUsers is a whole serving answer: the plan on the GPU
// asked, the users= sizing over every GPU of the catalog, the changes,
// the offers and their price per million tokens (issue 16: under 5 ms).
func BenchmarkVRAMServingUsers(b *testing.B) {
	offers := newVRAMOffers()
	for b.Loop() {
		if _, err := vram.Estimate(context.Background(), "llama-3.1-70b users=64 seq=8k h100", vram.Deps{Offers: offers}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVRAMServingNoStart is an answer that searches every change.
func BenchmarkVRAMServingNoStart(b *testing.B) {
	offers := newVRAMOffers()
	for b.Loop() {
		if _, err := vram.Estimate(context.Background(), "llama-3.1-8b engine=vllm 4090", vram.Deps{Offers: offers}); err != nil {
			b.Fatal(err)
		}
	}
}
