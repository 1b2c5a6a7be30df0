package units

import (
	"errors"
	"testing"
)

func TestFromParts(t *testing.T) {
	tests := []struct {
		num, unit string
		want      int64
		ok        bool
	}{
		{"2.00", "GiB", 2 << 30, true},
		{"2.12", "G", 2276332667, true}, // TF prints binary G
		{"768.00", "MB", 768 << 20, true},
		{"0", "bytes", 0, true},
		{"3206250496", "B", 3206250496, true},
		{"23.58", "gib", 25318832210, true},
		{"1", "PiB", 1 << 50, true},
		{"-1", "GiB", 0, false},
		{"1e3", "GiB", 0, false},
		{"1.2.3", "GiB", 0, false},
		{"", "GiB", 0, false},
		{".", "GiB", 0, false},
		{"12", "furlongs", 0, false},
		{"9999999999999999999", "PiB", 0, false},
	}
	for _, tt := range tests {
		got, ok := FromParts(tt.num, tt.unit)
		if ok != tt.ok || got != tt.want {
			t.Errorf("FromParts(%q, %q) = %d, %v; want %d, %v", tt.num, tt.unit, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  error
	}{
		{"24GiB", 24 << 30, nil},
		{"24 gb", 24 << 30, nil},
		{" 80G ", 80 << 30, nil},
		{"512MiB", 512 << 20, nil},
		{"1.5TB", 3 << 39, nil},
		{"48", 48 << 30, ErrNoUnit},
		{"gb", 0, ErrSyntax},
		{"24 parsecs", 0, ErrSyntax},
		{"", 0, ErrSyntax},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if got != tt.want || !errors.Is(err, tt.err) && err != tt.err {
			t.Errorf("Parse(%q) = %d, %v; want %d, %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestFormat(t *testing.T) {
	if got := FormatGiB(10*GiB + GiB*9/10); got != "10.9 GiB" {
		t.Errorf("FormatGiB = %q", got)
	}
	if got := FormatGiB(MiB); got != "<0.1 GiB" {
		t.Errorf("FormatGiB(1 MiB) = %q", got)
	}
	if got := FormatGiB(0); got != "0.0 GiB" {
		t.Errorf("FormatGiB(0) = %q", got)
	}
	for n, want := range map[int64]string{2 * GiB: "2.00 GiB", 512 * MiB: "512.00 MiB", 3 * KiB: "3.00 KiB", 12: "12 bytes"} {
		if got := FormatFramework(n); got != want {
			t.Errorf("FormatFramework(%d) = %q, want %q", n, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"24GiB", "1.5 TB", "48", "", "9999999999999999999PiB", "0.000000001B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Parse(s)
		if n < 0 {
			t.Fatalf("Parse(%q) = %d: negative", s, n)
		}
		if err != nil && !errors.Is(err, ErrNoUnit) && n != 0 {
			t.Fatalf("Parse(%q) = %d with error %v", s, n, err)
		}
	})
}
