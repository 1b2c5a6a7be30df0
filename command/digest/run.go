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

	"github.com/vrambot/vrambot/bot"
	"github.com/vrambot/vrambot/digest"
	"github.com/vrambot/vrambot/digest/chart"
	"github.com/vrambot/vrambot/digest/demo"
	"github.com/vrambot/vrambot/digest/schedule"
	"github.com/vrambot/vrambot/internal/cli"
	"github.com/vrambot/vrambot/internal/errs"
)

// Deps are what the digest needs from the program: a scheduler that
// composes digests and, when NoPost is "", posts them.
type Deps struct {
	Scheduler *schedule.Scheduler
	// NoPost says why a digest asked to be posted is printed instead.
	NoPost string
}

// Run is `vrambot digest [--json|--blocks] [--dry-run] [--window 24h|7d]
// [--at RFC3339] [--chart FILE] [--demo]` (docs/contracts.md §1).
// open(post) builds the scheduler; post is false for a dry run. --demo
// digests a simulated day and needs nothing of the program.
func Run(ctx context.Context, e cli.Env, args []string, open func(post bool) (Deps, error)) error {
	fs := flag.NewFlagSet("digest", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	blocks := fs.Bool("blocks", false, "print the Slack messages (Block Kit JSON) instead of the text")
	dryRun := fs.Bool("dry-run", false, "compose and print, do not post")
	demoDay := fs.Bool("demo", false, "digest a simulated day (no Prometheus, Slack or store needed); never posts")
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
	if *asJSON && *blocks {
		return cli.Usagef("pick one", "digest: --json and --blocks both choose the output")
	}
	out := output{chartFile: *chartFile, asJSON: *asJSON, blocks: *blocks}
	if *demoDay {
		return runDemo(ctx, e, fs, out)
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
	var post func() error
	if !*dryRun {
		post = func() error {
			if _, err := sched.Post(ctx, d); err != nil {
				return fmt.Errorf("digest: %w", err)
			}
			return nil
		}
	}
	return out.write(e, d, post)
}

// runDemo prints the digest of the simulated day; its window is fixed.
func runDemo(ctx context.Context, e cli.Env, fs *flag.FlagSet, out output) error {
	var fixed []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "window" || f.Name == "at" {
			fixed = append(fixed, "--"+f.Name)
		}
	})
	if len(fixed) > 0 {
		return cli.Usagef("drop "+strings.Join(fixed, " and "), "digest: --demo is one simulated day (%s → %s UTC)", demo.Start.Format("Mon 2 Jan 15:04"), demo.End.Format("Mon 2 Jan 15:04"))
	}
	d, err := demo.Compose(ctx)
	if err != nil {
		return fmt.Errorf("digest: demo: %w", err)
	}
	return out.write(e, d, nil)
}

// output is what `vrambot digest` prints and writes.
type output struct {
	chartFile      string
	asJSON, blocks bool
}

// write writes the chart (when asked), posts (post nil: a dry run), then
// prints the digest: its JSON, its Slack messages, or its text.
func (o output) write(e cli.Env, d digest.Digest, post func() error) error {
	if o.chartFile != "" {
		if err := writeChart(e, o.chartFile, d); err != nil {
			return err
		}
	}
	if post != nil {
		if err := post(); err != nil {
			return err
		}
	}
	switch {
	case o.asJSON:
		return cli.PrintJSON(e.Stdout, d)
	case o.blocks:
		file := ""
		if d.HasChart() {
			file = d.ChartFileName()
		}
		if err := cli.PrintJSON(e.Stdout, bot.Thread(d.Reply(), file, d.ThreadReplies())); err != nil {
			return fmt.Errorf("digest: writing the Slack messages: %w", err)
		}
		return nil
	}
	_, err := io.WriteString(e.Stdout, d.Text())
	return err
}

// writeChart writes the digest's chart to path. A window without GPU
// memory samples (no Prometheus, or one without dcgm-exporter) has nothing
// to draw: the digest is still the digest of what there is, so that is a
// note on stderr, not a failure, and no file is written.
func writeChart(e cli.Env, path string, d digest.Digest) error {
	png, err := d.ChartPNG()
	switch {
	case errors.Is(err, chart.ErrNoData):
		why := "no GPU memory samples in the window (does Prometheus scrape dcgm-exporter?)"
		switch d.DataQuality.Prometheus {
		case digest.StatusNotConfigured:
			why = "no GPU metrics: VRAMBOT_PROMETHEUS_URL is not set (try --demo for a simulated day)"
		case digest.StatusUnreachable, digest.StatusQueryFailed:
			why = "no GPU metrics: Prometheus could not be queried (see the digest's footer)"
		}
		fmt.Fprintf(e.Stderr, "vrambot: digest: --chart: skipped, %s not written: %s\n", path, why)
		return nil
	case err != nil:
		return fmt.Errorf("digest: --chart: %w", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		return fmt.Errorf("digest: --chart: %w", err)
	}
	return nil
}
