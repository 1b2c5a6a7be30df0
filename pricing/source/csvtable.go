package source

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
)

// csvTable reads a CSV file by header name, because column order differs
// between catalog files (SkyPilot) and may change upstream (gpuhunt).
type csvTable struct {
	r      *csv.Reader
	header []string
	col    map[string]int // lower-cased header name -> index
}

// newCSVTable reads the header of data and checks that the required columns
// (matched case-insensitively) are present.
func newCSVTable(data []byte, required ...string) (*csvTable, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 BOM from spreadsheet exports
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1 // a short or long row is one dropped row, not a failed file
	r.LazyQuotes = true
	r.ReuseRecord = false
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("empty file: no CSV header")
	}
	if err != nil {
		return nil, fmt.Errorf("read CSV header: %w", err)
	}
	t := &csvTable{r: r, header: header, col: make(map[string]int, len(header))}
	for i, name := range header {
		t.col[strings.ToLower(strings.TrimSpace(name))] = i
	}
	for _, name := range required {
		if _, ok := t.col[strings.ToLower(name)]; !ok {
			return nil, fmt.Errorf("CSV header %q: missing column %q", strings.Join(header, ","), name)
		}
	}
	return t, nil
}

// next returns the next row. ok is false at the end of the file; a row that
// cannot be read or has another number of cells than the header comes back
// with malformed set, to be counted as dropped.
func (t *csvTable) next() (rec []string, malformed, ok bool) {
	rec, err := t.r.Read()
	if errors.Is(err, io.EOF) {
		return nil, false, false
	}
	if err != nil || len(rec) != len(t.header) {
		return nil, true, true
	}
	return rec, false, true
}

// get returns the named cell of rec, trimmed; "" when the column is absent.
func (t *csvTable) get(rec []string, name string) string {
	i, ok := t.col[strings.ToLower(name)]
	if !ok || i >= len(rec) {
		return ""
	}
	return strings.TrimSpace(rec[i])
}

// rows yields each well-formed record and counts malformed ones as dropped
// in c, so every CSV source skips bad rows the same way.
func (t *csvTable) rows(c *collector) iter.Seq[[]string] {
	return func(yield func([]string) bool) {
		for {
			rec, malformed, ok := t.next()
			if !ok {
				return
			}
			if malformed {
				c.drop()
				continue
			}
			if !yield(rec) {
				return
			}
		}
	}
}
