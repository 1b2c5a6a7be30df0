package prices

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/vrambot/vrambot/internal/cli"
	"github.com/vrambot/vrambot/pricing"
)

// Deps are what a listing needs from the program: the price book, and
// whether its cache outlives this run (a store configured).
type Deps struct {
	Book       *pricing.Book
	Persistent bool
}

// Run is `vrambot prices [--json] [--refresh] [--gpu NAME] [--min-memory
// 24GiB]` (docs/contracts.md §1).
func Run(ctx context.Context, e cli.Env, args []string, open func() (Deps, error)) error {
	fs := flag.NewFlagSet("prices", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	refresh := fs.Bool("refresh", false, "fetch every configured source into the cache first")
	gpu := fs.String("gpu", "", "only this GPU or family (e.g. h100 for SXM, PCIe and NVL; a100 80gb; rtx 4090)")
	minMemory := fs.String("min-memory", "", "only GPUs with at least this much memory each (e.g. 24GiB; a bare 48 is 48 GB)")
	rest, err := cli.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	q := Query{GPU: *gpu}
	switch {
	case len(rest) > 0 && *gpu != "":
		// "--gpu rtx 4090" unquoted: the words after --gpu are the name.
		q.GPU = strings.Join(append([]string{*gpu}, rest...), " ")
	case len(rest) > 0:
		return cli.Usagef("use --gpu NAME or --min-memory SIZE", "prices: unexpected argument %q", rest[0])
	}
	if *minMemory != "" {
		if q.MinMemoryBytes, q.MinMemoryNote, err = ParseMemory(*minMemory); err != nil {
			return cli.Usagef("e.g. --min-memory 24GiB", "prices: --min-memory: %v", err)
		}
	}
	deps, err := open()
	if err != nil {
		return err
	}
	if *refresh {
		// A failing source keeps its last good data; the listing below marks it stale.
		for _, st := range deps.Book.Refresh(ctx) {
			if st.Error != nil {
				fmt.Fprintf(e.Stderr, "vrambot: prices: source %s: %s\n", st.Name, *st.Error)
			}
		}
		if !deps.Persistent {
			fmt.Fprintln(e.Stderr, "vrambot: prices: REDIS_URL is not set, so the refreshed prices live only for this run")
		}
	}
	a, err := List(ctx, deps.Book, q)
	if err != nil {
		return err
	}
	return cli.Print(e, a.Reply, a.Result, *asJSON)
}
