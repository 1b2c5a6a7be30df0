package job

import (
	"strings"
)

// Python is read as text, never run (docs/jobs.md §3): a small lexer
// and a parser for the calls a script makes with literal arguments
// (strings, numbers, True/False/None, lists, tuples and dicts of them,
// names that stand for earlier literal assignments). Anything else is an
// opaque value the readers leave out.

type pyKind uint8

const (
	pyName pyKind = iota
	pyString
	pyNumber
	pyOp
	pyNewline // the end of a statement at bracket depth 0
)

type pyToken struct {
	kind pyKind
	text string
}

// maxPyTokens bounds a script's tokens (a 256 KiB notebook has tens of
// thousands).
const maxPyTokens = 200_000

// pyLex splits Python source into tokens; comments are dropped, and
// newlines inside brackets or after a backslash do not end a statement.
func pyLex(src string) []pyToken {
	l := &pyLexer{src: src}
	for l.i < len(src) && len(l.out) < maxPyTokens {
		l.next()
	}
	return l.out
}

// pyLexer is the lexer's state: the source, the position, the bracket
// depth and the tokens so far.
type pyLexer struct {
	src   string
	i     int
	depth int
	out   []pyToken
}

// next reads one token (or skips a comment, a space, a joined line).
func (l *pyLexer) next() {
	src, c := l.src, l.src[l.i]
	switch {
	case c == '#':
		for l.i < len(src) && src[l.i] != '\n' {
			l.i++
		}
	case c == '\\' && l.i+1 < len(src) && src[l.i+1] == '\n':
		l.i += 2
	case c == '\n':
		if l.depth == 0 && len(l.out) > 0 && l.out[len(l.out)-1].kind != pyNewline {
			l.out = append(l.out, pyToken{kind: pyNewline})
		}
		l.i++
	case c == ' ' || c == '\t' || c == '\r' || c == '\f':
		l.i++
	case isPyStringStart(src, l.i):
		s, n := pyStringAt(src, l.i)
		l.out = append(l.out, pyToken{kind: pyString, text: s})
		l.i += n
	case isIdentStart(c):
		j := l.i + 1
		for j < len(src) && isIdentPart(src[j]) {
			j++
		}
		l.out = append(l.out, pyToken{kind: pyName, text: src[l.i:j]})
		l.i = j
	case c >= '0' && c <= '9' || c == '.' && l.i+1 < len(src) && src[l.i+1] >= '0' && src[l.i+1] <= '9':
		l.number()
	default:
		l.op()
	}
}

// number reads a numeric literal (1_024, 2e-4, 0.5).
func (l *pyLexer) number() {
	src, j := l.src, l.i+1
	for j < len(src) && (isIdentPart(src[j]) || src[j] == '.' || (src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E')) {
		j++
	}
	l.out = append(l.out, pyToken{kind: pyNumber, text: strings.ReplaceAll(src[l.i:j], "_", "")})
	l.i = j
}

// op reads an operator or a bracket, keeping the bracket depth.
func (l *pyLexer) op() {
	src, c := l.src, l.src[l.i]
	op := string(c)
	if l.i+1 < len(src) && src[l.i+1] != ' ' && strings.Contains("== != <= >= ** // -> += -= *= /= :=", src[l.i:l.i+2]) {
		op = src[l.i : l.i+2]
	}
	switch c {
	case '(', '[', '{':
		l.depth++
	case ')', ']', '}':
		l.depth = max(0, l.depth-1)
	}
	l.out = append(l.out, pyToken{kind: pyOp, text: op})
	l.i += len(op)
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// isPyStringStart reports whether a string literal (with an r, b, u or f
// prefix) starts at i.
func isPyStringStart(src string, i int) bool {
	j := i
	for j < len(src) && j-i < 2 && strings.IndexByte("rRbBuUfF", src[j]) >= 0 {
		j++
	}
	if j >= len(src) || src[j] != '"' && src[j] != '\'' {
		return false
	}
	return j == i || i == 0 || !isIdentPart(src[i-1])
}

// pyStringAt reads the string literal at i: its text (escapes kept as
// written but \" and \' unquoted) and its length in the source.
func pyStringAt(src string, i int) (string, int) {
	j := i
	for strings.IndexByte("rRbBuUfF", src[j]) >= 0 {
		j++
	}
	q := src[j]
	triple := strings.HasPrefix(src[j:], strings.Repeat(string(q), 3))
	start := j + 1
	if triple {
		start = j + 3
	}
	var b strings.Builder
	for k := start; k < len(src); k++ {
		c := src[k]
		switch {
		case c == '\\' && k+1 < len(src):
			k++
			if src[k] != q && src[k] != '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(src[k])
			continue
		case triple && strings.HasPrefix(src[k:], strings.Repeat(string(q), 3)):
			return b.String(), k + 3 - i
		case !triple && c == q:
			return b.String(), k + 1 - i
		case !triple && c == '\n':
			return b.String(), k - i // an unterminated string ends at its line
		}
		b.WriteByte(c)
	}
	return b.String(), len(src) - i
}

// pyVal is a value in the source: a literal, a name, a call, or opaque.
type pyVal struct {
	kind  pyValKind
	text  string // a literal's text, a name (dotted), opaque source
	items []pyVal
	keys  []string // a dict's keys, beside items
	call  *pyCall
}

type pyValKind uint8

const (
	pyOpaque pyValKind = iota
	pyStr
	pyNum
	pyConst // True, False, None
	pyRef   // a (dotted) name
	pyList
	pyDict
	pyCallVal
)

// pyCall is a call with its arguments.
type pyCall struct {
	name   string // dotted: FastLanguageModel.from_pretrained
	args   []pyVal
	kwargs []pyKwarg
	at     int // token index, for the assignments before it
}

type pyKwarg struct {
	name string
	val  pyVal
}

// kw is a call's keyword argument (nil when absent).
func (c *pyCall) kw(name string) *pyVal {
	for i := range c.kwargs {
		if c.kwargs[i].name == name {
			return &c.kwargs[i].val
		}
	}
	return nil
}

// pyScript is what the parser found: the calls in order, and each name's
// assignments.
type pyScript struct {
	calls   []*pyCall
	assigns map[string][]pyAssign
	imports []string
}

type pyAssign struct {
	at  int
	val pyVal
}

// maxPyDepth bounds the nesting of values the parser follows.
const maxPyDepth = 32

type pyParser struct {
	toks []pyToken
	pos  int
	s    *pyScript
}

// parsePython finds the calls and literal assignments of a script.
func parsePython(src string) *pyScript {
	p := &pyParser{toks: pyLex(src), s: &pyScript{assigns: map[string][]pyAssign{}}}
	for p.pos < len(p.toks) {
		p.statement()
	}
	return p.s
}

func (p *pyParser) peek(k int) pyToken {
	if p.pos+k < len(p.toks) {
		return p.toks[p.pos+k]
	}
	return pyToken{kind: pyNewline}
}

func (p *pyParser) isOp(k int, op string) bool {
	t := p.peek(k)
	return t.kind == pyOp && t.text == op
}

// statement reads one statement: an import, an assignment of names, or
// an expression, recording every call in it.
func (p *pyParser) statement() {
	start := p.pos
	t := p.peek(0)
	if t.kind == pyName && (t.text == "import" || t.text == "from") {
		var mod []string
		for p.pos < len(p.toks) && p.peek(0).kind != pyNewline {
			if p.peek(0).kind == pyName {
				mod = append(mod, p.peek(0).text)
			}
			p.pos++
		}
		p.s.imports = append(p.s.imports, strings.Join(mod, " "))
		p.pos++
		return
	}
	// name[, name…] = value[, value…]
	var targets []string
	for p.peek(0).kind == pyName {
		targets = append(targets, p.peek(0).text)
		p.pos++
		if !p.isOp(0, ",") {
			break
		}
		p.pos++
	}
	if len(targets) > 0 && p.isOp(0, "=") {
		p.pos++
		vals := []pyVal{p.expr(0)}
		for p.isOp(0, ",") {
			p.pos++
			vals = append(vals, p.expr(0))
		}
		for i, name := range targets {
			v := vals[min(i, len(vals)-1)]
			if len(vals) != len(targets) && len(vals) > 1 {
				v = pyVal{}
			}
			p.s.assigns[name] = append(p.s.assigns[name], pyAssign{at: start, val: v})
		}
	} else {
		p.pos = start
	}
	for p.pos < len(p.toks) && p.peek(0).kind != pyNewline {
		before := p.pos
		p.expr(0)
		if p.pos == before {
			p.pos++
		}
	}
	p.pos++
}

// expr reads an expression: a primary, and anything after it up to the
// next , or closing bracket makes it opaque.
func (p *pyParser) expr(depth int) pyVal {
	v := p.primary(depth)
	opaque := false
	for {
		t := p.peek(0)
		if t.kind == pyNewline || t.kind == pyOp && strings.Contains(",)]}:=", t.text) && t.text != "==" {
			break
		}
		opaque = true
		before := p.pos
		p.primary(depth)
		if p.pos == before {
			p.pos++
		}
	}
	if opaque {
		return pyVal{}
	}
	return v
}

// primary reads an atom and its trailers (.name, (args), [index]).
func (p *pyParser) primary(depth int) pyVal {
	if depth > maxPyDepth {
		p.skipBalanced()
		return pyVal{}
	}
	v, ok := p.atom(depth)
	if !ok {
		return v
	}
	for {
		switch {
		case p.isOp(0, ".") && p.peek(1).kind == pyName && (v.kind == pyRef || v.kind == pyCallVal || v.kind == pyOpaque):
			if v.kind == pyRef {
				v.text += "." + p.peek(1).text
			} else {
				v = pyVal{kind: pyRef, text: "(…)." + p.peek(1).text}
			}
			p.pos += 2
		case p.isOp(0, "(") && v.kind == pyRef:
			v = p.call(v.text, depth)
		case p.isOp(0, "(") || p.isOp(0, "["):
			p.skipBalanced()
			v = pyVal{}
		default:
			return v
		}
	}
}

// atom reads a literal, a name or a bracketed value; ok is false when
// the token starts none (it is skipped).
func (p *pyParser) atom(depth int) (pyVal, bool) {
	t := p.peek(0)
	switch {
	case t.kind == pyString:
		p.pos++
		s := t.text
		for p.peek(0).kind == pyString { // "a" "b" concatenates
			s += p.peek(0).text
			p.pos++
		}
		return pyVal{kind: pyStr, text: s}, true
	case t.kind == pyNumber:
		p.pos++
		return pyVal{kind: pyNum, text: t.text}, true
	case t.kind == pyOp && t.text == "-" && p.peek(1).kind == pyNumber:
		p.pos += 2
		return pyVal{kind: pyNum, text: "-" + p.peek(-1).text}, true
	case t.kind == pyName && (t.text == "True" || t.text == "False" || t.text == "None"):
		p.pos++
		return pyVal{kind: pyConst, text: t.text}, true
	case t.kind == pyName:
		p.pos++
		return pyVal{kind: pyRef, text: t.text}, true
	case t.kind == pyOp && (t.text == "[" || t.text == "("):
		return p.sequence(depth), true
	case t.kind == pyOp && t.text == "{":
		return p.dict(depth), true
	}
	p.pos++
	return pyVal{}, false
}

// call reads a call's arguments and records it; dict(a=1) is {"a": 1}.
func (p *pyParser) call(name string, depth int) pyVal {
	at := p.pos
	c := p.callArgs(name, depth)
	c.at = at
	p.s.calls = append(p.s.calls, c)
	if c.name != "dict" || len(c.args) > 0 {
		return pyVal{kind: pyCallVal, call: c}
	}
	v := pyVal{kind: pyDict}
	for _, kw := range c.kwargs {
		v.keys, v.items = append(v.keys, kw.name), append(v.items, kw.val)
	}
	return v
}

// callArgs reads (args) after a callee.
func (p *pyParser) callArgs(name string, depth int) *pyCall {
	c := &pyCall{name: name}
	p.pos++ // (
	for p.pos < len(p.toks) && !p.isOp(0, ")") {
		switch {
		case p.peek(0).kind == pyName && p.isOp(1, "="):
			kname := p.peek(0).text
			p.pos += 2
			c.kwargs = append(c.kwargs, pyKwarg{kname, p.expr(depth + 1)})
		case p.isOp(0, "**"):
			p.pos++
			c.kwargs = append(c.kwargs, pyKwarg{"**", p.expr(depth + 1)})
		case p.isOp(0, "*"):
			p.pos++
			p.expr(depth + 1)
		default:
			before := p.pos
			c.args = append(c.args, p.expr(depth+1))
			if p.pos == before {
				p.pos++
			}
		}
		if p.isOp(0, ",") {
			p.pos++
		}
	}
	p.pos++ // )
	return c
}

// sequence reads [a, b] or (a, b).
func (p *pyParser) sequence(depth int) pyVal {
	closer := map[string]string{"[": "]", "(": ")"}[p.peek(0).text]
	p.pos++
	v := pyVal{kind: pyList}
	for p.pos < len(p.toks) && !p.isOp(0, closer) {
		before := p.pos
		v.items = append(v.items, p.expr(depth+1))
		if p.isOp(0, ",") {
			p.pos++
		} else if p.pos == before || !p.isOp(0, closer) {
			p.skipTo(closer)
			v = pyVal{}
			break
		}
	}
	p.pos++
	if v.kind == pyList && closer == ")" && len(v.items) == 1 {
		return v.items[0] // (x) is x
	}
	return v
}

// dict reads {k: v, …}.
func (p *pyParser) dict(depth int) pyVal {
	p.pos++
	v := pyVal{kind: pyDict}
	for p.pos < len(p.toks) && !p.isOp(0, "}") {
		k := p.expr(depth + 1)
		if !p.isOp(0, ":") {
			p.skipTo("}")
			p.pos++
			return pyVal{}
		}
		p.pos++
		val := p.expr(depth + 1)
		v.keys, v.items = append(v.keys, k.text), append(v.items, val)
		if p.isOp(0, ",") {
			p.pos++
		} else if !p.isOp(0, "}") {
			p.skipTo("}")
			break
		}
	}
	p.pos++
	return v
}

// skipBalanced skips a bracketed group from its opening bracket.
func (p *pyParser) skipBalanced() {
	depth := 0
	for p.pos < len(p.toks) {
		t := p.peek(0)
		p.pos++
		if t.kind != pyOp {
			if depth == 0 {
				return
			}
			continue
		}
		switch t.text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		}
		if depth <= 0 {
			return
		}
	}
}

// skipTo skips to the closer of the current group (not past it).
func (p *pyParser) skipTo(closer string) {
	depth := 0
	for p.pos < len(p.toks) {
		t := p.peek(0)
		if t.kind == pyOp {
			switch t.text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth == 0 {
					return
				}
				depth--
			}
		}
		p.pos++
	}
}

// resolve follows a name to the literal last assigned to it before a
// call (up to a few hops: a = b; b = "x").
func (s *pyScript) resolve(v pyVal, at int) pyVal {
	for hop := 0; hop < 8 && v.kind == pyRef; hop++ {
		as := s.assigns[v.text]
		var found *pyVal
		for i := range as {
			if as[i].at < at {
				found = &as[i].val
			}
		}
		if found == nil {
			return v
		}
		v = *found
	}
	return v
}
