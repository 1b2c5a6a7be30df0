package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/vrambot/vrambot/digest"
	dt "github.com/vrambot/vrambot/digest/digesttest"
	"github.com/vrambot/vrambot/digest/fleet"
	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/internal/testutil"
	"github.com/vrambot/vrambot/reply"
	"github.com/vrambot/vrambot/store"
	"github.com/vrambot/vrambot/store/storetest"
)

// fakePoster is a Slack that records what was posted.
type fakePoster struct {
	mu        sync.Mutex
	n         int
	posts     []fakePost
	digests   []digest.Digest // told by the Posted hook
	failing   bool            // every post fails while set
	fileFails bool            // PostReplyWithFile fails
	noShareTS bool            // PostReplyWithFile posts but returns no ts
}

type fakePost struct {
	channel, threadTS, ts string
	r                     reply.Reply
	file                  string
	size                  int
}

var _ Poster = (*fakePoster)(nil)

func (p *fakePoster) PostReply(_ context.Context, channel, threadTS string, r reply.Reply) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failing {
		return "", errors.New("slack: 500 internal_error")
	}
	return p.record(channel, threadTS, r, "", 0), nil
}

func (p *fakePoster) PostReplyWithFile(_ context.Context, channel string, r reply.Reply, filename, _ string, data []byte) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failing || p.fileFails {
		return "", errors.New("slack: files.completeUploadExternal: invalid_blocks")
	}
	ts := p.record(channel, "", r, filename, len(data))
	if p.noShareTS {
		return "", nil
	}
	return ts, nil
}

func (p *fakePoster) record(channel, threadTS string, r reply.Reply, file string, size int) string {
	p.n++
	ts := fmt.Sprintf("1700000000.%06d", p.n)
	p.posts = append(p.posts, fakePost{channel: channel, threadTS: threadTS, ts: ts, r: r, file: file, size: size})
	return ts
}

func (p *fakePoster) all() []fakePost {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]fakePost(nil), p.posts...)
}

// mainPosts counts the digests posted as top-level messages, by window
// length and end.
func (p *fakePoster) mainPosts() map[string]int {
	out := map[string]int{}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, d := range p.digests {
		out[d.Window.Duration+" "+d.Window.End.UTC().Format(time.RFC3339)]++
	}
	return out
}

// posted is the scheduler's Posted hook: the digests whose main message
// went out.
func (p *fakePoster) posted(_ context.Context, d digest.Digest, _, _ string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.digests = append(p.digests, d)
}

func (p *fakePoster) set(f func(p *fakePoster)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

var quiet = slog.New(slog.DiscardHandler)

func fixedNow(t time.Time) func() time.Time { return func() time.Time { return t } }

func newTestScheduler(t *testing.T, st Store, p Poster, now func() time.Time, spec, weekly string) *Scheduler {
	t.Helper()
	cfg := Config{
		Spec: spec, WeeklySpec: weekly, Channel: "C0DIGEST", Store: st, Poster: p, Now: now,
		Sources: Sources{Events: digest.NewEventLog(store.NewMemory())}, Logger: quiet,
	}
	if fp, ok := p.(*fakePoster); ok {
		cfg.Posted = fp.posted
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTwoReplicasPostOncePerPeriod fires the same period from two
// schedulers on the real Redis, many times and concurrently, then restarts
// one: exactly one digest is posted.
func TestTwoReplicasPostOncePerPeriod(t *testing.T) {
	stores := storetest.NewRedisReplicas(t, 3)
	poster := &fakePoster{}
	now := fixedNow(time.Date(2024, 1, 2, 9, 0, 30, 0, time.UTC)) // Tuesday, just after 09:00
	a := newTestScheduler(t, stores[0], poster, now, "", "")
	b := newTestScheduler(t, stores[1], poster, now, "", "")
	period := time.Date(2024, 1, 2, 9, 0, 0, 0, time.UTC)

	var wg sync.WaitGroup
	var mu sync.Mutex
	posted := 0
	for i := range 10 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			ok, err := s.Fire(context.Background(), Daily, period)
			if err != nil {
				t.Errorf("fire: %v", err)
			}
			if ok {
				mu.Lock()
				posted++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if posted != 1 {
		t.Errorf("%d Fire calls reported posting, want 1", posted)
	}
	// Replica b restarts (a new process: a new connection) and catches up.
	restarted := newTestScheduler(t, stores[2], poster, now, "", "")
	if n, err := restarted.CatchUp(context.Background()); err != nil || n != 0 {
		t.Errorf("catch-up after restart posted %d, err %v; want no post", n, err)
	}
	if got := poster.mainPosts(); len(got) != 1 || got["24h "+period.Format(time.RFC3339)] != 1 {
		t.Errorf("main posts = %v, want exactly one for %s", got, period)
	}
}

// TestReplicasOnSharedCron registers the daily and the weekly digest of two
// replicas (two processes, two crons) on per-second schedules: every period
// of each is posted exactly once across both, with the window of its digest.
func TestReplicasOnSharedCron(t *testing.T) {
	stores := storetest.NewRedisReplicas(t, 2)
	poster := &fakePoster{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var crons []*cron.Cron
	for _, st := range stores {
		s := newTestScheduler(t, st, poster, nil, "*/1 * * * * *", "*/1 * * * * *")
		c := cron.New()
		if err := s.Register(ctx, c); err != nil {
			t.Fatal(err)
		}
		c.Start()
		crons = append(crons, c)
	}
	// Wait for two periods of each digest, however slow the machine.
	testutil.Eventually(t, 30*time.Second, "two periods of each digest posted", func() bool {
		days, weeks := 0, 0
		for k := range poster.mainPosts() {
			switch k[:3] {
			case "24h":
				days++
			case "7d ":
				weeks++
			}
		}
		return days >= 2 && weeks >= 2
	})
	cancel()
	for _, c := range crons {
		<-c.Stop().Done()
	}
	for key, n := range poster.mainPosts() {
		if n != 1 {
			t.Errorf("digest %s posted %d times", key, n)
		}
	}
	poster.mu.Lock()
	defer poster.mu.Unlock()
	for _, d := range poster.digests {
		if end := d.Window.End; end.Nanosecond() != 0 {
			t.Errorf("period %s is not a scheduled time", end.Format(time.RFC3339Nano))
		}
	}
}

func TestRegisterNeedsSlack(t *testing.T) {
	s, err := New(Config{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Register(context.Background(), cron.New()); !errs.Is(err, errs.Invalid) {
		t.Errorf("Register without a store, poster and channel: %v, want Invalid", err)
	}
	if _, err := s.Fire(context.Background(), Daily, time.Now()); err == nil {
		t.Error("Fire without a store did not fail")
	}
	if _, err := s.Fire(context.Background(), Weekly, time.Now()); !errs.Is(err, errs.NotFound) {
		t.Errorf("Fire of an unscheduled weekly digest: %v, want NotFound", err)
	}
}

func TestCatchUp(t *testing.T) {
	tue0900 := time.Date(2024, 1, 2, 9, 0, 0, 0, time.UTC)
	mon0900 := time.Date(2024, 1, 8, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		now        time.Time
		weekly     string
		wantPosted int
	}{
		{"missed this morning", tue0900.Add(90 * time.Minute), "", 1},
		{"missed 23 h ago", tue0900.Add(23 * time.Hour), "", 1},
		{"too old: Friday's run on Monday morning", mon0900.Add(-time.Hour), "", 0},
		{"daily and weekly both missed on Monday", mon0900.Add(2 * time.Hour), "0 9 * * 1", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := store.NewMemory()
			poster := &fakePoster{}
			a := newTestScheduler(t, st, poster, fixedNow(tt.now), "", tt.weekly)
			b := newTestScheduler(t, st, poster, fixedNow(tt.now), "", tt.weekly)
			nA, errA := a.CatchUp(context.Background())
			nB, errB := b.CatchUp(context.Background())
			if errA != nil || errB != nil {
				t.Fatal(errA, errB)
			}
			if nA != tt.wantPosted || nB != 0 {
				t.Errorf("first replica posted %d, second %d; want %d, 0", nA, nB, tt.wantPosted)
			}
		})
	}
}

func TestFireRetriesAfterFailedPost(t *testing.T) {
	st := store.NewMemory()
	poster := &fakePoster{failing: true}
	now := time.Date(2024, 1, 2, 9, 0, 0, 0, time.UTC)
	s := newTestScheduler(t, st, poster, fixedNow(now), "", "")
	if ok, err := s.Fire(context.Background(), Daily, now); err == nil || ok {
		t.Fatalf("Fire with Slack down: posted=%v err=%v, want an error", ok, err)
	}
	poster.set(func(p *fakePoster) { p.failing = false })
	if ok, err := s.Fire(context.Background(), Daily, now); err != nil || !ok {
		t.Fatalf("Fire after Slack recovered: posted=%v err=%v, want a post", ok, err)
	}
	if ok, _ := s.Fire(context.Background(), Daily, now); ok {
		t.Error("Fire posted the same period twice")
	}
}

func clusterScheduler(t *testing.T, p Poster) *Scheduler {
	t.Helper()
	s, err := New(Config{Channel: "C0DIGEST", Poster: p, Logger: quiet, Sources: Sources{Metrics: dt.Sim{Days: []dt.Day{dt.ClusterDay()}}}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPostChartWithTopMessage: the chart goes with the top message, the
// details in its thread.
func TestPostChartWithTopMessage(t *testing.T) {
	poster := &fakePoster{}
	s := clusterScheduler(t, poster)
	d, err := s.Compose(context.Background(), dt.ClusterDay().End, 0)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := s.Post(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	posts := poster.all()
	main := posts[0]
	if main.threadTS != "" || main.ts != ts || main.file != "gpu-memory-2024-01-09.png" || main.size == 0 {
		t.Errorf("top message %+v, want the digest with its chart", main)
	}
	if want := 1 + len(d.ThreadReplies()); len(posts) != want {
		t.Errorf("%d posts, want the top message and %d thread replies", len(posts), want-1)
	}
	for _, p := range posts[1:] {
		if p.threadTS != ts || p.file != "" {
			t.Errorf("detail %q posted outside the digest's thread", p.r.Title)
		}
	}
}

func TestPostFallbacks(t *testing.T) {
	t.Run("upload refused: the digest goes without its chart", func(t *testing.T) {
		poster := &fakePoster{fileFails: true}
		s := clusterScheduler(t, poster)
		d, _ := s.Compose(context.Background(), dt.ClusterDay().End, 0)
		ts, err := s.Post(context.Background(), d)
		posts := poster.all()
		if err != nil || ts == "" || posts[0].file != "" || posts[0].threadTS != "" || len(posts) != 1+len(d.ThreadReplies()) {
			t.Errorf("ts %q err %v, %d posts; want the digest as text with its thread", ts, err, len(posts))
		}
	})
	t.Run("posted, but no ts: no thread, no second post", func(t *testing.T) {
		poster := &fakePoster{noShareTS: true}
		s := clusterScheduler(t, poster)
		d, _ := s.Compose(context.Background(), dt.ClusterDay().End, 0)
		ts, err := s.Post(context.Background(), d)
		if err != nil || ts != "" || len(poster.all()) != 1 {
			t.Errorf("ts %q err %v, %d posts; want one post and nothing threaded", ts, err, len(poster.all()))
		}
	})
	t.Run("no metrics: no chart", func(t *testing.T) {
		poster := &fakePoster{}
		s, _ := New(Config{Channel: "C0DIGEST", Poster: poster, Logger: quiet})
		d, _ := s.Compose(context.Background(), dt.ClusterDay().End, 0)
		if _, err := s.Post(context.Background(), d); err != nil || poster.all()[0].file != "" {
			t.Errorf("err %v, posts %+v; want a text digest", err, poster.all())
		}
	})
	t.Run("no Slack", func(t *testing.T) {
		s, _ := New(Config{Logger: quiet})
		d, _ := s.Compose(context.Background(), dt.ClusterDay().End, 0)
		if _, err := s.Post(context.Background(), d); !errs.Is(err, errs.Invalid) {
			t.Errorf("posting without Slack: %v, want Invalid", err)
		}
	})
}

func TestComposeWindow(t *testing.T) {
	s := clusterScheduler(t, nil)
	d, err := s.Compose(context.Background(), dt.ClusterDay().End, digest.WeeklyWindow)
	if err != nil {
		t.Fatal(err)
	}
	if d.Window.Duration != "7d" || d.DataQuality.Step != "35m" || d.GPUsSeen != 11 {
		t.Errorf("weekly digest: window %s, step %s, %d GPUs; want 7d, 35m, 11", d.Window.Duration, d.DataQuality.Step, d.GPUsSeen)
	}
}

func TestNewRejects(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"bad spec", Config{Spec: "every morning"}},
		{"six fields out of range", Config{Spec: "61 * * * * *"}},
		{"bad weekly spec", Config{WeeklySpec: "mondays"}},
		{"negative catch-up", Config{CatchUp: -time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.cfg); !errs.Is(err, errs.Invalid) {
				t.Errorf("New: %v, want Invalid", err)
			}
		})
	}
}

func TestPrevious(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skipf("no tzdata: %v", err)
	}
	tests := []struct {
		name       string
		spec       string
		weekly     string
		digestName string
		loc        *time.Location
		t          time.Time
		want       time.Time
	}{
		{"exactly at the run", "", "", Daily, berlin, time.Date(2024, 1, 8, 9, 0, 0, 0, berlin), time.Date(2024, 1, 8, 9, 0, 0, 0, berlin)},
		{"Monday before nine is Friday", "", "", Daily, berlin, time.Date(2024, 1, 8, 8, 59, 0, 0, berlin), time.Date(2024, 1, 5, 9, 0, 0, 0, berlin)},
		{"Saturday is Friday", "", "", Daily, berlin, time.Date(2024, 1, 6, 12, 0, 0, 0, berlin), time.Date(2024, 1, 5, 9, 0, 0, 0, berlin)},
		{"asked in UTC, scheduled in Berlin", "", "", Daily, berlin, time.Date(2024, 1, 8, 8, 30, 0, 0, time.UTC), time.Date(2024, 1, 8, 9, 0, 0, 0, berlin)},
		{"per second", "*/2 * * * * *", "", Daily, time.UTC, time.Date(2024, 1, 8, 9, 0, 3, 500, time.UTC), time.Date(2024, 1, 8, 9, 0, 2, 0, time.UTC)},
		{"weekly, six days later", "", "0 9 * * 1", Weekly, berlin, time.Date(2024, 1, 14, 23, 0, 0, 0, berlin), time.Date(2024, 1, 8, 9, 0, 0, 0, berlin)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(Config{Spec: tt.spec, WeeklySpec: tt.weekly, Location: tt.loc})
			if err != nil {
				t.Fatal(err)
			}
			got, ok, err := s.Previous(tt.digestName, tt.t)
			if err != nil || !ok || !got.Equal(tt.want) {
				t.Errorf("Previous(%s) = %s, %v, %v; want %s", tt.t, got, ok, err, tt.want)
			}
			if next, _ := s.Next(tt.digestName, got); !next.After(tt.t) {
				t.Errorf("Next(Previous) = %s is not after %s", next, tt.t)
			}
		})
	}
	s, err := New(Config{Spec: "0 9 29 2 *"}) // Feb 29 only
	if err != nil {
		t.Fatal(err)
	}
	if p, ok, _ := s.Previous(Daily, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)); ok {
		t.Errorf("Previous found %s, more than eight days back", p)
	}
	if got := s.Digests(); len(got) != 1 || got[0] != Daily {
		t.Errorf("digests %v, want only the daily one", got)
	}
}

// TestInLocation: a cron in UTC still runs the digest at 09:00 Berlin time.
func TestInLocation(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skipf("no tzdata: %v", err)
	}
	s, err := New(Config{Location: berlin})
	if err != nil {
		t.Fatal(err)
	}
	next := inLocation{s.digests[0].schedule, berlin}.Next(time.Date(2024, 1, 8, 0, 0, 0, 0, time.UTC))
	if want := time.Date(2024, 1, 8, 9, 0, 0, 0, berlin); !next.Equal(want) {
		t.Errorf("next run %s, want %s", next, want)
	}
}

// gatedMetrics is the cluster day behind a gate: Fleet says it started,
// then waits until the gate opens.
type gatedMetrics struct {
	started chan struct{}
	gate    chan struct{}
	once    sync.Once
}

func (m *gatedMetrics) Fleet(ctx context.Context, w fleet.Window, th fleet.Thresholds) (fleet.Fleet, error) {
	m.once.Do(func() { close(m.started) })
	select {
	case <-m.gate:
	case <-ctx.Done():
		return fleet.Fleet{}, ctx.Err()
	}
	return dt.Sim{Days: []dt.Day{dt.ClusterDay()}}.Fleet(ctx, w, th)
}

// restartingPoster restarts Redis as the digest is posted.
type restartingPoster struct {
	*fakePoster
	restart func()
}

func (p restartingPoster) PostReplyWithFile(ctx context.Context, channel string, r reply.Reply, filename, title string, data []byte) (string, error) {
	p.restart()
	return p.fakePoster.PostReplyWithFile(ctx, channel, r, filename, title, data)
}

func (p restartingPoster) PostReply(ctx context.Context, channel, threadTS string, r reply.Reply) (string, error) {
	p.restart()
	return p.fakePoster.PostReply(ctx, channel, threadTS, r)
}

// directTo is a store on the same keys as st, not through its proxy.
func directTo(t *testing.T, st *store.Redis) *store.Redis {
	direct, err := store.NewRedis(storetest.RedisURL(), store.WithPrefix(st.Prefix()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.Close() })
	return direct
}

// TestRedisRestartsMidDigest restarts Redis (it stops answering for a few
// seconds, and, without persistence, forgets every key) while a replica
// composes and posts the digest, and while a digest is due (issue 26):
// each period is posted once, marked sent once Redis is back, and a
// replica's catch-up afterwards posts nothing.
func TestRedisRestartsMidDigest(t *testing.T) {
	now := time.Date(2024, 1, 9, 9, 0, 30, 0, time.UTC)
	period := time.Date(2024, 1, 9, 9, 0, 0, 0, time.UTC)
	newReplica := func(st Store, m digest.Metrics, poster Poster, seen *fakePoster) *Scheduler {
		s, err := New(Config{Channel: "C0DIGEST", Store: st, Poster: poster, Now: fixedNow(now), Logger: quiet,
			Posted:  seen.posted,
			Sources: Sources{Metrics: m, Events: digest.NewEventLog(st.(store.Store))}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	restart := func(p *storetest.Proxy, direct *store.Redis) {
		p.Restart(4 * time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := direct.Purge(ctx); err != nil { // no persistence: every key is gone
			t.Errorf("purge: %v", err)
		}
	}
	t.Run("while a replica posts", func(t *testing.T) {
		st, p := storetest.NewPausableRedis(t)
		direct := directTo(t, st)
		poster := &fakePoster{}
		m := &gatedMetrics{started: make(chan struct{}), gate: make(chan struct{})}
		// Redis restarts as the digest is composed (its lock is lost) and
		// is still down when the digest has been posted and is marked sent.
		a := newReplica(st, m, restartingPoster{fakePoster: poster, restart: sync.OnceFunc(func() { restart(p, direct) })}, poster)
		done := make(chan error, 1)
		go func() { _, err := a.Fire(context.Background(), Daily, period); done <- err }()
		<-m.started
		close(m.gate)
		if err := <-done; err != nil {
			t.Fatalf("Fire across the restart: %v", err)
		}
		b := newReplica(st, dt.Sim{Days: []dt.Day{dt.ClusterDay()}}, poster, poster)
		if n, err := b.CatchUp(context.Background()); err != nil || n != 0 {
			t.Errorf("catch-up after the restart posted %d (%v), want 0", n, err)
		}
		if got := poster.mainPosts(); len(got) != 1 || got["24h "+period.Format(time.RFC3339)] != 1 {
			t.Errorf("main posts = %v, want exactly one", got)
		}
	})
	t.Run("when the digest is due", func(t *testing.T) {
		st, p := storetest.NewPausableRedis(t)
		direct := directTo(t, st)
		poster := &fakePoster{}
		a := newReplica(st, dt.Sim{Days: []dt.Day{dt.ClusterDay()}}, poster, poster)
		restart(p, direct)
		a.run(context.Background(), a.digests[0]) // the cron firing while Redis is down
		if got := poster.mainPosts(); len(got) != 1 || got["24h "+period.Format(time.RFC3339)] != 1 {
			t.Errorf("main posts = %v, want the period posted once Redis was back", got)
		}
		if sent, err := a.sent(context.Background(), a.digests[0], period); err != nil || !sent {
			t.Errorf("sent marker: %v, %v", sent, err)
		}
	})
}
