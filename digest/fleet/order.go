package fleet

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/vrambot/vrambot/advisor/catalog"
)

// MIGShare is the fraction of a whole GPU a MIG profile holds: "3g.40gb" is
// 3 of the 7 compute slices of an A100/H100 (4 on an A30), as the MIG
// profile table says (catalog.MIGComputeShare). It is 1 for a whole GPU and
// for profiles it cannot read.
func MIGShare(profile, model string) float64 {
	return catalog.MIGComputeShare(profile, model)
}

// lessGPU orders GPUs by host, index (numerically), MIG instance, UUID.
func lessGPU(a, b GPU) bool {
	if a.Host != b.Host {
		return a.Host < b.Host
	}
	if a.Index != b.Index {
		return numericLess(a.Index, b.Index)
	}
	if a.Key.MIGInstance != b.Key.MIGInstance {
		return numericLess(a.Key.MIGInstance, b.Key.MIGInstance)
	}
	return a.Key.UUID < b.Key.UUID
}

// numericLess orders "" (a whole GPU) first, "2" before "10", and
// non-numbers after numbers.
func numericLess(a, b string) bool {
	if a == "" || b == "" {
		return a == "" && b != ""
	}
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	switch {
	case errA == nil && errB == nil:
		return x < y
	case errA == nil:
		return true
	case errB == nil:
		return false
	}
	return a < b
}

// ListSome names up to three items and counts the rest.
func ListSome(items []string) string {
	items = append([]string(nil), items...)
	sort.Strings(items)
	if len(items) <= 3 {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:3], ", "), len(items)-3)
}

// Plural is "1 GPU", "2 GPUs".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
