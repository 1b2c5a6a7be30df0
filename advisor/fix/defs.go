package fix

// Fix ids. They are stable: clients and tests key on them, and `oom --json`
// and `vram --json` give one fix the same id.
const (
	// Level 0: free wins.
	ExpandableSegments   = "expandable-segments"
	KillOtherProcess     = "kill-other-process"
	OneProcessPerGPU     = "one-process-per-gpu"
	InferenceMode        = "inference-mode"
	ItemForLoggedLosses  = "item-for-logged-losses"
	FreeReferences       = "free-references"
	MemorySnapshot       = "memory-snapshot"
	CheckShapes          = "check-shapes"
	TFMemoryGrowth       = "tf-memory-growth"
	JAXMemFraction       = "jax-mem-fraction"
	GPUMemoryUtilization = "gpu-memory-utilization"
	LowerGPUMemoryUtil   = "lower-gpu-memory-utilization"
	MPSWatermark         = "mps-watermark"
	RaiseMemoryFraction  = "raise-memory-fraction"
	CUDALaunchBlocking   = "cuda-launch-blocking"
	SysmemFallback       = "sysmem-fallback"
	XPULargeAllocations  = "xpu-large-allocations"

	// Level 1: one-line changes.
	GradAccum         = "grad-accum"
	MixedPrecision    = "mixed-precision"
	GradCheckpointing = "grad-checkpointing"
	FlashAttention    = "flash-attention"
	HalfPrecision     = "half-precision"
	FP8KVCache        = "fp8-kv-cache"
	MaxModelLen       = "max-model-len"
	SmallerBatch      = "smaller-batch"
	SmallerEvalBatch  = "smaller-eval-batch"
	MaxBatchedTokens  = "max-batched-tokens"
	DataLoaderWorkers = "dataloader-workers"
	SharedMemorySize  = "shm-size"
	MmapWeights       = "mmap-weights"
	NCCLBuffers       = "nccl-buffers"

	// Level 2: change the method.
	LoRA                = "lora"
	Optim8bit           = "optim-8bit"
	ChunkedLoss         = "chunked-loss"
	Int8Weights         = "int8-weights"
	OptimizerInBackward = "optim-in-bwd"

	// Level 3: change the configuration.
	QLoRA             = "qlora"
	Zero2             = "zero-2"
	Zero3             = "zero-3"
	ZeroOffload       = "zero-offload"
	ActivationOffload = "activation-offload"
	ParamOffload      = "param-offload"
	TensorParallel    = "tensor-parallel"
	NF4Weights        = "nf4-weights"
	LayerOffload      = "layer-offload"

	// Level 4: change the hardware.
	BiggerGPU   = "bigger-gpu"
	MoreHostRAM = "more-host-ram"
)

// Fix ids of the device idioms: the same change as a CUDA fix of the
// catalogue, in the words of another accelerator (ROCm, Apple MPS, Intel
// XPU, TPU/XLA), for a diagnosis that reads which device failed. Where a
// CUDA fix has no equivalent there, it has no idiom here.
const (
	ExpandableSegmentsROCm = "expandable-segments-rocm"
	KillOtherProcessROCm   = "kill-other-process-rocm"
	HIPLaunchBlocking      = "hip-launch-blocking"
	MixedPrecisionMPS      = "mixed-precision-mps"
	MPSEmptyCache          = "mps-empty-cache"
	MixedPrecisionXPU      = "mixed-precision-xpu"
	XPUEmptyCache          = "xpu-empty-cache"
	KillOtherProcessXPU    = "kill-other-process-xpu"
	MixedPrecisionXLA      = "mixed-precision-xla"
	XLAFSDP                = "xla-fsdp"
	TPUMemoryProfile       = "tpu-memory-profile"
)

// Shorthands for the snippet table.
func py(text string) Snippet    { return Snippet{Lang: "python", Text: text} }
func sh(text string) Snippet    { return Snippet{Lang: "bash", Text: text} }
func js(text string) Snippet    { return Snippet{Lang: "json", Text: text} }
func yml(text string) Snippet   { return Snippet{Lang: "yaml", Text: text} }
func prose(text string) Snippet { return Snippet{Lang: "text", Text: text} }

// libraryText defines the templates several snippets share.
const libraryText = `{{define "torchrun"}}{{if .Nodes}}torchrun --nnodes {{.Nodes}} --nproc-per-node {{.PerNode}} --rdzv-endpoint $HEAD:29500 train.py{{else}}torchrun --nproc-per-node {{.GPUs}} train.py{{end}}{{end}}` +
	`{{define "deepspeed"}}{{if .Nodes}}deepspeed --hostfile hostfile --num_nodes {{.Nodes}} --num_gpus {{.PerNode}} train.py --deepspeed ds_config.json{{else}}deepspeed --num_gpus {{.GPUs}} train.py --deepspeed ds_config.json{{end}}{{end}}`

// zeroSnippets writes a ZeRO stage (with its offload) in each framework;
// the four ZeRO fixes share them and differ in what they Set.
var zeroSnippets = map[Framework]Snippet{
	FrameworkDeepSpeed: js(`{
  "zero_optimization": {
    "stage": {{.ZeroStage}}{{if .OffloadsOptimizer}},
    "offload_optimizer": {"device": "cpu", "pin_memory": true}{{end}}{{if .OffloadsParams}},
    "offload_param": {"device": "cpu", "pin_memory": true}{{end}}
  }
}`),
	FrameworkHF: py(`# ds_config.json:
# {
#   "zero_optimization": {
#     "stage": {{.ZeroStage}}{{if .OffloadsOptimizer}},
#     "offload_optimizer": {"device": "cpu", "pin_memory": true}{{end}}{{if .OffloadsParams}},
#     "offload_param": {"device": "cpu", "pin_memory": true}{{end}}
#   }
# }
args = TrainingArguments(..., deepspeed="ds_config.json")
# launch: {{template "deepspeed" .}}`),
	FrameworkLightning: py(`trainer = L.Trainer(accelerator="gpu", {{if .Nodes}}devices={{.PerNode}}, num_nodes={{.Nodes}}{{else}}devices={{.GPUs}}{{end}}, strategy="deepspeed_stage_{{.ZeroStage}}{{if .Offload}}_offload{{end}}")`),
	FrameworkPyTorch: py(`from torch.distributed.fsdp import fully_shard{{if .Offload}}, CPUOffloadPolicy{{end}}  # PyTorch >= 2.6 (FSDP2)
{{if .Offload}}fully_shard(block, offload_policy=CPUOffloadPolicy())  # each block, then
fully_shard(model, offload_policy=CPUOffloadPolicy()){{if not .OffloadsParams}}
# FSDP offloads parameters and gradients too; DeepSpeed can offload the optimizer alone{{end}}{{else if eq .ZeroStage 2}}fully_shard(block, reshard_after_forward=False)  # each block: ZeRO-2-like, then
fully_shard(model, reshard_after_forward=False){{else}}fully_shard(block)  # each transformer block, then
fully_shard(model){{end}}
# launch: {{template "torchrun" .}}`),
	FrameworkJAX: py(`mesh = jax.make_mesh(({{.GPUs}},), ("fsdp",))
# FSDP / ZeRO-3 style: shard each weight matrix's first axis over the GPUs
def shard(p):
    split = p.ndim > 1 and p.shape[0] % {{.GPUs}} == 0
    return jax.device_put(p, NamedSharding(mesh, P("fsdp") if split else P()))
params = jax.tree_util.tree_map(shard, params)`),
	FrameworkAxolotl: yml(`deepspeed: ds_config.json
# ds_config.json: {"zero_optimization": {"stage": {{.ZeroStage}}{{if .OffloadsOptimizer}}, "offload_optimizer": {"device": "cpu"}{{end}}{{if .OffloadsParams}}, "offload_param": {"device": "cpu"}{{end}}}, "bf16": {"enabled": "auto"}}
# launch: axolotl train config.yml --num-processes {{.GPUs}}`),
	FrameworkTorchtune: sh(`tune run --nproc_per_node {{.GPUs}} full_finetune_distributed --config llama3_1/70B_full{{if .Offload}} \
  fsdp_cpu_offload=True{{end}}{{if eq .ZeroStage 2}} fsdp_reshard_after_forward=False{{end}}
# torchtune shards with FSDP2 (ZeRO-3 equivalent); lora_finetune_distributed for adapters`),
	FrameworkLlamaFactory: yml(`deepspeed: examples/deepspeed/ds_z{{.ZeroStage}}{{if .Offload}}_offload{{end}}_config.json
# launch: FORCE_TORCHRUN=1 NPROC_PER_NODE={{.GPUs}} llamafactory-cli train config.yaml`),
}

// defs is the catalogue. Costs say what a fix costs in speed, accuracy or
// money; snippets are the idiom of each framework (docs/contracts.md §6).
var defs = []Def{
	// ---- level 0: free wins ----
	{
		ID: ExpandableSegments, Level: LevelFreeWins,
		Name:  "expandable segments",
		Title: "Let the allocator grow segments instead of fragmenting",
		Cost:  "none measurable; needs PyTorch >= 2.1 (ROCm: PYTORCH_HIP_ALLOC_CONF on some builds)",
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: sh(`export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`),
		},
	},
	{
		ID: KillOtherProcess, Level: LevelFreeWins,
		Title: "Free the memory other processes hold (stale notebook kernel, zombie worker)",
		Cost:  "none; check the PID is yours first",
		Snippets: map[Framework]Snippet{
			Any: sh("nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv\nkill <PID>   # the stale process"),
		},
	},
	{
		ID: OneProcessPerGPU, Level: LevelFreeWins,
		Title: "Give each process its own GPU",
		Cost:  "none; several ranks on GPU 0 usually means CUDA_VISIBLE_DEVICES or LOCAL_RANK is not used",
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: sh(`torchrun --nproc_per_node=$NUM_GPUS train.py   # and torch.cuda.set_device(int(os.environ['LOCAL_RANK']))`),
		},
	},
	{
		ID: InferenceMode, Level: LevelFreeWins,
		Title: "Run evaluation without autograd",
		Cost:  "none",
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch:   py("model.eval()\nwith torch.inference_mode():\n    out = model(**batch)"),
			FrameworkHF:        py("# Trainer.evaluate already disables grad; also keep fewer outputs on the GPUs:\nTrainingArguments(..., eval_accumulation_steps=8, prediction_loss_only=True)"),
			FrameworkLightning: py("trainer = L.Trainer(inference_mode=True)  # the default; do not call torch.set_grad_enabled(True) in validation_step"),
		},
	},
	{
		ID: ItemForLoggedLosses, Level: LevelFreeWins,
		Title: "Log losses as Python numbers, not tensors that keep the graph",
		Cost:  "none",
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py("losses.append(loss.item())   # not: losses.append(loss)\nrunning_loss += loss.item()  # not: running_loss += loss"),
		},
	},
	{
		ID: FreeReferences, Level: LevelFreeWins,
		Title: "Keep no GPU tensors across steps: detach and move what you store, delete what you do not",
		Cost:  "none",
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py("all_preds.append(logits.detach().cpu())   # not: all_preds.append(logits)\ndel outputs, loss   # before the next step, if they outlive the loop body"),
		},
	},
	{
		ID: MemorySnapshot, Level: LevelFreeWins,
		Title: "Record a memory snapshot to see which allocations grow",
		Cost:  "a slower run while recording; for diagnosis only",
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py(`torch.cuda.memory._record_memory_history(max_entries=100_000)
# ... run the steps where memory grows ...
torch.cuda.memory._dump_snapshot("snapshot.pickle")
# open snapshot.pickle at https://pytorch.org/memory_viz: the allocations that pile up, with their stacks`),
		},
	},
	{
		ID: CheckShapes, Level: LevelFreeWins,
		Title: "Check the shapes that produce this allocation",
		Cost:  "none; the request is a bug (an unbounded dimension, an attention mask or image token count gone wrong), not a GPU too small",
		Snippets: map[Framework]Snippet{
			Any: py("print({k: tuple(v.shape) for k, v in batch.items()})  # right before the failing call"),
		},
	},
	{
		ID: TFMemoryGrowth, Level: LevelFreeWins, Only: []Framework{FrameworkKeras},
		Title: "Let TensorFlow grow its GPU memory instead of grabbing it all",
		Cost:  "none; other processes can then share the GPU",
		Snippets: map[Framework]Snippet{
			FrameworkKeras: py("for gpu in tf.config.list_physical_devices('GPU'):\n    tf.config.experimental.set_memory_growth(gpu, True)"),
		},
	},
	{
		ID: JAXMemFraction, Level: LevelFreeWins, Only: []Framework{FrameworkJAX},
		Title: "Tune JAX's up-front preallocation",
		Cost:  "none; preallocation off can fragment more",
		Snippets: map[Framework]Snippet{
			FrameworkJAX: sh("export XLA_PYTHON_CLIENT_MEM_FRACTION=.95   # default .75\n# or: export XLA_PYTHON_CLIENT_PREALLOCATE=false"),
		},
	},
	{
		ID: GPUMemoryUtilization, Level: LevelFreeWins,
		Name:   "a bigger share of the GPU",
		Title:  "Give the engine a bigger share of the GPU",
		Cost:   "less room for other processes on the GPU; a too-low value is the usual cause when the weights alone exceed the budget",
		Detail: `{{if .GPUMemoryUtilization}}{{.GPUMemoryUtilization}} of the GPU{{end}}`,
		Snippets: map[Framework]Snippet{
			FrameworkVLLM:   sh(`vllm serve {{.ModelID}} --gpu-memory-utilization {{.GPUMemoryUtilization}}`),
			FrameworkSGLang: sh(`python -m sglang.launch_server --model-path {{.ModelID}} --mem-fraction-static {{.GPUMemoryUtilization}}`),
			FrameworkTGI:    sh(`text-generation-launcher --model-id {{.ModelID}} --cuda-memory-fraction {{.GPUMemoryUtilization}}`),
		},
	},
	{
		ID: LowerGPUMemoryUtil, Level: LevelFreeWins,
		Name:   "a smaller share of the GPU",
		Title:  "Give the engine a smaller share of the GPU, leaving room outside its static pool",
		Cost:   "a smaller KV cache: fewer sequences at once",
		Detail: `{{if .GPUMemoryUtilization}}{{.GPUMemoryUtilization}} of the GPU{{end}}`,
		Snippets: map[Framework]Snippet{
			FrameworkVLLM:   sh(`vllm serve {{.ModelID}} --gpu-memory-utilization {{.GPUMemoryUtilization}}`),
			FrameworkSGLang: sh(`python -m sglang.launch_server --model-path {{.ModelID}} --mem-fraction-static {{.GPUMemoryUtilization}}`),
		},
	},
	{
		ID: MPSWatermark, Level: LevelFreeWins,
		Title: "Raise or lift the MPS high-watermark limit",
		Cost:  "macOS may swap or become unresponsive; prefer a smaller batch first",
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: sh("export PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0"),
		},
	},
	{
		ID: RaiseMemoryFraction, Level: LevelFreeWins,
		Title: "Raise the per-process memory fraction",
		Cost:  "none, unless the cap exists to share the GPU",
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py("torch.cuda.set_per_process_memory_fraction(0.9)"),
		},
	},
	{
		ID: CUDALaunchBlocking, Level: LevelFreeWins,
		Title: "Re-run with synchronous CUDA to find the real failing call",
		Cost:  "slower run; for diagnosis only",
		Snippets: map[Framework]Snippet{
			Any: sh("CUDA_LAUNCH_BLOCKING=1 python train.py"),
		},
	},
	{
		ID: SysmemFallback, Level: LevelFreeWins,
		Title: "Turn off the driver's shared-memory fallback to get a clean, early OOM",
		Cost:  "none; the fallback only hides the OOM behind a 10× slowdown",
		Snippets: map[Framework]Snippet{
			Any: prose("NVIDIA Control Panel → Manage 3D settings → CUDA - Sysmem Fallback Policy → Prefer No Sysmem Fallback"),
		},
	},
	{
		ID: XPULargeAllocations, Level: LevelFreeWins,
		Title: "Allow allocations above 4 GiB on Intel GPUs",
		Cost:  "experimental in the Level Zero runtime",
		Snippets: map[Framework]Snippet{
			Any: sh("export UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1"),
		},
	},

	// ---- level 1: one-line changes ----
	{
		ID: GradAccum, Level: LevelOneLiner,
		Name:   "a smaller micro-batch with gradient accumulation",
		Title:  "Smaller micro-batch with gradient accumulation (same effective batch)",
		Cost:   "same results; more, smaller forward/backward passes per optimizer step, a little less throughput",
		Detail: `{{if .MicroBatch}}micro-batch {{.MicroBatch}} × {{.AccumSteps}} accumulation steps{{if .Batch}} (effective batch {{.Batch}} unchanged){{end}}{{end}}`,
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py(`loader = DataLoader(dataset, batch_size={{.MicroBatch}}, shuffle=True){{if not .Batch}}  # micro-batch × steps = your old batch{{end}}
for step, batch in enumerate(loader):
    loss = model(**batch).loss / {{.AccumSteps}}
    loss.backward()
    if (step + 1) % {{.AccumSteps}} == 0:
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)`),
			FrameworkHF:        py(`args = TrainingArguments(..., per_device_train_batch_size={{.MicroBatch}}, gradient_accumulation_steps={{.AccumSteps}}){{if not .Batch}}  # their product = your old batch{{end}}`),
			FrameworkLightning: py(`trainer = L.Trainer(accumulate_grad_batches={{.AccumSteps}})  # with DataLoader(batch_size={{.MicroBatch}})`),
			FrameworkDeepSpeed: js(`{"train_micro_batch_size_per_gpu": {{.MicroBatch}}, "gradient_accumulation_steps": {{.AccumSteps}}}`),
			FrameworkKeras: py(`optimizer = keras.optimizers.AdamW(learning_rate=1e-5, gradient_accumulation_steps={{.AccumSteps}})
model.fit(x, y, batch_size={{.MicroBatch}})`),
			FrameworkJAX:          py(`optimizer = optax.MultiSteps(optax.adamw(1e-5), every_k_schedule={{.AccumSteps}})  # feed micro-batches of {{.MicroBatch}}`),
			FrameworkAxolotl:      yml("micro_batch_size: {{.MicroBatch}}\ngradient_accumulation_steps: {{.AccumSteps}}"),
			FrameworkTorchtune:    yml("batch_size: {{.MicroBatch}}\ngradient_accumulation_steps: {{.AccumSteps}}  # and optimizer_in_bwd: False"),
			FrameworkLlamaFactory: yml("per_device_train_batch_size: {{.MicroBatch}}\ngradient_accumulation_steps: {{.AccumSteps}}"),
		},
	},
	{
		ID: MixedPrecision, Level: LevelOneLiner,
		Name:   "16-bit autocast",
		Title:  "Mixed precision: compute in 16-bit with autocast",
		Cost:   "usually faster on tensor cores; bf16 trains as stably as fp32 for fine-tuning, fp16 needs loss scaling (GradScaler) to avoid underflow",
		Detail: `{{if .NoBF16}}fp16 with GradScaler{{if .GPUName}} ({{.GPUName}} has no bf16){{end}}{{end}}`,
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py(`{{if .NoBF16}}scaler = torch.amp.GradScaler("cuda")
with torch.autocast("cuda", dtype=torch.float16):
    loss = model(**batch).loss
scaler.scale(loss).backward()
scaler.step(optimizer)
scaler.update(){{else}}with torch.autocast("cuda", dtype=torch.bfloat16):
    loss = model(**batch).loss
loss.backward()
optimizer.step(){{end}}`),
			FrameworkHF:        py(`args = TrainingArguments(..., {{if .NoBF16}}fp16=True)  # GradScaler is built in{{else}}bf16=True){{end}}`),
			FrameworkLightning: py(`trainer = L.Trainer(precision="{{if .NoBF16}}16-mixed{{else}}bf16-mixed{{end}}")`),
			FrameworkDeepSpeed: js(`{{if .NoBF16}}{"fp16": {"enabled": true, "loss_scale": 0}}{{else}}{"bf16": {"enabled": true}}{{end}}`),
			FrameworkKeras:     py(`keras.mixed_precision.set_global_policy("{{if .NoBF16}}mixed_float16")  # compile() adds loss scaling{{else}}mixed_bfloat16"){{end}}`),
			FrameworkJAX: py(`# keep fp32 master params, compute in {{.Half}}
compute_params = jax.tree_util.tree_map(lambda p: p.astype(jnp.{{.Dtype}}), params)
logits = model.apply(compute_params, batch)`),
			FrameworkAxolotl:      yml(`{{if .NoBF16}}fp16: true  # the HF Trainer adds the GradScaler{{else}}bf16: auto{{end}}`),
			FrameworkTorchtune:    yml(`dtype: {{if .NoBF16}}fp32  # torchtune trains in bf16 or fp32; fp16 is not supported{{else}}bf16{{end}}`),
			FrameworkLlamaFactory: yml(`{{if .NoBF16}}fp16: true{{else}}bf16: true{{end}}`),
		},
	},
	{
		ID: GradCheckpointing, Level: LevelOneLiner,
		Name:  "gradient checkpointing",
		Title: "Gradient (activation) checkpointing",
		Cost:  "about 20-30% slower steps (the forward pass is recomputed during backward); no accuracy change",
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py(`model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
# a plain nn.Module: x = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False) per block`),
			FrameworkHF: py(`args = TrainingArguments(..., gradient_checkpointing=True,
                         gradient_checkpointing_kwargs={"use_reentrant": False})`),
			FrameworkLightning: py(`def configure_model(self):  # in your LightningModule
    self.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})`),
			FrameworkDeepSpeed: js(`{"activation_checkpointing": {"partition_activations": true, "contiguous_memory_optimization": true}}`),
			FrameworkKeras: py(`with keras.RematScope(mode="full"):
    model = build_model()`),
			FrameworkJAX: py(`block_apply = jax.checkpoint(block_apply)  # Flax: nn.remat(Block)`),
			FrameworkUnsloth: py(`model = FastLanguageModel.get_peft_model(model, ..., use_gradient_checkpointing="unsloth")
# "unsloth" checkpoints every block and offloads the saved inputs to CPU RAM`),
			FrameworkAxolotl:      yml("gradient_checkpointing: true\ngradient_checkpointing_kwargs:\n  use_reentrant: false"),
			FrameworkTorchtune:    yml("enable_activation_checkpointing: True"),
			FrameworkLlamaFactory: yml("disable_gradient_checkpointing: false  # the default: LLaMA-Factory checkpoints unless told not to"),
		},
	},
	{
		ID: FlashAttention, Level: LevelOneLiner,
		Name:  "fused attention",
		Title: "Fused attention (SDPA / FlashAttention) instead of eager attention: no seq² score matrix",
		Cost:  "exact (same results) and faster; FlashAttention-2 needs Ampere or newer, SDPA's memory-efficient kernel runs everywhere",
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py(`# in the attention block, instead of softmax(q @ k.transpose(-2, -1)) @ v:
out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)`),
			FrameworkHF: py(`model = AutoModelForCausalLM.from_pretrained(
    "{{.ModelID}}", attn_implementation="{{.AttnImpl}}", torch_dtype={{.TorchDtype}})`),
			FrameworkKeras:    py(`keras.config.enable_flash_attention()`),
			FrameworkJAX:      py(`out = jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation="cudnn")`),
			FrameworkLlamaCPP: sh(`llama-server -m {{.ModelID}} -fa on   # flash attention: smaller compute buffers`),
		},
	},
	{
		ID: HalfPrecision, Level: LevelOneLiner,
		Name:   "16-bit weights",
		Title:  "Load the weights in 16-bit instead of fp32",
		Cost:   "no measurable quality loss for inference and about twice as fast",
		Detail: `{{.Half}}{{if .NoBF16}}{{if .GPUName}} ({{.GPUName}} has no bf16){{end}}{{end}}`,
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py(`model = AutoModelForCausalLM.from_pretrained("{{.ModelID}}", torch_dtype={{.TorchDtype}})`),
			FrameworkVLLM:    sh(`vllm serve {{.ModelID}} --dtype {{.Dtype}}`),
		},
	},
	{
		ID: FP8KVCache, Level: LevelOneLiner,
		Name:   "an fp8 KV cache",
		Title:  "Store the KV cache in 8 bits (fp8; q8_0 in llama.cpp)",
		Cost:   "halves the KV cache; small accuracy risk on long contexts, usually unmeasurable with calibrated scales; fp8 needs Hopper, Ada or MI300",
		Detail: `{{if .FP8}}{{if .GPUName}}{{.GPUName}} supports fp8{{end}}{{end}}`,
		Snippets: map[Framework]Snippet{
			FrameworkVLLM: sh(`vllm serve {{.ModelID}} --kv-cache-dtype fp8`),
			FrameworkPyTorch: sh(`# transformers has no fp8 KV cache; serve with vLLM:
vllm serve {{.ModelID}} --kv-cache-dtype fp8`),
			FrameworkSGLang:   sh(`python -m sglang.launch_server --model-path {{.ModelID}} --kv-cache-dtype fp8_e5m2`),
			FrameworkLlamaCPP: sh(`llama-server -m {{.ModelID}} -fa on -ctk q8_0 -ctv q8_0   # a quantised V cache needs flash attention`),
			FrameworkOllama:   sh(`OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE=q8_0 ollama serve`),
		},
	},
	{
		ID: MaxModelLen, Level: LevelOneLiner,
		Name:   "a shorter context",
		Title:  "Cap the context length",
		Cost:   "requests longer than the cap (prompt + output) are refused",
		Detail: `{{if .MaxModelLen}}{{.MaxModelLen}} tokens{{if .EngineMaxModelLen}} (at most the {{.EngineMaxModelLen}} the engine estimates fit){{end}}{{if .WasMaxModelLen}} instead of {{.WasMaxModelLen}}{{end}}{{end}}`,
		Snippets: map[Framework]Snippet{
			FrameworkVLLM: sh(`vllm serve {{.ModelID}} --max-model-len {{.MaxModelLen}}`),
			FrameworkPyTorch: py(`inputs = tokenizer(prompts, truncation=True, max_length={{.MaxModelLen}}, return_tensors="pt")
# and keep prompt + max_new_tokens <= {{.MaxModelLen}}`),
			FrameworkSGLang:   sh(`python -m sglang.launch_server --model-path {{.ModelID}} --context-length {{.MaxModelLen}}`),
			FrameworkTGI:      sh(`text-generation-launcher --model-id {{.ModelID}} --max-total-tokens {{.MaxModelLen}} --max-input-tokens {{.MaxModelLen}}`),
			FrameworkLlamaCPP: sh(`llama-server -m {{.ModelID}} -c {{.MaxModelLen}}   # --ctx-size: the KV cache is sized for it`),
			FrameworkOllama:   sh(`OLLAMA_CONTEXT_LENGTH={{.MaxModelLen}} ollama serve   # or PARAMETER num_ctx {{.MaxModelLen}} in the Modelfile`),
		},
	},
	{
		ID: SmallerBatch, Level: LevelOneLiner,
		Name:   "fewer sequences at a time",
		Title:  "Serve or generate fewer sequences at a time",
		Cost:   "lower throughput under load; latency per request unchanged",
		Detail: `{{if .Sequences}}{{.Sequences}}{{if .WasSequences}} instead of {{.WasSequences}}{{end}} at a time{{end}}`,
		Snippets: map[Framework]Snippet{
			FrameworkVLLM: sh(`vllm serve {{.ModelID}} --max-num-seqs {{.Sequences}}`),
			FrameworkPyTorch: py(`for i in range(0, len(prompts), {{.Sequences}}):
    out = model.generate(**tokenizer(prompts[i:i + {{.Sequences}}], return_tensors="pt", padding=True).to("cuda"),
                         max_new_tokens=256, num_return_sequences=1)`),
			FrameworkSGLang:   sh(`python -m sglang.launch_server --model-path {{.ModelID}} --max-running-requests {{.Sequences}}`),
			FrameworkLlamaCPP: sh(`llama-server -m {{.ModelID}} -np 1   # --parallel: slots share the context`),
		},
	},
	{
		ID: SmallerEvalBatch, Level: LevelOneLiner,
		Name:  "a smaller evaluation batch",
		Title: "Use a smaller evaluation batch",
		Cost:  "slower evaluation",
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch:   py("val_loader = DataLoader(val_set, batch_size=8)"),
			FrameworkHF:        py("TrainingArguments(..., per_device_eval_batch_size=4, eval_accumulation_steps=4)"),
			FrameworkLightning: py("def val_dataloader(self):\n    return DataLoader(self.val_set, batch_size=8)"),
			FrameworkKeras:     py("model.evaluate(x, y, batch_size=8)"),
		},
	},
	{
		ID: MaxBatchedTokens, Level: LevelOneLiner,
		Name:   "a smaller prefill budget",
		Title:  "Lower the prefill token budget (tokens batched in one forward pass)",
		Cost:   "fewer or shorter prompts batched together: lower throughput on long prompts",
		Detail: `{{if .BatchedTokens}}{{.BatchedTokens}} tokens{{end}}`,
		Snippets: map[Framework]Snippet{
			FrameworkTGI:      sh(`text-generation-launcher --model-id {{.ModelID}} --max-batch-prefill-tokens {{.BatchedTokens}}`),
			FrameworkVLLM:     sh(`vllm serve {{.ModelID}} --max-num-batched-tokens {{.BatchedTokens}}`),
			FrameworkSGLang:   sh(`python -m sglang.launch_server --model-path {{.ModelID}} --chunked-prefill-size {{.BatchedTokens}}`),
			FrameworkLlamaCPP: sh(`llama-server -m {{.ModelID}} -b {{.BatchedTokens}} -ub 256   # the compute buffer grows with --ubatch-size`),
		},
	},
	{
		ID: DataLoaderWorkers, Level: LevelOneLiner,
		Title:  "Use fewer DataLoader workers, less prefetch and no pinned memory (each worker holds its own copy of what it touches)",
		Cost:   "slower input pipeline",
		Detail: `{{if .Workers}}{{.Workers}} workers{{end}}`,
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch:   py(`DataLoader(ds, batch_size=bs, num_workers={{.Workers}}, prefetch_factor=2, pin_memory=False, persistent_workers=False)`),
			FrameworkHF:        py(`TrainingArguments(..., dataloader_num_workers={{.Workers}}, dataloader_pin_memory=False)`),
			FrameworkLightning: py(`DataLoader(ds, batch_size=bs, num_workers={{.Workers}}, pin_memory=False)  # in your DataModule`),
		},
	},
	{
		ID: SharedMemorySize, Level: LevelOneLiner,
		Title:  "Give the container more shared memory (/dev/shm), which DataLoader workers pass batches through",
		Cost:   "host RAM: /dev/shm counts against the container's memory",
		Detail: `{{if .ShmSize}}{{.ShmSize}}{{end}}`,
		Snippets: map[Framework]Snippet{
			Any: sh(`docker run --shm-size={{.ShmSize}} ...   # Docker's default is 64m
# Kubernetes: mount an emptyDir with medium: Memory at /dev/shm`),
		},
	},
	{
		ID: MmapWeights, Level: LevelOneLiner,
		Title: "Load the weights memory-mapped, not copied into host RAM",
		Cost:  "none; needs safetensors or a torch.save file from PyTorch >= 2.1",
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py(`state = torch.load(path, mmap=True, weights_only=True, map_location="cpu")`),
			FrameworkHF:      py(`model = AutoModelForCausalLM.from_pretrained("{{.ModelID}}", torch_dtype={{.TorchDtype}}, low_cpu_mem_usage=True)  # safetensors are mmapped`),
		},
	},
	{
		ID: NCCLBuffers, Level: LevelOneLiner,
		Title: "Shrink NCCL's own GPU buffers: smaller buffers, fewer channels, no NVLink SHARP",
		Cost:  "somewhat slower collectives on large messages; NVLS off matters only on NVSwitch systems (H100/H200 HGX)",
		Snippets: map[Framework]Snippet{
			Any: sh(`export NCCL_BUFFSIZE=1048576      # bytes per channel buffer; default 4194304 (4 MiB)
export NCCL_MAX_NCHANNELS=4       # fewer channels, each with its own buffers
export NCCL_NVLS_ENABLE=0         # NVLink SHARP reserves a large buffer per communicator`),
		},
	},

	// ---- level 2: change the method ----
	{
		ID: LoRA, Level: LevelMethod,
		Name:   "LoRA",
		Title:  "Train LoRA adapters instead of all weights",
		Cost:   "far fewer trainable parameters: often within a point of full fine-tuning, but can lag on hard or very different tasks",
		Detail: `{{if .TrainableParams}}rank {{.LoRARank}} on all linear layers: {{.TrainableParams}} trainable parameters{{if .WasTrainableParams}} instead of {{.WasTrainableParams}}{{end}}{{end}}`,
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py(`from peft import LoraConfig, get_peft_model
model = AutoModelForCausalLM.from_pretrained("{{.ModelID}}", torch_dtype={{.TorchDtype}})
model = get_peft_model(model, LoraConfig(r={{.LoRARank}}, lora_alpha={{.LoRAAlpha}}, lora_dropout=0.05,
                                         target_modules="all-linear", task_type="CAUSAL_LM"))
model.print_trainable_parameters()`),
			FrameworkHF: py(`from peft import LoraConfig
trainer = SFTTrainer(model="{{.ModelID}}", args=args, train_dataset=dataset,
                     peft_config=LoraConfig(r={{.LoRARank}}, lora_alpha={{.LoRAAlpha}}, target_modules="all-linear",
                                            task_type="CAUSAL_LM"))`),
			FrameworkKeras: py(`model.backbone.enable_lora(rank={{.LoRARank}})  # KerasHub models`),
			FrameworkUnsloth: py(`model = FastLanguageModel.get_peft_model(model, r={{.LoRARank}}, lora_alpha={{.LoRAAlpha}}, lora_dropout=0,
    target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    use_gradient_checkpointing="unsloth")`),
			FrameworkAxolotl: yml("adapter: lora\nlora_r: {{.LoRARank}}\nlora_alpha: {{.LoRAAlpha}}\nlora_target_linear: true"),
			FrameworkTorchtune: sh(`tune run lora_finetune_single_device --config llama3_1/8B_lora_single_device \
  model.lora_rank={{.LoRARank}} model.lora_alpha={{.LoRAAlpha}} model.apply_lora_to_mlp=True`),
			FrameworkLlamaFactory: yml("finetuning_type: lora\nlora_rank: {{.LoRARank}}\nlora_alpha: {{.LoRAAlpha}}\nlora_target: all"),
		},
	},
	{
		ID: Optim8bit, Level: LevelMethod,
		Name:   "8-bit AdamW",
		Title:  "8-bit AdamW (bitsandbytes)",
		Cost:   "optimizer states in 8 bits (2 instead of 8 bytes per parameter): convergence close to 32-bit AdamW in published results; needs bitsandbytes (CUDA); the paged variant slows steps when it pages to CPU RAM",
		Detail: `{{if .Paged}}the paged variant, whose states live in CUDA unified memory and page to CPU RAM under pressure{{end}}`,
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py(`import bitsandbytes as bnb
optimizer = bnb.optim.{{if .Paged}}PagedAdamW8bit{{else}}AdamW8bit{{end}}(model.parameters(), lr=2e-5)`),
			FrameworkHF: py(`args = TrainingArguments(..., optim="{{if .Paged}}paged_adamw_8bit{{else}}adamw_bnb_8bit{{end}}")`),
			FrameworkLightning: py(`def configure_optimizers(self):
    return bnb.optim.{{if .Paged}}PagedAdamW8bit{{else}}AdamW8bit{{end}}(self.parameters(), lr=2e-5)`),
			FrameworkUnsloth:      py(`args = SFTConfig(..., optim="{{if .Paged}}paged_adamw_8bit{{else}}adamw_8bit{{end}}")`),
			FrameworkAxolotl:      yml(`optimizer: {{if .Paged}}paged_adamw_8bit{{else}}adamw_bnb_8bit{{end}}`),
			FrameworkTorchtune:    yml("optimizer:\n  _component_: bitsandbytes.optim.{{if .Paged}}PagedAdamW8bit{{else}}AdamW8bit{{end}}\n  lr: 2e-5"),
			FrameworkLlamaFactory: yml(`optim: {{if .Paged}}paged_adamw_8bit{{else}}adamw_bnb_8bit{{end}}`),
		},
	},
	{
		ID: ChunkedLoss, Level: LevelMethod,
		Name:   "a chunked loss",
		Title:  "Chunked (fused linear) cross-entropy: never materialise the full logits",
		Cost:   "exact loss; about the same speed; needs Liger Kernel (or another chunked cross-entropy)",
		Detail: `{{if .LogitsTokens}}{{.LogitsTokens}} tokens × {{.Vocab}} vocabulary{{end}}`,
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py(`from liger_kernel.transformers import AutoLigerKernelForCausalLM
model = AutoLigerKernelForCausalLM.from_pretrained("{{.ModelID}}")  # fused linear + cross-entropy`),
			FrameworkHF: py(`args = TrainingArguments(..., use_liger_kernel=True)`),
			FrameworkUnsloth: py(`# Unsloth computes the loss with its fused, chunked cross-entropy by default;
# make sure logits are not requested: do not set UNSLOTH_RETURN_LOGITS=1`),
			FrameworkAxolotl:      yml("plugins:\n  - axolotl.integrations.liger.LigerPlugin\nliger_fused_linear_cross_entropy: true"),
			FrameworkTorchtune:    yml("loss:\n  _component_: torchtune.modules.loss.LinearCrossEntropyLoss  # chunked, 8 chunks"),
			FrameworkLlamaFactory: yml("enable_liger_kernel: true"),
		},
	},
	{
		ID: OptimizerInBackward, Level: LevelMethod,
		Name:  "the optimizer step in backward",
		Title: "Fuse the optimizer step into backward: free each gradient as soon as its parameter is updated",
		Cost:  "same results; needs gradient accumulation off (one optimizer step per micro-batch) and no global gradient-norm clipping",
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py(`optimizers = {p: torch.optim.AdamW([p], lr=2e-5) for p in model.parameters() if p.requires_grad}
def step_and_free(p):
    optimizers[p].step()
    optimizers[p].zero_grad(set_to_none=True)
for p in optimizers:
    p.register_post_accumulate_grad_hook(step_and_free)
# the training loop calls loss.backward() only: no optimizer.step()`),
			FrameworkTorchtune: yml("optimizer_in_bwd: True\ngradient_accumulation_steps: 1"),
		},
	},
	{
		ID: ActivationOffload, Level: LevelConfig,
		Name:  "activation offload",
		Title: "Offload the activations saved for backward to CPU RAM",
		Cost:  "a few percent slower when the copies overlap compute (pinned host RAM, a CUDA stream); needs host RAM for every block's saved inputs",
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py(`with torch.autograd.graph.save_on_cpu(pin_memory=True):
    loss = model(**batch).loss
loss.backward()`),
			FrameworkHF:        py(`args = SFTConfig(..., activation_offloading=True, gradient_checkpointing=True)  # TRL`),
			FrameworkUnsloth:   py(`# already on: use_gradient_checkpointing="unsloth" offloads the checkpointed inputs to CPU RAM`),
			FrameworkAxolotl:   yml("gradient_checkpointing: true\nactivation_offloading: true"),
			FrameworkTorchtune: yml("enable_activation_checkpointing: True\nenable_activation_offloading: True"),
		},
	},
	{
		ID: Int8Weights, Level: LevelMethod,
		Name:   "8-bit weights",
		Title:  "8-bit weights",
		Cost:   "small accuracy loss; FP8 weights (Hopper, Ada) and W8A8 kernels in vLLM are faster than 16-bit, bitsandbytes int8 is slower",
		Detail: `{{if .Checkpoint}}{{.Checkpoint}}{{end}}{{if .CheckpointModelLen}}{{if .Checkpoint}}, {{end}}with the context capped at {{.CheckpointModelLen}} tokens{{end}}`,
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py(`from transformers import AutoModelForCausalLM, BitsAndBytesConfig
model = AutoModelForCausalLM.from_pretrained(
    "{{.ModelID}}", quantization_config=BitsAndBytesConfig(load_in_8bit=True))`),
			FrameworkVLLM:     sh(`{{if .Checkpoint}}vllm serve {{.Checkpoint}}{{if .CheckpointModelLen}} --max-model-len {{.CheckpointModelLen}}{{end}}  # the published 8-bit checkpoint{{else if .FP8}}vllm serve {{.ModelID}} --quantization fp8{{if .CheckpointModelLen}} --max-model-len {{.CheckpointModelLen}}{{end}}  # 8-bit weights, quantised at load{{else}}vllm serve {{.ModelID}}-W8A8  # an INT8 W8A8 checkpoint (e.g. made with llm-compressor){{end}}`),
			FrameworkSGLang:   sh(`{{if .Checkpoint}}python -m sglang.launch_server --model-path {{.Checkpoint}}   # the published 8-bit checkpoint{{else}}python -m sglang.launch_server --model-path {{.ModelID}} --quantization fp8   # 8-bit weights, quantised at load{{end}}`),
			FrameworkLlamaCPP: sh(`llama-server -m model-Q8_0.gguf   # 8.5 bits per weight`),
			FrameworkOllama:   sh("# pick an 8-bit tag of the model on ollama.com/library, e.g.\nollama pull llama3.1:8b-instruct-q8_0"),
		},
	},

	// ---- level 3: change the configuration ----
	{
		ID: QLoRA, Level: LevelConfig,
		Name:   "QLoRA",
		Title:  "QLoRA: base weights in 4-bit NF4, LoRA adapters in 16-bit",
		Cost:   "slower steps (weights are dequantised on the fly) and a small accuracy risk from 4-bit weights; the QLoRA paper matches 16-bit LoRA on its benchmarks",
		Detail: `{{if .WasTrainableParams}}rank {{.LoRARank}} adapters on all linear layers instead of {{.WasTrainableParams}} trainable parameters{{end}}`,
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py(`from transformers import AutoModelForCausalLM, BitsAndBytesConfig
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
bnb = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                         bnb_4bit_use_double_quant=True, bnb_4bit_compute_dtype={{.TorchDtype}})
model = AutoModelForCausalLM.from_pretrained("{{.ModelID}}", quantization_config=bnb)
model = prepare_model_for_kbit_training(model, use_gradient_checkpointing={{.PyBool}})
model = get_peft_model(model, LoraConfig(r={{.LoRARank}}, lora_alpha={{.LoRAAlpha}}, target_modules="all-linear",
                                         task_type="CAUSAL_LM"))`),
			FrameworkUnsloth: py(`model, tokenizer = FastLanguageModel.from_pretrained("{{.ModelID}}", load_in_4bit=True)
model = FastLanguageModel.get_peft_model(model, r={{.LoRARank}}, lora_alpha={{.LoRAAlpha}}, lora_dropout=0,
    target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    use_gradient_checkpointing="unsloth")`),
			FrameworkAxolotl: yml("adapter: qlora\nload_in_4bit: true\nlora_r: {{.LoRARank}}\nlora_alpha: {{.LoRAAlpha}}\nlora_target_linear: true"),
			FrameworkTorchtune: sh(`tune run lora_finetune_single_device --config llama3_1/8B_qlora_single_device \
  model.lora_rank={{.LoRARank}} model.lora_alpha={{.LoRAAlpha}}   # torchao NF4 base weights`),
			FrameworkLlamaFactory: yml("finetuning_type: lora\nquantization_bit: 4\nquantization_method: bnb\nlora_rank: {{.LoRARank}}\nlora_target: all"),
		},
	},
	{
		ID: Zero2, Level: LevelConfig,
		Name:     "ZeRO-2",
		Title:    "ZeRO-2 (FSDP SHARD_GRAD_OP): shard gradients and optimizer states across the GPUs",
		Cost:     "same results; communication about the same as plain data parallel",
		Detail:   `{{if .GPUs}}across {{.GPUs}} GPUs{{end}}`,
		Snippets: zeroSnippets,
		Set:      func(p *Params) { p.ZeroStage, p.Offload = 2, "" },
	},
	{
		ID: Zero3, Level: LevelConfig,
		Name:     "ZeRO-3",
		Title:    "ZeRO-3 (FSDP full sharding): shard parameters too, gathered layer by layer",
		Cost:     "same results; about 1.5× the communication of ZeRO-2, and runs across nodes need a fast interconnect (InfiniBand/EFA)",
		Detail:   `{{if .GPUs}}across {{.GPUs}}{{if .GPUName}}× {{.GPUName}}{{else}} GPUs{{end}}{{if .Nodes}} ({{.Nodes}} nodes){{end}}{{if .WasGPUs}}: {{.MoreGPUs}} more than the {{.WasGPUs}} you have{{end}}{{end}}`,
		Snippets: zeroSnippets,
		Set: func(p *Params) {
			p.ZeroStage = 3
		},
	},
	{
		ID: ZeroOffload, Level: LevelConfig,
		Name:     "ZeRO-Offload",
		Title:    "ZeRO-Offload: optimizer states and step on the CPU",
		Cost:     "much slower optimizer step (CPU Adam, PCIe transfers); needs host RAM for the fp32 states",
		Detail:   `{{if .HostRAM}}about {{.HostRAM}} of host RAM per node{{end}}`,
		Snippets: zeroSnippets,
		Set: func(p *Params) {
			p.Offload = "optimizer"
			p.ZeroStage = max(p.ZeroStage, 2)
		},
	},
	{
		ID: ParamOffload, Level: LevelConfig,
		Name:     "ZeRO-Infinity",
		Title:    "ZeRO-3 with parameters and optimizer offloaded to the CPU (ZeRO-Infinity)",
		Cost:     "several times slower (every layer's weights cross PCIe each step); needs host RAM for every parameter",
		Detail:   `{{if .HostRAM}}{{.HostRAM}}+ of host RAM{{end}}`,
		Snippets: zeroSnippets,
		Set:      func(p *Params) { p.Offload, p.ZeroStage = "param", 3 },
	},
	{
		ID: TensorParallel, Level: LevelConfig,
		Name:   "tensor parallelism",
		Title:  "Tensor parallelism: split every layer across GPUs",
		Cost:   "more GPUs, each at its price (NVLink within a node preferred); lower latency per token",
		Detail: `{{if .GPUs}}{{if gt .PP 1}}TP {{.TP}} × PP {{.PP}} across {{.GPUs}}{{else}}across {{.GPUs}}{{end}}{{if .GPUName}}× {{.GPUName}}{{else}} GPUs{{end}}{{end}}`,
		Snippets: map[Framework]Snippet{
			FrameworkVLLM: sh(`vllm serve {{.ModelID}} --tensor-parallel-size {{.TP}}{{if gt .PP 1}} --pipeline-parallel-size {{.PP}}{{end}}`),
			FrameworkPyTorch: sh(`{{if gt .PP 1}}# across nodes, serve with vLLM:
vllm serve {{.ModelID}} --tensor-parallel-size {{.TP}} --pipeline-parallel-size {{.PP}}{{else}}# launch: torchrun --nproc-per-node {{.TP}} infer.py
model = AutoModelForCausalLM.from_pretrained("{{.ModelID}}", tp_plan="auto"){{end}}`),
			FrameworkSGLang: sh(`python -m sglang.launch_server --model-path {{.ModelID}} --tp {{.TP}}`),
			FrameworkTGI:    sh(`text-generation-launcher --model-id {{.ModelID}} --num-shard {{.TP}}`),
		},
	},
	{
		ID: NF4Weights, Level: LevelConfig,
		Name:   "4-bit weights",
		Title:  "4-bit weights (NF4, AWQ/GPTQ, or a 4-bit GGUF)",
		Cost:   "noticeable accuracy risk on reasoning and code; prefer a published AWQ/GPTQ checkpoint for serving speed",
		Detail: `{{if .Checkpoint}}{{.Checkpoint}}{{else if .Quant}}{{.Quant}}{{end}}{{if .CheckpointModelLen}}, with the context capped at {{.CheckpointModelLen}} tokens{{end}}`,
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py(`from transformers import AutoModelForCausalLM, BitsAndBytesConfig
bnb = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                         bnb_4bit_use_double_quant=True, bnb_4bit_compute_dtype={{.TorchDtype}})
model = AutoModelForCausalLM.from_pretrained("{{.ModelID}}", quantization_config=bnb)`),
			FrameworkVLLM:     sh(`{{if .Checkpoint}}vllm serve {{.Checkpoint}}{{if .CheckpointModelLen}} --max-model-len {{.CheckpointModelLen}}{{end}}  # the published 4-bit checkpoint{{else}}vllm serve {{.ModelID}} --quantization bitsandbytes{{if .CheckpointModelLen}} --max-model-len {{.CheckpointModelLen}}{{end}}  # or an AWQ/GPTQ checkpoint{{end}}`),
			FrameworkSGLang:   sh(`{{if .Checkpoint}}python -m sglang.launch_server --model-path {{.Checkpoint}}   # the published 4-bit checkpoint{{else}}python -m sglang.launch_server --model-path {{.ModelID}} --quantization bitsandbytes   # or an AWQ/GPTQ checkpoint{{end}}`),
			FrameworkTGI:      sh(`{{if .Checkpoint}}text-generation-launcher --model-id {{.Checkpoint}} --quantize awq{{else}}text-generation-launcher --model-id {{.ModelID}} --quantize bitsandbytes-nf4   # or an AWQ/GPTQ checkpoint with --quantize awq{{end}}`),
			FrameworkLlamaCPP: sh(`llama-server -m {{if .QuantFile}}{{.QuantFile}}{{else}}model-{{.Quant}}.gguf{{end}}   # about 4.8 bits per weight for Q4_K_M, vs 8.5 for Q8_0 and 16 for F16`),
			FrameworkOllama:   sh("# pick a 4-bit tag of the model on ollama.com/library, e.g.\nollama pull llama3.1:8b-instruct-q4_K_M"),
		},
	},
	{
		ID: LayerOffload, Level: LevelConfig,
		Name:   "a partial GPU offload",
		Title:  "Keep only part of the layers on this GPU, the rest on other GPUs or in CPU RAM",
		Cost:   "every offloaded layer runs at CPU or PCIe speed: much slower generation",
		Detail: `{{if .GPULayers}}{{.GPULayers}}{{if .TotalLayers}} of {{.TotalLayers}}{{end}} layers on the GPU{{end}}`,
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch:  py(`model = AutoModelForCausalLM.from_pretrained("{{.ModelID}}", device_map="auto", torch_dtype={{.TorchDtype}})  # max_memory={0: "20GiB", "cpu": "64GiB"} to cap the GPU`),
			FrameworkLlamaCPP: sh(`llama-server -m {{.ModelID}} -ngl {{.GPULayers}}   # --n-gpu-layers: the rest run on the CPU`),
			FrameworkOllama: sh(`# in the Modelfile (or "options" of the API request):
PARAMETER num_gpu {{.GPULayers}}`),
		},
	},

	// ---- device idioms (ROCm, MPS, XPU, TPU), each at its CUDA fix's level ----
	{
		ID: ExpandableSegmentsROCm, Level: LevelFreeWins,
		Title: "Let the allocator grow segments instead of fragmenting (ROCm)",
		Cost:  "none measurable; ROCm builds read PYTORCH_HIP_ALLOC_CONF, the variable their HIP OOM message names (some older ones PYTORCH_CUDA_ALLOC_CONF), and ignore it with a warning where unsupported",
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: sh(`export PYTORCH_HIP_ALLOC_CONF=expandable_segments:True`),
		},
	},
	{
		ID: KillOtherProcessROCm, Level: LevelFreeWins,
		Title: "Free the memory other processes hold on the AMD GPU (stale notebook kernel, zombie worker)",
		Cost:  "none; check the PID is yours first",
		Snippets: map[Framework]Snippet{
			Any: sh("amd-smi process   # or: rocm-smi --showpids\nkill <PID>   # the stale process"),
		},
	},
	{
		ID: HIPLaunchBlocking, Level: LevelFreeWins,
		Title: "Re-run with synchronous HIP launches to find the real failing call",
		Cost:  "slower run; for diagnosis only",
		Snippets: map[Framework]Snippet{
			Any: sh("AMD_SERIALIZE_KERNEL=3 HIP_LAUNCH_BLOCKING=1 python train.py"),
		},
	},
	{
		ID: MixedPrecisionMPS, Level: LevelOneLiner,
		Title: "Mixed precision on Apple MPS: compute in 16-bit with autocast",
		Cost:  "usually faster; MPS autocasts bf16 from torch 2.6 on macOS 14+, fp16 from 2.5 (its GradScaler only from 2.8)",
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py(`with torch.autocast("mps", dtype=torch.bfloat16):   # torch >= 2.6, macOS 14+
    loss = model(**batch).loss
loss.backward()
optimizer.step()`),
			FrameworkHF: py(`args = TrainingArguments(..., bf16=True)  # accelerate autocasts on "mps" since huggingface/accelerate#3373 (torch >= 2.6)
# in a loop of your own: with torch.autocast("mps", dtype=torch.bfloat16): loss = model(**batch).loss`),
		},
	},
	{
		ID: MPSEmptyCache, Level: LevelFreeWins,
		Title: "Return MPS's cached memory to the system between steps and after evaluation",
		Cost:  "a little slower when the cache is refilled; it frees what the allocator keeps, not what tensors hold",
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py(`import gc
del outputs, loss          # what the step no longer needs
gc.collect()
torch.mps.empty_cache()    # what MPS still caches
print(torch.mps.current_allocated_memory() / 2**30, torch.mps.driver_allocated_memory() / 2**30)  # GiB`),
		},
	},
	{
		ID: MixedPrecisionXPU, Level: LevelOneLiner,
		Title: "Mixed precision on Intel XPU: compute in bf16 with autocast",
		Cost:  "usually faster on XMX units; bf16 trains as stably as fp32 for fine-tuning",
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py(`with torch.autocast("xpu", dtype=torch.bfloat16):
    loss = model(**batch).loss
loss.backward()
optimizer.step()`),
			FrameworkHF: py(`args = TrainingArguments(..., bf16=True)  # the Trainer autocasts on "xpu"`),
		},
	},
	{
		ID: XPUEmptyCache, Level: LevelFreeWins,
		Title: "Return the XPU allocator's cached memory between steps and after evaluation",
		Cost:  "a little slower when the cache is refilled",
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py(`import gc
del outputs, loss
gc.collect()
torch.xpu.empty_cache()
print(torch.xpu.memory_allocated() / 2**30, torch.xpu.memory_reserved() / 2**30)  # GiB`),
		},
	},
	{
		ID: KillOtherProcessXPU, Level: LevelFreeWins,
		Title: "Free the memory other processes hold on the Intel GPU",
		Cost:  "none; check the PID is yours first",
		Snippets: map[Framework]Snippet{
			Any: sh("xpu-smi ps   # processes on each Intel GPU\nkill <PID>   # the stale process"),
		},
	},
	{
		ID: MixedPrecisionXLA, Level: LevelOneLiner, Only: []Framework{FrameworkPyTorch, FrameworkUnknown, FrameworkHF},
		Title: "Compute in bf16 on the TPU with XLA's autocast",
		Cost:  "TPUs compute in bf16 natively; no loss scaling needed",
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py(`with torch.autocast("xla", dtype=torch.bfloat16):   # torch_xla >= 2.1
    loss = model(**batch).loss`),
		},
	},
	{
		ID: XLAFSDP, Level: LevelConfig, Only: []Framework{FrameworkPyTorch, FrameworkUnknown, FrameworkHF},
		Title:  "Shard parameters, gradients and optimizer states over the TPU cores (PyTorch/XLA FSDP)",
		Cost:   "same results; more communication between cores",
		Detail: `{{if .GPUs}}across {{.GPUs}} cores{{end}}`,
		Snippets: map[Framework]Snippet{
			FrameworkPyTorch: py(`from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP
model = FSDP(model)   # wrap each transformer block first (auto_wrap_policy) for the smallest peak`),
			FrameworkHF: py(`args = TrainingArguments(..., fsdp="full_shard", fsdp_config={"xla": True, "xla_fsdp_grad_ckpt": True})`),
		},
	},
	{
		ID: TPUMemoryProfile, Level: LevelFreeWins,
		Title: "Dump the TPU's memory profile to see which buffers fill the HBM",
		Cost:  "none; for diagnosis",
		Snippets: map[Framework]Snippet{
			FrameworkJAX: py(`jax.profiler.save_device_memory_profile("memory.prof")   # open with: pprof -http=:8080 memory.prof`),
			FrameworkPyTorch: py(`import torch_xla.debug.metrics as met
print(met.metrics_report())   # and PT_XLA_DEBUG_LEVEL=2 for the compiled programs' sizes`),
			FrameworkKeras: sh(`# TensorFlow on TPU: capture a profile with the TPU profiler and read its memory viewer
capture_tpu_profile --tpu=$TPU_NAME --logdir=$MODEL_DIR --duration_ms=60000`),
		},
	},

	// ---- level 4: change the hardware ----
	{
		ID: BiggerGPU, Level: LevelHardware,
		Name:   "a bigger GPU",
		Title:  "Use a GPU with more memory",
		Cost:   "rent cost; see the offers",
		Detail: `{{if .NeedBytes}}more than {{.NeedGiB}} per GPU{{end}}`,
	},
	{
		ID: MoreHostRAM, Level: LevelHardware,
		Title: "Give the job more host RAM (a bigger machine, a higher container limit, or swap)",
		Cost:  "a bigger instance or node; swap is slow",
		Snippets: map[Framework]Snippet{
			Any: yml(`# Kubernetes: resources.limits.memory of the pod; Docker: docker run --memory=64g ...
resources:
  limits:
    memory: 64Gi`),
		},
	},
}
