package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	digestcmd "github.com/vrambot/vrambot/command/digest"
	oomcmd "github.com/vrambot/vrambot/command/oom"
	pricescmd "github.com/vrambot/vrambot/command/prices"
	vramcmd "github.com/vrambot/vrambot/command/vram"

	"github.com/vrambot/vrambot/bot"
	"github.com/vrambot/vrambot/config"
	"github.com/vrambot/vrambot/digest"
	"github.com/vrambot/vrambot/digest/prom"
	"github.com/vrambot/vrambot/digest/schedule"
	"github.com/vrambot/vrambot/feedback"
	"github.com/vrambot/vrambot/internal/cli"
	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/internal/safetext"
	"github.com/vrambot/vrambot/models"
	"github.com/vrambot/vrambot/pricing"
	"github.com/vrambot/vrambot/pricing/source"
	"github.com/vrambot/vrambot/query"
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
func newApp(e cli.Env, log *slog.Logger) (*app, error) {
	cfg, err := config.FromEnv(e.Lookup)
	if err != nil {
		return nil, &cli.UsageError{Reason: "configuration: " + err.Error(), Hint: "fix the variable named above (see README, Configuration)"}
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(e.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	st, err := store.Open(cfg.RedisURL.Value())
	if err != nil {
		return nil, fmt.Errorf("opening the store: %w", err)
	}
	sources, err := source.FromSpec(cfg.PriceSources, &http.Client{Timeout: 60 * time.Second})
	if err != nil {
		st.Close()
		return nil, &cli.UsageError{Reason: "VRAMBOT_PRICE_SOURCES: " + err.Error(), Hint: "e.g. embedded,gpuhunt:aws,azure"}
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

// lazyApp builds the app on a subcommand's first call for it, so a
// command with bad flags fails before any configuration is read, and one
// that needs no service (models) reads none.
type lazyApp struct {
	env cli.Env
	app *app
}

func (l *lazyApp) get() (*app, error) {
	if l.app != nil {
		return l.app, nil
	}
	a, err := newApp(l.env, nil)
	if err != nil {
		return nil, err
	}
	l.app = a
	return a, nil
}

// Close closes the app if it was built.
func (l *lazyApp) Close() {
	if l.app != nil {
		l.app.Close()
	}
}

func (l *lazyApp) vramDeps() (vramcmd.Deps, error) {
	a, err := l.get()
	if err != nil {
		return vramcmd.Deps{}, err
	}
	return vramcmd.Deps{Models: a.models, Offers: a.book}, nil
}

func (l *lazyApp) oomDeps() (oomcmd.Deps, error) {
	a, err := l.get()
	if err != nil {
		return oomcmd.Deps{}, err
	}
	return oomcmd.Deps{Offers: a.book, Models: a.models}, nil
}

func (l *lazyApp) pricesDeps() (pricescmd.Deps, error) {
	a, err := l.get()
	if err != nil {
		return pricescmd.Deps{}, err
	}
	return pricescmd.Deps{Book: a.book, Persistent: a.cfg.RedisURL != ""}, nil
}

// digestDeps is the digest's scheduler, posting with the bot token to the
// digest channel when post is set and both are configured.
func (l *lazyApp) digestDeps(post bool) (digestcmd.Deps, error) {
	a, err := l.get()
	if err != nil {
		return digestcmd.Deps{}, err
	}
	var d digestcmd.Deps
	var poster schedule.Poster
	switch {
	case !post:
	case a.cfg.SlackBotToken == "" || a.cfg.DigestChannel == "":
		d.NoPost = "SLACK_BOT_TOKEN or VRAMBOT_DIGEST_CHANNEL not set"
	default:
		poster = bot.NewTokenPoster(a.cfg.SlackBotToken.Value(), a.cfg.SlackAPIURL, a.log)
	}
	if d.Scheduler, err = a.scheduler(poster); err != nil {
		return digestcmd.Deps{}, err
	}
	return d, nil
}

// commandSet adapts the command packages to the bot's Commands, Configs
// and Jobs interfaces.
type commandSet struct {
	offers vramcmd.OfferFinder
	models query.ModelResolver
}

var (
	_ bot.Commands   = commandSet{}
	_ bot.ConfigVRAM = commandSet{}
	_ bot.Jobs       = commandSet{}
)

func (c commandSet) VRAM(ctx context.Context, text string) (reply.Reply, error) {
	a, err := vramcmd.Estimate(ctx, text, c.deps())
	return a.Reply, err
}

// VRAMConfig answers a mention that attached a config.json (bot.ConfigVRAM);
// fileName is the file's name as uploaded.
func (c commandSet) VRAMConfig(ctx context.Context, text string, config []byte, fileName string) (reply.Reply, error) {
	a, err := vramcmd.EstimateConfig(ctx, text, config, models.ConfigName(fileName, config), c.deps())
	return a.Reply, err
}

// JobQuery is the /vram query of a job pasted or attached in Slack with
// the words beside it (bot.Jobs); it reads, never resolves or estimates.
func (c commandSet) JobQuery(text, words string) (string, bool) {
	q, _, err := vramcmd.JobQuery(text, words)
	return q, err == nil
}

// Job answers a job pasted or attached in Slack (bot.Jobs), as
// vrambot vram --job does.
func (c commandSet) Job(ctx context.Context, text, words string) (reply.Reply, error) {
	a, err := vramcmd.EstimateJob(ctx, text, words, c.deps())
	return a.Reply, err
}

func (c commandSet) deps() vramcmd.Deps {
	return vramcmd.Deps{Models: c.models, Offers: c.offers}
}

// OOM diagnoses a paste for the bot. A job in the paste has its model
// resolved without a Hub request (withoutHub): the answer runs in a
// compute slot, and Hub I/O waits in the bot's own pool (bot/hubpool.go),
// which looks a mention's or a DM's job up before the answer.
func (c commandSet) OOM(ctx context.Context, text string) (reply.Reply, bot.OOMFacts) {
	a := oomcmd.Diagnose(ctx, text, oomcmd.Deps{Offers: c.offers, Models: withoutHub(c.models)})
	return a.Reply, oomFacts(a.Result)
}

// withoutHub is r restricted to what resolves with no Hub request: a
// lookup already made for the answer (models.Prefetched), the catalog, the
// cache. Other models are said not looked up.
func withoutHub(r query.ModelResolver) query.ModelResolver {
	local, ok := r.(query.LocalResolver)
	if !ok {
		return nil // the catalog alone
	}
	return localResolver{local}
}

type localResolver struct{ r query.LocalResolver }

func (l localResolver) Resolve(ctx context.Context, ref string) (models.Resolution, error) {
	if !models.IsPrefetched(ctx, ref) && !l.r.ResolvesWithoutHub(ctx, ref) {
		return models.Resolution{}, errs.New(errs.Unavailable, "%s was not looked up on the Hub for this answer", safetext.OneLine(ref, 100))
	}
	return l.r.Resolve(ctx, ref)
}

// oomFacts are the fields of an OOM result the bot keeps for the digest.
func oomFacts(res oomcmd.Result) bot.OOMFacts {
	f := bot.OOMFacts{
		Detected: res.Detected, Format: res.Format, Framework: res.Framework, Phase: res.Phase,
		TriedBytes: res.TriedToAllocateBytes, TotalBytes: res.TotalCapacityBytes,
	}
	if res.Device != nil {
		f.Device = *res.Device
	}
	if len(res.Diagnosis.Causes) > 0 {
		f.Cause = res.Diagnosis.Causes[0].ID
	}
	return f
}

// scheduler wires the digest: Prometheus (when configured), the OOM event
// log, the book's GPU-hour prices (*pricing.Book is a digest.Pricer), the
// store for the exactly-once markers, and poster (nil: no posting).
func (a *app) scheduler(poster schedule.Poster) (*schedule.Scheduler, error) {
	cfg := schedule.Config{
		Spec:       a.cfg.DigestCron,
		WeeklySpec: a.cfg.DigestWeeklyCron,
		Location:   a.cfg.Location,
		Channel:    a.cfg.DigestChannel,
		Store:      a.store,
		Poster:     poster,
		Sources:    schedule.Sources{Events: a.events, Pricer: a.book, Feedback: feedback.NewLog(a.store)},
		Posted:     a.rememberDigest,
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

// rememberDigest keeps a posted digest's headline for the App Home.
func (a *app) rememberDigest(ctx context.Context, d digest.Digest, channel, _ string) {
	if err := (lastDigestStore{a.store}).record(context.WithoutCancel(ctx), d.Reply().Summary, channel); err != nil {
		a.log.Warn("last digest not recorded for the App Home", "err", err)
	}
}

// recordOOM appends every OOM the bot answered to the digest's event log:
// parsed fields only, never the pasted text.
func recordOOM(log *digest.EventLog) bot.OOMRecorder {
	return func(ctx context.Context, seen bot.OOMSeen) error {
		f := seen.Facts
		ev := digest.OOMEvent{
			At: seen.At, Channel: seen.Channel, ThreadTS: seen.ThreadTS, Permalink: seen.Permalink,
			Framework: f.Framework, Format: f.Format, Phase: f.Phase, Device: f.Device, Cause: f.Cause,
			TriedBytes: f.TriedBytes, TotalBytes: f.TotalBytes,
		}
		return log.Record(ctx, ev)
	}
}
