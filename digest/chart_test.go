package digest

import (
	"bytes"
	"errors"
	"fmt"
	"image/png"
	"testing"
	"time"
)

func TestChartIsASensiblePNG(t *testing.T) {
	f, err := storyFleet()
	if err != nil {
		t.Fatal(err)
	}
	w := Window{Start: storyStart, End: storyEnd}
	many := chartSeries(f.GPUs)
	for i := range 20 { // more series than the legend takes
		many = append(many, Series{Name: fmt.Sprintf("extra %d", i), Points: []Point{{T: storyStart.Add(time.Hour), V: 0.5}, {T: storyEnd, V: 1.4}}})
	}
	tests := []struct {
		name   string
		series []Series
	}{
		{"story", chartSeries(f.GPUs)},
		{"capped legend, ratios above 1 clamped", many},
		{"one point", []Series{{Name: "lonely", Points: []Point{{T: storyEnd, V: 0.3}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Chart("GPU memory", w, tt.series)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) >= 1<<20 {
				t.Errorf("chart is %d bytes, want under 1 MiB", len(b))
			}
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("not a PNG: %v", err)
			}
			if bd := img.Bounds(); bd.Dx() != 960 || bd.Dy() != 480 {
				t.Errorf("chart is %dx%d, want 960x480", bd.Dx(), bd.Dy())
			}
		})
	}
}

func TestChartWithoutData(t *testing.T) {
	w := Window{Start: storyStart, End: storyEnd}
	for _, s := range [][]Series{nil, {{Name: "empty"}}} {
		if _, err := Chart("x", w, s); !errors.Is(err, ErrNoChartData) {
			t.Errorf("Chart(%v) error = %v, want ErrNoChartData", s, err)
		}
	}
	if _, err := Chart("x", Window{}, []Series{{Name: "a", Points: []Point{{T: storyEnd, V: 1}}}}); err == nil {
		t.Error("Chart accepted an empty window")
	}
}

func TestClockTicks(t *testing.T) {
	tests := []struct {
		name  string
		w     Window
		first string
		count int
	}{
		{"a day in 3 h steps", Window{Start: storyStart, End: storyEnd}, "Mon 00:00", 9},
		{"an hour", Window{Start: storyStart, End: storyStart.Add(time.Hour)}, "Mon 00:00", 2},
		{"a week of midnights", Window{Start: storyStart, End: storyStart.Add(7 * 24 * time.Hour)}, "Mon 1 Jan", 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ticks := clockTicks{loc: time.UTC}.Ticks(float64(tt.w.Start.Unix()), float64(tt.w.End.Unix()))
			if len(ticks) != tt.count || ticks[0].Label != tt.first {
				t.Errorf("%d ticks from %q, want %d from %q", len(ticks), ticks[0].Label, tt.count, tt.first)
			}
		})
	}
}
