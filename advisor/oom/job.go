package oom

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The job a paste shows: what ran, with which settings, read from the log
// lines around the OOM (docs/oom-diagnosis.md §3). Every setting read is
// kept with the words it was read from, so that the reply can say "read
// from the paste: …" and nobody takes a default for a reading.

// Job is the workload of the paste as `oom --json` gives it ("job"): the
// settings read from the paste, null where it does not say, where in the
// job it failed, and what each setting was read from.
type Job struct {
	Model                 *string  `json:"model"`
	Method                *string  `json:"method"`
	Engine                *string  `json:"engine"`
	ZeroStage             *int     `json:"zero_stage"`
	Sharding              *string  `json:"sharding"`
	Offload               *string  `json:"offload"`
	TP                    *int     `json:"tp"`
	GPUs                  *int     `json:"gpus"`
	MaxModelLen           *int     `json:"max_model_len"`
	GGUFType              *string  `json:"gguf_type"`
	NCtx                  *int     `json:"n_ctx"`
	NGL                   *int     `json:"ngl"`
	Quantization          *string  `json:"quantization"`
	TrainableParams       *int64   `json:"trainable_params"`
	AllParams             *int64   `json:"all_params"`
	Batch                 *int     `json:"batch"`
	GradAccumSteps        *int     `json:"grad_accum_steps"`
	SeqLen                *int     `json:"seq_len"`
	Precision             *string  `json:"precision"`
	GradientCheckpointing *bool    `json:"gradient_checkpointing"`
	Optimizer             *string  `json:"optimizer"`
	GPUMemoryUtilization  *float64 `json:"gpu_memory_utilization"`
	KVCacheDtype          *string  `json:"kv_cache_dtype"`
	// Where is where in the job the OOM happened (the Where* values);
	// WhereEvidence quotes what said so.
	Where         string `json:"where"`
	WhereEvidence string `json:"where_evidence,omitempty"`
	// Read is every setting read, with the words of the paste it came from.
	Read []Reading `json:"read"`
}

// Reading is one setting read from the paste.
type Reading struct {
	Setting string `json:"setting"`
	Value   string `json:"value"`
	From    string `json:"from"`
}

// Where values: where in the job the OOM happened.
const (
	WhereOptimizerInit = "optimizer-init"
	WhereKVStartup     = "kv-cache-startup"
	WhereWeightsLoad   = "weights-load"
	WhereLogits        = "logits"
	WhereForward       = "activations-forward"
	WhereBackward      = "backward"
	WhereOptimizerStep = "optimizer-step"
	WhereGenerate      = "generate"
	WhereFragmentation = "fragmentation"
	WhereLeak          = "leak-growth"
	WhereUnknown       = "unknown"
)

// Engine values of the job vocabulary.
const (
	EngineHF          = "hf"
	EngineVLLM        = "vllm"
	EngineSGLang      = "sglang"
	EngineTGI         = "tgi"
	EngineTensorRTLLM = "tensorrt-llm"
	EngineLlamaCPP    = "llama.cpp"
	EngineOllama      = "ollama"
)

// servingEngines run inference only.
var servingEngines = map[string]bool{EngineVLLM: true, EngineSGLang: true, EngineTGI: true, EngineTensorRTLLM: true, EngineLlamaCPP: true, EngineOllama: true}

// Bounds on what the readers keep: a reading quotes at most maxFromRunes
// of its line, and a paste gives at most maxReadings.
const (
	maxFromBytes = 120
	maxReadings  = 32
)

// note records that setting was read as value from the words from.
func (w *PasteWorkload) note(setting, value, from string) {
	if len(w.Read) >= maxReadings {
		return
	}
	from = strings.Join(strings.Fields(from), " ")
	if len(from) > maxFromBytes {
		from = from[:maxFromBytes] + "…"
	}
	from = strings.ToValidUTF8(from, "")
	for i, r := range w.Read {
		if r.Setting == setting {
			w.Read[i] = Reading{setting, value, from}
			return
		}
	}
	w.Read = append(w.Read, Reading{setting, value, from})
}

// drop forgets the reading of setting.
func (w *PasteWorkload) drop(setting string) {
	w.Read = slices.DeleteFunc(w.Read, func(r Reading) bool { return r.Setting == setting })
}

var (
	reBatch = regexp.MustCompile(`(?i)(?:per_device_train_batch_size|train_micro_batch_size_per_gpu|micro_batch_size|--batch[_-]size|\bbatch_size|Batch size per device)["']?\s*[:=]?\s*["']?(\d{1,6})\b`)
	reAccum = regexp.MustCompile(`(?i)gradient_accumulation_steps["']?\s*[:=]?\s*(\d{1,6})\b|Gradient Accumulation steps = (\d{1,6})`)
	// reSeq is a training run's sequence length; reServeLen a serving
	// engine's context (vLLM's --max-model-len and its config line's
	// max_seq_len, TGI's --max-total-tokens, SGLang's --context-length).
	reSeq      = regexp.MustCompile(`(?i)(?:max_seq_length|\bmax_seq_len\b|sequence_len|cutoff_len|model_max_length|\bseq_len|--max_length|\bmax_length)["']?\s*[:=]?\s*["']?(\d{2,8})\b`)
	reServeLen = regexp.MustCompile(`(?:--max-model-len|\bmax_model_len\b|--max-total-tokens|\bmax_total_tokens\b|--context-length|\bcontext_length\b)["']?\s*[:=]?\s*["']?(\d{2,8})\b|LLM engine[^\n]{0,1000}?\bmax_seq_len=(\d{2,8})\b`)
	reBF16     = regexp.MustCompile(`(?i)\bbf16["']?\s*[:=]\s*(?:true|\{\s*"enabled"\s*:\s*true)|--bf16\b|torch_dtype\s*=\s*torch\.bfloat16|dtype=torch\.bfloat16|precision\s*=\s*["']bf16|mixed_precision:\s*bf16|Bfloat16 = TRUE|Creating (?:BF16|torch\.bfloat16) (?:ZeRO|optimizer)`)
	reFP16     = regexp.MustCompile(`(?i)\bfp16["']?\s*[:=]\s*(?:true|\{\s*"enabled"\s*:\s*true)|--fp16\b|torch_dtype\s*=\s*torch\.float16|dtype=torch\.float16|precision\s*=\s*["']16|mixed_precision:\s*fp16|Creating (?:FP16|torch\.float16|fp16) (?:ZeRO|optimizer)`)
	reGC       = regexp.MustCompile(`(?i)gradient_checkpointing["']?\s*[:=]\s*(true|false)\b|use_gradient_checkpointing\s*=\s*(["']?unsloth["']?|true|false)`)
	// reLoRA is an adapter: PEFT's config or modules, LLaMA-Factory's and
	// axolotl's settings, torchtune's recipe.
	reLoRA  = regexp.MustCompile(`\bLoraConfig\(|\blora_r\s*[:=]|/peft/|\bpeft_config\b|--lora[_-]r\b|adapter:\s*lora|finetuning_type[:=]\s*["']?lora|\bget_peft_model\(|lora_finetune_|\bLoRA adapters?\b`)
	reQLoRA = regexp.MustCompile(`load_in_4bit["']?\s*[:=]\s*(?:True|true)|\bbnb_4bit|adapter:\s*qlora|quantization_bit[:=]\s*["']?4\b|\bParams4bit\b|\bLinear4bit\b|\bquantize_4bit\b|[-_]bnb[-_]4bit\b`)
	reBnB8  = regexp.MustCompile(`load_in_8bit["']?\s*[:=]\s*(?:True|true)|\bLinear8bitLt\b|quantization_bit[:=]\s*["']?8\b`)
	// PEFT's print_trainable_parameters, and Unsloth's banner.
	rePEFTCount    = regexp.MustCompile(`(?i)trainable params:\s*([\d,]{1,20})\s*\|\|\s*all params:\s*([\d,]{1,20})\s*\|\|\s*trainable%:\s*([\d.]{1,24})`)
	reUnslothCount = regexp.MustCompile(`(?:Number of trainable parameters|Trainable parameters) = ([\d,]{1,20})(?:/([\d,]{1,20}))?`)
	// ZeRO: a config dump, Lightning's strategy, DeepSpeed's own log, or
	// the optimizer's file in a frame.
	reZeroStage  = regexp.MustCompile(`(?i)"?stage"?\s*[:=]\s*([0-3])\b|zero_stage\s*[:=]\s*([0-3])\b|deepspeed_stage_([1-3])|ZeRO stage ([0-3]) optimizer|\bzero([1-3])\b|ZeRO Stage ([0-3])`)
	reZeroFrame2 = regexp.MustCompile(`deepspeed/runtime/zero/stage_1_and_2\.py|deepspeed/runtime/zero/stage2\.py`)
	reZeroFrame3 = regexp.MustCompile(`deepspeed/runtime/zero/(?:stage3|partition_parameters|parameter_offload)\.py`)
	reOffloadOpt = regexp.MustCompile(`(?i)"?offload_optimizer"?\s*[:=]\s*\{\s*"device"\s*:\s*"(?:cpu|nvme)"|offload_optimizer_device\s*[:=]\s*(?:cpu|nvme)|deepspeed_stage_\d_offload|\bCPU Offload: True`)
	reOffloadPar = regexp.MustCompile(`(?i)"?offload_param"?\s*[:=]\s*\{\s*"device"\s*:\s*"(?:cpu|nvme)"|offload_param_device\s*[:=]\s*(?:cpu|nvme)|fsdp_offload_params:\s*true|cpu_offload=CPUOffload\(offload_params=True`)
	// FSDP: accelerate's config echo, the Trainer's fsdp= argument, the
	// module's repr.
	reFSDP        = regexp.MustCompile(`(?i)fsdp_sharding_strategy:\s*(FULL_SHARD|SHARD_GRAD_OP|NO_SHARD|HYBRID_SHARD|[1-4])\b|\bfsdp\s*=\s*\[?['"]?(full_shard|shard_grad_op)|ShardingStrategy\.(FULL_SHARD|SHARD_GRAD_OP|HYBRID_SHARD)|distributed_type:\s*(FSDP)\b`)
	reOptimizer   = regexp.MustCompile(`DeepSpeed Basic Optimizer = (\w+)|\boptim["']?\s*[:=]\s*["']?(adamw_torch(?:_fused)?|adamw_hf|adamw_8bit|adamw_bnb_8bit|paged_adamw_8bit|paged_adamw_32bit|adafactor|sgd|lion_8bit|adamw)\b`)
	reGPUs        = regexp.MustCompile(`(?i)(?:--nproc[_-]per[_-]node|num_processes|--num_gpus|\bworld_size|WORLD_SIZE|dist_world_size|Num GPUs =)["']?\s*[:=]?\s*(\d{1,4})\b`)
	reTP          = regexp.MustCompile(`(?:--tensor-parallel-size|\btensor_parallel_size|--tp-size|--tp_size|\btp_size|--tp|--num-shard|--num_shard)["']?[= :]+(\d{1,3})\b`)
	reTPWorker    = regexp.MustCompile(`\bWorker_TP(\d{1,3})\b|\bVllmWorker TP(\d{1,3})\b`)
	reNGL         = regexp.MustCompile(`(?:\s-ngl|--n-gpu-layers|\bn_gpu_layers|\bnum_gpu)["']?[= :]\s*(-?\d{1,4})\b`)
	reCtxFlag     = regexp.MustCompile(`(?:\s-c|--ctx-size|\bnum_ctx|OLLAMA_CONTEXT_LENGTH)["']?[= :]\s*(\d{3,8})\b`)
	reGGUFQuant   = regexp.MustCompile(`(?i)[-._](I?Q\d(?:_K)?(?:_[SMLX]{1,2})?|Q\d_\d|F16|BF16|MXFP4)\.gguf\b|(?:file type|model ftype|general\.file_type)\s*[=:]\s*(I?Q\d\w*(?: - (?:Small|Medium|Large|Extra small))?|F16|BF16|MXFP4)\b`)
	reModelArg    = regexp.MustCompile(`(?:vllm serve|trtllm-serve|sglang serve|--model(?:-path|_name_or_path|-id|_dir)?['"]?,?[= ]|model=['"]|from_pretrained\(\s*['"]|base_model:\s*|model_name_or_path["']?\s*[:=]\s*['"]?|'model': '|-m |-hf )\s*['"]?([\w.\-/:]{3,120})`)
	reRankPrefix  = regexp.MustCompile(`\[rank(\d{1,4})\]`)
	reVLLMUtilAny = regexp.MustCompile(`(?i)(?:gpu[_-]memory[_-]utilization|mem[_-]fraction[_-]static|free_gpu_memory_fraction)["']?\s*[:=( ]\s*(0?\.\d+|1\.0*)\b`)
	reQuantArg    = regexp.MustCompile(`(?:--quantization[= ]|\bquantization=|'quantization': ')['"]?(awq_marlin|awq|gptq_marlin|gptq|fp8|bitsandbytes|compressed-tensors|gguf|mxfp4|modelopt)\b`)
	reMaxSeqs     = regexp.MustCompile(`(?:--max[_-]batch[_-]size|\bmax_batch_size|--max-num-seqs|\bmax_num_seqs|--max-running-requests|\bmax_running_requests)["']?[= :]+["']?(\d{1,6})\b`)
	reBatchedTok  = regexp.MustCompile(`(?:--max[_-]num[_-]tokens|\bmax_num_tokens|--max-num-batched-tokens|\bmax_num_batched_tokens|--max-batch-prefill-tokens|--chunked-prefill-size|\bchunked_prefill_size)["']?[= :]+["']?(\d{2,8})\b`)
	reKVDtype     = regexp.MustCompile(`(?:--kv-cache-dtype[= ]|\bkv_cache_dtype=)['"]?(fp8\w*|auto|bfloat16|float16)\b`)
)

// The words that say what kind of job ran (lower case).
var (
	trainingWords = []string{".backward(", "optimizer.step(", "training_step", "trainer.train(", "model.train()", "train_epoch", "_inner_training_loop",
		"per_device_train_batch_size", "gradient_accumulation", "train_micro_batch_size", "zero stage", "creating bf16 optimizer", "basic optimizer",
		"main training loop", "training_loop", "train_step", "finetune", "fine-tune", "fine_tune", "sft_trainer", "sfttrainer", "/trl/",
		"num_train_epochs", "--train_steps", "pretrain_gpt", "megatron/training", "train.py", "llamafactory-cli train", "stage: sft",
		"lightning/pytorch/loops", "fit_loop", "unsloth - 2x faster free finetuning", "finetuning", "fine_tuning", "train_utils",
		"learning_rate", "megatron/"}
	inferenceWords = []string{"chat_completion", "text_completion", "offline_infer", "inference.py", "infer.py", "_inference", "generate(",
		"llamafactory-cli chat", "pipeline(", "benchmark_latency", "benchmark_throughput"}
	hfWords = []string{"transformers/", "transformers\\", "/trl/", "/peft/", "accelerate/", "unsloth", "llamafactory", "axolotl", "from_pretrained(",
		"per_device_train_batch_size", "model_name_or_path", "trainingarguments", "sftconfig"}
)

// modelArg finds the first argument that names the model; llama.cpp's
// "-m FILE", not Python's "python -m module".
func modelArg(s string) []string {
	for _, loc := range reModelArg.FindAllStringSubmatchIndex(s, 8) {
		if strings.HasPrefix(s[loc[0]:], "-m ") && rePythonM.MatchString(s[max(0, loc[0]-16):loc[0]]) {
			continue
		}
		return []string{s[loc[0]:loc[1]], s[loc[2]:loc[3]]}
	}
	return nil
}

var rePythonM = regexp.MustCompile(`\bpython[\d.]*\s+$`)

// readWorkload reads the workload from the text around the OOM.
func readWorkload(t pasteText, frames []frame) PasteWorkload {
	w := PasteWorkload{ZeroStage: -1, GPULayers: -1}
	readTraining(t, &w)
	readAdapter(t, &w)
	readSharding(t, frames, &w)
	readServing(t, &w)
	readGGUF(t, &w)
	if t.has("vllm serve", "trtllm-serve", "sglang serve", "--model", "model=", "from_pretrained", "base_model", "model_name_or_path", "-m ", "-hf ", "'model': '") {
		if m := modelArg(t.s); m != nil {
			w.Model = strings.TrimRight(strings.Trim(m[1], `"'.,:`), "/")
			w.note("model", w.Model, m[0])
		}
	}
	w.Training = t.has(trainingWords...)
	w.Inference = t.has(inferenceWords...)
	for _, tr := range trainers {
		if t.has(tr.words...) {
			w.Trainer = tr.name
			break
		}
	}
	return w
}

// trainers are the training stacks a paste shows by its paths and
// banners, most specific first: Unsloth and LLaMA-Factory run TRL and the
// HF Trainer underneath.
var trainers = []struct {
	name  string
	words []string
}{
	{"unsloth", []string{"unsloth"}},
	{"llama-factory", []string{"llamafactory", "llama_factory", "llama-factory"}},
	{"axolotl", []string{"axolotl"}},
	{"torchtune", []string{"torchtune"}},
	{"trl", []string{"/trl/", "\\trl\\", "sfttrainer", "sft_trainer", "sftconfig"}},
	{"lightning", []string{"lightning/pytorch", "pytorch_lightning", "lightning/fabric"}},
	{"hf", []string{"transformers/trainer.py", "transformers\\trainer.py", "trainingarguments"}},
}

// lastMatch is the last match of re in s with its first non-empty group.
func lastMatch(re *regexp.Regexp, s string) (whole, group string, ok bool) {
	ms := re.FindAllStringSubmatch(s, -1)
	for i := len(ms) - 1; i >= 0; i-- {
		for _, g := range ms[i][1:] {
			if g != "" {
				return ms[i][0], g, true
			}
		}
	}
	return "", "", false
}

// readInt reads the last match of re into *v and notes it as setting.
func (w *PasteWorkload) readInt(t pasteText, re *regexp.Regexp, setting string, v *int, words ...string) {
	if !t.has(words...) {
		return
	}
	if whole, g, ok := lastMatch(re, t.s); ok {
		if n, ok := intOf(g); ok {
			*v = n
			w.note(setting, strconv.Itoa(n), whole)
		}
	}
}

// readTraining reads a trainer's settings: batch, accumulation, sequence
// length, precision, checkpointing, optimizer, GPUs.
func readTraining(t pasteText, w *PasteWorkload) {
	text := t.s
	w.readInt(t, reBatch, "batch", &w.Batch, "batch_size", "batch-size", "batch size")
	w.readInt(t, reAccum, "grad_accum_steps", &w.AccumSteps, "gradient_accumulation", "gradient accumulation")
	w.readInt(t, reSeq, "seq_len", &w.SeqLen, "max_seq", "sequence_len", "cutoff_len", "model_max_length", "seq_len", "max_length")
	switch {
	case t.has("bf16", "bfloat16") && reBF16.MatchString(text):
		w.Precision = "bf16"
		w.note("precision", "bf16", reBF16.FindString(text))
	case t.has("fp16", "float16", "precision") && reFP16.MatchString(text):
		w.Precision = "fp16"
		w.note("precision", "fp16", reFP16.FindString(text))
	}
	if t.has("gradient_checkpointing") {
		if whole, g, ok := lastMatch(reGC, text); ok {
			on := !strings.EqualFold(strings.Trim(g, `"'`), "false")
			w.GradCheckpointing = &on
			w.note("gradient_checkpointing", strconv.FormatBool(on), whole)
		}
	}
	if t.has("optim") {
		if whole, g, ok := lastMatch(reOptimizer, text); ok {
			w.Optimizer = g
			w.note("optimizer", g, whole)
		}
	}
	w.readInt(t, reGPUs, "gpus", &w.GPUs, "nproc", "num_processes", "num_gpus", "world_size", "num gpus")
	if strings.Contains(text, "[rank") {
		for _, m := range reRankPrefix.FindAllStringSubmatch(text, 64) {
			if n, ok := intOf(m[1]); ok && n+1 > w.GPUs {
				w.GPUs = n + 1
				w.note("gpus", strconv.Itoa(w.GPUs)+" or more", "ranks up to "+m[0])
			}
		}
	}
}

// readAdapter reads LoRA and QLoRA: PEFT's trainable count, its config,
// bitsandbytes' 4-bit weights.
func readAdapter(t pasteText, w *PasteWorkload) {
	text := t.s
	adapter := ""
	if t.has("trainable params") {
		if m := rePEFTCount.FindStringSubmatch(text); m != nil {
			tp, ok1 := intOf(m[1])
			all, ok2 := intOf(m[2])
			if ok1 && ok2 && all > 0 {
				w.TrainableParams, w.AllParams = int64(tp), int64(all)
				w.note("trainable_params", m[1]+" of "+m[2], m[0])
				if float64(tp) < 0.5*float64(all) {
					adapter = m[0]
				}
			}
		}
	}
	if t.has("trainable parameters") && w.TrainableParams == 0 {
		if m := reUnslothCount.FindStringSubmatch(text); m != nil {
			if n, ok := intOf(m[1]); ok {
				w.TrainableParams = int64(n)
				if all, ok := intOf(m[2]); ok {
					w.AllParams = int64(all)
				}
				w.note("trainable_params", m[1], m[0])
				if w.AllParams == 0 || float64(n) < 0.5*float64(w.AllParams) {
					adapter = m[0]
				}
			}
		}
	}
	if adapter == "" && t.has("lora", "peft") {
		adapter = reLoRA.FindString(text)
	}
	q4 := ""
	if t.has("4bit", "qlora", "quantization_bit") {
		q4 = reQLoRA.FindString(text)
	}
	switch {
	case q4 != "":
		w.Quantization = "bnb-4bit"
		w.note("quantization", "bnb-4bit", q4)
	case t.has("8bit", "quantization_bit") && reBnB8.MatchString(text):
		w.Quantization = "bnb-8bit"
		w.note("quantization", "bnb-8bit", reBnB8.FindString(text))
	}
	switch {
	case adapter != "" && q4 != "":
		w.Method = "qlora"
		w.note("method", "qlora", adapter)
	case adapter != "":
		w.Method = "lora"
		w.note("method", "lora", adapter)
	}
}

// readSharding reads ZeRO and FSDP: the stage, the offload, the strategy.
func readSharding(t pasteText, frames []frame, w *PasteWorkload) {
	text := t.s
	w.ZeroStage = zeroStage(t, frames)
	if w.ZeroStage >= 0 {
		w.note("zero_stage", strconv.Itoa(w.ZeroStage), zeroEvidence(t, frames))
	}
	switch {
	case !t.has("offload"):
	case reOffloadPar.MatchString(text):
		w.Offload = "param"
		w.note("offload", "parameters and optimizer", reOffloadPar.FindString(text))
	case reOffloadOpt.MatchString(text):
		w.Offload = "optimizer"
		w.note("offload", "optimizer", reOffloadOpt.FindString(text))
	}
	if t.has("fsdp", "shardingstrategy") {
		if whole, g, ok := lastMatch(reFSDP, text); ok {
			w.Sharding = map[string]string{"FULL_SHARD": "full-shard", "1": "full-shard", "full_shard": "full-shard", "FSDP": "full-shard",
				"SHARD_GRAD_OP": "shard-grad-op", "2": "shard-grad-op", "shard_grad_op": "shard-grad-op", "NO_SHARD": "no-shard", "3": "no-shard",
				"HYBRID_SHARD": "hybrid-shard", "4": "hybrid-shard"}[g]
			if w.Sharding != "" {
				w.note("sharding", "FSDP "+w.Sharding, whole)
			}
		}
	}
}

// zeroEvidence quotes what gave the ZeRO stage: the optimizer's file in a
// frame, else the config or log words.
func zeroEvidence(t pasteText, frames []frame) string {
	for _, f := range frames {
		p := strings.ReplaceAll(f.path, `\`, "/")
		if reZeroFrame3.MatchString(p) || reZeroFrame2.MatchString(p) {
			return shortPath(p) + " in the stack"
		}
	}
	whole, _, _ := lastMatch(reZeroStage, t.s)
	return whole
}

// readServing reads a serving engine's settings: its context, tensor
// parallelism, memory share, quantisation and KV-cache dtype.
func readServing(t pasteText, w *PasteWorkload) {
	text := t.s
	w.readInt(t, reServeLen, "max_model_len", &w.MaxModelLen, "max-model-len", "max_model_len", "max-total-tokens", "max_total_tokens", "context-length", "context_length", "llm engine")
	w.readInt(t, reTP, "tp", &w.TP, "tensor-parallel", "tensor_parallel", "--tp", "tp_size", "tp-size", "num-shard", "num_shard")
	if w.TP == 0 && t.has("worker_tp", "vllmworker tp") {
		for _, m := range reTPWorker.FindAllStringSubmatch(text, 64) {
			if n, ok := intOf(m[1] + m[2]); ok && n+1 > w.TP {
				w.TP = n + 1
				w.note("tp", strconv.Itoa(w.TP)+" or more", "worker "+m[0])
			}
		}
	}
	w.readInt(t, reBatchedTok, "batched_tokens", &w.BatchedTokens, "max_num_tokens", "max-num-tokens", "batched-tokens", "batched_tokens", "prefill-tokens", "chunked-prefill", "chunked_prefill")
	w.readInt(t, reMaxSeqs, "max_seqs", &w.MaxSeqs, "max_batch_size", "max-batch-size", "max-num-seqs", "max_num_seqs", "max-running-requests", "max_running_requests")
	if t.has("utilization", "mem_fraction", "mem-fraction", "free_gpu_memory_fraction") {
		if m := reVLLMUtilAny.FindStringSubmatch(text); m != nil {
			w.GPUMemoryUtilization, _ = strconv.ParseFloat(m[1], 64)
			w.note("gpu_memory_utilization", m[1], m[0])
		}
	}
	if t.has("quantization") {
		if m := reQuantArg.FindStringSubmatch(text); m != nil && w.Quantization == "" {
			w.Quantization = m[1]
			w.note("quantization", m[1], m[0])
		}
	}
	if t.has("kv-cache-dtype", "kv_cache_dtype") {
		if m := reKVDtype.FindStringSubmatch(text); m != nil && m[1] != "auto" {
			w.KVCacheDtype = m[1]
			w.note("kv_cache_dtype", m[1], m[0])
		}
	}
}

// readGGUF reads llama.cpp's and Ollama's settings: -c, -ngl, the GGUF type.
func readGGUF(t pasteText, w *PasteWorkload) {
	w.readInt(t, reCtxFlag, "n_ctx", &w.NCtx, " -c ", "ctx-size", "num_ctx", "ollama_context_length")
	if t.has("ngl", "gpu-layers", "gpu_layers", "num_gpu") {
		if whole, g, ok := lastMatch(reNGL, t.s); ok {
			if n, ok := intOf(g); ok {
				w.GPULayers = n
				w.note("ngl", g, whole)
			}
		}
	}
	if t.has("gguf", "ftype", "file type", "file_type") {
		if m := reGGUFQuant.FindStringSubmatch(t.s); m != nil {
			w.Quant = ggufType(m[1] + m[2])
			w.note("gguf_type", w.Quant, m[0])
		}
	}
}

// ggufType names a GGUF type as its files do: llama.cpp prints "Q4_K -
// Medium" for Q4_K_M and "Q2_K - Medium" for Q2_K (llama_model_ftype_name).
func ggufType(s string) string {
	s = strings.ToUpper(s)
	base, size, ok := strings.Cut(s, " - ")
	if !ok {
		return s
	}
	suffix := map[string]string{"SMALL": "_S", "MEDIUM": "_M", "LARGE": "_L", "EXTRA SMALL": "_XS"}[size]
	if base == "Q2_K" && suffix == "_M" {
		return base
	}
	return base + suffix
}
