package digest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/vrambot/vrambot/config"
	"github.com/vrambot/vrambot/reply"
	"github.com/vrambot/vrambot/store"
)

// Poster posts to Slack; the bot implements it. PostReply with an empty
// threadTS starts a message and returns its ts; UploadFile shares a file in
// a thread through Slack's external upload flow.
type Poster interface {
	PostReply(ctx context.Context, channel, threadTS string, r reply.Reply) (ts string, err error)
	UploadFile(ctx context.Context, channel, threadTS, filename, title string, data []byte) error
}

// Scheduling defaults (DESIGN.md §3.4, §7).
const (
	DefaultCron   = "0 9 * * 1-5"
	DefaultWindow = 24 * time.Hour
	// DefaultCatchUp is how old a missed run may be for a starting replica
	// to still post it.
	DefaultCatchUp = 24 * time.Hour
	// lockTTL outlives a digest run: six queries bounded by their timeout,
	// then a handful of Slack calls.
	lockTTL = 10 * time.Minute
	// sentTTL keeps the "sent" marker longer than any catch-up window, so a
	// replica restarted days later still sees the period was posted.
	sentTTL = 4 * 24 * time.Hour
)

// SchedulerConfig wires a Scheduler. Only Store is needed for scheduled
// posting and Poster for any posting; a dry run needs neither.
type SchedulerConfig struct {
	Spec     string         // VRAMBOT_DIGEST_CRON; empty: DefaultCron
	Location *time.Location // VRAMBOT_TZ; nil: UTC
	Channel  string         // VRAMBOT_DIGEST_CHANNEL
	Window   time.Duration  // 0: DefaultWindow
	CatchUp  time.Duration  // 0: DefaultCatchUp

	Store      store.Store // the lock and "sent" marker
	Poster     Poster
	Metrics    Metrics     // nil: Prometheus not configured
	Events     EventSource // nil: no OOM log
	Pricer     GPUPricer   // nil: no prices
	Thresholds Thresholds

	Logger *slog.Logger     // nil: slog.Default()
	Now    func() time.Time // nil: time.Now
}

// Scheduler composes and posts the digest on a cron schedule, exactly once
// per scheduled time across every replica sharing the store.
type Scheduler struct {
	cfg      SchedulerConfig
	schedule cron.Schedule
	log      *slog.Logger
}

// NewScheduler validates cfg and fills in its defaults.
func NewScheduler(cfg SchedulerConfig) (*Scheduler, error) {
	if cfg.Spec == "" {
		cfg.Spec = DefaultCron
	}
	if cfg.Location == nil {
		cfg.Location = time.UTC
	}
	if cfg.Window == 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.Window < 0 || cfg.Window > MaxWindow {
		return nil, fmt.Errorf("digest window %s: want more than 0 and at most %s", cfg.Window, MaxWindow)
	}
	if cfg.CatchUp == 0 {
		cfg.CatchUp = DefaultCatchUp
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	sched, err := config.ParseCron(cfg.Spec)
	if err != nil {
		return nil, fmt.Errorf("digest cron %q: %w", cfg.Spec, err)
	}
	return &Scheduler{cfg: cfg, schedule: sched, log: cfg.Logger.With("component", "digest")}, nil
}

// Next is the first scheduled time after t, in the scheduler's location.
func (s *Scheduler) Next(t time.Time) time.Time {
	return s.schedule.Next(t.In(s.cfg.Location))
}

// Previous is the latest scheduled time at or before t, if there is one in
// the last eight days (a weekday schedule's longest gap is three).
func (s *Scheduler) Previous(t time.Time) (time.Time, bool) {
	t = t.In(s.cfg.Location)
	// Widen the look-back until it holds a scheduled time, so that a
	// per-second schedule costs a few steps and a weekly one a few dozen.
	const limit = 8 * 24 * time.Hour
	for back := time.Minute; ; back = min(4*back, limit) {
		from := t.Add(-back)
		next := s.schedule.Next(from)
		if next.IsZero() || next.After(t) {
			if back == limit {
				return time.Time{}, false
			}
			continue
		}
		prev := next
		for {
			n := s.schedule.Next(prev)
			if n.IsZero() || n.After(t) {
				return prev, true
			}
			prev = n
		}
	}
}

// Run posts a missed period once (CatchUp), then each scheduled period
// until ctx ends. Failures are logged; Run returns when ctx is done.
//
// It drives robfig/cron's Schedule with its own timer instead of cron.Cron:
// the job must know the time it was scheduled for, which is the period key
// every replica agrees on, and cron.Cron does not pass it to the job.
func (s *Scheduler) Run(ctx context.Context) error {
	if s.cfg.Store == nil || s.cfg.Poster == nil || s.cfg.Channel == "" {
		return errors.New("digest scheduler: a store, a Slack poster and a channel are needed to post")
	}
	if _, err := s.CatchUp(ctx); err != nil {
		s.log.Error("digest catch-up failed", "err", err)
	}
	var last time.Time
	for {
		now := s.cfg.Now()
		// A timer can wake a hair before the wall clock reaches next; never
		// schedule the period just run again.
		next := s.Next(later(now, last))
		if next.IsZero() {
			return fmt.Errorf("digest cron %q: no next run", s.cfg.Spec)
		}
		s.log.Debug("next digest", "at", next)
		timer := time.NewTimer(next.Sub(now))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
		last = next
		if _, err := s.Fire(ctx, next); err != nil {
			s.log.Error("digest run failed", "period", next, "err", err)
		}
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// CatchUp posts the latest scheduled period if it is within the catch-up
// window and no replica has posted it yet.
func (s *Scheduler) CatchUp(ctx context.Context) (posted bool, err error) {
	now := s.cfg.Now()
	prev, ok := s.Previous(now)
	if !ok || now.Sub(prev) > s.cfg.CatchUp {
		return false, nil
	}
	return s.Fire(ctx, prev)
}

// PeriodKey is how a scheduled time names its period in the store.
func PeriodKey(period time.Time) string { return period.UTC().Format(time.RFC3339) }

func sentKey(period time.Time) string { return "digest:sent:" + PeriodKey(period) }
func lockKey(period time.Time) string { return "digest:lock:" + PeriodKey(period) }

// Fire posts the digest for the scheduled time period unless some replica
// already has. The window ends at period (not at the wall clock), so every
// replica would compose the same digest. It reports whether this call posted.
func (s *Scheduler) Fire(ctx context.Context, period time.Time) (posted bool, err error) {
	if s.cfg.Store == nil || s.cfg.Poster == nil || s.cfg.Channel == "" {
		return false, errors.New("digest: a store, a Slack poster and a channel are needed to post")
	}
	log := s.log.With("period", PeriodKey(period))
	if sent, err := s.sent(ctx, period); err != nil || sent {
		return false, err
	}
	unlock, ok, err := s.cfg.Store.Lock(ctx, lockKey(period), lockTTL)
	if err != nil {
		return false, fmt.Errorf("digest %s: lock: %w", PeriodKey(period), err)
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
	if sent, err := s.sent(ctx, period); err != nil || sent {
		return false, err
	}
	d, err := s.compose(ctx, period)
	if err != nil {
		return false, err
	}
	ts, err := s.post(ctx, d)
	if err != nil {
		return false, err
	}
	if err := s.cfg.Store.Set(ctx, sentKey(period), []byte(ts), sentTTL); err != nil {
		return true, fmt.Errorf("digest %s: posted as %s but not marked sent: %w", PeriodKey(period), ts, err)
	}
	log.Info("digest posted", "channel", s.cfg.Channel, "ts", ts)
	return true, nil
}

func (s *Scheduler) sent(ctx context.Context, period time.Time) (bool, error) {
	_, err := s.cfg.Store.Get(ctx, sentKey(period))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	}
	return false, fmt.Errorf("digest %s: read sent marker: %w", PeriodKey(period), err)
}

// RunOnce composes the digest for the window ending at at (zero: now) and,
// unless dryRun, posts it. It is `vrambot digest [--dry-run] [--at]`; an
// on-demand post does not mark any scheduled period as sent.
func (s *Scheduler) RunOnce(ctx context.Context, at time.Time, dryRun bool) (Digest, error) {
	if at.IsZero() {
		at = s.cfg.Now()
	}
	d, err := s.compose(ctx, at)
	if err != nil {
		return Digest{}, err
	}
	if dryRun {
		return d, nil
	}
	if s.cfg.Poster == nil || s.cfg.Channel == "" {
		return d, errors.New("digest: cannot post without Slack and VRAMBOT_DIGEST_CHANNEL; use --dry-run")
	}
	if _, err := s.post(ctx, d); err != nil {
		return d, err
	}
	return d, nil
}

func (s *Scheduler) compose(ctx context.Context, end time.Time) (Digest, error) {
	end = end.In(s.cfg.Location)
	return Compose(ctx, Inputs{
		Window:     NewWindow(end, s.cfg.Window),
		Metrics:    s.cfg.Metrics,
		Events:     s.cfg.Events,
		Pricer:     s.cfg.Pricer,
		Thresholds: s.cfg.Thresholds,
	})
}

// post sends the main message, its thread details and the chart. Only the
// main message must succeed: a digest without its thread is still a digest,
// and posting it again would be worse.
func (s *Scheduler) post(ctx context.Context, d Digest) (string, error) {
	ch := s.cfg.Channel
	ts, err := s.cfg.Poster.PostReply(ctx, ch, "", d.Reply())
	if err != nil {
		return "", fmt.Errorf("post digest to %s: %w", ch, err)
	}
	for _, r := range d.ThreadReplies() {
		if _, err := s.cfg.Poster.PostReply(ctx, ch, ts, r); err != nil {
			s.log.Warn("digest thread reply failed", "channel", ch, "title", r.Title, "err", err)
		}
	}
	w := Window{Start: d.Window.Start, End: d.Window.End}
	title := fmt.Sprintf("GPU memory, %s to %s", w.Start.Format("Mon 15:04"), w.End.Format("Mon 15:04 MST"))
	png, err := Chart(title, w, d.Chart)
	switch {
	case errors.Is(err, ErrNoChartData):
	case err != nil:
		s.log.Warn("digest chart failed", "err", err)
	default:
		name := "gpu-memory-" + w.End.Format("2006-01-02") + ".png"
		if err := s.cfg.Poster.UploadFile(ctx, ch, ts, name, title, png); err != nil {
			s.log.Warn("digest chart upload failed", "channel", ch, "err", err)
		}
	}
	return ts, nil
}
