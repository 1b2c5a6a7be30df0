package query

import (
	"os"
	"testing"

	"github.com/vrambot/vrambot/advisor/memory"
	"github.com/vrambot/vrambot/advisor/memory/accuracy"
)

// TestMeasuredCasesAsQueries asks every judged measured case through the
// query grammar, as a user (or an acceptance harness calling
// `vrambot vram --json`) would, with the techniques' tokens (fsdp, gc=,
// loss=, optim-in-bwd=, act-offload=, framework=...): none is refused, and
// each gives the estimate the accuracy harness judges.
func TestMeasuredCasesAsQueries(t *testing.T) {
	n := 0
	for _, path := range []string{"cases.jsonl", "extra-cases.jsonl", "training-cases.jsonl", "holdout-cases.jsonl", "blind-2026-cases.jsonl", "holdout-2026-cases.jsonl"} {
		data, err := os.ReadFile("../advisor/memory/accuracy/testdata/" + path)
		if err != nil {
			t.Fatal(err)
		}
		cases, err := accuracy.ParseCases(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			text, ok := c.Query()
			if !ok {
				continue
			}
			n++
			q, err := Parse(text)
			if err != nil {
				t.Errorf("%s: %q refused: %v", c.ID, text, err)
				continue
			}
			w, _, _ := c.Workload()
			want := memory.Estimate(memory.Resolve(w))
			got := memory.Estimate(memory.Resolve(q.Workload))
			if got.PeakAllocatedBytes != want.PeakAllocatedBytes || got.TotalBytes != want.TotalBytes {
				t.Errorf("%s: %q estimates %d/%d bytes, the harness %d/%d", c.ID, text, got.PeakAllocatedBytes, got.TotalBytes, want.PeakAllocatedBytes, want.TotalBytes)
			}
		}
	}
	if n < 100 {
		t.Errorf("only %d cases asked", n)
	}
}
