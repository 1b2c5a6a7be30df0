package oom

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/advisor/fix"
)

// oomLine is a torch OOM message to end a paste with, so that the job
// readers run on what precedes it.
const oomLine = "\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.54 GiB of which 1.00 GiB is free. Including non-PyTorch memory, this process has 22.30 GiB memory in use. Of the allocated memory 21.71 GiB is allocated by PyTorch, and 156.40 MiB is reserved by PyTorch but unallocated.\n"

// TestJobReaders reads each kind of line issue 23 named (docs/oom-diagnosis.md
// §3), one minimal paste each, into the job's JSON.
func TestJobReaders(t *testing.T) {
	tests := []struct {
		name, text string
		want       map[string]any
	}{
		{"peft's count is lora", "trainable params: 3,833,856 || all params: 8,194,569,216 || trainable%: 0.0468" + oomLine,
			map[string]any{"method": "lora", "trainable_params": 3833856, "all_params": 8194569216}},
		{"old peft without commas", "trainable params: 4194304 || all params: 6742609920 || trainable%: 0.06220594176090199" + oomLine,
			map[string]any{"method": "lora", "trainable_params": 4194304}},
		{"a full count is not an adapter", "trainable params: 6,742,609,920 || all params: 6,742,609,920 || trainable%: 100.0000\n  File \"t.py\", line 3, in <module>\n    loss.backward()" + oomLine,
			map[string]any{"method": "full", "trainable_params": 6742609920}},
		{"unsloth's banner", "==((====))==  Unsloth - 2x faster free finetuning | Num GPUs = 1\n   \\\\   /|    Num examples = 51,760 | Num Epochs = 1\nO^O/ \\_/ \\    Batch size per device = 2 | Gradient Accumulation steps = 4\n \"-____-\"     Number of trainable parameters = 41,943,040" + oomLine,
			map[string]any{"method": "lora", "trainable_params": 41943040, "batch": 2, "grad_accum_steps": 4, "engine": "hf"}},
		{"bitsandbytes 4-bit makes it qlora", "BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type='nf4')\npeft_config=LoraConfig(r=16)" + oomLine,
			map[string]any{"method": "qlora", "quantization": "bnb-4bit"}},
		{"sftconfig echo", "SFTConfig(per_device_train_batch_size=8, gradient_accumulation_steps=2, gradient_checkpointing=True, max_seq_length=4096, bf16=True, optim=paged_adamw_8bit)" + oomLine,
			map[string]any{"batch": 8, "grad_accum_steps": 2, "gradient_checkpointing": true, "seq_len": 4096, "precision": "bf16", "optimizer": "paged_adamw_8bit"}},
		{"deepspeed's zero line", "[2025-03-14 10:21:09,887] [INFO] [logging.py:128:log_dist] [Rank 0] Creating torch.bfloat16 ZeRO stage 2 optimizer\n[2025-03-14 10:21:10,102] [INFO] [stage_1_and_2.py:151:__init__] CPU Offload: True" + oomLine,
			map[string]any{"zero_stage": 2, "offload": "optimizer", "method": "full", "where": "optimizer-init"}},
		{"accelerate's fsdp echo", "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n  fsdp_offload_params: true\nmixed_precision: bf16\nnum_processes: 4" + oomLine,
			map[string]any{"sharding": "full-shard", "offload": "param", "gpus": 4, "precision": "bf16"}},
		{"vllm's engine config line", "INFO 06-12 09:14:16 [core.py:70] Initializing a V1 LLM engine (v0.9.1) with config: model='Qwen/Qwen2.5-7B-Instruct-AWQ', speculative_config=None, dtype=torch.float16, max_seq_len=32768, tensor_parallel_size=2, pipeline_parallel_size=1, quantization=awq_marlin, enforce_eager=False, kv_cache_dtype=fp8" + oomLine,
			map[string]any{"model": "Qwen/Qwen2.5-7B-Instruct-AWQ", "engine": "vllm", "method": "inference", "max_model_len": 32768, "tp": 2, "quantization": "awq_marlin", "kv_cache_dtype": "fp8", "seq_len": nil}},
		{"vllm's non-default args", "INFO [cli_args.py:309] non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', 'max_model_len': 65536, 'gpu_memory_utilization': 0.85}\n(VllmWorker TP1 pid=4) x" + oomLine,
			map[string]any{"model": "meta-llama/Llama-3.1-8B-Instruct", "max_model_len": 65536, "gpu_memory_utilization": 0.85, "tp": nil}},
		{"llama.cpp's flags and type", "./llama-server -m m/Qwen3-32B-Q5_K_M.gguf -c 8192 -ngl 65\nprint_info: file type   = Q5_K - Medium\nallocating 1024.00 MiB on device 0: cudaMalloc failed: out of memory\n",
			map[string]any{"model": "m/Qwen3-32B-Q5_K_M.gguf", "engine": "llama.cpp", "n_ctx": 8192, "ngl": 65, "gguf_type": "Q5_K_M"}},
		{"llama.cpp's ftype name", "llm_load_print_meta: model ftype      = Q4_K - Medium\nllm_load_tensors: offloaded 33/33 layers to GPU\nggml_backend_cuda_buffer_type_alloc_buffer: allocating 4096.00 MiB on device 0: cudaMalloc failed: out of memory\n",
			map[string]any{"gguf_type": "Q4_K_M", "ngl": 33}},
		{"ollama's num_ctx", "time=2025-01-10 level=INFO msg=\"starting llama server\" cmd=\"/usr/bin/ollama runner --model /root/.ollama/models/blobs/sha256-1 --ctx-size 8192 --batch-size 512 --n-gpu-layers 29 --threads 8\"\nollama  | ggml_backend_cuda_buffer_type_alloc_buffer: allocating 2048.00 MiB on device 0: cudaMalloc failed: out of memory\n",
			map[string]any{"engine": "ollama", "n_ctx": 8192, "ngl": 29}},
		{"tgi's launcher", "text-generation-launcher --model-id /data/gemma-3-27b-it --num-shard 4 --max-total-tokens 32000\n```\n\nI get the following error:\n```\nERROR warmup{}:warmup: Not enough memory to handle 31000 prefill tokens. You need to decrease `--max-batch-prefill-tokens`\n",
			map[string]any{"model": "/data/gemma-3-27b-it", "engine": "tgi", "tp": 4, "max_model_len": 32000, "method": "inference"}},
		{"nothing read", oomLine, map[string]any{"method": nil, "engine": nil, "read": []any{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Parse(tt.text)
			if !r.Detected || r.Job == nil {
				t.Fatalf("not detected, or no job")
			}
			b, _ := json.Marshal(r.Job)
			var got map[string]any
			_ = json.Unmarshal(b, &got)
			for k, want := range tt.want {
				if !jsonEqual(got[k], want) {
					t.Errorf("%s: got %v, want %v (job %s)", k, got[k], want, b)
				}
			}
			for _, rd := range r.Job.Read {
				if rd.Setting == "" || rd.Value == "" || rd.From == "" || len(rd.From) > maxFromBytes+len("…") {
					t.Errorf("reading %+v: every reading says what, as what, and from which words", rd)
				}
			}
		})
	}
}

func TestGGUFType(t *testing.T) {
	for in, want := range map[string]string{"Q4_K - Medium": "Q4_K_M", "Q2_K - Medium": "Q2_K", "Q3_K - Small": "Q3_K_S", "q8_0": "Q8_0", "Q3_K - Extra small": "Q3_K_XS", "IQ4_XS": "IQ4_XS"} {
		if got := ggufType(in); got != want {
			t.Errorf("ggufType(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"Q8_0": "Q4_K_M", "F16": "Q4_K_M", "Q4_K_M": "IQ4_XS", "IQ4_XS": "Q3_K_M", "Q2_K": "", "nope": ""} {
		if got := nextQuant(in); got != want {
			t.Errorf("nextQuant(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWhereLeads checks that each place a job fails is read, and that the
// fix for it goes first (docs/oom-diagnosis.md §4, §5).
func TestWhereLeads(t *testing.T) {
	frame := func(path, fn, src string) string {
		return "  File \"" + path + "\", line 1, in " + fn + "\n    " + src + "\n"
	}
	tests := []struct {
		name, text, where, first string
	}{
		{"zero init", frame("/x/deepspeed/runtime/engine.py", "_configure_zero_optimizer", "optimizer = DeepSpeedZeroOptimizer(") +
			frame("/x/deepspeed/runtime/zero/stage_1_and_2.py", "__init__", "weights_partition = self.parallel_partitioned_bit16_groups[i][partition_id].to(") + oomLine[1:],
			WhereOptimizerInit, fix.Zero3},
		{"bf16 optimizer", frame("/x/deepspeed/runtime/bf16_optimizer.py", "_setup_for_real_optimizer", "self.fp32_groups_flat_partition.append(") + oomLine[1:],
			WhereOptimizerInit, fix.Zero2},
		{"lm_head", frame("/x/transformers/models/llama/modeling_llama.py", "forward", "logits = self.lm_head(hidden_states[:, slice_indices, :])") +
			frame("/x/torch/nn/modules/linear.py", "forward", "return F.linear(input, self.weight, self.bias)") + oomLine[1:],
			WhereLogits, fix.ChunkedLoss},
		{"eager attention", frame("/x/train.py", "<module>", "out = model(**batch)") + frame("/x/transformers/models/llama/modeling_llama.py", "forward", "attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(self.head_dim)") +
			"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB. GPU 0 has a total capacity of 79.14 GiB of which 1.00 GiB is free. Of the allocated memory 76.00 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated.\n",
			WhereForward, fix.FlashAttention},
		{"fragmentation", msg("1.99 GiB", "23.56 GiB", "1.23 GiB", "", "14.73 GiB", "6.39 GiB"), WhereFragmentation, fix.ExpandableSegments},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Parse(tt.text)
			if r.Job == nil || r.Job.Where != tt.where {
				t.Fatalf("where %v, want %s", r.Job, tt.where)
			}
			d := Diagnose(r)
			checkStageOrder(t, d)
			if got := firstFixID(d); got != tt.first {
				t.Errorf("first fix %s (fixes %v), want %s", got, fixIDs(d), tt.first)
			}
		})
	}
}

// TestFallShort checks that a fix the numbers show cannot close the gap
// says so and does not lead: raising vLLM's share by 1.2 GiB against an
// 11.3 GiB shortfall.
func TestFallShort(t *testing.T) {
	paste := "NVIDIA GeForce RTX 4090, 24564 MiB\nValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (4.73 GiB). Based on the available memory, the estimated maximum model length is 38736.\n"
	d := Diagnose(Parse(paste))
	if firstFixID(d) != fix.MaxModelLen || !slices.Contains(d.FallShort, fix.GPUMemoryUtilization) {
		t.Fatalf("first %s, falls short %v", firstFixID(d), d.FallShort)
	}
	for _, s := range d.Stages {
		for _, f := range s.Fixes {
			if f.ID == fix.GPUMemoryUtilization && !strings.Contains(f.Detail, "cannot close the gap alone: +1.2 GiB against the 11.3 GiB missing") {
				t.Errorf("detail %q", f.Detail)
			}
		}
	}
}

// TestDeviceIdioms checks that each device gets its own words and no
// CUDA-only snippet (docs/oom-diagnosis.md §6).
func TestDeviceIdioms(t *testing.T) {
	train := "  File \"/x/train.py\", line 9, in <module>\n    loss.backward()\n"
	tests := []struct {
		name, text string
		has, not   []string
	}{
		{"rocm", train + "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 1.99 GiB. GPU 0 has a total capacity of 63.98 GiB of which 1.23 GiB is free. Of the allocated memory 54.73 GiB is allocated by PyTorch, and 6.39 GiB is reserved by PyTorch but unallocated.\n",
			[]string{fix.ExpandableSegmentsROCm}, []string{fix.ExpandableSegments}},
		{"mps", train + "RuntimeError: MPS backend out of memory (MPS allocated: 17.88 GB, other allocations: 1.10 GB, max allowed: 18.13 GB). Tried to allocate 256.00 MB on private pool.\n",
			[]string{fix.MixedPrecisionMPS, fix.MPSEmptyCache}, []string{fix.MixedPrecision, fix.KillOtherProcess, fix.Optim8bit, fix.FlashAttention}},
		{"xpu", train + "torch.OutOfMemoryError: XPU out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 15.11 GiB. Of the allocated memory 12.50 GiB is allocated by PyTorch, and 1.10 GiB is reserved by PyTorch but unallocated.\n",
			nil, []string{fix.ExpandableSegments, fix.KillOtherProcess, fix.MixedPrecision}},
		{"tpu", "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Ran out of memory in memory space hbm. Used 17.52G of 15.48G hbm. Exceeded hbm capacity by 2.04G.\n",
			[]string{fix.TPUMemoryProfile}, []string{fix.JAXMemFraction, fix.ExpandableSegments}},
	}
	cudaOnly := []string{"nvidia-smi", "PYTORCH_CUDA_ALLOC_CONF", `autocast("cuda"`, "torch.cuda."}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Diagnose(Parse(tt.text))
			ids := fixIDs(d)
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
			if tt.name == "rocm" {
				return // ROCm builds name AMD GPUs "cuda": torch.cuda and autocast("cuda") are theirs too
			}
			for _, s := range d.Stages {
				for _, f := range s.Fixes {
					for _, c := range cudaOnly {
						if strings.Contains(f.Snippet, c) {
							t.Errorf("%s: %s's snippet has CUDA's %q: %q", tt.name, f.ID, c, f.Snippet)
						}
					}
				}
			}
		})
	}
}

// TestMeasurementTrusted checks the reconciliation of docs/oom-diagnosis.md
// §7: a job that ran up to the OOM is sized from its own numbers when the
// estimate of it as read is far from them, and from the estimate when it
// is close or the OOM came before the first step.
func TestMeasurementTrusted(t *testing.T) {
	lora := "--model_name_or_path Qwen/Qwen3-8B --per_device_train_batch_size 4 --max_length 2048 --bf16\n  File \"/x/transformers/trainer.py\", line 3730, in training_step\n    loss = self.compute_loss(model, inputs)\n  File \"/x/trl/trainer/sft_trainer.py\", line 1055, in compute_loss\n    (loss, outputs) = super().compute_loss(\n  File \"/x/transformers/loss/loss_utils.py\", line 64, in ForCausalLMLoss\n    logits = logits.float()\n"
	full := strings.Replace(lora, "--bf16", "--bf16 --gradient_checkpointing False", 1)
	tests := []struct {
		name, text, trusted string
		sized               bool
	}{
		{"lora as read agrees", "trainable params: 3,833,856 || all params: 8,194,569,216 || trainable%: 0.0468\n" + lora + strings.TrimPrefix(oomLine, "\n"), TrustEstimate, true},
		// The same OOM read as a full fine-tune (no adapter in the paste):
		// the estimate is several times what the step held.
		{"full as read disagrees", full + "  File \"/x/train.py\", line 3, in <module>\n    loss.backward()\n" + strings.TrimPrefix(oomLine, "\n"), TrustMeasurement, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Diagnose(Parse(tt.text))
			m := d.Measured
			if m == nil || m.Trusted != tt.trusted || (d.Sizing != nil) != tt.sized {
				t.Fatalf("measured %+v, sizing %v: want %s trusted, sized %v", m, d.Sizing != nil, tt.trusted, tt.sized)
			}
			if m.NeedBytes != m.HeldBytes+m.AskedBytes || m.ShortBytes <= 0 {
				t.Errorf("need %d = held %d + asked %d, short %d", m.NeedBytes, m.HeldBytes, m.AskedBytes, m.ShortBytes)
			}
			if tt.trusted == TrustMeasurement {
				for _, s := range d.Stages {
					for _, f := range s.Fixes {
						if f.SavesBytes != nil {
							t.Errorf("%s carries the set-aside estimate's savings", f.ID)
						}
					}
				}
			}
		})
	}
}

// TestLlamaCPPLayers checks -ngl from the free memory and what one layer
// costs, its KV cache included (docs/oom-diagnosis.md §5): from the
// buffers a failing run logged, or from print_info's KV widths when the
// weights failed before any KV cache was sized, or from Ollama's plan.
func TestLlamaCPPLayers(t *testing.T) {
	head := "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4090) - 23871 MiB free\nprint_info: file type   = Q4_K - Medium\nprint_info: n_layer          = 80\nprint_info: n_embd_k_gqa     = 1024\nprint_info: n_embd_v_gqa     = 1024\n"
	tests := []struct {
		name, text, ngl string
	}{
		// 47 layers: 22704 MiB of weights and 3008 MiB of KV, 547 MiB a
		// layer; 23871 MiB less 1 GiB of compute and 512 MiB hold 40.
		{"kv cache failed", "./llama-server -m m/L-70B-Q4_K_M.gguf -ngl 47 -c 16384\n" + head +
			"load_tensors: offloaded 47/81 layers to GPU\nload_tensors:        CUDA0 model buffer size = 22704.23 MiB\nllama_context: n_ctx         = 16384\n" +
			"ggml_backend_cuda_buffer_type_alloc_buffer: allocating 3008.00 MiB on device 0: cudaMalloc failed: out of memory\nllama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache\n", "-ngl 40 "},
		// All 81 layers: 40540 MiB of weights (500 MiB a layer) and, from
		// print_info, 64 MiB of f16 KV a layer at 16384 tokens: 39 fit.
		{"weights failed", "./llama-server -m m/L-70B-Q4_K_M.gguf -ngl 99 -c 16384\n" + head +
			"load_tensors: offloading 80 repeating layers to GPU\nload_tensors: offloaded 81/81 layers to GPU\n" +
			"ggml_backend_cuda_buffer_type_alloc_buffer: allocating 40540.00 MiB on device 0: cudaMalloc failed: out of memory\nalloc_tensor_range: failed to allocate CUDA0 buffer of size 42509664256\nllama_model_load: error loading model: unable to allocate CUDA0 buffer\n", "-ngl 39 "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Diagnose(Parse(tt.text))
			if first := firstFixID(d); first != fix.LayerOffload {
				t.Fatalf("first fix %s (%v)", first, fixIDs(d))
			}
			if f := d.Stages[0].Fixes[0]; !strings.Contains(f.Snippet, tt.ngl) {
				t.Errorf("snippet %q, want %s", f.Snippet, tt.ngl)
			}
		})
	}
}
