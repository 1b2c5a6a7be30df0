package commands

import (
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/reply"
)

// ModelsResult is `vrambot models --json` (DESIGN.md §3.1): the catalog's
// models, in catalog order.
type ModelsResult struct {
	Models []ModelEntry `json:"models"`
}

// ModelEntry is one catalog model. Params are logical parameters;
// ActiveParams those used per token (equal to Params for dense models);
// Context is max_position_embeddings, 0 when the catalog does not say.
type ModelEntry struct {
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

// Models lists the catalog, or the models whose name, alias, id or
// model_type contains word (ignoring case, spaces, dashes and
// underscores). No match is a *QueryError with the closest name.
func Models(word string) (reply.Reply, error) {
	word = strings.TrimSpace(word)
	if len(word) > maxQueryBytes {
		return reply.Reply{}, queryErr("", "search word too long (%d bytes)", len(word))
	}
	key := squashName(word)
	entries := []ModelEntry{}
	for _, m := range catalog.Models() {
		if key != "" && !modelMatches(m, key) {
			continue
		}
		entries = append(entries, ModelEntry{
			Name: m.Name, ID: m.HFID, Aliases: nonNil(m.Aliases), Family: m.Family, ModelType: m.ModelType,
			Params: m.Params, ActiveParams: m.ActiveParams(), Context: m.MaxPositionEmbeddings, Source: m.Source,
		})
	}
	if len(entries) == 0 {
		err := queryErr(word, "no catalog model matches '%s' (any Hugging Face id works in vram too, e.g. vrambot vram Qwen/Qwen3-8B)", showToken(word))
		if s := catalog.SuggestModel(word); s != "" && nearName(word, s) {
			err.Suggestion = s
		}
		return reply.Reply{}, err
	}
	title := "Model catalog"
	if word != "" {
		title += ": " + showToken(word)
	}
	return reply.Reply{
		Kind:     "models",
		Title:    title,
		Summary:  fmt.Sprintf("%d %s. Any other model: give its Hugging Face id (read from its config.json on the Hub) or its size.", len(entries), plural(len(entries), "model", "models")),
		Sections: []reply.Section{modelTable(entries), modelSources(entries)},
		Result:   ModelsResult{Models: entries},
	}, nil
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

func modelTable(entries []ModelEntry) reply.Section {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "name\tid\tparams\tactive\tcontext")
	for _, e := range entries {
		active := "-"
		if e.ActiveParams != e.Params {
			active = catalog.FormatSize(e.ActiveParams)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", cell(e.Name), cell(e.ID), catalog.FormatSize(e.Params), active, contextLen(e.Context))
	}
	tw.Flush()
	return reply.Section{Title: "Models (active: parameters used per token, for mixtures of experts)", Code: []reply.Code{{Text: b.String()}}}
}

func modelSources(entries []ModelEntry) reply.Section {
	s := reply.Section{Title: "Sources"}
	for _, e := range entries {
		s.Items = append(s.Items, oneLine(e.Name+": "+e.Source, maxSourceRunes))
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
