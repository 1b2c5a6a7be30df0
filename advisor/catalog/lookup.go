package catalog

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/vrambot/vrambot/suggest"
)

// GPUs returns the GPU catalog in catalog order (a copy: callers may modify it).
func GPUs() []GPU {
	out := make([]GPU, len(gpuList))
	for i, g := range gpuList {
		g.Aliases = slices.Clone(g.Aliases)
		out[i] = g
	}
	return out
}

// Models returns the model catalog in catalog order (a copy).
func Models() []Model {
	out := make([]Model, len(modelList))
	for i, m := range modelList {
		m.Aliases = slices.Clone(m.Aliases)
		out[i] = m
	}
	return out
}

// LookupGPU finds a GPU by key, display name or alias, ignoring case, spaces,
// dashes and underscores and a leading "nvidia"/"amd": "a100" is the 80GB
// card, "a100-40gb" the 40GB one, "h100" the SXM card, "v100" the 16GB one.
func LookupGPU(s string) (GPU, bool) {
	k := compact(s)
	for _, vendor := range []string{"", "nvidia", "amd", "geforce", "tesla"} {
		if i, ok := gpuIndex[strings.TrimPrefix(k, vendor)]; ok {
			g := gpuList[i]
			g.Aliases = slices.Clone(g.Aliases)
			return g, true
		}
	}
	return GPU{}, false
}

// LookupModel finds a model by catalog name, alias or Hugging Face id, ignoring
// case: "llama-2-7b", "meta-llama/Llama-2-7b-hf" and its "-chat-hf" variant
// all give Llama-2-7B. Fine-tuned variants (-chat, -instruct, -it, -hf, -v0.x)
// share the base architecture.
func LookupModel(s string) (Model, bool) {
	for _, c := range modelCandidates(s) {
		if i, ok := modelIdx[compact(c)]; ok {
			m := modelList[i]
			m.Aliases = slices.Clone(m.Aliases)
			return m, true
		}
	}
	return Model{}, false
}

// variantSuffixes are name endings of fine-tuned or re-packaged checkpoints
// that keep the base architecture.
var variantSuffixes = []string{"-hf", "-chat", "-instruct", "-it", "-v0.1", "-v0.2", "-v0.3", "-2407"}

// modelCandidates lists the spellings to try, most specific first: the
// input, the part after the organisation, then with variant suffixes removed.
func modelCandidates(s string) []string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.NewReplacer(" ", "-", "_", "-").Replace(s)
	out := []string{s}
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
		out = append(out, s)
	}
	for changed := true; changed; {
		changed = false
		for _, suf := range variantSuffixes {
			if t, ok := strings.CutSuffix(s, suf); ok && t != "" {
				s = t
				out = append(out, s)
				changed = true
			}
		}
	}
	return out
}

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

func gpuKeys(g GPU) []string { return append([]string{g.Key, g.Name}, g.Aliases...) }

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

// SuggestGPU returns the GPU alias closest to s by edit distance, or "" when
// nothing is close (more than a third of the input would have to change).
func SuggestGPU(s string) string {
	var names []string
	for _, g := range gpuList {
		names = append(names, g.Aliases...)
	}
	return nearestName(s, names)
}

// SuggestModel returns the model alias closest to s, or "" when nothing is close.
func SuggestModel(s string) string {
	var names []string
	for _, m := range modelList {
		names = append(names, m.Aliases...)
	}
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
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

// scaledShape is one rung of the size ladder used by ModelForSize: the
// hidden size and heads of the public Llama-style model of that class.
type scaledShape struct {
	upTo   float64 // parameters, exclusive
	hidden int
	heads  int
}

// scaledLadder follows GPT-2/Llama/Llama-2/Llama-3 shapes: 768 (124M),
// 1024 (350M), 2048 (1B), 3072 (3B), 4096 (7-8B), 5120 (13B), 7168 (34B
// class), 8192 (70B), 12288 (175B), 16384 (405B).
var scaledLadder = []scaledShape{
	{0.2e9, 768, 12}, {0.7e9, 1024, 16}, {2e9, 2048, 16}, {5e9, 3072, 24}, {10e9, 4096, 32},
	{20e9, 5120, 40}, {45e9, 7168, 56}, {120e9, 8192, 64}, {250e9, 12288, 96}, {math.Inf(1), 16384, 128},
}

// gqaFromParams is the size from which scaled models use grouped-query
// attention with 8 KV heads, as Llama-2-70B, Llama-3 and Qwen2.5-32B do.
const gqaFromParams = 30e9

// scaledVocab is Llama-2's vocabulary, the default for a size-only model.
const scaledVocab = 32000

// ModelForSize makes up a plausible Llama-style architecture of the given
// size: hidden size and heads from the ladder above, a SwiGLU MLP (8/3·h
// rounded up to 256, or 3.5·h with GQA as in Llama-3), and as many layers as
// make up the size. Params is the requested size, Scaled is true.
func ModelForSize(params int64) Model {
	if params < minModelParams {
		params = minModelParams
	}
	shape := scaledLadder[len(scaledLadder)-1]
	for _, s := range scaledLadder {
		if float64(params) < s.upTo {
			shape = s
			break
		}
	}
	m := Model{
		Family:            FamilyDecoderOnly,
		HiddenSize:        shape.hidden,
		NumAttentionHeads: shape.heads,
		NumKVHeads:        shape.heads,
		HeadDim:           shape.hidden / shape.heads,
		VocabSize:         scaledVocab,
		MLP:               "swiglu",
		Norm:              "rmsnorm",
		Position:          "rope",
		Scaled:            true,
	}
	if float64(params) >= gqaFromParams {
		m.NumKVHeads = 8
		m.IntermediateSize = roundUp(shape.hidden*7/2, 256)
	} else {
		m.IntermediateSize = roundUp(shape.hidden*8/3, 256)
	}
	m.MaxPositionEmbeddings = 4096
	perLayer := m.LayerParams()
	fixed := 2*m.EmbeddingParams() + int64(m.HiddenSize) // untied head, final RMSNorm
	m.NumLayers = max(1, int(math.Round(float64(params-fixed)/float64(perLayer))))
	m.Params = params
	m.Name = FormatSize(params)
	m.Source = "scaled Llama-style architecture for a size-only model (catalog.ModelForSize)"
	return m
}

func roundUp(v, to int) int { return (v + to - 1) / to * to }

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
