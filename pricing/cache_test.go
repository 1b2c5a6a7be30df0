package pricing_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vrambot/vrambot/pricing"
	"github.com/vrambot/vrambot/store"
)

// fakeSource is a Source whose answer the test sets, counting its calls.
type fakeSource struct {
	name  string
	calls atomic.Int32

	mu      sync.Mutex
	offers  []pricing.Offer
	dropped int
	err     error
	delay   time.Duration // honours ctx while waiting
	block   chan struct{} // when set, Fetch ignores ctx and waits for it
	panics  bool
}

func (f *fakeSource) Name() string { return f.name }

func (f *fakeSource) Fetch(ctx context.Context) (pricing.Fetched, error) {
	f.calls.Add(1)
	f.mu.Lock()
	offers, dropped, err, delay, block, panics := slices.Clone(f.offers), f.dropped, f.err, f.delay, f.block, f.panics
	f.mu.Unlock()
	if panics {
		panic("malformed catalog")
	}
	if block != nil {
		<-block
	}
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return pricing.Fetched{}, ctx.Err()
		}
	}
	return pricing.Fetched{Offers: offers, Dropped: dropped}, err
}

func (f *fakeSource) set(offers []pricing.Offer, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.offers, f.err = offers, err
}

// snapshot is a fallback source like the embedded one: offline, dated.
func snapshot() *fakeSource {
	a := offer("RTX4090", 1, 0.40, false)
	a.AsOf, a.Source = "2026-01-21", "embedded snapshot"
	b := offer("A100-80GB", 1, 1.29, false)
	b.AsOf, b.Source = "2025-12-02", "embedded snapshot"
	return &fakeSource{name: "embedded", offers: []pricing.Offer{a, b}}
}

func awsSource() *fakeSource {
	return &fakeSource{name: "gpuhunt:aws", offers: []pricing.Offer{
		offer("A10G", 1, 1.006, false), offer("L4", 1, 0.80, false), offer("A100-80GB", 8, 40.97, false),
	}, dropped: 2}
}

// clock is a settable time source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newClock() *clock { return &clock{now: time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)} }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func newBook(st store.Store, c *clock, sources []pricing.Source, fallback pricing.Source, opts ...pricing.BookOption) *pricing.Book {
	opts = append([]pricing.BookOption{pricing.WithClock(c.Now), pricing.WithLogger(quiet)}, opts...)
	return pricing.NewBook(st, sources, fallback, opts...)
}

func errText(s pricing.SourceStatus) string {
	if s.Error == nil {
		return ""
	}
	return *s.Error
}

func TestRefreshThenServe(t *testing.T) {
	st, c := store.NewMemory(), newClock()
	aws, emb := awsSource(), snapshot()
	book := newBook(st, c, []pricing.Source{emb, aws}, emb)

	statuses := book.Refresh(t.Context())
	want := []pricing.SourceStatus{
		{Name: "embedded", FetchedAt: "2026-11-29T09:00:00Z", Offers: 2},
		{Name: "gpuhunt:aws", FetchedAt: "2026-11-29T09:00:00Z", Offers: 3, Dropped: 2},
	}
	if !slices.Equal(statuses, want) {
		t.Fatalf("Refresh = %+v, want %+v", statuses, want)
	}

	c.Add(3*time.Hour + 10*time.Minute)
	l, err := book.Listing(t.Context())
	if err != nil {
		t.Fatalf("Listing: %v", err)
	}
	if l.Fallback || len(l.Offers) != 5 || !slices.Equal(l.Sources, want) {
		t.Errorf("Listing = fallback %v, %d offers, sources %+v; want cache, 5 offers, %+v", l.Fallback, len(l.Offers), l.Sources, want)
	}
	wantNotes := []string{"prices: embedded snapshot of 2026-01-21", "prices: gpuhunt:aws fetched 3 h ago"}
	if !slices.Equal(l.Notes, wantNotes) {
		t.Errorf("Notes = %q, want %q", l.Notes, wantNotes)
	}
	for _, o := range l.Offers {
		if o.GPUKey == "" {
			t.Errorf("offer %s/%s lost its GPU key in the cache", o.Provider, o.InstanceType)
		}
	}
	if n := aws.calls.Load() + emb.calls.Load(); n != 2 {
		t.Errorf("sources fetched %d times, want 2 (once each, by Refresh only)", n)
	}
}

// TestReadsNeverFetch checks the rule that a user request never touches a
// source: Listing, Offers and FindOffers read the store only.
func TestReadsNeverFetch(t *testing.T) {
	aws := awsSource()
	book := newBook(store.NewMemory(), newClock(), []pricing.Source{aws}, snapshot())
	ctx := t.Context()
	if _, err := book.Listing(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := book.Offers(ctx); err != nil {
		t.Fatal(err)
	}
	book.FindOffers(ctx, pricing.Requirement{GPUCount: 1})
	if n := aws.calls.Load(); n != 0 {
		t.Errorf("reads called the network source %d times", n)
	}
}

func TestFailedRefreshKeepsLastGoodOffers(t *testing.T) {
	st, c := store.NewMemory(), newClock()
	aws := awsSource()
	book := newBook(st, c, []pricing.Source{aws}, snapshot())
	book.Refresh(t.Context())

	c.Add(26 * time.Hour)
	aws.set(nil, errors.New("gpuhunt aws: HTTP 500"))
	statuses := book.Refresh(t.Context())
	s := statuses[0]
	if !s.Stale || errText(s) != "gpuhunt aws: HTTP 500" || s.Offers != 3 || s.FetchedAt != "2026-11-29T09:00:00Z" {
		t.Errorf("status after a failed refresh = %+v (error %q); want stale, the 500, 3 offers from 09:00", s, errText(s))
	}

	c.Add(time.Hour)
	l, err := book.Listing(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if l.Fallback || len(l.Offers) != 3 {
		t.Fatalf("Listing = fallback %v with %d offers; want the 3 stale cached offers", l.Fallback, len(l.Offers))
	}
	if got := l.Sources[0]; !got.Stale || errText(got) != "gpuhunt aws: HTTP 500" {
		t.Errorf("listed status = %+v, want stale with the error", got)
	}
	if want := "prices: gpuhunt:aws fetched 27 h ago (stale: the last refresh failed)"; !slices.Equal(l.Notes, []string{want}) {
		t.Errorf("Notes = %q, want %q", l.Notes, want)
	}

	// An empty answer is a broken catalog, not "no GPUs for rent".
	aws.set(nil, nil)
	if s := book.Refresh(t.Context())[0]; !s.Stale || !strings.Contains(errText(s), "no usable offers") || s.Offers != 3 {
		t.Errorf("status after an empty fetch = %+v (%q); want stale, 3 old offers", s, errText(s))
	}

	// A good refresh clears the stale flag.
	aws.set(awsSource().offers, nil)
	c.Add(time.Hour)
	if s := book.Refresh(t.Context())[0]; s.Stale || s.Error != nil || s.FetchedAt != "2026-11-30T13:00:00Z" {
		t.Errorf("status after recovery = %+v, want fresh", s)
	}
	l, _ = book.Listing(t.Context())
	if l.Sources[0].Stale || len(l.Notes) != 1 || strings.Contains(l.Notes[0], "stale") {
		t.Errorf("after recovery: %+v %q", l.Sources[0], l.Notes)
	}
}

func TestRefreshSourceFailures(t *testing.T) {
	slow := &fakeSource{name: "slow", offers: awsSource().offers, delay: time.Minute}
	stuck := &fakeSource{name: "stuck", offers: awsSource().offers, block: make(chan struct{})}
	defer close(stuck.block)
	panicky := &fakeSource{name: "panicky", panics: true}
	failing := &fakeSource{name: "failing", err: errors.New("HTTP 500")}
	good := awsSource()
	book := newBook(store.NewMemory(), newClock(), []pricing.Source{slow, stuck, panicky, failing, good}, snapshot(),
		pricing.WithFetchTimeout(100*time.Millisecond))

	start := time.Now()
	statuses := book.Refresh(t.Context())
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Refresh took %s with a 100ms fetch timeout", d)
	}
	wantErr := map[string]string{
		"slow":        "timed out after 100ms",
		"stuck":       "timed out after 100ms",
		"panicky":     "panicked: malformed catalog",
		"failing":     "HTTP 500",
		"gpuhunt:aws": "",
	}
	for _, s := range statuses {
		want := wantErr[s.Name]
		if got := errText(s); (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: error %q, want one containing %q", s.Name, got, want)
		}
		if s.Name != "gpuhunt:aws" && (s.Stale || s.Offers != 0) {
			t.Errorf("%s: %+v, a source never fetched has nothing stale", s.Name, s)
		}
	}
	l, err := book.Listing(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if l.Fallback || len(l.Offers) != 3 {
		t.Errorf("Listing: fallback %v, %d offers; want the good source's 3", l.Fallback, len(l.Offers))
	}
	if len(l.Notes) != 1 {
		t.Errorf("Notes = %q, want one line for the one cached source", l.Notes)
	}
}

func TestFallback(t *testing.T) {
	tests := []struct {
		name      string
		store     store.Store
		sources   func(emb pricing.Source) []pricing.Source
		wantNote  string
		wantNames []string
	}{
		{
			name:      "default config, nothing cached: the offline default",
			store:     store.NewMemory(),
			sources:   func(emb pricing.Source) []pricing.Source { return []pricing.Source{emb} },
			wantNote:  "prices: embedded snapshot of 2026-01-21 (offline default)",
			wantNames: []string{"embedded"},
		},
		{
			name:      "no sources configured",
			store:     store.NewMemory(),
			sources:   func(pricing.Source) []pricing.Source { return nil },
			wantNote:  "prices: embedded snapshot of 2026-01-21 (offline default)",
			wantNames: []string{"embedded"},
		},
		{
			name:      "network sources never refreshed",
			store:     store.NewMemory(),
			sources:   func(emb pricing.Source) []pricing.Source { return []pricing.Source{emb, awsSource()} },
			wantNote:  "price cache empty: using the embedded snapshot of 2026-01-21; run `vrambot prices --refresh`",
			wantNames: []string{"embedded", "gpuhunt:aws"},
		},
		{
			name:      "store down",
			store:     downStore{store.NewMemory()},
			sources:   func(emb pricing.Source) []pricing.Source { return []pricing.Source{emb, awsSource()} },
			wantNote:  "Redis unreachable: using the embedded snapshot of 2026-01-21",
			wantNames: []string{"embedded", "gpuhunt:aws"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			emb := snapshot()
			book := newBook(tt.store, newClock(), tt.sources(emb), emb)
			l, err := book.Listing(t.Context())
			if err != nil {
				t.Fatalf("Listing: %v", err)
			}
			if !l.Fallback || len(l.Offers) != 2 {
				t.Errorf("Listing: fallback %v, %d offers; want the snapshot's 2", l.Fallback, len(l.Offers))
			}
			if !slices.Equal(l.Notes, []string{tt.wantNote}) {
				t.Errorf("Notes = %q, want %q", l.Notes, tt.wantNote)
			}
			var names []string
			for _, s := range l.Sources {
				names = append(names, s.Name)
				if s.Name == "embedded" && (s.Error != nil || s.Offers != 2 || s.FetchedAt != "2026-01-21T00:00:00Z") {
					t.Errorf("snapshot status = %+v", s)
				}
				if s.Name != "embedded" && s.Error == nil {
					t.Errorf("%s: no error although its offers are not served", s.Name)
				}
			}
			if !slices.Equal(names, tt.wantNames) {
				t.Errorf("sources = %q, want %q", names, tt.wantNames)
			}
			offers, notes := book.FindOffers(t.Context(), pricing.Requirement{MemoryPerGPUBytes: 20 * gib, GPUCount: 1})
			if len(offers) != 2 || !slices.Equal(notes, []string{tt.wantNote}) {
				t.Errorf("FindOffers = %d offers, %q", len(offers), notes)
			}
		})
	}
}

func TestNoPricesAtAll(t *testing.T) {
	broken := &fakeSource{name: "embedded", err: errors.New("corrupt")}
	for _, fallback := range []pricing.Source{nil, broken} {
		book := newBook(downStore{store.NewMemory()}, newClock(), []pricing.Source{awsSource()}, fallback)
		if _, err := book.Listing(t.Context()); err == nil {
			t.Errorf("fallback %v: Listing succeeded with no prices anywhere", fallback)
		}
		offers, notes := book.FindOffers(t.Context(), pricing.Requirement{GPUCount: 1})
		if len(offers) != 0 || len(notes) != 1 || !strings.HasPrefix(notes[0], "prices unavailable: ") {
			t.Errorf("FindOffers = %v, %q; want none and one line saying why", offers, notes)
		}
		if strings.Contains(notes[0], "corrupt") || strings.Contains(notes[0], "6379") {
			t.Errorf("FindOffers note %q shows internal detail to users", notes[0])
		}
	}
}

func TestUndecodableCacheEntry(t *testing.T) {
	st := store.NewMemory()
	aws := awsSource()
	book := newBook(st, newClock(), []pricing.Source{snapshot(), aws}, snapshot())
	book.Refresh(t.Context())
	if err := st.Set(t.Context(), "prices:offers:gpuhunt:aws", []byte("{not json"), 0); err != nil {
		t.Fatal(err)
	}
	l, err := book.Listing(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if l.Fallback || len(l.Offers) != 2 {
		t.Errorf("Listing: fallback %v, %d offers; want the embedded entry's 2 from the cache", l.Fallback, len(l.Offers))
	}
	if got := errText(l.Sources[1]); !strings.Contains(got, "unreadable cache entry") {
		t.Errorf("aws status error = %q, want it to say the entry is unreadable", got)
	}
}

func TestCacheTTL(t *testing.T) {
	c := newClock()
	st := store.NewMemory(store.WithClock(c.Now))
	book := newBook(st, c, []pricing.Source{awsSource()}, snapshot(), pricing.WithCacheTTL(time.Hour))
	book.Refresh(t.Context())
	c.Add(59 * time.Minute)
	if l, _ := book.Listing(t.Context()); l.Fallback {
		t.Fatal("offers within the cache TTL not served")
	}
	c.Add(2 * time.Minute)
	if l, _ := book.Listing(t.Context()); !l.Fallback {
		t.Error("offers past the cache TTL still served")
	}
}

// TestConcurrentRefreshesShareOneFetch runs two books (two replicas) on one
// store: the lock lets one fetch while the other waits and reports its result.
func TestConcurrentRefreshesShareOneFetch(t *testing.T) {
	testConcurrentRefreshes(t, store.NewMemory())
}

func testConcurrentRefreshes(t *testing.T, st store.Store) {
	t.Helper()
	c := newClock()
	aws := awsSource()
	aws.delay = 300 * time.Millisecond
	books := []*pricing.Book{
		newBook(st, c, []pricing.Source{aws}, snapshot()),
		newBook(st, c, []pricing.Source{aws}, snapshot()),
	}
	results := make([][]pricing.SourceStatus, len(books))
	var wg sync.WaitGroup
	for i, b := range books {
		wg.Go(func() { results[i] = b.Refresh(t.Context()) })
	}
	wg.Wait()
	if n := aws.calls.Load(); n != 1 {
		t.Errorf("source fetched %d times by two concurrent refreshes, want 1", n)
	}
	if !slices.Equal(results[0], results[1]) || results[0][0].Offers != 3 || results[0][0].Error != nil {
		t.Errorf("refresh results differ or failed: %+v vs %+v", results[0], results[1])
	}
	for _, b := range books {
		l, err := b.Listing(t.Context())
		if err != nil || l.Fallback || len(l.Offers) != 3 {
			t.Errorf("Listing after concurrent refreshes: %v, fallback %v, %d offers", err, l.Fallback, len(l.Offers))
		}
	}
	// The lock is released: a later refresh fetches again.
	books[0].Refresh(t.Context())
	if n := aws.calls.Load(); n != 2 {
		t.Errorf("a later refresh did not fetch (calls = %d): the lock was not released", n)
	}
}

func TestRefreshWithStoreDown(t *testing.T) {
	aws := awsSource()
	book := newBook(downStore{store.NewMemory()}, newClock(), []pricing.Source{aws}, snapshot())
	statuses := book.Refresh(t.Context())
	if len(statuses) != 1 || !strings.HasPrefix(errText(statuses[0]), "price cache unreachable") {
		t.Errorf("Refresh with the store down = %+v", statuses)
	}
	if aws.calls.Load() != 0 {
		t.Error("fetched although the result could not be stored")
	}
}

func TestFindOffersRanksAndStatesUtilisation(t *testing.T) {
	st := store.NewMemory()
	aws := awsSource()
	book := newBook(st, newClock(), []pricing.Source{aws}, snapshot())
	book.Refresh(t.Context())
	offers, notes := book.FindOffers(t.Context(), pricing.Requirement{
		MemoryPerGPUBytes: 20 * gib, GPUCount: 1, NeedBF16: true, RequestedGPU: "A100-80GB", TrainFLOPs: 6 * 7e9 * 1e8,
	})
	if got, want := summary(offers), []string{"L4 1x $0.80", "A10G 1x $1.01", "A100-80GB 8x $40.97 requested"}; !slices.Equal(got, want) {
		t.Errorf("FindOffers = %v, want %v", got, want)
	}
	if len(notes) != 2 || !strings.Contains(notes[1], "40% of each GPU's dense bf16 TFLOPS") {
		t.Errorf("notes = %q, want the source line and the utilisation assumption", notes)
	}
}

func TestAge(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{-time.Minute, "just now"},
		{59 * time.Second, "just now"},
		{12 * time.Minute, "12 min ago"},
		{3*time.Hour + 59*time.Minute, "3 h ago"},
		{47 * time.Hour, "47 h ago"},
		{50 * time.Hour, "2 d ago"},
	}
	for _, tt := range tests {
		if got := pricing.Age(tt.d); got != tt.want {
			t.Errorf("Age(%s) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// TestRefreshLogs checks the refresh log: one line per source, with the error.
func TestRefreshLogs(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	failing := &fakeSource{name: "failing", err: errors.New("HTTP 500")}
	book := pricing.NewBook(store.NewMemory(), []pricing.Source{awsSource(), failing}, nil, pricing.WithLogger(log))
	book.Refresh(t.Context())
	out := buf.String()
	for _, want := range []string{`source=gpuhunt:aws offers=3 dropped=2`, `source=failing err="HTTP 500"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// downStore is a store whose backend is unreachable.
type downStore struct{ store.Store }

var errDown = errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")

func (downStore) Get(context.Context, string) ([]byte, error) { return nil, errDown }
func (downStore) Set(context.Context, string, []byte, time.Duration) error {
	return errDown
}
func (downStore) Lock(context.Context, string, time.Duration) (func(context.Context) error, bool, error) {
	return nil, false, errDown
}

// switchableStore goes down when told to, like a Redis that stops.
type switchableStore struct {
	store.Store
	down  atomic.Bool
	reads atomic.Int64
}

func (s *switchableStore) Get(ctx context.Context, key string) ([]byte, error) {
	s.reads.Add(1)
	if s.down.Load() {
		return nil, errDown
	}
	return s.Store.Get(ctx, key)
}

// TestFindOffersAnswersFromMemory checks that user requests read the store
// once, then answer from memory (so a slow or stopped Redis costs them
// nothing) until Reload, which the scheduler calls, reads it again; the book
// starts no goroutine of its own.
func TestFindOffersAnswersFromMemory(t *testing.T) {
	st, c := &switchableStore{Store: store.NewMemory()}, newClock()
	aws, emb := awsSource(), snapshot()
	book := newBook(st, c, []pricing.Source{emb, aws}, emb)
	book.Refresh(t.Context())
	req := pricing.Requirement{MemoryPerGPUBytes: 1 << 30, GPUCount: 1}
	want, _ := book.FindOffers(t.Context(), req)
	if len(want) == 0 {
		t.Fatal("no offers after a refresh")
	}
	unreachable := func(notes []string) bool {
		return slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "unreachable") })
	}

	st.down.Store(true)
	readsBefore := st.reads.Load()
	c.Add(time.Hour) // however old the memo, requests do not read the store
	for range 10 {
		got, notes := book.FindOffers(t.Context(), req)
		if !slices.Equal(summary(got), summary(want)) || unreachable(notes) {
			t.Fatalf("from memory: %v %q, want the cached offers %v", summary(got), notes, summary(want))
		}
		if _, _, ok := book.PricePerGPUHour(t.Context(), "NVIDIA A10G"); !ok {
			t.Fatal("PricePerGPUHour did not answer from memory")
		}
	}
	if n := st.reads.Load() - readsBefore; n != 0 {
		t.Errorf("%d store reads by requests, want 0", n)
	}

	// Reload with the store down falls back to the snapshot, saying so.
	if err := book.Reload(t.Context()); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if _, notes := book.FindOffers(t.Context(), req); !unreachable(notes) {
		t.Errorf("after Reload with the store down: notes %q, want the fallback said", notes)
	}
	// And once the store is back, the next Reload serves the cache again.
	st.down.Store(false)
	if err := book.Reload(t.Context()); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if got, notes := book.FindOffers(t.Context(), req); !slices.Equal(summary(got), summary(want)) || unreachable(notes) {
		t.Errorf("after Reload with the store back: %v %q", summary(got), notes)
	}
}

// TestReloadHonoursContext checks Reload stops with its context.
func TestReloadHonoursContext(t *testing.T) {
	book := newBook(store.NewMemory(), newClock(), []pricing.Source{awsSource()}, nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := book.Reload(ctx); err == nil {
		t.Error("Reload with a cancelled context succeeded")
	}
}

func TestPricePerGPUHour(t *testing.T) {
	c := newClock() // 2026-11-29
	a10gOld := offer("A10G", 1, 0.90, false)
	a10gOld.AsOf = "2026-01-21" // cheaper but outdated: a fresher price exists
	a10g8 := offer("A10G", 8, 8*1.20, false)
	h100 := offer("H100-SXM", 8, 8*3.99, false)
	h100.AsOf = "2026-09-20"
	h100spot := offer("H100-SXM", 1, 1.0, true)
	component := offer("T4", 1, 0.35, false)
	component.ComponentOnly = true
	src := &fakeSource{name: "s", offers: []pricing.Offer{a10gOld, offer("A10G", 1, 1.006, false), a10g8, h100, h100spot, component}}
	book := newBook(store.NewMemory(), c, []pricing.Source{src}, nil)
	book.Refresh(t.Context())

	tests := []struct {
		model    string
		want     float64
		wantProv string // substring; "" for no price
	}{
		{"NVIDIA A10G", 1.006, "cheapest on-demand A10G: p-a10g 1x-A10G at $1.01/GPU-h (test, as of 2026-11-29)"},
		{"NVIDIA H100 80GB HBM3", 3.99, "as of 2026-09-20, 70 days old: stale)"},
		{"Tesla T4", 0, ""},        // a GPU-only price is no instance
		{"Some Future GPU", 0, ""}, // not in the catalog
		{"NVIDIA GeForce RTX 4090", 0, ""},
	}
	for _, tt := range tests {
		usd, prov, ok := book.PricePerGPUHour(t.Context(), tt.model)
		switch {
		case tt.wantProv == "" && ok:
			t.Errorf("%s: got $%.3f (%s), want no price", tt.model, usd, prov)
		case tt.wantProv != "" && (!ok || math.Abs(usd-tt.want) > 1e-9 || !strings.Contains(prov, tt.wantProv)):
			t.Errorf("%s: %v $%.3f %q; want $%.3f and %q", tt.model, ok, usd, prov, tt.want, tt.wantProv)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, ok := book.PricePerGPUHour(ctx, "NVIDIA A10G"); ok {
		t.Error("answered with a cancelled context")
	}
}
