package reply

import (
	"math"
	"strings"
	"unicode/utf8"
)

// Bar is a one-line picture of memory in plain characters, so that it
// reads the same in Slack (inside a code span) and in a terminal: each part
// is a run of its mark, all scaled to the larger of the parts' total and
// the capacity; the capacity is the closing bracket, so whatever does not
// fit runs past it and free memory shows as dots:
//
//	[WWWWWAAAAAAAAAAAAAAAAAAAAALLLRRRRR]RRRRR   (does not fit)
//	[WWWWWWWWWWAAAALR····················]      (fits, half free)
type Bar struct {
	Parts []BarPart `json:"parts"`
	// CapacityBytes is the memory the parts are compared with (0: none,
	// then the line has no brackets); Capacity says it in words for the
	// legend ("23.6 GiB usable").
	CapacityBytes int64  `json:"capacity_bytes"`
	Capacity      string `json:"capacity"`
}

// BarPart is one part of the picture.
type BarPart struct {
	Mark  string `json:"mark"`  // one character, unique within the bar
	Label string `json:"label"` // "weights"
	Value string `json:"value"` // the bytes as the reply writes them, "5.6 GiB"
	Bytes int64  `json:"bytes"`
}

// BarWidth is the line's length in characters at the larger of total and
// capacity: wide enough for a part of 5% to show, narrow enough for a
// phone and an 80-column terminal with the brackets and the overflow.
const BarWidth = 40

// Free memory in the line.
const barFree = "·"

// Line draws the bar (no markup).
func (b Bar) Line() string {
	var total int64
	for _, p := range b.Parts {
		total += max(0, p.Bytes)
	}
	whole := max(total, b.CapacityBytes)
	if whole <= 0 {
		return ""
	}
	scale := float64(whole) / BarWidth
	var line []string
	var cum int64
	for _, p := range b.Parts {
		if p.Bytes <= 0 {
			continue
		}
		// Cumulative rounding keeps the parts adding up to the total.
		from := int(math.Round(float64(cum) / scale))
		cum += p.Bytes
		to := int(math.Round(float64(cum) / scale))
		if to == from {
			to = from + 1 // a part that is there is drawn
		}
		mark := p.Mark
		if utf8.RuneCountInString(mark) != 1 {
			mark = "#"
		}
		for range to - from {
			line = append(line, mark)
		}
	}
	if b.CapacityBytes <= 0 {
		return strings.Join(line, "")
	}
	capAt := int(math.Round(float64(b.CapacityBytes) / scale))
	var s strings.Builder
	s.WriteString("[")
	if len(line) <= capAt {
		s.WriteString(strings.Join(line, ""))
		s.WriteString(strings.Repeat(barFree, capAt-len(line)))
		s.WriteString("]")
		return s.String()
	}
	s.WriteString(strings.Join(line[:capAt], ""))
	s.WriteString("]")
	s.WriteString(strings.Join(line[capAt:], ""))
	return s.String()
}

// Legend names each mark with its value, then the capacity:
// "W weights 5.6 GiB · A activations 14.4 GiB · card: 23.6 GiB usable".
func (b Bar) Legend() string {
	var parts []string
	for _, p := range b.Parts {
		if p.Bytes <= 0 {
			continue
		}
		parts = append(parts, strings.TrimSpace(p.Mark+" "+p.Label+" "+p.Value))
	}
	if b.Capacity != "" {
		parts = append(parts, "card: "+b.Capacity)
	}
	return strings.Join(parts, " · ")
}
