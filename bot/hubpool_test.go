package bot

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vrambot/vrambot/internal/slacktest"
	"github.com/vrambot/vrambot/internal/testutil"
)

// slowHub stands in for the resolver behind a Hub that does not answer:
// every query whose first word holds a '/' needs the Hub, and its lookup
// waits until release is closed (or its context ends).
type slowHub struct {
	release chan struct{}
	// stubborn lookups wait for release even when their context ends.
	stubborn bool
	running  atomic.Int64 // lookups in progress
	most     atomic.Int64 // the most at once
	users    sync.Map     // user ids the lookups were made for
}

func newSlowHub() *slowHub { return &slowHub{release: make(chan struct{})} }

func (h *slowHub) HubLookup(_ context.Context, query string) (string, bool) {
	word, _, _ := strings.Cut(query, " ")
	return word, strings.Contains(word, "/")
}

func (h *slowHub) PrefetchModel(ctx context.Context, user, ref string) func(context.Context) context.Context {
	n := h.running.Add(1)
	defer h.running.Add(-1)
	for m := h.most.Load(); n > m && !h.most.CompareAndSwap(m, n); m = h.most.Load() {
	}
	h.users.Store(user, true)
	done := ctx.Done()
	if h.stubborn {
		done = nil
	}
	select {
	case <-h.release:
	case <-done:
	}
	return func(ctx context.Context) context.Context { return ctx }
}

func slashAs(t *testing.T, ts *testServer, user, text, responseName string) (int, string) {
	t.Helper()
	form := slacktest.SlashCommand("/vram", text, ts.slack.ResponseURL(responseName))
	form.Set("user_id", user)
	resp := ts.post(t, "/slack/commands", slacktest.FormContent, []byte(form.Encode()))
	return resp.StatusCode, readAll(t, resp)
}

// TestSlowHubDoesNotHoldCompute: lookups of slow repos wait in the Hub
// pool, not in compute slots, so another user's plain question is answered
// inline while they wait; released, every lookup is answered.
func TestSlowHubDoesNotHoldCompute(t *testing.T) {
	hub := newSlowHub()
	ts := newTestServer(t, nil, nil, func(c *Config, d *Deps) { c.MaxInFlight = 2; d.Lookups = hub })
	const slow = 20
	for i := range slow {
		code, body := slashAs(t, ts, fmt.Sprintf("U%03d", i), fmt.Sprintf("slow/Model-%d lora 4090", i), fmt.Sprintf("slow%d", i))
		if code != http.StatusOK || !strings.Contains(body, "Looking up slow/Model-") {
			t.Fatalf("slow ack %d: %d %.200s", i, code, body)
		}
	}
	testutil.Eventually(t, 10*time.Second, "the lookups are waiting", func() bool { return hub.running.Load() == slow })
	if n := len(ts.compute); n != 0 {
		t.Errorf("%d compute slots held while the Hub is slow", n)
	}
	code, body := slashAs(t, ts, "UPLAIN", "7b lora a100", "plain")
	if code != http.StatusOK || !strings.Contains(body, `"blocks"`) || strings.Contains(body, workingText) {
		t.Fatalf("plain question while the Hub is slow: %d %.300s", code, body)
	}
	close(hub.release)
	ts.idle(t)
	for i := range slow {
		if got := responses(ts.slack, fmt.Sprintf("slow%d", i)); len(got) != 1 {
			t.Errorf("slow %d: %d answers", i, len(got))
		}
	}
	if _, ok := hub.users.Load("U007"); !ok {
		t.Error("the lookup was not made for the user who asked")
	}
}

// TestHubPoolBounds: past MaxHubLookups running and MaxHubQueue waiting a
// lookup is refused at once; one that finds no slot within HubWait is told
// so; either way the user gets an answer that says why.
func TestHubPoolBounds(t *testing.T) {
	hub := newSlowHub()
	ts := newTestServer(t, nil, nil, func(c *Config, d *Deps) {
		c.MaxHubLookups, c.MaxHubQueue, c.HubWait = 1, 1, 30*time.Second
		d.Lookups = hub
	})
	slashAs(t, ts, "U1", "slow/A lora", "a")
	testutil.Eventually(t, 10*time.Second, "the first lookup runs", func() bool { return hub.running.Load() == 1 })
	slashAs(t, ts, "U2", "slow/B lora", "b")
	testutil.Eventually(t, 10*time.Second, "the second waits", func() bool { return ts.hubWaiting.Load() == 2 })
	slashAs(t, ts, "U3", "slow/C lora", "c")
	testutil.Eventually(t, 10*time.Second, "the third is refused", func() bool { return len(responses(ts.slack, "c")) == 1 })
	if body := string(responses(ts.slack, "c")[0].Body); !strings.Contains(body, "Too many models are being looked up") {
		t.Errorf("refusal: %.300s", body)
	}
	close(hub.release)
	ts.idle(t)
	if hub.most.Load() != 1 {
		t.Errorf("%d lookups ran at once, want 1", hub.most.Load())
	}

	hub = newSlowHub()
	hub.stubborn = true
	ts = newTestServer(t, nil, nil, func(c *Config, d *Deps) {
		c.MaxHubLookups, c.HubWait = 1, 300*time.Millisecond
		d.Lookups = hub
	})
	slashAs(t, ts, "U1", "slow/A lora", "a")
	testutil.Eventually(t, 10*time.Second, "the first lookup holds the slot", func() bool { return hub.running.Load() == 1 })
	slashAs(t, ts, "U2", "slow/B lora", "b")
	testutil.Eventually(t, 10*time.Second, "the second is told it took too long", func() bool { return len(responses(ts.slack, "b")) == 1 })
	if body := string(responses(ts.slack, "b")[0].Body); !strings.Contains(body, "Looking up slow/B on the Hugging Face Hub took too long") {
		t.Errorf("past HubWait: %.300s", body)
	}
	close(hub.release)
	ts.idle(t)
}

// TestHomeBurst: a burst of Home tab opens is acked with 200 every time,
// never 503, published under views.publish's rate tier (homeBurst at once,
// then homePublishesPerMinute), one per user; past HomeQueue waiting,
// opens are acked and dropped.
func TestHomeBurst(t *testing.T) {
	ts := newTestServer(t, nil, nil, func(c *Config, d *Deps) { c.HomeQueue = 200; c.MaxPending = 10 })
	start := time.Now()
	const opens = 400
	for i := range opens {
		resp := ts.event(t, fmt.Sprintf("EvHomeBurst%d", i), slacktest.AppHomeOpened(fmt.Sprintf("U%04d", i%300), "home"))
		if code := resp.StatusCode; code != http.StatusOK {
			t.Fatalf("open %d: HTTP %d %s", i, code, readAll(t, resp))
		}
		readAll(t, resp)
	}
	time.Sleep(500 * time.Millisecond) // room for publishes past the pace, if any went out
	published := len(ts.slack.Answered("views.publish"))
	allowed := homeBurst + int(time.Since(start)/(time.Minute/homePublishesPerMinute)) + 1
	if published == 0 || published > allowed {
		t.Errorf("%d views published in %s, want 1..%d (the rate tier)", published, time.Since(start).Round(time.Millisecond), allowed)
	}
	ts.home.mu.Lock()
	waiting := len(ts.home.waiting)
	ts.home.mu.Unlock()
	if waiting > 200 {
		t.Errorf("%d waiting past the queue's bound of 200", waiting)
	}
	if err := ts.Shutdown(t.Context()); err != nil {
		t.Errorf("shutdown with Home tabs queued: %v", err)
	}
}
