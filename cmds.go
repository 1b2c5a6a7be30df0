package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/robfig/cron/v3"
	"github.com/vrambot/vrambot/bot"
	"github.com/vrambot/vrambot/commands"
	"github.com/vrambot/vrambot/config"
	"github.com/vrambot/vrambot/digest"
	"github.com/vrambot/vrambot/reply"
)

// maxPasteBytes caps what `vrambot oom` reads; the parser keeps the head and
// tail of longer pastes anyway, and this keeps memory bounded on any input.
const maxPasteBytes = 64 << 20

func printReply(e env, r reply.Reply, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r.Result); err != nil {
			return fmt.Errorf("writing JSON: %w", err)
		}
		return nil
	}
	_, err := io.WriteString(e.stdout, reply.Text(r))
	return err
}

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

func runPrices(ctx context.Context, e env, args []string) error {
	fs := flag.NewFlagSet("prices", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	refresh := fs.Bool("refresh", false, "fetch every configured source into the cache first")
	gpu := fs.String("gpu", "", "only this GPU (e.g. a100, 4090)")
	minMemory := fs.String("min-memory", "", "only GPUs with at least this much memory each (e.g. 24GiB)")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("use --gpu NAME or --min-memory SIZE", "prices: unexpected argument %q", rest[0])
	}
	q := commands.PricesQuery{GPU: *gpu}
	if *minMemory != "" {
		if q.MinMemoryBytes, err = commands.ParseMemory(*minMemory); err != nil {
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

func runManifest(_ context.Context, e env, args []string) error {
	fs := flag.NewFlagSet("manifest", flag.ContinueOnError)
	publicURL := fs.String("url", "", "public https base URL Slack can reach (HTTP mode)")
	if rest, err := parseFlags(fs, args); err != nil {
		return err
	} else if len(rest) > 0 {
		return usagef("e.g. vrambot manifest --url https://vrambot.example.com", "manifest: unexpected argument %q", rest[0])
	}
	cfg, err := config.FromEnv(e.lookup)
	if err != nil {
		return &usageError{reason: "configuration: " + err.Error()}
	}
	socket := cfg.Mode() == config.ModeSocket
	if !socket && *publicURL == "" {
		*publicURL = "https://vrambot.example.com"
		fmt.Fprintln(e.stderr, "vrambot: manifest: HTTP mode and no --url: using a placeholder base URL; set --url, or SLACK_APP_TOKEN for Socket Mode")
	}
	m, err := bot.Manifest(bot.ManifestConfig{SocketMode: socket, PublicURL: *publicURL})
	if err != nil {
		return usagef("give an https URL", "manifest: %v", err)
	}
	_, err = e.stdout.Write(m)
	return err
}

func runServe(ctx context.Context, e env, args []string) error {
	if len(args) > 0 {
		return usagef("serve takes no arguments; configure it with environment variables", "serve: unexpected argument %q", args[0])
	}
	log := slog.New(slog.NewJSONHandler(e.stderr, nil))
	a, err := newApp(e, log)
	if err != nil {
		return err
	}
	defer a.Close()
	if err := a.cfg.ValidateServe(); err != nil {
		return &usageError{reason: "configuration: " + err.Error(), hint: "see README, Configuration"}
	}
	srv, err := bot.New(bot.Config{
		BotToken:      a.cfg.SlackBotToken.Value(),
		SigningSecret: a.cfg.SlackSigningSecret.Value(),
		AppToken:      a.cfg.SlackAppToken.Value(),
		APIURL:        a.cfg.SlackAPIURL,
	}, bot.Deps{
		Commands:  commandSet{offers: a.book},
		Store:     a.store,
		RecordOOM: recordOOM(a.events),
		Logger:    log,
	})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}

	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return srv.Serve(ctx, a.cfg.Addr) })
	if a.cfg.Mode() == config.ModeSocket {
		g.Go(func() error { return srv.Run(ctx) })
	}
	if a.cfg.DigestChannel != "" {
		sched, err := a.scheduler(srv.Poster(), 0)
		if err != nil {
			return err
		}
		g.Go(func() error { return sched.Run(ctx) })
	} else {
		log.Info("digest disabled: VRAMBOT_DIGEST_CHANNEL not set")
	}
	g.Go(func() error { return refreshPrices(ctx, a, log) })
	log.Info("vrambot serving", "addr", a.cfg.Addr, "mode", string(a.cfg.Mode()), "store", storeKind(a.cfg))
	if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// refreshPrices fills the price cache at start and then on VRAMBOT_PRICES_CRON,
// so user requests only ever read the cache.
func refreshPrices(ctx context.Context, a *app, log *slog.Logger) error {
	sched, err := cron.ParseStandard(a.cfg.PricesCron)
	if err != nil {
		return fmt.Errorf("VRAMBOT_PRICES_CRON: %w", err)
	}
	refresh := func() {
		for _, st := range a.book.Refresh(ctx) {
			if st.Error != nil {
				log.Warn("price source failed; keeping its last good data", "source", st.Name, "error", *st.Error)
			}
		}
	}
	refresh()
	for {
		next := sched.Next(time.Now().In(a.cfg.Location))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Until(next)):
			refresh()
		}
	}
}

func storeKind(c config.Config) string {
	if c.RedisURL == "" {
		return "memory"
	}
	return "redis"
}
