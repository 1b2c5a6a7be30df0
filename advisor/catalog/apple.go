package catalog

import (
	"regexp"
	"strings"
)

// appleChip is an Apple silicon chip as people write it: "m3-max",
// "M2 Ultra" joined by the tokenizer, "m4pro", "apple-m1".
var appleChip = regexp.MustCompile(`^(?:apple[- ]?)?m([1-9])(?:[- ]?(pro|max|ultra))?$`)

// AppleGPUShare is the share of a Mac's unified memory Metal lets the GPU
// use by default (recommendedMaxWorkingSetSize; docs/gpu-specs.md "Apple
// silicon").
const AppleGPUShare = 0.75

// AppleChip names the Apple silicon chip s stands for ("Apple M3 Max"), if
// it is one. Such a chip is no catalog GPU: its memory is the Mac's, which
// the name does not tell, so callers ask for a budget instead.
func AppleChip(s string) (string, bool) {
	m := appleChip.FindStringSubmatch(strings.ToLower(strings.TrimSpace(s)))
	if m == nil {
		return "", false
	}
	name := "Apple M" + m[1]
	if m[2] != "" {
		name += " " + strings.ToUpper(m[2][:1]) + m[2][1:]
	}
	return name, true
}
