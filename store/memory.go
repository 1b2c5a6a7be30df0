package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// errLockTTL is returned by Lock for a non-positive ttl: a lock without
// expiry would be held forever by a replica that died holding it.
var errLockTTL = errors.New("store: lock ttl must be positive")

// Memory is the in-process Store used when REDIS_URL is unset. It is safe for
// concurrent use. Expired keys are dropped when touched, and all of them at
// most once per sweepInterval on a write, so keys written once and never
// read again (dedupe markers) do not pile up in a long-running bot.
type Memory struct {
	mu        sync.Mutex
	values    map[string]memoryValue
	logs      map[string][][]byte
	locks     map[string]memoryValue // value = the holder's token
	counters  map[string]memoryCounter
	now       func() time.Time
	lastSweep time.Time
}

// sweepInterval bounds how often a write scans for expired keys: the scan
// is linear in the number of keys, so it is amortised over many writes.
const sweepInterval = time.Minute

type memoryCounter struct {
	n       int64
	expires time.Time
}

type memoryValue struct {
	data    []byte
	expires time.Time // zero: never
}

func (v memoryValue) expired(now time.Time) bool {
	return !v.expires.IsZero() && !now.Before(v.expires)
}

var _ Store = (*Memory)(nil)

// MemoryOption configures NewMemory.
type MemoryOption func(*Memory)

// WithClock makes the store read the time from now instead of time.Now, so
// tests can expire keys by moving a clock instead of sleeping.
func WithClock(now func() time.Time) MemoryOption { return func(m *Memory) { m.now = now } }

// NewMemory returns an empty in-memory store.
func NewMemory(opts ...MemoryOption) *Memory {
	m := &Memory{
		values:   make(map[string]memoryValue),
		logs:     make(map[string][][]byte),
		locks:    make(map[string]memoryValue),
		counters: make(map[string]memoryCounter),
		now:      time.Now,
	}
	for _, o := range opts {
		o(m)
	}
	return m
}

// sweepLocked drops every expired value and lock, at most once per
// sweepInterval. m.mu must be held.
func (m *Memory) sweepLocked(now time.Time) {
	if now.Sub(m.lastSweep) < sweepInterval {
		return
	}
	m.lastSweep = now
	for k, v := range m.values {
		if v.expired(now) {
			delete(m.values, k)
		}
	}
	for k, v := range m.locks {
		if v.expired(now) {
			delete(m.locks, k)
		}
	}
	for k, c := range m.counters {
		if !now.Before(c.expires) {
			delete(m.counters, k)
		}
	}
}

func expiry(now time.Time, ttl time.Duration) time.Time {
	if ttl <= 0 {
		return time.Time{}
	}
	return now.Add(ttl)
}

// Get returns a copy of the value of key or ErrNotFound.
func (m *Memory) Get(ctx context.Context, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("store get %q: %w", key, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.values[key]
	if !ok || v.expired(m.now()) {
		delete(m.values, key)
		return nil, ErrNotFound
	}
	return slices.Clone(v.data), nil
}

// Set stores a copy of value under key; ttl <= 0 means no expiry.
func (m *Memory) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store set %q: %w", key, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.sweepLocked(now)
	m.values[key] = memoryValue{data: cloneNonNil(value), expires: expiry(now, ttl)}
	return nil
}

// SetNX stores value only if key is absent (or expired).
func (m *Memory) SetNX(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("store setnx %q: %w", key, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.sweepLocked(now)
	if v, ok := m.values[key]; ok && !v.expired(now) {
		return false, nil
	}
	m.values[key] = memoryValue{data: cloneNonNil(value), expires: expiry(now, ttl)}
	return true, nil
}

// Delete removes key; a missing key is not an error.
func (m *Memory) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store delete %q: %w", key, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.values, key)
	return nil
}

// Append adds entry to the end of the log and keeps the newest maxLen entries.
func (m *Memory) Append(ctx context.Context, log string, entry []byte, maxLen int) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store append %q: %w", log, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	entries := append(m.logs[log], cloneNonNil(entry))
	if maxLen > 0 && len(entries) > maxLen {
		// Copy rather than reslice so trimmed entries can be collected.
		entries = slices.Clone(entries[len(entries)-maxLen:])
	}
	m.logs[log] = entries
	return nil
}

// Entries returns copies of the newest n entries, oldest first (n <= 0: all).
func (m *Memory) Entries(ctx context.Context, log string, n int) ([][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("store entries %q: %w", log, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	entries := m.logs[log]
	if n > 0 && len(entries) > n {
		entries = entries[len(entries)-n:]
	}
	out := make([][]byte, len(entries))
	for i, e := range entries {
		out[i] = slices.Clone(e)
	}
	return out, nil
}

// Lock takes the named lock for ttl; see Store.Lock.
func (m *Memory) Lock(ctx context.Context, name string, ttl time.Duration) (func(context.Context) error, bool, error) {
	if ttl <= 0 {
		return nil, false, fmt.Errorf("store lock %q: %w", name, errLockTTL)
	}
	if err := ctx.Err(); err != nil {
		return nil, false, fmt.Errorf("store lock %q: %w", name, err)
	}
	token := rand.Text()
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.sweepLocked(now)
	if held, ok := m.locks[name]; ok && !held.expired(now) {
		return nil, false, nil
	}
	m.locks[name] = memoryValue{data: []byte(token), expires: now.Add(ttl)}
	unlock := func(ctx context.Context) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("store unlock %q: %w", name, err)
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		// Only the holder's token releases it: after expiry someone else may hold it.
		if held, ok := m.locks[name]; ok && string(held.data) == token {
			delete(m.locks, name)
		}
		return nil
	}
	return unlock, true, nil
}

// Incr counts key in a window that its first Incr opens; see Store.Incr.
func (m *Memory) Incr(ctx context.Context, key string, window time.Duration) (int64, time.Duration, error) {
	if window <= 0 {
		return 0, 0, fmt.Errorf("store incr %q: %w", key, errWindow)
	}
	if err := ctx.Err(); err != nil {
		return 0, 0, fmt.Errorf("store incr %q: %w", key, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.sweepLocked(now)
	c, ok := m.counters[key]
	if !ok || !now.Before(c.expires) {
		c = memoryCounter{expires: now.Add(window)}
	}
	c.n++
	m.counters[key] = c
	return c.n, c.expires.Sub(now), nil
}

// Ping always succeeds unless ctx is done: memory is always reachable.
func (m *Memory) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store ping: %w", err)
	}
	return nil
}

// Close is a no-op; the data stays usable.
func (m *Memory) Close() error { return nil }

// cloneNonNil copies b and never returns nil, so an empty value read back is
// []byte{} in both implementations.
func cloneNonNil(b []byte) []byte {
	return append([]byte{}, b...)
}
