package reply

import (
	"github.com/vrambot/vrambot/internal/golden"
	"testing"
)

func TestText(t *testing.T) {
	tests := []struct {
		name string
		r    Reply
	}{
		{"empty", Reply{}},
		{"full", Reply{
			Kind:    "vram",
			Title:   "llama-2-7b · LoRA · A100 80GB",
			Summary: "Fits: needs 20.1 GiB of 79.2 GiB usable per GPU.",
			Fields:  []Field{{"Weights", "12.6 GiB"}, {"Total (nvidia-smi)", "20.1 GiB"}},
			Sections: []Section{
				{Title: "Stage 1", Text: "Gradient checkpointing", Items: []string{"one\ntwo lines", "three"},
					Code: []Code{{Lang: "python", Text: "model.gradient_checkpointing_enable()\n"}}},
				{Text: "untitled section"},
			},
			Context: []string{"batch not given: assuming bs=1"},
		}},
		{"lead-and-details", Reply{
			Kind:    "vram",
			Title:   "llama-3.1-8b · QLoRA · GeForce RTX 4090",
			Verdict: &Verdict{Band: BandNo, Text: "needs 27.6 of 23.6 GiB"},
			Bar: &Bar{CapacityBytes: 236, Capacity: "23.6 GiB usable", Parts: []BarPart{
				{Mark: "W", Label: "weights", Value: "5.6 GiB", Bytes: 56}, {Mark: "A", Label: "activations", Value: "14.4 GiB", Bytes: 144},
				{Mark: "R", Label: "runtime", Value: "7.6 GiB", Bytes: 76}}},
			Summary:  "Does not fit: 3.9 GiB over.",
			Sections: []Section{{Title: "1. Gradient checkpointing", Text: "→ 10.9 GiB per GPU", Code: []Code{{Text: "model.gradient_checkpointing_enable()"}}, Action: &Action{ID: "apply-1", Text: "Apply gc=on", Value: "q gc=on"}}},
			Context:  []string{"Assumed: bs=1 · seq=2048"},
			Details:  &Reply{Title: "Details · llama-3.1-8b", Fields: []Field{{"Weights", "5.6 GiB"}}, Context: []string{"batch not given: assuming bs=1 per GPU"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			golden.Check(t, tt.name+".txt", []byte(Text(tt.r)))
		})
	}
}
