package query

import (
	"slices"
	"strconv"
	"strings"

	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/advisor/memory"
	"github.com/vrambot/vrambot/advisor/serving"
)

// Setting is one setting of the /vram grammar, once: how it is typed,
// the values it takes, its default and where that comes from, what it
// changes in the workload and how. Settings is the table of them.
// Parsing and validation (with "did you mean"), the canonical query (the
// "Read as …" line and the buttons' queries), the buttons' settings, the
// Slack form, `/vram help` and the README's grammar table all read it
// (docs/contracts.md §2).
type Setting struct {
	// Key is the canonical key ("bs"), the word the grammar writes.
	Key string
	// Aliases are the other keys accepted, lower case with - for _ and
	// without a flag's dashes: the TrainingArguments, PEFT, DeepSpeed,
	// axolotl, LLaMA-Factory and serving engines' own names.
	Aliases []string
	// Words are phrases that name the setting in a sentence ("batch
	// size 8"); Counted are the nouns a number may stand before ("16
	// users", "8k context").
	Words   [][]string
	Counted []string
	// Value is the type and domain of the value.
	Value Domain
	// Scope is what the setting applies to.
	Scope Scope
	// Bare are values accepted without the key ("7b lora bf16 a100");
	// Keyed are values that, typed alone, ask for their key ("'fp8'
	// needs its setting name — did you mean 'kv=fp8'?").
	Bare, Keyed []string
	// Positional settings are written as words, never key=value, in the
	// canonical query (the model, the method, the sharding word).
	Positional bool
	// Unspaced: no value follows the setting's name after a space, as
	// it does for "bs 8"; Prose are the spellings common in prose that
	// take none either ("r", "c", "dtype").
	Unspaced bool
	Prose    []string
	// Default is the value filled in when the setting is not given, and
	// where it comes from; Help is what the setting changes.
	Default, Help string
	// Fixes are the fix catalogue's ids whose button sets this setting;
	// Follows those whose button sets it after the setting the fix is
	// about ("Try tp=8 gpus=8": gpus follows tensor parallelism).
	Fixes, Follows []string
	// Of is the workload's value of the setting as the grammar writes
	// it, for the buttons' changes and the "Assumed:" line.
	Of func(w memory.Workload) string
	// Form, when set, is the setting's field in the Slack form.
	Form *FormField

	// phase orders applying: a setting's default may depend on those of
	// earlier phases (the precision on the method and the GPU, the
	// context on the engine).
	phase phase
	// apply sets a given value in the workload; fill the default when
	// the setting is not given. Either may be nil.
	apply func(r *reading, v value) error
	fill  func(r *reading)
}

// FormField is a setting's field in the Slack form: its label, the
// placeholder and hint it shows, and for a menu its options.
type FormField struct {
	Label, Placeholder, Hint string
	Options                  []FormOption
}

// FormOption is one option of a form menu: the query word and its label.
type FormOption struct{ Value, Label string }

// Scope is what a setting applies to; a setting outside its scope is
// refused with the reason.
type Scope int

// Scopes.
const (
	ScopeAny       Scope = iota
	ScopeTraining        // every method but inference
	ScopeAdapter         // lora, qlora, dora
	ScopeInference       // inference only (the KV cache)
	ScopeServing         // a serving engine (vLLM, SGLang, TGI, llama.cpp, Ollama)
)

func (s Scope) String() string {
	return [...]string{"any", "training", "adapters (lora, qlora, dora)", "inference", "serving engines"}[s]
}

// phase is a step of applying the settings, in order.
type phase int

const (
	phaseStack     phase = iota // framework: its defaults decide the rest
	phaseWeights                // precision
	phaseOptimizer              // optim
	phaseBatch                  // bs, ga
	phaseEngine                 // engine, then the serving settings
	phaseServing                // gpu-util, max-num-seqs, max-num-batched-tokens, users, engine-version
	phaseContext                // seq
	phaseTechnique              // gc, loss, optim-in-bwd, act-offload
	phaseKernels                // attn, kv
	phaseParallel               // gpus, tp, pp, zero, offload (one rule reads them together)
	phaseAdapter                // rank, targets
	phaseJob                    // tokens
	phaseWord                   // model, method, gpu: read by the word rules, not applied here
	phases
)

// Settings is the grammar's table of settings, in the order the
// canonical query writes them.
var Settings = []*Setting{
	{
		Key: "model", Positional: true, Unspaced: true, Value: word{"a catalog name (`llama-3.1-8b`, `qwen2.5-14b`, `bert-large`), any Hugging Face id (`Qwen/Qwen3-8B`, also its huggingface.co URL), a model name (`qwen3-coder-30b-a3b-instruct`, `llama 3 8b`, an Ollama tag `qwen3:8b`) or a size (`7b`, `6.7B`, `350m`)"},
		Default: "none: a query names its model (or gives its config.json)",
		Help:    "the architecture: one the catalog lacks is read from its config.json on the Hub; a size gets a typical architecture scaled to it, and the reply says so", phase: phaseWord,
		Form: &FormField{Label: "Model", Placeholder: "llama-3.1-8b, Qwen/Qwen3-8B, 7b…", Hint: "A catalog name, a size, or any Hugging Face id"},
	},
	{
		Key: "method", Positional: true, Unspaced: true, Value: word{"`full`, `lora`, `qlora`, `dora`, `freeze`, `inference`"},
		Default: "inference, stated; `finetune` (`train`, `sft`) is LoRA from 1B parameters and full fine-tuning below; LoRA on 4-bit weights is QLoRA",
		Help:    "what is trained: every weight, low-rank adapters (on 4-bit base weights: QLoRA; DoRA), the head only, or nothing",
		phase:   phaseWord, Fixes: []string{fix.LoRA, fix.QLoRA}, Of: func(w memory.Workload) string { return string(w.Method) },
		Form: &FormField{Label: "Method", Placeholder: "Method", Options: []FormOption{
			{"inference", "Inference"}, {"lora", "LoRA fine-tuning"}, {"qlora", "QLoRA (4-bit base)"},
			{"full", "Full fine-tuning"}, {"freeze", "Freeze (train the head)"},
		}},
	},
	{
		Key: "sharding", Positional: true, Unspaced: true, Value: shardingEnum, Scope: ScopeTraining, phase: phaseWord,
		Bare:    shardingEnum.spellings(),
		Default: "none on one GPU; several GPUs of full fine-tuning shard with FSDP",
		Help:    "how data-parallel GPUs hold the model states: FSDP full shard (`fsdp zero=2` is SHARD_GRAD_OP) or plain DDP (see `zero=` for DeepSpeed)",
		Of:      shardingOf,
	},
	{
		Key: "gpu", Prose: []string{"gpu"}, Value: word{"`a100` (80GB; `a100-40gb`), `h100`, `h200`, `l4`, `l40s`, `a10g`, `t4`, `v100`, `3090`, `4090`, `a6000`, `mi300x`, … (`vrambot prices` lists them) or a budget like `24gb`; a count before it: `8xh100`, `2x 4090`"},
		Default: "A100 80GB", Help: "the card the workload is compared against, per GPU (its usable memory, not the marketed one); a Mac is given as its budget", phase: phaseWord,
		Form: &FormField{Label: "GPU or memory budget", Placeholder: "4090, 2x a100, h100 nvl, 24gb…", Hint: "Empty: an A100 80GB"},
	},
	{
		Key: "bs", Aliases: []string{"batch", "batch-size", "micro-batch", "per-device-train-batch-size", "per-device-batch-size",
			"per-device-eval-batch-size", "micro-batch-size", "train-micro-batch-size-per-gpu", "batchsize"},
		Words:   [][]string{{"micro", "batch", "size"}, {"batch", "size"}, {"micro", "batch"}, {"batch", "of"}},
		Counted: []string{}, Value: count{maxBatch}, phase: phaseBatch,
		Default: "1 per GPU (a serving engine batches requests itself)", Help: "micro-batch per GPU: activations and logits scale with it; under a serving engine, sequences served at once",
		Fixes: []string{fix.GradAccum, fix.SmallerBatch}, Of: func(w memory.Workload) string { return strconv.Itoa(w.Batch) },
		apply: applyBatch, fill: fillBatch, Form: &FormField{Label: "Batch size per GPU", Placeholder: "1"},
	},
	{
		Key: "seq", Aliases: []string{"seq-len", "seqlen", "ctx", "max-model-len", "context", "context-length", "max-total-tokens", "num-ctx", "c", "ctx-size",
			"max-seq-len", "max-seq-length", "max-length", "max-len", "model-max-length", "sequence-length", "seq-length", "sequence-len",
			"cutoff-len", "context-window", "max-context", "model-len"},
		Prose: []string{"c"},
		Words: [][]string{{"max", "sequence", "length"}, {"max", "seq", "length"}, {"max", "seq", "len"}, {"max", "model", "len"},
			{"max", "model", "length"}, {"context", "window", "size"}, {"seq", "len"}, {"seq", "length"}, {"sequence", "length"},
			{"sequence", "len"}, {"context", "length"}, {"context", "len"}, {"context", "window"}, {"max", "context"}},
		Counted: []string{"context", "ctx", "token", "tokens"}, Value: seqLen{}, phase: phaseContext,
		Default: "2048 for training (the model's maximum if shorter); a serving engine's own (vLLM/SGLang: the model's context, llama.cpp 4096, Ollama by GPU memory)",
		Help:    "sequence length (a serving engine's `max_model_len`, llama.cpp's `-c`, Ollama's `num_ctx`): activations, logits and the KV cache scale with it",
		Fixes:   []string{fix.MaxModelLen}, Of: func(w memory.Workload) string { return strconv.Itoa(w.SeqLen) },
		apply: applySeq, fill: fillSeq, Form: &FormField{Label: "Sequence length", Placeholder: "2048, 8k, 32768…"},
	},
	{
		Key: "precision", Aliases: []string{"dtype", "quantization", "quant"}, Prose: []string{"dtype"}, Value: precisionEnum, phase: phaseWeights,
		// A bare weight format is the checkpoint's weights: "fp8" alone
		// is FP8 weights, an FP8 KV cache says kv=fp8 ("fp8 kv cache").
		Bare:    append([]string{"fp32", "fp16", "bf16", "mixed-bf16", "mixed-fp16", "int8", "nf4", "fp8", "int4", "awq", "gptq", "mxfp4", "nvfp4", "4bit", "8bit", "4-bit", "8-bit"}, ggufBareNames()...),
		Default: "LoRA and inference bf16 (fp16 without bf16), full fine-tuning AMP with fp32 master weights, QLoRA NF4; a quantised checkpoint its own format",
		Help:    "bytes per weight (for training, of gradients and optimizer states too); a checkpoint format is how the weights are stored",
		Fixes:   []string{fix.MixedPrecision, fix.HalfPrecision, fix.Int8Weights, fix.NF4Weights}, Of: func(w memory.Workload) string { return string(w.Precision) },
		apply: applyPrecision, fill: fillPrecision,
	},
	{
		Key: "optim", Aliases: []string{"optimizer"}, Value: optimEnum, Scope: ScopeTraining, phase: phaseOptimizer,
		Bare:    []string{"adamw", "adamw-8bit", "paged-adamw-8bit", "adamw-4bit", "adamw-fp8", "adafactor", "sgd"},
		Default: "AdamW for training", Help: "optimizer states per trained parameter: AdamW 8 bytes, 8-bit Adam 2 (bitsandbytes, torchao), torchao's 4-bit AdamW about 1 and FP8 AdamW 2, Adafactor about 4/√n, SGD 0",
		Fixes: []string{fix.Optim8bit}, Of: func(w memory.Workload) string { return string(w.Optimizer) },
		apply: applyOptim, fill: fillOptim,
	},
	{
		Key: "gc", Aliases: []string{"checkpointing", "activation-checkpointing", "gradient-checkpointing", "ac"},
		Value: gcEnum, Scope: ScopeTraining, phase: phaseTechnique, Keyed: []string{"on", "off", "selective"},
		Default: "off; on for QLoRA and for the recipes that turn it on (TRL, Unsloth, axolotl, torchtune, LLaMA-Factory)",
		Help:    "activation checkpointing: `on` keeps each layer's input and recomputes the rest, `selective` torchtitan's per-op policy, `offloaded` Unsloth's",
		Fixes:   []string{fix.GradCheckpointing}, Of: gcOf, apply: applyGC, fill: fillGC,
	},
	{
		Key: "zero", Aliases: []string{"zero-stage"}, Words: [][]string{{"zero", "stage"}, {"deepspeed", "zero"}},
		Value: zeroStage{}, Scope: ScopeTraining, phase: phaseParallel,
		Default: "none on one GPU; several GPUs of full fine-tuning shard with FSDP (`fsdp zero=2` is SHARD_GRAD_OP)",
		Help:    "DeepSpeed ZeRO stage: 1 shards optimizer states, 2 and gradients, 3 and weights across the data-parallel GPUs",
		Fixes:   []string{fix.Zero2, fix.Zero3}, Follows: []string{fix.ZeroOffload, fix.ParamOffload},
		Of: func(w memory.Workload) string { return strconv.Itoa(w.ZeroStage) },
	},
	{
		Key: "offload", Value: offloadEnum, Scope: ScopeTraining, phase: phaseParallel, Keyed: offloadEnum.spellings(),
		Default: "none", Help: "CPU offload (DeepSpeed ZeRO-Offload, ZeRO-Infinity; under `fsdp` FSDP's CPU offload): optimizer states, or parameters too",
		Fixes: []string{fix.ZeroOffload, fix.ParamOffload}, Of: func(w memory.Workload) string { return string(w.Offload) },
	},
	{
		Key: "gpus", Aliases: []string{"num-gpus", "n-gpus", "ngpus", "nproc-per-node", "world-size", "gpu-count"},
		Counted: []string{"gpus", "gpu", "cards", "devices"}, Value: count{maxGPUs}, phase: phaseParallel,
		Default: "1 (tp×pp when given)", Help: "GPUs in all: data parallel for training, tensor or layer split for inference",
		Follows: []string{fix.Zero2, fix.Zero3, fix.TensorParallel}, Of: func(w memory.Workload) string { return strconv.Itoa(max(1, w.GPUs)) },
	},
	{
		Key: "tp", Aliases: []string{"tensor-parallel-size", "tp-size", "num-shard", "tensor-parallel"}, Words: [][]string{{"tensor", "parallel"}},
		Value: count{maxGPUs}, phase: phaseParallel,
		Default: "1; inference on N GPUs is tp=N for vLLM, SGLang and TGI", Help: "tensor parallel degree: every layer split across tp GPUs",
		Fixes: []string{fix.TensorParallel}, Of: func(w memory.Workload) string { return strconv.Itoa(max(1, w.TP)) },
	},
	{
		Key: "pp", Aliases: []string{"pipeline-parallel-size", "pp-size", "pipeline-parallel"}, Words: [][]string{{"pipeline", "parallel"}},
		Value: count{maxGPUs}, phase: phaseParallel,
		Default: "1; inference on N GPUs splits the layers for transformers and llama.cpp", Help: "pipeline parallel degree: the layers split across pp GPUs",
		Of: func(w memory.Workload) string { return strconv.Itoa(max(1, w.PP)) },
	},
	{
		Key: "rank", Aliases: []string{"r", "lora-rank", "lora-r"}, Words: [][]string{{"lora", "rank"}}, Prose: []string{"r"},
		Value: count{maxLoRARank}, Scope: ScopeAdapter, phase: phaseAdapter,
		Default: "PEFT's 8, stated, or the framework's own (Unsloth and axolotl 16…)", Help: "LoRA rank: adapter parameters, their gradients and optimizer states; `rank=` alone implies lora",
		Follows: []string{fix.LoRA, fix.QLoRA}, Of: func(w memory.Workload) string { return strconv.Itoa(w.LoRARank) }, apply: applyRank,
	},
	{
		Key: "targets", Value: targetsEnum, Scope: ScopeAdapter, phase: phaseAdapter, Keyed: targetsEnum.spellings(),
		Default: "PEFT's q and v, stated, or the framework's own (all linear layers for Unsloth, axolotl…)", Help: "LoRA target modules: `qv`, every attention projection, or every linear layer",
		Follows: []string{fix.LoRA, fix.QLoRA}, Of: func(w memory.Workload) string { return w.LoRATargets }, apply: applyTargets,
	},
	{
		Key: "lora-experts", Aliases: []string{"lora-target-parameters", "target-parameters", "expert-lora", "lora-moe-experts"},
		Value: boolEnum, Scope: ScopeAdapter, phase: phaseAdapter,
		Default: "off (PEFT's target modules and axolotl's lora_target_linear skip the fused expert weights); on under Unsloth",
		Help:    "LoRA on a mixture of experts' routed experts too (PEFT target_parameters on gate_up_proj/down_proj): r × experts × (in + out) adapters per layer and the merged expert weights in flight",
		Of:      func(w memory.Workload) string { return string(w.LoRAExperts) },
		apply:   func(r *reading, v value) error { r.w().LoRAExperts = memory.Switch(v.canon); return nil },
	},
	{
		Key: "quantize-experts", Aliases: []string{"quantize-moe-experts", "quantise-experts"},
		Value: boolEnum, Scope: ScopeTraining, phase: phaseWeights,
		Default: "off (transformers 5's bitsandbytes integration leaves a mixture of experts' fused expert weights in 16-bit); on under Unsloth",
		Help:    "4- or 8-bit routed experts over a bitsandbytes base (axolotl quantize_moe_experts), dequantised a layer at a time",
		Of:      func(w memory.Workload) string { return string(w.QuantizeExperts) },
		apply:   func(r *reading, v value) error { r.w().QuantizeExperts = memory.Switch(v.canon); return nil },
	},
	{
		Key: "attn", Aliases: []string{"attention", "attn-implementation", "attention-implementation"},
		Value: attnEnum, phase: phaseKernels, Bare: []string{"flash", "sdpa", "eager"},
		Default: "the kernel the model's code runs (SDPA/flash; eager for BERT, GPT-2 and T5-era models)",
		Help:    "attention kernel: eager keeps the s² attention scores of every layer for backward",
		Fixes:   []string{fix.FlashAttention}, Of: func(w memory.Workload) string { return string(w.Attention) },
		apply: applyAttn, fill: fillAttn,
	},
	{
		Key: "kv", Aliases: []string{"kv-cache", "kv-cache-dtype", "kv-dtype"}, Words: [][]string{{"kv", "cache"}},
		Value: kvEnum, Scope: ScopeInference, phase: phaseKernels, Keyed: kvEnum.spellings(),
		Default: "16-bit", Help: "KV-cache dtype: `fp8` (and `int8`) hold a byte per cached element",
		Fixes: []string{fix.FP8KVCache}, Of: func(w memory.Workload) string { return w.KVCacheDtype },
		apply: applyKV, fill: fillKV,
	},
	{
		Key: "tokens", Words: [][]string{{"job", "size"}}, Value: jobTokens{}, phase: phaseJob,
		Default: "none: no time or cost to finish", Help: "the job's size in tokens, for the hours and dollars to finish on each offer (6 × parameters FLOPs a token for training)",
		apply: func(r *reading, v value) error { r.w().Tokens = v.n; return nil },
	},
	{
		Key: "engine", Value: engineEnum, phase: phaseEngine, Bare: []string{"vllm", "sglang", "tgi", "llama.cpp", "ollama"},
		Default: "Hugging Face transformers; vLLM when a serving setting is given",
		Help:    "the serving engine: its own start-up arithmetic (weights, activation peak, KV blocks, what it logs) and defaults; inference on N GPUs is tp=N for vLLM, SGLang and TGI",
		Of:      func(w memory.Workload) string { return w.Engine }, apply: applyEngine, fill: fillEngine,
	},
	{
		Key: "framework", Aliases: []string{"fw"}, Value: frameworkEnum, phase: phaseStack, Keyed: frameworkEnum.spellings(),
		// A tool named anywhere is the stack ("with torchtune", "using
		// unsloth"); words common in prose (tune, torch, accelerate) need
		// framework=.
		Bare:    []string{"pytorch", "trl", "unsloth", "axolotl", "torchtune", "torchtitan", "llama-factory", "llamafactory", "lightning", "deepspeed", "keras", "tensorflow", "jax", "flax", "peft"},
		Default: "none: the snippets are PyTorch and Hugging Face", Help: "the stack: the idiom of the snippets and, for the training frameworks, their memory defaults (checkpointing, loss, precision, LoRA settings: docs/memory-model.md §6.6)",
		apply: applyFramework,
	},
	{
		Key: "loss", Aliases: []string{"cross-entropy", "ce"}, Value: lossEnum, Scope: ScopeTraining, phase: phaseTechnique, Keyed: []string{"chunked"},
		Default: "standard; chunked for the recipes that chunk it (TRL, Unsloth, torchtune)", Help: "the loss: chunked (Liger, torchtune, Unsloth) never holds the whole fp32 logits",
		Fixes: []string{fix.ChunkedLoss}, Of: lossOf, apply: applyLoss,
	},
	{
		Key: "optim-in-bwd", Aliases: []string{"optimizer-in-bwd", "optimizer-in-backward", "optim-in-backward"},
		Value: boolEnum, Scope: ScopeTraining, phase: phaseTechnique,
		Default: "off", Help: "the optimizer step fused into backward (torchtune optimizer_in_bwd): no whole set of gradients at once",
		Fixes: []string{fix.OptimizerInBackward}, Of: func(w memory.Workload) string { return onOff(w.OptimizerInBackward) }, apply: applyOptimInBackward,
	},
	{
		Key: "act-offload", Aliases: []string{"activation-offload", "activation-offloading", "offload-activations"},
		Value: boolEnum, Scope: ScopeTraining, phase: phaseTechnique,
		Default: "off", Help: "activations saved for backward offloaded to CPU RAM",
		Fixes: []string{fix.ActivationOffload}, Of: func(w memory.Workload) string { return onOff(w.ActivationOffload) }, apply: applyActOffload,
	},
	{
		Key: "ga", Aliases: []string{"grad-accum", "gradient-accumulation", "gradient-accumulation-steps", "accum"},
		Value: count{maxBatch}, Scope: ScopeTraining, phase: phaseBatch,
		Default: "1", Help: "gradient accumulation steps: the same memory a step, except where FSDP keeps unsharded gradients between syncs",
		Follows: []string{fix.GradAccum}, Of: func(w memory.Workload) string { return strconv.Itoa(max(1, w.GradAccumSteps)) },
		apply: func(r *reading, v value) error { r.w().GradAccumSteps = int(v.n); return nil },
	},
	{
		Key: "sync-each-batch", Aliases: []string{"sync_each_batch", "grad-sync-each-batch"},
		Value: boolEnum, Scope: ScopeTraining, phase: phaseBatch,
		Default: "off under the HF Trainer, axolotl, TRL, LLaMA-Factory, Unsloth and Lightning (unsharded between syncs); torchtune and torchtitan reduce-scatter every micro-batch",
		Help:    "FSDP reduce-scatters the gradients on every micro-batch of an accumulation (accelerate's sync_each_batch; FSDP2 under accelerate before 1.11) instead of keeping them unsharded on every GPU until the step",
		Of:      func(w memory.Workload) string { return string(w.SyncEachBatch) },
		apply:   func(r *reading, v value) error { r.w().SyncEachBatch = memory.Switch(v.canon); return nil },
	},
	{
		Key: "gpu-util", Aliases: []string{"gpu-memory-utilization", "gpu-mem-util", "mem-fraction-static", "mem-fraction"},
		Words: [][]string{{"gpu", "memory", "utilization"}}, Value: fraction{}, Scope: ScopeServing, phase: phaseServing,
		Default: "0.9 (vLLM's gpu_memory_utilization; SGLang's mem_fraction_static by GPU)", Help: "the share of the GPU the engine plans with: the KV cache gets what is left of it",
		apply: applyGPUUtil,
	},
	{
		Key: "max-num-seqs", Aliases: []string{"max-running-requests"}, Value: count{serving.MaxSeqs}, Scope: ScopeServing, phase: phaseServing,
		Default: "vLLM's by GPU: 1024 on 70 GiB+ cards but A100, else 256", Help: "sequences scheduled at once (vLLM max_num_seqs): the sampler's and CUDA graphs' batch",
		Of:    func(w memory.Workload) string { return strconv.Itoa(w.MaxNumSeqs) },
		apply: func(r *reading, v value) error { r.w().MaxNumSeqs = int(v.n); return nil },
	},
	{
		Key: "max-num-batched-tokens", Aliases: []string{"max-batch-prefill-tokens", "chunked-prefill-size"}, Value: count{serving.MaxContext}, Scope: ScopeServing, phase: phaseServing,
		Default: "vLLM's by GPU: 8192 on 70 GiB+ cards but A100, else 2048", Help: "tokens in one forward (vLLM max_num_batched_tokens): the activation peak it profiles",
		apply: func(r *reading, v value) error { r.w().MaxNumBatchedTokens = int(v.n); return nil },
	},
	{
		Key: "users", Aliases: []string{"concurrency", "concurrent-users", "sequences", "concurrent-requests", "max-concurrency"},
		Words:   [][]string{{"concurrent", "users"}, {"concurrent", "requests"}, {"simultaneous", "users"}, {"parallel", "requests"}},
		Counted: []string{"users", "user", "requests", "sessions", "sequences", "concurrent", "simultaneous", "parallel"},
		Value:   count{serving.MaxSeqs}, Scope: ScopeServing, phase: phaseServing,
		Default: "none: the reply says how many sequences of `seq` fit", Help: "concurrent sequences of `seq` tokens to serve: the smallest setup that holds them, and the price per million tokens",
		apply: func(r *reading, v value) error { r.w().Users = int(v.n); return nil },
	},
	{
		Key: "gpu-layers", Aliases: []string{"ngl", "n-gpu-layers"}, Value: count{maxGPULayers}, Scope: ScopeServing, phase: phaseServing,
		Default: "every layer that fits (llama.cpp -ngl auto, Ollama's own placement)", Help: "llama.cpp's -ngl (Ollama's num_gpu): the layers on the GPU, the rest in CPU RAM",
		Of:    func(w memory.Workload) string { return strconv.Itoa(w.GPULayers) },
		apply: func(r *reading, v value) error { r.w().GPULayers = int(v.n); return nil },
	},
	{
		Key: "engine-version", Aliases: []string{"vllm-version", "version"}, Unspaced: true, Prose: []string{"version"}, Value: release{}, Scope: ScopeServing, phase: phaseServing,
		Default: "the current release (vLLM 0.21 and later)", Help: "the engine's release where its defaults differ (vLLM V0 profiles a whole max_model_len)",
		apply: func(r *reading, v value) error { r.w().EngineVersion = v.canon; return nil },
	},
}

// precisionFlags are boolean settings that name a precision
// (TrainingArguments' bf16=True is AMP in bf16; bitsandbytes'
// load_in_4bit=True is NF4 weights).
var precisionFlags = map[string]string{
	"bf16": "mixed-bf16", "fp16": "mixed-fp16", "load-in-4bit": "nf4", "load-in-8bit": "int8",
}

// UnusedKeys are settings people paste with the others (from
// TrainingArguments, a LoRA config, a sampling config) that do not change
// the memory of one step: read, said so, and not used.
var UnusedKeys = []string{
	"learning-rate", "lr", "num-train-epochs", "epochs", "warmup-steps", "warmup-ratio", "weight-decay", "seed", "lora-alpha", "lora-dropout",
	"logging-steps", "save-steps", "eval-steps", "max-steps", "output-dir", "report-to",
	"temperature", "top-p", "top-k", "lr-scheduler-type", "max-grad-norm",
}

// The table's indexes, built once.
var (
	settingByKey   = map[string]*Setting{}
	settingByAlias = map[string]*Setting{}
	// queryKeys are the keys of key=value settings in table order, for
	// suggestions and the canonical query.
	queryKeys []string
	unused    = map[string]bool{}
	// wordKeys are the settings' phrases, longest first ("micro batch
	// size" before "micro batch"); countedKeys the nouns a number may
	// stand before.
	wordKeys    []wordKey
	countedKeys = map[string]string{}
	scopeKeys   = map[Scope][]string{}
)

// wordKey is a phrase that names a setting.
type wordKey struct {
	words []string
	key   string
}

func init() {
	for _, s := range Settings {
		settingByKey[s.Key] = s
		if !s.Positional {
			queryKeys = append(queryKeys, s.Key)
		}
		for _, a := range s.Aliases {
			if _, dup := settingByAlias[a]; dup || settingByKey[a] != nil {
				panic("query: alias " + a + " twice in the settings table")
			}
			settingByAlias[a] = s
		}
	}
	for _, k := range UnusedKeys {
		unused[k] = true
	}
	for _, s := range Settings {
		if s.Scope != ScopeAny && !s.Positional {
			scopeKeys[s.Scope] = append(scopeKeys[s.Scope], s.Key)
		}
		for _, w := range s.Words {
			wordKeys = append(wordKeys, wordKey{w, s.Key})
		}
		for _, c := range s.Counted {
			countedKeys[c] = s.Key
		}
	}
	slices.SortStableFunc(wordKeys, func(a, b wordKey) int { return len(b.words) - len(a.words) })
}

// bareSetting is the setting a bare value names ("bf16" → precision), in
// table order.
func bareSetting(norm string) (*Setting, bool) {
	for _, s := range Settings {
		if slices.Contains(s.Bare, norm) {
			return s, true
		}
	}
	return nil, false
}

// keyedSetting is the setting a bare value needs as its key ("fp8" →
// kv), with the value it suggests ("kv=fp8").
func keyedSetting(norm string) (*Setting, string, bool) {
	for _, s := range Settings {
		if slices.Contains(s.Keyed, norm) {
			c, _ := CanonicalValue(s.Key, norm)
			return s, s.Key + "=" + c, true
		}
	}
	return nil, "", false
}

// spaced reports whether a value may follow the setting typed as typed
// after a space ("bs 4", not "r 4").
func (s *Setting) spaced(typed string) bool {
	return !s.Unspaced && !slices.Contains(s.Prose, strings.ToLower(typed))
}

// Lookup finds a setting by its key or an alias, as typed (case, _ and a
// flag's dashes ignored).
func Lookup(typed string) (*Setting, bool) {
	k := normKey(typed)
	if s, ok := settingByKey[k]; ok {
		return s, true
	}
	s, ok := settingByAlias[k]
	return s, ok
}

// canonicalKey is the key=value key a typed key names (an alias, a flag
// with its dashes, a TrainingArguments name), or "": model= and method=
// are read as the words they hold, not as settings.
func canonicalKey(k string) string {
	if s, ok := Lookup(k); ok && keyIndex(s.Key) >= 0 {
		return s.Key
	}
	return ""
}

// normKey is a typed key as the table keys it.
func normKey(k string) string { return trimDashes(normWord(k)) }

func trimDashes(s string) string {
	for len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	return s
}

// keysIn are the keys of the settings in scope, in table order.
func keysIn(scope Scope) []string { return scopeKeys[scope] }

// keyIndex is a key's place in the canonical order (-1 for none).
func keyIndex(key string) int { return slices.Index(queryKeys, key) }

// FixSettings are the settings fix id changes, from the table's Fixes and
// then its Follows, so that its button can run the query again with it.
func FixSettings(id string) []string {
	var out []string
	for _, s := range Settings {
		if slices.Contains(s.Fixes, id) {
			out = append(out, s.Key)
		}
	}
	for _, s := range Settings {
		if slices.Contains(s.Follows, id) {
			out = append(out, s.Key)
		}
	}
	return out
}

// shardingOf is the sharding word of a workload that shards across GPUs
// with FSDP or keeps plain DDP ("" for one GPU or DeepSpeed, which zero=
// says).
func shardingOf(w memory.Workload) string {
	if w.GPUs <= 1 || (w.Sharding != memory.ShardingFSDP && w.Sharding != memory.ShardingDDP) {
		return ""
	}
	return string(w.Sharding)
}

func gcOf(w memory.Workload) string {
	switch {
	case w.Checkpointing == memory.CheckpointSelective || w.Checkpointing == memory.CheckpointOffloaded:
		return string(w.Checkpointing)
	case w.GradCheckpointing:
		return "on"
	}
	return "off"
}

func lossOf(w memory.Workload) string {
	if w.ChunkedLoss || w.Loss == memory.LossChunked {
		return "chunked"
	}
	return "standard"
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
