package oom

import (
	"strconv"

	"github.com/vrambot/vrambot/advisor/units"
)

// sizePattern matches a size as the frameworks print it: "2.00 GiB",
// "23.58GiB", "2.12G" (TF/XLA: binary), "768.00 MB" (MPS: binary too),
// "0 bytes", "3206250496B". Used inside larger patterns.
const sizePattern = `(\d{1,15}(?:\.\d{1,9})?)\s?(bytes|byte|[KMGTP]iB|[KMGTP]B|[KMGTP]|B)\b`

// parseSize converts a number and a unit label to bytes (units.FromParts:
// every label binary, round(v·1024ⁿ)).
func parseSize(num, unit string) (int64, bool) { return units.FromParts(num, unit) }

// parseInt reads a plain decimal integer (exact byte counts, token counts).
func parseInt(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
