package models

import (
	"context"
	"flag"

	"github.com/vrambot/vrambot/internal/cli"
)

// Run is `vrambot models [--json] [WORD]` (docs/contracts.md §1): the
// embedded catalog, or the models matching WORD. It reads no
// configuration and calls no service.
func Run(_ context.Context, e cli.Env, args []string) error {
	fs := flag.NewFlagSet("models", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	rest, err := cli.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 1 {
		return cli.Usagef("give one word, e.g. vrambot models qwen3", "models: %d words given", len(rest))
	}
	word := ""
	if len(rest) == 1 {
		word = rest[0]
	}
	a, err := List(word)
	if err != nil {
		return err
	}
	return cli.Print(e, a.Reply, a.Result, *asJSON)
}
