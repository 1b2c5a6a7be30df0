package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/vrambot/vrambot/bot"
	"github.com/vrambot/vrambot/digest"
	"github.com/vrambot/vrambot/reply"
)

func runDigest(ctx context.Context, e env, args []string) error {
	fs := flag.NewFlagSet("digest", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	dryRun := fs.Bool("dry-run", false, "compose and print, do not post")
	window := fs.Duration("window", 24*time.Hour, "how far back to look")
	atFlag := fs.String("at", "", "end of the window, RFC 3339 (default now)")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("see vrambot help", "digest: unexpected argument %q", rest[0])
	}
	if *window <= 0 || *window > digest.MaxWindow {
		return usagef("e.g. --window 24h", "digest: --window must be between 0 and %s", digest.MaxWindow)
	}
	at := time.Now()
	if *atFlag != "" {
		if at, err = time.Parse(time.RFC3339, *atFlag); err != nil {
			return usagef("e.g. --at 2026-11-29T09:00:00Z", "digest: --at %q is not RFC 3339", *atFlag)
		}
	}
	a, err := newApp(e, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	var poster digest.Poster
	if !*dryRun {
		if a.cfg.SlackBotToken == "" || a.cfg.DigestChannel == "" {
			fmt.Fprintln(e.stderr, "vrambot: digest: SLACK_BOT_TOKEN or VRAMBOT_DIGEST_CHANNEL not set: printing instead of posting (dry run)")
			*dryRun = true
		} else {
			poster = bot.NewTokenPoster(a.cfg.SlackBotToken.Value(), a.cfg.SlackAPIURL, a.log)
		}
	}
	sched, err := a.scheduler(poster, *window)
	if err != nil {
		return err
	}
	d, err := sched.RunOnce(ctx, at, *dryRun)
	if err != nil {
		return fmt.Errorf("digest: %w", err)
	}
	if *asJSON {
		return printReply(e, reply.Reply{Result: d}, true)
	}
	texts := []string{reply.Text(d.Reply())}
	for _, t := range d.ThreadReplies() {
		texts = append(texts, reply.Text(t))
	}
	_, err = io.WriteString(e.stdout, strings.Join(texts, "\n---\n\n"))
	return err
}
