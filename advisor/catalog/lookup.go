package catalog

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/vrambot/vrambot/suggest"
)

// Models returns the model catalog in catalog order (a copy).
func Models() []Model {
	out := make([]Model, len(modelList))
	for i, m := range modelList {
		m.Aliases = slices.Clone(m.Aliases)
		out[i] = m
	}
	return out
}

// LookupModel finds a model by catalog name, alias or Hugging Face id, ignoring
// case: "llama-2-7b", "meta-llama/Llama-2-7b-hf" and its "-chat-hf" variant
// all give Llama-2-7B. Fine-tuned and re-packaged variants share the base
// architecture where the name says so: endings such as -instruct, -it,
// -thinking, -2507 or -v0.3 are dropped ("Qwen/Qwen3-30B-A3B-Instruct-2507"),
// a catalog name inside a longer one is found ("NousResearch/Hermes-3-
// Llama-3.1-8B"), and a quantisation ending (-AWQ, -GPTQ-Int4, -FP8,
// -bnb-4bit, -NVFP4) marks the returned model's checkpoint storage
// (Model.Quant, its Source saying it came from the name).
func LookupModel(s string) (Model, bool) {
	if len(s) > maxLookupInput {
		return Model{}, false
	}
	base, quant := modelCandidates(s)
	for _, c := range base {
		if i, ok := modelIdx[compact(c)]; ok {
			m := modelList[i]
			m.Aliases = slices.Clone(m.Aliases)
			if quant != nil && m.Quant == nil {
				m.Quant = quant
			}
			return m, true
		}
	}
	return Model{}, false
}

// maxLookupInput bounds a model name: the Hub limits repo ids to 96
// characters of name after the organisation.
const maxLookupInput = 200

// compact is the lookup key: lower case with spaces, dashes and underscores
// removed, so "RTX 4090", "rtx-4090" and "rtx4090" meet.
func compact(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		if r == ' ' || r == '-' || r == '_' || unicode.IsControl(r) {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func modelKeys(m Model) []string {
	keys := append([]string{m.Name}, m.Aliases...)
	if m.HFID != "" {
		keys = append(keys, m.HFID)
		keys = append(keys, m.HFID[strings.LastIndexByte(m.HFID, '/')+1:])
	}
	return keys
}

// maxSuggestInput bounds the work of "did you mean" on pasted junk.
const maxSuggestInput = 64

// SuggestModel returns the catalog alias a mistyped model name most likely
// means, or "" when nothing in the catalog is a real match: the letters may
// be misspelt, but the generation and version numbers and the size must be
// the same (modelNameMatches), so "gemma-3-27b" is never offered
// "gemma-2b", "phi-4" never "phi-2" and "qwen3-9b" never "qwen3-8b".
func SuggestModel(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" || len(s) > maxSuggestInput {
		return ""
	}
	want := parseModelName(s)
	var names []string
	for _, m := range modelNames {
		for _, a := range m.aliases {
			if modelNameMatches(want, a.name) {
				names = append(names, a.key)
			}
		}
	}
	return nearestName(s, names)
}

func nearestName(s string, names []string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" || len(s) > maxSuggestInput {
		return ""
	}
	compacted := make([]string, len(names))
	for i, n := range names {
		compacted[i] = compact(n)
	}
	best, bestD := suggest.Closest(compact(s), compacted)
	if bestD > max(2, len([]rune(s))/3) {
		return ""
	}
	return names[slices.Index(compacted, best)]
}

// Size limits accepted by ParseSize: below 1M or above 10T parameters is a
// typo, not a model.
const (
	minModelParams = 1_000_000
	maxModelParams = 10_000_000_000_000
)

// ParseSize reads a model size such as "7b", "6.7B", "350m", "1.5b", "70B"
// or "1.8t" as a parameter count.
func ParseSize(s string) (int64, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if len(s) < 2 || len(s) > 16 {
		return 0, false
	}
	var mult float64
	switch s[len(s)-1] {
	case 'm':
		mult = 1e6
	case 'b':
		mult = 1e9
	case 't':
		mult = 1e12
	default:
		return 0, false
	}
	num := s[:len(s)-1]
	for _, r := range num {
		if (r < '0' || r > '9') && r != '.' {
			return 0, false // no signs, exponents, "inf" or "nan"
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, false
	}
	p := math.Round(v * mult)
	if p < minModelParams || p > maxModelParams {
		return 0, false
	}
	return int64(p), true
}

// sizeLadder names the catalog models whose shapes a bare size ("8b")
// borrows: current dense decoders with grouped-query attention, SwiGLU and
// 49k–152k vocabularies, smallest first. A size takes the nearest one's
// layers, hidden size, heads and vocabulary (Llama-3.1-8B for 7b–11b: 32
// layers, 8 KV heads × 128), and an MLP width that makes up the size.
var sizeLadder = []string{"SmolLM2-135M", "SmolLM2-360M", "Qwen3-0.6B", "Llama-3.2-1B", "Qwen3-1.7B", "Llama-3.2-3B",
	"Llama-3.1-8B", "Qwen3-14B", "Qwen3-32B", "Llama-3.3-70B", "Llama-3.1-405B"}

// maxWidthStretch is how far the MLP width may stray from the nearest
// model's before the layer count changes instead: a 2× wider or narrower
// MLP is still a plausible model of that depth.
const maxWidthStretch = 2.0

// widthStep rounds a made-up MLP width, as model builders round theirs
// (Llama's multiple_of).
const widthStep = 64

// ModelForSize makes up today's typical architecture of the given size:
// the nearest sizeLadder model's depth, width, attention and vocabulary,
// with the MLP width (rounded to 64) that adds up to the size; sizes far
// beyond the ladder scale the depth instead. Params is the requested
// size, Scaled is true, and Source names the model the shape came from.
func ModelForSize(params int64) Model {
	params = max(params, minModelParams)
	rung := nearestRung(params)
	m := Model{
		Family:                FamilyDecoderOnly,
		HiddenSize:            rung.HiddenSize,
		NumLayers:             rung.NumLayers,
		NumAttentionHeads:     rung.NumAttentionHeads,
		NumKVHeads:            rung.NumKVHeads,
		HeadDim:               rung.HeadDim,
		IntermediateSize:      rung.IntermediateSize,
		VocabSize:             rung.VocabSize,
		MaxPositionEmbeddings: rung.MaxPositionEmbeddings,
		TieWordEmbeddings:     rung.TieWordEmbeddings,
		MLP:                   "swiglu",
		Norm:                  "rmsnorm",
		Position:              "rope",
		Scaled:                true,
	}
	h := int64(m.HiddenSize)
	fixed := m.EmbeddingParams() + m.LMHeadParams() + h // embeddings, untied head, final norm
	perLayerBase := m.AttentionParams() + 2*h           // attention and two norms
	mlp := float64(params-fixed)/float64(m.NumLayers) - float64(perLayerBase)
	width := mlp / float64(3*h)
	if ratio := width / float64(rung.IntermediateSize); ratio >= 1/maxWidthStretch && ratio <= maxWidthStretch {
		m.IntermediateSize = max(widthStep, int(math.Round(width/widthStep))*widthStep)
	} else {
		perLayer := float64(perLayerBase + 3*h*int64(m.IntermediateSize))
		m.NumLayers = max(1, int(math.Round(float64(params-fixed)/perLayer)))
	}
	m.Params = params
	m.Name = FormatSize(params)
	m.Source = fmt.Sprintf("shape of %s, the nearest catalog model, with the MLP width or depth that makes %s (catalog.ModelForSize)", rung.Name, m.Name)
	return m
}

// nearestRung is the sizeLadder model closest to params in ratio.
func nearestRung(params int64) Model {
	var best Model
	bestD := math.Inf(1)
	for _, name := range sizeLadder {
		m, ok := LookupModel(name)
		if !ok {
			continue
		}
		if d := math.Abs(math.Log(float64(params) / float64(m.Params))); d < bestD {
			best, bestD = m, d
		}
	}
	return best
}

// FormatSize writes a parameter count the way people say it: "7B", "6.7B", "350M".
func FormatSize(params int64) string {
	switch {
	case params >= 1e12:
		return trimFloat(float64(params)/1e12) + "T"
	case params >= 1e9:
		return trimFloat(float64(params)/1e9) + "B"
	default:
		return trimFloat(float64(params)/1e6) + "M"
	}
}

func trimFloat(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}
