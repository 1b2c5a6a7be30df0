package query

import (
	"maps"
	"slices"
	"strings"
)

// The grammar written out from the table: the README's grammar table
// (docs/contracts.md §2) and `/vram help` read these, so a setting added
// to Settings is documented where users look.

// Label is how a setting is written: "`bs=`", or its name for a word
// (the model, the method, the GPU).
func (s *Setting) Label() string {
	if s.Positional || s.Key == "gpu" {
		return s.Key
	}
	return "`" + s.Key + "=`"
}

// Spellings are the other ways to write the setting: its aliases as
// keys and the phrases that name it in a sentence.
func (s *Setting) Spellings() []string {
	var out []string
	for _, a := range s.Aliases {
		out = append(out, "`"+a+"=`")
	}
	for _, w := range s.Words {
		out = append(out, "`"+strings.Join(w, " ")+" N`")
	}
	for _, c := range s.Counted {
		out = append(out, "`N "+c+"`")
	}
	return out
}

// Values describes what the setting takes, and where it applies.
func (s *Setting) Values() string {
	v := s.Value.Describe()
	if len(s.Bare) > 0 && !s.Positional {
		v += "; also bare (`" + s.Bare[0] + "`)"
	}
	if s.Scope != ScopeAny {
		v += "; " + s.Scope.String() + " only"
	}
	return v
}

// Markdown is the grammar as two Markdown tables: each setting with its
// values, default and effect, then the other spellings accepted.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| setting | values | default | what it changes |\n|---|---|---|---|\n")
	for _, s := range Settings {
		b.WriteString("| " + s.Label() + " | " + cellText(s.Values()) + " | " + cellText(s.Default) + " | " + cellText(s.Help) + " |\n")
	}
	b.WriteString("\nOther spellings (TrainingArguments', PEFT's, DeepSpeed's and the serving engines' own names, with `_` or `-`, with or without a flag's dashes):\n\n")
	b.WriteString("| setting | also written |\n|---|---|\n")
	for _, s := range Settings {
		if sp := s.Spellings(); len(sp) > 0 {
			b.WriteString("| " + s.Label() + " | " + strings.Join(sp, ", ") + " |\n")
		}
	}
	var flags []string
	for _, k := range slices.Sorted(maps.Keys(precisionFlags)) {
		flags = append(flags, "`"+k+"=true` (precision="+precisionFlags[k]+")")
	}
	b.WriteString("\nFlags that name a precision: " + strings.Join(flags, ", ") + ". Settings that do not change the memory of a step are read and said to be unused: `" + strings.Join(UnusedKeys, "=`, `") + "=`.\n")
	return b.String()
}

// cellText keeps a table cell on one line with its pipes escaped.
func cellText(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", `\|`)
}

// HelpLines are the settings as `/vram help` lists them, one line each:
// how each is written, its values and what it changes.
func HelpLines() []string {
	out := make([]string, 0, len(Settings))
	for _, s := range Settings {
		out = append(out, s.Label()+": "+s.Values()+" — "+s.Help)
	}
	return out
}

// Keys are the key=value settings' keys, in the grammar's order.
func Keys() []string { return slices.Clone(queryKeys) }
