package oom

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vrambot/vrambot/advisor/fix"
)

func TestReadWorkload(t *testing.T) {
	tests := []struct {
		name, text string
		check      func(PasteWorkload) bool
	}{
		{"hf trainer args", "TrainingArguments(per_device_train_batch_size=8, gradient_accumulation_steps=4, bf16=True, gradient_checkpointing=False, max_seq_length=2048)",
			func(w PasteWorkload) bool {
				return w.Batch == 8 && w.AccumSteps == 4 && w.Precision == "bf16" && w.GradCheckpointing != nil && !*w.GradCheckpointing && w.SeqLen == 2048
			}},
		{"deepspeed config", `{"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}}, "fp16": {"enabled": true}}`,
			func(w PasteWorkload) bool {
				return w.Batch == 2 && w.ZeroStage == 3 && w.Offload == "optimizer" && w.Precision == "fp16"
			}},
		{"vllm command line", "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 32768 --gpu-memory-utilization 0.85 --tensor-parallel-size 2",
			func(w PasteWorkload) bool {
				return w.Model == "Qwen/Qwen2.5-7B-Instruct" && w.MaxModelLen == 32768 && w.GPUMemoryUtilization == 0.85 && w.TP == 2
			}},
		{"llama.cpp command line", "./llama-server -m models/x-Q8_0.gguf -ngl 99 -c 16384",
			func(w PasteWorkload) bool {
				return w.Model == "models/x-Q8_0.gguf" && w.GPULayers == 99 && w.NCtx == 16384 && w.Quant == "Q8_0"
			}},
		{"ranks", "[rank0]: a\n[rank7]: b\n", func(w PasteWorkload) bool { return w.GPUs == 8 }},
		{"lora", "peft_config=LoraConfig(r=16)", func(w PasteWorkload) bool { return w.Method == "lora" }},
		{"nothing", "hello", func(w PasteWorkload) bool {
			return w.Batch == 0 && w.ZeroStage == -1 && w.GPULayers == -1 && w.Model == ""
		}},
	}
	for _, tt := range tests {
		w := readWorkload(pasteText{tt.text, strings.ToLower(tt.text)}, nil)
		if !tt.check(w) {
			t.Errorf("%s: %+v", tt.name, w)
		}
	}
}

func TestReadGrowth(t *testing.T) {
	tests := []struct {
		name, text string
		grows      bool
	}{
		{"rising series", "step 1 mem 10.0 GB\nstep 2 mem 14.0 GB\nstep 3 mem 19.5 GB\n", true},
		{"flat series", "step 1 max_memory_allocated 31.2 GiB\nstep 2 max_memory_allocated 31.2 GiB\nstep 3 max_memory_allocated 31.3 GiB\n", false},
		{"up and down", "mem 10 GB\nmem 20 GB\nmem 10 GB\nmem 20 GB\nmem 10 GB\nmem 21 GB\n", false},
		{"arrow", "GPU memory went 18 GB → 39 GB over the epoch\n", true},
		{"oom lines do not count", "CUDA out of memory. 1.00 GiB allocated\nCUDA out of memory. 9.00 GiB allocated\nCUDA out of memory. 20.00 GiB allocated\n", false},
		{"small growth", "mem 10.0 GB\nmem 10.2 GB\nmem 10.4 GB\n", false},
	}
	for _, tt := range tests {
		if g := readGrowth(tt.text); g.Grows() != tt.grows {
			t.Errorf("%s: %+v grows=%v, want %v", tt.name, g, g.Grows(), tt.grows)
		}
	}
}

func TestReadSteps(t *testing.T) {
	for text, want := range map[string]int{
		"step 1500 | loss 2.1":                                    1500,
		"<epoch: 30, iter:   2,800, lr:1.000e-04>":                2800,
		"Epoch 1:  45%|████▌ | 450/1000 [02:13<02:43,  3.37it/s]": 450,
		"global_step=208.0":                                       208,
		"nothing here":                                            0,
	} {
		if got := readSteps(text); got != want {
			t.Errorf("readSteps(%q) = %d, want %d", text, got, want)
		}
	}
}

func TestCappedContext(t *testing.T) {
	for est, want := range map[int]int{37728: 32768, 34736: 32768, 122080: 121856, 5632: 5120, 23648: 23552, 0: 0, 1: 1, 100: 96} {
		got := cappedContext(est)
		if got != want {
			t.Errorf("cappedContext(%d) = %d, want %d", est, got, want)
		}
		if est > 0 && (got > est || float64(got) < contextShare*float64(est)) {
			t.Errorf("cappedContext(%d) = %d: not at most the estimate and within %.0f%% of it", est, got, 100*(1-contextShare))
		}
	}
}

func TestEngineNeed(t *testing.T) {
	const g = int64(1) << 30
	// 24 GiB at 0.9: 21.6 GiB budget, 4.6 GiB of it KV: 17 GiB besides;
	// 17 + 16 GiB of KV over 0.9 is 36.7 GiB.
	if n := engineNeed(24*g, 0.9, 46*g/10, 16*g); n < 36*g || n > 37*g {
		t.Errorf("engineNeed = %.1f GiB, want about 36.7", float64(n)/float64(g))
	}
	if n := engineNeed(0, 0.9, g, 2*g); n != 0 {
		t.Errorf("no total: %d, want 0", n)
	}
	if n := engineNeed(24*g, 0.9, 5*g, 4*g); n != 0 {
		t.Errorf("enough KV: %d, want 0", n)
	}
}

const convBackward = `Traceback (most recent call last):
  File "train.py", line 40, in <module>
    loss.backward()
  File "/x/torch/_tensor.py", line 581, in backward
    torch.autograd.backward(
  File "/x/torch/autograd/graph.py", line 825, in _engine_run_backward
    return Variable._execution_engine.run_backward(
  File "/x/torchvision/models/resnet.py", line 285, in forward
    return self._forward_impl(x)
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.64 GiB of which 1.00 GiB is free. Of the allocated memory 21.00 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated.`

// TestFixesFitTheStack: no fused attention or logits fixes for a CNN, no
// inference_mode inside generate(), the next ZeRO step from the one run.
func TestFixesFitTheStack(t *testing.T) {
	gen := "  File \"x.py\", line 3, in <module>\n    out = model.generate(**inputs, max_new_tokens=512)\n  File \"/x/transformers/generation/utils.py\", line 2215, in generate\n    result = self._sample(\n" +
		msg("1.00 GiB", "23.64 GiB", "100.00 MiB", "", "22.00 GiB", "10.00 MiB")
	zero := func(cfg string) string {
		return cfg + "\n  File \"/x/deepspeed/runtime/engine.py\", line 2216, in backward\n    self.optimizer.backward(loss)\n  File \"/x/torch/autograd/graph.py\", line 825, in _engine_run_backward\n    return Variable._execution_engine.run_backward(\n" +
			msg("2.00 GiB", "79.14 GiB", "1.00 GiB", "", "75.00 GiB", "1.00 GiB")
	}
	tests := []struct {
		name, paste string
		has, not    []string
	}{
		{"cnn backward", convBackward, []string{fix.GradAccum}, []string{fix.FlashAttention, fix.ChunkedLoss, fix.LoRA}},
		{"generate", gen, []string{fix.SmallerBatch}, []string{fix.InferenceMode}},
		{"zero-1", zero(`deepspeed {"zero_optimization": {"stage": 1}}`), []string{fix.Zero2, fix.Zero3}, []string{fix.ZeroOffload}},
		{"zero-2", zero(`deepspeed {"zero_optimization": {"stage": 2}}`), []string{fix.Zero3}, []string{fix.Zero2, fix.ZeroOffload, fix.ParamOffload}},
		{"zero-3", zero(`deepspeed {"zero_optimization": {"stage": 3}}`), []string{fix.ZeroOffload, fix.ParamOffload}, []string{fix.Zero2, fix.Zero3}},
		{"zero-3 offload", zero(`deepspeed {"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}}}`), []string{fix.ParamOffload}, []string{fix.Zero3, fix.ZeroOffload}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids := fixIDs(Diagnose(Parse(tt.paste)))
			for _, id := range tt.has {
				if !slices.Contains(ids, id) {
					t.Errorf("fixes %v lack %s", ids, id)
				}
			}
			for _, id := range tt.not {
				if slices.Contains(ids, id) {
					t.Errorf("fixes %v include %s", ids, id)
				}
			}
		})
	}
}

// TestAfterManySteps: an OOM after many steps with no growth in the log
// is read as what changes between steps, not as sizes that never fit.
func TestAfterManySteps(t *testing.T) {
	paste := "step 4800 | loss 1.2\nstep 4900 | loss 1.1\n  File \"train.py\", line 9, in <module>\n    loss.backward()\n" + msg("2.00 GiB", "79.14 GiB", "1.00 GiB", "", "75.00 GiB", "1.00 GiB")
	d := Diagnose(Parse(paste))
	if !slices.Contains(causeIDs(d), CauseAfterManySteps) {
		t.Errorf("causes %v lack %s", causeIDs(d), CauseAfterManySteps)
	}
}

func FuzzReadFacts(f *testing.F) {
	f.Add("step 1 mem 10 GB\nstep 2 mem 20 GB\nstep 3 mem 30 GB\nper_device_train_batch_size=8", 40)
	f.Add("vllm serve x --max-model-len 99999999999999999999 -ngl -1 -c 1\nmem 1 GB → 99999999 TB", 10)
	f.Add(convBackward, len(convBackward))
	f.Add("trainable params: 3,833,856 || all params: 8,194,569,216 || trainable%: 0.0468\nNumber of trainable parameters = 99999999999999999999999", 10)
	f.Add("Initializing a V1 LLM engine (v0.9.1) with config: model='x', max_seq_len=99999999, tensor_parallel_size=999, quantization=awq, kv_cache_dtype=fp8", 0)
	f.Add("print_info: file type   = Q4_K - Medium\nload_tensors: offloaded 47/81 layers to GPU\nfsdp_sharding_strategy: FULL_SHARD\nCreating BF16 optimizer\n[INFO] [stage_1_and_2.py:151:__init__] CPU Offload: True", 30)
	f.Fuzz(func(t *testing.T, text string, at int) {
		if at < 0 || at > len(text) {
			at = len(text)
		}
		facts := readFacts(text, at, nil)
		if facts.Growth.From < 0 || facts.Growth.To < 0 || facts.Steps < 0 {
			t.Fatalf("negative reading: %+v", facts)
		}
		w := facts.Workload
		if len(w.Read) > maxReadings || w.TrainableParams < 0 || w.AllParams < 0 || w.MaxModelLen < 0 || w.NCtx < 0 {
			t.Fatalf("reading out of bounds: %+v", w)
		}
		for _, r := range w.Read {
			if len(r.From) > maxFromBytes+len("…") || !utf8.ValidString(r.From) {
				t.Fatalf("reading's words %q", r.From)
			}
		}
		_ = cappedContext(facts.Engine.EstimatedMaxLen)
	})
}
