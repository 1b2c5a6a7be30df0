package testutil_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/vrambot/vrambot/internal/testutil"
)

func TestEventuallySeesALateCondition(t *testing.T) {
	var done atomic.Bool
	time.AfterFunc(30*time.Millisecond, func() { done.Store(true) })
	testutil.Eventually(t, 5*time.Second, "flag set", done.Load)
	if !done.Load() {
		t.Fatal("Eventually returned before the condition held")
	}
}

func TestNeedServicePassesWhenPresent(t *testing.T) {
	testutil.NeedService(t, "nothing", nil) // must not skip or fail
}
