package query

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/advisor/memory"
)

func TestParseQuery(t *testing.T) {
	tests := []struct {
		name  string
		query string
		check func(t *testing.T, q Query)
	}{
		{"minimal: model only, everything defaulted", "7b", func(t *testing.T, q Query) {
			w := q.Workload
			eq(t, "method", w.Method, memory.MethodInference)
			eq(t, "gpu", q.GPU.Key, "A100-80GB")
			eq(t, "requested", q.RequestedGPU, "")
			eq(t, "precision", w.Precision, memory.PrecisionBF16)
			eq(t, "params", w.Params, int64(7_000_000_000))
			eq(t, "seq", w.SeqLen, 2048)
			eq(t, "batch", w.Batch, 1)
			eq(t, "engine", w.Engine, "hf")
			eq(t, "kv", w.KVCacheDtype, "fp16")
			for _, d := range []string{DefaultMethod, DefaultGPU, DefaultPrecision, DefaultBatch, DefaultSeq, DefaultAttn, DefaultKV, DefaultEngine} {
				if !slices.Contains(q.Defaults, d) {
					t.Errorf("Defaults %v lacks %q", q.Defaults, d)
				}
			}
			hasAssumption(t, w, "method not given: assuming inference")
			hasAssumption(t, w, "GPU not given: assuming A100 80GB")
			eq(t, "scaled", w.Model.Scaled, true)
		}},
		{"the design's example", "7b lora a100", func(t *testing.T, q Query) {
			eq(t, "method", q.Workload.Method, memory.MethodLoRA)
			eq(t, "requested", q.RequestedGPU, "A100-80GB")
			eq(t, "precision", q.Workload.Precision, memory.PrecisionBF16)
			eq(t, "optim", q.Workload.Optimizer, memory.OptimizerAdamW)
			if slices.Contains(q.Defaults, DefaultGPU) || slices.Contains(q.Defaults, DefaultMethod) {
				t.Errorf("method and GPU were given, Defaults = %v", q.Defaults)
			}
			if !slices.Contains(q.Defaults, DefaultGC) {
				t.Errorf("gc not given, but Defaults = %v (memory.Resolve states the default)", q.Defaults)
			}
		}},
		{"any order, any case, key=value", "BS=4 4090 QLoRA Llama-3-8B seq=4096", func(t *testing.T, q Query) {
			w := q.Workload
			eq(t, "model", w.ModelName, "llama-3-8b")
			eq(t, "method", w.Method, memory.MethodQLoRA)
			eq(t, "precision", w.Precision, memory.PrecisionNF4)
			eq(t, "gpu", q.GPU.Key, "RTX4090")
			eq(t, "bs", w.Batch, 4)
			eq(t, "seq", w.SeqLen, 4096)
		}},
		{"hugging face id", "meta-llama/Llama-2-7b-hf full h100", func(t *testing.T, q Query) {
			// The user's id names the model (issue 22), the catalog's
			// llama-2-7b its architecture.
			eq(t, "model", q.Workload.ModelName, "meta-llama/Llama-2-7b-hf")
			eq(t, "architecture", q.Workload.Model.Name, "Llama-2-7B")
			eq(t, "params", q.Workload.Params, int64(6738415616))
			eq(t, "precision", q.Workload.Precision, memory.PrecisionMixedBF16)
			eq(t, "gpu", q.GPU.Key, "H100-SXM")
		}},
		{"two-word GPU name", "mistral-7b a100 40gb", func(t *testing.T, q Query) {
			eq(t, "gpu", q.GPU.Key, "A100-40GB")
		}},
		{"GPU count prefix", "llama-2-70b 8xh100", func(t *testing.T, q Query) {
			eq(t, "gpu", q.GPU.Key, "H100-SXM")
			eq(t, "gpus", q.Workload.GPUs, 8)
		}},
		{"GPU count as separate word", "llama-2-70b full 4x a100 zero=3", func(t *testing.T, q Query) {
			eq(t, "gpus", q.Workload.GPUs, 4)
			eq(t, "zero", q.Workload.ZeroStage, 3)
		}},
		{"GPU count before a two-word GPU name", "7b full 8x a100 40gb", func(t *testing.T, q Query) {
			eq(t, "gpu", q.GPU.Key, "A100-40GB")
			eq(t, "gpus", q.Workload.GPUs, 8)
		}},
		{"memory budget in GB is GiB", "7b 24gb", func(t *testing.T, q Query) {
			eq(t, "usable", q.GPU.UsableBytes, int64(24<<30))
			eq(t, "budget", q.Budget, true)
			eq(t, "requested", q.RequestedGPU, "")
			hasAssumption(t, q.Workload, "read as 24 GiB usable")
		}},
		{"memory budget in GiB with decimals", "7b 79.5GiB", func(t *testing.T, q Query) {
			eq(t, "usable", q.GPU.UsableBytes, int64(79.5*(1<<30)))
		}},
		{"gpu= key", "7b gpu=l40s", func(t *testing.T, q Query) { eq(t, "gpu", q.GPU.Key, "L40S") }},
		{"V100 gets fp16, never bf16", "7b full v100", func(t *testing.T, q Query) {
			eq(t, "precision", q.Workload.Precision, memory.PrecisionMixedFP16)
			hasAssumption(t, q.Workload, "has no bf16")
		}},
		{"T4 inference gets fp16", "7b t4", func(t *testing.T, q Query) {
			eq(t, "precision", q.Workload.Precision, memory.PrecisionFP16)
		}},
		{"explicit bf16 on V100 is kept with a warning", "7b lora v100 precision=bf16", func(t *testing.T, q Query) {
			eq(t, "precision", q.Workload.Precision, memory.PrecisionBF16)
			hasAssumption(t, q.Workload, "V100 16GB has no bf16 support")
		}},
		{"every key", "7b lora a100 bs=2 seq=8k precision=mixed-bf16 optim=paged_adamw_8bit gc=on zero=2 offload=optimizer gpus=4 tp=1 pp=1 rank=64 targets=all attn=eager tokens=2B framework=trl", func(t *testing.T, q Query) {
			w := q.Workload
			eq(t, "bs", w.Batch, 2)
			eq(t, "seq", w.SeqLen, 8192)
			eq(t, "precision", w.Precision, memory.PrecisionMixedBF16)
			eq(t, "optim", w.Optimizer, memory.OptimizerPagedAdamW8bit)
			eq(t, "gc", w.GradCheckpointing, true)
			eq(t, "zero", w.ZeroStage, 2)
			eq(t, "offload", w.Offload, memory.OffloadOptimizer)
			eq(t, "gpus", w.GPUs, 4)
			eq(t, "rank", w.LoRARank, 64)
			eq(t, "targets", w.LoRATargets, "all")
			eq(t, "attn", w.Attention, memory.AttentionEager)
			eq(t, "tokens", w.Tokens, int64(2_000_000_000))
			eq(t, "framework", q.Framework, fix.FrameworkHF)
			eq(t, "training framework", w.Framework, memory.FrameworkTRL)
		}},
		{"the training techniques of 2026", "llama-3.1-8b full 8xh100 fsdp gc=selective loss=chunked optim-in-bwd=on act-offload=on offload=param framework=torchtune tokens=2B", func(t *testing.T, q Query) {
			w := q.Workload
			eq(t, "sharding", w.Sharding, memory.ShardingFSDP)
			eq(t, "zero", w.ZeroStage, 3)
			eq(t, "gc", w.Checkpointing, memory.CheckpointSelective)
			eq(t, "loss", w.Loss, memory.LossChunked)
			eq(t, "optim-in-bwd", w.OptimizerInBackward, true)
			eq(t, "act-offload", w.ActivationOffload, true)
			eq(t, "offload", w.Offload, memory.OffloadParam)
			eq(t, "framework", w.Framework, memory.FrameworkTorchtune)
			eq(t, "snippets", q.Framework, fix.FrameworkTorchtune)
			eq(t, "precision", w.Precision, memory.PrecisionBF16) // torchtune trains in pure bf16
			hasAssumption(t, w, "as torchtune trains")
		}},
		{"dora is a method with lora's keys", "7b dora rank=16 targets=all", func(t *testing.T, q Query) {
			eq(t, "method", q.Workload.Method, memory.MethodDoRA)
			eq(t, "rank", q.Workload.LoRARank, 16)
		}},
		{"ddp and zero-less multi-GPU", "7b full 4xa100 ddp", func(t *testing.T, q Query) {
			eq(t, "sharding", q.Workload.Sharding, memory.ShardingDDP)
			eq(t, "zero", q.Workload.ZeroStage, 0)
		}},
		{"zero= is DeepSpeed", "7b full 4xa100 zero=2", func(t *testing.T, q Query) {
			eq(t, "sharding", q.Workload.Sharding, memory.ShardingDeepSpeed)
		}},
		{"fsdp zero=2 is SHARD_GRAD_OP", "7b full 4xa100 fsdp zero=2", func(t *testing.T, q Query) {
			eq(t, "sharding", q.Workload.Sharding, memory.ShardingFSDP)
			eq(t, "zero", q.Workload.ZeroStage, 2)
		}},
		{"gc spellings", "7b lora gc=unsloth", func(t *testing.T, q Query) {
			eq(t, "gc", q.Workload.Checkpointing, memory.CheckpointOffloaded)
		}},
		{"aliases of the new keys", "7b full optimizer_in_backward=on activation_offloading=true cross_entropy=liger", func(t *testing.T, q Query) {
			eq(t, "optim-in-bwd", q.Workload.OptimizerInBackward, true)
			eq(t, "act-offload", q.Workload.ActivationOffload, true)
			eq(t, "loss", q.Workload.Loss, memory.LossChunked)
		}},
		{"V100 without precision: fp16 autocast with a GradScaler, said", "7b full v100", func(t *testing.T, q Query) {
			eq(t, "precision", q.Workload.Precision, memory.PrecisionMixedFP16)
			hasAssumption(t, q.Workload, "torch.amp.GradScaler")
		}},
		{"gradient accumulation", "llama-2-7b lora 2xa100 fsdp gradient_accumulation_steps=32 framework=lightning", func(t *testing.T, q Query) {
			eq(t, "ga", q.Workload.GradAccumSteps, 32)
			eq(t, "framework", q.Workload.Framework, memory.FrameworkLightning)
		}},
		{"tokens with k suffix", "7b lora tokens=750k", func(t *testing.T, q Query) { eq(t, "tokens", q.Workload.Tokens, int64(750_000)) }},
		{"tokens in exponent form", "7b tokens=1e9", func(t *testing.T, q Query) { eq(t, "tokens", q.Workload.Tokens, int64(1e9)) }},
		{"tokens with M suffix", "7b tokens=500M", func(t *testing.T, q Query) { eq(t, "tokens", q.Workload.Tokens, int64(5e8)) }},
		{"key = value with spaces", "7b bs = 8", func(t *testing.T, q Query) { eq(t, "bs", q.Workload.Batch, 8) }},
		{"leading vram word", "vram 7b lora", func(t *testing.T, q Query) { eq(t, "method", q.Workload.Method, memory.MethodLoRA) }},
		{"rank implies lora", "7b rank=16", func(t *testing.T, q Query) {
			eq(t, "method", q.Workload.Method, memory.MethodLoRA)
			hasAssumption(t, q.Workload, "rank= implies lora")
		}},
		{"gc off spelled false", "7b full gc=false", func(t *testing.T, q Query) {
			eq(t, "gc", q.Workload.GradCheckpointing, false)
			if slices.Contains(q.Defaults, DefaultGC) {
				t.Error("gc was given but is listed as a default")
			}
		}},
		{"vllm: seq defaults to the model's context", "llama-3.1-8b engine=vllm l40s", func(t *testing.T, q Query) {
			eq(t, "seq", q.Workload.SeqLen, 131072)
			eq(t, "framework", q.Framework, fix.FrameworkVLLM)
			hasAssumption(t, q.Workload, "vLLM's max_model_len defaults to the model's context")
		}},
		{"bitsandbytes, W8A8 and quantiser-named precisions", "llama-3.1-8b engine=vllm h100 precision=bnb-4bit", func(t *testing.T, q Query) {
			for v, want := range map[string]memory.Precision{"bnb": memory.PrecisionNF4, "bitsandbytes": memory.PrecisionNF4, "bnb_8bit": memory.PrecisionInt8,
				"w8a8": memory.PrecisionInt8, "GPTQ-Int8": memory.PrecisionInt8, "fp8_dynamic": "fp8", "awq-int4": "awq", "gptq_int4": "gptq", "gptq": "gptq"} {
				got, err := Parse("llama-3.1-8b engine=vllm h100 precision=" + v)
				if err != nil {
					t.Errorf("precision=%s: %v", v, err)
					continue
				}
				eq(t, "precision="+v, got.Workload.Precision, want)
			}
		}},
		{"seq default capped at the model maximum", "bert-large full", func(t *testing.T, q Query) {
			eq(t, "seq", q.Workload.SeqLen, 512)
		}},
		{"kv fp8 for inference", "llama-3-8b h100 kv=fp8", func(t *testing.T, q Query) {
			eq(t, "kv", q.Workload.KVCacheDtype, "fp8")
		}},
		{"offload=param implies zero 3", "7b full offload=param", func(t *testing.T, q Query) {
			eq(t, "zero", q.Workload.ZeroStage, 3)
			hasAssumption(t, q.Workload, "assuming DeepSpeed zero=3")
		}},
		{"tp sets the GPU count", "llama-2-70b tp=4", func(t *testing.T, q Query) {
			eq(t, "gpus", q.Workload.GPUs, 4)
			eq(t, "tp", q.Workload.TP, 4)
		}},
		{"bare precision, optimizer, attention and engine values", "7b BF16 a100 vllm eager", func(t *testing.T, q Query) {
			eq(t, "precision", q.Workload.Precision, memory.PrecisionBF16)
			eq(t, "engine", q.Workload.Engine, "vllm")
			eq(t, "attn", q.Workload.Attention, memory.AttentionEager)
			if slices.Contains(q.Defaults, DefaultPrecision) {
				t.Error("precision was given bare but is listed as a default")
			}
		}},
		{"bare optimizer with a training method", "7b full paged_adamw_8bit", func(t *testing.T, q Query) {
			eq(t, "optim", q.Workload.Optimizer, memory.OptimizerPagedAdamW8bit)
		}},
		{"unicode spaces and trailing commas", "7b,\u00a0lora,\u2003a100", func(t *testing.T, q Query) {
			eq(t, "method", q.Workload.Method, memory.MethodLoRA)
			eq(t, "gpu", q.GPU.Key, "A100-80GB")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := Parse(tt.query)
			if err != nil {
				t.Fatalf("ParseQuery(%q): %v", tt.query, err)
			}
			tt.check(t, q)
		})
	}
}

func TestParseQueryErrors(t *testing.T) {
	tests := []struct {
		query      string
		token      string // QueryError.Token
		message    string // substring of Error()
		suggestion string
	}{
		{"7b lorra a100", "lorra", "unknown method 'lorra' — did you mean 'lora'?", "lora"},
		{"7b lora a1000", "a1000", "unknown GPU 'a1000'", "a100"},
		{"llama-2-7bb lora", "llama-2-7bb", "unknown model 'llama-2-7bb'", "llama-2-7b"},
		{"acme/unknown-model-xyz lora", "acme/unknown-model-xyz", "unknown model", ""},
		{"7b zzzzzz", "zzzzzz", "unknown word 'zzzzzz'", ""},
		{"qwen3-8b zzzz", "zzzz", "unknown word 'zzzz'", ""}, // no stray word is read as a variant of the name
		{"llama-3.1-8b inference m3-max", "m3-max", "'m3-max' is an Apple M3 Max: its GPU shares the Mac's memory and may use about 75% of it, so give that as a budget — 48gb on a 64 GB Mac", ""},
		{"qwen3-8b m2 ultra lora", "m2 ultra", "is an Apple M2 Ultra", ""},
		{"mistral lora 4090", "mistral", "unknown model 'mistral' — which one? mistral-", ""},
		{"llama3 lora 4090", "llama3", "unknown model 'llama3': not in the catalog — which one? llama-3", ""},
		{"lora a100", "", "no model given", ""},
		{"", "", "no model given", ""},
		{"7b 13b", "13b", "two models given", ""},
		{"7b lora full", "full", "two methods given", ""},
		{"7b h100 auto", "auto", "'auto' needs its setting name — did you mean 'kv=fp16'?", "kv=fp16"},
		{"7b full all-linear", "all-linear", "needs its setting name", "targets=all"},
		{"7b full off", "off", "needs its setting name", "gc=off"},
		{"7b full 0", "0", "unknown word '0'", ""},
		{"7b bf16 precision=fp16", "precision=fp16", "precision given twice", ""},
		{"7b adamw", "optim=adamw", "is a training setting: add a method", ""},
		{"7b a100 h100", "h100", "two GPUs given", ""},
		{"7b a100 24gb", "24gb", "two GPUs given", ""},
		{"7b bs=-4", "-4", "bs must be a positive integer, got '-4'", ""},
		{"7b bs=0", "0", "bs must be a positive integer, got '0'", ""},
		{"7b bs=four", "four", "bs must be a positive integer, got 'four'", ""},
		{"7b bs=2000000", "2000000", "bs=2000000 is too large", ""},
		{"7b bs=99999999999999999999999", "99999999999999999999999", "too large", ""},
		{"7b bs=1.5", "1.5", "bs must be a positive integer", ""},
		{"7b seq=20000000", "20000000", "seq=20000000 is too large", ""},
		{"7b seq=99999k", "99999k", "too long", ""},
		{"7b seq=0k", "0k", "seq must be a positive integer", ""},
		{"7b seq=", "seq=", "seq= needs a value", ""},
		{"7b bs=4 bs=8", "bs=8", "bs given twice", ""},
		{"7b lora bss=4", "bss=4", "unknown setting 'bss' — did you mean 'bs'?", "bs"},
		{"7b lora qqqqqqq=4", "qqqqqqq=4", "unknown setting 'qqqqqqq' (one of", ""},
		{"7b lora precision=bf61", "bf61", "unknown precision 'bf61'", "bf16"},
		{"7b lora precision=fp64x", "fp64x", "unknown precision", ""},
		{"7b lora optim=adamw-9bit", "adamw-9bit", "unknown optim 'adamw-9bit'", "adamw-8bit"},
		{"7b lora gc=maybe", "maybe", "unknown gc 'maybe' (one of on, off, selective, offloaded)", ""},
		{"7b full 4xa100 ddp zero=3", "ddp", "give one of the two", ""},
		{"7b full 4xa100 fsdp ddp", "ddp", "two sharding strategies", ""},
		{"7b full 4xa100 fsdp zero=1", "zero=1", "no ZeRO-1 equivalent", ""},
		{"7b full 4xa100 ddp offload=param", "offload=param", "not ddp", ""},
		{"7b fsdp", "fsdp", "is a training setting: add a method", ""},
		{"7b inference fsdp", "fsdp", "does not apply to inference", ""},
		{"7b full loss=sparse", "sparse", "unknown loss 'sparse'", ""},
		{"7b full optim-in-bwd=maybe", "maybe", "unknown optim-in-bwd", ""},
		{"7b full optim=none optim-in-bwd=on", "optim-in-bwd=on", "has no step", ""},
		{"7b inference loss=chunked", "loss=chunked", "does not apply to inference", ""},
		{"7b inference ga=4", "ga=4", "does not apply to inference", ""},
		{"7b full ga=0", "0", "", ""},
		{"7b full chunked", "chunked", "needs its setting name", "loss=chunked"},
		{"7b full zero=4", "zero=4", "zero must be a ZeRO stage 0, 1, 2 or 3, got '4'", ""},
		{"7b full zero=-1", "zero=-1", "zero must be a ZeRO stage", ""},
		{"7b full offload=disk", "disk", "unknown offload", ""},
		{"7b full offload=param zero=2", "offload=param", "offload=param needs zero=3", ""},
		{"7b full offload=optimizer zero=0", "offload=optimizer", "needs a ZeRO stage", ""},
		{"7b gpus=0", "0", "gpus must be a positive integer", ""},
		{"7b gpus=3 tp=2", "gpus=3", "not a multiple of tp×pp = 2", ""},
		{"7b tp=0", "0", "tp must be a positive integer", ""},
		{"7b tp=1000 pp=1000", "tp=1000", "tp×pp = 1000000 is more GPUs than supported", ""},
		{"llama-2-7b tp=3", "tp=3", "does not divide", ""},
		{"7b 8xa100 gpus=4", "gpus=4", "contradicts", ""},
		{"7b lora rank=0", "0", "rank must be a positive integer", ""},
		{"7b lora rank=100000", "100000", "too large", ""},
		{"7b lora targets=mlp", "mlp", "unknown targets", ""},
		{"7b attn=flsh", "flsh", "unknown attn 'flsh'", "flash"},
		{"7b kv=fp4", "fp4", "unknown kv 'fp4'", "fp8"},
		{"7b tokens=-1", "-1", "tokens must be a positive number", ""},
		{"7b tokens=NaN", "NaN", "tokens must be a positive number", ""},
		{"7b tokens=inf", "inf", "tokens must be a positive number", ""},
		{"7b tokens=1e30", "1e30", "too large", ""},
		{"7b tokens=0.1", "0.1", "tokens must be a positive number", ""},
		{"7b engine=vlm", "vlm", "unknown engine 'vlm'", "vllm"},
		{"7b framework=caffe", "caffe", "unknown framework", ""},
		{"7b optim=adamw", "optim=adamw", "is a training setting: add a method", ""},
		{"7b inference gc=on", "gc=on", "does not apply to inference", ""},
		{"7b full rank=8", "rank=8", "applies to lora, qlora and dora only", ""},
		{"7b lora kv=fp8", "kv=fp8", "does not apply to training", ""},
		{"7b full engine=vllm", "engine=vllm", "does not train", ""},
		{"7b gpu=a1000", "gpu=a1000", "unknown GPU 'a1000'", "a100"},
		{"7b " + strings.Repeat("x", 1200), "", "query too long", ""},
		{strings.Repeat("7b ", 50), "", "too many words", ""},
		{"7b \xff\xfe", "", "not valid UTF-8", ""},
	}
	for _, tt := range tests {
		t.Run(tt.query[:min(len(tt.query), 40)], func(t *testing.T) {
			_, err := Parse(tt.query)
			var qe *Error
			if !errors.As(err, &qe) {
				t.Fatalf("ParseQuery(%q) = %v, want a *QueryError", tt.query, err)
			}
			if !strings.Contains(err.Error(), tt.message) {
				t.Errorf("error %q does not contain %q", err, tt.message)
			}
			if qe.Token != tt.token {
				t.Errorf("Token = %q, want %q", qe.Token, tt.token)
			}
			if qe.Suggestion != tt.suggestion {
				t.Errorf("Suggestion = %q, want %q", qe.Suggestion, tt.suggestion)
			}
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{
		"7b lora a100", "llama-3-8b qlora bs=4 seq=4096 4090", "meta-llama/Llama-2-7b-hf full 8xh100 zero=3",
		"7b 24gb tokens=2B", "7b bs=-4", "lorra", "a100 40gb", "8x a100", "7b seq=128k engine=vllm kv=fp8",
		"= = =", "bs=", "x×", "7b gpu=", "\xff", "7b 1.5.5gb", "_._", "7b -._ a100",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := Parse(s)
		if err != nil {
			var qe *Error
			if !errors.As(err, &qe) {
				t.Fatalf("error %v is not a *QueryError", err)
			}
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		w := q.Workload
		if w.Params <= 0 || w.Batch < 1 || w.SeqLen < 1 || w.GPUs < 1 || w.TP < 1 || w.PP < 1 {
			t.Fatalf("invalid workload from %q: %+v", s, w)
		}
		if q.GPU.UsableBytes <= 0 || q.GPU.Name == "" {
			t.Fatalf("no GPU from %q: %+v", s, q.GPU)
		}
		if w.Method == "" || w.Precision == "" {
			t.Fatalf("method or precision missing from %q", s)
		}
	})
}

func eq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func hasAssumption(t *testing.T, w memory.Workload, sub string) {
	t.Helper()
	for _, a := range w.Assumptions {
		if strings.Contains(a, sub) {
			return
		}
	}
	t.Errorf("no assumption contains %q: %q", sub, w.Assumptions)
}

// TestEveryTrainingFrameworkIsAWord: each framework whose defaults the
// estimator knows can be named with framework=, and its snippets exist in
// the fix catalogue's stacks.
func TestEveryTrainingFrameworkIsAWord(t *testing.T) {
	for _, fw := range memory.Frameworks() {
		q, err := Parse("7b lora framework=" + string(fw))
		if err != nil {
			t.Errorf("framework=%s: %v", fw, err)
			continue
		}
		if q.Workload.Framework != fw || !slices.Contains(fix.Frameworks(), q.Framework) {
			t.Errorf("framework=%s read as %q (snippets %q)", fw, q.Workload.Framework, q.Framework)
		}
	}
}

// TestWordsAreSettings: a framework, engine, precision or method named
// anywhere in a query or a sentence is a setting, never left out (issue
// 22); a bare weight format is the checkpoint's weights, the KV cache's
// dtype says so.
func TestWordsAreSettings(t *testing.T) {
	tests := []struct {
		query string
		want  map[string]string // setting → value in the reading
	}{
		{"can I full finetune llama 3.2 1b on a 4090 with torchtune?", map[string]string{"framework": "torchtune", "method": "full"}},
		{"llama-3-8b qlora 4090 using unsloth", map[string]string{"framework": "unsloth"}},
		{"how much vram to train qwen3-8b with axolotl on an h100", map[string]string{"framework": "axolotl", "method": "lora"}},
		{"serve llama 3.1 8b in vllm on an l4", map[string]string{"engine": "vllm"}},
		{"llama-3.1-8b on a 4090 with ollama", map[string]string{"engine": "ollama"}},
		{"deepseek-v3 inference engine=sglang 8xh200 fp8", map[string]string{"precision": "fp8", "kv": "fp16"}},
		{"llama-3.1-8b fp8 kv cache engine=vllm h100", map[string]string{"kv": "fp8", "precision": "bf16"}},
		{"7b inference int8 4090", map[string]string{"precision": "int8"}},
		{"can I run qwen3-32b in 4-bit on a 4090?", map[string]string{"precision": "nf4"}},
		{"7b lora 2x 24gb", map[string]string{"gpus": "2"}},
		{"7b lora 2x24gb", map[string]string{"gpus": "2"}},
	}
	for _, tt := range tests {
		q, err := Parse(tt.query)
		if err != nil {
			t.Errorf("%q: %v", tt.query, err)
			continue
		}
		for key, want := range tt.want {
			if got := SettingOf(q.Workload, key); got != want && !(key == "framework" && string(q.Workload.Framework) == want) {
				t.Errorf("%q: %s=%q, want %q (read as %q, left out %q)", tt.query, key, got, want, q.ReadAs, q.Ignored)
			}
		}
		if len(q.Ignored) > 0 && slices.ContainsFunc(q.Ignored, isVocabularyWord) {
			t.Errorf("%q left out words the grammar knows: %q", tt.query, q.Ignored)
		}
	}
	for _, refused := range []string{"1000000xh100 7b full", "7b full 70000x h100", "7b lora 0x a100"} {
		if _, err := Parse(refused); err == nil || !strings.Contains(err.Error(), "GPUs: a count is 1 to") {
			t.Errorf("%q: %v, want the GPU count refused", refused, err)
		}
	}
}
