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
		DrainTimeout:  a.cfg.DrainTimeout,
	}, bot.Deps{
		Commands:  commandSet{offers: a.book},
		Store:     a.store,
		RecordOOM: recordOOM(a.events),
		Logger:    log,
	})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	jobs, err := a.serveJobs(srv.Poster())
	if err != nil {
		return err
	}
	sched := newServeCron(a.cfg.Location, log, jobs)
	ln, err := srv.Listen(a.cfg.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}

	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return srv.ServeListener(ctx, ln) })
	if a.cfg.Mode() == config.ModeSocket {
		g.Go(func() error { return srv.Run(ctx) })
	}
	g.Go(func() error { return runCron(ctx, sched) })
	g.Go(func() error {
		for _, j := range jobs {
			if j.atStart {
				j.run(ctx)
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

// periodicJob is one entry of serve's cron.
type periodicJob struct {
	name     string
	spec     string // as configured, for the log
	schedule cron.Schedule
	run      func(ctx context.Context)
	// atStart also runs the job once when serve starts.
	atStart bool
}

// serveJobs lists every periodic job of `serve`; the one place that wires
// them. Schedules are read by config.ParseCron (the one cron reading).
func (a *app) serveJobs(poster *bot.Poster) ([]periodicJob, error) {
	prices, err := config.ParseCron(a.cfg.PricesCron)
	if err != nil {
		return nil, fmt.Errorf("VRAMBOT_PRICES_CRON: %w", err)
	}
	jobs := []periodicJob{{
		// Fills the price cache, so user requests only ever read it.
		name: "prices-refresh", spec: a.cfg.PricesCron, schedule: prices, atStart: true,
		run: func(ctx context.Context) {
			for _, st := range a.book.Refresh(ctx) {
				if st.Error != nil {
					a.log.Warn("price source failed; keeping its last good data", "source", st.Name, "error", *st.Error)
				}
			}
		},
	}}
	if a.cfg.DigestChannel == "" {
		a.log.Info("digest disabled: VRAMBOT_DIGEST_CHANNEL not set")
		return jobs, nil
	}
	digestSched, err := a.scheduler(poster, 0)
	if err != nil {
		return nil, err
	}
	digestSpec, err := config.ParseCron(a.cfg.DigestCron)
	if err != nil {
		return nil, fmt.Errorf("VRAMBOT_DIGEST_CRON: %w", err)
	}
	// CatchUp posts the latest scheduled period unless a replica already
	// has (a lock and a "sent" marker in the store): run at a scheduled
	// time it posts that period, run at start it posts a missed one.
	jobs = append(jobs, periodicJob{
		name: "digest", spec: a.cfg.DigestCron, schedule: digestSpec, atStart: true,
		run: func(ctx context.Context) {
			if _, err := digestSched.CatchUp(ctx); err != nil {
				a.log.Error("digest run failed", "err", err)
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

// newServeCron is the one scheduler of `serve`, in VRAMBOT_TZ. A job still
// running at its next time is skipped, and a panic in a job is logged.
// Jobs get their context from runCron.
func newServeCron(loc *time.Location, log *slog.Logger, jobs []periodicJob) *serveCron {
	l := cronLogger{log.With("component", "cron")}
	c := cron.New(cron.WithLocation(loc), cron.WithLogger(l), cron.WithChain(cron.Recover(l), cron.SkipIfStillRunning(l)))
	return &serveCron{cron: c, jobs: jobs}
}

// serveCron is the cron with its jobs, added once the context is known.
type serveCron struct {
	cron *cron.Cron
	jobs []periodicJob
}

// runCron runs the jobs on their schedules until ctx ends, then waits for
// running jobs (whose context has ended too) before returning.
func runCron(ctx context.Context, c *serveCron) error {
	for _, j := range c.jobs {
		c.cron.Schedule(j.schedule, cron.FuncJob(func() { j.run(ctx) }))
	}
	c.cron.Start()
	<-ctx.Done()
	<-c.cron.Stop().Done()
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
