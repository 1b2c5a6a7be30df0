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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			golden.Check(t, tt.name+".txt", []byte(Text(tt.r)))
		})
	}
}
