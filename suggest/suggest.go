// Package suggest finds the valid word nearest to a mistyped one, for the
// "did you mean" of every user-facing parser (query grammar, catalogs, price
// source specs, CLI subcommands).
package suggest

import "math"

// MaxInput bounds the work on pasted input: longer words are never close to
// a vocabulary word, so they get no suggestion.
const MaxInput = 64

// Distance is the optimal-string-alignment distance over runes: Levenshtein
// plus adjacent transpositions ("bf61" is one edit from "bf16").
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rolling rows: the transposition looks two rows back.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// Closest returns the candidate nearest to s and its distance; ("",
// math.MaxInt) when there are no candidates or s is longer than MaxInput
// runes. Callers decide how near is near enough.
func Closest(s string, candidates []string) (string, int) {
	best, bestD := "", math.MaxInt
	if len([]rune(s)) > MaxInput {
		return best, bestD
	}
	for _, c := range candidates {
		if d := Distance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best, bestD
}
