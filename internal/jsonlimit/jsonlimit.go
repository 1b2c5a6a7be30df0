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
	maxDepth := MaxDepth
	if l.Depth > 0 {
		maxDepth = min(l.Depth, MaxDepth)
	}
	var (
		elems  [MaxDepth]int // elements seen in each open container
		depth  int
		tokens int
	)
	value := func(i int) error {
		tokens++
		if l.Tokens > 0 && tokens > l.Tokens {
			return &Error{What: WhatTokens, Limit: l.Tokens, Offset: i}
		}
		return nil
	}
	// open starts a container with no element yet: its first value (or
	// key) makes the count 1, and every comma adds one.
	open := func(i int) error {
		if err := value(i); err != nil {
			return err
		}
		depth++
		if depth > maxDepth {
			return &Error{What: WhatDepth, Limit: maxDepth, Offset: i}
		}
		elems[depth-1] = 0
		return nil
	}
	element := func(i int) error {
		if depth == 0 {
			return nil
		}
		s := &elems[depth-1]
		*s++
		if l.Elements > 0 && *s > l.Elements {
			return &Error{What: WhatElements, Limit: l.Elements, Offset: i}
		}
		return nil
	}
	// started reports whether the current container has an element yet.
	started := func() bool { return depth > 0 && elems[depth-1] > 0 }
	// afterColon: the next value is an object member's value, which is not
	// an element of its own (the key was).
	afterColon := false

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
			if depth == 0 {
				return &Error{What: WhatMalformed, Offset: i}
			}
			if err := element(i); err != nil {
				return err
			}
			afterColon = false
			continue
		case ':':
			afterColon = true
			continue
		case ']', '}':
			if depth == 0 {
				return &Error{What: WhatMalformed, Offset: i}
			}
			depth--
			afterColon = false
			continue
		}
		// The start of a value or a key. The first one in a container is
		// its first element; later ones were counted at their comma.
		if !afterColon && depth > 0 && !started() {
			if err := element(i); err != nil {
				return err
			}
		}
		afterColon = false
		switch c {
		case '[', '{':
			if err := open(i); err != nil {
				return err
			}
		case '"':
			if err := value(i); err != nil {
				return err
			}
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
			if j >= len(data) {
				return &Error{What: WhatMalformed, Offset: i}
			}
			i = j
		default:
			// A number or literal (true, false, null; NaN and Infinity,
			// which some config.json files hold): it runs to the next
			// delimiter.
			if err := value(i); err != nil {
				return err
			}
			i = scalarEnd(data, i) - 1
		}
	}
	if depth != 0 {
		return &Error{What: WhatMalformed, Offset: len(data)}
	}
	return nil
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
