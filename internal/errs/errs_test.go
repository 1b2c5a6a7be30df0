package errs_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/internal/errs"
)

type tokenError struct{ tok string }

func (e tokenError) Error() string      { return "unknown word '" + e.tok + "'" }
func (tokenError) ErrorKind() errs.Kind { return errs.Invalid }

func TestKindOfAndUserMessage(t *testing.T) {
	secret := errors.New("dial tcp 10.0.0.7:6379: connection refused")
	tests := []struct {
		name     string
		err      error
		kind     errs.Kind
		message  string
		noSecret bool
	}{
		{"plain error is internal", errors.New("boom"), errs.Internal, errs.InternalMessage, true},
		{"invalid", errs.New(errs.Invalid, "bs=0 must be at least 1"), errs.Invalid, "bs=0 must be at least 1", false},
		{"wrapped cause stays in the log", errs.Wrap(errs.Unavailable, secret, "the price cache is unreachable"), errs.Unavailable, "the price cache is unreachable", true},
		{"outer fmt wrap keeps the kind", fmt.Errorf("vram: %w", errs.New(errs.NotFound, "no such model")), errs.NotFound, "no such model", false},
		{"own type with a kind", fmt.Errorf("parse: %w", tokenError{"lorra"}), errs.Invalid, "unknown word 'lorra'", false},
		{"deadline is unavailable", fmt.Errorf("hub: %w", context.DeadlineExceeded), errs.Unavailable, "", true},
		{"internal wrap hides its message", errs.Wrap(errs.Internal, secret, "estimator overflow"), errs.Internal, errs.InternalMessage, true},
		{"joined finds the kind", errors.Join(errors.New("x"), errs.New(errs.Invalid, "bad")), errs.Invalid, "bad", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errs.KindOf(tt.err); got != tt.kind {
				t.Errorf("KindOf = %v, want %v", got, tt.kind)
			}
			msg := errs.UserMessage(tt.err)
			if tt.message != "" && msg != tt.message {
				t.Errorf("UserMessage = %q, want %q", msg, tt.message)
			}
			if tt.noSecret && strings.Contains(msg, "10.0.0.7") {
				t.Errorf("UserMessage leaks the cause: %q", msg)
			}
			if msg == "" {
				t.Error("UserMessage is empty")
			}
		})
	}
}

func TestWrapNil(t *testing.T) {
	if err := errs.Wrap(errs.Invalid, nil, "x"); err != nil {
		t.Fatalf("Wrap(nil) = %v", err)
	}
	if errs.KindOf(nil) != errs.Internal || errs.UserMessage(nil) != "" || errs.Is(nil, errs.Internal) {
		t.Fatal("nil error must have no message and match no kind")
	}
}

func TestErrorTextKeepsCauseForLogs(t *testing.T) {
	err := errs.Wrap(errs.Unavailable, errors.New("EOF"), "Hub unreachable")
	if err.Error() != "Hub unreachable: EOF" {
		t.Fatalf("Error() = %q", err.Error())
	}
	if !errors.Is(err, err.(*errs.Error).Err) {
		t.Fatal("Unwrap must expose the cause")
	}
}
