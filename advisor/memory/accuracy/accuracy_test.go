package accuracy

import (
	"bytes"
	"math"
	"os"
	"reflect"
	"testing"

	"github.com/vrambot/vrambot/advisor/memory"
	"github.com/vrambot/vrambot/internal/golden"
)

// casesPath is the project's public measured cases (testdata/SOURCES.md).
const casesPath = "testdata/cases.jsonl"

func loadCases(t *testing.T) []Case {
	t.Helper()
	data, err := os.ReadFile(casesPath)
	if err != nil {
		t.Fatalf("read cases: %v", err)
	}
	cases, err := ParseCases(data)
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

// TestAccuracy is the acceptance figure: on every measured case that states
// its workload, median |error| <= 15% and >= 75% of cases within 25%, and
// both rules of thumb clearly worse.
func TestAccuracy(t *testing.T) {
	rep := Evaluate(loadCases(t))
	est := rep.Summary(RuleEstimator)
	if est.Cases < 30 {
		t.Fatalf("only %d cases judged", est.Cases)
	}
	if est.MedianAbsErrPct > 15 {
		t.Errorf("estimator median |error| %.1f%% > 15%%", est.MedianAbsErrPct)
	}
	if est.Within25PctShare < 0.75 {
		t.Errorf("estimator within 25%%: %.1f%% < 75%%", 100*est.Within25PctShare)
	}
	for _, rule := range []Rule{RuleWeightsMultiple, RulePerBillion} {
		s := rep.Summary(rule)
		// "Clearly worse": at least twice the median error and 20 points
		// fewer cases within 25%.
		if s.MedianAbsErrPct < 2*est.MedianAbsErrPct || s.Within25PctShare > est.Within25PctShare-0.20 {
			t.Errorf("rule %q is not clearly worse: median %.1f%%, within 25%% %.1f%% (estimator %.1f%%, %.1f%%)",
				rule, s.MedianAbsErrPct, 100*s.Within25PctShare, est.MedianAbsErrPct, 100*est.Within25PctShare)
		}
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "accuracy.golden", table.Bytes())
}

// extraCasesPath holds measured cases collected from further public sources
// (litgpt resource tables and config hub, HF docs, accelerate benchmarks,
// Qwen README), in the cases.jsonl format; each line names its source.
const extraCasesPath = "testdata/extra-cases.jsonl"

// TestExtraAccuracy judges the extra cases on their own and together with the
// public ones. Its floors guard against regressions (the extra set includes
// workloads the estimator is known to miss: litgpt FSDP full fine-tuning and
// the 2024 config-hub QLoRA runs); the golden table shows every case.
func TestExtraAccuracy(t *testing.T) {
	data, err := os.ReadFile(extraCasesPath)
	if err != nil {
		t.Fatal(err)
	}
	extra, err := ParseCases(data)
	if err != nil {
		t.Fatal(err)
	}
	rep := Evaluate(extra)
	est := rep.Summary(RuleEstimator)
	if est.Cases < 25 {
		t.Fatalf("only %d extra cases judged", est.Cases)
	}
	if est.MedianAbsErrPct > 15 {
		t.Errorf("estimator median |error| on extra cases %.1f%% > 15%%", est.MedianAbsErrPct)
	}
	if est.Within25PctShare < 0.65 {
		t.Errorf("estimator within 25%% on extra cases: %.1f%% < 65%%", 100*est.Within25PctShare)
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if public, err := os.ReadFile(casesPath); err == nil {
		pub, err := ParseCases(public)
		if err != nil {
			t.Fatal(err)
		}
		table.WriteString("\ncombined with the public cases:\n")
		if err := Evaluate(append(pub, extra...)).WriteSummary(&table); err != nil {
			t.Fatal(err)
		}
	}
	golden.Check(t, "extra-accuracy.golden", table.Bytes())
}

// trainingCasesPath holds training runs with the techniques of
// docs/memory-model.md §6 (torchtitan, torchtune, PEFT's FSDP and
// DeepSpeed guides), in the cases.jsonl format; each line names its source.
const trainingCasesPath = "testdata/training-cases.jsonl"

func loadFile(t *testing.T, path string) []Case {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := ParseCases(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return cases
}

// allCases is every measured case the repository holds.
func allCases(t *testing.T) []Case {
	var all []Case
	for _, p := range []string{casesPath, extraCasesPath, trainingCasesPath, holdoutCasesPath, blindCasesPath, holdout2026CasesPath} {
		all = append(all, loadFile(t, p)...)
	}
	return all
}

// TestTrainingAccuracy judges the training-technique cases on their own.
func TestTrainingAccuracy(t *testing.T) {
	rep := Evaluate(loadFile(t, trainingCasesPath))
	est := rep.Summary(RuleEstimator)
	if est.Cases < 15 {
		t.Fatalf("only %d training cases judged", est.Cases)
	}
	if est.MedianAbsErrPct > 15 || est.Within25PctShare < 0.8 {
		t.Errorf("training cases: median |error| %.1f%%, within 25%% %.0f%%: want <= 15%% and >= 80%%", est.MedianAbsErrPct, 100*est.Within25PctShare)
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "training-accuracy.golden", table.Bytes())
}

// holdoutCasesPath holds the cases gathered after the estimator was built
// and judged blind first (testdata/SOURCES.md records that first run).
const holdoutCasesPath = "testdata/holdout-cases.jsonl"

// knownBoundGaps are the upper-bound cases known to read more than
// MaxUnderBoundPct under their measurement, with the reason; anything else
// under is a regression (docs/memory-model.md §6.8).
var knownBoundGaps = map[string]string{
	"swift-qwen25-7b-full-1gpu-bf16": "measured on the script's Dec 2024 version, when the HF Trainer's adamw_torch (PyTorch's foreach AdamW) held a √v temporary of one state at the step; today's default (adamw_torch_fused) holds none, and the grammar cannot say which",
	"swift-qwen25-7b-lora-all-ddp2":  "unexplained: measured on the script's Dec 2024 version, 10 GiB more than the same run under ZeRO-2 (19.3 GB), which DDP's buckets for the adapters' gradients cannot hold",
	// The 2026 blind set (testdata/SOURCES.md).
	"unsloth-qwen3-4b-qat-int4-lora-t4":            "quantisation-aware training (Unsloth qat_scheme int4: torchao fake-quantised base weights) has no word in the grammar; +5.6 GiB over the loaded model in training where plain LoRA needs about 1",
	"unsloth-qwen3-06b-full-qat-t4":                "quantisation-aware training (Unsloth qat_scheme phone-deployment) has no word in the grammar",
	"unsloth-gemma3-27b-qlora-a100-40":             "unexplained: 12% under; its reserved memory after loading already exceeds the 4-bit weights and the cached embedding by 0.6 GiB",
	"unsloth-qwen25coder-14b-qlora-pagedadamw8-t4": "unexplained: 11% under on a T4 with paged 8-bit AdamW, whose states sit outside the caching allocator",
	"unsloth-granite4-hmicro-lora16-t4":            "Granite 4.0-H (Mamba-2 hybrid) is not in the catalog: estimated with a dense stand-in of its size, 11% under",
	// The 2026 holdout, scored once at the end (testdata/SOURCES.md): left
	// as they read, not tuned.
	"unsloth-gemma4-e4b-qlora-t4":              "Gemma 4 E4B is not in the catalog: estimated with a dense stand-in of its size, without its per-layer embeddings; 39% under",
	"unsloth-llama32-3b-qlora-t4":              "unexplained: 19% under on a T4 (fp16, no bf16), where the Llama-3.2-3B notebook's sibling runs on other GPUs are within 10%",
	"unsloth-qwen3-14b-qlora-reasoning-t4":     "unexplained: 17% under on a T4 (fp16 compute) with Unsloth's dynamic 4-bit checkpoint, whose 16-bit layers the grammar cannot name",
	"unsloth-qwen3-14b-qlora-alpaca-t4":        "unexplained: 10% under on a T4 (fp16 compute) with Unsloth's dynamic 4-bit checkpoint",
	"unsloth-nemotron3nano-30ba3b-lora16-a100": "13% under: a Mamba-2/MoE hybrid in 16-bit with padding-free batches, whose mixer states and expert paths under Unsloth are not modelled",
}

// TestHoldoutAccuracy holds the held-out cases to issue 11's acceptance on
// their own: median |error| <= 10%, >= 85% within 25%, each baseline
// worse, none of the upper bounds more than 10% under the measurement
// beyond knownBoundGaps.
func TestHoldoutAccuracy(t *testing.T) {
	rep := Evaluate(loadFile(t, holdoutCasesPath))
	est := rep.Summary(RuleEstimator)
	if est.Cases < 40 {
		t.Fatalf("only %d held-out cases judged", est.Cases)
	}
	if est.MedianAbsErrPct > 10 || est.Within25PctShare < 0.85 {
		t.Errorf("held-out cases: median |error| %.1f%%, within 25%% %.1f%%: want <= 10%% and >= 85%%", est.MedianAbsErrPct, 100*est.Within25PctShare)
	}
	for _, rule := range Rules[1:] {
		if s := rep.Summary(rule); s.MedianAbsErrPct <= est.MedianAbsErrPct || s.Within25PctShare >= est.Within25PctShare {
			t.Errorf("%s is not worse than the estimator on the held-out cases: median %.1f%%, within 25%% %.1f%%", rule, s.MedianAbsErrPct, 100*s.Within25PctShare)
		}
	}
	for _, r := range rep.BoundViolations() {
		if _, known := knownBoundGaps[r.ID]; !known {
			t.Errorf("%s: real sequences were shorter, yet the estimate reads %.0f%% under the measurement", r.ID, r.ErrorPct(RuleEstimator))
		}
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "holdout-accuracy.golden", table.Bytes())
}

// holdout2026CasesPath holds the 2026 runs kept out of sight until the
// estimator's issue-25 work was done, then scored once (testdata/SOURCES.md
// records that run and the re-expression that followed).
const holdout2026CasesPath = "testdata/holdout-2026-cases.jsonl"

// TestHoldout2026Accuracy keeps the 2026 holdout where its one scoring left
// it (11.3% / 64.5% once re-expressed; issue 25's acceptance is 10% / 85%,
// not met): a guard against regressions, not a target it was tuned to. Its
// table is in holdout-2026-accuracy.golden.
func TestHoldout2026Accuracy(t *testing.T) {
	rep := Evaluate(loadFile(t, holdout2026CasesPath))
	est := rep.Summary(RuleEstimator)
	if n := est.Cases + len(rep.UpperBounds); n < 40 {
		t.Fatalf("only %d of the 2026 holdout cases judged", n)
	}
	if est.MedianAbsErrPct > 12 || est.Within25PctShare < 0.64 {
		t.Errorf("2026 holdout: median |error| %.1f%%, within 25%% %.1f%%: want <= 12%% and >= 64%%", est.MedianAbsErrPct, 100*est.Within25PctShare)
	}
	for _, r := range rep.BoundViolations() {
		if _, known := knownBoundGaps[r.ID]; !known {
			t.Errorf("%s: real sequences were shorter, yet the estimate reads %.0f%% under the measurement", r.ID, r.ErrorPct(RuleEstimator))
		}
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "holdout-2026-accuracy.golden", table.Bytes())
}

// TestCombinedAccuracy is issue 11's acceptance on every measured case the
// repository holds: median |error| <= 10%, >= 85% within 25%, better than
// each baseline (both figures) overall and per method, and no run with
// shorter real sequences estimated more than 10% under its measurement.
func TestCombinedAccuracy(t *testing.T) {
	rep := Evaluate(allCases(t))
	est := rep.Summary(RuleEstimator)
	if est.MedianAbsErrPct > 10 || est.Within25PctShare < 0.85 {
		t.Errorf("all cases: median |error| %.1f%%, within 25%% %.1f%%: want <= 10%% and >= 85%%", est.MedianAbsErrPct, 100*est.Within25PctShare)
	}
	for _, rule := range Rules[1:] {
		s := rep.Summary(rule)
		if s.MedianAbsErrPct <= est.MedianAbsErrPct || s.Within25PctShare >= est.Within25PctShare {
			t.Errorf("%s is not worse than the estimator: median %.1f%%, within 25%% %.1f%%", rule, s.MedianAbsErrPct, 100*s.Within25PctShare)
		}
		for _, ms := range rep.ByMethod {
			m := rep.MethodSummary(ms.Method, RuleEstimator)
			b := rep.MethodSummary(ms.Method, rule)
			if b.MedianAbsErrPct <= m.MedianAbsErrPct {
				t.Errorf("%s: %s median %.1f%% beats the estimator's %.1f%%", ms.Method, rule, b.MedianAbsErrPct, m.MedianAbsErrPct)
			}
		}
	}
	if len(rep.UpperBounds) == 0 {
		t.Error("no upper-bound case: the shorter-sequences rule is untested")
	}
	for _, r := range rep.BoundViolations() {
		if _, known := knownBoundGaps[r.ID]; !known {
			t.Errorf("%s: real sequences were shorter, yet the estimate reads %.0f%% under the measurement", r.ID, r.ErrorPct(RuleEstimator))
		}
	}
	// Unsloth's context-length benchmarks: the longest context that fits
	// each card must be estimated to fit it, and not by far.
	if len(rep.Capacities) < 10 {
		t.Errorf("only %d capacity boundaries", len(rep.Capacities))
	}
	for _, r := range rep.CapacityViolations() {
		t.Errorf("%s: the largest context that fits is estimated at %+.0f%% of the card", r.ID, r.ErrorPct(RuleEstimator))
	}
}

// TestErrorBandsAreCurrent: the bands every estimate quotes
// (advisor/memory/errorbands.json) are this harness's per-method table
// over all the cases; regenerate with
// go run ./advisor/memory/cmd/accuracy -bands advisor/memory/errorbands.json
func TestErrorBandsAreCurrent(t *testing.T) {
	want := Evaluate(allCases(t)).Bands()
	got := memory.ErrorBands()
	for i := range got {
		got[i].Source = ""
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("advisor/memory/errorbands.json is stale:\n got %+v\nwant %+v\nrun: go run ./advisor/memory/cmd/accuracy -bands advisor/memory/errorbands.json", got, want)
	}
	if _, ok := memory.ErrorBandFor(memory.MethodDoRA); !ok {
		t.Error("DoRA has no band, not even LoRA's")
	}
}

func TestGPUPoorFormula(t *testing.T) {
	// gpu_poor's own example: the Llama-2-7B config with its defaults
	// (QLoRA, Adam, 1 × 512 tokens, no checkpointing): model 3.2 GiB
	// after its 4-bit rounding, fixed 650 MiB overhead.
	w := memory.Resolve(memory.Workload{ModelName: "llama-2-7b", Method: memory.MethodQLoRA, Batch: 1, SeqLen: 512,
		Optimizer: memory.OptimizerAdamW, Checkpointing: memory.CheckpointOff})
	cfg := gpuPoorConfigFor(w)
	if cfg.vocab != 32000 || cfg.hidden != 4096 || cfg.layers != 32 || cfg.inter != 11008 {
		t.Fatalf("config %+v", cfg)
	}
	model := gpuPoorModelMiB(cfg.params, "no_quant", "qlora")
	if want := cfg.params*2/(1<<20)*(0.25+0.06) - cfg.params*2/(64*(1<<20)); math.Abs(model-want) > 1e-6 {
		t.Errorf("qlora model size %.1f MiB, want %.1f", model, want)
	}
	total := gpuPoorBytes(w)
	if total <= model*(1<<20)+650*(1<<20) {
		t.Errorf("total %.0f bytes does not exceed the model and the overhead", total)
	}
	// Checkpointing is a flat 0.15 on activations.
	gc := w
	gc.GradCheckpointing = true
	if gpuPoorBytes(gc) >= total {
		t.Error("gradient checkpointing does not lower gpu_poor's estimate")
	}
}

func TestCaseMapping(t *testing.T) {
	one, batch, seq := 1, 2, 512
	gc := true
	c := Case{ID: "x", Kind: "measured", Model: "meta-llama/Llama-2-7b-hf (chat)", Method: "lora", Precision: "bf16",
		Optimizer: "adamw", Batch: &batch, SeqLen: &seq, GradCheckpointing: &gc, NumGPUs: &one, ReportedGB: 20,
		Measure: "torch max_memory_allocated/1e9"}
	w, measure, reason := c.Workload()
	if reason != "" || measure != MeasurePeakAllocated || w.Model.Name != "Llama-2-7B" || w.Batch != 2 || w.SeqLen != 512 || !w.GradCheckpointing {
		t.Errorf("mapped to %+v %s %q", w, measure, reason)
	}
	for text, want := range map[string]Measure{
		"nvidia-smi used memory": MeasureTotal, "wandb system GPU memory (NVML, as nvidia-smi)": MeasureTotal,
		"torch.cuda.max_memory_reserved": MeasurePeakReserved, "torchtitan memory log: max_reserved_gib": MeasurePeakReserved,
		"torch max_memory_allocated/1e9": MeasurePeakAllocated,
	} {
		c.Measure = text
		if _, measure, _ := c.Workload(); measure != want {
			t.Errorf("%q compared with %s, want %s", text, measure, want)
		}
	}
	c.Measure = "nvidia-smi used memory"
	c.Model = "13B mystery model"
	c.ParamsB = 13
	if w, _, _ := c.Workload(); w.Params != 13e9 {
		t.Errorf("unknown model should fall back to params_b: %+v", w)
	}
	for name, mutate := range map[string]func(*Case){
		"formula":           func(c *Case) { c.Kind = "formula" },
		"bound":             func(c *Case) { c.Bound = "lower" },
		"unknown precision": func(c *Case) { c.Precision = "unknown" },
		"unknown optimizer": func(c *Case) { c.Optimizer = "unknown" },
		"no batch":          func(c *Case) { c.Batch = nil },
		"no gpus":           func(c *Case) { c.NumGPUs = nil },
	} {
		cc := c
		mutate(&cc)
		if _, _, reason := cc.Workload(); reason == "" {
			t.Errorf("%s: case should be skipped", name)
		}
	}
}

func TestParseCasesErrors(t *testing.T) {
	for name, in := range map[string]string{
		"not json":   "{",
		"no id":      `{"kind":"measured"}`,
		"negative":   `{"id":"a","reported_gb":-1}`,
		"wrong type": `{"id":"a","batch":"four"}`,
	} {
		if _, err := ParseCases([]byte(in)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	cs, err := ParseCases([]byte("\n{\"id\":\"a\"}\n\n{\"id\":\"b\"}\n"))
	if err != nil || len(cs) != 2 {
		t.Errorf("blank lines: %v %d", err, len(cs))
	}
}

func FuzzParseCases(f *testing.F) {
	f.Add([]byte(`{"id":"a","kind":"measured","method":"lora","precision":"bf16","optimizer":"adamw","batch":1,"seq_len":10,"num_gpus":1,"reported_gb":3}`))
	f.Add([]byte("{}\n\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cases, err := ParseCases(data)
		if err != nil {
			return
		}
		Evaluate(cases) // must not panic on anything that parses
	})
}

// blindCasesPath holds the 2026 runs (FSDP2 and its CPU offload, MoE
// fine-tuning, Unsloth notebooks, low-bit optimizers), scored blind
// before any estimator change (testdata/SOURCES.md records that run).
const blindCasesPath = "testdata/blind-2026-cases.jsonl"

// TestBlind2026Accuracy holds the 2026 set to the floors its mechanisms
// reached (docs/memory-model.md §6.9-§6.11; it read 18.2% / 63.9% blind)
// and keeps its table, per method and parallelism and per category, in
// blind-accuracy.golden; no upper bound reads more than 10% under beyond
// knownBoundGaps.
func TestBlind2026Accuracy(t *testing.T) {
	rep := Evaluate(loadFile(t, blindCasesPath))
	est := rep.Summary(RuleEstimator)
	if n := est.Cases + len(rep.UpperBounds); n < 50 {
		t.Fatalf("only %d of the 2026 cases judged", n)
	}
	if est.MedianAbsErrPct > 15 || est.Within25PctShare < 0.75 {
		t.Errorf("2026 cases: median |error| %.1f%%, within 25%% %.1f%%: want <= 15%% and >= 75%%", est.MedianAbsErrPct, 100*est.Within25PctShare)
	}
	for _, r := range rep.BoundViolations() {
		if _, known := knownBoundGaps[r.ID]; !known {
			t.Errorf("%s: real sequences were shorter, yet the estimate reads %.0f%% under the measurement", r.ID, r.ErrorPct(RuleEstimator))
		}
	}
	if len(rep.Categories()) < 8 {
		t.Errorf("only %d categories", len(rep.Categories()))
	}
	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "blind-accuracy.golden", table.Bytes())
}
