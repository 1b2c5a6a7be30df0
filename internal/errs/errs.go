// Package errs gives errors a kind, so that the edges (the Slack bot, the
// CLI) decide what a user sees without inspecting where an error came from.
// It follows the pattern of Upspin's errors package and Ben Johnson's WTF
// Dial (docs/style.md): the code that knows what went wrong says which kind
// it is; the code that talks to people maps kinds to messages.
//
// Message is the part written for a person. For Invalid, NotFound and
// Unavailable errors it is shown to the user; an Internal error's text and
// any wrapped cause are logged only, and the user sees InternalMessage.
package errs

import (
	"context"
	"errors"
	"fmt"
)

// Kind classifies an error by what the user can do about it.
type Kind uint8

// The kinds. The zero value is Internal, so an error nobody classified is
// never shown to a user.
const (
	// Internal is a defect or an unexpected failure: logged, never shown.
	Internal Kind = iota
	// Invalid is bad input: the message says what to change.
	Invalid
	// NotFound is a well-formed request for something that does not exist.
	NotFound
	// Unavailable is a service that cannot be reached or timed out: trying
	// again later may work.
	Unavailable
)

// String names the kind for logs and metrics labels.
func (k Kind) String() string {
	switch k {
	case Invalid:
		return "invalid"
	case NotFound:
		return "not_found"
	case Unavailable:
		return "unavailable"
	}
	return "internal"
}

// InternalMessage is what a user sees for an Internal error.
const InternalMessage = "internal error (logged); please try again, and tell the bot's operators if it keeps happening"

// Error is an error with a kind, a message for people and an optional cause.
type Error struct {
	Kind Kind
	// Message is shown to users for every kind but Internal.
	Message string
	// Err is the cause; its text is logged, never shown.
	Err error
}

// Error joins the message and the cause, for logs.
func (e *Error) Error() string {
	switch {
	case e.Err == nil:
		return e.Message
	case e.Message == "":
		return e.Err.Error()
	}
	return e.Message + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// New is an error of kind k with a message for people.
func New(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// Wrap gives err a kind and a message for people; err itself is logged only.
// A nil err gives nil.
func Wrap(k Kind, err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...), Err: err}
}

// Kinded is implemented by error types of their own that carry a kind (a
// query error with its offending token, say), so they need no wrapping.
type Kinded interface {
	error
	ErrorKind() Kind
}

// KindOf is the kind of the outermost classified error in err's chain. An
// unclassified context deadline or cancellation is Unavailable (a call ran
// out of time); anything else unclassified is Internal.
func KindOf(err error) Kind {
	if err == nil {
		return Internal
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch v := e.(type) {
		case *Error:
			return v.Kind
		case Kinded:
			return v.ErrorKind()
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, inner := range j.Unwrap() {
				if k := KindOf(inner); k != Internal {
					return k
				}
			}
			break
		}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return Unavailable
	}
	return Internal
}

// Is reports whether err is of kind k.
func Is(err error, k Kind) bool { return err != nil && KindOf(err) == k }

// UserMessage is what a person may read about err: the message of the
// outermost classified error, or InternalMessage for an Internal one (whose
// detail belongs in the log).
func UserMessage(err error) string {
	if err == nil {
		return ""
	}
	if KindOf(err) == Internal {
		return InternalMessage
	}
	var e *Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	var k Kinded
	if errors.As(err, &k) {
		return k.Error()
	}
	if KindOf(err) == Unavailable {
		return "a service vrambot needs did not answer in time; please try again in a moment"
	}
	return err.Error()
}
