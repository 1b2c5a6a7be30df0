package main

import (
	"context"
	"flag"
	"strings"

	"github.com/vrambot/vrambot/commands"
)

func runVRAM(ctx context.Context, e env, args []string) error {
	fs := flag.NewFlagSet("vram", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	query, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(query) == 0 {
		return usagef("e.g. vrambot vram 7b lora a100", "vram: no query given")
	}
	a, err := newApp(e, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	r, err := commands.VRAM(ctx, strings.Join(query, " "), a.book)
	if err != nil {
		return err
	}
	return printReply(e, r, *asJSON)
}
