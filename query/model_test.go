package query

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/models"
)

func TestLooksLikeModel(t *testing.T) {
	for tok, want := range map[string]bool{
		"Qwen/Qwen3-8B": true, "someorg/Foo-8B-Instruct": true, "https://huggingface.co/Qwen/Qwen3-8B": true,
		"qwen3-coder-30b-a3b": true, "gpt-oss": true, "kimi-k2": true, "deepseek-r1": true, "phi-4": true,
		"qwen3:8b": true, "yi-34b": true, "gemma3": true, "mistral-small-3.2": true,
		"acme/../x": false, "zzzzzz": false, "please": false, "0": false, "seq-4k": false, "bs-4": false,
		"ab1": false, "adamw-8bit": false, "paged-adamw-8bit": false, "fp8-e4m3": false, "lora": false, "x/": false, "a:b:c": false, "4k": false,
	} {
		if got := looksLikeModel(tok); got != want {
			t.Errorf("looksLikeModel(%q) = %v, want %v", tok, got, want)
		}
	}
}

func TestModelSpelling(t *testing.T) {
	for in, want := range map[string]string{
		"qwen3:8b": "qwen3-8b", "llama3.1:70b-instruct-q4_K_M": "llama3.1-70b", "gemma3:latest": "gemma3",
		"qwen3:weird": "qwen3:weird", "https://hf.co/x/y": "https://hf.co/x/y", "plain-7b": "plain-7b", ":8b": ":8b",
	} {
		if got := modelSpelling(in); got != want {
			t.Errorf("modelSpelling(%q) = %q, want %q", in, got, want)
		}
	}
}

// fakeResolver answers from a table and records what it was asked.
type fakeResolver struct {
	asked []string
	res   map[string]models.Resolution
}

func (f *fakeResolver) Resolve(_ context.Context, ref string) (models.Resolution, error) {
	f.asked = append(f.asked, ref)
	if r, ok := f.res[ref]; ok {
		return r, nil
	}
	return models.Resolution{}, &models.LookupError{Ref: ref, Kind: errs.NotFound, Outcome: "looked up on the Hub: no model " + ref + " on the Hub"}
}

// TestModelTokensGoToTheResolver: a word that reads as a model and is not
// in the catalog is looked up, never replaced by another catalog model;
// catalog names, sizes, GPUs and typos of other words are not.
func TestModelTokensGoToTheResolver(t *testing.T) {
	m := catalog.ModelForSize(8e9)
	m.Name = "acme/Open-8B"
	f := &fakeResolver{res: map[string]models.Resolution{
		"acme/Open-8B": {Model: m, Source: models.SourceHub, RepoID: "acme/Open-8B", Notes: []string{"acme/Open-8B: not in the catalog — looked up on the Hub"}},
		"open-8b":      {Model: m, Source: models.SourceHub, RepoID: "acme/Open-8B"},
	}}
	q, err := ParseWith(t.Context(), "acme/Open-8B lora 4090 bs=2", f, nil)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "model", q.Workload.ModelName, "acme/Open-8B")
	hasAssumption(t, q.Workload, "looked up on the Hub")
	if _, err := ParseWith(t.Context(), "https://huggingface.co/acme/Open-8B/tree/main inference", f, nil); err != nil {
		t.Errorf("URL: %v", err)
	}
	q, err = ParseWith(t.Context(), "open:8b inference", f, nil)
	if err != nil {
		t.Fatal(err)
	}
	hasAssumption(t, q.Workload, "'open:8b' read as open-8b")

	f.asked = nil
	for _, query := range []string{"llama-2-7b lora a100", "7b lora a100", "7b lorra", "7b lora a1000", "7b zzzzzz"} {
		_, _ = ParseWith(t.Context(), query, f, nil)
	}
	if len(f.asked) != 0 {
		t.Errorf("the resolver was asked %q", f.asked)
	}

	_, err = ParseWith(t.Context(), "acme/Nope-8B lora", f, nil)
	var le *models.LookupError
	if !errors.As(err, &le) || errs.KindOf(err) != errs.NotFound || !strings.Contains(err.Error(), "not in the catalog — looked up on the Hub: no model acme/Nope-8B on the Hub") {
		t.Errorf("missing model: %v", err)
	}
	for _, query := range []string{"acme/Open-8B llama-2-7b", "llama-2-7b acme/Open-8B", "acme/Open-8B 7b", "acme/Open-8B acme/Other-7B"} {
		_, err := ParseWith(t.Context(), query, f, nil)
		if err == nil || !strings.Contains(err.Error(), "two models given") {
			t.Errorf("%q: %v, want two models given", query, err)
		}
	}
}

// TestPresetModel: a config.json given beside the query is the model.
func TestPresetModel(t *testing.T) {
	m := catalog.ModelForSize(3e9)
	m.Scaled = false
	preset := &models.Resolution{Model: m, Source: models.SourceFile, Notes: []string{"architecture read from the config.json given"}}
	preset.Model.Name = "my-model"
	q, err := ParseWith(t.Context(), "inference h100", nil, preset)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "model", q.Workload.ModelName, "my-model")
	hasAssumption(t, q.Workload, "config.json given")
	if _, err := ParseWith(t.Context(), "llama-2-7b inference", nil, preset); err == nil || !strings.Contains(err.Error(), "two models given: 'the config.json given' and 'llama-2-7b'") {
		t.Errorf("config and a model: %v", err)
	}
	if q, err := ParseWith(t.Context(), "", nil, preset); err != nil || q.Workload.Method != "inference" {
		t.Errorf("config alone: %v", err)
	}
}

// TestOfflineParseSuggests: without a resolver a model word the catalog
// does not hold is a *QueryError, with a suggestion only when one is close.
func TestOfflineParseSuggests(t *testing.T) {
	_, err := Parse("acme/Open-8B lora")
	var qe *Error
	if !errors.As(err, &qe) || qe.Token != "acme/Open-8B" || !strings.Contains(err.Error(), "not in the catalog; give its size instead") {
		t.Errorf("err = %v", err)
	}
}

// localResolver says Hub ids need the Hub unless listed as cached.
type localResolver struct{ cached map[string]bool }

func (l localResolver) Resolve(context.Context, string) (models.Resolution, error) {
	panic("HubLookup must not resolve")
}

func (l localResolver) ResolvesWithoutHub(_ context.Context, ref string) bool {
	_, inCatalog := catalog.LookupModel(ref)
	return inCatalog || l.cached[ref]
}

func TestHubLookup(t *testing.T) {
	r := localResolver{cached: map[string]bool{"acme/Cached-8B": true}}
	tests := []struct {
		query, ref string
		needed     bool
	}{
		{"Qwen/Qwen3-Coder-Next lora 4090", "Qwen/Qwen3-Coder-Next", true},
		{"can I run acme/New-70B on two h100s?", "acme/New-70B", true},
		{"acme/Cached-8B lora 4090", "", false},
		{"llama-3.1-8b qlora 4090", "", false},
		{"7b lora", "", false},
		{"acme/New-70B lora bs=banana", "acme/New-70B", true}, // VRAM resolves before it reads the values
		{"lama lora zzz", "", false},
	}
	for _, tt := range tests {
		ref, needed := HubLookup(context.Background(), tt.query, r)
		if ref != tt.ref || needed != tt.needed {
			t.Errorf("HubLookup(%q) = %q, %v; want %q, %v", tt.query, ref, needed, tt.ref, tt.needed)
		}
	}
}
