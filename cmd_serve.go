package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/vrambot/vrambot/bot"
	"github.com/vrambot/vrambot/config"
	"golang.org/x/sync/errgroup"
)

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
	// Slack answers Hub lookups after the ack, so serve waits longer than the CLI.
	if a.models, err = newModelResolver(a.cfg, a.store, log, serveHubTimeout); err != nil {
		return err
	}
	cmds := commandSet{offers: a.book, models: a.models}
	srv, err := bot.New(bot.Config{
		BotToken:      a.cfg.SlackBotToken.Value(),
		SigningSecret: a.cfg.SlackSigningSecret.Value(),
		AppToken:      a.cfg.SlackAppToken.Value(),
		APIURL:        a.cfg.SlackAPIURL,
	}, bot.Deps{
		Commands:  cmds,
		Configs:   cmds,
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
		sched, err := a.scheduler(srv.Poster())
		if err != nil {
			return err
		}
		// The digests run on a cron shared with every periodic job of serve;
		// this one stands in until that cron is built here (issue 9).
		jobs := cron.New(cron.WithLocation(a.cfg.Location))
		if err := sched.Register(ctx, jobs); err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		jobs.Start()
		g.Go(func() error {
			if _, err := sched.CatchUp(ctx); err != nil {
				log.Error("digest catch-up failed", "err", err)
			}
			<-ctx.Done()
			<-jobs.Stop().Done()
			return nil
		})
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
	sched, err := config.ParseCron(a.cfg.PricesCron)
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
