package query

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"unicode"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/hub"
	"github.com/vrambot/vrambot/models"
	"github.com/vrambot/vrambot/suggest"
)

// ModelResolver finds a model the catalog does not hold by name: a Hub
// repo id or a model name, looked up in the store's cache and then on the
// Hugging Face Hub. models.Resolver implements it. Its errors carry their
// kind and a message for the user (a *models.LookupError).
type ModelResolver interface {
	Resolve(ctx context.Context, ref string) (models.Resolution, error)
}

// looksLikeModel reports whether a word the grammar could not place
// reads as a model: a Hub repo id or URL ("Qwen/Qwen3-8B"), or a model
// name ("qwen3-coder-30b-a3b", "gpt-oss", "kimi-k2", an Ollama tag
// "qwen3:8b"). Such a word goes to the resolver instead of a "did you
// mean" that jumps to another model (issue 10). A name has a run of three
// letters and a digit or a separator, and does not start with a setting's
// name ("seq-4k" is a mistyped setting, not a model).
func looksLikeModel(tok string) bool {
	ref := models.RepoRef(modelSpelling(tok))
	if strings.Contains(ref, "/") {
		return hub.ValidRepoID(ref)
	}
	if !hub.ValidName(ref) || len(ref) < 3 {
		return false
	}
	if settingValue(ref) {
		return false
	}
	parts := strings.FieldsFunc(ref, func(r rune) bool { return r == '-' || r == '.' || r == '_' })
	if len(parts) == 0 {
		return false // only separators ("_._"): no name in it
	}
	head := strings.ToLower(parts[0])
	if canonicalKey(head) != "" {
		return false
	}
	if _, ok := models.SizeInName(ref); ok {
		return true
	}
	run, longest, digit := 0, 0, false
	for _, r := range ref {
		if unicode.IsLetter(r) {
			run++
			longest = max(longest, run)
			continue
		}
		run = 0
		digit = digit || unicode.IsDigit(r)
	}
	return longest >= 3 && (digit || strings.ContainsAny(ref, "-."))
}

// settingValue reports whether s is a value of one of the query's
// settings ("mxfp4", "llama.cpp", "adamw-8bit"): those are never models.
func settingValue(s string) bool {
	norm := strings.ReplaceAll(strings.ToLower(s), "_", "-")
	for _, e := range []enum{precisionEnum, optimEnum, offloadEnum, targetsEnum, attnEnum, kvEnum, engineEnum, frameworkEnum} {
		if e.has(norm) {
			return true
		}
	}
	return false
}

// gpuTypo reports whether a model-looking word is nearer a GPU than any
// model ("rtx4080ti"): it then gets the GPU's "did you mean".
func gpuTypo(tok string) bool {
	if strings.Contains(tok, "/") {
		return false
	}
	if _, sized := models.SizeInName(tok); sized {
		return false
	}
	g := catalog.SuggestGPU(tok)
	if g == "" || !NearName(tok, g) {
		return false
	}
	m := catalog.SuggestModel(tok)
	l := strings.ToLower(tok)
	return m == "" || !NearName(tok, m) || suggest.Distance(l, strings.ToLower(g)) <= suggest.Distance(l, strings.ToLower(m))
}

// modelSpelling rewrites an Ollama tag ("qwen3:8b", "llama3.1:70b-instruct-q4_K_M",
// "gemma3:latest") as the model name it stands for ("qwen3-8b",
// "llama3.1-70b", "gemma3"); other words are returned unchanged.
func modelSpelling(tok string) string {
	name, tag, ok := strings.Cut(tok, ":")
	if !ok || strings.Contains(tag, ":") || strings.HasPrefix(tag, "//") || name == "" {
		return tok
	}
	if strings.EqualFold(tag, "latest") {
		return name
	}
	size, _, _ := strings.Cut(tag, "-")
	if _, ok := catalog.ParseSize(size); ok {
		return name + "-" + size
	}
	return tok
}

// resolveModelRef looks up the model word the catalog did not hold. With
// no resolver (ParseQuery) it is a *QueryError with the catalog's
// suggestion; with one, the resolver's answer or error.
func (p *parsedQuery) resolveModelRef(ctx context.Context, resolver ModelResolver) error {
	if p.modelRef == "" {
		return nil
	}
	ref := models.RepoRef(modelSpelling(p.modelRef))
	if resolver == nil {
		err := Errorf(p.modelRef, "unknown model '%s': not in the catalog", ShowToken(p.modelRef))
		if family := catalog.FamilyModels(ref); len(family) > 0 {
			err.Reason += " — which one? " + strings.Join(family, ", ")
		} else if sug := catalog.SuggestModel(ref); sug != "" && NearName(ref, sug) {
			err.Suggestion = sug
		} else {
			err.Reason += "; give its size instead (e.g. 7b)"
		}
		return err
	}
	res, err := resolver.Resolve(ctx, ref)
	if err != nil {
		return err
	}
	if !strings.EqualFold(ref, p.modelRef) {
		res.Notes = append([]string{"'" + ShowToken(p.modelRef) + "' read as " + ref}, res.Notes...)
	}
	p.model, p.modelToken, p.resolved = &res.Model, p.modelRef, &res
	return nil
}

// maxModelWords is the longest model name read across words ("nemotron
// 3 nano 30b a3b").
const maxModelWords = 5

// modelWindow reads a model name written in several words at tokens[i]
// ("llama 3 8b", "Llama 3.1 8B Instruct", "qwen 2.5 14b"), longest first:
// the catalog model it names, or, when the catalog has none and the words
// end in a size, the words joined as a model name for the resolver
// ("llama 3.2 8b" → llama-3.2-8b: a Hub lookup, never another size or
// generation from the catalog). The first word is a name, the others are
// name parts, version numbers or sizes, and a size must be the model's.
func modelWindow(tokens []string, i int) (ref string, m *catalog.Model, n int, ok bool) {
	if !modelNameWord(tokens[i]) {
		return "", nil, 0, false
	}
	longest := 1
	for longest < min(maxModelWords, len(tokens)-i) && modelPartWord(tokens[i+longest]) {
		longest++
	}
	for n := longest; n >= 2; n-- {
		words := tokens[i : i+n]
		found, ok := catalog.LookupModel(strings.Join(words, " "))
		if ok && sizesMatch(found, words) && lastWordCounts(found, words) {
			return "", &found, n, true
		}
	}
	for n := longest; n >= 2; n-- {
		words := tokens[i : i+n]
		if _, sized := catalog.ParseSize(words[n-1]); !sized {
			continue
		}
		if joined := strings.Join(words, "-"); looksLikeModel(joined) {
			return joined, nil, n, true
		}
	}
	return "", nil, 0, false
}

// lastWordCounts reports whether the last of words belongs to the name
// found: without it the words name no model or another one, or it is the
// model's size or a variant or storage word of letters only ("instruct",
// "awq"). The catalog finds "llama-2-70b" inside "llama-2-70b 8xh100" and
// "qwen3-8b ultra"; the count, the GPU and a stray word are not part of
// the name.
func lastWordCounts(found catalog.Model, words []string) bool {
	last := words[len(words)-1]
	if prev, ok := catalog.LookupModel(strings.Join(words[:len(words)-1], " ")); !ok || prev.Name != found.Name {
		return true
	}
	if _, sized := catalog.ParseSize(last); sized || nameHasSize(found, last) {
		return true // a size, or a part of the name ("8x7b", "a3b")
	}
	return strings.IndexFunc(last, func(r rune) bool { return !unicode.IsLetter(r) }) < 0 && catalog.NameEnding(last)
}

// modelNameWord is a word that can start a model name: it has letters,
// is not a word of the grammar, a GPU, a size or a Hub id (read alone).
func modelNameWord(w string) bool {
	if !wordLike(w) || strings.ContainsAny(w, "=/:") || isVocabularyWord(w) {
		return false
	}
	if _, ok := catalog.ParseSize(w); ok {
		return false
	}
	if _, ok := catalog.LookupGPU(w); ok || countedGPUWord(w) {
		return false
	}
	_, budget := parseBudgetGPU(strings.ToLower(w))
	return !budget
}

// countedGPUWord reports a GPU count glued to a GPU or budget ("8xh100",
// "2x24gb"), whatever the count: never a model's name.
func countedGPUWord(w string) bool {
	c, ok := cutGPUCount(strings.ToLower(w))
	if !ok {
		return false
	}
	_, gpu := catalog.LookupGPU(c.gpu)
	_, budget := parseBudgetGPU(c.gpu)
	return gpu || budget
}

// versionRE matches the version part of a model name: 3, 3.1, 2.5, v3.
var versionRE = regexp.MustCompile(`^[vV]?\d+(\.\d+)?$`)

// modelPartWord can continue a model name: a name word, a version number,
// a size (8b, 8x7b, a3b) or a variant word the catalog drops (instruct).
func modelPartWord(w string) bool {
	if strings.ContainsAny(w, "=/:") || isVocabularyWord(w) {
		return false
	}
	if _, ok := catalog.ParseSize(w); ok {
		return true
	}
	if _, ok := catalog.LookupGPU(w); ok {
		return false
	}
	if countedGPUWord(w) {
		return false // "8xh100"
	}
	if _, ok := budgetWord(w); ok {
		return false
	}
	return versionRE.MatchString(w) || wordLike(w)
}

// sizesMatch reports whether every size among words is the model's own:
// its parameter count or active parameters within 30%, or a size its
// name carries ("17b" of Llama-4-Scout-17B-16E). "llama-2-7b 13b" is two
// models, not one.
func sizesMatch(m catalog.Model, words []string) bool {
	for _, w := range words {
		n, ok := catalog.ParseSize(w)
		if !ok {
			continue
		}
		if !nearSize(n, m.Params) && !nearSize(n, m.ActiveParams()) && !nameHasSize(m, w) {
			return false
		}
	}
	return true
}

func nearSize(a, b int64) bool {
	if a <= 0 || b <= 0 {
		return false
	}
	r := float64(a) / float64(b)
	return r > 1/1.3 && r < 1.3
}

// nameHasSize reports whether part is a dash-separated part of the
// model's name, id or an alias.
func nameHasSize(m catalog.Model, size string) bool {
	size = strings.ToLower(size)
	for _, n := range append([]string{m.Name, m.HFID}, m.Aliases...) {
		for _, part := range strings.FieldsFunc(strings.ToLower(n), func(r rune) bool { return r == '-' || r == '_' || r == '/' }) {
			if part == size {
				return true
			}
		}
	}
	return false
}

// isVocabularyWord reports whether w is a word the grammar reads as
// something other than a model: a method, a setting or its bare value, a
// filler or a question word.
func isVocabularyWord(w string) bool {
	l := strings.ToLower(w)
	norm := strings.ReplaceAll(l, "_", "-")
	if _, ok := methodNames[l]; ok {
		return true
	}
	if _, ok := looseMethodWords[l]; ok {
		return true
	}
	if fillerWords[l] || questionWords[l] || canonicalKey(l) != "" {
		return true
	}
	if _, ok := bareSetting(norm); ok {
		return true
	}
	_, _, keyed := keyedSetting(norm)
	return keyed
}

// modelValue reads model=NAME (and vLLM's --model NAME): a catalog name,
// a size, or a name or Hub id for the resolver.
func (p *parsedQuery) modelValue(v string) error {
	if m, ok := catalog.LookupModel(modelSpelling(v)); ok {
		return p.setModel(m, v)
	}
	if n, ok := catalog.ParseSize(strings.ToLower(v)); ok {
		return p.setModel(catalog.ModelForSize(n), v)
	}
	if looksLikeModel(v) {
		if err := p.secondModel(v); err != nil {
			return err
		}
		p.modelRef = v
		return nil
	}
	return &Error{Token: v, Reason: "unknown model '" + ShowToken(v) + "'", Suggestion: catalog.SuggestModel(v)}
}

// LocalResolver is a ModelResolver that can tell from its store alone
// whether a name resolves without the Hub (models.Resolver).
type LocalResolver interface {
	ModelResolver
	ResolvesWithoutHub(ctx context.Context, ref string) bool
}

// Sentinels of HubLookup's probe: the parse stops at the model either way.
var (
	errNeedsHub   = errors.New("the model must be looked up on the Hub")
	errLocalModel = errors.New("the model resolves without the Hub")
)

// hubProbe stands in for the resolver while a query is read for
// HubLookup: it never resolves, it records whether resolving would need
// the Hub.
type hubProbe struct {
	r   LocalResolver
	ref string
}

func (p *hubProbe) Resolve(ctx context.Context, ref string) (models.Resolution, error) {
	if p.r.ResolvesWithoutHub(ctx, ref) {
		return models.Resolution{}, errLocalModel
	}
	p.ref = ref
	return models.Resolution{}, errNeedsHub
}

// HubLookup reports the model a /vram query names that r would have to
// look up on the Hub (in neither the catalog nor r's cache), reading the
// query as VRAM does (questions included), without calling the Hub. A
// query the grammar refuses, or whose model resolves locally, needs none.
func HubLookup(ctx context.Context, query string, r LocalResolver) (ref string, needed bool) {
	probe := &hubProbe{r: r}
	_, err := ParseWith(ctx, query, probe, nil)
	if errors.Is(err, errNeedsHub) {
		return probe.ref, true
	}
	return "", false
}
