package oom

import (
	"math"
	"strconv"
	"strings"
)

// sizePattern matches a size as the frameworks print it: "2.00 GiB",
// "23.58GiB", "2.12G" (TF/XLA: binary), "768.00 MB" (MPS: binary too),
// "0 bytes", "3206250496B". Used inside larger patterns.
const sizePattern = `(\d{1,15}(?:\.\d{1,9})?)\s?(bytes|byte|[KMGTP]iB|[KMGTP]B|[KMGTP]|B)\b`

// unitShift is the power of 1024 of each unit label. Every label is binary:
// PyTorch, TF and XLA all divide by 1024 whatever they print (corpus README).
func unitShift(unit string) (uint, bool) {
	switch strings.ToUpper(unit) {
	case "B", "BYTE", "BYTES":
		return 0, true
	case "K", "KB", "KIB":
		return 10, true
	case "M", "MB", "MIB":
		return 20, true
	case "G", "GB", "GIB":
		return 30, true
	case "T", "TB", "TIB":
		return 40, true
	case "P", "PB", "PIB":
		return 50, true
	}
	return 0, false
}

// parseSize converts a number and a unit label to bytes, round(v*1024^n).
// The digits are read as an integer mantissa so that the scaling by a power
// of two is exact and only the final division by 10^k rounds.
func parseSize(num, unit string) (int64, bool) {
	shift, ok := unitShift(unit)
	if !ok {
		return 0, false
	}
	intPart, frac, _ := strings.Cut(num, ".")
	m, err := strconv.ParseInt(intPart+frac, 10, 64)
	if err != nil || m < 0 {
		return 0, false
	}
	v := float64(m) * math.Ldexp(1, int(shift)) / math.Pow10(len(frac))
	if v >= math.MaxInt64 || math.IsNaN(v) {
		return 0, false
	}
	return int64(math.Round(v)), true
}

// parseInt reads a plain decimal integer (exact byte counts, token counts).
func parseInt(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
