package suggest

import (
	"math"
	"strings"
	"testing"
)

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"lora", "lora", 0},
		{"lorra", "lora", 1},
		{"bf61", "bf16", 1}, // transposition
		{"", "abc", 3},
		{"kitten", "sitting", 3},
		{"a100", "h100", 1},
		{"größe", "grösse", 2},
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Distance(tt.b, tt.a); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestClosest(t *testing.T) {
	words := []string{"full", "lora", "qlora", "freeze", "inference"}
	if got, d := Closest("qlroa", words); got != "qlora" || d != 1 {
		t.Errorf("Closest(qlroa) = %q, %d", got, d)
	}
	if got, d := Closest("x", nil); got != "" || d != math.MaxInt {
		t.Errorf("no candidates: %q, %d", got, d)
	}
	if got, _ := Closest(strings.Repeat("a", MaxInput+1), words); got != "" {
		t.Errorf("overlong input got a suggestion %q", got)
	}
}

func BenchmarkDistance(b *testing.B) {
	for b.Loop() {
		Distance("paged-adamw-8bit", "paged-adamw-32bit")
	}
}
