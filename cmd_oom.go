package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/vrambot/vrambot/commands"
)

// maxPasteBytes caps what `vrambot oom` reads; the parser keeps the head and
// tail of longer pastes anyway, and this keeps memory bounded on any input.
const maxPasteBytes = 64 << 20

func runOOM(ctx context.Context, e env, args []string) error {
	fs := flag.NewFlagSet("oom", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	files, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(files) > 1 {
		return usagef("give one file, or pipe the paste on stdin", "oom: %d files given", len(files))
	}
	in := e.stdin
	if len(files) == 1 && files[0] != "-" {
		f, err := os.Open(files[0])
		if err != nil {
			return usagef("give a readable file, or pipe the paste on stdin", "oom: %v", err)
		}
		defer f.Close()
		in = f
	}
	text, err := io.ReadAll(io.LimitReader(in, maxPasteBytes))
	if err != nil {
		return fmt.Errorf("oom: reading the paste: %w", err)
	}
	a, err := newApp(e, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	return printReply(e, commands.OOM(ctx, string(text), a.book), *asJSON)
}
