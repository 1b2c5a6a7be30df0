// Package storetest is the conformance suite every store.Store must pass, and
// a helper that gives a test its own corner of the real Redis.
package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/vrambot/vrambot/internal/testutil"
	"github.com/vrambot/vrambot/store"
)

// DefaultRedisURL is the Redis the tests use when REDIS_URL is unset: DB 15,
// away from a development bot's DB 0.
const DefaultRedisURL = "redis://127.0.0.1:6379/15"

// shortTTL is long enough for a command round trip to a local Redis and
// short enough to keep the suite fast; expiry is awaited by polling.
const shortTTL = 150 * time.Millisecond

// Run runs the conformance suite. newStore must return an empty store that
// no other test uses; Run closes nothing, so newStore should register its
// own cleanup.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"GetSetDelete", testGetSetDelete},
		{"TTLExpiry", testTTLExpiry},
		{"SetNX", testSetNX},
		{"SetNXRace", testSetNXRace},
		{"LogOrderAndTrim", testLogOrderAndTrim},
		{"LogConcurrentAppend", testLogConcurrentAppend},
		{"LockExclusive", testLockExclusive},
		{"LockExpiry", testLockExpiry},
		{"UnlockOnlyOwn", testUnlockOnlyOwn},
		{"LockRace", testLockRace},
		{"LockRejectsZeroTTL", testLockRejectsZeroTTL},
		{"IncrCounts", testIncrCounts},
		{"IncrWindowExpiry", testIncrWindowExpiry},
		{"IncrRace", testIncrRace},
		{"IncrRejectsZeroWindow", testIncrRejectsZeroWindow},
		{"ContextCancelled", testContextCancelled},
		{"Ping", testPing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, newStore(t))
		})
	}
}

func mustGet(t *testing.T, s store.Store, key string) []byte {
	t.Helper()
	v, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return v
}

func testGetSetDelete(t *testing.T, s store.Store) {
	ctx := t.Context()
	if _, err := s.Get(ctx, "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get(missing) error = %v, want ErrNotFound", err)
	}
	values := map[string][]byte{
		"plain":  []byte("hello"),
		"binary": {0, 1, 0xff, '\n', 0},
		"empty":  {},
		"utf8":   []byte("ünïcødé 🚀"),
	}
	for key, want := range values {
		if err := s.Set(ctx, key, want, 0); err != nil {
			t.Fatalf("Set(%q): %v", key, err)
		}
		if got := mustGet(t, s, key); !bytes.Equal(got, want) {
			t.Errorf("Get(%q) = %q, want %q", key, got, want)
		}
	}
	if err := s.Set(ctx, "plain", []byte("again"), 0); err != nil {
		t.Fatalf("overwrite: %v", err)
	}
	if got := mustGet(t, s, "plain"); string(got) != "again" {
		t.Errorf("after overwrite Get = %q, want %q", got, "again")
	}
	if err := s.Delete(ctx, "plain"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := s.Get(ctx, "plain"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get after Delete error = %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "never-set"); err != nil {
		t.Errorf("Delete(missing) = %v, want nil", err)
	}
	// The stored value must not alias the caller's slice.
	buf := []byte("original")
	if err := s.Set(ctx, "alias", buf, 0); err != nil {
		t.Fatalf("Set(alias): %v", err)
	}
	copy(buf, "CHANGED!")
	if got := mustGet(t, s, "alias"); string(got) != "original" {
		t.Errorf("stored value changed with the caller's buffer: %q", got)
	}
}

func testTTLExpiry(t *testing.T, s store.Store) {
	ctx := t.Context()
	if err := s.Set(ctx, "short", []byte("v"), shortTTL); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if err := s.Set(ctx, "forever", []byte("v"), 0); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if err := s.Set(ctx, "negative", []byte("v"), -time.Second); err != nil {
		t.Fatalf("Set with negative ttl: %v", err)
	}
	if got := mustGet(t, s, "short"); string(got) != "v" {
		t.Fatalf("Get(short) right after Set = %q", got)
	}
	testutil.Eventually(t, 3*time.Second, "short key expired", func() bool {
		_, err := s.Get(ctx, "short")
		return errors.Is(err, store.ErrNotFound)
	})
	time.Sleep(shortTTL) // a key without ttl must outlive the short one by a margin
	for _, key := range []string{"forever", "negative"} {
		if got := mustGet(t, s, key); string(got) != "v" {
			t.Errorf("Get(%q) = %q, want it kept (ttl <= 0 means no expiry)", key, got)
		}
	}
}

func testSetNX(t *testing.T, s store.Store) {
	ctx := t.Context()
	ok, err := s.SetNX(ctx, "once", []byte("first"), shortTTL)
	if err != nil || !ok {
		t.Fatalf("first SetNX = %v, %v; want true, nil", ok, err)
	}
	ok, err = s.SetNX(ctx, "once", []byte("second"), shortTTL)
	if err != nil || ok {
		t.Fatalf("second SetNX = %v, %v; want false, nil", ok, err)
	}
	if got := mustGet(t, s, "once"); string(got) != "first" {
		t.Errorf("value after losing SetNX = %q, want %q", got, "first")
	}
	testutil.Eventually(t, 3*time.Second, "SetNX wins again after expiry", func() bool {
		ok, err := s.SetNX(ctx, "once", []byte("third"), 0)
		if err != nil {
			t.Fatalf("SetNX after expiry: %v", err)
		}
		return ok
	})
	if got := mustGet(t, s, "once"); string(got) != "third" {
		t.Errorf("value after expiry = %q, want %q", got, "third")
	}
}

func testSetNXRace(t *testing.T, s store.Store) {
	const racers = 32
	ctx := t.Context()
	var wg sync.WaitGroup
	wins := make(chan int, racers)
	for i := range racers {
		wg.Go(func() {
			ok, err := s.SetNX(ctx, "race", fmt.Appendf(nil, "%d", i), time.Minute)
			if err != nil {
				t.Errorf("SetNX racer %d: %v", i, err)
				return
			}
			if ok {
				wins <- i
			}
		})
	}
	wg.Wait()
	close(wins)
	var winners []int
	for i := range wins {
		winners = append(winners, i)
	}
	if len(winners) != 1 {
		t.Fatalf("winners = %v, want exactly one", winners)
	}
	if got := mustGet(t, s, "race"); string(got) != fmt.Sprint(winners[0]) {
		t.Errorf("stored %q, want the winner's value %d", got, winners[0])
	}
}

func entriesAsStrings(t *testing.T, s store.Store, log string, n int) []string {
	t.Helper()
	entries, err := s.Entries(t.Context(), log, n)
	if err != nil {
		t.Fatalf("Entries(%q, %d): %v", log, n, err)
	}
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = string(e)
	}
	return out
}

func testLogOrderAndTrim(t *testing.T, s store.Store) {
	ctx := t.Context()
	if got := entriesAsStrings(t, s, "none", 0); len(got) != 0 {
		t.Errorf("Entries of a missing log = %q, want empty", got)
	}
	for _, e := range []string{"a", "b", "c", "d", "e"} {
		if err := s.Append(ctx, "trimmed", []byte(e), 3); err != nil {
			t.Fatalf("Append: %v", err)
		}
		if err := s.Append(ctx, "untrimmed", []byte(e), 0); err != nil {
			t.Fatalf("Append: %v", err)
		}
	}
	tests := []struct {
		log  string
		n    int
		want string
	}{
		{"trimmed", 0, "c d e"},
		{"trimmed", 2, "d e"},
		{"trimmed", 10, "c d e"},
		{"trimmed", -1, "c d e"},
		{"untrimmed", 0, "a b c d e"},
		{"untrimmed", 1, "e"},
	}
	for _, tt := range tests {
		got := fmt.Sprint(entriesAsStrings(t, s, tt.log, tt.n))
		if want := "[" + tt.want + "]"; got != want {
			t.Errorf("Entries(%q, %d) = %s, want %s", tt.log, tt.n, got, want)
		}
	}
}

func testLogConcurrentAppend(t *testing.T, s store.Store) {
	const writers, each, maxLen = 8, 10, 50
	ctx := t.Context()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := s.Append(ctx, "busy", fmt.Appendf(nil, "%d-%d", w, i), maxLen); err != nil {
					t.Errorf("Append: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	got := entriesAsStrings(t, s, "busy", 0)
	if len(got) != maxLen {
		t.Fatalf("log length = %d, want %d (trimmed)", len(got), maxLen)
	}
	// Each writer's own entries must stay in the order it wrote them.
	last := make(map[string]int)
	for _, e := range got {
		var w, i int
		if _, err := fmt.Sscanf(e, "%d-%d", &w, &i); err != nil {
			t.Fatalf("entry %q: %v", e, err)
		}
		key := fmt.Sprint(w)
		if prev, ok := last[key]; ok && i <= prev {
			t.Errorf("writer %d: entry %d after %d", w, i, prev)
		}
		last[key] = i
	}
}

func mustLock(t *testing.T, s store.Store, name string, ttl time.Duration) (func(context.Context) error, bool) {
	t.Helper()
	unlock, ok, err := s.Lock(t.Context(), name, ttl)
	if err != nil {
		t.Fatalf("Lock(%q): %v", name, err)
	}
	if ok == (unlock == nil) {
		t.Fatalf("Lock(%q): ok = %v but unlock nil = %v", name, ok, unlock == nil)
	}
	return unlock, ok
}

func testLockExclusive(t *testing.T, s store.Store) {
	unlock, ok := mustLock(t, s, "job", time.Minute)
	if !ok {
		t.Fatal("first Lock not taken")
	}
	if _, ok := mustLock(t, s, "job", time.Minute); ok {
		t.Fatal("second Lock taken while the first is held")
	}
	if _, ok := mustLock(t, s, "other-job", time.Minute); !ok {
		t.Error("a lock with another name was refused")
	}
	if err := unlock(t.Context()); err != nil {
		t.Fatalf("unlock: %v", err)
	}
	if err := unlock(t.Context()); err != nil {
		t.Errorf("second unlock = %v, want nil (idempotent)", err)
	}
	if _, ok := mustLock(t, s, "job", time.Minute); !ok {
		t.Error("Lock after unlock not taken")
	}
}

func testLockExpiry(t *testing.T, s store.Store) {
	if _, ok := mustLock(t, s, "expiring", shortTTL); !ok {
		t.Fatal("Lock not taken")
	}
	testutil.Eventually(t, 3*time.Second, "lock free after its ttl", func() bool {
		_, ok := mustLock(t, s, "expiring", time.Minute)
		return ok
	})
}

func testUnlockOnlyOwn(t *testing.T, s store.Store) {
	unlockA, ok := mustLock(t, s, "shared", shortTTL)
	if !ok {
		t.Fatal("A's Lock not taken")
	}
	var unlockB func(context.Context) error
	testutil.Eventually(t, 3*time.Second, "B takes the lock after A's expired", func() bool {
		unlockB, ok = mustLock(t, s, "shared", time.Minute)
		return ok
	})
	// A wakes up late and releases: B's lock must survive.
	if err := unlockA(t.Context()); err != nil {
		t.Fatalf("late unlock by A: %v", err)
	}
	if _, ok := mustLock(t, s, "shared", time.Minute); ok {
		t.Fatal("A's late unlock released B's lock")
	}
	if err := unlockB(t.Context()); err != nil {
		t.Fatalf("unlock by B: %v", err)
	}
	if _, ok := mustLock(t, s, "shared", time.Minute); !ok {
		t.Error("lock not free after its holder released it")
	}
}

func testLockRace(t *testing.T, s store.Store) {
	const racers = 16
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range racers {
		wg.Go(func() {
			_, ok, err := s.Lock(t.Context(), "contended", time.Minute)
			if err != nil {
				t.Errorf("Lock: %v", err)
				return
			}
			if ok {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if wins != 1 {
		t.Errorf("%d racers took the lock, want exactly 1", wins)
	}
}

func testLockRejectsZeroTTL(t *testing.T, s store.Store) {
	for _, ttl := range []time.Duration{0, -time.Second} {
		unlock, ok, err := s.Lock(t.Context(), "no-ttl", ttl)
		if err == nil || ok || unlock != nil {
			t.Errorf("Lock(ttl=%s) = ok %v, err %v; want an error (a lock must expire)", ttl, ok, err)
		}
	}
}

func testContextCancelled(t *testing.T, s store.Store) {
	if err := s.Set(t.Context(), "k", []byte("v"), 0); err != nil {
		t.Fatalf("Set: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ops := map[string]func() error{
		"Get":    func() error { _, err := s.Get(ctx, "k"); return err },
		"Set":    func() error { return s.Set(ctx, "k", []byte("x"), 0) },
		"SetNX":  func() error { _, err := s.SetNX(ctx, "k2", []byte("x"), 0); return err },
		"Delete": func() error { return s.Delete(ctx, "k") },
		"Append": func() error { return s.Append(ctx, "log", []byte("x"), 0) },
		"Entries": func() error {
			_, err := s.Entries(ctx, "log", 0)
			return err
		},
		"Lock": func() error { _, _, err := s.Lock(ctx, "l", time.Minute); return err },
		"Incr": func() error { _, _, err := s.Incr(ctx, "c", time.Minute); return err },
		"Ping": func() error { return s.Ping(ctx) },
	}
	for name, op := range ops {
		if err := op(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: error = %v, want context.Canceled", name, err)
		}
	}
	// Nothing may have been written through the cancelled context.
	if got := mustGet(t, s, "k"); string(got) != "v" {
		t.Errorf("value changed through a cancelled context: %q", got)
	}
	if _, err := s.Get(t.Context(), "k2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SetNX wrote through a cancelled context: %v", err)
	}
	// Unlock honours its own context.
	unlock, ok := mustLock(t, s, "held", time.Minute)
	if !ok {
		t.Fatal("Lock not taken")
	}
	if err := unlock(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("unlock with a cancelled context: error = %v, want context.Canceled", err)
	}
	if _, ok := mustLock(t, s, "held", time.Minute); ok {
		t.Error("unlock with a cancelled context released the lock")
	}
}

func testIncrCounts(t *testing.T, s store.Store) {
	ctx := t.Context()
	for want := int64(1); want <= 3; want++ {
		n, left, err := s.Incr(ctx, "asks", time.Minute)
		if err != nil || n != want || left <= 0 || left > time.Minute {
			t.Fatalf("Incr #%d = %d, %s, %v; want %d within the minute", want, n, left, err, want)
		}
	}
	if n, _, err := s.Incr(ctx, "other", time.Minute); err != nil || n != 1 {
		t.Errorf("another key's Incr = %d, %v; want 1", n, err)
	}
	// Counters live apart from values.
	if _, err := s.Get(ctx, "asks"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get of a counter's key = %v, want ErrNotFound", err)
	}
}

func testIncrWindowExpiry(t *testing.T, s store.Store) {
	ctx := t.Context()
	for range 3 {
		if _, _, err := s.Incr(ctx, "window", shortTTL); err != nil {
			t.Fatalf("Incr: %v", err)
		}
	}
	// Later Incrs do not extend the window: it closes shortTTL after the first.
	testutil.Eventually(t, 3*time.Second, "the window closed and counting restarted", func() bool {
		n, _, err := s.Incr(ctx, "window", shortTTL)
		if err != nil {
			t.Fatalf("Incr: %v", err)
		}
		return n == 1
	})
}

func testIncrRace(t *testing.T, s store.Store) {
	const racers, each = 16, 10
	ctx := t.Context()
	var wg sync.WaitGroup
	seen := make(chan int64, racers*each)
	for range racers {
		wg.Go(func() {
			for range each {
				n, _, err := s.Incr(ctx, "race", time.Minute)
				if err != nil {
					t.Errorf("Incr: %v", err)
					return
				}
				seen <- n
			}
		})
	}
	wg.Wait()
	close(seen)
	got := map[int64]bool{}
	for n := range seen {
		if got[n] {
			t.Fatalf("count %d returned twice", n)
		}
		got[n] = true
	}
	for n := int64(1); n <= racers*each; n++ {
		if !got[n] {
			t.Fatalf("count %d never returned: concurrent Incrs lost an increment", n)
		}
	}
}

func testIncrRejectsZeroWindow(t *testing.T, s store.Store) {
	for _, w := range []time.Duration{0, -time.Second} {
		if _, _, err := s.Incr(t.Context(), "zero", w); err == nil {
			t.Errorf("Incr(window=%s) = nil error; want one (a counter must expire)", w)
		}
	}
}

func testPing(t *testing.T, s store.Store) {
	if err := s.Ping(t.Context()); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

// RedisURL is REDIS_URL, or DefaultRedisURL when it is unset.
func RedisURL() string {
	if u := os.Getenv("REDIS_URL"); u != "" {
		return u
	}
	return DefaultRedisURL
}

// NewRedis returns a Redis store on RedisURL() under a unique key prefix
// ("vrambot:test:<random>:"), purged and closed when the test ends. When
// Redis cannot be reached the test is skipped, unless CI is set: then it fails.
func NewRedis(tb testing.TB) *store.Redis { return NewRedisReplicas(tb, 1)[0] }

// NewRedisReplicas returns n Redis stores that share one unique key prefix:
// n replicas of the bot on one Redis. Cleanup and the CI policy are those
// of NewRedis.
func NewRedisReplicas(tb testing.TB, n int) []*store.Redis {
	tb.Helper()
	prefix := "vrambot:test:" + rand.Text() + ":"
	out := make([]*store.Redis, 0, n)
	closeAll := func() {
		for _, r := range out {
			r.Close()
		}
	}
	for range n {
		r, err := store.NewRedis(RedisURL(), store.WithPrefix(prefix))
		if err != nil {
			closeAll()
			tb.Fatalf("NewRedis: %v", err)
		}
		out = append(out, r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	err := out[0].Ping(ctx)
	cancel()
	if err != nil {
		closeAll()
		testutil.NeedService(tb, "Redis at "+RedisURL(), err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := out[0].Purge(ctx); err != nil {
			tb.Errorf("purge test keys under %q: %v", prefix, err)
		}
		closeAll()
	})
	return out
}
