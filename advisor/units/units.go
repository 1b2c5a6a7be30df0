// Package units reads and writes memory sizes the way GPU tools print them.
// It is the one size parser of the project: the OOM parser reads the sizes
// in pastes with it, the /vram grammar its memory budgets ("24gb") and the
// prices command its --min-memory.
//
// Every unit label is binary. PyTorch, TensorFlow, XLA and nvidia-smi divide
// by 1024 whatever they print ("2.00 GiB", "2.12G", "768.00 MB" on MPS), and
// cards are sold as "24 GB" meaning 24 GiB (internal/oomcorpus/public/README.md,
// "Units"), so GB is read as GiB.
package units

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// Byte sizes.
const (
	KiB int64 = 1 << 10
	MiB int64 = 1 << 20
	GiB int64 = 1 << 30
	TiB int64 = 1 << 40
)

// shift is the power of 1024 of each unit label (case-insensitive).
func shift(unit string) (uint, bool) {
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

// maxDigits bounds the mantissa so that it fits an int64.
const maxDigits = 18

// FromParts converts a decimal number ("23.58", "0", "3206250496") and a
// unit label ("GiB", "G", "MB", "bytes") to bytes, round(v·1024ⁿ). The
// digits are read as an integer mantissa, so the scaling by a power of two is
// exact and only the final division by 10ᵏ rounds. Signs, exponents and
// anything but digits with at most one dot are refused.
func FromParts(num, unit string) (int64, bool) {
	sh, ok := shift(unit)
	if !ok || num == "" || num == "." {
		return 0, false
	}
	intPart, frac, _ := strings.Cut(num, ".")
	digits := intPart + frac
	if len(digits) > maxDigits || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	m, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	v := float64(m) * math.Ldexp(1, int(sh)) / math.Pow10(len(frac))
	if v >= math.MaxInt64/2 || math.IsNaN(v) {
		return 0, false
	}
	return int64(math.Round(v)), true
}

// ErrNoUnit is returned by Parse for a bare number: the caller decides what
// a bare number means (the prices command reads it as GB and says so).
var ErrNoUnit = errors.New("no unit")

// ErrSyntax is returned by Parse for text that is not a number and a unit.
var ErrSyntax = errors.New("not a number and a unit (e.g. 24GiB, 80G, 512MiB)")

// Parse reads a size written by a person: a number and a unit, with or
// without a space between ("24GiB", "24 gb", "80G", "1.5TB", "512 MiB",
// "2048 bytes"). A bare number gives ErrNoUnit with its value in bytes as if
// it were GiB, so a caller that accepts bare numbers as GB can use it.
func Parse(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		if n, ok := FromParts(t, "GiB"); ok {
			return n, ErrNoUnit
		}
		return 0, ErrSyntax
	}
	n, ok := FromParts(t[:i], strings.TrimSpace(t[i:]))
	if !ok {
		return 0, ErrSyntax
	}
	return n, nil
}

// FormatGiB writes bytes as GiB with one decimal ("10.9 GiB"), the precision
// an estimate has; a small non-zero size reads "<0.1 GiB", not "0.0 GiB".
func FormatGiB(n int64) string {
	if n > 0 && n < GiB/20 {
		return "<0.1 GiB"
	}
	return strconv.FormatFloat(float64(n)/float64(GiB), 'f', 1, 64) + " GiB"
}

// FormatFramework writes bytes as the frameworks print them, with two
// decimals in the largest unit that is at least 1 ("2.00 GiB", "512.00 MiB").
func FormatFramework(n int64) string {
	switch {
	case n >= GiB:
		return strconv.FormatFloat(float64(n)/float64(GiB), 'f', 2, 64) + " GiB"
	case n >= MiB:
		return strconv.FormatFloat(float64(n)/float64(MiB), 'f', 2, 64) + " MiB"
	case n >= KiB:
		return strconv.FormatFloat(float64(n)/float64(KiB), 'f', 2, 64) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
