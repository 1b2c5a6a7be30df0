package main

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

	"github.com/vrambot/vrambot/suggest"
)

const usage = `vrambot — GPU memory answers for ML teams

usage:
  vrambot vram    [--json] [--config PATH] QUERY...
                                             estimate, staged fixes, best-priced GPUs
                                             (--config: a local config.json is the model)
  vrambot oom     [--json] [FILE|-]          parse and diagnose an OOM paste (stdin by default)
  vrambot prices  [--json] [--refresh] [--gpu NAME] [--min-memory 24GiB]
  vrambot digest  [--json|--blocks] [--dry-run] [--window 24h|7d] [--at RFC3339] [--chart FILE]
                  [--demo]                   the digest of a simulated day: see it before wiring Prometheus
  vrambot serve                              the Slack bot (+ cron jobs)
  vrambot manifest                           print the Slack app manifest for this config
  vrambot models  [--json] [WORD]            the model catalog (name, id, params, active params, context, source)

models: a catalog name (llama-3.1-8b), a size (8b), or any Hugging Face id
(Qwen/Qwen3-8B), read from its config.json on the Hub (HF_ENDPOINT,
HF_TOKEN for gated repos, HF_HUB_OFFLINE=1 to stay off it).

examples:
  vrambot vram 7b lora a100
  vrambot vram llama-3-8b qlora bs=4 seq=4096 4090
  vrambot vram Qwen/Qwen3-8B lora 4090
  vrambot vram --json --config ./config.json inference h100
  pbpaste | vrambot oom
  vrambot digest --demo --chart demo.png
`

// usageError is bad input or usage: exit status 2 with a one-line reason and
// a suggestion (DESIGN.md §3.1).
type usageError struct {
	reason, hint string
}

func (e *usageError) Error() string {
	if e.hint == "" {
		return e.reason
	}
	return e.reason + " — " + e.hint
}

func usagef(hint, format string, args ...any) error {
	return &usageError{reason: fmt.Sprintf(format, args...), hint: hint}
}

// env is what every subcommand gets.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	lookup         config.Lookup
}

var subcommands = []string{"vram", "oom", "prices", "digest", "serve", "manifest", "models", "help"}

// run executes one CLI invocation and returns the process exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, lookup config.Lookup) int {
	e := env{stdin: stdin, stdout: stdout, stderr: stderr, lookup: lookup}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch name, rest := args[0], args[1:]; name {
	case "vram":
		err = runVRAM(ctx, e, rest)
	case "oom":
		err = runOOM(ctx, e, rest)
	case "prices":
		err = runPrices(ctx, e, rest)
	case "digest":
		err = runDigest(ctx, e, rest)
	case "serve":
		err = runServe(ctx, e, rest)
	case "manifest":
		err = runManifest(ctx, e, rest)
	case "models":
		err = runModels(ctx, e, rest)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		hint := "run 'vrambot help' for the commands"
		if s := closest(name, subcommands); s != "" {
			hint = fmt.Sprintf("did you mean 'vrambot %s'?", s)
		}
		err = usagef(hint, "unknown command %q", name)
	}
	return exitStatus(err, stderr)
}

// exitStatus prints err (one line) and maps it to the §3.1 exit status.
func exitStatus(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	msg := strings.ReplaceAll(err.Error(), "\n", "; ")
	fmt.Fprintf(stderr, "vrambot: %s\n", msg)
	if isUsage(err) {
		return 2
	}
	return 1
}

// parseFlags parses flags that may appear before, between or after the
// positional arguments ("vrambot vram 7b lora --json").
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, usagef("run 'vrambot help' for the flags", "%s: %v", fs.Name(), err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// closest returns the candidate within edit distance 2 of s, or "".
func closest(s string, candidates []string) string {
	best, d := suggest.Closest(strings.ToLower(s), candidates)
	if d > 2 {
		return ""
	}
	return best
}

// isUsage reports whether err is the user's to fix (exit status 2): a usage
// error, or a domain error of kind Invalid or NotFound (internal/errs).
func isUsage(err error) bool {
	var ue *usageError
	if errors.As(err, &ue) {
		return true
	}
	k := errs.KindOf(err)
	return k == errs.Invalid || k == errs.NotFound
}

func printReply(e env, r reply.Reply, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r.Result); err != nil {
			return fmt.Errorf("writing JSON: %w", err)
		}
		return nil
	}
	_, err := io.WriteString(e.stdout, reply.Text(r))
	return err
}
