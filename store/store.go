// Package store is the small persistence interface vrambot needs (cache with
// TTL, set-if-absent, an append-only event log, a lock, a counter over a
// fixed window) with a Redis and an in-memory implementation that pass one
// conformance suite.
package store

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is returned by Get for a missing or expired key.
var ErrNotFound = errors.New("store: key not found")

// errWindow is returned by Incr for a non-positive window: a counter that
// never expires would count forever.
var errWindow = errors.New("store: counter window must be positive")

// Store is implemented by Redis and Memory. Keys are logical names; the Redis
// implementation prefixes them with "vrambot:".
type Store interface {
	// Get returns the value of key or ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// Set stores value under key; ttl <= 0 means no expiry.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// SetNX stores value only if key is absent and reports whether it did.
	SetNX(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error)
	// Delete removes key; a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// Append adds entry to the end of the named log and trims it to the newest maxLen entries (maxLen <= 0: no trim).
	Append(ctx context.Context, log string, entry []byte, maxLen int) error
	// Entries returns the newest n entries of the log, oldest first (n <= 0: all).
	Entries(ctx context.Context, log string, n int) ([][]byte, error)
	// Lock takes the named lock for ttl. ok is false when someone else holds it.
	// unlock releases it only if still held by this caller.
	Lock(ctx context.Context, name string, ttl time.Duration) (unlock func(context.Context) error, ok bool, err error)
	// Incr adds one to the counter key and returns its new count and the
	// time left in its window. The first Incr of a key opens a window of
	// length window; when it ends the counter is gone and the next Incr
	// counts 1 again (fixed windows, as INCR and PEXPIRE do it). Counters
	// live apart from Get/Set values. window must be positive.
	Incr(ctx context.Context, key string, window time.Duration) (n int64, left time.Duration, err error)
	// Ping reports whether the backing service is reachable.
	Ping(ctx context.Context) error
	Close() error
}
