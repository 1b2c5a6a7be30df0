package fleet

import (
	"time"

	"github.com/vrambot/vrambot/internal/errs"
)

// Window is the half-open interval [Start, End) a digest covers.
type Window struct {
	Start time.Time
	End   time.Time
}

// NewWindow returns the window of length d that ends at end.
func NewWindow(end time.Time, d time.Duration) Window {
	return Window{Start: end.Add(-d), End: end}
}

// Duration is End - Start.
func (w Window) Duration() time.Duration { return w.End.Sub(w.Start) }

// MaxWindow bounds a digest's window: a month at the coarsest step (one
// hour) is 744 points per series, far under Prometheus' 11,000 (docs/digest.md §2.4).
const MaxWindow = 31 * 24 * time.Hour

// Validate rejects windows a range query cannot answer.
func (w Window) Validate() error {
	if w.Start.IsZero() || w.End.IsZero() {
		return errs.New(errs.Invalid, "digest window: start and end must be set")
	}
	if !w.End.After(w.Start) {
		return errs.New(errs.Invalid, "digest window: end %s is not after start %s", w.End.Format(time.RFC3339), w.Start.Format(time.RFC3339))
	}
	if w.Duration() > MaxWindow {
		return errs.New(errs.Invalid, "digest window: %s is longer than the %s limit", w.Duration(), MaxWindow)
	}
	return nil
}

// StepFor picks the bucket width for a window: about 288 buckets (5 minutes
// for a day, docs/digest.md §2.4), whole minutes, between 1 minute and 1 hour.
func StepFor(d time.Duration) time.Duration {
	step := d / 288
	if rem := step % time.Minute; rem != 0 {
		step += time.Minute - rem
	}
	return min(max(step, time.Minute), time.Hour)
}

// Buckets is how many whole steps fit in w; bucket i covers
// (BucketEnd(i)-step, BucketEnd(i)].
func (w Window) Buckets(step time.Duration) int {
	if step <= 0 {
		return 0
	}
	return int(w.Duration() / step)
}

// BucketEnd is the end of bucket i of n; the last bucket ends at w.End.
func (w Window) BucketEnd(i, n int, step time.Duration) time.Time {
	return w.End.Add(-time.Duration(n-1-i) * step)
}
