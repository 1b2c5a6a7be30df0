package main

import (
	"context"
	"flag"

	"github.com/vrambot/vrambot/commands"
)

// runModels is `vrambot models [--json] [WORD]`: the embedded catalog, or
// the models matching WORD. It reads no configuration and calls no service.
func runModels(_ context.Context, e env, args []string) error {
	fs := flag.NewFlagSet("models", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 1 {
		return usagef("give one word, e.g. vrambot models qwen3", "models: %d words given", len(rest))
	}
	word := ""
	if len(rest) == 1 {
		word = rest[0]
	}
	r, err := commands.Models(word)
	if err != nil {
		return err
	}
	return printReply(e, r, *asJSON)
}
