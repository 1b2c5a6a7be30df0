package query

import (
	"testing"

	"github.com/vrambot/vrambot/internal/golden"
)

// TestREADMEGrammarTable: the README's grammar table is the one the
// settings table writes.
func TestREADMEGrammarTable(t *testing.T) {
	golden.Section(t, "../README.md", "grammar-table", Markdown())
}
