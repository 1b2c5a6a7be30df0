package catalog

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"

	"github.com/vrambot/vrambot/advisor/hfconfig"
)

// The catalogs are data files with a source per row, embedded so the binary
// works offline. They are parsed once at init: a malformed file is a build
// defect caught by the package tests, so init panics rather than serving a
// partial catalog.

//go:embed models.json
var modelsJSON []byte

// configFS holds the catalog's config.json files and their index
// (models/SOURCES.md).
//
//go:embed models/*.json
var configFS embed.FS

var (
	modelList []Model
	modelIdx  map[string]int // compact alias → index into modelList
	// modelNames holds every model's names taken apart, parsed once for
	// the "did you mean" and the family lists (model_names.go).
	modelNames []namedModel
)

func init() {
	var err error
	if modelList, err = parseModels(modelsJSON); err != nil {
		panic(fmt.Sprintf("catalog: models.json: %v", err))
	}
	configModels, err := readConfigModels(configFS)
	if err != nil {
		panic(fmt.Sprintf("catalog: models/: %v", err))
	}
	modelList = append(modelList, configModels...)
	modelIdx = make(map[string]int)
	for i, m := range modelList {
		for _, a := range modelKeys(m) {
			modelIdx[compact(a)] = i
		}
		modelNames = append(modelNames, nameModel(m))
	}
}

func parseModels(data []byte) ([]Model, error) {
	var doc struct {
		Models []Model `json:"models"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	for _, m := range doc.Models {
		if m.HiddenSize <= 0 || m.NumLayers <= 0 || m.NumAttentionHeads <= 0 || m.NumKVHeads <= 0 ||
			m.HeadDim <= 0 || m.IntermediateSize <= 0 || m.VocabSize <= 0 || m.Params <= 0 {
			return nil, fmt.Errorf("model %q: every shape must be positive", m.Name)
		}
	}
	return doc.Models, nil
}

// configEntry is one row of models/index.json.
type configEntry struct {
	File           string   `json:"file"`
	HFID           string   `json:"hf_id"`
	Name           string   `json:"name"`
	Aliases        []string `json:"aliases"`
	ConfigSource   string   `json:"config_source"`
	ParamsSource   string   `json:"params_source"`
	PublishedParam int64    `json:"published_params"`
	// StandIns are other models with this config's architecture that the
	// catalog has no config.json of their own for: each is answered with
	// this config, under its own name, and says so (arch.Model.StandInFor).
	StandIns []standIn `json:"stand_ins"`
}

// standIn is a model read with another model's config.json.
type standIn struct {
	Name    string   `json:"name"`
	HFID    string   `json:"hf_id"`
	Aliases []string `json:"aliases"`
	// Context replaces max_position_embeddings where the stand-in's own
	// config differs there (0: the same).
	Context int `json:"max_position_embeddings"`
	// Why says what makes the architectures the same, with its source.
	Why string `json:"why"`
}

// readConfigModels reads every model of models/index.json from its
// config.json with the config reader, so catalog entries and `vram
// --config` share one translation.
func readConfigModels(fsys fs.FS) ([]Model, error) {
	data, err := fs.ReadFile(fsys, "models/index.json")
	if err != nil {
		return nil, err
	}
	var doc struct {
		Models []configEntry `json:"models"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("index.json: %w", err)
	}
	out := make([]Model, 0, len(doc.Models))
	for _, e := range doc.Models {
		raw, err := fs.ReadFile(fsys, "models/"+e.File)
		if err != nil {
			return nil, err
		}
		m, _, err := hfconfig.Read(raw, e.HFID)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.File, err)
		}
		m.Name, m.Aliases = e.Name, e.Aliases
		m.Source = fmt.Sprintf("config.json of %s (%s)", e.HFID, e.ConfigSource)
		out = append(out, m)
		for _, si := range e.StandIns {
			if si.Name == "" || si.Why == "" || len(si.Aliases) == 0 {
				return nil, fmt.Errorf("%s: stand-in %q needs a name, aliases and why", e.File, si.Name)
			}
			s := m
			s.Name, s.HFID, s.Aliases, s.StandInFor = si.Name, si.HFID, si.Aliases, e.Name
			if si.Context > 0 {
				s.MaxPositionEmbeddings = si.Context
			}
			s.Source = fmt.Sprintf("config.json of %s (%s), the same architecture as %s: %s", e.HFID, e.ConfigSource, si.Name, si.Why)
			out = append(out, s)
		}
	}
	return out, nil
}
