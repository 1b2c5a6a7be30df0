package catalog

import (
	"cmp"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/vrambot/vrambot/advisor/arch"
	"github.com/vrambot/vrambot/suggest"
)

// variantWords are name parts of fine-tuned or re-packaged checkpoints
// that keep the base architecture (instruct, chat, it, ...), dropped from
// the end of a name when looking it up.
var variantWords = map[string]bool{
	"hf": true, "chat": true, "instruct": true, "it": true, "base": true, "thinking": true, "reasoning": true,
	"sft": true, "dpo": true, "rlhf": true, "preview": true, "pretrain": true, "original": true,
	"dynamic": true, "static": true, "unsloth": true, "mlx": true, "gguf": true, "exl2": true, "fp16": true, "bf16": true,
	"hybrid": true, "pertensor": true, "per": true, "tensor": true, "fast": true,
}

// NameEnding reports whether w is a word a model's name may end with that
// leaves its architecture alone: a variant ("instruct", "chat", "base") or
// a checkpoint's storage ("awq", "gptq").
func NameEnding(w string) bool {
	w = strings.ToLower(w)
	_, quant := quantWords[w]
	return variantWords[w] || quant
}

// quantWords name a checkpoint's storage in a repo name: the part of the
// name and the scheme it means (arch.Scheme, or bitsandbytes for bnb).
var quantWords = map[string]string{
	"awq": "awq", "gptq": "gptq", "int4": "int4", "w4a16": "int4", "4bit": "nf4", "bnb": "nf4",
	"fp8": "fp8", "w8a8": "fp8", "nvfp4": "nvfp4", "mxfp4": "mxfp4", "int8": "int8", "8bit": "int8",
}

// dateOrVersion matches release tags that keep the architecture: 2407,
// 2507, 0324, v0.1.
var dateOrVersion = regexp.MustCompile(`^(\d{4}|v0\.\d+)$`)

// sizeToken matches a size part of a name: 8b, 0.6b, 135m, a3b (active),
// 8x7b, 17b-16e's 16e (experts).
var sizeToken = regexp.MustCompile(`^(a|\d+x)?\d+(\.\d+)?[bmt]$|^\d+e$`)

// modelCandidates lists the spellings to try, most specific first: the
// input, the part after the organisation, that without its variant and
// quantisation endings, then runs of its parts that hold a size ("llama-
// 3.1-8b" inside "hermes-3-llama-3.1-8b"), longest first. quant is the
// storage the name's quantisation ending names (nil if none).
func modelCandidates(s string) (out []string, quant *arch.Quantization) {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.NewReplacer(" ", "-", "_", "-").Replace(s)
	out = append(out, s)
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
		out = append(out, s)
	}
	parts := strings.Split(s, "-")
	quantName := ""
	for len(parts) > 1 {
		last := parts[len(parts)-1]
		if q, ok := quantWords[last]; ok {
			if quantName == "" {
				quantName = q
			}
		} else if !variantWords[last] && !dateOrVersion.MatchString(last) {
			break
		}
		parts = parts[:len(parts)-1]
		out = append(out, strings.Join(parts, "-"))
	}
	// Runs of parts that include a size and something besides it.
	for n := len(parts) - 1; n >= 2; n-- {
		for i := 0; i+n <= len(parts); i++ {
			run := parts[i : i+n]
			if hasSize(run) {
				out = append(out, strings.Join(run, "-"))
			}
		}
	}
	if quantName != "" {
		quant = quantFromName(quantName)
	}
	return out, quant
}

func hasSize(parts []string) bool {
	for _, p := range parts {
		if sizeToken.MatchString(p) {
			return true
		}
	}
	return false
}

// quantFromName is the storage a repo name's quantisation ending implies.
func quantFromName(name string) *arch.Quantization {
	var q *arch.Quantization
	switch name {
	case "nf4":
		q = arch.NewQuantization("nf4", "bitsandbytes", arch.NF4Bytes, arch.LinearGroups)
		q.Bits, q.GroupSize, q.Description = 4, 64, "bitsandbytes NF4 linear-layer weights"
	case "int8":
		q = arch.NewQuantization("int8", "int8", arch.Int8Bytes, arch.LinearGroups)
		q.Bits, q.Description = 8, "8-bit integer linear-layer weights"
	default:
		s, ok := arch.Scheme(name)
		if !ok {
			return nil
		}
		q = s
	}
	q.Source = "the repo name"
	return q
}

// modelName is a model name taken apart: its letters, the numbers that
// are not a size (generation, version), and its size in parameters.
type modelName struct {
	letters string
	numbers []string
	size    float64 // 0 when the name gives none
}

var nameNumber = regexp.MustCompile(`\d+(\.\d+)?`)

// sizeLike is a size part as typed, a stray letter included ("7bb").
var sizeLike = regexp.MustCompile(`^((?:\d+x)?\d+(?:\.\d+)?[bmt])[a-z]?$`)

func parseModelName(s string) modelName {
	var n modelName
	s = strings.ToLower(s)
	var letters strings.Builder
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '_' || r == ' ' || r == '/' }) {
		if m := sizeLike.FindStringSubmatch(part); m != nil {
			if n.size == 0 {
				n.size = partSize(m[1])
			}
			continue
		}
		if sizeToken.MatchString(part) {
			continue // active (a3b) and expert (16e) counts
		}
		n.numbers = append(n.numbers, nameNumber.FindAllString(part, -1)...)
		letters.WriteString(nameNumber.ReplaceAllString(part, ""))
	}
	n.letters = strings.ReplaceAll(letters.String(), ".", "")
	return n
}

// partSize reads "8b", "0.6b", "135m", "8x7b" (8 × 7B) as parameters.
func partSize(p string) float64 {
	mult := map[byte]float64{'m': 1e6, 'b': 1e9, 't': 1e12}[p[len(p)-1]]
	num := p[:len(p)-1]
	times := 1.0
	if i := strings.IndexByte(num, 'x'); i > 0 {
		t, _ := strconv.ParseFloat(num[:i], 64)
		times, num = t, num[i+1:]
	}
	v, _ := strconv.ParseFloat(num, 64)
	return v * mult * times
}

// maxSizeRatio is how far apart two sizes written in names may be for a
// suggestion: the same size, to the rounding of names ("0.5b", "500m").
// A different size is another model (issue 12: suggestions never jump
// across sizes), so "qwen3-9b" is offered nothing rather than qwen3-8b.
const maxSizeRatio = 1.02

// modelNameMatches reports whether candidate could be what want meant:
// letters within a third of their length in edit distance, the same
// generation and version numbers, and the same size when both give one.
func modelNameMatches(want, candidate modelName) bool {
	if len(want.numbers) != len(candidate.numbers) {
		return false
	}
	for i := range want.numbers {
		if want.numbers[i] != candidate.numbers[i] {
			return false
		}
	}
	if (want.size == 0) != (candidate.size == 0) {
		return false
	}
	if want.size > 0 && math.Max(want.size, candidate.size)/math.Min(want.size, candidate.size) > maxSizeRatio {
		return false
	}
	return suggest.Distance(want.letters, candidate.letters) <= max(1, len(want.letters)/3)
}

// namedModel is a catalog model's names taken apart once (data.go's
// init), so that a "did you mean" or a family list parses only the word
// asked.
type namedModel struct {
	aliases []parsedName // as written, for SuggestModel
	keys    []parsedName // every name, a Hub id by its name, lower case, for FamilyModels
}

type parsedName struct {
	key  string
	name modelName
}

func nameModel(m Model) namedModel {
	var n namedModel
	for _, a := range m.Aliases {
		n.aliases = append(n.aliases, parsedName{a, parseModelName(a)})
	}
	for _, key := range modelKeys(m) {
		// A Hub id by its name: the organisation is no family.
		key = strings.ToLower(key[strings.LastIndexByte(key, '/')+1:])
		n.keys = append(n.keys, parsedName{key, parseModelName(key)})
	}
	return n
}

// maxFamilyShown bounds the models FamilyModels lists.
const maxFamilyShown = 6

// FamilyModels lists the models a family name without a size stands for
// ("llama3": llama-3.3-70b, llama-3.2-1b, …; "phi3": phi-3.5-mini,
// phi-3-medium-14b), each by the name of it that matched, newest first, at
// most maxFamilyShown: a name people shorten so is a question of which
// size, answered by listing the sizes, never by picking one. A name with a
// size, or one that a catalog alias already is, gets none.
func FamilyModels(s string) []string {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" || len(s) > maxSuggestInput {
		return nil
	}
	if _, ok := modelIdx[compact(s)]; ok {
		return nil
	}
	want := parseModelName(s)
	if want.size != 0 || len(want.letters) < 3 {
		return nil
	}
	var found []parsedName
	for _, m := range modelNames {
		for _, k := range m.keys {
			if inFamily(want, k.name) {
				if !slices.ContainsFunc(found, func(f parsedName) bool { return f.key == k.key }) {
					found = append(found, k)
				}
				break
			}
		}
	}
	// Newest generation first, the base models before their fine-tunes
	// (fewer letters), then smallest: the sizes of the version people most
	// likely mean.
	slices.SortStableFunc(found, func(a, b parsedName) int {
		if c := compareVersions(b.name.numbers, a.name.numbers); c != 0 {
			return c
		}
		if c := cmp.Compare(len(a.name.letters), len(b.name.letters)); c != 0 {
			return c
		}
		return cmp.Compare(a.name.size, b.name.size)
	})
	out := make([]string, 0, min(len(found), maxFamilyShown))
	for _, f := range found[:min(len(found), maxFamilyShown)] {
		out = append(out, f.key)
	}
	return out
}

// compareVersions orders two names' numbers as versions: "3.3" after
// "3.1" after "3", "10" after "9". A release date ("2409", "2507") is no
// version and is left out.
func compareVersions(a, b []string) int {
	isDate := func(n string) bool { return len(n) >= 4 }
	a, b = slices.DeleteFunc(slices.Clone(a), isDate), slices.DeleteFunc(slices.Clone(b), isDate)
	for i := range min(len(a), len(b)) {
		pa, pb := strings.Split(a[i], "."), strings.Split(b[i], ".")
		for j := range max(len(pa), len(pb)) {
			var na, nb int
			if j < len(pa) {
				na, _ = strconv.Atoi(pa[j])
			}
			if j < len(pb) {
				nb, _ = strconv.Atoi(pb[j])
			}
			if c := cmp.Compare(na, nb); c != 0 {
				return c
			}
		}
	}
	return cmp.Compare(len(a), len(b))
}

// inFamily reports whether candidate belongs to the family want names:
// its letters begin with want's ("phi" of "phi-mini") and each of want's
// numbers is the candidate's, or the start of its version ("3" of
// "3.1").
func inFamily(want, candidate modelName) bool {
	if !strings.HasPrefix(candidate.letters, want.letters) || len(candidate.numbers) < len(want.numbers) {
		return false
	}
	for i, n := range want.numbers {
		c := candidate.numbers[i]
		if c != n && !strings.HasPrefix(c, n+".") {
			return false
		}
	}
	return true
}
