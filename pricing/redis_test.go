package pricing_test

import (
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vrambot/vrambot/pricing"
	"github.com/vrambot/vrambot/store"
	"github.com/vrambot/vrambot/store/storetest"
)

// These tests use the real Redis (REDIS_URL, default storetest.DefaultRedisURL)
// under a per-test key prefix; they skip only when Redis is absent and CI is unset.

func TestRedisCachedKeysHaveTTL(t *testing.T) {
	st := storetest.NewRedis(t)
	book := newBook(st, newClock(), []pricing.Source{awsSource()}, snapshot(), pricing.WithCacheTTL(48*time.Hour))
	if s := book.Refresh(t.Context()); s[0].Error != nil {
		t.Fatalf("Refresh: %s", *s[0].Error)
	}

	opts, err := redis.ParseURL(storetest.RedisURL())
	if err != nil {
		t.Fatal(err)
	}
	raw := redis.NewClient(opts)
	defer raw.Close()
	keys, err := raw.Keys(t.Context(), st.Prefix()+"prices:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"prices:offers:gpuhunt:aws", "prices:status:gpuhunt:aws"}
	if len(keys) != len(want) {
		t.Fatalf("cached keys = %q, want %q under the prefix", keys, want)
	}
	for _, k := range want {
		ttl, err := raw.PTTL(t.Context(), st.Prefix()+k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl <= 47*time.Hour || ttl > 48*time.Hour {
			t.Errorf("%s: TTL %s, want about 48h", k, ttl)
		}
	}
	// The refresh lock is gone once the refresh is over.
	if n, _ := raw.Exists(t.Context(), st.Prefix()+"lock:prices:refresh").Result(); n != 0 {
		t.Error("refresh lock still held after Refresh returned")
	}
}

func TestRedisStaleServedAfterFailedRefresh(t *testing.T) {
	st := storetest.NewRedis(t)
	c := newClock()
	aws := awsSource()
	book := newBook(st, c, []pricing.Source{aws}, snapshot())
	book.Refresh(t.Context())

	c.Add(5 * time.Hour)
	aws.set(nil, errors.New("gpuhunt aws: HTTP 503"))
	book.Refresh(t.Context())

	// A second replica, started later, sees the same stale data.
	replica := newBook(st, c, []pricing.Source{awsSource()}, snapshot())
	l, err := replica.Listing(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s := l.Sources[0]
	if l.Fallback || len(l.Offers) != 3 || !s.Stale || errText(s) != "gpuhunt aws: HTTP 503" {
		t.Fatalf("Listing = fallback %v, %d offers, status %+v; want 3 stale offers with the error", l.Fallback, len(l.Offers), s)
	}
	if want := "prices: gpuhunt:aws fetched 5 h ago (stale: the last refresh failed)"; len(l.Notes) != 1 || l.Notes[0] != want {
		t.Errorf("Notes = %q, want %q", l.Notes, want)
	}
}

func TestRedisConcurrentRefreshes(t *testing.T) {
	testConcurrentRefreshes(t, storetest.NewRedis(t))
}

// TestRedisStoppedFallsBack points the book at a Redis that is not there:
// answers come from the snapshot, promptly, and say so.
func TestRedisStoppedFallsBack(t *testing.T) {
	st, err := store.NewRedis("redis://127.0.0.1:1/0")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	aws := awsSource()
	book := newBook(st, newClock(), []pricing.Source{snapshot(), aws}, snapshot())

	start := time.Now()
	offers, notes := book.FindOffers(t.Context(), pricing.Requirement{MemoryPerGPUBytes: 20 * gib, GPUCount: 1})
	if d := time.Since(start); d > 2*pricing.DefaultReadTimeout+time.Second {
		t.Errorf("FindOffers took %s with Redis down", d)
	}
	if len(offers) != 2 {
		t.Errorf("FindOffers = %d offers, want the snapshot's 2", len(offers))
	}
	if want := "Redis unreachable: using the embedded snapshot of 2026-01-21"; len(notes) != 1 || notes[0] != want {
		t.Errorf("notes = %q, want %q", notes, want)
	}

	statuses := book.Refresh(t.Context())
	for _, s := range statuses {
		if !strings.HasPrefix(errText(s), "price cache unreachable") {
			t.Errorf("Refresh status %+v, want 'price cache unreachable'", s)
		}
	}
	if aws.calls.Load() != 0 {
		t.Error("Refresh fetched although Redis is down")
	}
}

// TestRedisHungFallsBack points the book at a server that accepts
// connections and never answers: a request must give up after the read
// timeout and answer from the snapshot, not hang.
func TestRedisHungFallsBack(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}()

	st, err := store.NewRedis("redis://" + ln.Addr().String() + "/0")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	book := newBook(st, newClock(), []pricing.Source{awsSource()}, snapshot(), pricing.WithReadTimeout(200*time.Millisecond))
	start := time.Now()
	l, err := book.Listing(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Listing took %s against a hung Redis with a 200ms read timeout", d)
	}
	if !l.Fallback || len(l.Notes) != 1 || !strings.HasPrefix(l.Notes[0], "Redis unreachable") {
		t.Errorf("Listing = fallback %v, notes %q; want the snapshot, saying Redis is unreachable", l.Fallback, l.Notes)
	}
}
