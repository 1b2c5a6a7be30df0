package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/robfig/cron/v3"
	"golang.org/x/sync/errgroup"

	"github.com/vrambot/vrambot/bot"
	"github.com/vrambot/vrambot/config"
	"github.com/vrambot/vrambot/feedback"
	"github.com/vrambot/vrambot/internal/cli"
	"github.com/vrambot/vrambot/pricing"
)

// runServe is `vrambot serve`. Everything is built before anything starts,
// so a configuration error returns with nothing running. Then one errgroup
// under one context owns every goroutine:
//
//   - the HTTP server (Slack request URLs in HTTP mode; health, readiness
//     and metrics in both modes), which drains the bot's acked work on the
//     way out (VRAMBOT_DRAIN_TIMEOUT);
//   - Socket Mode, when SLACK_APP_TOKEN is set;
//   - the one cron (robfig/cron) that runs every periodic job (serveJobs);
//   - the start-up run of the jobs that need one (a first price refresh,
//     the digest's catch-up).
//
// SIGTERM cancels the context: the bot stops admitting work and drains,
// the cron starts nothing new and waits for running jobs, and runServe
// returns once every member has.
func runServe(ctx context.Context, e cli.Env, args []string) error {
	if len(args) > 0 {
		return cli.Usagef("serve takes no arguments; configure it with environment variables", "serve: unexpected argument %q", args[0])
	}
	log := slog.New(slog.NewJSONHandler(e.Stderr, nil))
	a, err := newApp(e, log)
	if err != nil {
		return err
	}
	defer a.Close()
	if err := a.cfg.ValidateServe(); err != nil {
		return &cli.UsageError{Reason: "configuration: " + err.Error(), Hint: "see README, Configuration"}
	}
	// Slack answers Hub lookups after the ack, so serve waits longer than the CLI.
	if a.models, err = newModelResolver(a.cfg, a.store, log, serveHubTimeout); err != nil {
		return err
	}
	cmds := commandSet{offers: a.book, models: a.models}
	slackSide := slackDeps{resolver: a.models, events: a.events, last: lastDigestStore{a.store}, votes: feedback.NewLog(a.store), log: log}
	srv, err := bot.New(bot.Config{
		BotToken:      a.cfg.SlackBotToken.Value(),
		SigningSecret: a.cfg.SlackSigningSecret.Value(),
		AppToken:      a.cfg.SlackAppToken.Value(),
		APIURL:        a.cfg.SlackAPIURL,
		DrainTimeout:  a.cfg.DrainTimeout,
	}, bot.Deps{
		Commands:  cmds,
		Configs:   cmds,
		Jobs:      cmds,
		Store:     a.store,
		RecordOOM: recordOOM(a.events),
		Logger:    log,
		// The Slack features beyond the commands: the form's typeahead,
		// the Hub lookup check, the App Home and the feedback log.
		Models:         slackSide,
		Lookups:        slackSide,
		LastDigest:     slackSide,
		OOMs:           slackSide,
		RecordFeedback: slackSide.recordVote,
	})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	jobs, err := a.serveJobs(srv.Poster())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, ctx := errgroup.WithContext(ctx)
	sched, err := newServeCron(ctx, a.cfg.Location, log, jobs)
	if err != nil {
		return err
	}
	ln, err := srv.Listen(a.cfg.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}

	g.Go(func() error { return srv.ServeListener(ctx, ln) })
	if a.cfg.Mode() == config.ModeSocket {
		g.Go(func() error { return srv.Run(ctx) })
	}
	g.Go(func() error { return runCron(ctx, sched) })
	g.Go(func() error {
		for _, j := range jobs {
			if j.atStart != nil {
				j.atStart(ctx)
			}
		}
		return nil
	})
	log.Info("vrambot serving", "addr", ln.Addr().String(), "mode", string(a.cfg.Mode()), "store", storeKind(a.cfg), "jobs", jobNames(jobs))
	if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// periodicJob is one job on serve's cron: an entry (schedule and run), or
// entries the job adds itself (register: the digests, one per configured
// schedule).
type periodicJob struct {
	name     string
	spec     string // as configured, for the log
	schedule cron.Schedule
	run      func(ctx context.Context)
	register func(ctx context.Context, c *cron.Cron) error
	// atStart, when set, runs once when serve starts.
	atStart func(ctx context.Context)
}

// serveJobs lists every periodic job of `serve`: the one place that wires
// them. Schedules are read by config.ParseCron (the one cron reading).
func (a *app) serveJobs(poster *bot.Poster) ([]periodicJob, error) {
	prices, err := config.ParseCron(a.cfg.PricesCron)
	if err != nil {
		return nil, fmt.Errorf("VRAMBOT_PRICES_CRON: %w", err)
	}
	refresh := func(ctx context.Context) {
		for _, st := range a.book.Refresh(ctx) {
			if st.Error != nil {
				a.log.Warn("price source failed; keeping its last good data", "source", st.Name, "error", *st.Error)
			}
		}
	}
	jobs := []periodicJob{
		// Fills the price cache from the sources, so user requests only
		// ever read it.
		{name: "prices-refresh", spec: a.cfg.PricesCron, schedule: prices, run: refresh, atStart: refresh},
		// Re-reads the cache into the listing user requests answer from,
		// so they never wait on the store.
		{name: "prices-reload", spec: "@every " + pricing.ReloadInterval.String(), schedule: cron.Every(pricing.ReloadInterval),
			run: func(ctx context.Context) {
				if err := a.book.Reload(ctx); err != nil && ctx.Err() == nil {
					a.log.Warn("re-reading the price cache failed; answering from the last listing", "err", err)
				}
			}},
	}
	if a.cfg.DigestChannel == "" {
		a.log.Info("digest disabled: VRAMBOT_DIGEST_CHANNEL not set")
		return jobs, nil
	}
	digests, err := a.scheduler(poster)
	if err != nil {
		return nil, err
	}
	spec := a.cfg.DigestCron
	if a.cfg.DigestWeeklyCron != "" {
		spec += "; weekly " + a.cfg.DigestWeeklyCron
	}
	// Each digest posts its period once across replicas (a lock and a
	// "sent" marker in the store); at start, a missed period is caught up.
	jobs = append(jobs, periodicJob{
		name: "digest", spec: spec, register: digests.Register,
		atStart: func(ctx context.Context) {
			if _, err := digests.CatchUp(ctx); err != nil {
				a.log.Error("digest catch-up failed", "err", err)
			}
		},
	})
	return jobs, nil
}

func jobNames(jobs []periodicJob) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.name + " (" + j.spec + ")"
	}
	return out
}

// newServeCron is the one scheduler of `serve`, in VRAMBOT_TZ, with every
// job's entries; the jobs run under ctx. A job still running at its next
// time is skipped, and a panic in a job is logged.
func newServeCron(ctx context.Context, loc *time.Location, log *slog.Logger, jobs []periodicJob) (*cron.Cron, error) {
	l := cronLogger{log.With("component", "cron")}
	c := cron.New(cron.WithLocation(loc), cron.WithLogger(l), cron.WithChain(cron.Recover(l), cron.SkipIfStillRunning(l)))
	for _, j := range jobs {
		if j.register != nil {
			if err := j.register(ctx, c); err != nil {
				return nil, fmt.Errorf("serve: %s: %w", j.name, err)
			}
			continue
		}
		c.Schedule(j.schedule, cron.FuncJob(func() { j.run(ctx) }))
	}
	return c, nil
}

// runCron runs c until ctx ends, then waits for running jobs (whose
// context has ended too) before returning.
func runCron(ctx context.Context, c *cron.Cron) error {
	c.Start()
	<-ctx.Done()
	<-c.Stop().Done()
	return nil
}

// cronLogger adapts robfig/cron's logger to slog.
type cronLogger struct{ log *slog.Logger }

func (l cronLogger) Info(msg string, kv ...any) { l.log.Debug(msg, kv...) }
func (l cronLogger) Error(err error, msg string, kv ...any) {
	l.log.Error(msg, append(kv, "err", err)...)
}

func storeKind(c config.Config) string {
	if c.RedisURL == "" {
		return "memory"
	}
	return "redis"
}
