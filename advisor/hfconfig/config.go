package hfconfig

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/vrambot/vrambot/internal/errs"
)

// config reads typed values from one decoded config object (the top level,
// or text_config / vision_config), keeping the first error. A key the file
// leaves out takes the default of its model_type's configuration class
// (transformers configuration_<type>.py) where defaults holds one, and that
// is noted; otherwise a required key is an error naming it.
type config struct {
	raw      map[string]any
	where    string         // "" for the top level, "text_config" ...
	defaults map[string]any // the model_type's class defaults
	notes    *[]string
	err      *error
}

// maxDim bounds every size read from a config, so no later product
// overflows: no real model has a dimension near a billion.
const maxDim = 1 << 30

func newConfig(raw map[string]any, where string, notes *[]string, err *error) *config {
	return &config{raw: raw, where: where, notes: notes, err: err}
}

// sub is the nested object under key (nil when absent or not an object).
func (c *config) sub(key string) *config {
	m, ok := c.raw[key].(map[string]any)
	if !ok {
		return nil
	}
	return &config{raw: m, where: c.path(key), notes: c.notes, err: c.err}
}

// path names key as the user would find it in the file.
func (c *config) path(key string) string {
	if c.where == "" {
		return key
	}
	return c.where + "." + key
}

func (c *config) fail(format string, args ...any) {
	if *c.err == nil {
		*c.err = errs.New(errs.Invalid, format, args...)
	}
}

func (c *config) note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if !slices.Contains(*c.notes, s) {
		*c.notes = append(*c.notes, s)
	}
}

// has reports whether key is present and not null.
func (c *config) has(key string) bool {
	v, ok := c.raw[key]
	return ok && v != nil
}

// lookup finds the first of keys that is present (or has a class default,
// noted as such).
func (c *config) lookup(keys ...string) (any, string, bool) {
	for _, k := range keys {
		if c.has(k) {
			return c.raw[k], k, true
		}
	}
	for _, k := range keys {
		if v, ok := c.defaults[k]; ok {
			c.note("%s not in config.json: took the transformers default %v for this model_type", c.path(k), v)
			return v, k, true
		}
	}
	return nil, "", false
}

// int reads a required positive whole number; the first key is the one
// the message names, the others are the older spellings some families use
// (n_embd for hidden_size).
func (c *config) int(keys ...string) int {
	v, k, ok := c.lookup(keys...)
	if !ok {
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = fmt.Sprintf("%q", c.path(k))
		}
		alt := ""
		if len(names) > 1 {
			alt = " (or " + strings.Join(names[1:], ", ") + ")"
		}
		c.fail("config.json has no %s%s", names[0], alt)
		return 0
	}
	return c.toInt(k, v, 1)
}

// count reads a whole number that may be zero (a layer count, a rank).
func (c *config) count(def int, keys ...string) int {
	v, k, ok := c.lookup(keys...)
	if !ok {
		return def
	}
	return c.toInt(k, v, 0)
}

// optInt reads an optional positive whole number.
func (c *config) optInt(def int, keys ...string) int {
	v, k, ok := c.lookup(keys...)
	if !ok {
		return def
	}
	return c.toInt(k, v, 1)
}

func (c *config) toInt(key string, v any, lo float64) int {
	n, ok := v.(float64)
	if iv, isInt := v.(int); isInt {
		n, ok = float64(iv), true
	}
	if !ok || n != math.Trunc(n) || n < lo || n > maxDim {
		c.fail("config.json %q is %v, not a %s whole number", c.path(key), showValue(v), map[bool]string{true: "positive", false: "non-negative"}[lo > 0])
		return 0
	}
	return int(n)
}

// showValue writes a config value for a message, shortened.
func showValue(v any) string {
	s := fmt.Sprint(v)
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

// optBool reads an optional boolean (a string "true"/"false" is accepted).
func (c *config) optBool(def bool, keys ...string) bool {
	v, _, ok := c.lookup(keys...)
	if !ok {
		return def
	}
	switch b := v.(type) {
	case bool:
		return b
	case string:
		return strings.EqualFold(b, "true")
	}
	return def
}

// optString reads an optional string.
func (c *config) optString(def string, keys ...string) string {
	v, _, ok := c.lookup(keys...)
	if !ok {
		return def
	}
	if s, ok := v.(string); ok {
		return s
	}
	return def
}

// optFloat reads an optional number.
func (c *config) optFloat(def float64, keys ...string) float64 {
	v, _, ok := c.lookup(keys...)
	if !ok {
		return def
	}
	if f, ok := v.(float64); ok && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return f
	}
	return def
}

// strings reads a list of strings (nil when absent or not a list).
func (c *config) strings(key string) []string {
	list, ok := c.raw[key].([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(list))
	for _, v := range list {
		s, ok := v.(string)
		if !ok {
			return nil
		}
		out = append(out, s)
	}
	return out
}

// ints reads a list of whole numbers (nil when absent or not such a list);
// booleans read as 0/1 (Llama 4's no_rope_layers).
func (c *config) ints(key string) []int {
	list, ok := c.raw[key].([]any)
	if !ok {
		return nil
	}
	out := make([]int, 0, len(list))
	for _, v := range list {
		switch n := v.(type) {
		case float64:
			if n != math.Trunc(n) || n < 0 || n > maxDim {
				return nil
			}
			out = append(out, int(n))
		case bool:
			out = append(out, map[bool]int{false: 0, true: 1}[n])
		default:
			return nil
		}
	}
	return out
}

// sortedKeys returns a map's keys in order, for deterministic reading.
func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}

// nonFiniteToNull replaces the NaN, Infinity and -Infinity literals that
// Python's json module writes (Nemotron-H's time_step_limit) with null, so
// strict JSON decoding accepts the file; text inside strings is untouched.
func nonFiniteToNull(data []byte) []byte {
	var out []byte // allocated on the first replacement only
	inString, escaped := false, false
	for i := 0; i < len(data); i++ {
		b := data[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		default:
			for _, lit := range nonFiniteLiterals {
				if len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit {
					if out == nil {
						out = append(make([]byte, 0, len(data)), data[:i]...)
					}
					out = append(out, "null"...)
					i += len(lit) - 1
					b = 0
					break
				}
			}
		}
		if out != nil && b != 0 {
			out = append(out, b)
		}
	}
	if out == nil {
		return data
	}
	return out
}

var nonFiniteLiterals = []string{"-Infinity", "Infinity", "NaN"}

// objects reads a list of objects (nil when absent or not such a list).
func (c *config) objects(key string) []*config {
	list, ok := c.raw[key].([]any)
	if !ok {
		return nil
	}
	out := make([]*config, 0, len(list))
	for i, v := range list {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		out = append(out, &config{raw: m, where: fmt.Sprintf("%s[%d]", c.path(key), i), notes: c.notes, err: c.err})
	}
	return out
}
