package chart

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"testing"
	"time"

	"github.com/vrambot/vrambot/internal/golden"
)

var (
	day0 = time.Date(2024, 1, 8, 0, 0, 0, 0, time.UTC)
	day1 = day0.Add(24 * time.Hour)
)

// steady returns a day of 5-minute points at v, or at v2 from switchAt on.
func steady(v float64) []Point {
	var pts []Point
	for t := day0.Add(5 * time.Minute); !t.After(day1); t = t.Add(5 * time.Minute) {
		pts = append(pts, Point{T: t, V: v})
	}
	return pts
}

// fleetOf is n rows whose memory alternates between 10 % and 90 % by row,
// so neighbouring rows always differ in colour.
func fleetOf(n int) Input {
	in := Input{Title: "GPU memory", Start: day0, End: day1, Threshold: 0.95}
	for i := range n {
		v := 0.1
		if i%2 == 1 {
			v = 0.9
		}
		in.Rows = append(in.Rows, Row{Label: fmt.Sprintf("node-%c GPU %d  %d/80 GiB", 'a'+i/8, i%8, int(v*80)), Points: steady(v)})
	}
	return in
}

func decode(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if dir := os.Getenv("CHART_OUT"); dir != "" {
		_ = os.WriteFile(dir+"/"+t.Name()+".png", b, 0o644)
	}
	return img
}

func TestLayoutGolden(t *testing.T) {
	markers := []Marker{{Kind: MarkerRestart, Row: 2, T: day0.Add(3 * time.Hour)}, {Kind: MarkerOOM, Row: -1, T: day0.Add(3*time.Hour + 12*time.Minute)}}
	tests := []struct {
		name string
		in   Input
	}{
		{"layout-32-gpus.json", fleetOf(32)},
		{"layout-9-gpus.json", fleetOf(9)},
		{"layout-8-gpus.json", fleetOf(8)},
		{"layout-3-gpus.json", fleetOf(3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Markers = markers
			l, err := Plan(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.MarshalIndent(l, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tt.name, append(b, '\n'))
		})
	}
}

func TestLayoutChoices(t *testing.T) {
	for _, n := range []int{1, MaxLines, MaxLines + 1, 32, MaxRows, MaxRows + 5} {
		l, err := Plan(fleetOf(n))
		if err != nil {
			t.Fatal(err)
		}
		wantKind := "lines"
		if n > MaxLines {
			wantKind = "heatmap"
		}
		if l.Kind != wantKind {
			t.Errorf("%d series drawn as %s, want %s", n, l.Kind, wantKind)
		}
		if got := len(l.Rows); got != min(n, MaxRows) {
			t.Errorf("%d series: %d rows, want %d", n, got, min(n, MaxRows))
		}
		if n > MaxRows && l.Note == "" {
			t.Errorf("%d series: no note on the rows left out", n)
		}
		seen := map[string]bool{}
		for _, c := range l.SeriesColors {
			if seen[c] {
				t.Errorf("%d series: colour %s used twice", n, c)
			}
			seen[c] = true
		}
		if seen[l.Threshold.Color] || contains(l.Scale, l.Threshold.Color) || l.Threshold.Color == l.NoDataColor {
			t.Errorf("%d series: the threshold's colour %s is also a series colour", n, l.Threshold.Color)
		}
		if l.Legend.Placement != "right of the plot" || l.Font != "Liberation Sans" {
			t.Errorf("%d series: legend %q, font %q", n, l.Legend.Placement, l.Font)
		}
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestHeatmapHasOneRowPerGPU renders 32 GPUs and counts the colour bands
// down a vertical line through the middle of the plot: one per GPU.
func TestHeatmapHasOneRowPerGPU(t *testing.T) {
	in := fleetOf(32)
	b, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	img := decode(t, b)
	l, _ := Plan(in)
	if bd := img.Bounds(); bd.Dx() != l.WidthPx || bd.Dy() != l.HeightPx {
		t.Fatalf("image is %dx%d, want %dx%d", bd.Dx(), bd.Dy(), l.WidthPx, l.HeightPx)
	}
	low, high := heatColor(10, 95), heatColor(90, 95)
	bands := countBands(img, l.WidthPx/2, []color.RGBA{low, high})
	if bands != 32 {
		t.Errorf("%d row bands down the heatmap, want 32", bands)
	}
	if len(b) > 1<<20 {
		t.Errorf("chart is %d bytes, want under 1 MiB", len(b))
	}
}

// countBands counts runs of at least 4 pixels of one of cols down column x.
func countBands(img image.Image, x int, cols []color.RGBA) int {
	bands, run := 0, 0
	var cur color.RGBA
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		r, g, b, _ := img.At(x, y).RGBA()
		c := color.RGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0xFF}
		match := false
		for _, want := range cols {
			if c == want {
				match = true
			}
		}
		switch {
		case match && c == cur:
			run++
		case match:
			if run >= 4 {
				bands++
			}
			cur, run = c, 1
		default:
			if run >= 4 {
				bands++
			}
			cur, run = color.RGBA{}, 0
		}
	}
	if run >= 4 {
		bands++
	}
	return bands
}

func TestRenderLinesAndMarkers(t *testing.T) {
	in := fleetOf(3)
	in.Rows[0].Points = append(steady(0.97)[:100], steady(0.002)[100:110]...)
	in.Rows[0].Points = append(in.Rows[0].Points, steady(0.5)[110:]...)
	in.Markers = []Marker{
		{Kind: MarkerRestart, Row: 0, T: in.Rows[0].Points[100].T},
		{Kind: MarkerOOM, Row: 0, T: in.Rows[0].Points[101].T},
		{Kind: MarkerOOM, Row: -1, T: day0.Add(20 * time.Hour)},
		{Kind: MarkerOOM, Row: 7, T: day0.Add(20 * time.Hour)}, // no such row: dropped
	}
	b, err := Render(in)
	if err != nil {
		t.Fatal(err)
	}
	img := decode(t, b)
	if bd := img.Bounds(); bd.Dx() != widthPx || bd.Dy() != linesHeightPx {
		t.Errorf("image is %dx%d, want %dx%d", bd.Dx(), bd.Dy(), widthPx, linesHeightPx)
	}
	l, _ := Plan(in)
	if len(l.Markers) != 3 {
		t.Errorf("markers %+v, want 3 (the one on a missing row dropped)", l.Markers)
	}
	// Every line colour and the threshold's red appear in the image.
	for _, c := range append(linePalette[:3:3], thresholdColor) {
		if !hasColor(img, c) {
			t.Errorf("colour %s not drawn", hex(c))
		}
	}
}

func hasColor(img image.Image, want color.RGBA) bool {
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			// Anti-aliased lines blend into the background: allow a little.
			r, g, b, _ := img.At(x, y).RGBA()
			if near(uint8(r>>8), want.R) && near(uint8(g>>8), want.G) && near(uint8(b>>8), want.B) {
				return true
			}
		}
	}
	return false
}

func near(a, b uint8) bool { return max(a, b)-min(a, b) <= 24 }

func TestRenderRejects(t *testing.T) {
	if _, err := Render(Input{Start: day0, End: day1}); !errors.Is(err, ErrNoData) {
		t.Errorf("no rows: %v, want ErrNoData", err)
	}
	if _, err := Render(Input{Start: day0, End: day1, Rows: []Row{{Label: "empty"}}}); !errors.Is(err, ErrNoData) {
		t.Errorf("empty row: %v, want ErrNoData", err)
	}
	if _, err := Render(Input{Rows: fleetOf(1).Rows}); err == nil {
		t.Error("a chart without a window was drawn")
	}
	one := Input{Start: day0, End: day1, Rows: []Row{{Label: "lonely", Points: []Point{{T: day1, V: 1.4}}}}}
	if _, err := Render(one); err != nil {
		t.Errorf("one point above 100%%: %v", err)
	}
}

func TestClockTicks(t *testing.T) {
	tests := []struct {
		name       string
		start, end time.Time
		first      string
		count      int
	}{
		{"a day in 3 h steps", day0, day1, "Mon 00:00", 9},
		{"an hour", day0, day0.Add(time.Hour), "Mon 00:00", 2},
		{"a week of midnights", day0, day0.Add(7 * 24 * time.Hour), "Mon 8 Jan", 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ticks := clockTicks{loc: time.UTC}.Ticks(float64(tt.start.Unix()), float64(tt.end.Unix()))
			if len(ticks) != tt.count || ticks[0].Label != tt.first {
				t.Errorf("%d ticks from %q, want %d from %q", len(ticks), ticks[0].Label, tt.count, tt.first)
			}
		})
	}
}

func BenchmarkRenderHeatmap64(b *testing.B) {
	in := fleetOf(64)
	for b.Loop() {
		if _, err := Render(in); err != nil {
			b.Fatal(err)
		}
	}
}
