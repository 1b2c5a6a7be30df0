// Package safetext is the one sanitiser for text that came from outside
// (a user's query, a price source's row, a paste) before it is echoed in a
// message, an error or a table: nothing in it can break the line, reorder
// what follows (bidi overrides), hide itself (zero-width and other format
// characters) or run on without bound.
package safetext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Ellipsis marks a cut.
const Ellipsis = "…"

// Replacement stands for every rune that is not safe to show.
const Replacement = '?'

// safe reports whether r may be shown as is: printable (letters, marks,
// numbers, punctuation, symbols, the ASCII space), which excludes control
// characters, format characters (Cf: bidi overrides and isolates, zero-width
// joiners, the BOM), private-use runes and invalid UTF-8.
func safe(r rune) bool { return r != utf8.RuneError && unicode.IsPrint(r) }

// Show returns s with every unsafe rune replaced by '?' and cut to at most
// maxRunes runes, the cut marked with an ellipsis (maxRunes <= 0: no cut).
func Show(s string, maxRunes int) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if maxRunes > 0 && n == maxRunes {
			b.WriteString(Ellipsis)
			break
		}
		if !safe(r) {
			r = Replacement
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// OneLine collapses every run of white space (newlines and tabs included)
// to one space and then applies Show.
func OneLine(s string, maxRunes int) string {
	return Show(strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " "), maxRunes)
}

// Quote is Show inside double quotes, for an error that echoes input.
func Quote(s string, maxRunes int) string { return `"` + Show(s, maxRunes) + `"` }
