// Package hfconfig translates a Hugging Face config.json into the
// estimator's architecture (catalog.Model). It is pure: the text comes from
// the embedded catalog, the store's cache, the Hub or a local file, and this
// package only reads it. How each family's keys map to memory:
// docs/architectures.md.
package hfconfig

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/internal/errs"
)

// MaxConfigBytes bounds a config.json: the largest real ones (multimodal,
// with long rope tables) are well under 64 KiB.
const MaxConfigBytes = 1 << 20

// Read translates config.json text into an architecture named after repoID
// (a Hugging Face repo id such as "Qwen/Qwen3-8B", or a file name for a local
// config). notes are the assumptions made while reading it, for the reply.
// A config that cannot be read is an errs.Invalid error naming what is
// missing or wrong.
func Read(data []byte, repoID string) (m catalog.Model, notes []string, err error) {
	if len(data) > MaxConfigBytes {
		return catalog.Model{}, nil, errs.New(errs.Invalid, "config.json is %d bytes, more than any real one (at most %d)", len(data), MaxConfigBytes)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return catalog.Model{}, nil, errs.Wrap(errs.Invalid, err, "config.json is not a JSON object")
	}
	c := config{raw: raw}
	m = catalog.Model{
		Name:                  repoName(repoID),
		HFID:                  repoID,
		Family:                catalog.FamilyDecoderOnly,
		HiddenSize:            c.int("hidden_size"),
		NumLayers:             c.int("num_hidden_layers"),
		NumAttentionHeads:     c.int("num_attention_heads"),
		IntermediateSize:      c.int("intermediate_size"),
		VocabSize:             c.int("vocab_size"),
		MaxPositionEmbeddings: c.optInt("max_position_embeddings", 0),
		TieWordEmbeddings:     c.optBool("tie_word_embeddings", false),
		MLP:                   "swiglu",
		Norm:                  "rmsnorm",
		Position:              "rope",
		Source:                "config.json of " + repoID,
	}
	m.NumKVHeads = c.optInt("num_key_value_heads", m.NumAttentionHeads)
	if m.NumAttentionHeads > 0 {
		m.HeadDim = c.optInt("head_dim", m.HiddenSize/m.NumAttentionHeads)
	}
	if c.err != nil {
		return catalog.Model{}, nil, c.err
	}
	mt, _ := raw["model_type"].(string)
	notes = append(notes, fmt.Sprintf("architecture read from %s (model_type %q) as a decoder with SwiGLU MLP, RMSNorm and rotary positions", m.Source, mt))
	// A shape whose product runs past any real model (or past int64) is not
	// a model: checked in floating point before the exact count.
	h, l := float64(m.HiddenSize), float64(m.NumLayers)
	approx := l*(4*h*h+3*h*float64(m.IntermediateSize)) + 2*h*float64(m.VocabSize)
	if approx > maxParams {
		return catalog.Model{}, nil, errs.New(errs.Invalid, "config.json describes about %.3g parameters, more than any real model", approx)
	}
	m.Params = m.ComputeParams()
	return m, notes, nil
}

// repoName is the part of a repo id after the organisation.
func repoName(repoID string) string {
	if i := strings.LastIndexByte(repoID, '/'); i >= 0 {
		return repoID[i+1:]
	}
	return repoID
}

// config reads typed values from the decoded JSON, keeping the first error.
type config struct {
	raw map[string]any
	err error
}

// maxDim bounds every size read from a config, so no later product
// overflows: no real model has a dimension near a billion.
const maxDim = 1 << 30

// maxParams is 100 trillion parameters, ~50× the largest published model.
const maxParams = 1e14

func (c *config) int(key string) int {
	v, ok := c.raw[key]
	if !ok {
		c.fail("config.json has no %q", key)
		return 0
	}
	n, ok := v.(float64)
	if !ok || n != float64(int64(n)) || n <= 0 || n > maxDim {
		c.fail("config.json %q is %v, not a positive whole number", key, v)
		return 0
	}
	return int(n)
}

func (c *config) optInt(key string, def int) int {
	if _, ok := c.raw[key]; !ok || c.raw[key] == nil {
		return def
	}
	return c.int(key)
}

func (c *config) optBool(key string, def bool) bool {
	v, ok := c.raw[key].(bool)
	if !ok {
		return def
	}
	return v
}

func (c *config) fail(format string, args ...any) {
	if c.err == nil {
		c.err = errs.New(errs.Invalid, format, args...)
	}
}
