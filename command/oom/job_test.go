package oom

import (
	"context"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/advisor/memory"
	"github.com/vrambot/vrambot/reply"
)

// axolotlQLoRA is an axolotl config as people paste it above the error.
const axolotlQLoRA = "```yaml\nbase_model: meta-llama/Llama-3.1-8B\nload_in_4bit: true\nadapter: qlora\nlora_r: 32\nlora_target_linear: true\n" +
	"sequence_len: 4096\nmicro_batch_size: 4\ngradient_accumulation_steps: 4\ngradient_checkpointing: true\nbf16: auto\nflash_attention: true\n```\n"

// bareOOM is a PyTorch OOM on an L40S (45588 MiB) with nothing about the
// job.
const bareOOM = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.91 GiB. GPU 0 has a total capacity of 44.52 GiB of which 1.02 GiB is free. " +
	"Of the allocated memory 38.50 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated.\n"

// TestOOMSizedFromThePastedJob: a paste that holds its job beside the
// traceback is sized from the job (issue 24), on the GPU the paste
// measured, and its "Estimate this workload" button asks for that job.
func TestOOMSizedFromThePastedJob(t *testing.T) {
	tests := []struct {
		name, paste string
		used        bool // sized from the job
		noJob       bool // no job_file at all
		method      memory.Method
		rank, seq   int
		button      []string // words the Estimate button's query holds
		note        string   // in the reply's context
	}{
		{name: "axolotl config above the error", paste: axolotlQLoRA + bareOOM, used: true, method: memory.MethodQLoRA, rank: 32, seq: 4096,
			button: []string{"meta-llama/Llama-3.1-8B", "qlora", "l40s", "bs=4", "seq=4096", "rank=32", "framework=axolotl"},
			note:   "Your axolotl job, read with what the run printed"},
		{name: "the traceback alone", paste: bareOOM, noJob: true},
		{name: "a job naming no model", paste: "```yaml\nadapter: lora\nmicro_batch_size: 2\nsequence_len: 1024\n```\n" + bareOOM, noJob: true},
		{name: "a model nobody knows", paste: strings.Replace(axolotlQLoRA, "meta-llama/Llama-3.1-8B", "nobody/never-heard-of-7b-zz", 1) + bareOOM,
			note: "but it was not sized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Diagnose(context.Background(), tt.paste, Deps{})
			jf := a.Result.JobFile
			switch {
			case tt.noJob:
				if jf != nil {
					t.Fatalf("job_file = %+v, want none", jf)
				}
				return
			case jf == nil:
				t.Fatal("no job_file")
			case jf.Used != tt.used:
				t.Fatalf("used = %v (%s), want %v", jf.Used, jf.Note, tt.used)
			}
			if !strings.Contains(strings.Join(a.Details.Context, "\n"), tt.note) {
				t.Errorf("context %q lacks %q", a.Details.Context, tt.note)
			}
			if !tt.used {
				return
			}
			s := a.Result.Diagnosis.Sizing
			if s == nil {
				t.Fatal("no sizing")
			}
			if w := s.Workload; w.Method != tt.method || w.LoRARank != tt.rank || w.SeqLen != tt.seq || s.GPU != "L40S" {
				t.Errorf("sized %s rank %d seq %d on %s, want %s rank %d seq %d on the L40S", w.Method, w.LoRARank, w.SeqLen, s.GPU, tt.method, tt.rank, tt.seq)
			}
			q := estimateButton(a.Reply)
			for _, w := range tt.button {
				if !strings.Contains(" "+q+" ", " "+w+" ") {
					t.Errorf("Estimate button %q lacks %q", q, w)
				}
			}
		})
	}
}

func estimateButton(r reply.Reply) string {
	for _, a := range r.Actions {
		if a.ID == reply.ActionEstimate {
			return a.Value
		}
	}
	return ""
}
