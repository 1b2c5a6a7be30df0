// Package cli is the plumbing every `vrambot` subcommand shares: the
// process's streams and environment, usage errors and the exit status they
// map to (docs/contracts.md §1), flags that may stand anywhere among the
// arguments, and printing a reply as text or JSON. The subcommands
// themselves live in command/<name>; cmd/vrambot dispatches to them.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/vrambot/vrambot/config"
	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/reply"
)

// Env is what every subcommand gets: the process's streams and a view of
// its environment.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Lookup         config.Lookup
}

// UsageError is bad input or usage: exit status 2 with a one-line reason
// and a suggestion (docs/contracts.md §1).
type UsageError struct {
	Reason, Hint string
}

func (e *UsageError) Error() string {
	if e.Hint == "" {
		return e.Reason
	}
	return e.Reason + " — " + e.Hint
}

// Usagef is a UsageError with a formatted reason.
func Usagef(hint, format string, args ...any) error {
	return &UsageError{Reason: fmt.Sprintf(format, args...), Hint: hint}
}

// ParseFlags parses flags that may appear before, between or after the
// positional arguments ("vrambot vram 7b lora --json") and returns the
// positional ones.
func ParseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, Usagef("run 'vrambot help' for the flags", "%s: %v", fs.Name(), err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// IsUsage reports whether err is the user's to fix (exit status 2): a
// usage error, or a domain error of kind Invalid or NotFound
// (internal/errs).
func IsUsage(err error) bool {
	var ue *UsageError
	if errors.As(err, &ue) {
		return true
	}
	k := errs.KindOf(err)
	return k == errs.Invalid || k == errs.NotFound
}

// ExitStatus prints err (one line) and maps it to the exit status of
// docs/contracts.md §1: 0 success, 2 the user's to fix, 1 anything else.
func ExitStatus(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	msg := strings.ReplaceAll(err.Error(), "\n", "; ")
	fmt.Fprintf(stderr, "vrambot: %s\n", msg)
	if IsUsage(err) {
		return 2
	}
	return 1
}

// PrintJSON writes v as indented JSON, the form of every --json answer.
func PrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}

// Print writes result as JSON when asJSON is set, else the reply as text.
func Print(e Env, r reply.Reply, result any, asJSON bool) error {
	if asJSON {
		return PrintJSON(e.Stdout, result)
	}
	_, err := io.WriteString(e.Stdout, reply.Text(r))
	return err
}

// InputError is what the CLI says when a file or stdin named on its
// command line could not be read: the user's to fix (exit 2), or, when a
// signal ended the wait, a runtime failure (exit 1). nil for nil.
func InputError(what, hint string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: interrupted before the input was read", what)
	}
	return Usagef(hint, "%s: %v", what, err)
}
