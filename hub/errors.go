package hub

import (
	"errors"
	"time"

	"github.com/vrambot/vrambot/internal/errs"
)

// Reason is what went wrong with a Hub request, finer than its errs.Kind,
// so the resolver can decide between refusing and falling back.
type Reason string

// Reasons. The Hub's own error codes (X-Error-Code) are mapped as
// huggingface_hub's hf_raise_for_status does (docs/hub-api.md §4).
const (
	// ReasonNoRepo: no such repo (404, RepoNotFound), or a 401 that the Hub
	// also gives for a private repo when no token is sent.
	ReasonNoRepo Reason = "no-repo"
	// ReasonNoFile: the repo exists but has no config.json (EntryNotFound).
	ReasonNoFile Reason = "no-file"
	// ReasonGated: a gated repo's files need a token with granted access.
	ReasonGated Reason = "gated"
	// ReasonForbidden: the token lacks permission for a private repo (403).
	ReasonForbidden Reason = "forbidden"
	// ReasonBadToken: the Hub refused HF_TOKEN itself.
	ReasonBadToken Reason = "bad-token"
	// ReasonDisabled: the repo was disabled by the Hub.
	ReasonDisabled Reason = "disabled"
	// ReasonRateLimited: HTTP 429.
	ReasonRateLimited Reason = "rate-limited"
	// ReasonTimeout: no complete answer before the deadline.
	ReasonTimeout Reason = "timeout"
	// ReasonUnreachable: DNS, connection or TLS failure.
	ReasonUnreachable Reason = "unreachable"
	// ReasonServer: a 5xx, or a status the client does not expect.
	ReasonServer Reason = "server"
	// ReasonTooLarge: an answer over its size cap.
	ReasonTooLarge Reason = "too-large"
	// ReasonNotJSON: an answer that is not the JSON the endpoint returns.
	ReasonNotJSON Reason = "not-json"
)

// kinds maps each reason to the edge's error kind (internal/errs): the
// CLI exits 2 for NotFound and Invalid, 1 for Unavailable.
var kinds = map[Reason]errs.Kind{
	ReasonNoRepo: errs.NotFound, ReasonNoFile: errs.NotFound, ReasonGated: errs.NotFound,
	ReasonForbidden: errs.NotFound, ReasonDisabled: errs.NotFound, ReasonBadToken: errs.Invalid,
	ReasonRateLimited: errs.Unavailable, ReasonTimeout: errs.Unavailable, ReasonUnreachable: errs.Unavailable,
	ReasonServer: errs.Unavailable, ReasonTooLarge: errs.Invalid, ReasonNotJSON: errs.Invalid,
}

// Error is a failed Hub request. Message is written for the user and never
// holds the token, a response body or a URL with credentials; Err, the
// cause, is for the log.
type Error struct {
	Reason  Reason
	Repo    string // the repo id, or the searched name
	Status  int    // HTTP status, 0 when there was no answer
	Message string
	// RetryAfter is when the Hub said to ask again (Retry-After, or the
	// RateLimit header's t=), 0 when it did not say.
	RetryAfter time.Duration
	Err        error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return e.Message
	}
	return e.Message + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorKind is the kind for the edges (internal/errs).
func (e *Error) ErrorKind() errs.Kind { return kinds[e.Reason] }

// ReasonOf returns the Reason of a Hub error in err's chain, "" if none.
func ReasonOf(err error) Reason {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Reason
	}
	return ""
}
