package safetext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestShow(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"lorra", 10, "lorra"},
		{"abc\u202Edef", 0, "abc?def"},  // right-to-left override
		{"a\u2066b\u2069c", 0, "a?b?c"}, // isolates
		{"zero\u200Bwidth", 0, "zero?width"},
		{"tab\there", 0, "tab?here"},
		{"bad\xffutf8", 0, "bad?utf8"},
		{"abcdef", 3, "abc…"},
		{"llama-3.1-8b", 40, "llama-3.1-8b"},
		{"ünïcödé ok", 0, "ünïcödé ok"},
	}
	for _, tt := range tests {
		if got := Show(tt.in, tt.max); got != tt.want {
			t.Errorf("Show(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

func TestOneLineAndQuote(t *testing.T) {
	if got := OneLine("a\n\n b\t\tc  ", 0); got != "a b c" {
		t.Errorf("OneLine = %q", got)
	}
	if got := Quote("x\u202Ey", 5); got != `"x?y"` {
		t.Errorf("Quote = %q", got)
	}
}

func FuzzShow(f *testing.F) {
	f.Add("abc\u202Edef\n", 4)
	f.Fuzz(func(t *testing.T, s string, max int) {
		max = max % 100
		got := Show(s, max)
		if !utf8.ValidString(got) || strings.ContainsAny(got, "\n\r\t\u202A\u202B\u202C\u202D\u202E\u2066\u2067\u2068\u2069\u200B\uFEFF") {
			t.Fatalf("Show(%q) = %q: unsafe output", s, got)
		}
		if max > 0 && utf8.RuneCountInString(got) > max+1 {
			t.Fatalf("Show(%q, %d) = %q: too long", s, max, got)
		}
	})
}
