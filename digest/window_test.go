package digest

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/vrambot/vrambot/digest/fleet"
	"github.com/vrambot/vrambot/internal/errs"
)

func TestParseWindow(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"24h", 24 * time.Hour},
		{"7d", 7 * 24 * time.Hour},
		{"1d12h", 36 * time.Hour},
		{"36h", 36 * time.Hour},
		{"90m", 90 * time.Minute},
		{"1h30m", 90 * time.Minute},
		{"2w", 14 * 24 * time.Hour},
		{" 7d ", 7 * 24 * time.Hour},
		{"31d", fleet.MaxWindow},
	}
	for _, tt := range tests {
		got, err := ParseWindow(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseWindow(%q) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "7", "seven days", "-1h", "0h", "5m", "32d", "1y", "7d\u202e", "1.5d"} {
		if _, err := ParseWindow(bad); !errs.Is(err, errs.Invalid) {
			t.Errorf("ParseWindow(%q): %v, want an Invalid error", bad, err)
		}
	}
	if _, err := ParseWindow("7d\u202eevil"); err == nil || strings.ContainsRune(err.Error(), '\u202e') {
		t.Errorf("the bidi override reached the error: %v", err)
	}
}

func TestFormatWindow(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{24 * time.Hour, "24h"},
		{36 * time.Hour, "36h"},
		{48 * time.Hour, "2d"},
		{7 * 24 * time.Hour, "7d"},
		{54 * time.Hour, "2d6h"},
		{5 * time.Minute, "5m"},
		{35 * time.Minute, "35m"},
		{90 * time.Minute, "1h30m"},
	}
	for _, tt := range tests {
		if got := FormatWindow(tt.in); got != tt.want {
			t.Errorf("FormatWindow(%s) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzParseWindow: any --window text is read or refused with an Invalid
// error; a window read is within bounds and its error echoes at most a
// short, printable piece of the input.
func FuzzParseWindow(f *testing.F) {
	for _, s := range []string{"24h", "7d", "1d12h", "2w", "-1h", "1e9h", "99999999999d", "1y", "", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseWindow(s)
		if err != nil {
			if !errs.Is(err, errs.Invalid) {
				t.Fatalf("ParseWindow(%q): %v is not Invalid", s, err)
			}
			if msg := err.Error(); utf8.RuneCountInString(msg) > 200 || strings.ContainsAny(msg, "\n\r\x00") {
				t.Fatalf("error %q is too long or not one line", msg)
			}
			return
		}
		if d < MinWindow || d > fleet.MaxWindow {
			t.Fatalf("ParseWindow(%q) = %s, out of bounds", s, d)
		}
		if back, err := ParseWindow(FormatWindow(d)); err != nil || back != d {
			t.Fatalf("FormatWindow(%s) = %q does not read back: %s, %v", d, FormatWindow(d), back, err)
		}
	})
}
