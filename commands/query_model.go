package commands

import (
	"context"
	"slices"
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
	if _, alias := keyAliases[head]; alias || slices.Contains(queryKeys, head) {
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
	for _, e := range []queryEnum{precisionEnum, optimEnum, offloadEnum, targetsEnum, attnEnum, kvEnum, engineEnum, frameworkEnum} {
		if _, ok := e.values[norm]; ok {
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
	if g == "" || !nearName(tok, g) {
		return false
	}
	m := catalog.SuggestModel(tok)
	l := strings.ToLower(tok)
	return m == "" || !nearName(tok, m) || suggest.Distance(l, strings.ToLower(g)) <= suggest.Distance(l, strings.ToLower(m))
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
		err := queryErr(p.modelRef, "unknown model '%s': not in the catalog", showToken(p.modelRef))
		if sug := catalog.SuggestModel(ref); sug != "" && nearName(ref, sug) {
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
		res.Notes = append([]string{"'" + showToken(p.modelRef) + "' read as " + ref}, res.Notes...)
	}
	p.model, p.modelToken, p.resolved = &res.Model, p.modelRef, &res
	return nil
}
