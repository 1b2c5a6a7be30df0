package models

import (
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
	Outcome    string // "looked up on the Hub: no model acme/x on the Hub"
	Suggestion string // a catalog model that matches, or ""
	Err        error  // the Hub's error, for the log
}

// Error is the one-line message, e.g. "unknown model 'acme/x': not in the
// catalog — looked up on the Hub: no model acme/x on the Hub".
func (e *LookupError) Error() string {
	msg := "unknown model '" + safetext.OneLine(e.Ref, maxRefShown) + "': not in the catalog — " + e.Outcome
	if e.Suggestion != "" {
		msg += " — did you mean '" + e.Suggestion + "'?"
	}
	return msg
}

func (e *LookupError) Unwrap() error { return e.Err }

// ErrorKind is the kind for the edges: NotFound (exit 2) for a model the
// Hub does not have or will not show, Unavailable (exit 1) when it could
// not be asked, Invalid for a config.json that cannot be read.
func (e *LookupError) ErrorKind() errs.Kind { return e.Kind }
