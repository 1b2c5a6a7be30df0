package oom

import (
	"context"
	"errors"
	"flag"

	"github.com/vrambot/vrambot/internal/cli"
	"github.com/vrambot/vrambot/internal/readfile"
	"github.com/vrambot/vrambot/query"
)

// maxPasteBytes caps what `vrambot oom` reads; the parser keeps the head and
// tail of longer pastes anyway, and this keeps memory bounded on any input.
const maxPasteBytes = 64 << 20

// Deps are what the diagnosis needs from the program: the price book for
// the GPUs that would hold the workload, and the model resolver for a job
// pasted with its traceback (nil: none; the catalog alone).
type Deps struct {
	Offers OfferFinder
	Models query.ModelResolver
}

// Run is `vrambot oom [--json] [FILE|-]` (docs/contracts.md §1): the paste
// from FILE or stdin, diagnosed as text or as its Result in JSON.
func Run(ctx context.Context, e cli.Env, args []string, open func() (Deps, error)) error {
	fs := flag.NewFlagSet("oom", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	files, err := cli.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(files) > 1 {
		return cli.Usagef("give one file, or pipe the paste on stdin", "oom: %d files given", len(files))
	}
	text, err := readPaste(ctx, e, files)
	if err != nil {
		return err
	}
	deps, err := open()
	if err != nil {
		return err
	}
	a := Diagnose(ctx, string(text), deps)
	return cli.Print(e, a.Reply, a.Result, *asJSON)
}

// readPaste reads the paste from the file named, or stdin: a regular file
// only, the first maxPasteBytes (the parser keeps the head and tail of
// longer pastes anyway), given up on SIGTERM or SIGINT whatever the read
// waits on (internal/readfile).
func readPaste(ctx context.Context, e cli.Env, files []string) ([]byte, error) {
	var text []byte
	var err error
	if len(files) == 1 && files[0] != "-" {
		text, err = readfile.File(ctx, files[0], maxPasteBytes)
	} else {
		text, err = readfile.Read(ctx, e.Stdin, maxPasteBytes)
	}
	if errors.Is(err, readfile.ErrTooLarge) {
		err = nil
	}
	return text, cli.InputError("oom", "give a readable file, or pipe the paste on stdin", err)
}
