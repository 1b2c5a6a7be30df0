package oom

import (
	"slices"

	"github.com/vrambot/vrambot/advisor/fix"
)

// Fix IDs the diagnosis can propose.
const (
	fixExpandableSegments   = "expandable-segments"
	fixKillOther            = "kill-other-process"
	fixOneProcessPerGPU     = "one-process-per-gpu"
	fixInferenceMode        = "inference-mode"
	fixItem                 = "item-for-logged-losses"
	fixShapeBug             = "check-shapes"
	fixTFGrowth             = "tf-memory-growth"
	fixJAXMemFraction       = "jax-mem-fraction"
	fixVLLMUtilization      = "vllm-gpu-memory-utilization"
	fixVLLMUtilizationLower = "vllm-lower-gpu-memory-utilization"
	fixMPSWatermark         = "mps-watermark"
	fixRaiseFraction        = "raise-memory-fraction"
	fixLaunchBlocking       = "cuda-launch-blocking"
	fixSysmemFallback       = "sysmem-fallback"
	fixXPULargeAlloc        = "xpu-large-allocations"
	fixMicroBatch           = "micro-batch"
	fixCheckpointing        = "gradient-checkpointing"
	fixBF16                 = "bf16-autocast"
	fixSDPA                 = "sdpa-attention"
	fixEvalBatch            = "smaller-eval-batch"
	fixGenerateLimits       = "generate-limits"
	fixDataLoader           = "dataloader-workers"
	fixVLLMMaxModelLen      = "vllm-max-model-len"
	fixTGIPrefill           = "tgi-max-batch-prefill-tokens"
	fixTFMixed              = "tf-mixed-precision"
	fixJAXRemat             = "jax-remat"
	fixLoRA                 = "lora"
	fix8bitOptim            = "8bit-optimizer"
	fixChunkedLoss          = "chunked-loss"
	fixVLLMFP8KV            = "vllm-fp8-kv-cache"
	fixQuantize             = "quantize-weights"
	fixDeviceMap            = "device-map"
	fixZeRO                 = "zero-sharding"
	fixVLLMTP               = "tensor-parallel"
	fixJAXShard             = "jax-shard"
	fixBiggerGPU            = "bigger-gpu"
)

// fixDef is one fix: its stage, what it costs, and snippets per stack
// (def is used for stacks without their own).
type fixDef struct {
	// torch marks a fix written for PyTorch-based stacks: it is left out
	// for Keras and JAX unless it has a snippet for them.
	torch    bool
	level    fix.Level
	title    string
	cost     string
	lang     string
	def      string
	snippets map[fix.Framework]string
}

var fixDefs = map[string]fixDef{
	fixExpandableSegments: {true, fix.LevelFreeWins, "Let the allocator grow segments instead of fragmenting",
		"none measurable; needs PyTorch >= 2.1 (ROCm: PYTORCH_HIP_ALLOC_CONF on some builds)", "bash",
		"export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", nil},
	fixKillOther: {false, fix.LevelFreeWins, "Free the memory other processes hold (stale notebook kernel, zombie worker)",
		"none; check the PID is yours first", "bash",
		"nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv\nkill <PID>   # the stale process", nil},
	fixOneProcessPerGPU: {false, fix.LevelFreeWins, "Give each process its own GPU",
		"none; several ranks on GPU 0 usually means CUDA_VISIBLE_DEVICES or LOCAL_RANK is not used", "bash",
		"torchrun --nproc_per_node=$NUM_GPUS train.py   # and torch.cuda.set_device(int(os.environ['LOCAL_RANK']))", nil},
	fixInferenceMode: {true, fix.LevelFreeWins, "Run evaluation and generation without autograd",
		"none", "python", "with torch.inference_mode():\n    out = model(**batch)",
		map[fix.Framework]string{
			fix.FrameworkHF:        "# Trainer.evaluate already disables grad; also keep fewer outputs on the GPU:\nTrainingArguments(..., eval_accumulation_steps=8, prediction_loss_only=True)",
			fix.FrameworkLightning: "trainer = L.Trainer(inference_mode=True)  # the default; do not call torch.set_grad_enabled(True) in validation_step",
		}},
	fixItem: {true, fix.LevelFreeWins, "Log losses as Python numbers, not tensors that keep the graph",
		"none", "python", "running_loss += loss.item()   # not: running_loss += loss", nil},
	fixShapeBug: {false, fix.LevelFreeWins, "Check the shapes that produce this allocation",
		"none; the request is a bug (an unbounded dimension, an attention mask or image token count gone wrong), not a GPU too small", "python",
		"print({k: tuple(v.shape) for k, v in batch.items()})  # right before the failing call", nil},
	fixTFGrowth: {false, fix.LevelFreeWins, "Let TensorFlow grow its GPU memory instead of grabbing it all",
		"none; other processes can then share the GPU", "python",
		"for gpu in tf.config.list_physical_devices('GPU'):\n    tf.config.experimental.set_memory_growth(gpu, True)", nil},
	fixJAXMemFraction: {false, fix.LevelFreeWins, "Tune JAX's up-front preallocation",
		"none; preallocation off can fragment more", "bash",
		"export XLA_PYTHON_CLIENT_MEM_FRACTION=.95   # default .75\n# or: export XLA_PYTHON_CLIENT_PREALLOCATE=false", nil},
	fixVLLMUtilization: {false, fix.LevelFreeWins, "Give vLLM a bigger share of the GPU (raise gpu_memory_utilization)",
		"less room for other processes on the GPU; a too-low value is the usual cause when the weights alone exceed the budget", "bash",
		"vllm serve MODEL --gpu-memory-utilization 0.95", nil},
	fixVLLMUtilizationLower: {false, fix.LevelFreeWins, "Lower gpu_memory_utilization on TPU",
		"smaller KV cache", "bash", "vllm serve MODEL --gpu-memory-utilization 0.85", nil},
	fixMPSWatermark: {true, fix.LevelFreeWins, "Raise or lift the MPS high-watermark limit",
		"macOS may swap or become unresponsive; prefer a smaller batch first", "bash",
		"export PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0", nil},
	fixRaiseFraction: {true, fix.LevelFreeWins, "Raise the per-process memory fraction",
		"none, unless the cap exists to share the GPU", "python",
		"torch.cuda.set_per_process_memory_fraction(0.9)", nil},
	fixLaunchBlocking: {false, fix.LevelFreeWins, "Re-run with synchronous CUDA to find the real failing call",
		"slower run; for diagnosis only", "bash", "CUDA_LAUNCH_BLOCKING=1 python train.py", nil},
	fixSysmemFallback: {false, fix.LevelFreeWins, "Turn off the driver's shared-memory fallback to get a clean, early OOM",
		"none; the fallback only hides the OOM behind a 10× slowdown", "text",
		"NVIDIA Control Panel → Manage 3D settings → CUDA - Sysmem Fallback Policy → Prefer No Sysmem Fallback", nil},
	fixXPULargeAlloc: {false, fix.LevelFreeWins, "Allow allocations above 4 GiB on Intel GPUs",
		"experimental in the Level Zero runtime", "bash", "export UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1", nil},
	fixMicroBatch: {false, fix.LevelOneLiner, "Halve the micro-batch and accumulate gradients (same effective batch)",
		"slightly lower throughput; results unchanged", "python",
		"for i, batch in enumerate(loader):   # loader batch_size halved\n    loss = model(**batch).loss / accum_steps\n    loss.backward()\n    if (i + 1) % accum_steps == 0:\n        optimizer.step(); optimizer.zero_grad()",
		map[fix.Framework]string{
			fix.FrameworkHF:        "TrainingArguments(..., per_device_train_batch_size=4, gradient_accumulation_steps=8)",
			fix.FrameworkLightning: "trainer = L.Trainer(accumulate_grad_batches=8)  # and halve batch_size in the DataModule",
			fix.FrameworkDeepSpeed: `{"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 16}`,
			fix.FrameworkKeras:     "model.fit(x, y, batch_size=16)  # was 32 or more",
			fix.FrameworkJAX:       "batch = batch.reshape(accum_steps, -1, *batch.shape[1:])  # then jax.lax.scan over micro-batches, summing grads",
		}},
	fixCheckpointing: {true, fix.LevelOneLiner, "Turn on gradient checkpointing",
		"about 20-30% slower steps; activations drop to one layer's worth plus layer inputs", "python",
		"model.gradient_checkpointing_enable()   # HF models; else torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)",
		map[fix.Framework]string{
			fix.FrameworkHF:        "TrainingArguments(..., gradient_checkpointing=True)",
			fix.FrameworkLightning: "self.model.gradient_checkpointing_enable()  # in configure_model(), or torch.utils.checkpoint in forward",
			fix.FrameworkDeepSpeed: `{"activation_checkpointing": {"partition_activations": true, "contiguous_memory_optimization": true}}`,
			fix.FrameworkJAX:       "block = jax.checkpoint(block)   # a.k.a. jax.remat",
		}},
	fixBF16: {true, fix.LevelOneLiner, "Compute in bf16 with autocast (fp16 + GradScaler on V100/T4)",
		"negligible accuracy change for most models", "python",
		"with torch.autocast(device_type='cuda', dtype=torch.bfloat16):\n    loss = model(**batch).loss",
		map[fix.Framework]string{
			fix.FrameworkHF:        "TrainingArguments(..., bf16=True)",
			fix.FrameworkLightning: "trainer = L.Trainer(precision='bf16-mixed')",
			fix.FrameworkDeepSpeed: `{"bf16": {"enabled": true}}`,
			fix.FrameworkJAX:       "params = jax.tree_util.tree_map(lambda x: x.astype(jnp.bfloat16), params)",
		}},
	fixSDPA: {true, fix.LevelOneLiner, "Use fused attention (SDPA / FlashAttention): no seq² score matrix",
		"none; faster", "python",
		"model = AutoModelForCausalLM.from_pretrained(name, attn_implementation='sdpa')  # or 'flash_attention_2'\n# plain PyTorch: F.scaled_dot_product_attention(q, k, v, is_causal=True)", nil},
	fixEvalBatch: {true, fix.LevelOneLiner, "Use a smaller evaluation batch",
		"slower evaluation", "python", "val_loader = DataLoader(val_set, batch_size=8)",
		map[fix.Framework]string{
			fix.FrameworkHF:        "TrainingArguments(..., per_device_eval_batch_size=4, eval_accumulation_steps=4)",
			fix.FrameworkLightning: "def val_dataloader(self):\n    return DataLoader(self.val_set, batch_size=8)",
		}},
	fixGenerateLimits: {true, fix.LevelOneLiner, "Bound generation: fewer sequences at once, shorter outputs",
		"slower batch generation", "python",
		"out = model.generate(**inputs, max_new_tokens=256, num_return_sequences=1)  # and fewer prompts per call", nil},
	fixDataLoader: {true, fix.LevelOneLiner, "Use fewer DataLoader workers and less prefetch (each worker copies the dataset)",
		"slower input pipeline", "python",
		"DataLoader(ds, batch_size=bs, num_workers=2, prefetch_factor=2, pin_memory=False, persistent_workers=False)\n# in Docker also raise shared memory: docker run --shm-size=8g ...", nil},
	fixVLLMMaxModelLen: {false, fix.LevelOneLiner, "Cap the context length vLLM must hold in KV cache",
		"longer prompts are rejected", "bash", "vllm serve MODEL --max-model-len 8192", nil},
	fixTGIPrefill: {false, fix.LevelOneLiner, "Lower TGI's prefill token budget",
		"fewer or shorter prompts batched together", "bash",
		"text-generation-launcher --model-id MODEL --max-batch-prefill-tokens 2048 --max-total-tokens 4096", nil},
	fixTFMixed: {false, fix.LevelOneLiner, "Use mixed precision in Keras",
		"negligible accuracy change; keep the last layer in float32", "python",
		"keras.mixed_precision.set_global_policy('mixed_float16')", nil},
	fixJAXRemat: {false, fix.LevelOneLiner, "Rematerialise activations in the train step",
		"about 20-30% slower steps", "python", "loss_fn = jax.checkpoint(loss_fn)   # or nn.remat(Block) in Flax", nil},
	fixLoRA: {true, fix.LevelMethod, "Train LoRA adapters instead of all weights",
		"fewer trainable parameters; quality close to full fine-tuning for most tasks", "python",
		"from peft import LoraConfig, get_peft_model\nmodel = get_peft_model(model, LoraConfig(r=16, target_modules='all-linear', task_type='CAUSAL_LM'))", nil},
	fix8bitOptim: {true, fix.LevelMethod, "Use an 8-bit (or paged) AdamW",
		"8 → 2 bytes of state per parameter; negligible quality change", "python",
		"import bitsandbytes as bnb\noptimizer = bnb.optim.AdamW8bit(model.parameters(), lr=2e-5)",
		map[fix.Framework]string{
			fix.FrameworkHF:        "TrainingArguments(..., optim='paged_adamw_8bit')",
			fix.FrameworkLightning: "def configure_optimizers(self):\n    return bnb.optim.AdamW8bit(self.parameters(), lr=2e-5)",
		}},
	fixChunkedLoss: {true, fix.LevelMethod, "Compute the loss in chunks so full logits are never materialised",
		"none; needs Liger kernels or a chunked cross-entropy", "python",
		"from liger_kernel.transformers import apply_liger_kernel_to_llama\napply_liger_kernel_to_llama()  # fused linear cross-entropy",
		map[fix.Framework]string{fix.FrameworkHF: "TrainingArguments(..., use_liger_kernel=True)"}},
	fixVLLMFP8KV: {false, fix.LevelMethod, "Store the KV cache in fp8",
		"twice the KV capacity; small accuracy risk", "bash", "vllm serve MODEL --kv-cache-dtype fp8", nil},
	fixQuantize: {true, fix.LevelConfig, "Load the weights quantised (4-bit or 8-bit)",
		"about 4× smaller weights in 4-bit; some accuracy loss", "python",
		"from transformers import BitsAndBytesConfig\nmodel = AutoModelForCausalLM.from_pretrained(name, quantization_config=BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16))",
		map[fix.Framework]string{fix.FrameworkVLLM: "vllm serve MODEL-AWQ --quantization awq   # or --quantization fp8 on Hopper/Ada"}},
	fixDeviceMap: {true, fix.LevelConfig, "Spread the model over GPUs (and CPU) with device_map",
		"slower when layers are offloaded to the CPU", "python",
		"model = AutoModelForCausalLM.from_pretrained(name, device_map='auto', torch_dtype=torch.bfloat16)", nil},
	fixZeRO: {true, fix.LevelConfig, "Shard optimizer states, gradients (and weights) across GPUs: ZeRO / FSDP",
		"communication overhead; CPU offload is much slower", "json",
		`{"zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}}}   # DeepSpeed; FSDP: fsdp="full_shard"`,
		map[fix.Framework]string{
			fix.FrameworkHF:        "TrainingArguments(..., deepspeed='ds_zero2.json')   # or fsdp='full_shard auto_wrap'",
			fix.FrameworkLightning: "trainer = L.Trainer(strategy='deepspeed_stage_2')   # or 'fsdp'",
			fix.FrameworkDeepSpeed: `{"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}, "offload_param": {"device": "cpu"}}}`,
		}},
	fixVLLMTP: {false, fix.LevelConfig, "Split the model across GPUs with tensor parallelism",
		"needs more GPUs", "bash", "vllm serve MODEL --tensor-parallel-size 2   # TGI: text-generation-launcher --num-shard 2", nil},
	fixJAXShard: {false, fix.LevelConfig, "Shard parameters and activations over the device mesh",
		"communication overhead", "python",
		"mesh = jax.make_mesh((jax.device_count(),), ('data',))\nparams = jax.device_put(params, NamedSharding(mesh, P(None, 'data')))", nil},
	fixBiggerGPU: {false, fix.LevelHardware, "Use a GPU with more memory",
		"rent cost; see the offers", "", "", nil},
}

// fixOnly names fixes that exist in one stack only.
var fixOnly = map[string]fix.Framework{
	fixTFMixed:        fix.FrameworkKeras,
	fixTFGrowth:       fix.FrameworkKeras,
	fixJAXRemat:       fix.FrameworkJAX,
	fixJAXShard:       fix.FrameworkJAX,
	fixJAXMemFraction: fix.FrameworkJAX,
}

// snippet picks the fix's snippet for the stack.
func (d fixDef) snippet(stack fix.Framework) string {
	if s, ok := d.snippets[stack]; ok {
		return s
	}
	return d.def
}

// stages groups the requested fixes by level, easiest first, keeping the
// order the causes asked for them within a level. The hardware stage only
// appears when a cause pointed at it.
func (b *builder) stages() []fix.Stage {
	byLevel := map[fix.Level][]fix.Fix{}
	for _, id := range b.fixes {
		d := fixDefs[id]
		if _, own := d.snippets[b.stack]; d.torch && !own && (b.stack == fix.FrameworkKeras || b.stack == fix.FrameworkJAX) {
			continue
		}
		if only, ok := fixOnly[id]; ok && only != b.stack {
			continue
		}
		f := fix.Fix{ID: id, Title: d.title, Cost: d.cost, Snippet: d.snippet(b.stack), SnippetLang: d.lang}
		byLevel[d.level] = append(byLevel[d.level], f)
	}
	levels := make([]fix.Level, 0, len(byLevel))
	for l := range byLevel {
		levels = append(levels, l)
	}
	slices.Sort(levels)
	out := make([]fix.Stage, 0, len(levels))
	for i, l := range levels {
		out = append(out, fix.Stage{Stage: i + 1, Level: l, Title: l.Title(), Fixes: byLevel[l]})
	}
	return out
}
