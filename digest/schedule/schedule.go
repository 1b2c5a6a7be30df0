// Package schedule posts the digest on cron schedules (docs/contracts.md §4, docs/digest.md §6):
// a daily digest (VRAMBOT_DIGEST_CRON) and, when configured, a weekly one
// (VRAMBOT_DIGEST_WEEKLY_CRON), exactly once per scheduled time across every
// replica sharing one store (a lock and a "sent" marker), with a catch-up
// for a period missed while no replica was running.
//
// It runs no loop of its own: Register adds its entries to the one
// *cron.Cron that `serve` runs for every periodic job, and CatchUp is called
// once at start.
package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/vrambot/vrambot/config"
	"github.com/vrambot/vrambot/digest"
	"github.com/vrambot/vrambot/digest/chart"
	"github.com/vrambot/vrambot/digest/fleet"
	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/reply"
	"github.com/vrambot/vrambot/store"
)

// Poster posts to Slack; the bot's Poster implements it. PostReply with an
// empty threadTS starts a message and returns its ts. PostReplyWithFile
// starts a message that carries the file (Slack's external upload flow) and
// returns its ts; an error means nothing was posted, and an empty ts with no
// error that the message was posted but Slack did not say its ts.
type Poster interface {
	PostReply(ctx context.Context, channel, threadTS string, r reply.Reply) (ts string, err error)
	PostReplyWithFile(ctx context.Context, channel string, r reply.Reply, filename, title string, data []byte) (ts string, err error)
}

// Store is the part of the store scheduling uses: the "sent" marker (Get
// returns store.ErrNotFound when absent) and the lock.
type Store interface {
	Get(ctx context.Context, key string) ([]byte, error)
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	Lock(ctx context.Context, name string, ttl time.Duration) (unlock func(context.Context) error, ok bool, err error)
}

// The scheduled digests.
const (
	Daily  = "daily"
	Weekly = "weekly"
)

// Timing.
const (
	// DefaultCatchUp is how old a missed run may be for a starting replica
	// to still post it.
	DefaultCatchUp = 24 * time.Hour
	// lockTTL outlives a digest run: seven queries bounded by their
	// timeout, then a handful of Slack calls.
	lockTTL = 10 * time.Minute
	// sentTTL keeps the "sent" marker longer than any catch-up window, so a
	// replica restarted days later still sees the period was posted.
	sentTTL = 4 * 24 * time.Hour
	// previousLookBack bounds the search for the last scheduled time: the
	// longest gap of a weekly schedule is seven days.
	previousLookBack = 8 * 24 * time.Hour
	// retryFor bounds retrying a run that failed (the store did not
	// answer, Slack refused the post) and writing the "sent" marker of a
	// digest that was posted: a Redis restart takes seconds, and a period
	// not posted, or posted but not marked (so that a replica's catch-up
	// posts it again), is worse than a late one.
	retryFor = 5 * time.Minute
	// retryFirst and retryMax are the first and the longest wait between
	// tries.
	retryFirst = time.Second
	retryMax   = 15 * time.Second
)

// Sources are what a digest is composed from (see digest.Inputs); nil
// sources are "not configured".
type Sources struct {
	Metrics    digest.Metrics
	Events     digest.EventSource
	Pricer     digest.Pricer
	Feedback   digest.FeedbackSource
	Thresholds fleet.Thresholds
}

// Config wires a Scheduler. Store and Poster are needed for scheduled
// posting, Poster for any posting; composing needs neither.
type Config struct {
	Spec       string         // VRAMBOT_DIGEST_CRON; empty: config.DefaultDigestCron
	WeeklySpec string         // VRAMBOT_DIGEST_WEEKLY_CRON; empty: no weekly digest
	Location   *time.Location // VRAMBOT_TZ; nil: UTC
	Channel    string         // VRAMBOT_DIGEST_CHANNEL
	CatchUp    time.Duration  // 0: DefaultCatchUp

	Store   Store
	Poster  Poster
	Sources Sources
	// Posted, when set, is told of each digest whose main message was
	// posted (the App Home keeps its headline), with the message's ts.
	Posted func(ctx context.Context, d digest.Digest, channel, ts string)

	Logger *slog.Logger     // nil: slog.Default()
	Now    func() time.Time // nil: time.Now
}

// Scheduler composes and posts digests.
type Scheduler struct {
	cfg     Config
	digests []*scheduled
	log     *slog.Logger
}

// scheduled is one digest on one schedule.
type scheduled struct {
	name     string
	spec     string
	schedule cron.Schedule
	window   time.Duration
	// keyPrefix names its lock and sent marker. The daily digest keeps the
	// keys of the time it was the only one, so replicas of different
	// versions agree during an upgrade.
	keyPrefix string
}

// New validates cfg and fills in its defaults. Specs are read with
// config.ParseCron, the project's one cron reading.
func New(cfg Config) (*Scheduler, error) {
	if cfg.Spec == "" {
		cfg.Spec = config.DefaultDigestCron
	}
	if cfg.Location == nil {
		cfg.Location = time.UTC
	}
	if cfg.CatchUp == 0 {
		cfg.CatchUp = DefaultCatchUp
	}
	if cfg.CatchUp < 0 {
		return nil, errs.New(errs.Invalid, "digest catch-up %s: want a positive duration", cfg.CatchUp)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Scheduler{cfg: cfg, log: cfg.Logger.With("component", "digest")}
	add := func(name, spec, keyPrefix string, window time.Duration) error {
		sched, err := config.ParseCron(spec)
		if err != nil {
			return errs.Wrap(errs.Invalid, err, "digest %s cron %q is not a cron spec", name, spec)
		}
		s.digests = append(s.digests, &scheduled{name: name, spec: spec, schedule: sched, window: window, keyPrefix: keyPrefix})
		return nil
	}
	if err := add(Daily, cfg.Spec, "digest:", digest.DailyWindow); err != nil {
		return nil, err
	}
	if cfg.WeeklySpec != "" {
		if err := add(Weekly, cfg.WeeklySpec, "digest:weekly:", digest.WeeklyWindow); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Digests names the scheduled digests, daily first.
func (s *Scheduler) Digests() []string {
	var out []string
	for _, d := range s.digests {
		out = append(out, d.name)
	}
	return out
}

func (s *Scheduler) find(name string) (*scheduled, error) {
	for _, d := range s.digests {
		if d.name == name {
			return d, nil
		}
	}
	return nil, errs.New(errs.NotFound, "no %s digest is scheduled", name)
}

// canPost reports whether scheduled posting is wired.
func (s *Scheduler) canPost() error {
	if s.cfg.Store == nil || s.cfg.Poster == nil || s.cfg.Channel == "" {
		return errs.New(errs.Invalid, "digest: a store, a Slack poster and a channel (VRAMBOT_DIGEST_CHANNEL) are needed to post")
	}
	return nil
}

// Register adds an entry per scheduled digest to c, the one cron of
// `serve`. Each entry posts the period it was started for unless a replica
// already has; ctx bounds the work of every run (cancel it to drain).
func (s *Scheduler) Register(ctx context.Context, c *cron.Cron) error {
	if err := s.canPost(); err != nil {
		return err
	}
	for _, d := range s.digests {
		c.Schedule(inLocation{d.schedule, s.cfg.Location}, cron.FuncJob(func() { s.run(ctx, d) }))
		s.log.Info("digest scheduled", "digest", d.name, "cron", d.spec, "tz", s.cfg.Location.String(), "window", digest.FormatWindow(d.window))
	}
	return nil
}

// inLocation evaluates a schedule in the digest's time zone whatever the
// cron's own location is.
type inLocation struct {
	cron.Schedule
	loc *time.Location
}

func (l inLocation) Next(t time.Time) time.Time { return l.Schedule.Next(t.In(l.loc)) }

// run is one cron firing: cron starts it at (or just after) a scheduled
// time, so the latest scheduled time at or before now is the period, the key
// every replica agrees on.
func (s *Scheduler) run(ctx context.Context, d *scheduled) {
	if ctx.Err() != nil {
		return
	}
	period, ok := s.previous(d, s.cfg.Now())
	if !ok {
		return
	}
	err := retry(ctx, func() (bool, error) {
		posted, err := s.fire(ctx, d, period)
		if err != nil && !posted {
			s.log.Warn("digest run failed; trying again", "digest", d.name, "period", PeriodKey(period), "err", err)
			return false, err
		}
		return true, err // posted (a marker not written is fire's to retry)
	})
	if err != nil {
		s.log.Error("digest run failed", "digest", d.name, "period", PeriodKey(period), "err", err)
	}
}

// retry calls try until it reports done, ctx ends or retryFor has passed,
// waiting retryFirst, then twice as long each time up to retryMax. It
// returns try's last error.
func retry(ctx context.Context, try func() (done bool, err error)) error {
	deadline := time.Now().Add(retryFor)
	wait := retryFirst
	for {
		done, err := try()
		if done || err == nil || time.Now().Add(wait).After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, retryMax)
	}
}

// Next is the first time after t the named digest is scheduled, in the
// scheduler's location.
func (s *Scheduler) Next(name string, t time.Time) (time.Time, error) {
	d, err := s.find(name)
	if err != nil {
		return time.Time{}, err
	}
	return d.schedule.Next(t.In(s.cfg.Location)), nil
}

// Previous is the latest time at or before t the named digest was
// scheduled, if there is one in the last eight days.
func (s *Scheduler) Previous(name string, t time.Time) (time.Time, bool, error) {
	d, err := s.find(name)
	if err != nil {
		return time.Time{}, false, err
	}
	p, ok := s.previous(d, t)
	return p, ok, nil
}

func (s *Scheduler) previous(d *scheduled, t time.Time) (time.Time, bool) {
	t = t.In(s.cfg.Location)
	// Widen the look-back until it holds a scheduled time, so that a
	// per-second schedule costs a few steps and a weekly one a few dozen.
	for back := time.Minute; ; back = min(4*back, previousLookBack) {
		next := d.schedule.Next(t.Add(-back))
		if next.IsZero() || next.After(t) {
			if back == previousLookBack {
				return time.Time{}, false
			}
			continue
		}
		prev := next
		for {
			n := d.schedule.Next(prev)
			if n.IsZero() || n.After(t) {
				return prev, true
			}
			prev = n
		}
	}
}

// CatchUp posts, for each scheduled digest, the latest scheduled period if
// it is within the catch-up window and no replica has posted it yet. It
// returns how many it posted; errors of each are joined.
func (s *Scheduler) CatchUp(ctx context.Context) (posted int, err error) {
	if err := s.canPost(); err != nil {
		return 0, err
	}
	var failures []error
	now := s.cfg.Now()
	for _, d := range s.digests {
		prev, ok := s.previous(d, now)
		if !ok || now.Sub(prev) > s.cfg.CatchUp {
			continue
		}
		ok, err := s.fire(ctx, d, prev)
		if err != nil {
			failures = append(failures, err)
		}
		if ok {
			posted++
		}
	}
	return posted, errors.Join(failures...)
}

// PeriodKey is how a scheduled time names its period in the store.
func PeriodKey(period time.Time) string { return period.UTC().Format(time.RFC3339) }

func (d *scheduled) sentKey(period time.Time) string {
	return d.keyPrefix + "sent:" + PeriodKey(period)
}
func (d *scheduled) lockKey(period time.Time) string {
	return d.keyPrefix + "lock:" + PeriodKey(period)
}

// Fire posts the named digest for the scheduled time period unless some
// replica already has. The window ends at period (not at the wall clock),
// so every replica would compose the same digest. It reports whether this
// call posted.
func (s *Scheduler) Fire(ctx context.Context, name string, period time.Time) (bool, error) {
	d, err := s.find(name)
	if err != nil {
		return false, err
	}
	if err := s.canPost(); err != nil {
		return false, err
	}
	return s.fire(ctx, d, period)
}

func (s *Scheduler) fire(ctx context.Context, d *scheduled, period time.Time) (posted bool, err error) {
	log := s.log.With("digest", d.name, "period", PeriodKey(period))
	if sent, err := s.sent(ctx, d, period); err != nil || sent {
		return false, err
	}
	unlock, ok, err := s.cfg.Store.Lock(ctx, d.lockKey(period), lockTTL)
	if err != nil {
		return false, fmt.Errorf("digest %s %s: lock: %w", d.name, PeriodKey(period), err)
	}
	if !ok {
		log.Info("another replica is posting this digest")
		return false, nil
	}
	defer func() {
		if err := unlock(context.WithoutCancel(ctx)); err != nil {
			log.Warn("digest unlock failed", "err", err)
		}
	}()
	// Re-check under the lock: a replica may have posted and released the
	// lock between the first check and our taking it.
	if sent, err := s.sent(ctx, d, period); err != nil || sent {
		return false, err
	}
	dg, err := s.Compose(ctx, period, d.window)
	if err != nil {
		return false, err
	}
	ts, err := s.Post(ctx, dg)
	if err != nil {
		return false, err
	}
	if err := retry(ctx, func() (bool, error) {
		err := s.cfg.Store.Set(ctx, d.sentKey(period), []byte(ts), sentTTL)
		if err != nil {
			log.Warn("digest posted but not marked sent yet; trying again", "err", err)
		}
		return err == nil, err
	}); err != nil {
		return true, fmt.Errorf("digest %s %s: posted as %q but not marked sent: %w", d.name, PeriodKey(period), ts, err)
	}
	log.Info("digest posted", "channel", s.cfg.Channel, "ts", ts)
	return true, nil
}

func (s *Scheduler) sent(ctx context.Context, d *scheduled, period time.Time) (bool, error) {
	_, err := s.cfg.Store.Get(ctx, d.sentKey(period))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	}
	return false, fmt.Errorf("digest %s %s: read sent marker: %w", d.name, PeriodKey(period), err)
}

// Compose builds the digest for the window of length window (0: a day)
// ending at end, in the scheduler's location. Sources that fail are named
// in the digest, and logged here with their detail.
func (s *Scheduler) Compose(ctx context.Context, end time.Time, window time.Duration) (digest.Digest, error) {
	if window == 0 {
		window = digest.DailyWindow
	}
	src := s.cfg.Sources
	d, err := digest.Compose(ctx, digest.Inputs{
		Window:     fleet.NewWindow(end.In(s.cfg.Location), window),
		Metrics:    src.Metrics,
		Events:     src.Events,
		Pricer:     src.Pricer,
		Feedback:   src.Feedback,
		Thresholds: src.Thresholds,
	})
	if err != nil {
		return digest.Digest{}, err
	}
	if dq := d.DataQuality; dq.PrometheusError != "" || dq.OOMLogError != "" {
		s.log.Warn("digest composed with gaps", "prometheus", dq.Prometheus, "prometheus_error", dq.PrometheusError, "oom_log", dq.OOMLog, "oom_log_error", dq.OOMLogError)
	}
	return d, nil
}

// Post sends the digest to the channel: the main message with the chart,
// then the details in its thread. Only the main message must succeed: a
// digest without its thread is still a digest, and posting it again would
// be worse. It returns the main message's ts ("" when Slack posted it with
// the chart but did not say its ts: the details are then not posted).
func (s *Scheduler) Post(ctx context.Context, d digest.Digest) (string, error) {
	if s.cfg.Poster == nil || s.cfg.Channel == "" {
		return "", errs.New(errs.Invalid, "digest: cannot post without Slack (SLACK_BOT_TOKEN) and VRAMBOT_DIGEST_CHANNEL; use --dry-run")
	}
	ch := s.cfg.Channel
	main := d.Reply()
	var ts string
	posted := false
	png, err := d.ChartPNG()
	switch {
	case errors.Is(err, chart.ErrNoData):
	case err != nil:
		s.log.Warn("digest chart failed; posting without it", "err", err)
	default:
		ts, err = s.cfg.Poster.PostReplyWithFile(ctx, ch, main, d.ChartFileName(), d.ChartTitle(), png)
		if err != nil {
			s.log.Warn("digest chart upload failed; posting without it", "channel", ch, "err", err)
		} else {
			posted = true
		}
	}
	if !posted {
		if ts, err = s.cfg.Poster.PostReply(ctx, ch, "", main); err != nil {
			return "", fmt.Errorf("post digest to %s: %w", ch, err)
		}
	}
	if s.cfg.Posted != nil {
		s.cfg.Posted(ctx, d, ch, ts)
	}
	if ts == "" {
		s.log.Warn("digest posted, but Slack did not say the message's ts in time: the details were not threaded", "channel", ch)
		return "", nil
	}
	for _, r := range d.ThreadReplies() {
		if _, err := s.cfg.Poster.PostReply(ctx, ch, ts, r); err != nil {
			s.log.Warn("digest thread reply failed", "channel", ch, "title", r.Title, "err", err)
		}
	}
	return ts, nil
}
