package main

import (
	"context"
	"errors"
	"flag"

	"github.com/vrambot/vrambot/commands"
	"github.com/vrambot/vrambot/internal/readfile"
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
	text, err := readPaste(ctx, e, files)
	if err != nil {
		return err
	}
	a, err := newApp(e, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	return printReply(e, commands.OOM(ctx, string(text), a.book), *asJSON)
}

// readPaste reads the paste from the file named, or stdin: a regular file
// only, the first maxPasteBytes (the parser keeps the head and tail of
// longer pastes anyway), given up on SIGTERM or SIGINT whatever the read
// waits on (internal/readfile).
func readPaste(ctx context.Context, e env, files []string) ([]byte, error) {
	var text []byte
	var err error
	if len(files) == 1 && files[0] != "-" {
		text, err = readfile.File(ctx, files[0], maxPasteBytes)
	} else {
		text, err = readfile.Read(ctx, e.stdin, maxPasteBytes)
	}
	if errors.Is(err, readfile.ErrTooLarge) {
		err = nil
	}
	return text, inputError("oom", "give a readable file, or pipe the paste on stdin", err)
}
