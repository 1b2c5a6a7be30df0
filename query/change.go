package query

import (
	"slices"
	"strings"

	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/advisor/memory"
	"github.com/vrambot/vrambot/advisor/serving"
)

// A reply's buttons run the query again with a change: a fix's settings
// ("Apply gc=on"), another method ("Try qlora"), more GPUs ("Try tp=4
// gpus=4"). This file writes a workload back as the grammar's settings
// and applies a change to the query as it was read.

// SettingOf is w's value of a query setting, as the grammar writes it
// (the table's Of), or "".
func SettingOf(w memory.Workload, key string) string {
	if s, ok := settingByKey[key]; ok && s.Of != nil {
		return s.Of(w)
	}
	return ""
}

// Change is a set of query settings, as a button applies them.
type Change []KeyValue

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

// Merge is c with d's settings added, d's value winning for a key both
// set.
func (c Change) Merge(d Change) Change {
	out := slices.Clone(c)
	for _, s := range d {
		if i := slices.IndexFunc(out, func(o KeyValue) bool { return o.Key == s.Key }); i >= 0 {
			out[i] = s
			continue
		}
		out = append(out, s)
	}
	return out
}

// applied is the query with the change: the method's own precision when
// the method changes.
func (c Change) applied(base canonQuery) canonQuery {
	q := base
	for _, s := range c {
		if s.Key == "method" {
			q.kv = slices.DeleteFunc(slices.Clone(q.kv), func(s KeyValue) bool { return s.Key == "precision" })
		}
		q = q.with(s.Key, s.Value)
	}
	return q
}

// FixChange is what fix f changes in the query, with values from the
// workload after the plan; nil when the grammar cannot say it (a fix in
// the user's code, a bigger GPU).
func FixChange(f fix.Fix, base, final memory.Workload) Change {
	keys := FixSettings(f.ID)
	var c Change
	for _, k := range keys {
		if v := SettingOf(final, k); v != "" && v != SettingOf(base, k) {
			c = append(c, KeyValue{k, v})
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
			c = append(c, KeyValue{k, v})
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

// ApplyExplicit is Apply, made to say every setting in which the
// workload the query with c would give differs from want (a setting's
// value as the grammar writes it): a method that c changes has defaults
// of its own (LoRA's rank and targets, its sharding on several GPUs)
// that need not be what the fix assumed.
func (q Query) ApplyExplicit(c Change, want func(key string) string) (string, bool) {
	text, ok := q.Apply(c)
	if !ok {
		return "", false
	}
	p, err := parseTokens(tokenizeQuery(text), nil)
	if err != nil || p.model == nil {
		return text, true // a Hub model: its query cannot be read offline
	}
	got, err := p.query()
	if err != nil {
		return text, true
	}
	resolved := memory.Resolve(got.Workload)
	more := c
	for _, s := range Settings {
		if s.Of == nil || s.Key == "gpu" {
			continue
		}
		if s.Key == "zero" && want("sharding") == string(memory.ShardingFSDP) && want("zero") == "3" {
			continue // fsdp is zero=3 (FULL_SHARD)
		}
		if w := want(s.Key); w != "" && w != s.Of(resolved) {
			more = more.Merge(Change{{Key: s.Key, Value: w}})
		}
	}
	if len(more) == len(c) {
		return text, true
	}
	if explicit, ok := q.Apply(more); ok {
		return explicit, true
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
