// Package hfconfig translates a Hugging Face config.json into the
// estimator's architecture (arch.Model, which the catalog calls
// catalog.Model). It is pure: the text comes from the embedded catalog, the
// store's cache, the Hub or a local file, and this package only reads it.
// How each family's keys map to memory: docs/architectures.md.
package hfconfig

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vrambot/vrambot/advisor/arch"
	"github.com/vrambot/vrambot/internal/errs"
)

// maxParams is 100 trillion parameters, ~50× the largest published model.
const maxParams = 1e14

// maxLayers bounds the layer count: the deepest published models have a
// few hundred layers.
const maxLayers = 1 << 14

// Read translates config.json text into an architecture named after repoID
// (a Hugging Face repo id such as "Qwen/Qwen3-8B", or a file name for a local
// config). notes are what was read and the assumptions made while reading it,
// for the reply. A config that cannot be read is an errs.Invalid error
// naming the key that is missing or wrong. Text past the bounds of limits.go
// is refused before it is decoded.
func Read(data []byte, repoID string) (m arch.Model, notes []string, err error) {
	return ReadContext(context.Background(), data, repoID)
}

// ReadContext is Read, giving up when ctx ends: the bounds check looks at
// ctx as it scans, and nothing is decoded after ctx has ended. The decode
// itself is bounded by the limits (tens of milliseconds for the largest).
func ReadContext(ctx context.Context, data []byte, repoID string) (m arch.Model, notes []string, err error) {
	if err := checkBounds(ctx, data); err != nil {
		return arch.Model{}, nil, err
	}
	if err := ctx.Err(); err != nil {
		return arch.Model{}, nil, errs.Wrap(errs.Unavailable, err, "reading config.json was given up")
	}
	var raw map[string]any
	if err := json.Unmarshal(nonFiniteToNull(data), &raw); err != nil {
		return arch.Model{}, nil, errs.Wrap(errs.Invalid, err, "config.json is not a JSON object")
	}
	if raw == nil {
		return arch.Model{}, nil, errs.New(errs.Invalid, "config.json is not a JSON object")
	}
	r := &reader{}
	top := newConfig(raw, "", &r.notes, &r.err)
	m = r.read(top)
	if r.err != nil {
		return arch.Model{}, nil, r.err
	}
	m.Name = repoName(repoID)
	m.HFID = repoID
	m.Source = "config.json of " + repoID
	m.Params = m.ComputeParams()
	if m.Params <= 0 {
		return arch.Model{}, nil, errs.New(errs.Invalid, "config.json describes a model with no parameters")
	}
	return m, r.notes, nil
}

// repoName is the part of a repo id after the organisation.
func repoName(repoID string) string {
	if i := strings.LastIndexByte(repoID, '/'); i >= 0 {
		return repoID[i+1:]
	}
	return repoID
}

// reader collects the notes and the first error of one Read.
type reader struct {
	notes []string
	err   error
	// known: the model_type is in families; savedByTransformers: the file
	// carries transformers_version (save_pretrained wrote it).
	known, savedByTransformers bool
}

func (r *reader) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// textConfigKeys are where multimodal and wrapper configs keep the language
// model (docs/architectures.md §0 rule 3).
var textConfigKeys = []string{"text_config", "llm_config", "language_config", "thinker_config"}

// read dispatches on the (text) model_type.
func (r *reader) read(top *config) arch.Model {
	topType := top.optString("", "model_type")
	text := top
	for _, k := range textConfigKeys {
		if tc := top.sub(k); tc != nil && (tc.has("hidden_size") || tc.has("num_hidden_layers") || tc.sub("text_config") != nil) {
			text = tc
			if inner := tc.sub("text_config"); inner != nil { // thinker_config.text_config (Qwen-Omni)
				text = inner
			}
			break
		}
	}
	mt := text.optString("", "model_type")
	if text != top && (mt == "" || mt == topType) {
		mt = topType + "_text"
		if _, ok := families[mt]; !ok {
			mt = topType
		}
	}
	fam, known := families[mt]
	if !known {
		if f, ok := families[topType]; ok && text == top {
			fam, known, mt = f, true, topType
		}
	}
	if !known {
		fam = genericFamily
	}
	r.known = known
	r.savedByTransformers = top.has("transformers_version")
	text.defaults = fam.defaults

	var m arch.Model
	switch fam.kind {
	case kindEncoder:
		m = r.readEncoder(text, mt, fam)
	case kindEncoderDecoder:
		m = r.readT5(text, mt, fam)
	case kindHybrid:
		m = r.readNemotronH(text, mt)
	case kindNAS:
		m = r.readDeciLM(text, mt)
	default:
		m = r.readDecoder(text, mt, fam)
	}
	if r.err != nil {
		return arch.Model{}
	}
	m.ModelType = mt
	if !known {
		label := mt
		if label == "" {
			label = "(none)"
		}
		r.note("model_type %q is not one vrambot knows: read as a generic decoder (%s MLP, %s, rotary positions) from its usual keys; the parameter count may be off by the layers it does not describe", label, m.MLP, m.Norm)
	}
	if v := top.sub("vision_config"); v != nil {
		m.VisionParams = r.visionParams(top, v, m)
	}
	m.DType = firstNonEmpty(top.optString("", "torch_dtype", "dtype"), text.optString("", "torch_dtype", "dtype"))
	if q := top.sub("quantization_config"); q != nil {
		m.Quant = r.readQuant(q, m)
	} else if q := text.sub("quantization_config"); q != nil {
		m.Quant = r.readQuant(q, m)
	}
	m.Quant = r.expertDType(text, m.Quant)
	if r.err == nil {
		r.checkSize(m)
	}
	return m
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// checkSize refuses shapes whose product runs past any real model (or past
// int64): checked in floating point before the exact count.
func (r *reader) checkSize(m arch.Model) {
	h := float64(m.HiddenSize)
	var approx float64
	for _, g := range m.Layers() {
		w := float64(max(g.FFN.Intermediate, 1)) + float64(g.FFN.Experts)*float64(g.FFN.ExpertIntermediate) + float64(g.FFN.SharedIntermediate)
		a := float64(g.Attention.Heads) * float64(max(g.Attention.HeadDim, g.Attention.LinearValueDim, 1))
		a += float64(max(g.Attention.LinearValueHeads, 1)) * float64(max(g.Attention.LinearValueDim, 1))
		approx += float64(g.Layers) * (4*h*(a+h) + 3*h*w)
	}
	approx += 2*h*float64(m.VocabSize) + float64(m.VisionParams)
	if m.Family == arch.FamilyEncoderDecoder {
		approx *= 3
	}
	if approx > maxParams {
		if r.err == nil {
			r.err = errs.New(errs.Invalid, "config.json describes about %.3g parameters, more than any real model", approx)
		}
	}
}
