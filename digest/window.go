package digest

import (
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/vrambot/vrambot/digest/fleet"
	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/internal/safetext"
)

// Digest windows (docs/contracts.md §1, §4).
const (
	// DailyWindow is the window of the daily digest and of `vrambot digest`.
	DailyWindow = 24 * time.Hour
	// WeeklyWindow is the window of the weekly digest.
	WeeklyWindow = 7 * 24 * time.Hour
	// MinWindow is the shortest window worth a digest: a few one-minute
	// buckets say nothing.
	MinWindow = 10 * time.Minute
)

// ParseWindow reads a --window value: a Go duration ("24h", "90m",
// "1h30m") or Prometheus' notation with days and weeks ("7d", "1d12h",
// "2w"), from MinWindow to fleet.MaxWindow. Bad input is Invalid.
func ParseWindow(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	d, err := time.ParseDuration(s)
	if err != nil {
		md, merr := model.ParseDuration(s)
		if merr != nil {
			return 0, errs.New(errs.Invalid, "window %s is not a duration like 24h, 7d or 1d12h", safetext.Quote(s, 40))
		}
		d = time.Duration(md)
	}
	if d < MinWindow || d > fleet.MaxWindow {
		return 0, errs.New(errs.Invalid, "window %s: want from %s to %s (e.g. 24h or 7d)", safetext.Quote(s, 40), FormatWindow(MinWindow), FormatWindow(fleet.MaxWindow))
	}
	return d, nil
}

// FormatWindow is "24h", "36h", "7d", "2d6h", "5m": days from two days up,
// no zero units.
func FormatWindow(d time.Duration) string {
	const day = 24 * time.Hour
	if d < 2*day {
		return trimZeroUnits(d.String())
	}
	s := strconv.FormatInt(int64(d/day), 10) + "d"
	if rest := d % day; rest > 0 {
		s += trimZeroUnits(rest.String())
	}
	return s
}

// trimZeroUnits turns time.Duration's "24h0m0s" into "24h", "5m0s" into "5m".
func trimZeroUnits(s string) string {
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
