package query

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/vrambot/vrambot/advisor/arch"
)

// A setting's value is read by its domain: a closed vocabulary (an enum)
// or a number with its limit. Each domain validates with a message meant
// for the user ("unknown kv 'fp9' — did you mean 'fp8'?"), says whether a
// word after the setting's name reads as its value ("seq 8192" joins,
// "which gpu fits" does not), and describes itself for the grammar table.

// value is a setting's value once read: its canonical spelling, and the
// number for a numeric domain.
type value struct {
	canon string
	n     int64
	f     float64
}

// Domain is the set of values a setting takes.
type Domain interface {
	// read validates raw (as typed) and returns its value.
	read(key, raw string) (value, error)
	// plausible reports whether raw reads as one of its values.
	plausible(raw string) bool
	// Describe is the domain in a few words, for the grammar table.
	Describe() string
}

// enum is a closed vocabulary: accepted spelling → canonical value, with
// the canonical values in display order.
type enum struct {
	values map[string]string
	canon  []string
	// notes say what a canonical value means, for the grammar table.
	notes map[string]string
}

// normWord is a word as vocabularies key it: lower case, _ read as -.
func normWord(v string) string { return strings.ReplaceAll(strings.ToLower(v), "_", "-") }

// parse looks v up; an unknown value is an error naming the key, the
// value and the closest valid spelling.
func (e enum) parse(key, v string) (string, error) {
	norm := normWord(v)
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

func (e enum) read(key, raw string) (value, error) {
	c, err := e.parse(key, raw)
	return value{canon: c}, err
}

func (e enum) plausible(raw string) bool { _, ok := e.values[normWord(raw)]; return ok }

func (e enum) Describe() string {
	out := make([]string, len(e.canon))
	for i, c := range e.canon {
		out[i] = "`" + c + "`"
		if n := e.notes[c]; n != "" {
			out[i] += " (" + n + ")"
		}
	}
	return strings.Join(out, ", ")
}

// has reports whether v is one of the vocabulary's spellings.
func (e enum) has(v string) bool { _, ok := e.values[normWord(v)]; return ok }

// count is a positive integer no larger than max.
type count struct{ max int }

func (c count) read(key, raw string) (value, error) {
	n, err := parsePositiveInt(key, raw, c.max)
	return value{canon: raw, n: int64(n)}, err
}

func (c count) plausible(raw string) bool { return allDigits(raw) }

func (c count) Describe() string { return fmt.Sprintf("1 to %d", c.max) }

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

// seqLen is a sequence length: "4096", or "4k"/"128k"/"1M" in units of
// 1024 and 1024² as context lengths are quoted (Llama 4's "10M context").
type seqLen struct{}

func (seqLen) read(_, raw string) (value, error) {
	n, err := parseSeqLen(raw)
	return value{canon: strings.ToLower(raw), n: int64(n)}, err
}

func (seqLen) plausible(raw string) bool { _, err := parseSeqLen(raw); return err == nil }

func (seqLen) Describe() string {
	return fmt.Sprintf("tokens, `4096`, `8k`, `1M` (at most %d)", maxSeq)
}

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

// jobTokens is a job size in tokens: "2000000000", "1e9", "2B", "500M", "1.5T".
type jobTokens struct{}

func (jobTokens) read(_, raw string) (value, error) {
	n, err := parseJobTokens(raw)
	return value{canon: strings.ToLower(raw), n: n}, err
}

func (jobTokens) plausible(raw string) bool { _, err := parseJobTokens(raw); return err == nil }

func (jobTokens) Describe() string { return "tokens to train on, `750k`, `500M`, `2B`, `1e9`" }

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

// fraction is a share of the GPU's memory: 0.9, .95 or 90%.
type fraction struct{}

func (fraction) read(key, raw string) (value, error) {
	f, err := parseFraction(key, raw)
	return value{canon: strings.ToLower(raw), f: f}, err
}

func (fraction) plausible(raw string) bool { _, err := parseFraction("", raw); return err == nil }

func (fraction) Describe() string { return "a share of the GPU, `0.9` or `90%`" }

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

// zeroStage is a DeepSpeed ZeRO stage, 0 to 3.
type zeroStage struct{}

func (zeroStage) read(_, raw string) (value, error) {
	if !(zeroStage{}).plausible(raw) {
		return value{}, Errorf("zero="+raw, "zero must be a ZeRO stage 0, 1, 2 or 3, got '%s'", ShowToken(raw))
	}
	return value{canon: raw, n: int64(raw[0] - '0')}, nil
}

func (zeroStage) plausible(raw string) bool { return len(raw) == 1 && raw[0] >= '0' && raw[0] <= '3' }

func (zeroStage) Describe() string { return "`0`, `1`, `2`, `3`" }

// release is a serving engine's release: "v0", "v1", 0.6.4, v0.10.1.
type release struct{}

func (release) read(_, raw string) (value, error) {
	if !validEngineVersion(raw) {
		return value{}, Errorf("engine-version="+raw, "engine-version must be a release such as 0.6.4 or v0, got '%s'", ShowToken(raw))
	}
	return value{canon: strings.ToLower(raw)}, nil
}

func (release) plausible(raw string) bool { return validEngineVersion(raw) }

func (release) Describe() string { return "a release, `0.6.4`, `v0`" }

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

// word is a setting read by the grammar's own word rules (the model, the
// method, the GPU): key=value hands the value to the word reader.
type word struct{ describe string }

func (word) read(_, raw string) (value, error) { return value{canon: raw}, nil }
func (word) plausible(string) bool             { return false }
func (w word) Describe() string                { return w.describe }

// The vocabularies.
var (
	precisionEnum = enum{
		values: map[string]string{
			"fp32": "fp32", "float32": "fp32", "fp16": "fp16", "float16": "fp16", "half": "fp16",
			"bf16": "bf16", "bfloat16": "bf16", "mixed-bf16": "mixed-bf16", "amp-bf16": "mixed-bf16", "bf16-mixed": "mixed-bf16",
			"mixed-fp16": "mixed-fp16", "amp-fp16": "mixed-fp16", "16-mixed": "mixed-fp16", "fp16-mixed": "mixed-fp16",
			"int8": "int8", "8bit": "int8", "8-bit": "int8", "nf4": "nf4", "4bit": "nf4", "4-bit": "nf4",
			// bitsandbytes as people name it: 4-bit (NF4) unless 8-bit is said.
			"bnb": "nf4", "bitsandbytes": "nf4", "bnb-4bit": "nf4", "bnb-nf4": "nf4", "bnb-8bit": "int8", "bnb-int8": "int8", "llm-int8": "int8",
			// Pre-quantised checkpoints (docs/contracts.md §2). W8A8
			// INT8 and 8-bit GPTQ store a byte per weight, as int8 does.
			"fp8": "fp8", "float8": "fp8", "fp8-e4m3": "fp8", "w8a8-fp8": "fp8", "fp8-dynamic": "fp8", "fp8-static": "fp8", "fp8-block": "fp8",
			"w8a8": "int8", "w8a8-int8": "int8", "int8-w8a8": "int8", "gptq-int8": "int8", "gptq-8bit": "int8",
			"int4": "int4", "w4a16": "int4", "awq": "awq", "awq-int4": "awq", "awq-4bit": "awq", "gptq": "gptq", "gptq-int4": "gptq", "gptq-4bit": "gptq",
			"mxfp4": "mxfp4", "nvfp4": "nvfp4",
		},
		canon: []string{"fp32", "fp16", "bf16", "mixed-bf16", "mixed-fp16", "int8", "nf4", "fp8", "int4", "awq", "gptq", "mxfp4", "nvfp4", "q4_k_m", "q8_0"},
		notes: map[string]string{
			"bf16": "pure 16-bit, optimizer states too", "mixed-bf16": "AMP with fp32 master weights", "mixed-fp16": "AMP, fp16",
			"int8": "bitsandbytes 8-bit, W8A8, 8-bit GPTQ", "nf4": "bitsandbytes 4-bit: `bnb`, `4bit`", "fp8": "FP8 checkpoint weights",
			"int4": "`w4a16`", "q4_k_m": "and every other GGUF type",
		},
	}
	optimEnum = enum{
		values: map[string]string{
			"adamw": "adamw", "adam": "adamw", "adamw-torch": "adamw", "adamw-torch-fused": "adamw",
			"adamw-8bit": "adamw-8bit", "adamw8bit": "adamw-8bit", "adam8bit": "adamw-8bit", "adamw-bnb-8bit": "adamw-8bit", "8bit-adam": "adamw-8bit",
			"paged-adamw-8bit": "paged-adamw-8bit", "paged-adamw8bit": "paged-adamw-8bit",
			// torchao's low-bit AdamW (TrainingArguments adamw_torch_8bit /
			// adamw_torch_4bit; AdamWFp8 has no TrainingArguments name).
			"adamw-torch-8bit": "adamw-8bit", "adamw-torchao-8bit": "adamw-8bit",
			"adamw-4bit": "adamw-4bit", "adamw4bit": "adamw-4bit", "adamw-torch-4bit": "adamw-4bit", "adamw-torchao-4bit": "adamw-4bit", "4bit-adam": "adamw-4bit",
			"adamw-fp8": "adamw-fp8", "adamwfp8": "adamw-fp8", "adamw-torch-fp8": "adamw-fp8", "adamw-torchao-fp8": "adamw-fp8",
			// Paged 32-bit AdamW keeps AdamW's 8 bytes per parameter.
			"paged-adamw-32bit": "adamw", "adamw-hf": "adamw", "adamw-apex-fused": "adamw",
			"adafactor": "adafactor", "sgd": "sgd", "none": "none",
		},
		canon: []string{"adamw", "adamw-8bit", "paged-adamw-8bit", "adamw-4bit", "adamw-fp8", "adafactor", "sgd", "none"},
	}
	boolEnum = enum{
		values: map[string]string{"on": "on", "true": "on", "yes": "on", "1": "on", "off": "off", "false": "off", "no": "off", "0": "off"},
		canon:  []string{"on", "off"},
	}
	// gcEnum is checkpointing: on (full), off, selective (torchtitan's
	// per-op policy), or Unsloth's offloaded variant.
	gcEnum = enum{
		values: map[string]string{
			"on": "full", "true": "full", "yes": "full", "1": "full", "full": "full",
			"off": "off", "false": "off", "no": "off", "0": "off", "none": "off",
			"selective": "selective", "sac": "selective", "op": "selective", "selective-op": "selective",
			"offloaded": "offloaded", "offload": "offloaded", "unsloth": "offloaded", "cpu": "offloaded",
		},
		canon: []string{"on", "off", "selective", "offloaded"},
		notes: map[string]string{"on": "full", "selective": "torchtitan's per-op policy", "offloaded": "Unsloth's"},
	}
	lossEnum = enum{
		values: map[string]string{
			"chunked": "chunked", "fused": "chunked", "liger": "chunked", "chunked-ce": "chunked", "chunked-nll": "chunked", "fused-linear-ce": "chunked",
			"standard": "standard", "full": "standard", "default": "standard", "nll": "standard",
		},
		canon: []string{"chunked", "standard"},
	}
	offloadEnum = enum{
		values: map[string]string{"none": "none", "off": "none", "optimizer": "optimizer", "optim": "optimizer", "cpu": "optimizer", "param": "param", "params": "param", "parameters": "param"},
		canon:  []string{"none", "optimizer", "param"},
		notes:  map[string]string{"optimizer": "ZeRO-Offload", "param": "ZeRO-Infinity; under `fsdp` FSDP's CPU offload"},
	}
	targetsEnum = enum{
		values: map[string]string{"qv": "qv", "q,v": "qv", "attn": "attn", "attention": "attn", "qkvo": "attn", "all": "all", "all-linear": "all"},
		canon:  []string{"qv", "attn", "all"},
		notes:  map[string]string{"attn": "q, k, v, o", "all": "every linear layer"},
	}
	attnEnum = enum{
		values: map[string]string{"flash": "flash", "sdpa": "flash", "flash2": "flash", "fa2": "flash", "flash-attention-2": "flash", "eager": "eager"},
		canon:  []string{"flash", "eager"},
		notes:  map[string]string{"flash": "SDPA, FlashAttention"},
	}
	kvEnum = enum{
		values: map[string]string{"fp16": "fp16", "bf16": "fp16", "auto": "fp16", "fp8": "fp8", "fp8-e4m3": "fp8", "fp8-e5m2": "fp8", "int8": "int8"},
		canon:  []string{"fp16", "fp8", "int8"},
	}
	engineEnum = enum{
		values: map[string]string{
			"hf": "hf", "transformers": "hf", "huggingface": "hf", "vllm": "vllm",
			"sglang": "sglang", "tgi": "tgi", "text-generation-inference": "tgi",
			"llama.cpp": "llama.cpp", "llamacpp": "llama.cpp", "llama-cpp": "llama.cpp", "llama-server": "llama.cpp", "ollama": "ollama",
		},
		canon: []string{"hf", "vllm", "sglang", "tgi", "llama.cpp", "ollama"},
	}
	// shardingEnum is how data-parallel GPUs hold the model states
	// (docs/memory-model.md §6): FSDP full sharding (ZeRO-3 equivalent)
	// or plain DistributedDataParallel.
	shardingEnum = enum{
		values: map[string]string{
			"fsdp": "fsdp", "fsdp2": "fsdp", "fsdp1": "fsdp", "fully-shard": "fsdp",
			"ddp": "ddp", "data-parallel": "ddp",
		},
		canon: []string{"fsdp", "ddp"},
	}
	// frameworkEnum names the stack: its canonical values are the query
	// words; frameworkStacks maps them to the snippets' stack and the
	// memory defaults' framework.
	frameworkEnum = enum{
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

// GGUF types are precisions too ("q4_k_m" typed as q4_k_m or q4-k-m).
func init() {
	for _, t := range arch.GGUFTypes() {
		precisionEnum.values[strings.ReplaceAll(t, "_", "-")] = t
	}
}

// ggufBareNames are the GGUF types as a bare word may spell them (q4_k_m,
// q4-k-m).
func ggufBareNames() []string {
	var out []string
	for _, t := range arch.GGUFTypes() {
		out = append(out, t, strings.ReplaceAll(t, "_", "-"))
	}
	return out
}

// spellings are every spelling of e, sorted (a setting whose bare values
// all ask for their key).
func (e enum) spellings() []string {
	out := make([]string, 0, len(e.values))
	for k := range e.values {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
