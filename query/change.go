package query

import (
	"slices"
	"strconv"
	"strings"

	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/advisor/memory"
	"github.com/vrambot/vrambot/advisor/serving"
)

// A reply's buttons run the query again with a change: a fix's settings
// ("Apply gc=on"), another method ("Try qlora"), more GPUs ("Try tp=4
// gpus=4"). This file writes a workload back as the grammar's settings
// and applies a change to the query as it was read.

// fixSettings are the query settings each fix of the catalogue changes,
// so that its button can run the query again with it (the values come
// from the plan's final workload).
var fixSettings = map[string][]string{
	fix.GradCheckpointing: {"gc"}, fix.FlashAttention: {"attn"}, fix.MixedPrecision: {"precision"},
	fix.HalfPrecision: {"precision"}, fix.Int8Weights: {"precision"}, fix.GradAccum: {"bs", "ga"},
	fix.SmallerBatch: {"bs"}, fix.LoRA: {"method"}, fix.QLoRA: {"method"}, fix.Optim8bit: {"optim"},
	fix.Zero2: {"zero", "gpus"}, fix.Zero3: {"zero", "gpus"}, fix.ZeroOffload: {"offload", "zero"},
	fix.ParamOffload: {"offload", "zero"}, fix.TensorParallel: {"tp", "gpus"}, fix.MaxModelLen: {"seq"},
	fix.FP8KVCache: {"kv"}, fix.ChunkedLoss: {"loss"}, fix.OptimizerInBackward: {"optim-in-bwd"},
	fix.ActivationOffload: {"act-offload"}, fix.NF4Weights: {"precision"},
}

// SettingOf is w's value of a query setting, as the grammar writes it.
func SettingOf(w memory.Workload, key string) string {
	switch key {
	case "method":
		return string(w.Method)
	case "precision":
		return string(w.Precision)
	case "optim":
		return string(w.Optimizer)
	case "bs":
		return strconv.Itoa(w.Batch)
	case "seq":
		return strconv.Itoa(w.SeqLen)
	case "gc":
		switch {
		case w.Checkpointing == memory.CheckpointSelective || w.Checkpointing == memory.CheckpointOffloaded:
			return string(w.Checkpointing)
		case w.GradCheckpointing:
			return "on"
		}
		return "off"
	case "attn":
		return string(w.Attention)
	case "kv":
		return w.KVCacheDtype
	case "engine":
		return w.Engine
	case "zero":
		return strconv.Itoa(w.ZeroStage)
	case "offload":
		return string(w.Offload)
	case "gpus":
		return strconv.Itoa(max(1, w.GPUs))
	case "tp":
		return strconv.Itoa(max(1, w.TP))
	case "pp":
		return strconv.Itoa(max(1, w.PP))
	case "loss":
		if w.ChunkedLoss || w.Loss == memory.LossChunked {
			return "chunked"
		}
		return "standard"
	case "optim-in-bwd":
		return onOff(w.OptimizerInBackward)
	case "act-offload":
		return onOff(w.ActivationOffload)
	case "ga":
		return strconv.Itoa(max(1, w.GradAccumSteps))
	case "rank":
		return strconv.Itoa(w.LoRARank)
	case "targets":
		return w.LoRATargets
	}
	return ""
}

// Change is a set of query settings, as a button applies them.
type Change []Setting

// Label is the change as a button says it: "Apply gc=on", "Try qlora",
// "Try tp=4 gpus=4".
func (c Change) Label() string {
	verb := "Apply"
	var words []string
	for _, s := range c {
		switch s.Key {
		case "method":
			verb = "Try"
			words = append(words, s.Value)
			continue
		case "gpus", "tp", "pp", "zero", "offload":
			verb = "Try"
		}
		words = append(words, s.Key+"="+s.Value)
	}
	return verb + " " + strings.Join(words, " ")
}

// applied is the query with the change: the method's own precision when
// the method changes.
func (c Change) applied(base canonQuery) canonQuery {
	q := base
	for _, s := range c {
		if s.Key == "method" {
			q.kv = slices.DeleteFunc(slices.Clone(q.kv), func(s Setting) bool { return s.Key == "precision" })
		}
		q = q.with(s.Key, s.Value)
	}
	return q
}

// FixChange is what fix f changes in the query, with values from the
// workload after the plan; nil when the grammar cannot say it (a fix in
// the user's code, a bigger GPU).
func FixChange(f fix.Fix, base, final memory.Workload) Change {
	keys, ok := fixSettings[f.ID]
	if !ok {
		return nil
	}
	var c Change
	for _, k := range keys {
		if v := SettingOf(final, k); v != "" && v != SettingOf(base, k) {
			c = append(c, Setting{k, v})
		}
	}
	return c
}

// WorkloadChange is what differs between two workloads in the given
// settings, as the grammar writes it.
func WorkloadChange(base, after memory.Workload, keys ...string) Change {
	var c Change
	for _, k := range keys {
		if v := SettingOf(after, k); v != "" && v != SettingOf(base, k) {
			c = append(c, Setting{k, v})
		}
	}
	return c
}

// Words is the change as settings: "zero=3 gpus=16 gc=on".
func (c Change) Words() string {
	var out []string
	for _, s := range c {
		out = append(out, s.Key+"="+s.Value)
	}
	return strings.Join(out, " ")
}

// Apply is the query text with c applied, for a button that runs it
// again; ok is false when the query cannot carry it (a config.json given
// beside it), nothing would change, or the result would not parse.
func (q Query) Apply(c Change) (text string, ok bool) {
	if len(c) == 0 || !q.canon.Runnable() {
		return "", false
	}
	text = c.applied(q.canon).String()
	if text == q.canon.String() {
		return "", false // nothing left to change
	}
	p, err := parseTokens(tokenizeQuery(text), nil)
	if err != nil {
		return "", false
	}
	if p.model != nil { // a catalog model: the whole query can be checked
		if _, err := p.query(); err != nil {
			return "", false
		}
	}
	return text, true
}

// AssumedSettings are the defaults the reading filled in, written as the
// settings that would change them: "bs=1 seq=2048 optim=adamw gc=off".
func (q Query) AssumedSettings(w memory.Workload) []string {
	given := map[string]bool{}
	for _, s := range q.canon.kv {
		given[s.Key] = true
	}
	training := w.Method != memory.MethodInference
	served := serving.Engine(w.Engine).Serving()
	lora := w.Method == memory.MethodLoRA || w.Method == memory.MethodQLoRA
	var out []string
	if slices.Contains(q.Defaults, DefaultGPU) {
		out = append(out, "GPU "+q.GPU.Name)
	}
	if slices.Contains(q.Defaults, DefaultMethod) {
		out = append(out, string(w.Method))
	}
	keys := []struct {
		key  string
		when bool
	}{
		{"precision", true}, {"optim", training}, {"bs", !served}, {"seq", true}, {"gc", training},
		{"attn", true}, {"kv", !training}, {"engine", !training}, {"rank", lora}, {"targets", lora},
	}
	for _, k := range keys {
		if !k.when || given[k.key] {
			continue
		}
		if v := SettingOf(w, k.key); v != "" && v != "0" {
			out = append(out, k.key+"="+v)
		}
	}
	return out
}

// ReadingLine is "Read as `llama-3-8b lora 4090` (left out: …)" when the
// query was read other than as typed (a question, other spellings), else
// "".
func (q Query) ReadingLine(text string) string {
	if !q.Natural && sameReading(text, q.ReadAs) {
		return ""
	}
	line := "Read as `" + q.ReadAs + "`"
	if len(q.Ignored) > 0 {
		line += " (left out: " + strings.Join(q.Ignored, ", ") + ")"
	}
	return line
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// CanonicalValue is v in the canonical spelling of key's vocabulary
// ("bfloat16" → "bf16"); ok is false for a key without one or a value
// outside it.
func CanonicalValue(key, v string) (string, bool) {
	for _, e := range keyEnums() {
		if e.key == key {
			c, err := e.enum.parse(key, v)
			return c, err == nil
		}
	}
	return "", false
}
