package jsonlimit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/internal/jsonlimit"
)

// counts is what encoding/json's Decoder.Token sees in valid JSON: the
// reference Check's counts must equal.
type counts struct{ tokens, depth, elements int }

func reference(t testing.TB, data []byte) (counts, bool) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var c counts
	type frame struct {
		obj   bool
		n     int
		inKey bool // an object expects a key next
	}
	var stack []frame
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return c, true
		}
		if err != nil {
			return c, false
		}
		if dl, ok := tok.(json.Delim); ok && (dl == ']' || dl == '}') {
			stack = stack[:len(stack)-1]
			continue
		}
		c.tokens++
		if n := len(stack); n > 0 {
			f := &stack[n-1]
			if !f.obj || f.inKey {
				f.n++
				c.elements = max(c.elements, f.n)
			}
			if f.obj {
				f.inKey = !f.inKey
			}
		}
		if dl, ok := tok.(json.Delim); ok && (dl == '[' || dl == '{') {
			stack = append(stack, frame{obj: dl == '{', inKey: dl == '{'})
			c.depth = max(c.depth, len(stack))
		}
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		in   string
		l    jsonlimit.Limits
		want jsonlimit.What // "" passes
	}{
		{"small object", `{"a": [1, 2, {"b": null}], "c": "x,]}"}`, jsonlimit.Limits{Tokens: 10, Depth: 3, Elements: 3}, ""},
		{"tokens", `{"a": [1, 2, {"b": null}], "c": "x"}`, jsonlimit.Limits{Tokens: 7}, jsonlimit.WhatTokens},
		{"depth", `[[[[]]]]`, jsonlimit.Limits{Depth: 3}, jsonlimit.WhatDepth},
		{"depth within", `[[[]]]`, jsonlimit.Limits{Depth: 3}, ""},
		{"array elements", `[1,2,3,4]`, jsonlimit.Limits{Elements: 3}, jsonlimit.WhatElements},
		{"object keys", `{"a":1,"b":2,"c":3,"d":4}`, jsonlimit.Limits{Elements: 3}, jsonlimit.WhatElements},
		{"object values are not elements", `{"a":[1,2],"b":[3]}`, jsonlimit.Limits{Elements: 2}, ""},
		{"bytes", `[1,2]`, jsonlimit.Limits{Bytes: 4}, jsonlimit.WhatBytes},
		{"escaped quote", `{"a\"b": "c\\"}`, jsonlimit.Limits{Tokens: 3}, ""},
		{"NaN and Infinity count as values", `{"x": NaN, "y": -Infinity}`, jsonlimit.Limits{Tokens: 5}, ""},
		{"unterminated string", `{"a`, jsonlimit.Limits{}, jsonlimit.WhatMalformed},
		{"unbalanced", `[1]]`, jsonlimit.Limits{}, jsonlimit.WhatMalformed},
		{"unclosed", `[[1]`, jsonlimit.Limits{}, jsonlimit.WhatMalformed},
		{"empty arrays", "[" + strings.Repeat("[],", 100) + "[]]", jsonlimit.Limits{Tokens: 50}, jsonlimit.WhatTokens},
		{"past MaxDepth whatever the limits", strings.Repeat("[", 65) + strings.Repeat("]", 65), jsonlimit.Limits{}, jsonlimit.WhatDepth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := jsonlimit.Check(t.Context(), []byte(tt.in), tt.l)
			var le *jsonlimit.Error
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Check = %v, want nil", err)
			case tt.want != "" && (!errors.As(err, &le) || le.What != tt.want):
				t.Fatalf("Check = %v, want %s", err, tt.want)
			}
		})
	}
}

// TestCheckStopsOnContext: a cancelled scan of a large text returns ctx's
// error instead of finishing.
func TestCheckStopsOnContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	big := []byte("[" + strings.Repeat("1,", 1<<20) + "1]")
	if err := jsonlimit.Check(ctx, big, jsonlimit.Limits{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Check = %v, want context.Canceled", err)
	}
}

// TestCheckAllocatesNothing: the pre-check of hostile text costs no memory.
func TestCheckAllocatesNothing(t *testing.T) {
	data := []byte("[" + strings.Repeat("[],", 10000) + "[]]")
	ctx := context.Background()
	if n := testing.AllocsPerRun(10, func() { _ = jsonlimit.Check(ctx, data, jsonlimit.Limits{Tokens: 100}) }); n > 1 {
		t.Errorf("%v allocations per Check", n)
	}
}

// FuzzCheck: Check never panics; on valid JSON it passes exactly the text
// whose Decoder.Token counts are within the limits.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,{"b":[]}],"c":"d"}`, `[[[[1]]]]`, `"x"`, `1`, `{"a":"\"]"}`, `[1,2,3,4,5]`, ` { "k" : [ true , false , null ] } `, `[`, `]`, `{"a"`, `[NaN]`} {
		f.Add([]byte(s), 6, 3, 3)
	}
	f.Fuzz(func(t *testing.T, data []byte, tokens, depth, elements int) {
		l := jsonlimit.Limits{Tokens: max(tokens%64, 0), Depth: max(depth%8, 0), Elements: max(elements%8, 0)}
		err := jsonlimit.Check(context.Background(), data, l)
		if err != nil {
			if _, ok := errors.AsType[*jsonlimit.Error](err); !ok {
				t.Fatalf("Check returned %T %v", err, err)
			}
		}
		if !json.Valid(data) {
			return
		}
		c, ok := reference(t, data)
		if !ok {
			return
		}
		within := (l.Tokens == 0 || c.tokens <= l.Tokens) && (l.Depth == 0 || c.depth <= l.Depth) &&
			(l.Elements == 0 || c.elements <= l.Elements) && c.depth <= jsonlimit.MaxDepth
		if within != (err == nil) {
			t.Fatalf("Check(%q, %+v) = %v; Decoder.Token counts %+v", data, l, err, c)
		}
	})
}

// BenchmarkCheck scans a config.json-sized text of hostile shape.
func BenchmarkCheck(b *testing.B) {
	data := []byte("[" + strings.Repeat(`{"quant_algo": "NVFP4"},`, 1<<16) + "{}]")
	b.SetBytes(int64(len(data)))
	ctx := context.Background()
	for b.Loop() {
		_ = jsonlimit.Check(ctx, data, jsonlimit.Limits{})
	}
}
