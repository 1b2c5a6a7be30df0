package models

import (
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/command/layout"
	"github.com/vrambot/vrambot/query"
	"github.com/vrambot/vrambot/reply"
)

// ModelsResult is `vrambot models --json` (docs/contracts.md §1): the catalog's
// models, in catalog order.
type Result struct {
	Models []Entry `json:"models"`
}

// ModelEntry is one catalog model. Params are logical parameters;
// ActiveParams those used per token (equal to Params for dense models);
// Context is max_position_embeddings, 0 when the catalog does not say.
type Entry struct {
	Name         string   `json:"name"`
	ID           string   `json:"id"` // Hugging Face repo id
	Aliases      []string `json:"aliases"`
	Family       string   `json:"family"`
	ModelType    string   `json:"model_type,omitempty"`
	Params       int64    `json:"params"`
	ActiveParams int64    `json:"active_params"`
	Context      int      `json:"context"`
	Source       string   `json:"source"`
}

// maxSourceRunes bounds a source line in the text listing; --json has it all.
const maxSourceRunes = 240

// Answer is a catalog listing: the reply to show and the structured
// result that `vrambot models --json` prints.
type Answer struct {
	reply.Reply
	Result Result
}

// List lists the catalog, or the models whose name, alias, id or
// model_type contains word (ignoring case, spaces, dashes and
// underscores). No match is a *query.Error with the closest name.
func List(word string) (Answer, error) {
	word = strings.TrimSpace(word)
	if len(word) > query.MaxBytes {
		return Answer{}, query.Errorf("", "search word too long (%d bytes)", len(word))
	}
	key := squashName(word)
	entries := []Entry{}
	for _, m := range catalog.Models() {
		if key != "" && !modelMatches(m, key) {
			continue
		}
		entries = append(entries, Entry{
			Name: m.Name, ID: m.HFID, Aliases: nonNil(m.Aliases), Family: m.Family, ModelType: m.ModelType,
			Params: m.Params, ActiveParams: m.ActiveParams(), Context: m.MaxPositionEmbeddings, Source: m.Source,
		})
	}
	if len(entries) == 0 {
		err := query.Errorf(word, "no catalog model matches '%s' (any Hugging Face id works in vram too, e.g. vrambot vram Qwen/Qwen3-8B)", query.ShowToken(word))
		if s := catalog.SuggestModel(word); s != "" && query.NearName(word, s) {
			err.Suggestion = s
		}
		return Answer{}, err
	}
	title := "Model catalog"
	if word != "" {
		title += ": " + query.ShowToken(word)
	}
	r := reply.Reply{
		Kind:     "models",
		Title:    title,
		Summary:  fmt.Sprintf("%d %s. Any other model: give its Hugging Face id (read from its config.json on the Hub) or its size.", len(entries), plural(len(entries), "model", "models")),
		Sections: []reply.Section{modelTable(entries), modelSources(entries)},
	}
	return Answer{Reply: r, Result: Result{Models: entries}}, nil
}

// plural is one or many by n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func modelMatches(m catalog.Model, key string) bool {
	for _, s := range append([]string{m.Name, m.HFID, m.ModelType}, m.Aliases...) {
		if s != "" && strings.Contains(squashName(s), key) {
			return true
		}
	}
	return false
}

// squashName is a name without case, spaces, dashes and underscores.
func squashName(s string) string {
	return strings.NewReplacer(" ", "", "-", "", "_", "").Replace(strings.ToLower(s))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func modelTable(entries []Entry) reply.Section {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "name\tid\tparams\tactive\tcontext")
	for _, e := range entries {
		active := "-"
		if e.ActiveParams != e.Params {
			active = catalog.FormatSize(e.ActiveParams)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", layout.Cell(e.Name, layout.MaxCellRunes), layout.Cell(e.ID, layout.MaxCellRunes), catalog.FormatSize(e.Params), active, contextLen(e.Context))
	}
	tw.Flush()
	return reply.Section{Title: "Models (active: parameters used per token, for mixtures of experts)", Code: []reply.Code{{Text: b.String()}}}
}

func modelSources(entries []Entry) reply.Section {
	s := reply.Section{Title: "Sources"}
	for _, e := range entries {
		s.Items = append(s.Items, layout.OneLine(e.Name+": "+e.Source, maxSourceRunes))
	}
	return s
}

// contextLen writes a context length as people quote it: 4096 is "4k".
func contextLen(n int) string {
	switch {
	case n <= 0:
		return "-"
	case n%1024 == 0:
		return strconv.Itoa(n/1024) + "k"
	}
	return strconv.Itoa(n)
}

// ModelChoice is one model the /vram form can offer: what to show and
// what the query gets.
type Choice struct {
	Label string
	Value string
}

// ModelChoices are the models whose names contain typed (as Models
// matches them), for the Slack form's typeahead: Hub ids resolved lately
// (recent, newest first) that match, then catalog models, at most n. An
// empty typed offers the recent ids and the catalog's first models.
func Choices(typed string, recent []string, n int) []Choice {
	key := squashName(strings.TrimSpace(typed))
	var out []Choice
	seen := map[string]bool{}
	add := func(c Choice) {
		k := strings.ToLower(c.Value)
		if len(out) < n && !seen[k] {
			seen[k] = true
			out = append(out, c)
		}
	}
	for _, id := range recent {
		if key == "" || strings.Contains(squashName(id), key) {
			add(Choice{Label: id + " (from the Hub)", Value: id})
		}
	}
	for _, m := range catalog.Models() {
		if key != "" && !modelMatches(m, key) {
			continue
		}
		value := strings.ToLower(m.Name)
		if len(m.Aliases) > 0 {
			value = m.Aliases[0]
		}
		label := m.Name + " · " + catalog.FormatSize(m.Params)
		if m.ActiveParams() != m.Params {
			label += " (" + catalog.FormatSize(m.ActiveParams()) + " active)"
		}
		add(Choice{Label: label, Value: value})
	}
	return out
}
