package store

import (
	"fmt"
	"testing"
	"time"
)

// TestMemorySweepsExpiredKeys checks that keys written once and never read
// (dedupe markers, locks) are dropped, so a long-running bot without Redis
// does not grow without bound.
func TestMemorySweepsExpiredKeys(t *testing.T) {
	m := NewMemory()
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	m.now = func() time.Time { return now }
	ctx := t.Context()
	for i := range 1000 {
		if _, err := m.SetNX(ctx, fmt.Sprintf("event:%d", i), []byte("1"), time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := m.Lock(ctx, "digest", time.Second); err != nil {
		t.Fatal(err)
	}
	if err := m.Set(ctx, "kept", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}

	now = now.Add(30 * time.Second) // expired, but before the next sweep is due
	if err := m.Set(ctx, "trigger", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	if len(m.values) != 1002 {
		t.Fatalf("swept %d keys before sweepInterval passed", 1002-len(m.values))
	}

	now = now.Add(sweepInterval)
	if err := m.Set(ctx, "trigger", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	if len(m.values) != 2 || len(m.locks) != 0 {
		t.Errorf("after a sweep: %d values, %d locks; want 2 (kept, trigger) and 0", len(m.values), len(m.locks))
	}
}
