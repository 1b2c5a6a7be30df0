// Package jsonlimit checks, before JSON text is decoded, that decoding it
// stays within bounds: its size, how many tokens it holds, how deeply it
// nests and how many elements one array or object has. encoding/json
// decodes whatever it is given into as many values as the text describes
// (an 8 MiB file of empty arrays is 2.7 million of them), so a reader of
// untrusted text runs Check first and decodes only what passes.
//
// Check is a single pass over the bytes that allocates nothing: it counts,
// it does not validate. Text it passes may still be malformed, which the
// decoder that follows reports; for well-formed text its counts are exactly
// what encoding/json's Decoder.Token sees (the fuzz target pins this).
package jsonlimit

import (
	"context"
	"fmt"
	"math"
)

// Limits are the bounds Check enforces. A zero field is no bound.
type Limits struct {
	// Bytes bounds the length of the text.
	Bytes int
	// Tokens bounds the values and object keys, containers included (what
	// Decoder.Token returns, closing delimiters excepted).
	Tokens int
	// Depth bounds nesting: a top-level array or object is depth 1. It is
	// never more than MaxDepth.
	Depth int
	// Elements bounds the values of one array, or the keys of one object.
	Elements int
}

// What names the bound an Error ran into.
type What string

// The bounds.
const (
	WhatBytes     What = "bytes"
	WhatTokens    What = "tokens"
	WhatDepth     What = "depth"
	WhatElements  What = "elements"
	WhatMalformed What = "malformed" // unbalanced brackets, an unterminated string
)

// Error is text that runs past a bound (or is malformed in a way the count
// cannot go past). Offset is where the scan stopped.
type Error struct {
	What   What
	Limit  int
	Offset int
}

func (e *Error) Error() string {
	switch e.What {
	case WhatMalformed:
		return fmt.Sprintf("not JSON (unbalanced at byte %d)", e.Offset)
	case WhatBytes:
		return fmt.Sprintf("more than %d bytes", e.Limit)
	case WhatDepth:
		return fmt.Sprintf("nested deeper than %d levels (at byte %d)", e.Limit, e.Offset)
	case WhatElements:
		return fmt.Sprintf("an array or object of more than %d elements (at byte %d)", e.Limit, e.Offset)
	}
	return fmt.Sprintf("more than %d values and keys (at byte %d)", e.Limit, e.Offset)
}

// ctxEvery is how many bytes Check scans between looks at ctx.
const ctxEvery = 64 << 10

// MaxDepth is the deepest nesting Check lets through whatever Limits say:
// it keeps one element count per open container without allocating.
// encoding/json itself stops at 10,000; no reader here needs 64.
const MaxDepth = 64

// Check reports whether data stays within l, or an *Error for the first
// bound it runs past; it stops early when ctx ends (returning ctx's error).
func Check(ctx context.Context, data []byte, l Limits) error {
	if l.Bytes > 0 && len(data) > l.Bytes {
		return &Error{What: WhatBytes, Limit: l.Bytes, Offset: l.Bytes}
	}
	s := newScanner(l)
	for i := 0; i < len(data); i++ {
		if i%ctxEvery == 0 && i > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		c := data[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case ',':
			if err := s.comma(i); err != nil {
				return err
			}
			continue
		case ':':
			s.afterColon = true
			continue
		case ']', '}':
			if err := s.closeContainer(i); err != nil {
				return err
			}
			continue
		}
		// The start of a value or a key. The first one in a container is
		// its first element; later ones were counted at their comma.
		if !s.afterColon && s.depth > 0 && !s.started() {
			if err := s.element(i); err != nil {
				return err
			}
		}
		s.afterColon = false
		if err := s.token(i); err != nil {
			return err
		}
		switch c {
		case '[', '{':
			if err := s.open(i); err != nil {
				return err
			}
		case '"':
			j := stringEnd(data, i)
			if j >= len(data) {
				return &Error{What: WhatMalformed, Offset: i}
			}
			i = j
		default:
			// A number or literal (true, false, null; NaN and Infinity,
			// which some config.json files hold): it runs to the next
			// delimiter.
			i = scalarEnd(data, i) - 1
		}
	}
	if s.depth != 0 {
		return &Error{What: WhatMalformed, Offset: len(data)}
	}
	return nil
}

// scanner is what Check has counted so far. Its methods are small enough
// to be inlined into Check's loop, which allocates nothing.
type scanner struct {
	// The bounds: math.MaxInt, which no count reaches, where Limits sets
	// none, so that each check is one comparison.
	maxTokens, maxDepth, maxElements int

	elems  [MaxDepth]int // elements seen in each open container
	depth  int
	tokens int
	// afterColon: the next value is an object member's value, which is not
	// an element of its own (the key was).
	afterColon bool
}

// newScanner is a scanner for l with nothing counted yet.
func newScanner(l Limits) scanner {
	s := scanner{maxTokens: math.MaxInt, maxDepth: MaxDepth, maxElements: math.MaxInt}
	if l.Tokens > 0 {
		s.maxTokens = l.Tokens
	}
	if l.Depth > 0 {
		s.maxDepth = min(l.Depth, MaxDepth)
	}
	if l.Elements > 0 {
		s.maxElements = l.Elements
	}
	return s
}

// token counts a value or a key starting at i.
func (s *scanner) token(i int) error {
	s.tokens++
	if s.tokens > s.maxTokens {
		return &Error{What: WhatTokens, Limit: s.maxTokens, Offset: i}
	}
	return nil
}

// open starts a container (its token counted) with no element yet: its
// first value (or key) makes the count 1, and every comma adds one.
func (s *scanner) open(i int) error {
	s.depth++
	if s.depth > s.maxDepth {
		return &Error{What: WhatDepth, Limit: s.maxDepth, Offset: i}
	}
	s.elems[s.depth-1] = 0
	return nil
}

// element counts an element of the open container (depth > 0).
func (s *scanner) element(i int) error {
	n := &s.elems[s.depth-1]
	*n++
	if *n > s.maxElements {
		return &Error{What: WhatElements, Limit: s.maxElements, Offset: i}
	}
	return nil
}

// started reports whether the current container has an element yet.
func (s *scanner) started() bool { return s.depth > 0 && s.elems[s.depth-1] > 0 }

// comma is a comma at i: one more element in the open container.
func (s *scanner) comma(i int) error {
	if s.depth == 0 {
		return &Error{What: WhatMalformed, Offset: i}
	}
	if err := s.element(i); err != nil {
		return err
	}
	s.afterColon = false
	return nil
}

// closeContainer is a closing bracket or brace at i.
func (s *scanner) closeContainer(i int) error {
	if s.depth == 0 {
		return &Error{What: WhatMalformed, Offset: i}
	}
	s.depth--
	s.afterColon = false
	return nil
}

// stringEnd is the index of the quote that closes the string starting at
// i: len(data) or more when none does.
func stringEnd(data []byte, i int) int {
	j := i + 1
	for ; j < len(data); j++ {
		if data[j] == '\\' {
			j++
			continue
		}
		if data[j] == '"' {
			break
		}
	}
	return j
}

// scalarEnd is the index just past the number or literal starting at i.
func scalarEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case ' ', '\t', '\n', '\r', ',', ':', ']', '}', '[', '{', '"':
			return j
		}
	}
	return len(data)
}
