package chart

import (
	"fmt"
	"image/color"
	"math"
	"testing"
)

// The heatmap's classes must read apart at a glance for everyone: each
// step of the scale (cells at 0, 25, 50, 75, 90 and 95 % of memory) at
// least minStepDE (CIEDE2000) from the next, seen with normal colour vision
// and as a deuteranope or protanope sees it (Machado, Oliveira & Fernandes
// 2009, severity 1, applied to linear sRGB). ΔE2000 around 10 is a clearly
// different colour side by side; the old 19-step blue ramp had its 75 % and
// 90 % cells 11 apart and its neighbouring steps 2.6-4.7.
const (
	minStepDE = 15
	// Tritanopia is far rarer (about 1 in 10,000); its bound is lower.
	minTritanDE = 12
	// minLineDE keeps the threshold's red apart from every line colour.
	minLineDE = 12
)

// cvd are Machado 2009's matrices for full dichromacy (severity 1.0), as
// colorspacious and DaltonLens publish them.
var cvd = map[string][3][3]float64{
	"normal":       {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
	"deuteranopia": {{0.367322, 0.860646, -0.227968}, {0.280085, 0.672501, 0.047413}, {-0.011820, 0.042940, 0.968881}},
	"protanopia":   {{0.152286, 1.052583, -0.204868}, {0.114503, 0.786281, 0.099216}, {-0.003882, -0.048116, 1.051998}},
	"tritanopia":   {{1.255528, -0.076749, -0.178779}, {-0.078411, 0.930809, 0.147602}, {0.004733, 0.691367, 0.303900}},
}

func TestHeatmapStepsAreDistinct(t *testing.T) {
	const th = 95.0
	steps := []float64{0, 25, 50, 75, 90, 95}
	for vision, m := range cvd {
		bound := float64(minStepDE)
		if vision == "tritanopia" {
			bound = minTritanDE
		}
		for i := 1; i < len(steps); i++ {
			a, b := heatColor(steps[i-1], th), heatColor(steps[i], th)
			if a == b {
				t.Errorf("%v%% and %v%% share the colour %s", steps[i-1], steps[i], hex(a))
				continue
			}
			if d := deltaE2000(simulate(a, m), simulate(b, m)); d < bound {
				t.Errorf("%s: %v%% (%s) and %v%% (%s) are ΔE2000 %.1f apart, want at least %v", vision, steps[i-1], hex(a), steps[i], hex(b), d, bound)
			}
		}
		for _, pct := range steps {
			c := heatColor(pct, th)
			if d := deltaE2000(simulate(noDataColor, m), simulate(c, m)); d < bound {
				t.Errorf("%s: no data (%s) and %v%% (%s) are ΔE2000 %.1f apart, want at least %v", vision, hex(noDataColor), pct, hex(c), d, bound)
			}
		}
		for _, c := range linePalette {
			if d := deltaE2000(simulate(thresholdColor, m), simulate(c, m)); d < minLineDE {
				t.Errorf("%s: the threshold's %s and the line colour %s are ΔE2000 %.1f apart", vision, hex(thresholdColor), hex(c), d)
			}
		}
	}
}

// TestHeatColorClasses pins the class boundaries, also for another threshold.
func TestHeatColorClasses(t *testing.T) {
	tests := []struct {
		pct, th float64
		want    color.RGBA
	}{
		{0, 95, heatScale[0]}, {24.9, 95, heatScale[0]}, {25, 95, heatScale[1]}, {74.9, 95, heatScale[2]},
		{75, 95, heatScale[3]}, {89.9, 95, heatScale[3]}, {90, 95, heatScale[4]}, {94.9, 95, heatScale[4]},
		{95, 95, thresholdColor}, {100, 95, thresholdColor}, {math.NaN(), 95, noDataColor},
		{84, 90, heatScale[3]}, {85, 90, heatScale[4]}, {90, 90, thresholdColor},
		{50, 60, heatScale[2]}, {55, 60, heatScale[4]},
	}
	for _, tt := range tests {
		if got := heatColor(tt.pct, tt.th); got != tt.want {
			t.Errorf("heatColor(%v, %v) = %s, want %s", tt.pct, tt.th, hex(got), hex(tt.want))
		}
	}
}

// TestDeltaE2000 checks the formula against Sharma, Wu & Dalal (2005),
// "The CIEDE2000 color-difference formula: implementation notes", table 1.
func TestDeltaE2000(t *testing.T) {
	tests := []struct {
		l1, a1, b1, l2, a2, b2, want float64
	}{
		{50, 2.6772, -79.7751, 50, 0, -82.7485, 2.0425},
		{50, 3.1571, -77.2803, 50, 0, -82.7485, 2.8615},
		{50, 2.5, 0, 50, 0, -2.5, 4.3065},
		{50, 2.5, 0, 73, 25, -18, 27.1492},
		{50, 2.5, 0, 56, -27, -3, 31.9030},
		{60.2574, -34.0099, 36.2677, 60.4626, -34.1751, 39.4387, 1.2644},
		{22.7233, 20.0904, -46.6940, 23.0331, 14.9730, -42.5619, 2.0373},
		{90.9257, -0.5406, -0.9208, 88.6381, -0.8985, -0.7239, 1.5381},
		{2.0776, 0.0795, -1.1350, 0.9033, -0.0636, -0.5514, 0.9082},
	}
	for _, tt := range tests {
		if got := ciede2000(lab{tt.l1, tt.a1, tt.b1}, lab{tt.l2, tt.a2, tt.b2}); math.Abs(got-tt.want) > 1e-4 {
			t.Errorf("ΔE2000(%v,%v,%v; %v,%v,%v) = %.4f, want %.4f", tt.l1, tt.a1, tt.b1, tt.l2, tt.a2, tt.b2, got, tt.want)
		}
	}
}

// lab is a CIELAB colour (D65).
type lab struct{ l, a, b float64 }

func (c lab) String() string { return fmt.Sprintf("L%.1f a%.1f b%.1f", c.l, c.a, c.b) }

func linear(v uint8) float64 {
	c := float64(v) / 255
	if c <= 0.04045 {
		return c / 12.92
	}
	return math.Pow((c+0.055)/1.055, 2.4)
}

// simulate is c as the vision of matrix m sees it, in CIELAB.
func simulate(c color.RGBA, m [3][3]float64) lab {
	in := [3]float64{linear(c.R), linear(c.G), linear(c.B)}
	var rgb [3]float64
	for i := range 3 {
		rgb[i] = min(max(m[i][0]*in[0]+m[i][1]*in[1]+m[i][2]*in[2], 0), 1)
	}
	x := 0.4124564*rgb[0] + 0.3575761*rgb[1] + 0.1804375*rgb[2]
	y := 0.2126729*rgb[0] + 0.7151522*rgb[1] + 0.0721750*rgb[2]
	z := 0.0193339*rgb[0] + 0.1191920*rgb[1] + 0.9503041*rgb[2]
	f := func(t float64) float64 {
		if t > 216.0/24389 {
			return math.Cbrt(t)
		}
		return (24389.0/27*t + 16) / 116
	}
	fx, fy, fz := f(x/0.95047), f(y), f(z/1.08883)
	return lab{116*fy - 16, 500 * (fx - fy), 200 * (fy - fz)}
}

func deltaE2000(a, b lab) float64 { return ciede2000(a, b) }

// ciede2000 is the CIEDE2000 colour difference (kL = kC = kH = 1).
func ciede2000(c1, c2 lab) float64 {
	const rad = math.Pi / 180
	pow7 := func(v float64) float64 { return math.Pow(v, 7) }
	cBar := (math.Hypot(c1.a, c1.b) + math.Hypot(c2.a, c2.b)) / 2
	g := 0.5 * (1 - math.Sqrt(pow7(cBar)/(pow7(cBar)+pow7(25))))
	a1, a2 := (1+g)*c1.a, (1+g)*c2.a
	cp1, cp2 := math.Hypot(a1, c1.b), math.Hypot(a2, c2.b)
	hue := func(b, a float64) float64 {
		if a == 0 && b == 0 {
			return 0
		}
		h := math.Atan2(b, a) / rad
		if h < 0 {
			h += 360
		}
		return h
	}
	h1, h2 := hue(c1.b, a1), hue(c2.b, a2)
	var dh float64
	switch {
	case cp1*cp2 == 0:
	case math.Abs(h2-h1) <= 180:
		dh = h2 - h1
	case h2-h1 > 180:
		dh = h2 - h1 - 360
	default:
		dh = h2 - h1 + 360
	}
	dL, dC := c2.l-c1.l, cp2-cp1
	dH := 2 * math.Sqrt(cp1*cp2) * math.Sin(dh/2*rad)
	lBar, cpBar := (c1.l+c2.l)/2, (cp1+cp2)/2
	var hBar float64
	switch {
	case cp1*cp2 == 0:
		hBar = h1 + h2
	case math.Abs(h1-h2) <= 180:
		hBar = (h1 + h2) / 2
	case h1+h2 < 360:
		hBar = (h1 + h2 + 360) / 2
	default:
		hBar = (h1 + h2 - 360) / 2
	}
	tt := 1 - 0.17*math.Cos((hBar-30)*rad) + 0.24*math.Cos(2*hBar*rad) + 0.32*math.Cos((3*hBar+6)*rad) - 0.20*math.Cos((4*hBar-63)*rad)
	dTheta := 30 * math.Exp(-math.Pow((hBar-275)/25, 2))
	rc := 2 * math.Sqrt(pow7(cpBar)/(pow7(cpBar)+pow7(25)))
	sl := 1 + 0.015*math.Pow(lBar-50, 2)/math.Sqrt(20+math.Pow(lBar-50, 2))
	sc := 1 + 0.045*cpBar
	sh := 1 + 0.015*cpBar*tt
	rt := -math.Sin(2*dTheta*rad) * rc
	return math.Sqrt(math.Pow(dL/sl, 2) + math.Pow(dC/sc, 2) + math.Pow(dH/sh, 2) + rt*(dC/sc)*(dH/sh))
}
