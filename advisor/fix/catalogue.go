package fix

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/template"
)

// Def is one fix of the catalogue. Title and Cost are plain text; Detail
// and the snippets are text/template sources over Params.
type Def struct {
	ID    string
	Level Level
	Title string
	// Name is the fix in a few words, as a sentence names it ("yes, with
	// gradient checkpointing"); the title where empty.
	Name string
	Cost string
	// Detail says what the caller's numbers add to the title; it should
	// render empty when the values it needs are unknown (zero).
	Detail string
	// Snippets holds the fix in each framework's idiom; Any is a snippet
	// that holds for every stack.
	Snippets map[Framework]Snippet
	// Only lists the frameworks the fix exists in at all (a Keras or JAX
	// allocator setting); nil means every framework with an idiom for it.
	Only []Framework
	// Set fixes the values that make this fix what it is (ZeRO-2 is stage
	// 2) before the caller's values are rendered.
	Set func(*Params)
}

// Snippet is a template source and the fence language of what it renders.
type Snippet struct {
	Lang string
	Text string
}

// compiled is a Def with its templates parsed.
type compiled struct {
	Def
	detail   *template.Template
	snippets map[Framework]*template.Template
}

// catalogue is every Def by id, parsed once. The definitions are the
// package's own data: a template that does not parse is a programming
// error, caught by the package's tests before anything runs.
var catalogue = func() map[string]*compiled {
	out := make(map[string]*compiled, len(defs))
	for _, d := range defs {
		if _, dup := out[d.ID]; dup {
			panic("fix: duplicate id " + d.ID)
		}
		c := &compiled{Def: d, snippets: map[Framework]*template.Template{}}
		c.detail = parse(d.ID+"/detail", d.Detail)
		for fw, s := range d.Snippets {
			c.snippets[fw] = parse(d.ID+"/"+string(fw), s.Text)
		}
		out[d.ID] = c
	}
	return out
}()

// library holds the named templates every snippet may use ({{template
// "torchrun" .}}), so that a launch line is written once.
var library = template.Must(template.New("library").Parse(libraryText))

func parse(name, text string) *template.Template {
	return template.Must(template.Must(library.Clone()).New(name).Parse(text))
}

// Lookup returns the definition of id.
func Lookup(id string) (Def, bool) {
	c, ok := catalogue[id]
	if !ok {
		return Def{}, false
	}
	return c.Def, true
}

// IDs lists every fix id, sorted.
func IDs() []string {
	return slices.Sorted(maps.Keys(catalogue))
}

// source picks the snippet for fw: its own, then its fallbacks', then the
// one for any stack. own reports whether it is fw's own idiom (or one
// that holds for every stack).
func (c *compiled) source(fw Framework) (snip *template.Template, lang string, from Framework, own bool) {
	if t, ok := c.snippets[fw]; ok {
		return t, c.Snippets[fw].Lang, fw, true
	}
	if t, ok := c.snippets[Any]; ok {
		return t, c.Snippets[Any].Lang, Any, true
	}
	for _, f := range stacks[fw].fallbacks {
		if t, ok := c.snippets[f]; ok {
			return t, c.Snippets[f].Lang, f, false
		}
	}
	return nil, "", "", false
}

// Applies reports whether the fix exists for stack fw: it is not limited
// to other frameworks, and fw has an idiom for it — its own, one for every
// stack, or (when fw runs the user's PyTorch code) a PyTorch one. A fix
// with no snippet at all (a bigger GPU) applies everywhere.
func Applies(id string, fw Framework) bool {
	c, ok := catalogue[id]
	if !ok {
		return false
	}
	if c.Only != nil && !slices.Contains(c.Only, fw) {
		return false
	}
	if len(c.snippets) == 0 {
		return true
	}
	t, _, _, own := c.source(fw)
	return t != nil && (own || RunsTorch(fw))
}

// Make renders fix id for framework fw with the values in p: the
// catalogue's title and cost, the detail p's known values give, and the
// snippet in fw's idiom (placeholders where p does not say). A snippet
// borrowed from another framework says so in a comment, unless fw runs
// PyTorch code and the snippet is PyTorch's. ok is false for
// an id the catalogue does not hold.
func Make(id string, fw Framework, p Params) (f Fix, ok bool) {
	c, ok := catalogue[id]
	if !ok {
		return Fix{}, false
	}
	if c.Set != nil {
		c.Set(&p)
	}
	f = Fix{ID: id, Title: c.Title, Name: c.Name, Cost: c.Cost, Detail: strings.TrimSpace(execute(c.detail, p))}
	if f.Name == "" {
		f.Name = c.Title
	}
	t, lang, from, own := c.source(fw)
	if t == nil {
		return f, true
	}
	f.Snippet, f.SnippetLang = execute(t, p.withPlaceholders()), lang
	// A stack that runs the user's PyTorch code can run the PyTorch form as
	// it is; any other is told the snippet is not its own idiom.
	if !own && !RunsTorch(fw) && f.Snippet != "" {
		if marker := commentMarker(lang); marker != "" {
			f.Snippet = fmt.Sprintf("%s no %s idiom for this; the %s form:\n%s", marker, stacks[fw].name, stacks[from].name, f.Snippet)
		}
	}
	return f, true
}

// execute renders t; the templates are tested with every framework and
// both empty and full parameters, so an error is a programming error that
// leaves the text out rather than showing a half-rendered snippet.
func execute(t *template.Template, p Params) string {
	var b bytes.Buffer
	if err := t.Execute(&b, p); err != nil {
		return ""
	}
	return b.String()
}

// commentMarker is the line-comment syntax of a snippet language; JSON has
// none.
func commentMarker(lang string) string {
	switch lang {
	case "python", "bash", "yaml":
		return "#"
	}
	return ""
}
