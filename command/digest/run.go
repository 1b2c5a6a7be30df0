package digest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/vrambot/vrambot/digest"
	"github.com/vrambot/vrambot/digest/chart"
	"github.com/vrambot/vrambot/digest/schedule"
	"github.com/vrambot/vrambot/internal/cli"
	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/reply"
)

// Deps are what the digest needs from the program: a scheduler that
// composes digests and, when NoPost is "", posts them.
type Deps struct {
	Scheduler *schedule.Scheduler
	// NoPost says why a digest asked to be posted is printed instead.
	NoPost string
}

// Run is `vrambot digest [--json] [--dry-run] [--window 24h|7d] [--at
// RFC3339] [--chart FILE]` (docs/contracts.md §1). open(post) builds the
// scheduler; post is false for a dry run.
func Run(ctx context.Context, e cli.Env, args []string, open func(post bool) (Deps, error)) error {
	fs := flag.NewFlagSet("digest", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	dryRun := fs.Bool("dry-run", false, "compose and print, do not post")
	windowFlag := fs.String("window", "24h", "how far back to look: 24h, 36h, 7d, 1d12h")
	atFlag := fs.String("at", "", "end of the window, RFC 3339 (default now)")
	chartFile := fs.String("chart", "", "write the chart as PNG to this file")
	rest, err := cli.ParseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return cli.Usagef("see vrambot help", "digest: unexpected argument %q", rest[0])
	}
	window, err := digest.ParseWindow(*windowFlag)
	if err != nil {
		return cli.Usagef("e.g. --window 24h or --window 7d", "digest: --window: %s", errs.UserMessage(err))
	}
	at := time.Now()
	if *atFlag != "" {
		if at, err = time.Parse(time.RFC3339, *atFlag); err != nil {
			return cli.Usagef("e.g. --at 2026-11-29T09:00:00Z", "digest: --at %q is not RFC 3339", *atFlag)
		}
	}
	deps, err := open(!*dryRun)
	if err != nil {
		return err
	}
	if !*dryRun && deps.NoPost != "" {
		fmt.Fprintf(e.Stderr, "vrambot: digest: %s: printing instead of posting (dry run)\n", deps.NoPost)
		*dryRun = true
	}
	sched := deps.Scheduler
	d, err := sched.Compose(ctx, at, window)
	if err != nil {
		return fmt.Errorf("digest: %w", err)
	}
	if *chartFile != "" {
		if err := writeChart(*chartFile, d); err != nil {
			return err
		}
	}
	if !*dryRun {
		if _, err := sched.Post(ctx, d); err != nil {
			return fmt.Errorf("digest: %w", err)
		}
	}
	if *asJSON {
		return cli.PrintJSON(e.Stdout, d)
	}
	texts := []string{reply.Text(d.Reply())}
	for _, t := range d.ThreadReplies() {
		texts = append(texts, reply.Text(t))
	}
	_, err = io.WriteString(e.Stdout, strings.Join(texts, "\n---\n\n"))
	return err
}

// writeChart writes the digest's chart to path. A window without GPU
// memory samples has nothing to draw: that is an error, so a script asking
// for the chart learns it got none.
func writeChart(path string, d digest.Digest) error {
	png, err := d.ChartPNG()
	switch {
	case errors.Is(err, chart.ErrNoData):
		return fmt.Errorf("digest: --chart: no GPU memory samples in the window to draw (is VRAMBOT_PROMETHEUS_URL set, and does it scrape dcgm-exporter?)")
	case err != nil:
		return fmt.Errorf("digest: --chart: %w", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		return fmt.Errorf("digest: --chart: %w", err)
	}
	return nil
}
