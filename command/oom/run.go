package oom

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/vrambot/vrambot/internal/cli"
)

// maxPasteBytes caps what `vrambot oom` reads; the parser keeps the head and
// tail of longer pastes anyway, and this keeps memory bounded on any input.
const maxPasteBytes = 64 << 20

// Deps are what the diagnosis needs from the program: the price book for
// the GPUs that would hold the workload (nil: none).
type Deps struct {
	Offers OfferFinder
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
	in := e.Stdin
	if len(files) == 1 && files[0] != "-" {
		f, err := os.Open(files[0])
		if err != nil {
			return cli.Usagef("give a readable file, or pipe the paste on stdin", "oom: %v", err)
		}
		defer f.Close()
		in = f
	}
	text, err := io.ReadAll(io.LimitReader(in, maxPasteBytes))
	if err != nil {
		return fmt.Errorf("oom: reading the paste: %w", err)
	}
	deps, err := open()
	if err != nil {
		return err
	}
	a := Diagnose(ctx, string(text), deps.Offers)
	return cli.Print(e, a.Reply, a.Result, *asJSON)
}
