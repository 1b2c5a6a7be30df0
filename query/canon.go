package query

import (
	"slices"
	"strconv"
	"strings"

	"github.com/vrambot/vrambot/models"
)

// canonQuery is a parsed query written back in the grammar's own words:
// the reading a reply shows ("read as: llama-3-8b lora 4090") and the base
// that a reply's buttons change ("Apply gc=on" runs it again with gc=on).
// Settings that were defaulted are not in it, so a re-run defaults them
// (and says so) again.
type canonQuery struct {
	model    string // "" for a config.json given beside the query
	method   string
	sharding string // fsdp, ddp
	count    int    // GPU count written before the GPU ("2x 4090"); 0: none
	gpu      string // a catalog alias or a budget ("24gb")
	kv       []KeyValue
}

// KeyValue is one key=value of a query, as the grammar writes it.
type KeyValue struct{ Key, Value string }

// canonical writes p back as a canonQuery.
func (p *parsedQuery) canonical() canonQuery {
	var c canonQuery
	switch {
	case p.resolved != nil && p.resolved.Source == models.SourceFile:
		// a config.json: the query text cannot carry it
	case p.resolved != nil && p.resolved.RepoID != "":
		c.model = p.resolved.RepoID
	case p.modelRef != "":
		c.model = models.RepoRef(modelSpelling(p.modelRef))
	case p.modelID != "":
		c.model = p.modelID
	case p.model != nil && p.model.Scaled:
		c.model = strings.ToLower(strings.ReplaceAll(p.modelToken, " ", ""))
	case p.model != nil && len(p.model.Aliases) > 0:
		c.model = p.model.Aliases[0]
	case p.model != nil:
		c.model = strings.ToLower(p.model.Name)
	}
	switch {
	case p.method != "":
		c.method = string(p.method)
	case p.loose != "":
		c.method = string(p.loose)
	}
	c.sharding = string(p.sharding)
	if p.gpu != nil {
		switch {
		case p.budget:
			c.gpu = strings.ToLower(strings.ReplaceAll(p.gpuTok, " ", ""))
		case len(p.gpu.Aliases) > 0:
			c.gpu = p.gpu.Aliases[0]
		default:
			c.gpu = strings.ToLower(p.gpu.Key)
		}
		c.count = p.gpuCount
	}
	for _, k := range queryKeys {
		v, ok := p.kv[k]
		if !ok {
			continue
		}
		c.kv = append(c.kv, KeyValue{k, canonicalValue(k, v)})
	}
	return c
}

// canonicalValue is a setting's value in its canonical spelling where the
// key has a vocabulary, else as typed (lower case).
func canonicalValue(key, v string) string {
	if c, ok := CanonicalValue(key, v); ok {
		return c
	}
	return strings.ToLower(v)
}

// CanonicalValue is v in the canonical spelling of key's vocabulary
// ("bfloat16" → "bf16", gc's "true" → "on"); ok is false for a key
// without one or a value outside it.
func CanonicalValue(key, v string) (string, bool) {
	s, ok := settingByKey[key]
	if !ok {
		return "", false
	}
	e, ok := s.Value.(enum)
	if !ok {
		return "", false
	}
	c, err := e.parse(key, v)
	if err != nil {
		return "", false
	}
	if key == "gc" && c == "full" {
		return "on", true // as people write it
	}
	return c, true
}

// String is the query text.
func (c canonQuery) String() string {
	var parts []string
	add := func(s string) {
		if s != "" {
			parts = append(parts, s)
		}
	}
	add(c.model)
	add(c.method)
	add(c.sharding)
	if c.gpu != "" {
		if c.count > 1 {
			add(strconv.Itoa(c.count) + "x")
		}
		add(c.gpu)
	}
	for _, s := range c.kv {
		add(s.Key + "=" + s.Value)
	}
	return strings.Join(parts, " ")
}

// Runnable reports whether the text names the model (a config.json given
// beside the query does not travel with it).
func (c canonQuery) Runnable() bool { return c.model != "" }

// with returns c with key set to value: "method" sets the method, "gpus"
// the GPU count (written before the GPU when one is named), any other key
// its setting, replacing a value given before.
func (c canonQuery) with(key, value string) canonQuery {
	out := c
	out.kv = slices.Clone(c.kv)
	switch key {
	case "method":
		out.method = value
		return out
	case "sharding":
		out.sharding = value
		return out
	case "gpu":
		out.gpu, out.count = value, 0
		out.kv = slices.DeleteFunc(out.kv, func(s KeyValue) bool { return s.Key == "gpus" })
		return out
	case "gpus":
		if n, err := strconv.Atoi(value); err == nil && out.gpu != "" {
			out.count = n
			out.kv = slices.DeleteFunc(out.kv, func(s KeyValue) bool { return s.Key == "gpus" })
			return out
		}
	}
	for i, s := range out.kv {
		if s.Key == key {
			out.kv[i].Value = value
			return out
		}
	}
	out.kv = append(out.kv, KeyValue{key, value})
	slices.SortStableFunc(out.kv, func(a, b KeyValue) int {
		return slices.Index(queryKeys, a.Key) - slices.Index(queryKeys, b.Key)
	})
	return out
}

// sameReading reports whether text, as typed, is already the reading:
// the same words in any order and case.
func sameReading(text, reading string) bool {
	a := strings.Fields(strings.ToLower(text))
	b := strings.Fields(strings.ToLower(reading))
	if len(a) > 0 && (a[0] == "vram" || a[0] == "/vram") {
		a = a[1:]
	}
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// Words is a query given by its parts, for a reply that builds one (an
// OOM paste's "Estimate this workload"): a model, a method, a GPU (a
// catalog alias, or a budget: BudgetWord), a count of it and settings.
type Words struct {
	Model, Method, GPU string
	Count              int
	// Sharding is fsdp or ddp, the bare word that names it ("" for none).
	Sharding string
	Settings []KeyValue
}

// Text is the query the words make, in the grammar's own order; ok is
// false when they name no model, are too long or do not read as a query.
func (w Words) Text() (text string, ok bool) {
	c := canonQuery{model: w.Model, method: w.Method, sharding: w.Sharding, gpu: w.GPU, count: w.Count, kv: w.Settings}
	text = c.String()
	if c.model == "" || len(text) > MaxBytes {
		return "", false
	}
	if _, err := parseTokens(tokenizeQuery(text), nil); err != nil {
		return "", false
	}
	return text, true
}

// BudgetWord writes a memory budget as the grammar reads it: "24gb",
// "23.5gb".
func BudgetWord(n int64) string {
	return strings.ReplaceAll(strings.ToLower(budgetGiB(n)), " gib", "gb")
}
