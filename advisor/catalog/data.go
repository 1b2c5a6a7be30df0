package catalog

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

// The catalogs are data files with a source per row, embedded so the binary
// works offline. They are parsed once at init: a malformed file is a build
// defect caught by the package tests, so init panics rather than serving a
// partial catalog.

//go:embed models.json
var modelsJSON []byte

var (
	modelList []Model
	modelIdx  map[string]int // compact alias → index into modelList
)

func init() {
	var err error
	if modelList, err = parseModels(modelsJSON); err != nil {
		panic(fmt.Sprintf("catalog: models.json: %v", err))
	}
	modelIdx = make(map[string]int)
	for i, m := range modelList {
		for _, a := range modelKeys(m) {
			modelIdx[compact(a)] = i
		}
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
