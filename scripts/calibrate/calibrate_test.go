// Package calibrate holds the test of scripts/calibrate/calibrate.py, the
// GPU calibration script: run on the CPU with a tiny Llama-style model, it
// must write the accuracy harness's case format for every run of its grid.
package calibrate

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/vrambot/vrambot/advisor/memory/accuracy"
	"github.com/vrambot/vrambot/internal/testutil"
)

// pythonWithTorch finds an interpreter that can import torch:
// $VRAMBOT_PYTHON, then python3 on PATH, then Debian's /usr/bin/python3
// (where python3-torch installs; .ci/run installs it).
func pythonWithTorch(ctx context.Context) (string, error) {
	var candidates []string
	if p := os.Getenv("VRAMBOT_PYTHON"); p != "" {
		candidates = append(candidates, p)
	}
	candidates = append(candidates, "python3", "/usr/bin/python3")
	err := errors.New("no python3 found")
	for _, c := range candidates {
		path, lookErr := exec.LookPath(c)
		if lookErr != nil {
			continue
		}
		out, runErr := exec.CommandContext(ctx, path, "-c", "import torch; print(torch.__version__)").CombinedOutput()
		if runErr == nil {
			return path, nil
		}
		err = errors.New(path + ": " + string(out))
	}
	return "", err
}

// tinyGrid is the CPU grid: full fine-tuning and LoRA at micro-batch 1 and
// 2 with checkpointing off and on, inference at 1 and 2.
const tinyGrid = 2*2*2 + 2

func TestCalibrationScriptOnCPU(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	py, err := pythonWithTorch(ctx)
	testutil.NeedService(t, "python3 with torch (Debian: apt-get install python3-torch)", err)

	out := filepath.Join(t.TempDir(), "calibration.jsonl")
	cmd := exec.CommandContext(ctx, py, "calibrate.py", "--device", "cpu", "--configs", "tiny", "--out", out, "--budget", "120")
	if log, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("calibrate.py: %v\n%s", err, log)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := accuracy.ParseCases(data)
	if err != nil {
		t.Fatalf("output is not the harness's case format: %v", err)
	}
	if len(cases) != tinyGrid {
		t.Fatalf("%d lines, want one per run of the tiny grid (%d)", len(cases), tinyGrid)
	}
	seen := map[string]bool{}
	byID := map[string]accuracy.Case{}
	for _, c := range cases {
		if seen[c.ID] {
			t.Errorf("duplicate id %s", c.ID)
		}
		seen[c.ID], byID[c.ID] = true, c
		if c.Kind != "dry-run" || c.ReportedGB <= 0 || c.Batch == nil || c.SeqLen == nil || c.NumGPUs == nil || c.Source == "" || c.Measure == "" {
			t.Errorf("%s: incomplete line %+v", c.ID, c)
		}
		// A CPU dry run is not a GPU measurement: the harness must not judge it.
		if _, _, reason := c.Workload(); reason == "" {
			t.Errorf("%s: a dry run would be judged as a measurement", c.ID)
		}
	}
	// The CPU measure follows the physics the estimator models: LoRA
	// keeps less than full fine-tuning, checkpointing less than none,
	// a larger micro-batch more.
	get := func(id string) float64 {
		c, ok := byID[id]
		if !ok {
			t.Fatalf("no run %s in %v", id, seen)
		}
		return c.ReportedGB
	}
	if get("calib-tiny-llama-for-tests-lora-bs2-s32-nogc-alloc") >= get("calib-tiny-llama-for-tests-full-bs2-s32-nogc-alloc") {
		t.Error("LoRA measured no lighter than full fine-tuning")
	}
	if get("calib-tiny-llama-for-tests-full-bs2-s32-gc-alloc") >= get("calib-tiny-llama-for-tests-full-bs2-s32-nogc-alloc") {
		t.Error("checkpointing measured no lighter than none")
	}
	if get("calib-tiny-llama-for-tests-full-bs2-s32-nogc-alloc") <= get("calib-tiny-llama-for-tests-full-bs1-s32-nogc-alloc") {
		t.Error("a larger micro-batch measured no heavier")
	}
}
