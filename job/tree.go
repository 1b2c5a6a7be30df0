package job

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// A YAML or JSON file is read into a tree of nodes that keeps the keys'
// order and each node's line, with bounds on its size, its depth and its
// documents (docs/jobs.md §5): an alias bomb (a billion laughs) or a
// nesting meant to exhaust the stack is refused, never expanded.
const (
	// maxNodes bounds the nodes of one file, aliases counted each time
	// they are followed: a 256 KiB config has a few thousand.
	maxNodes = 50_000
	// maxDepth bounds nesting: configs nest a handful of levels, a
	// Kubernetes manifest about a dozen.
	maxDepth = 64
	// maxDocs bounds the documents of a YAML stream (a manifest of a
	// Deployment, a Service and a few more).
	maxDocs = 32
)

type kind uint8

const (
	scalarNode kind = iota
	mapNode
	listNode
)

// node is one value of a YAML or JSON document.
type node struct {
	kind  kind
	value string // a scalar's text
	null  bool   // null, ~ or an empty value
	line  int
	keys  []string
	vals  []*node
	items []*node
}

// get is the value of key in a mapping (nil when absent or n is not one).
func (n *node) get(key string) *node {
	if n == nil || n.kind != mapNode {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// path follows keys from n.
func (n *node) path(keys ...string) *node {
	for _, k := range keys {
		n = n.get(k)
	}
	return n
}

// list is a list's items (nil for anything else).
func (n *node) list() []*node {
	if n == nil || n.kind != listNode {
		return nil
	}
	return n.items
}

// str is a scalar's text ("" for anything else or null).
func (n *node) str() string {
	if n == nil || n.kind != scalarNode || n.null {
		return ""
	}
	return n.value
}

// strs is a list of scalars' texts, or a scalar as one.
func (n *node) strs() []string {
	switch {
	case n == nil:
		return nil
	case n.kind == scalarNode && !n.null:
		return []string{n.value}
	case n.kind == listNode:
		var out []string
		for _, it := range n.items {
			if s := it.str(); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// text is a node as one line for the reply: a scalar's text, a list's
// scalars joined, or "{…}" for a mapping.
func (n *node) text() string {
	switch {
	case n == nil || n.null:
		return "null"
	case n.kind == scalarNode:
		return n.value
	case n.kind == listNode:
		return "[" + strings.Join(n.strs(), ", ") + "]"
	}
	return "{…}"
}

// budget counts the nodes built, for the bound.
type budget struct{ nodes int }

func (b *budget) take(depth int) error {
	b.nodes++
	switch {
	case b.nodes > maxNodes:
		return &Error{Reason: fmt.Sprintf("the file has more than %d values (an alias bomb, or not a config)", maxNodes)}
	case depth > maxDepth:
		return &Error{Reason: fmt.Sprintf("the file nests deeper than %d levels", maxDepth)}
	}
	return nil
}

// parseYAML reads every document of a YAML stream.
func parseYAML(data []byte) ([]*node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*node
	b := &budget{}
	for {
		var y yaml.Node
		err := dec.Decode(&y)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, yamlError(err, data)
		}
		if len(docs) == maxDocs {
			return nil, &Error{Reason: fmt.Sprintf("more than %d YAML documents in one file", maxDocs)}
		}
		n, err := fromYAML(&y, b, 0)
		if err != nil {
			return nil, err
		}
		docs = append(docs, n)
	}
}

// fromYAML converts a yaml.Node, following aliases (counted each time) and
// merging "<<" keys.
func fromYAML(y *yaml.Node, b *budget, depth int) (*node, error) {
	if err := b.take(depth); err != nil {
		return nil, err
	}
	switch y.Kind {
	case yaml.DocumentNode:
		if len(y.Content) == 0 {
			return &node{null: true, line: y.Line}, nil
		}
		return fromYAML(y.Content[0], b, depth+1)
	case yaml.AliasNode:
		if y.Alias == nil {
			return &node{null: true, line: y.Line}, nil
		}
		return fromYAML(y.Alias, b, depth+1)
	case yaml.SequenceNode:
		n := &node{kind: listNode, line: y.Line}
		for _, c := range y.Content {
			it, err := fromYAML(c, b, depth+1)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, it)
		}
		return n, nil
	case yaml.MappingNode:
		return yamlMapping(y, b, depth)
	}
	null := y.Tag == "!!null" || (y.Value == "" && y.Style == 0)
	return &node{kind: scalarNode, value: y.Value, null: null, line: y.Line}, nil
}

func yamlMapping(y *yaml.Node, b *budget, depth int) (*node, error) {
	n := &node{kind: mapNode, line: y.Line}
	var merged []*node
	for i := 0; i+1 < len(y.Content); i += 2 {
		v, err := fromYAML(y.Content[i+1], b, depth+1)
		if err != nil {
			return nil, err
		}
		k := y.Content[i].Value
		if k == "<<" && y.Content[i].Tag == "!!merge" {
			merged = append(merged, v)
			continue
		}
		n.keys, n.vals = append(n.keys, k), append(n.vals, v)
	}
	// Merged keys come after the mapping's own, which win.
	for _, m := range merged {
		for _, src := range append([]*node{m}, m.items...) {
			for i, k := range src.keys {
				if n.get(k) == nil {
					n.keys, n.vals = append(n.keys, k), append(n.vals, src.vals[i])
				}
			}
		}
	}
	return n, nil
}

// yamlLine is yaml.v3's "yaml: line N: reason".
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError says where a YAML file stops parsing. yaml.v3 names the line;
// the column is that of the character its message is about (a tab, the
// second ": " of a line) or else where the line's text starts.
func yamlError(err error, data []byte) error {
	msg := err.Error()
	m := yamlLine.FindStringSubmatch(msg)
	if m == nil {
		return &Error{Reason: "YAML: " + strings.TrimPrefix(msg, "yaml: ")}
	}
	line, _ := strconv.Atoi(m[1])
	reason := m[2]
	text := lineText(data, line)
	col := strings.IndexFunc(text, func(r rune) bool { return r != ' ' }) + 1
	switch {
	case strings.Contains(reason, "cannot start any token") && strings.Contains(text, "\t"):
		col = strings.IndexByte(text, '\t') + 1
	case strings.Contains(reason, "mapping values are not allowed"):
		if i := strings.LastIndex(text, ": "); i >= 0 {
			col = i + 1
		}
	}
	return &Error{Line: line, Column: max(1, col), Reason: "YAML: " + reason}
}

// lineText is line n (1-based) of data.
func lineText(data []byte, n int) string {
	for i := 1; len(data) > 0; i++ {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		if i == n {
			return string(line)
		}
		data = rest
	}
	return ""
}

// lineCol turns a byte offset into a line and a column (1-based).
func lineCol(data []byte, off int64) (int, int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// parseJSON reads one JSON value, keeping the keys' order.
func parseJSON(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	b := &budget{}
	n, err := fromJSON(dec, data, b, 0)
	if err != nil {
		return nil, jsonError(err, dec, data)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		line, col := lineCol(data, dec.InputOffset())
		return nil, &Error{Line: line, Column: col, Reason: "JSON: text after the end of the value"}
	}
	return n, nil
}

func jsonError(err error, dec *json.Decoder, data []byte) error {
	var je *Error
	if errors.As(err, &je) {
		return je
	}
	var se *json.SyntaxError
	off := dec.InputOffset()
	if errors.As(err, &se) {
		off = se.Offset
	}
	line, col := lineCol(data, off)
	reason := strings.TrimPrefix(err.Error(), "json: ")
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		reason = "unexpected end of the file"
	}
	return &Error{Line: line, Column: col, Reason: "JSON: " + reason}
}

func fromJSON(dec *json.Decoder, data []byte, b *budget, depth int) (*node, error) {
	if err := b.take(depth); err != nil {
		return nil, err
	}
	line, _ := lineCol(data, dec.InputOffset())
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n := &node{kind: mapNode, line: line}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := fromJSON(dec, data, b, depth+1)
				if err != nil {
					return nil, err
				}
				n.keys, n.vals = append(n.keys, k), append(n.vals, v)
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &node{kind: listNode, line: line}
			for dec.More() {
				v, err := fromJSON(dec, data, b, depth+1)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, v)
			}
			_, err := dec.Token()
			return n, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case nil:
		return &node{null: true, line: line}, nil
	case bool:
		return &node{value: strconv.FormatBool(t), line: line}, nil
	case json.Number:
		return &node{value: t.String(), line: line}, nil
	case string:
		return &node{value: t, line: line}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}
