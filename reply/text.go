package reply

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// Text renders r for a terminal: title, verdict, the memory bar, summary,
// aligned fields, sections with indented code, context lines, then the
// details below. Deterministic, so golden-testable.
func Text(r Reply) string {
	var b strings.Builder
	writeText(&b, r, "=")
	if r.Details != nil {
		b.WriteString("\n")
		writeText(&b, *r.Details, "-")
	}
	return b.String()
}

func writeText(b *strings.Builder, r Reply, underline string) {
	if r.Title != "" {
		b.WriteString(r.Title)
		b.WriteString("\n")
		b.WriteString(strings.Repeat(underline, min(len([]rune(r.Title)), 72)))
		b.WriteString("\n")
	}
	if v := r.Verdict; v != nil && v.Text != "" {
		b.WriteString(strings.TrimSpace(v.Band.Mark() + " " + v.Text))
		b.WriteString("\n")
	}
	if r.Bar != nil {
		if line := r.Bar.Line(); line != "" {
			b.WriteString("  " + line + "\n")
			b.WriteString("  " + r.Bar.Legend() + "\n")
		}
	}
	if r.Summary != "" {
		b.WriteString(r.Summary)
		b.WriteString("\n")
	}
	if len(r.Fields) > 0 {
		b.WriteString("\n")
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		for _, f := range r.Fields {
			fmt.Fprintf(tw, "  %s\t%s\n", f.Label, f.Value)
		}
		tw.Flush()
	}
	for _, s := range r.Sections {
		b.WriteString("\n")
		if s.Title != "" {
			b.WriteString(s.Title)
			b.WriteString("\n")
		}
		if s.Text != "" {
			b.WriteString(s.Text)
			b.WriteString("\n")
		}
		for _, it := range s.Items {
			b.WriteString("  - ")
			b.WriteString(strings.ReplaceAll(it, "\n", "\n    "))
			b.WriteString("\n")
		}
		for _, c := range s.Code {
			for _, line := range strings.Split(strings.TrimRight(c.Text, "\n"), "\n") {
				b.WriteString("      ")
				b.WriteString(line)
				b.WriteString("\n")
			}
		}
	}
	if len(r.Context) > 0 {
		b.WriteString("\n")
		for _, c := range r.Context {
			b.WriteString("* ")
			b.WriteString(c)
			b.WriteString("\n")
		}
	}
}
