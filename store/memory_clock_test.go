package store_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/vrambot/vrambot/store"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestMemoryWithClockExpiresWithoutSleeping(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	m := store.NewMemory(store.WithClock(clock.now))
	ctx := t.Context()
	if err := m.Set(ctx, "k", []byte("v"), time.Hour); err != nil {
		t.Fatal(err)
	}
	clock.add(59 * time.Minute)
	if _, err := m.Get(ctx, "k"); err != nil {
		t.Fatalf("Get before expiry: %v", err)
	}
	clock.add(time.Minute)
	if _, err := m.Get(ctx, "k"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get at expiry = %v, want ErrNotFound", err)
	}
	unlock, ok, err := m.Lock(ctx, "l", time.Minute)
	if err != nil || !ok {
		t.Fatalf("Lock = %v, %v", ok, err)
	}
	defer func() { _ = unlock(ctx) }()
	clock.add(2 * time.Minute)
	if _, ok, _ := m.Lock(ctx, "l", time.Minute); !ok {
		t.Fatal("an expired lock must be free to take")
	}
}
