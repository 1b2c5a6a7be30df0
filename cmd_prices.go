package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/vrambot/vrambot/commands"
)

func runPrices(ctx context.Context, e env, args []string) error {
	fs := flag.NewFlagSet("prices", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	refresh := fs.Bool("refresh", false, "fetch every configured source into the cache first")
	gpu := fs.String("gpu", "", "only this GPU or family (e.g. h100 for SXM, PCIe and NVL; a100 80gb; rtx 4090)")
	minMemory := fs.String("min-memory", "", "only GPUs with at least this much memory each (e.g. 24GiB; a bare 48 is 48 GB)")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	q := commands.PricesQuery{GPU: *gpu}
	switch {
	case len(rest) > 0 && *gpu != "":
		// "--gpu rtx 4090" unquoted: the words after --gpu are the name.
		q.GPU = strings.Join(append([]string{*gpu}, rest...), " ")
	case len(rest) > 0:
		return usagef("use --gpu NAME or --min-memory SIZE", "prices: unexpected argument %q", rest[0])
	}
	if *minMemory != "" {
		if q.MinMemoryBytes, q.MinMemoryNote, err = commands.ParseMemory(*minMemory); err != nil {
			return usagef("e.g. --min-memory 24GiB", "prices: --min-memory: %v", err)
		}
	}
	a, err := newApp(e, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	if *refresh {
		// A failing source keeps its last good data; the listing below marks it stale.
		for _, st := range a.book.Refresh(ctx) {
			if st.Error != nil {
				fmt.Fprintf(e.stderr, "vrambot: prices: source %s: %s\n", st.Name, *st.Error)
			}
		}
		if a.cfg.RedisURL == "" {
			fmt.Fprintln(e.stderr, "vrambot: prices: REDIS_URL is not set, so the refreshed prices live only for this run")
		}
	}
	r, err := commands.Prices(ctx, a.book, q)
	if err != nil {
		return err
	}
	return printReply(e, r, *asJSON)
}
