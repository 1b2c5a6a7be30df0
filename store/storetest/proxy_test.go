package storetest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/vrambot/vrambot/internal/testutil"
	"github.com/vrambot/vrambot/store/storetest"
)

// TestProxyPauseDeliversLate: a SET NX sent while the proxy is paused times
// out for its caller, and is applied by Redis once the proxy resumes.
func TestProxyPauseDeliversLate(t *testing.T) {
	r, p := storetest.NewPausableRedis(t)
	p.Pause()
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	_, err := r.SetNX(ctx, "late", []byte("v"), time.Minute)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("SetNX while paused = %v, want a deadline", err)
	}
	p.Resume()
	testutil.Eventually(t, 3*time.Second, "the paused write applied after resume", func() bool {
		v, err := r.Get(t.Context(), "late")
		return err == nil && string(v) == "v"
	})
}
