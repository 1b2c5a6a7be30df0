package models_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vrambot/vrambot/hub"
	"github.com/vrambot/vrambot/hub/hubtest"
	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/models"
	"github.com/vrambot/vrambot/store"
	"github.com/vrambot/vrambot/store/storetest"
)

// Issue 26: the Hub is anyone's text and any user's question. These tests
// ask the resolver what a hostile Hub and a hostile user do, and count the
// store reads and Hub requests it makes.

// clock is a test clock for the resolver and its memory store.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// countingCache counts the store's reads.
type countingCache struct {
	store.Store
	gets atomic.Int64
}

func (c *countingCache) Get(ctx context.Context, key string) ([]byte, error) {
	c.gets.Add(1)
	return c.Store.Get(ctx, key)
}

func hubClient(t *testing.T, fake *hubtest.Server, timeout time.Duration) *hub.Client {
	t.Helper()
	c, err := hub.New(hub.Options{Endpoint: fake.URL, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestReadOncePerProcess: a model read from the Hub is answered again and
// again without reading the store or decoding its config.json; another
// replica reads the store once.
func TestReadOncePerProcess(t *testing.T) {
	fake := newFake(t)
	cache := &countingCache{Store: store.NewMemory()}
	r := models.New(models.Options{Hub: hubClient(t, fake, 2*time.Second), Cache: cache})
	for i := range 50 {
		res, err := r.Resolve(t.Context(), "acme/Open-8B")
		if err != nil || res.Model.NumLayers != 36 {
			t.Fatalf("answer %d: %v %+v", i, err, res.Source)
		}
	}
	if n := cache.gets.Load(); n != 1 {
		t.Errorf("%d store reads for 50 answers, want 1 (the first, before the fetch)", n)
	}
	other := models.New(models.Options{Hub: hubClient(t, fake, 2*time.Second), Cache: cache})
	before := cache.gets.Load()
	for range 20 {
		if res, err := other.Resolve(t.Context(), "acme/Open-8B"); err != nil || res.Source != models.SourceCache {
			t.Fatalf("other replica: %v %+v", err, res.Source)
		}
	}
	if n := cache.gets.Load() - before; n != 1 {
		t.Errorf("another replica read the store %d times for 20 answers, want 1", n)
	}
	if n := configRequests(fake); n != 1 {
		t.Errorf("%d config.json requests, want 1", n)
	}
}

// TestHostileConfigs: a config.json past the size cap, and one within it
// but past the reader's bounds, are refused in the reader's words, quickly,
// and remembered: asking again costs no request.
func TestHostileConfigs(t *testing.T) {
	fake := newFake(t)
	fake.Add(hubtest.Model{ID: "evil/Huge-8B", Config: hubtest.HugeConfig(8 << 20)})
	fake.Add(hubtest.Model{ID: "evil/Dense-8B", Config: hubtest.HugeConfig(3 << 20)})
	r := newResolver(t, fake, store.NewMemory())
	for _, tt := range []struct{ repo, want string }{
		{"evil/Huge-8B", "larger than 4096 KiB"},
		{"evil/Dense-8B", "holds more than 262144 values and keys"},
	} {
		for i := range 20 {
			start := time.Now()
			_, err := r.Resolve(t.Context(), tt.repo)
			if errs.KindOf(err) != errs.Invalid || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("%s #%d: %v, want Invalid with %q", tt.repo, i, err, tt.want)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("%s #%d took %s", tt.repo, i, took)
			}
		}
	}
	if n := configRequests(fake); n != 2 {
		t.Errorf("%d config.json requests for two hostile repos asked 20 times each, want 2", n)
	}
}

// TestFailuresAreRemembered: every failure is remembered for its own TTL,
// so asking 20 times costs one request, and asking after the TTL asks
// again.
func TestFailuresAreRemembered(t *testing.T) {
	tests := []struct {
		name  string
		ref   string
		fault *hubtest.Fault
		ttl   time.Duration
		what  func(hubtest.Counts) int
	}{
		{"missing repo", "acme/Nope", nil, models.MissingTTL, func(c hubtest.Counts) int { return c.Configs }},
		{"5xx", "down/Model", &hubtest.Fault{Status: 503}, models.TransientTTL, func(c hubtest.Counts) int { return c.Configs }},
		{"429 with Retry-After", "busy/Model", &hubtest.Fault{Status: 429, RetryAfter: 90}, 90 * time.Second, func(c hubtest.Counts) int { return c.Configs }},
		{"unreadable config", "acme/Broken-8B", nil, models.UnreadableTTL, func(c hubtest.Counts) int { return c.Configs }},
		{"gated", "acme/Gated-13B", nil, models.DeniedTTL, func(c hubtest.Counts) int { return c.Configs }},
		{"no exact match", "Zork-70B", nil, models.MissingTTL, func(c hubtest.Counts) int { return c.Searches }},
		{"search 5xx", "Quux-7B", nil, models.TransientTTL, func(c hubtest.Counts) int { return c.Searches }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFake(t)
			if tt.fault != nil {
				fake.FailRepos(strings.Split(tt.ref, "/")[0]+"/", *tt.fault)
			}
			if tt.name == "search 5xx" {
				fake.FailSearch(hubtest.Fault{Status: 502})
			}
			clk := newClock()
			r := models.New(models.Options{Hub: hubClient(t, fake, 2*time.Second), Cache: store.NewMemory(store.WithClock(clk.Now)), Now: clk.Now})
			for range 20 {
				_, _ = r.Resolve(t.Context(), tt.ref)
			}
			if n := tt.what(fake.Counts()); n != 1 {
				t.Errorf("%d requests for 20 asks, want 1", n)
			}
			clk.Advance(tt.ttl - time.Second)
			_, _ = r.Resolve(t.Context(), tt.ref)
			if n := tt.what(fake.Counts()); n != 1 {
				t.Errorf("asked again before its TTL (%s): %d requests", tt.ttl, n)
			}
			clk.Advance(2 * time.Second)
			_, _ = r.Resolve(t.Context(), tt.ref)
			if n := tt.what(fake.Counts()); n != 2 {
				t.Errorf("not asked again after its TTL (%s): %d requests", tt.ttl, n)
			}
		})
	}
}

// TestOneSearchForAnUnmatchedName: one name no repo has, asked 20 times at
// once and 20 times after, is one search.
func TestOneSearchForAnUnmatchedName(t *testing.T) {
	fake := newFake(t)
	fake.SetDelay(100 * time.Millisecond)
	r := newResolver(t, fake, store.NewMemory())
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			_, err := r.Resolve(t.Context(), "Zork-Nomatch")
			if errs.KindOf(err) != errs.NotFound {
				t.Errorf("Resolve = %v", err)
			}
		})
	}
	wg.Wait()
	for range 20 {
		_, _ = r.Resolve(t.Context(), "zork-nomatch")
	}
	if n := fake.Counts().Searches; n != 1 {
		t.Errorf("%d searches for one unmatched name asked 40 times, want 1", n)
	}
}

// TestUserBudget: one user asking for 300 missing repos makes at most two
// requests (config.json and model info) for each of DefaultUserLookups,
// and is told when to try again; another user is not held up by it.
func TestUserBudget(t *testing.T) {
	fake := newFake(t)
	r := newResolver(t, fake, store.NewMemory())
	ctx := models.WithAsker(t.Context(), "U0SCRIPT")
	var refused int
	for i := range 300 {
		_, err := r.Resolve(ctx, fmt.Sprintf("nowhere/Missing-%d", i))
		if msg := errs.UserMessage(err); strings.Contains(msg, "you asked for") {
			refused++
			if errs.KindOf(err) != errs.Unavailable || !strings.Contains(msg, "new models in a minute; try again in") {
				t.Fatalf("refusal: %v (%s)", msg, errs.KindOf(err))
			}
		}
	}
	if refused != 300-models.DefaultUserLookups {
		t.Errorf("%d refused, want %d", refused, 300-models.DefaultUserLookups)
	}
	if n := fake.Counts().Total(); n > 2*models.DefaultUserLookups {
		t.Errorf("%d Hub requests for one user's 300 missing repos, want at most %d", n, 2*models.DefaultUserLookups)
	}
	if _, err := r.Resolve(models.WithAsker(t.Context(), "U0OTHER"), "acme/Open-8B"); err != nil {
		t.Errorf("another user: %v", err)
	}
	// A model known already costs no budget.
	for range 30 {
		if _, err := r.Resolve(ctx, "acme/Open-8B"); err != nil {
			t.Fatalf("a known model refused to the busy user: %v", err)
		}
	}
	// A name with a size is still answered, by its size, and says why.
	res, err := r.Resolve(ctx, "nowhere/Thing-8B")
	if err != nil || res.Source != models.SourceSize || !strings.Contains(strings.Join(res.Notes, " "), "not looked up on the Hub: you asked for") {
		t.Errorf("sized name past the budget: %v %+v", err, res.Notes)
	}
}

// TestUserBudgetSharedByReplicas: two replicas on one Redis count one
// user's lookups together.
func TestUserBudgetSharedByReplicas(t *testing.T) {
	replicas := storetest.NewRedisReplicas(t, 2)
	fake := newFake(t)
	rs := []*models.Resolver{newResolver(t, fake, replicas[0]), newResolver(t, fake, replicas[1])}
	ctx := models.WithAsker(t.Context(), "U0SHARED")
	refused := 0
	for i := range 2 * models.DefaultUserLookups {
		if _, err := rs[i%2].Resolve(ctx, fmt.Sprintf("nowhere/Shared-%d", i)); strings.Contains(errs.UserMessage(err), "you asked for") {
			refused++
		}
	}
	if refused != models.DefaultUserLookups {
		t.Errorf("%d of %d refused across two replicas, want %d", refused, 2*models.DefaultUserLookups, models.DefaultUserLookups)
	}
}

// TestGlobalBudget: past vrambot's own cap of Hub requests, a lookup is
// not sent, and the refusal is not remembered as the repo's.
func TestGlobalBudget(t *testing.T) {
	fake := newFake(t)
	clk := newClock()
	r := models.New(models.Options{Hub: hubClient(t, fake, 2*time.Second), Cache: store.NewMemory(store.WithClock(clk.Now)), Now: clk.Now,
		ResolverBudget: 3, APIBudget: 100})
	for i := range 10 {
		_, _ = r.Resolve(t.Context(), fmt.Sprintf("nowhere/Global-%d", i))
	}
	if n := fake.Counts().Configs; n != 3 {
		t.Errorf("%d config.json requests past a cap of 3", n)
	}
	_, err := r.Resolve(t.Context(), "nowhere/Unsized")
	if errs.KindOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "not looked up on the Hub: vrambot has used its 3 Hub resolvers requests for these 5 minutes") {
		t.Errorf("past the cap: %v", err)
	}
	clk.Advance(hub.RateWindow)
	if res, err := r.Resolve(t.Context(), "acme/Open-8B"); err != nil || res.Source != models.SourceHub {
		t.Errorf("after the window: %v %+v", err, res.Source)
	}
}

// TestHub429CoolsDown: after the Hub answers 429 with Retry-After, no
// request is sent to it until that time has passed.
func TestHub429CoolsDown(t *testing.T) {
	fake := newFake(t)
	fake.FailRepos("busy/", hubtest.Fault{Status: 429, RetryAfter: 60})
	clk := newClock()
	r := models.New(models.Options{Hub: hubClient(t, fake, 2*time.Second), Cache: store.NewMemory(store.WithClock(clk.Now)), Now: clk.Now})
	_, _ = r.Resolve(t.Context(), "busy/Model")
	before := fake.Counts().Total()
	_, err := r.Resolve(t.Context(), "nowhere/Unsized")
	if n := fake.Counts().Total() - before; n != 0 || err == nil || !strings.Contains(err.Error(), "rate-limiting vrambot (HTTP 429); try again in 60 s") {
		t.Errorf("during the cooldown: %d requests, %v", n, err)
	}
	clk.Advance(61 * time.Second)
	if res, err := r.Resolve(t.Context(), "acme/Open-8B"); err != nil || res.Source != models.SourceHub {
		t.Errorf("after the cooldown: %v %+v", err, res.Source)
	}
}

// TestStalledStoreFetchesOnce: a store whose reads time out under load
// does not turn concurrent lookups into one Hub fetch each, and what was
// fetched is then answered without it.
func TestStalledStoreFetchesOnce(t *testing.T) {
	fake := newFake(t)
	fake.SetDelay(100 * time.Millisecond)
	r := newResolver(t, fake, slowCache{})
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() {
			if _, err := r.Resolve(t.Context(), "acme/Open-8B"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	start := time.Now()
	for range 30 {
		if _, err := r.Resolve(t.Context(), "acme/Open-8B"); err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("30 answers of a fetched model took %s with a stalled store", took)
	}
	if n := configRequests(fake); n != 1 {
		t.Errorf("%d config.json requests, want 1", n)
	}
}

// TestPrefetchCarriesTheOutcome: a lookup made ahead of the answer is
// what the answer's Resolve returns, with no I/O, even when the Hub has
// gone away since.
func TestPrefetchCarriesTheOutcome(t *testing.T) {
	fake := newFake(t)
	r := newResolver(t, fake, store.NewMemory())
	hit := r.Prefetch(t.Context(), "acme/Open-8B")
	miss := r.Prefetch(t.Context(), "acme/Nope")
	fake.Close()
	before := len(fake.Requests())
	res, err := r.Resolve(hit.Attach(t.Context()), "acme/Open-8B")
	if err != nil || res.Source != models.SourceHub {
		t.Errorf("prefetched hit: %v %+v", err, res.Source)
	}
	if _, err := r.Resolve(miss.Attach(t.Context()), "acme/Nope"); errs.KindOf(err) != errs.NotFound || miss.Err() == nil {
		t.Errorf("prefetched miss: %v", err)
	}
	if _, err := r.Resolve(hit.Attach(t.Context()), "acme/Other"); err == nil {
		t.Error("another ref under a prefetch must be looked up itself")
	}
	if n := len(fake.Requests()) - before; n != 0 {
		t.Errorf("%d requests after the prefetch", n)
	}
}

// TestHubFaultsOfWholeNamespaces is the fake's hostile mode end to end: a
// slow namespace times out within the resolver's timeout and is told so.
func TestHubFaultsOfWholeNamespaces(t *testing.T) {
	fake := newFake(t)
	fake.FailRepos("slow/", hubtest.Fault{Delay: time.Minute})
	r := models.New(models.Options{Hub: hubClient(t, fake, 5*time.Second), Cache: store.NewMemory(), Timeout: 300 * time.Millisecond})
	start := time.Now()
	_, err := r.Resolve(t.Context(), "slow/Model")
	if errs.KindOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "did not answer in time") {
		t.Errorf("slow: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %s", took)
	}
	fake.Override(hubtest.ConfigPath("acme/Teapot"), func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	if _, err := r.Resolve(t.Context(), "acme/Teapot"); errs.KindOf(err) != errs.Unavailable {
		t.Errorf("teapot: %v", err)
	}
}

// BenchmarkResolveKnown is an answer's lookup of a model read from the Hub
// before: no store read, no decoding.
func BenchmarkResolveKnown(b *testing.B) {
	fake := hubtest.New(b)
	fake.Add(hubtest.Model{ID: "acme/Open-8B", Config: []byte(hubtest.Qwen3Config)})
	c, err := hub.New(hub.Options{Endpoint: fake.URL})
	if err != nil {
		b.Fatal(err)
	}
	r := models.New(models.Options{Hub: c, Cache: store.NewMemory()})
	ctx := context.Background()
	if _, err := r.Resolve(ctx, "acme/Open-8B"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Resolve(ctx, "acme/Open-8B"); err != nil {
			b.Fatal(err)
		}
	}
}
