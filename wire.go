package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/vrambot/vrambot/bot"
	"github.com/vrambot/vrambot/commands"
	"github.com/vrambot/vrambot/config"
	"github.com/vrambot/vrambot/digest"
	"github.com/vrambot/vrambot/digest/prom"
	"github.com/vrambot/vrambot/digest/schedule"
	"github.com/vrambot/vrambot/feedback"
	"github.com/vrambot/vrambot/models"
	"github.com/vrambot/vrambot/pricing"
	"github.com/vrambot/vrambot/pricing/source"
	"github.com/vrambot/vrambot/reply"
	"github.com/vrambot/vrambot/store"
)

// app is everything the subcommands share, built once from the config.
type app struct {
	cfg    config.Config
	store  store.Store
	book   *pricing.Book
	events *digest.EventLog
	models *models.Resolver
	log    *slog.Logger
}

// newApp loads the configuration and wires the store and price book. With
// no REDIS_URL the store is in memory and prices come from the embedded
// snapshot, so every CLI command works with no services.
// log nil means the CLI's logger: warnings and errors, as text on stderr.
func newApp(e env, log *slog.Logger) (*app, error) {
	cfg, err := config.FromEnv(e.lookup)
	if err != nil {
		return nil, &usageError{reason: "configuration: " + err.Error(), hint: "fix the variable named above (see README, Configuration)"}
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	st, err := store.Open(cfg.RedisURL.Value())
	if err != nil {
		return nil, fmt.Errorf("opening the store: %w", err)
	}
	sources, err := source.FromSpec(cfg.PriceSources, &http.Client{Timeout: 60 * time.Second})
	if err != nil {
		st.Close()
		return nil, &usageError{reason: "VRAMBOT_PRICE_SOURCES: " + err.Error(), hint: "e.g. embedded,gpuhunt:aws,azure"}
	}
	book := pricing.NewBook(st, sources, source.Embedded(), pricing.WithLogger(log))
	resolver, err := newModelResolver(cfg, st, log, cliHubTimeout)
	if err != nil {
		st.Close()
		return nil, err
	}
	return &app{cfg: cfg, store: st, book: book, events: digest.NewEventLog(st), models: resolver, log: log}, nil
}

func (a *app) Close() error { return a.store.Close() }

// commandSet adapts the commands package to the bot's Commands interface.
type commandSet struct {
	offers commands.OfferFinder
	models commands.ModelResolver
}

func (c commandSet) VRAM(ctx context.Context, query string) (reply.Reply, error) {
	return commands.VRAM(ctx, query, c.deps())
}

// VRAMConfig answers a mention that attached a config.json (bot.ConfigVRAM);
// fileName is the file's name as uploaded.
func (c commandSet) VRAMConfig(ctx context.Context, query string, config []byte, fileName string) (reply.Reply, error) {
	return commands.VRAMWithConfig(ctx, query, config, models.ConfigName(fileName, config), c.deps())
}

func (c commandSet) deps() commands.VRAMDeps {
	return commands.VRAMDeps{Models: c.models, Offers: c.offers}
}

func (c commandSet) OOM(ctx context.Context, text string) (reply.Reply, bool) {
	r := commands.OOM(ctx, text, c.offers)
	res, ok := r.Result.(commands.OOMResult)
	return r, ok && res.Detected
}

// scheduler wires the digest: Prometheus (when configured), the OOM event
// log, the book's GPU-hour prices (*pricing.Book is a digest.Pricer), the
// store for the exactly-once markers, and poster (nil: no posting).
func (a *app) scheduler(poster schedule.Poster) (*schedule.Scheduler, error) {
	if poster != nil {
		// The App Home shows the last digest's headline.
		poster = recordingPoster{Poster: poster, last: lastDigestStore{a.store}, warn: a.log.Warn}
	}
	cfg := schedule.Config{
		Spec:       a.cfg.DigestCron,
		WeeklySpec: a.cfg.DigestWeeklyCron,
		Location:   a.cfg.Location,
		Channel:    a.cfg.DigestChannel,
		Store:      a.store,
		Poster:     poster,
		Sources:    schedule.Sources{Events: a.events, Pricer: a.book, Feedback: feedback.NewLog(a.store)},
		Logger:     a.log,
	}
	if a.cfg.PrometheusURL != "" {
		src, err := prom.New(a.cfg.PrometheusURL)
		if err != nil {
			return nil, fmt.Errorf("VRAMBOT_PROMETHEUS_URL: %w", err)
		}
		cfg.Sources.Metrics = src
	}
	return schedule.New(cfg)
}

// recordOOM appends every OOM the bot answered to the digest's event log:
// parsed fields only, never the pasted text.
func recordOOM(log *digest.EventLog) bot.OOMRecorder {
	return func(ctx context.Context, seen bot.OOMSeen) error {
		ev := digest.OOMEvent{At: seen.At, Channel: seen.Channel, ThreadTS: seen.ThreadTS, Permalink: seen.Permalink}
		if res, ok := seen.Result.(commands.OOMResult); ok {
			ev.Framework, ev.Format, ev.Phase = res.Framework, res.Format, res.Phase
			if res.Device != nil {
				ev.Device = *res.Device
			}
			if len(res.Diagnosis.Causes) > 0 {
				ev.Cause = res.Diagnosis.Causes[0].ID
			}
			ev.TriedBytes, ev.TotalBytes = res.TriedToAllocateBytes, res.TotalCapacityBytes
		}
		return log.Record(ctx, ev)
	}
}
