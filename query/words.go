package query

import (
	"slices"

	"github.com/vrambot/vrambot/models"
)

// Reading the words given beside a job file (vrambot vram --job FILE
// 4090 gpus=2): they name no model as a rule (the file does), and each
// part they say wins over the file's (docs/jobs.md §3).

// ReadWords reads query words that need not name a model into their
// parts, in the grammar's canonical spellings. A question ("will it fit
// on a 4090?") is read by its keywords; it then cannot name a model.
// Errors are *Error.
func ReadWords(text string) (Words, error) {
	if len(text) > MaxBytes {
		return Words{}, Errorf("", "query too long (%d bytes, at most %d)", len(text), MaxBytes)
	}
	tokens := tokenizeQuery(text)
	if len(tokens) > maxQueryTokens {
		return Words{}, Errorf("", "too many words in the query (%d, at most %d)", len(tokens), maxQueryTokens)
	}
	p, err := parseTokens(tokens, nil)
	if err != nil && looksLikeQuestion(text) {
		// The file names the model: a stand-in lets the question's
		// reading through its "no model" check.
		if np, nerr := parseQuestion(tokens, &models.Resolution{Source: models.SourceFile}); nerr == nil {
			p, err = np, nil
		}
	}
	if err != nil {
		return Words{}, err
	}
	c := p.canonical()
	if p.method == "" {
		// A method only implied ("can this run on 2 a100s?", "will it
		// train on a 4090?") gives way to the method the file states.
		c.method = ""
	}
	return Words{Model: c.model, Method: c.method, GPU: c.gpu, Count: c.count, Sharding: c.sharding, Settings: c.kv}, nil
}

// CheckValue reads raw as a value of the setting key (a canonical key)
// and returns it as the grammar writes it ("bfloat16" → "bf16", "True" →
// "on"); the error, a *Error, says why it is no such value.
func CheckValue(key, raw string) (string, error) {
	s, ok := settingByKey[key]
	if !ok || keyIndex(key) < 0 {
		return "", Errorf(raw, "unknown setting '%s'", ShowToken(key))
	}
	if _, err := s.Value.read(key, raw); err != nil {
		return "", err
	}
	return canonicalValue(key, raw), nil
}

// SortSettings orders settings as the canonical query writes them.
func SortSettings(kv []KeyValue) {
	slices.SortStableFunc(kv, func(a, b KeyValue) int { return keyIndex(a.Key) - keyIndex(b.Key) })
}

// ScopeOf is the scope of the setting key (ScopeAny for an unknown key).
func ScopeOf(key string) Scope {
	if s, ok := settingByKey[key]; ok {
		return s.Scope
	}
	return ScopeAny
}

// String is the query the words make, in the grammar's own order, not
// checked (ParseWith says what is wrong with it).
func (w Words) String() string {
	return canonQuery{model: w.Model, method: w.Method, sharding: w.Sharding, gpu: w.GPU, count: w.Count, kv: w.Settings}.String()
}
