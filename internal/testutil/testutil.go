// Package testutil holds the helpers that several packages' tests share:
// the policy for tests that need a real service, and polling for a
// condition that another goroutine or process makes true. It is imported by
// tests only.
package testutil

import (
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// InCI reports whether the tests run in CI (the CI variable is set), where
// an integration test must fail, not skip, when its service is missing.
func InCI() bool { return os.Getenv("CI") != "" }

// NeedService ends a test whose service (Redis, Prometheus, promtool, a
// data file) is unavailable: skipped on a developer's machine, failed in CI,
// so that CI can never pass by skipping. err nil means the service is there.
func NeedService(tb testing.TB, service string, err error) {
	tb.Helper()
	if err == nil {
		return
	}
	if InCI() {
		tb.Fatalf("%s unavailable with CI set: %v", service, err)
	}
	tb.Skipf("%s unavailable (%v); CI is unset, so skipping", service, err)
}

// PollInterval is how often Eventually checks its condition.
const PollInterval = 10 * time.Millisecond

// Eventually polls cond until it returns true or timeout passes, and then
// fails the test with what. The timeout is a ceiling, not an expectation:
// give margin for a loaded CI machine with -race.
func Eventually(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("after %v: %s", timeout, what)
		}
		time.Sleep(PollInterval)
	}
}

// Buffer is a log sink that tests read while other goroutines write it.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
