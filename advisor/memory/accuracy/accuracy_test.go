package accuracy

import (
	"bytes"
	"os"
	"testing"

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
	c.Measure = "nvidia-smi used memory"
	if _, measure, _ := c.Workload(); measure != MeasureTotal {
		t.Errorf("nvidia-smi case compared with %s", measure)
	}
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
