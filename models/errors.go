package models

import (
	"strings"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/internal/safetext"
)

// maxRefShown bounds how much of a model reference a message echoes.
const maxRefShown = 100

// LookupError is a model that the catalog, the cache and the Hub could not
// resolve. Its message is for the user: what was asked, that the catalog
// does not hold it, what the Hub said (found, not found, gated,
// unreachable, offline) and, when the catalog holds a real match, a
// suggestion. It never jumps to another model on its own.
type LookupError struct {
	Ref        string
	Kind       errs.Kind
	Outcome    string   // "looked up on the Hub: no model acme/x on the Hub"
	Suggestion string   // a catalog model that matches, or ""
	Family     []string // the catalog's models of a family named without a size ("llama3")
	Err        error    // the Hub's error, for the log
}

// Error is the one-line message, e.g. "unknown model 'acme/x': not in the
// catalog — looked up on the Hub: no model acme/x on the Hub".
func (e *LookupError) Error() string {
	msg := "unknown model '" + safetext.OneLine(e.Ref, maxRefShown) + "': not in the catalog — " + e.Outcome
	switch {
	case len(e.Family) > 0:
		msg += " — which one? " + strings.Join(e.Family, ", ")
	case e.Suggestion != "":
		msg += " — did you mean '" + e.Suggestion + "'?"
	}
	return msg
}

// lookupError is the refusal of ref with what the catalog holds near it: the
// family's models when ref is a family without a size (a spelling
// suggestion would pick one of them, or jump to another family:
// "mistral" is not "mixtral"), else a suggestion.
func lookupError(ref string, kind errs.Kind, outcome string, cause error) *LookupError {
	e := &LookupError{Ref: ref, Kind: kind, Outcome: outcome, Err: cause}
	if e.Family = catalog.FamilyModels(ref); len(e.Family) == 0 {
		e.Suggestion = catalog.SuggestModel(ref)
	}
	return e
}

func (e *LookupError) Unwrap() error { return e.Err }

// ErrorKind is the kind for the edges: NotFound (exit 2) for a model the
// Hub does not have or will not show, Unavailable (exit 1) when it could
// not be asked, Invalid for a config.json that cannot be read.
func (e *LookupError) ErrorKind() errs.Kind { return e.Kind }
