package reply

import (
	"testing"
	"unicode/utf8"
)

func TestBarLine(t *testing.T) {
	gib := int64(1) << 30
	tests := []struct {
		name string
		bar  Bar
		want string
	}{
		{"fits, half free", Bar{CapacityBytes: 40 * gib, Parts: []BarPart{{Mark: "W", Bytes: 10 * gib}, {Mark: "A", Bytes: 10 * gib}}},
			"[WWWWWWWWWWAAAAAAAAAA····················]"},
		{"over the card runs past the bracket", Bar{CapacityBytes: 30 * gib, Parts: []BarPart{{Mark: "W", Bytes: 20 * gib}, {Mark: "A", Bytes: 20 * gib}}},
			"[WWWWWWWWWWWWWWWWWWWWAAAAAAAAAA]AAAAAAAAAA"},
		{"a tiny part still shows", Bar{CapacityBytes: 40 * gib, Parts: []BarPart{{Mark: "W", Bytes: 39 * gib}, {Mark: "G", Bytes: gib / 100}}},
			"[WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWG]"},
		{"no capacity: no brackets", Bar{Parts: []BarPart{{Mark: "K", Bytes: gib}}}, "KKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKK"},
		{"nothing to draw", Bar{}, ""},
		{"zero and negative parts are skipped", Bar{CapacityBytes: 4 * gib, Parts: []BarPart{{Mark: "W", Bytes: 0}, {Mark: "X", Bytes: -5}, {Mark: "A", Bytes: gib}}},
			"[AAAAAAAAAA······························]"},
		{"a bad mark becomes #", Bar{CapacityBytes: gib, Parts: []BarPart{{Mark: "WW", Bytes: gib}}}, "[########################################]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.bar.Line(); got != tt.want {
				t.Errorf("Line() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestBarLineIsBounded(t *testing.T) {
	gib := int64(1) << 30
	for _, total := range []int64{1, gib, 10 * gib, 100 * gib, 1 << 50} {
		b := Bar{CapacityBytes: 20 * gib, Parts: []BarPart{{Mark: "W", Bytes: total / 2}, {Mark: "A", Bytes: total - total/2}}}
		if n := utf8.RuneCountInString(b.Line()); n > BarWidth+3 {
			t.Errorf("total %d: %d characters", total, n)
		}
	}
}

func TestBarLegend(t *testing.T) {
	b := Bar{Capacity: "23.6 GiB usable", Parts: []BarPart{{Mark: "W", Label: "weights", Value: "5.6 GiB", Bytes: 1}, {Mark: "G", Label: "gradients", Value: "0 GiB"}}}
	if got, want := b.Legend(), "W weights 5.6 GiB · card: 23.6 GiB usable"; got != want {
		t.Errorf("Legend() = %q, want %q", got, want)
	}
}
