package models

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestLRUBounds(t *testing.T) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	later := now.Add(time.Hour)
	tests := []struct {
		name        string
		entries     int
		bytes       int
		puts        int
		cost        int
		wantEntries int
	}{
		{"by count", 3, 1000, 10, 10, 3},
		{"by bytes", 100, 50, 10, 10, 5},
		{"larger than the bound is not kept", 100, 5, 3, 10, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newLRU[int](tt.entries, tt.bytes, clock)
			for i := range tt.puts {
				c.put(fmt.Sprint(i), i, tt.cost, later)
			}
			if n, b := c.size(); n != tt.wantEntries || b != n*tt.cost {
				t.Errorf("%d entries, %d bytes; want %d", n, b, tt.wantEntries)
			}
			if tt.wantEntries > 0 {
				if v, ok := c.get(fmt.Sprint(tt.puts - 1)); !ok || v != tt.puts-1 {
					t.Errorf("newest entry dropped")
				}
				if _, ok := c.get("0"); ok {
					t.Errorf("oldest entry kept")
				}
			}
		})
	}
	c := newLRU[int](10, 100, clock)
	c.put("a", 1, 1, now.Add(time.Second))
	c.put("b", 2, 1, now.Add(time.Hour))
	c.get("a") // used, yet it expires
	now = now.Add(2 * time.Second)
	if _, ok := c.get("a"); ok {
		t.Error("expired entry returned")
	}
	if _, ok := c.get("b"); !ok {
		t.Error("live entry dropped")
	}
	c.put("b", 3, 7, later) // replacing counts its new cost only
	if n, b := c.size(); n != 1 || b != 7 {
		t.Errorf("after replace: %d entries, %d bytes", n, b)
	}
}

// TestUserKeyBounded: what a user id becomes in a store key is short and
// plain, whatever the id.
func TestUserKeyBounded(t *testing.T) {
	for _, id := range []string{"U012ABCDEF", strings.Repeat("U", 10000), "U1:*?[]\n", "ü"} {
		k := userKey(id)
		if len(k) > 32 || strings.ContainsAny(k, ":*?[]\n ") {
			t.Errorf("userKey(%.20q) = %q", id, k)
		}
	}
	if userKey("U012ABCDEF") != "U012ABCDEF" || userKey("a:b") == userKey("a;b") {
		t.Error("plain ids kept as they are, others hashed apart")
	}
}
