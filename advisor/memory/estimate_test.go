package memory

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/advisor/catalog"
)

func TestResolveDefaults(t *testing.T) {
	w := Resolve(Workload{ModelName: "llama-2-7b", Method: MethodLoRA})
	want := Workload{
		ModelName: "llama-2-7b", Params: 6_738_415_616, TrainableParams: 4_194_304, Method: MethodLoRA,
		Precision: PrecisionBF16, Optimizer: OptimizerAdamW, Batch: 1, SeqLen: 2048, GPUs: 1, TP: 1, PP: 1,
		Offload: OffloadNone, Attention: AttentionFlash, LoRARank: 8, LoRATargets: "qv",
		Checkpointing: CheckpointOff, Sharding: ShardingNone, Loss: LossStandard,
	}
	w.Model = catalog.Model{}
	got := w
	got.Assumptions = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Resolve =\n%+v\nwant\n%+v", got, want)
	}
	for _, s := range []string{"precision not given: bf16", "optimizer not given: adamw", "batch size not given: 1 per GPU",
		"sequence length not given: 2048 tokens", "LoRA rank not given: 8 (PEFT default)"} {
		if !slices.Contains(w.Assumptions, s) {
			t.Errorf("assumption %q missing from %q", s, w.Assumptions)
		}
	}
}

func TestResolveIsIdempotentAndRecomputesDerivedFields(t *testing.T) {
	w := Resolve(Workload{ModelName: "llama-2-7b", Method: MethodFull})
	again := Resolve(w)
	if !reflect.DeepEqual(w, again) {
		t.Errorf("Resolve is not idempotent:\n%+v\n%+v", w, again)
	}
	if w.TrainableParams != w.Params {
		t.Errorf("full: trainable %d, params %d", w.TrainableParams, w.Params)
	}
	// A planner switches method on a resolved workload: derived fields follow.
	w.Method = MethodLoRA
	lora := Resolve(w)
	if lora.TrainableParams != 4_194_304 {
		t.Errorf("after switching to LoRA: trainable %d", lora.TrainableParams)
	}
	// Input assumptions are not aliased.
	in := Workload{Assumptions: make([]string, 0, 8)}
	Resolve(in)
	if spare := in.Assumptions[:1]; spare[0] != "" {
		t.Errorf("Resolve wrote into the caller's slice: %q", spare[0])
	}
}

func TestResolveSizeOnlyAndUnknownModel(t *testing.T) {
	w := Resolve(Workload{Params: 7e9, Method: MethodQLoRA})
	if !w.Model.Scaled || w.Params != 7e9 || w.Precision != PrecisionNF4 || w.ModelName != "7B" {
		t.Errorf("size-only: %+v", w)
	}
	if !strings.Contains(strings.Join(w.Assumptions, "\n"), "assumed today's typical shape") {
		t.Errorf("scaling not reported: %q", w.Assumptions)
	}
	unknown := Resolve(Workload{ModelName: "no-such-model"})
	if unknown.Params != defaultParams || !slices.Contains(unknown.Assumptions, `unknown model "no-such-model": assumed a 7B model`) {
		t.Errorf("unknown model: %+v", unknown)
	}
	empty := Resolve(Workload{})
	if empty.Params != defaultParams || empty.Method != MethodInference {
		t.Errorf("empty workload: %+v", empty)
	}
	bert := Resolve(Workload{ModelName: "bert-base", Method: MethodFull})
	if bert.SeqLen != 512 || bert.Attention != AttentionEager {
		t.Errorf("bert defaults: seq %d attention %s", bert.SeqLen, bert.Attention)
	}
	par := Resolve(Workload{ModelName: "llama-2-70b", TP: 4, PP: 2})
	if par.GPUs != 8 {
		t.Errorf("tp4 pp2 resolved to %d GPUs", par.GPUs)
	}
}

func TestFreezeTrainsLastLayers(t *testing.T) {
	w := Resolve(Workload{ModelName: "llama-2-7b", Method: MethodFreeze})
	m := w.Model
	if w.TrainableParams != 2*m.LayerParams() {
		t.Errorf("freeze trainable %d, want 2 layers = %d", w.TrainableParams, 2*m.LayerParams())
	}
	full := Estimate(Workload{ModelName: "llama-2-7b", Method: MethodFull, Precision: PrecisionBF16})
	frz := Estimate(Workload{ModelName: "llama-2-7b", Method: MethodFreeze, Precision: PrecisionBF16})
	if frz.ActivationsBytes >= full.ActivationsBytes/4 || frz.OptimizerBytes >= full.OptimizerBytes/8 {
		t.Errorf("freeze should keep a fraction of activations and optimizer: %+v vs %+v", frz, full)
	}
}

func TestEncoderDecoderAndMoE(t *testing.T) {
	for _, name := range []string{"t5-3b", "bert-large", "mixtral-8x7b", "gemma-2b", "phi-2"} {
		for _, method := range []Method{MethodFull, MethodLoRA, MethodQLoRA, MethodFreeze, MethodInference} {
			b := Estimate(Workload{ModelName: name, Method: method, Batch: 2, SeqLen: 512})
			if b.PeakAllocatedBytes <= b.WeightsBytes || b.TotalBytes <= b.PeakAllocatedBytes {
				t.Errorf("%s %s: %+v", name, method, b)
			}
		}
	}
	t5 := Estimate(Workload{ModelName: "t5-3b", Method: MethodInference, Batch: 1, SeqLen: 1000})
	if want := int64(2 * 24 * 32 * 128 * 1000 * 2); t5.KVCacheBytes != want {
		t.Errorf("T5 KV (decoder layers only) = %d, want %d", t5.KVCacheBytes, want)
	}
}

func TestAssessBands(t *testing.T) {
	gpu := catalog.GPU{UsableBytes: 100}
	tests := []struct {
		total    int64
		fit      Fit
		headroom int64
	}{
		{50, FitFits, 50}, {90, FitFits, 10}, {91, FitTight, 9}, {100, FitTight, 0}, {101, FitDoesNotFit, -1},
	}
	for _, tt := range tests {
		fit, head := Assess(Breakdown{TotalBytes: tt.total}, gpu)
		if fit != tt.fit || head != tt.headroom {
			t.Errorf("total %d: %s %d, want %s %d", tt.total, fit, head, tt.fit, tt.headroom)
		}
	}
	if fit, _ := Assess(Breakdown{TotalBytes: 1}, catalog.GPU{}); fit != FitDoesNotFit {
		t.Errorf("a GPU without memory fits nothing, got %s", fit)
	}
	a100, _ := catalog.LookupGPU("a100")
	if fit, _ := Assess(Estimate(Workload{ModelName: "llama-2-7b", Method: MethodLoRA}), a100); fit != FitFits {
		t.Errorf("Llama-2-7B LoRA on an A100 80GB: %s", fit)
	}
	t4, _ := catalog.LookupGPU("t4")
	if fit, _ := Assess(Estimate(Workload{ModelName: "llama-2-7b", Method: MethodFull}), t4); fit != FitDoesNotFit {
		t.Errorf("Llama-2-7B full on a T4: %s", fit)
	}
}

// randomWorkload draws from every enumerated option and wide numeric ranges,
// including zero and negative values that Resolve must normalise.
func randomWorkload(r *rand.Rand) Workload {
	models := catalog.Models()
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	w := Workload{
		Method:            Method(pick("full", "lora", "qlora", "dora", "freeze", "inference", "")),
		Precision:         Precision(pick("fp32", "fp16", "bf16", "mixed-bf16", "mixed-fp16", "int8", "nf4", "")),
		Optimizer:         Optimizer(pick("adamw", "adamw-8bit", "paged-adamw-8bit", "adafactor", "sgd", "none", "")),
		Batch:             r.IntN(300) - 10,
		SeqLen:            r.IntN(200_000) - 100,
		GradCheckpointing: r.IntN(2) == 0,
		ZeroStage:         r.IntN(6) - 1,
		GPUs:              r.IntN(70) - 2,
		TP:                r.IntN(10) - 1,
		PP:                r.IntN(10) - 1,
		Offload:           Offload(pick("none", "optimizer", "param", "")),
		LoRARank:          r.IntN(300) - 5,
		LoRATargets:       pick("qv", "attn", "all", "", "bogus"),
		Attention:         Attention(pick("flash", "eager", "")),
		KVCacheDtype:      pick("fp16", "fp8", ""),
		Engine:            pick("", "hf", "vllm"),
		ChunkedLoss:       r.IntN(2) == 0,

		Checkpointing:       Checkpointing(pick("", "off", "full", "selective", "offloaded", "bogus")),
		Sharding:            Sharding(pick("", "none", "ddp", "deepspeed", "fsdp", "bogus")),
		Loss:                Loss(pick("", "standard", "chunked", "bogus")),
		OptimizerInBackward: r.IntN(3) == 0,
		ActivationOffload:   r.IntN(3) == 0,
		Framework:           Framework(pick("", "unsloth", "axolotl", "torchtune", "torchtitan", "trl", "llama-factory", "bogus")),
	}
	if r.IntN(4) == 0 {
		w.Params = r.Int64N(2e12) - 1e9
	} else {
		w.Model = models[r.IntN(len(models))]
	}
	return w
}

func checkBreakdown(t *testing.T, w Workload, b Breakdown) {
	t.Helper()
	fields := []int64{b.WeightsBytes, b.GradientsBytes, b.OptimizerBytes, b.ActivationsBytes, b.LogitsBytes,
		b.KVCacheBytes, b.PeakAllocatedBytes, b.RuntimeOverheadBytes, b.TotalBytes}
	for i, f := range fields {
		if f < 0 {
			t.Fatalf("field %d negative: %+v for %+v", i, b, w)
		}
	}
	if b.TotalBytes < b.PeakAllocatedBytes || b.RuntimeOverheadBytes != b.TotalBytes-b.PeakAllocatedBytes {
		t.Fatalf("total/peak/overhead inconsistent: %+v for %+v", b, w)
	}
}

// TestEstimateProperties: Estimate never panics, every field is >= 0 and the
// estimate grows with batch and sequence length.
func TestEstimateProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		w := randomWorkload(r)
		b := Estimate(w)
		checkBreakdown(t, w, b)

		rw := Resolve(w)
		bigger := rw
		bigger.Batch = rw.Batch * 2
		if bb := Estimate(bigger); bb.TotalBytes < b.TotalBytes || bb.PeakAllocatedBytes < b.PeakAllocatedBytes {
			t.Fatalf("doubling batch shrank the estimate: %+v -> %+v for %+v", b, bb, rw)
		}
		longer := rw
		longer.SeqLen = rw.SeqLen * 2
		if bl := Estimate(longer); bl.TotalBytes < b.TotalBytes || bl.PeakAllocatedBytes < b.PeakAllocatedBytes {
			t.Fatalf("doubling seq shrank the estimate: %+v -> %+v for %+v", b, bl, rw)
		}
	}
}

func FuzzEstimate(f *testing.F) {
	f.Add(int64(7e9), "lora", "bf16", "adamw", 4, 2048, 2, 8, 1, 1, false)
	f.Add(int64(0), "", "", "", -1, -1, 9, -3, 0, 0, true)
	f.Add(int64(8e9), "full", "mixed-bf16", "adamw", 2, 8192, 3, 128, 1, 1, true)
	f.Fuzz(func(t *testing.T, params int64, method, prec, opt string, batch, seq, zero, gpus, tp, pp int, gc bool) {
		w := Workload{Params: params, Method: Method(method), Precision: Precision(prec), Optimizer: Optimizer(opt),
			Batch: batch, SeqLen: seq, ZeroStage: zero, GPUs: gpus, TP: tp, PP: pp, GradCheckpointing: gc}
		checkBreakdown(t, w, Estimate(w))
		// The training techniques, each on its own.
		for _, tweak := range []func(*Workload){
			func(w *Workload) { w.Checkpointing = CheckpointSelective },
			func(w *Workload) { w.Sharding = ShardingFSDP },
			func(w *Workload) { w.Sharding, w.Offload = ShardingFSDP, OffloadParam },
			func(w *Workload) { w.OptimizerInBackward, w.ActivationOffload = true, true },
			func(w *Workload) { w.Loss, w.Framework = LossChunked, FrameworkUnsloth },
		} {
			v := w
			tweak(&v)
			checkBreakdown(t, v, Estimate(v))
		}
	})
}

func BenchmarkEstimate(b *testing.B) {
	w := Workload{ModelName: "llama-3-8b", Method: MethodQLoRA, Batch: 4, SeqLen: 4096, GradCheckpointing: true}
	for b.Loop() {
		Estimate(w)
	}
}

func BenchmarkEstimateResolved(b *testing.B) {
	w := Resolve(Workload{ModelName: "llama-3-8b", Method: MethodQLoRA, Batch: 4, SeqLen: 4096, GradCheckpointing: true})
	for b.Loop() {
		Estimate(w)
	}
}
