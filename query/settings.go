package query

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vrambot/vrambot/advisor/arch"
	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/advisor/memory"
	"github.com/vrambot/vrambot/advisor/serving"
	"github.com/vrambot/vrambot/internal/errs"
)

// queryKeys are the key=value settings; keyAliases the other spellings accepted.
var queryKeys = []string{"bs", "seq", "precision", "optim", "gc", "zero", "offload", "gpus", "tp", "pp", "rank", "targets", "attn", "kv", "tokens", "engine", "framework", "gpu",
	"loss", "optim-in-bwd", "act-offload", "ga",
	"gpu-util", "max-num-seqs", "max-num-batched-tokens", "users", "engine-version"}

// keyAliases include the serving engines' own flag names (vLLM's
// --max-model-len, --gpu-memory-utilization, --tensor-parallel-size;
// SGLang's --context-length, --mem-fraction-static, --tp; TGI's
// --max-total-tokens, --num-shard, --max-batch-prefill-tokens; llama.cpp's
// -c; Ollama's num_ctx), with or without their dashes.
var keyAliases = map[string]string{
	"batch": "bs", "batch-size": "bs", "micro-batch": "bs",
	"seq-len": "seq", "seqlen": "seq", "ctx": "seq", "max-model-len": "seq", "context": "seq", "context-length": "seq",
	"max-total-tokens": "seq", "num-ctx": "seq", "c": "seq", "ctx-size": "seq",
	"dtype": "precision", "optimizer": "optim", "checkpointing": "gc",
	"activation-checkpointing": "gc", "gradient-checkpointing": "gc", "ac": "gc",
	"optimizer-in-bwd": "optim-in-bwd", "optimizer-in-backward": "optim-in-bwd", "optim-in-backward": "optim-in-bwd",
	"activation-offload": "act-offload", "activation-offloading": "act-offload", "offload-activations": "act-offload",
	"cross-entropy": "loss", "ce": "loss",
	"grad-accum": "ga", "gradient-accumulation": "ga", "gradient-accumulation-steps": "ga", "accum": "ga",
	"r": "rank", "lora-rank": "rank", "attention": "attn", "kv-cache": "kv", "kv-cache-dtype": "kv", "fw": "framework",
	"gpu-memory-utilization": "gpu-util", "gpu-mem-util": "gpu-util", "mem-fraction-static": "gpu-util", "mem-fraction": "gpu-util",
	"tensor-parallel-size": "tp", "tp-size": "tp", "num-shard": "tp", "pipeline-parallel-size": "pp", "pp-size": "pp",
	"max-batch-prefill-tokens": "max-num-batched-tokens", "chunked-prefill-size": "max-num-batched-tokens",
	"max-running-requests": "max-num-seqs", "concurrency": "users", "concurrent-users": "users", "sequences": "users",
	"vllm-version": "engine-version", "version": "engine-version",
	// Hugging Face TrainingArguments, PEFT, DeepSpeed, axolotl and
	// LLaMA-Factory names, and a few more of vLLM's flags.
	"max-seq-len": "seq", "max-seq-length": "seq", "max-length": "seq", "max-len": "seq", "model-max-length": "seq",
	"sequence-length": "seq", "seq-length": "seq", "sequence-len": "seq", "cutoff-len": "seq", "context-window": "seq", "max-context": "seq",
	"per-device-train-batch-size": "bs", "per-device-batch-size": "bs", "per-device-eval-batch-size": "bs", "micro-batch-size": "bs",
	"train-micro-batch-size-per-gpu": "bs", "batchsize": "bs",
	"lora-r": "rank", "zero-stage": "zero", "quantization": "precision", "quant": "precision",
	"num-gpus": "gpus", "n-gpus": "gpus", "ngpus": "gpus", "nproc-per-node": "gpus", "world-size": "gpus", "gpu-count": "gpus",
	"concurrent-requests": "users", "max-concurrency": "users", "attn-implementation": "attn", "attention-implementation": "attn",
	"kv-dtype": "kv", "tensor-parallel": "tp", "pipeline-parallel": "pp", "model-len": "seq",
}

// fullFinetuneBelow is the size under which "finetune" means every weight:
// encoders and small decoders (BERT, GPT-2, T5-base) are fully fine-tuned,
// LLMs with adapters.
const fullFinetuneBelow = 1_000_000_000

// precisionFlags are boolean settings that name a precision
// (TrainingArguments' bf16=True is AMP in bf16; bitsandbytes'
// load_in_4bit=True is NF4 weights).
var precisionFlags = map[string]string{
	"bf16": "mixed-bf16", "fp16": "mixed-fp16", "load-in-4bit": "nf4", "load-in-8bit": "int8",
}

// unusedKeys are settings people paste with the others (from
// TrainingArguments, a LoRA config, a sampling config) that do not change
// the memory of one step: read, said so, and not used.
var unusedKeys = map[string]bool{
	"learning-rate": true, "lr": true, "num-train-epochs": true, "epochs": true,
	"warmup-steps": true, "warmup-ratio": true, "weight-decay": true, "seed": true, "lora-alpha": true, "lora-dropout": true,
	"logging-steps": true, "save-steps": true, "eval-steps": true, "max-steps": true, "output-dir": true, "report-to": true,
	"temperature": true, "top-p": true, "top-k": true, "lr-scheduler-type": true, "max-grad-norm": true,
}

// servingKeys only apply to a serving engine; given alone they imply vLLM.
var servingKeys = []string{"gpu-util", "max-num-seqs", "max-num-batched-tokens", "users", "engine-version"}

// queryEnum is one key's closed vocabulary: accepted spelling → canonical value,
// with the canonical values in display order.
type queryEnum struct {
	values map[string]string
	canon  []string
}

var (
	precisionEnum = queryEnum{
		values: map[string]string{
			"fp32": "fp32", "float32": "fp32", "fp16": "fp16", "float16": "fp16", "half": "fp16",
			"bf16": "bf16", "bfloat16": "bf16", "mixed-bf16": "mixed-bf16", "amp-bf16": "mixed-bf16", "bf16-mixed": "mixed-bf16",
			"mixed-fp16": "mixed-fp16", "amp-fp16": "mixed-fp16", "16-mixed": "mixed-fp16", "fp16-mixed": "mixed-fp16",
			"int8": "int8", "8bit": "int8", "nf4": "nf4", "4bit": "nf4",
			// bitsandbytes as people name it: 4-bit (NF4) unless 8-bit is said.
			"bnb": "nf4", "bitsandbytes": "nf4", "bnb-4bit": "nf4", "bnb-nf4": "nf4", "bnb-8bit": "int8", "bnb-int8": "int8", "llm-int8": "int8",
			// Pre-quantised checkpoints (DESIGN.md §3.2, added in turn 2).
			// W8A8 INT8 and 8-bit GPTQ store a byte per weight, as int8 does.
			"fp8": "fp8", "float8": "fp8", "fp8-e4m3": "fp8", "w8a8-fp8": "fp8", "fp8-dynamic": "fp8", "fp8-static": "fp8", "fp8-block": "fp8",
			"w8a8": "int8", "w8a8-int8": "int8", "int8-w8a8": "int8", "gptq-int8": "int8", "gptq-8bit": "int8",
			"int4": "int4", "w4a16": "int4", "awq": "awq", "awq-int4": "awq", "awq-4bit": "awq", "gptq": "gptq", "gptq-int4": "gptq", "gptq-4bit": "gptq",
			"mxfp4": "mxfp4", "nvfp4": "nvfp4",
		},
		canon: []string{"fp32", "fp16", "bf16", "mixed-bf16", "mixed-fp16", "int8", "nf4", "fp8", "int4", "awq", "gptq", "mxfp4", "nvfp4", "q4_k_m", "q8_0"},
	}
	optimEnum = queryEnum{
		values: map[string]string{
			"adamw": "adamw", "adam": "adamw", "adamw-torch": "adamw", "adamw-torch-fused": "adamw",
			"adamw-8bit": "adamw-8bit", "adamw8bit": "adamw-8bit", "adam8bit": "adamw-8bit", "adamw-bnb-8bit": "adamw-8bit", "8bit-adam": "adamw-8bit",
			"paged-adamw-8bit": "paged-adamw-8bit", "paged-adamw8bit": "paged-adamw-8bit",
			// Paged 32-bit AdamW keeps AdamW's 8 bytes per parameter.
			"paged-adamw-32bit": "adamw", "adamw-hf": "adamw", "adamw-apex-fused": "adamw",
			"adafactor": "adafactor", "sgd": "sgd", "none": "none",
		},
		canon: []string{"adamw", "adamw-8bit", "paged-adamw-8bit", "adafactor", "sgd", "none"},
	}
	boolEnum = queryEnum{
		values: map[string]string{"on": "on", "true": "on", "yes": "on", "1": "on", "off": "off", "false": "off", "no": "off", "0": "off"},
		canon:  []string{"on", "off"},
	}
	// gcEnum is checkpointing: on (full), off, selective (torchtitan's
	// per-op policy), or Unsloth's offloaded variant.
	gcEnum = queryEnum{
		values: map[string]string{
			"on": "full", "true": "full", "yes": "full", "1": "full", "full": "full",
			"off": "off", "false": "off", "no": "off", "0": "off", "none": "off",
			"selective": "selective", "sac": "selective", "op": "selective", "selective-op": "selective",
			"offloaded": "offloaded", "offload": "offloaded", "unsloth": "offloaded", "cpu": "offloaded",
		},
		canon: []string{"on", "off", "selective", "offloaded"},
	}
	lossEnum = queryEnum{
		values: map[string]string{
			"chunked": "chunked", "fused": "chunked", "liger": "chunked", "chunked-ce": "chunked", "chunked-nll": "chunked", "fused-linear-ce": "chunked",
			"standard": "standard", "full": "standard", "default": "standard", "nll": "standard",
		},
		canon: []string{"chunked", "standard"},
	}
	offloadEnum = queryEnum{
		values: map[string]string{"none": "none", "off": "none", "optimizer": "optimizer", "optim": "optimizer", "cpu": "optimizer", "param": "param", "params": "param", "parameters": "param"},
		canon:  []string{"none", "optimizer", "param"},
	}
	targetsEnum = queryEnum{
		values: map[string]string{"qv": "qv", "q,v": "qv", "attn": "attn", "attention": "attn", "qkvo": "attn", "all": "all", "all-linear": "all"},
		canon:  []string{"qv", "attn", "all"},
	}
	attnEnum = queryEnum{
		values: map[string]string{"flash": "flash", "sdpa": "flash", "flash2": "flash", "fa2": "flash", "flash-attention-2": "flash", "eager": "eager"},
		canon:  []string{"flash", "eager"},
	}
	kvEnum = queryEnum{
		values: map[string]string{"fp16": "fp16", "bf16": "fp16", "auto": "fp16", "fp8": "fp8", "fp8-e4m3": "fp8", "fp8-e5m2": "fp8", "int8": "int8"},
		canon:  []string{"fp16", "fp8", "int8"},
	}
	engineEnum = queryEnum{
		values: map[string]string{
			"hf": "hf", "transformers": "hf", "huggingface": "hf", "vllm": "vllm",
			"sglang": "sglang", "tgi": "tgi", "text-generation-inference": "tgi",
			"llama.cpp": "llama.cpp", "llamacpp": "llama.cpp", "llama-cpp": "llama.cpp", "llama-server": "llama.cpp", "ollama": "ollama",
		},
		canon: []string{"hf", "vllm", "sglang", "tgi", "llama.cpp", "ollama"},
	}
	// frameworkEnum names the stack: its canonical values are the query
	// words; frameworkStacks maps them to the snippets' stack and the
	// memory defaults' framework.
	frameworkEnum = queryEnum{
		values: map[string]string{
			"pytorch": "pytorch", "torch": "pytorch",
			"hf": "hf", "hf-trainer": "hf", "transformers": "hf", "accelerate": "hf", "peft": "hf",
			"trl":       "trl",
			"unsloth":   "unsloth",
			"axolotl":   "axolotl",
			"torchtune": "torchtune", "tune": "torchtune",
			"torchtitan": "torchtitan", "titan": "torchtitan",
			"llama-factory": "llama-factory", "llamafactory": "llama-factory", "llama-board": "llama-factory",
			"lightning": "lightning", "pl": "lightning",
			"deepspeed": "deepspeed", "ds": "deepspeed",
			"keras": "keras", "tensorflow": "keras", "tf": "keras",
			"jax": "jax", "flax": "jax",
			"vllm": "vllm",
		},
		canon: []string{"pytorch", "hf", "trl", "unsloth", "axolotl", "torchtune", "torchtitan", "llama-factory", "lightning", "deepspeed", "keras", "jax", "vllm"},
	}
)

// keyEnum is a key with its closed vocabulary.
type keyEnum struct {
	key  string
	enum queryEnum
}

// keyEnums lists the keys whose values are a closed vocabulary.
func keyEnums() []keyEnum {
	return []keyEnum{{"precision", precisionEnum}, {"optim", optimEnum}, {"gc", gcEnum}, {"offload", offloadEnum},
		{"targets", targetsEnum}, {"attn", attnEnum}, {"kv", kvEnum}, {"engine", engineEnum}, {"framework", frameworkEnum},
		{"loss", lossEnum}, {"optim-in-bwd", boolEnum}, {"act-offload", boolEnum}}
}

// frameworkStack is what a framework= word means for the snippets (the
// fix catalogue's stack) and for the estimate (the training stack whose
// defaults fill what the query leaves out).
type frameworkStack struct {
	snippets fix.Framework
	memory   memory.Framework
}

var frameworkStacks = map[string]frameworkStack{
	"pytorch":       {snippets: fix.FrameworkPyTorch},
	"hf":            {snippets: fix.FrameworkHF, memory: memory.FrameworkHF},
	"trl":           {snippets: fix.FrameworkHF, memory: memory.FrameworkTRL},
	"unsloth":       {snippets: fix.FrameworkUnsloth, memory: memory.FrameworkUnsloth},
	"axolotl":       {snippets: fix.FrameworkAxolotl, memory: memory.FrameworkAxolotl},
	"torchtune":     {snippets: fix.FrameworkTorchtune, memory: memory.FrameworkTorchtune},
	"llama-factory": {snippets: fix.FrameworkLlamaFactory, memory: memory.FrameworkLlamaFactory},
	"torchtitan":    {snippets: fix.FrameworkPyTorch, memory: memory.FrameworkTorchtitan},
	"lightning":     {snippets: fix.FrameworkLightning, memory: memory.FrameworkLightning},
	"deepspeed":     {snippets: fix.FrameworkDeepSpeed},
	"keras":         {snippets: fix.FrameworkKeras},
	"jax":           {snippets: fix.FrameworkJAX},
	"vllm":          {snippets: fix.FrameworkVLLM},
}

// GGUF types are precisions too ("q4_k_m" typed as q4_k_m or q4-k-m).
func init() {
	for _, t := range arch.GGUFTypes() {
		precisionEnum.values[strings.ReplaceAll(t, "_", "-")] = t
	}
}

// parse looks v up; an unknown value is an error naming the key, the value
// and the closest valid spelling.
func (e queryEnum) parse(key, v string) (string, error) {
	norm := strings.ReplaceAll(strings.ToLower(v), "_", "-")
	if c, ok := e.values[norm]; ok {
		return c, nil
	}
	err := Errorf(v, "unknown %s '%s' (one of %s)", key, ShowToken(v), strings.Join(e.canon, ", "))
	err.Suggestion = closestWord(norm, e.canon)
	if err.Suggestion != "" {
		err.Reason = fmt.Sprintf("unknown %s '%s'", key, ShowToken(v))
	}
	return "", err
}

func (p *parsedQuery) keyValue(tok, k, v string) error {
	key := strings.TrimLeft(strings.ReplaceAll(strings.ToLower(k), "_", "-"), "-")
	switch {
	case key == "model" && v != "":
		return p.modelValue(v)
	case key == "method" && v != "":
		return p.token(v)
	case precisionFlags[key] != "" && v != "":
		on, err := boolEnum.parse(key, v)
		if err != nil {
			return err
		}
		if on == "off" {
			return nil // fp16=False says what is not used
		}
		return p.keyValue(tok, "precision", precisionFlags[key])
	case unusedKeys[key] && v != "":
		p.notes = append(p.notes, fmt.Sprintf("%s does not change the memory of one step: not used", ShowToken(k+"="+v)))
		return nil
	}
	if a, ok := keyAliases[key]; ok {
		key = a
	}
	known := false
	for _, qk := range queryKeys {
		if qk == key {
			known = true
		}
	}
	if !known {
		err := Errorf(tok, "unknown setting '%s'", ShowToken(k))
		err.Suggestion = closestWord(key, queryKeys)
		if err.Suggestion == "" {
			err.Reason += " (one of " + strings.Join(queryKeys, ", ") + ")"
		}
		return err
	}
	if v == "" {
		return Errorf(tok, "%s= needs a value", key)
	}
	if _, dup := p.kv[key]; dup {
		return Errorf(tok, "%s given twice ('%s' and '%s')", key, ShowToken(key+"="+p.kv[key]), ShowToken(tok))
	}
	if key == "gpu" {
		if g, ok := catalog.LookupGPU(v); ok {
			return p.setGPU(g, v, false)
		}
		if n, ok := parseBudgetGPU(strings.ToLower(v)); ok {
			return p.setGPU(budgetGPU(n), v, true)
		}
		return &Error{Token: tok, Reason: fmt.Sprintf("unknown GPU '%s'", ShowToken(v)), Suggestion: catalog.SuggestGPU(v)}
	}
	p.kv[key] = v
	return nil
}

// parsePositiveInt reads a positive integer no larger than limit.
func parsePositiveInt(key, v string, limit int) (int, error) {
	if !allDigits(v) {
		return 0, Errorf(v, "%s must be a positive integer, got '%s'", key, ShowToken(v))
	}
	n, err := strconv.Atoi(v)
	if err != nil || n > limit {
		return 0, Errorf(v, "%s=%s is too large (at most %d)", key, ShowToken(v), limit)
	}
	if n < 1 {
		return 0, Errorf(v, "%s must be a positive integer, got '%s'", key, ShowToken(v))
	}
	return n, nil
}

func allDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// parseSeqLen reads a sequence length: "4096", or "4k"/"128k"/"1M" in units
// of 1024 and 1024² as context lengths are quoted (Llama 4's "10M context").
func parseSeqLen(v string) (int, error) {
	l := strings.ToLower(v)
	for _, u := range []struct {
		suffix string
		unit   int
	}{{"k", 1024}, {"m", 1024 * 1024}} {
		num, ok := strings.CutSuffix(l, u.suffix)
		if !ok || !allDigits(num) {
			continue
		}
		n, err := strconv.Atoi(num)
		if err != nil || n > maxSeq/u.unit {
			return 0, Errorf(v, "seq=%s is too long (at most %d tokens)", ShowToken(v), maxSeq)
		}
		if n < 1 {
			return 0, Errorf(v, "seq must be a positive integer, got '%s'", ShowToken(v))
		}
		return n * u.unit, nil
	}
	return parsePositiveInt("seq", v, maxSeq)
}

// parseJobTokens reads a job size in tokens: "2000000000", "1e9", "2B", "500M", "1.5T".
func parseJobTokens(v string) (int64, error) {
	l := strings.ToLower(v)
	mult := 1.0
	switch {
	case strings.HasSuffix(l, "k"):
		mult, l = 1e3, strings.TrimSuffix(l, "k")
	case strings.HasSuffix(l, "m"):
		mult, l = 1e6, strings.TrimSuffix(l, "m")
	case strings.HasSuffix(l, "b"):
		mult, l = 1e9, strings.TrimSuffix(l, "b")
	case strings.HasSuffix(l, "t"):
		mult, l = 1e12, strings.TrimSuffix(l, "t")
	}
	bad := Errorf(v, "tokens must be a positive number such as 2B, 500M or 1e9, got '%s'", ShowToken(v))
	if l == "" || len(l) > 24 || strings.Trim(l, "0123456789.e+") != "" || strings.HasPrefix(l, "+") {
		return 0, bad
	}
	f, err := strconv.ParseFloat(l, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, bad
	}
	f *= mult
	if f < 1 {
		return 0, bad
	}
	if f > maxJobTokens {
		return 0, Errorf(v, "tokens=%s is too large (at most 1e15)", ShowToken(v))
	}
	return int64(math.Round(f)), nil
}

// query applies the settings and the defaults and builds the Query.
func (p *parsedQuery) query() (Query, error) {
	if p.model == nil {
		return Query{}, Errorf("", "no model given: add a catalog name (llama-2-7b), a Hugging Face id (Qwen/Qwen3-8B) or a size (7b), e.g. /vram llama-2-7b lora a100 bs=4")
	}
	var q Query
	w := &q.Workload
	m := *p.model
	w.Model = m
	w.ModelName = m.Name
	if len(m.Aliases) > 0 {
		w.ModelName = m.Aliases[0]
	}
	w.Params = m.Params
	if m.Scaled { // memory.Resolve states the made-up architecture as an assumption
		w.ModelName = strings.ToLower(m.Name)
	}
	if p.resolved != nil { // a Hub model or a config.json: named and explained by the resolver
		w.ModelName = p.resolved.Name()
		w.Assumptions = append(w.Assumptions, p.resolved.Notes...)
	}
	assume := func(def, format string, args ...any) {
		q.Defaults = append(q.Defaults, def)
		w.Assumptions = append(w.Assumptions, fmt.Sprintf(format, args...))
	}

	// GPU first: precision defaults depend on it.
	if p.gpu == nil {
		g, ok := catalog.LookupGPU(defaultGPUKey)
		if !ok {
			return Query{}, errs.New(errs.Internal, "default GPU %s missing from the catalog", defaultGPUKey)
		}
		q.GPU = g
		assume(DefaultGPU, "GPU not given: assuming %s", g.Name)
	} else {
		q.GPU = *p.gpu
		q.Budget = p.budget
		if p.budget {
			w.Assumptions = append(w.Assumptions, fmt.Sprintf("budget '%s' read as %s usable (GPU tools label GiB as GB), on a GPU with bf16 and without fp8", ShowToken(p.gpuTok), budgetGiB(q.GPU.UsableBytes)))
		} else {
			q.RequestedGPU = q.GPU.Key
		}
	}

	trainingKeys := []string{"optim", "gc", "zero", "offload", "loss", "optim-in-bwd", "act-offload", "ga"}
	loraKeys := []string{"rank", "targets"}
	w.Method = p.method
	if w.Method == "" && p.loose != "" {
		w.Method = p.loose
		switch {
		case p.loose != memory.MethodLoRA:
		case m.Params > 0 && m.Params < fullFinetuneBelow:
			w.Method = memory.MethodFull
			w.Assumptions = append(w.Assumptions, fmt.Sprintf("'%s' read as full fine-tuning, the usual way for a model under 1B parameters: say lora for adapters", ShowToken(p.looseTok)))
		default:
			w.Assumptions = append(w.Assumptions, fmt.Sprintf("'%s' read as LoRA, the usual way to fine-tune an LLM on one GPU: say full to train every weight, qlora for 4-bit weights", ShowToken(p.looseTok)))
		}
	}
	if w.Method == memory.MethodLoRA && p.kv["precision"] != "" {
		if c, err := precisionEnum.parse("precision", p.kv["precision"]); err == nil && c == "nf4" {
			w.Method = memory.MethodQLoRA
			w.Assumptions = append(w.Assumptions, "LoRA on 4-bit NF4 weights is QLoRA: estimated as qlora")
		}
	}
	w.Assumptions = append(w.Assumptions, p.notes...)
	if w.Method == "" {
		switch {
		case p.hasAny(loraKeys) != "":
			w.Method = memory.MethodLoRA
			assume(DefaultMethod, "method not given: %s= implies lora", p.hasAny(loraKeys))
		case p.hasAny(trainingKeys) != "":
			k := p.hasAny(trainingKeys)
			return Query{}, Errorf(k+"="+p.kv[k], "%s= is a training setting: add a method (full, lora, qlora, dora or freeze)", k)
		case p.sharding != "":
			return Query{}, Errorf(p.shardingTok, "%s is a training setting: add a method (full, lora, qlora, dora or freeze)", p.sharding)
		default:
			w.Method = memory.MethodInference
			assume(DefaultMethod, "method not given: assuming inference")
		}
	}
	training := w.Method != memory.MethodInference
	if k := p.hasAny(trainingKeys); k != "" && !training {
		return Query{}, Errorf(k+"="+p.kv[k], "%s= is a training setting and does not apply to inference", k)
	}
	if p.sharding != "" && !training {
		return Query{}, Errorf(p.shardingTok, "%s shards training state and does not apply to inference (tp= or pp= split a served model)", p.sharding)
	}
	if k := p.hasAny(loraKeys); k != "" && !w.Method.IsAdapter() {
		return Query{}, Errorf(k+"="+p.kv[k], "%s= applies to lora, qlora and dora only, not %s", k, w.Method)
	}
	if v, ok := p.kv["kv"]; ok && training {
		return Query{}, Errorf("kv="+v, "kv= is the inference KV cache and does not apply to training")
	}

	if err := p.applySettings(&q, training, assume); err != nil {
		return Query{}, err
	}
	return q, nil
}

// hasAny returns the first of keys that was given, or "".
func (p *parsedQuery) hasAny(keys []string) string {
	for _, k := range keys {
		if _, ok := p.kv[k]; ok {
			return k
		}
	}
	return ""
}

// applySettings turns the key=value settings into workload fields, with
// defaults where a setting is missing.
func (p *parsedQuery) applySettings(q *Query, training bool, assume func(def, format string, args ...any)) error {
	w := &q.Workload
	gpu := q.GPU
	half := "bf16"
	if !gpu.BF16 {
		half = "fp16"
	}

	// framework first: its defaults decide precision, checkpointing and the loss.
	if v, ok := p.kv["framework"]; ok {
		c, err := frameworkEnum.parse("framework", v)
		if err != nil {
			return err
		}
		st := frameworkStacks[c]
		q.Framework = st.snippets
		w.Framework = st.memory
	}

	// precision
	if v, ok := p.kv["precision"]; ok {
		c, err := precisionEnum.parse("precision", v)
		if err != nil {
			return err
		}
		w.Precision = memory.Precision(c)
		if (c == "bf16" || c == "mixed-bf16") && !gpu.BF16 {
			w.Assumptions = append(w.Assumptions, fmt.Sprintf("%s has no bf16 support: estimated as asked, but use fp16 (mixed-fp16 with GradScaler) there", gpu.Name))
		}
	} else if w.Model.Quant != nil && w.Method != memory.MethodFull && w.Method != memory.MethodFreeze && w.Method != memory.MethodQLoRA {
		// A pre-quantised checkpoint: memory.Resolve takes its own storage
		// as the precision and says so.
		q.Defaults = append(q.Defaults, DefaultPrecision)
	} else {
		switch w.Method {
		case memory.MethodQLoRA:
			w.Precision = memory.PrecisionNF4
			assume(DefaultPrecision, "precision not given: assuming 4-bit NF4 base weights with %s compute (QLoRA)%s", half, noBF16Advice(gpu, true))
		case memory.MethodLoRA, memory.MethodDoRA, memory.MethodFreeze:
			w.Precision = memory.Precision(half)
			assume(DefaultPrecision, "precision not given: assuming frozen weights in %s, trained weights under %s autocast%s", half, half, noBF16Advice(gpu, true))
		case memory.MethodFull:
			if memory.FrameworkPureBF16(w.Framework) {
				w.Precision = memory.Precision(half)
				assume(DefaultPrecision, "precision not given: assuming pure %s (weights, gradients and optimizer states, no fp32 master copy), as %s trains%s", half, w.Framework, noBF16Advice(gpu, true))
				break
			}
			w.Precision = memory.Precision("mixed-" + half)
			assume(DefaultPrecision, "precision not given: assuming mixed-%s (AMP with fp32 master weights) for training%s", half, noBF16Advice(gpu, true))
		default:
			w.Precision = memory.Precision(half)
			assume(DefaultPrecision, "precision not given: assuming %s weights%s", half, noBF16Advice(gpu, false))
		}
	}

	if n := fp8ComputeNote(w, gpu); n != "" {
		w.Assumptions = append(w.Assumptions, n)
	}

	// optimizer
	if v, ok := p.kv["optim"]; ok {
		c, err := optimEnum.parse("optim", v)
		if err != nil {
			return err
		}
		w.Optimizer = memory.Optimizer(c)
	} else if training {
		w.Optimizer = memory.OptimizerAdamW
		assume(DefaultOptim, "optimizer not given: assuming AdamW")
	} else {
		w.Optimizer = memory.OptimizerNone
	}

	// batch and sequence length
	if v, ok := p.kv["bs"]; ok {
		n, err := parsePositiveInt("bs", v, maxBatch)
		if err != nil {
			return err
		}
		w.Batch = n
	} else if _, ok := p.kv["users"]; ok {
		w.Batch = 1
	} else {
		w.Batch = 1
		switch {
		case training:
			assume(DefaultBatch, "batch not given: assuming bs=1 per GPU")
		case p.servingEngineAsked():
			// A serving engine batches requests itself (up to max_num_seqs);
			// its reply says how many of max_model_len fit at once.
			q.Defaults = append(q.Defaults, DefaultBatch)
		default:
			assume(DefaultBatch, "batch not given: assuming bs=1 (one sequence at a time)")
		}
	}

	// gradient accumulation: memory depends on it only where FSDP
	// accumulates unsharded gradients between syncs (docs/memory-model.md §6.2).
	if v, ok := p.kv["ga"]; ok {
		n, err := parsePositiveInt("ga", v, maxBatch)
		if err != nil {
			return err
		}
		w.GradAccumSteps = n
	}

	// engine (before seq: the serving engines' default context differs)
	if v, ok := p.kv["engine"]; ok {
		c, err := engineEnum.parse("engine", v)
		if err != nil {
			return err
		}
		if training && serving.Engine(c).Serving() {
			return Errorf("engine="+v, "engine=%s serves models and does not train: drop it or use method inference", c)
		}
		w.Engine = c
	} else if k := p.hasAny(servingKeys); k != "" && !training {
		w.Engine = string(serving.EngineVLLM)
		assume(DefaultEngine, "engine not given: %s= is a serving setting, so assuming vLLM (engine=sglang, tgi, llama.cpp or ollama for the others)", k)
	} else if !training {
		w.Engine = "hf"
		assume(DefaultEngine, "engine not given: assuming Hugging Face transformers (engine=vllm, sglang, tgi, llama.cpp or ollama for a serving engine)")
	}
	engine := serving.Engine(w.Engine)
	if k := p.hasAny(servingKeys); k != "" && !engine.Serving() {
		if training {
			return Errorf(k+"="+p.kv[k], "%s= is a serving-engine setting and does not apply to training", k)
		}
		return Errorf(k+"="+p.kv[k], "%s= is a serving-engine setting: add engine=vllm (or sglang, tgi, llama.cpp, ollama)", k)
	}
	if engine == serving.EngineVLLM {
		q.Framework = fix.FrameworkVLLM
	}
	if err := p.applyServing(q, engine); err != nil {
		return err
	}

	if v, ok := p.kv["seq"]; ok {
		n, err := parseSeqLen(v)
		if err != nil {
			return err
		}
		w.SeqLen = n
	} else if engine.Serving() {
		seq, why := serving.DefaultContext(serving.Deployment{Engine: engine, Model: w.Model, GPU: q.GPU})
		w.SeqLen = seq
		assume(DefaultSeq, "sequence length not given: assuming seq=%d (%s)", seq, why)
	} else {
		seq, why := defaultSeq, ""
		if maxPos := w.Model.MaxPositionEmbeddings; maxPos > 0 && maxPos < defaultSeq {
			seq, why = maxPos, fmt.Sprintf(" (%s's maximum)", w.ModelName)
		}
		w.SeqLen = seq
		assume(DefaultSeq, "sequence length not given: assuming seq=%d%s", seq, why)
	}

	// Training techniques. Left unset, memory.Resolve fills the default
	// the tools have (QLoRA and the framework recipes checkpoint; several
	// GPUs of full fine-tuning shard with FSDP) and states it.
	if v, ok := p.kv["gc"]; ok {
		c, err := gcEnum.parse("gc", v)
		if err != nil {
			return err
		}
		w.Checkpointing = memory.Checkpointing(c)
		w.GradCheckpointing = w.Checkpointing != memory.CheckpointOff
	} else if training {
		q.Defaults = append(q.Defaults, DefaultGC)
	}
	if v, ok := p.kv["loss"]; ok {
		c, err := lossEnum.parse("loss", v)
		if err != nil {
			return err
		}
		w.Loss = memory.Loss(c)
	}
	for key, field := range map[string]*bool{"optim-in-bwd": &w.OptimizerInBackward, "act-offload": &w.ActivationOffload} {
		if v, ok := p.kv[key]; ok {
			c, err := boolEnum.parse(key, v)
			if err != nil {
				return err
			}
			*field = c == "on"
		}
	}
	if w.OptimizerInBackward && w.Optimizer == memory.OptimizerNone {
		return Errorf("optim-in-bwd="+p.kv["optim-in-bwd"], "optim-in-bwd=on fuses the optimizer step into backward, but optim=none has no step")
	}

	// attention
	if v, ok := p.kv["attn"]; ok {
		c, err := attnEnum.parse("attn", v)
		if err != nil {
			return err
		}
		w.Attention = memory.Attention(c)
	} else {
		// Left empty: memory.Resolve picks the kernel the model's code
		// usually runs (SDPA/flash, eager for BERT/GPT-2/T5-era models)
		// and states it as an assumption.
		q.Defaults = append(q.Defaults, DefaultAttn)
	}

	// KV cache
	if v, ok := p.kv["kv"]; ok {
		c, err := kvEnum.parse("kv", v)
		if err != nil {
			return err
		}
		w.KVCacheDtype = c
		if c == "int8" {
			w.Assumptions = append(w.Assumptions, "kv=int8: one byte per cached element (LMDeploy/TensorRT-LLM int8 KV; vLLM and SGLang offer fp8 at the same size)")
		}
	} else if !training {
		w.KVCacheDtype = "fp16"
		assume(DefaultKV, "KV cache dtype not given: assuming 16-bit")
	}

	if err := p.applyParallel(q, training, assume); err != nil {
		return err
	}

	// LoRA
	if v, ok := p.kv["rank"]; ok {
		n, err := parsePositiveInt("rank", v, maxLoRARank)
		if err != nil {
			return err
		}
		w.LoRARank = n
	}
	if v, ok := p.kv["targets"]; ok {
		c, err := targetsEnum.parse("targets", v)
		if err != nil {
			return err
		}
		w.LoRATargets = c
	}

	if v, ok := p.kv["tokens"]; ok {
		n, err := parseJobTokens(v)
		if err != nil {
			return err
		}
		w.Tokens = n
	}
	return nil
}

// servingEngineAsked reports whether the query names a serving engine or
// a serving setting (which implies vLLM).
func (p *parsedQuery) servingEngineAsked() bool {
	if v, ok := p.kv["engine"]; ok {
		c, err := engineEnum.parse("engine", v)
		return err == nil && serving.Engine(c).Serving()
	}
	return p.hasAny(servingKeys) != ""
}

// defaultInferenceSplit is how an engine uses N GPUs for one model when
// neither tp= nor pp= says: vLLM, SGLang and TGI split every layer
// (tensor parallel N, the standard single-node deployment); transformers'
// device_map="auto" and llama.cpp/Ollama split the layers between the
// GPUs, which then work one after another.
func defaultInferenceSplit(w *memory.Workload, engine serving.Engine, assume func(def, format string, args ...any)) error {
	n := w.GPUs
	if engine.TensorParallel() {
		if err := serving.CheckTP(engine, w.Model, n); err != nil {
			return &Error{Token: fmt.Sprintf("%d GPUs", n), Reason: fmt.Sprintf("tp not given, so tensor parallel across the %d GPUs: %s", n, err)}
		}
		w.TP = n
		assume(DefaultParallel, "tp not given: tensor parallel across the %d GPUs (%s's standard single-node deployment, --tensor-parallel-size %d)", n, engine.Label(), n)
		return nil
	}
	w.PP = n
	switch engine {
	case serving.EngineLlamaCpp, serving.EngineOllama:
		assume(DefaultParallel, "tp/pp not given: %s splits the layers over the %d GPUs (--split-mode layer)", engine.Label(), n)
	default:
		assume(DefaultParallel, "tp/pp not given: transformers' device_map=\"auto\" splits the layers over the %d GPUs, which run one after another", n)
	}
	return nil
}

// applyServing reads the serving engines' settings: gpu-util (vLLM's
// gpu_memory_utilization, SGLang's mem_fraction_static), max-num-seqs,
// max-num-batched-tokens and users (the concurrent sequences to serve).
func (p *parsedQuery) applyServing(q *Query, engine serving.Engine) error {
	w := &q.Workload
	if v, ok := p.kv["gpu-util"]; ok {
		u, err := parseFraction("gpu-util", v)
		if err != nil {
			return err
		}
		if engine != serving.EngineVLLM && engine != serving.EngineSGLang {
			return Errorf("gpu-util="+v, "gpu-util= is vLLM's gpu_memory_utilization (SGLang's mem_fraction_static); %s has no such setting", engine.Label())
		}
		w.GPUMemoryUtilization = u
	}
	for _, k := range []struct {
		key   string
		dst   *int
		limit int
	}{{"max-num-seqs", &w.MaxNumSeqs, serving.MaxSeqs}, {"max-num-batched-tokens", &w.MaxNumBatchedTokens, serving.MaxContext}, {"users", &w.Users, serving.MaxSeqs}} {
		v, ok := p.kv[k.key]
		if !ok {
			continue
		}
		n, err := parsePositiveInt(k.key, v, k.limit)
		if err != nil {
			return err
		}
		*k.dst = n
	}
	if v, ok := p.kv["engine-version"]; ok {
		if !validEngineVersion(v) {
			return Errorf("engine-version="+v, "engine-version must be a release such as 0.6.4 or v0, got '%s'", ShowToken(v))
		}
		w.EngineVersion = strings.ToLower(v)
	}
	if _, ok := p.kv["bs"]; ok && engine.Serving() && w.Users == 0 {
		q.Workload.Assumptions = append(q.Workload.Assumptions, fmt.Sprintf("bs=%s under %s reads as %s sequences served at once (users=%s)", p.kv["bs"], engine.Label(), p.kv["bs"], p.kv["bs"]))
	}
	return nil
}

// validEngineVersion accepts "v0", "v1" and releases such as 0.6.4 or v0.10.1.
func validEngineVersion(v string) bool {
	l := strings.TrimPrefix(strings.ToLower(v), "v")
	if l == "0" || l == "1" {
		return true
	}
	parts := strings.Split(l, ".")
	if len(parts) < 2 || len(parts) > 3 || len(v) > 16 {
		return false
	}
	for _, p := range parts {
		if !allDigits(p) {
			return false
		}
	}
	return true
}

// parseFraction reads a memory fraction: 0.9, .95 or 90%.
func parseFraction(key, v string) (float64, error) {
	s := strings.TrimSpace(v)
	pct := strings.HasSuffix(s, "%")
	s = strings.TrimSuffix(s, "%")
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(s, "eE+-") {
		return 0, Errorf(v, "%s must be a fraction of the GPU's memory such as 0.9 or 90%%, got '%s'", key, ShowToken(v))
	}
	if pct {
		f /= 100
	}
	if f <= 0 || f > 1 {
		return 0, Errorf(v, "%s=%s is out of range: a fraction above 0 and at most 1 (0.9 = 90%% of the GPU)", key, ShowToken(v))
	}
	return f, nil
}

// fp8ComputeNote says what FP8 weights do on a GPU without FP8 tensor
// cores (catalog.GPU.FP8): they are served weight-only (one byte per weight
// in memory, dequantised to 16-bit for each matmul, as vLLM's Marlin FP8
// kernels do), so the memory estimate holds but not FP8 speed.
func fp8ComputeNote(w *memory.Workload, gpu catalog.GPU) string {
	fp8 := w.Precision == memory.PrecisionFP8 || (w.Precision == "" && w.Model.Quant != nil && w.Model.Quant.Method == "fp8")
	if !fp8 || gpu.FP8 || gpu.Key == "" {
		return ""
	}
	return fmt.Sprintf("%s has no FP8 tensor cores: FP8 weights run weight-only there (1 byte per weight, 16-bit compute), so memory is as estimated but not FP8 speed", gpu.Name)
}

// noBF16Advice says what a GPU without bf16 (V100, T4) runs instead: fp16,
// and for training autocast with loss scaling, which fp16's narrow range
// needs (DESIGN.md §5).
func noBF16Advice(g catalog.GPU, training bool) string {
	if g.BF16 {
		return ""
	}
	if !training {
		return fmt.Sprintf(" (%s has no bf16)", g.Name)
	}
	return fmt.Sprintf(" (%s has no bf16: train under torch.amp.autocast(\"cuda\", dtype=torch.float16) with a torch.amp.GradScaler, or fp16=True in the HF Trainer, which adds the scaler)", g.Name)
}

// applyParallel reads gpus, tp, pp, zero and offload and checks they agree.
func (p *parsedQuery) applyParallel(q *Query, training bool, assume func(def, format string, args ...any)) error {
	w := &q.Workload
	w.TP, w.PP = 1, 1
	for _, k := range []string{"tp", "pp"} {
		v, ok := p.kv[k]
		if !ok {
			continue
		}
		n, err := parsePositiveInt(k, v, maxGPUs)
		if err != nil {
			return err
		}
		if k == "tp" {
			w.TP = n
		} else {
			w.PP = n
		}
	}
	model := w.TP * w.PP
	if model > maxGPUs {
		return Errorf("tp="+p.kv["tp"], "tp×pp = %d is more GPUs than supported (%d)", model, maxGPUs)
	}
	engine := serving.Engine(w.Engine)
	if err := serving.CheckTP(engine, w.Model, w.TP); err != nil {
		return &Error{Token: "tp=" + p.kv["tp"], Reason: err.Error()}
	}
	if heads := w.Model.NumAttentionHeads; !engine.TensorParallel() && w.TP > 1 && heads > 0 && heads%w.TP != 0 {
		return Errorf("tp="+p.kv["tp"], "tp=%d does not divide %s's %d attention heads", w.TP, w.ModelName, heads)
	}
	w.GPUs = max(1, model)
	if v, ok := p.kv["gpus"]; ok {
		n, err := parsePositiveInt("gpus", v, maxGPUs)
		if err != nil {
			return err
		}
		if p.gpuCount > 0 && p.gpuCount != n {
			return Errorf("gpus="+v, "gpus=%d contradicts '%s'", n, ShowToken(p.gpuTok))
		}
		w.GPUs = n
	} else if p.gpuCount > 0 {
		w.GPUs = p.gpuCount
	}
	if w.GPUs%model != 0 {
		return Errorf("gpus="+strconv.Itoa(w.GPUs), "gpus=%d is not a multiple of tp×pp = %d", w.GPUs, model)
	}
	if !training && model == 1 && w.GPUs > 1 {
		if err := defaultInferenceSplit(w, engine, assume); err != nil {
			return err
		}
	}

	w.Offload = memory.OffloadNone
	if v, ok := p.kv["offload"]; ok {
		c, err := offloadEnum.parse("offload", v)
		if err != nil {
			return err
		}
		w.Offload = memory.Offload(c)
	}
	w.Sharding = p.sharding
	zeroGiven := false
	if v, ok := p.kv["zero"]; ok {
		if len(v) != 1 || v[0] < '0' || v[0] > '3' {
			return Errorf("zero="+v, "zero must be a ZeRO stage 0, 1, 2 or 3, got '%s'", ShowToken(v))
		}
		w.ZeroStage = int(v[0] - '0')
		zeroGiven = true
	}
	switch w.Sharding {
	case memory.ShardingDDP:
		if w.ZeroStage > 0 {
			return Errorf(p.shardingTok, "ddp keeps every model state on every GPU, but zero=%d shards them: give one of the two", w.ZeroStage)
		}
		if w.Offload != memory.OffloadNone {
			return Errorf("offload="+p.kv["offload"], "offload= needs ZeRO (zero=) or fsdp, not ddp")
		}
		return nil
	case memory.ShardingFSDP:
		switch {
		case zeroGiven && w.ZeroStage == 1:
			return Errorf("zero=1", "FSDP has no ZeRO-1 equivalent: fsdp means zero=3 (FULL_SHARD), fsdp zero=2 is SHARD_GRAD_OP")
		case !zeroGiven || w.ZeroStage == 0:
			w.ZeroStage = 3
		}
		if w.Offload != memory.OffloadNone && w.ZeroStage != 3 {
			return Errorf("offload="+p.kv["offload"], "FSDP's CPU offload runs with full sharding (fsdp, zero=3), not zero=%d", w.ZeroStage)
		}
		return nil
	}
	if !zeroGiven && training {
		switch w.Offload {
		case memory.OffloadParam:
			w.ZeroStage = 3
			assume(DefaultParallel, "zero not given: offload=param needs ZeRO-3, assuming DeepSpeed zero=3 (say fsdp for FSDP's CPU offload)")
		case memory.OffloadOptimizer:
			w.ZeroStage = 2
			assume(DefaultParallel, "zero not given: optimizer offload is ZeRO-Offload, assuming DeepSpeed zero=2")
		default:
			q.Defaults = append(q.Defaults, DefaultParallel)
		}
	}
	if w.ZeroStage > 0 {
		w.Sharding = memory.ShardingDeepSpeed
	}
	switch {
	case w.Offload == memory.OffloadParam && w.ZeroStage != 3:
		return Errorf("offload=param", "offload=param needs zero=3 (or fsdp), got zero=%d", w.ZeroStage)
	case w.Offload == memory.OffloadOptimizer && w.ZeroStage == 0:
		return Errorf("offload=optimizer", "offload=optimizer needs a ZeRO stage (zero=1, 2 or 3) or fsdp, got zero=0")
	}
	return nil
}
