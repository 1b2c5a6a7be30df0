package digest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/vrambot/vrambot/reply"
	"github.com/vrambot/vrambot/store"
	"github.com/vrambot/vrambot/store/storetest"
)

// fakePoster is a Slack that records what was posted.
type fakePoster struct {
	mu      sync.Mutex
	n       int
	posts   []fakePost
	uploads []fakeUpload
	failing bool // PostReply fails while set
}

type fakePost struct {
	channel, threadTS, ts string
	r                     reply.Reply
}

type fakeUpload struct {
	channel, threadTS, filename string
	size                        int
}

var _ Poster = (*fakePoster)(nil)

func (p *fakePoster) PostReply(_ context.Context, channel, threadTS string, r reply.Reply) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failing {
		return "", errors.New("slack: 500 internal_error")
	}
	p.n++
	ts := fmt.Sprintf("1700000000.%06d", p.n)
	p.posts = append(p.posts, fakePost{channel: channel, threadTS: threadTS, ts: ts, r: r})
	return ts, nil
}

func (p *fakePoster) UploadFile(_ context.Context, channel, threadTS, filename, _ string, data []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.uploads = append(p.uploads, fakeUpload{channel: channel, threadTS: threadTS, filename: filename, size: len(data)})
	return nil
}

// mainPosts returns the digests posted as top-level messages, by window end.
func (p *fakePoster) mainPosts() map[time.Time]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[time.Time]int{}
	for _, post := range p.posts {
		if post.threadTS == "" {
			out[post.r.Result.(Digest).Window.End.UTC()]++
		}
	}
	return out
}

func (p *fakePoster) setFailing(f bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failing = f
}

// redisReplicas returns n Redis stores on one unique key prefix: n replicas
// of the bot sharing the real Redis (storetest's CI policy).
func redisReplicas(t *testing.T, n int) []store.Store {
	t.Helper()
	var out []store.Store
	for _, r := range storetest.NewRedisReplicas(t, n) {
		out = append(out, r)
	}
	return out
}

var quiet = slog.New(slog.DiscardHandler)

func fixedNow(t time.Time) func() time.Time { return func() time.Time { return t } }

func newTestScheduler(t *testing.T, st store.Store, p Poster, now func() time.Time, spec string) *Scheduler {
	t.Helper()
	s, err := NewScheduler(SchedulerConfig{
		Spec: spec, Channel: "C0DIGEST", Store: st, Poster: p, Now: now,
		Events: NewEventLog(store.NewMemory()), Logger: quiet,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTwoReplicasPostOncePerPeriod fires the same period from two
// schedulers on the real Redis, many times and concurrently, then restarts
// one: exactly one digest is posted.
func TestTwoReplicasPostOncePerPeriod(t *testing.T) {
	stores := redisReplicas(t, 3)
	poster := &fakePoster{}
	now := fixedNow(time.Date(2024, 1, 2, 9, 0, 30, 0, time.UTC)) // Tuesday, just after 09:00
	a := newTestScheduler(t, stores[0], poster, now, "")
	b := newTestScheduler(t, stores[1], poster, now, "")
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
			ok, err := s.Fire(context.Background(), period)
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
	restarted := newTestScheduler(t, stores[2], poster, now, "")
	if ok, err := restarted.CatchUp(context.Background()); err != nil || ok {
		t.Errorf("catch-up after restart posted=%v err=%v, want no post", ok, err)
	}
	if got := poster.mainPosts(); len(got) != 1 || got[period] != 1 {
		t.Errorf("main posts by period = %v, want exactly one for %s", got, period)
	}
}

// TestReplicasRunOnRealCron runs two schedulers' Run loops on a per-second
// schedule: every period is posted exactly once across both.
func TestReplicasRunOnRealCron(t *testing.T) {
	stores := redisReplicas(t, 2)
	poster := &fakePoster{}
	ctx, cancel := context.WithTimeout(context.Background(), 3200*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	for _, st := range stores {
		s := newTestScheduler(t, st, poster, nil, "*/1 * * * * *")
		wg.Go(func() {
			if err := s.Run(ctx); err != nil {
				t.Errorf("run: %v", err)
			}
		})
	}
	wg.Wait()
	got := poster.mainPosts()
	if len(got) < 3 {
		t.Errorf("%d periods posted in 3.2 s of a per-second schedule (with catch-up), want at least 3", len(got))
	}
	for p, n := range got {
		if n != 1 {
			t.Errorf("period %s posted %d times", p.Format(time.RFC3339), n)
		}
		if p.Nanosecond() != 0 {
			t.Errorf("period %s is not a scheduled time", p.Format(time.RFC3339Nano))
		}
	}
}

func TestCatchUp(t *testing.T) {
	tue0900 := time.Date(2024, 1, 2, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		now      time.Time
		wantPost bool
	}{
		{"missed this morning", tue0900.Add(90 * time.Minute), true},
		{"missed 23 h ago", tue0900.Add(23 * time.Hour), true},
		{"too old: Friday's run on Monday morning", time.Date(2024, 1, 8, 8, 0, 0, 0, time.UTC), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := store.NewMemory()
			poster := &fakePoster{}
			a := newTestScheduler(t, st, poster, fixedNow(tt.now), "")
			b := newTestScheduler(t, st, poster, fixedNow(tt.now), "")
			okA, errA := a.CatchUp(context.Background())
			okB, errB := b.CatchUp(context.Background())
			if errA != nil || errB != nil {
				t.Fatal(errA, errB)
			}
			if okA != tt.wantPost || okB {
				t.Errorf("first replica posted %v, second %v; want %v, false", okA, okB, tt.wantPost)
			}
		})
	}
}

func TestFireRetriesAfterFailedPost(t *testing.T) {
	st := store.NewMemory()
	poster := &fakePoster{failing: true}
	now := time.Date(2024, 1, 2, 9, 0, 0, 0, time.UTC)
	s := newTestScheduler(t, st, poster, fixedNow(now), "")
	if ok, err := s.Fire(context.Background(), now); err == nil || ok {
		t.Fatalf("Fire with Slack down: posted=%v err=%v, want an error", ok, err)
	}
	poster.setFailing(false)
	if ok, err := s.Fire(context.Background(), now); err != nil || !ok {
		t.Fatalf("Fire after Slack recovered: posted=%v err=%v, want a post", ok, err)
	}
	if ok, _ := s.Fire(context.Background(), now); ok {
		t.Error("Fire posted the same period twice")
	}
}

// storyFleet is the story's Fleet, computed once (the simulation takes a second).
var storyFleet = sync.OnceValues(func() (Fleet, error) {
	return simMetrics{storyDay()}.Fleet(context.Background(), Window{Start: storyStart, End: storyEnd}, Thresholds{})
})

type fixedMetrics struct{}

func (fixedMetrics) Fleet(context.Context, Window, Thresholds) (Fleet, error) { return storyFleet() }

func TestRunOncePostsThreadAndChart(t *testing.T) {
	poster := &fakePoster{}
	s, err := NewScheduler(SchedulerConfig{Channel: "C0DIGEST", Poster: poster, Logger: quiet, Metrics: fixedMetrics{}, Events: storyEventLog(t), Pricer: storyPrices})
	if err != nil {
		t.Fatal(err)
	}
	dry, err := s.RunOnce(context.Background(), storyEnd, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(poster.posts) != 0 || dry.GPUsSeen != 6 {
		t.Fatalf("dry run posted %d messages, saw %d GPUs; want 0 posts, 6 GPUs", len(poster.posts), dry.GPUsSeen)
	}
	if _, err := s.RunOnce(context.Background(), storyEnd, false); err != nil {
		t.Fatal(err)
	}
	main := poster.posts[0]
	if main.threadTS != "" || main.channel != "C0DIGEST" {
		t.Errorf("first post %+v is not a top-level message in C0DIGEST", main)
	}
	if want := 1 + len(dry.ThreadReplies()); len(poster.posts) != want {
		t.Errorf("%d posts, want the main message and %d thread replies", len(poster.posts), want-1)
	}
	for _, p := range poster.posts[1:] {
		if p.threadTS != main.ts {
			t.Errorf("detail %q posted outside the digest's thread", p.r.Title)
		}
	}
	if len(poster.uploads) != 1 || poster.uploads[0].threadTS != main.ts || poster.uploads[0].filename != "gpu-memory-2024-01-02.png" {
		t.Errorf("uploads = %+v, want the chart in the digest's thread", poster.uploads)
	}
}

func TestRunOnceWithoutSlack(t *testing.T) {
	s, err := NewScheduler(SchedulerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.RunOnce(context.Background(), storyEnd, true)
	if err != nil || d.DataQuality.Prometheus != StatusNotConfigured {
		t.Errorf("dry run with nothing configured: %v, %+v", err, d.DataQuality)
	}
	if _, err := s.RunOnce(context.Background(), storyEnd, false); err == nil {
		t.Error("posting without Slack did not fail")
	}
	if _, err := s.Fire(context.Background(), storyEnd); err == nil {
		t.Error("Fire without a store did not fail")
	}
}

func TestNewSchedulerRejects(t *testing.T) {
	tests := []struct {
		name string
		cfg  SchedulerConfig
	}{
		{"bad spec", SchedulerConfig{Spec: "every morning"}},
		{"six fields out of range", SchedulerConfig{Spec: "61 * * * * *"}},
		{"negative window", SchedulerConfig{Window: -time.Hour}},
		{"window too long", SchedulerConfig{Window: MaxWindow + time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewScheduler(tt.cfg); err == nil {
				t.Error("accepted")
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
		name string
		spec string
		loc  *time.Location
		t    time.Time
		want time.Time
	}{
		{"exactly at the run", "", berlin, time.Date(2024, 1, 8, 9, 0, 0, 0, berlin), time.Date(2024, 1, 8, 9, 0, 0, 0, berlin)},
		{"Monday before nine is Friday", "", berlin, time.Date(2024, 1, 8, 8, 59, 0, 0, berlin), time.Date(2024, 1, 5, 9, 0, 0, 0, berlin)},
		{"Saturday is Friday", "", berlin, time.Date(2024, 1, 6, 12, 0, 0, 0, berlin), time.Date(2024, 1, 5, 9, 0, 0, 0, berlin)},
		{"asked in UTC, scheduled in Berlin", "", berlin, time.Date(2024, 1, 8, 8, 30, 0, 0, time.UTC), time.Date(2024, 1, 8, 9, 0, 0, 0, berlin)},
		{"per second", "*/2 * * * * *", time.UTC, time.Date(2024, 1, 8, 9, 0, 3, 500, time.UTC), time.Date(2024, 1, 8, 9, 0, 2, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewScheduler(SchedulerConfig{Spec: tt.spec, Location: tt.loc})
			if err != nil {
				t.Fatal(err)
			}
			got, ok := s.Previous(tt.t)
			if !ok || !got.Equal(tt.want) {
				t.Errorf("Previous(%s) = %s, %v; want %s", tt.t, got, ok, tt.want)
			}
			if next := s.Next(got); !next.After(tt.t) {
				t.Errorf("Next(Previous) = %s is not after %s", next, tt.t)
			}
		})
	}
	s, err := NewScheduler(SchedulerConfig{Spec: "0 9 29 2 *"}) // Feb 29 only
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := s.Previous(time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)); ok {
		t.Errorf("Previous found %s, more than eight days back", p)
	}
}
