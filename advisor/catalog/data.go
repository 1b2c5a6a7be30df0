package catalog

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The catalogs are data files with a source per row, embedded so the binary
// works offline. They are parsed once at init: a malformed file is a build
// defect caught by the package tests, so init panics rather than serving a
// partial catalog.

//go:embed gpus.csv
var gpusCSV []byte

//go:embed models.json
var modelsJSON []byte

const (
	gib = int64(1) << 30
	mib = int64(1) << 20
)

var (
	gpuList   []GPU
	gpuIndex  map[string]int // compact alias → index into gpuList
	modelList []Model
	modelIdx  map[string]int // compact alias → index into modelList
)

func init() {
	var err error
	if gpuList, err = parseGPUs(gpusCSV); err != nil {
		panic(fmt.Sprintf("catalog: gpus.csv: %v", err))
	}
	if modelList, err = parseModels(modelsJSON); err != nil {
		panic(fmt.Sprintf("catalog: models.json: %v", err))
	}
	gpuIndex = make(map[string]int)
	for i, g := range gpuList {
		for _, a := range gpuKeys(g) {
			gpuIndex[compact(a)] = i
		}
	}
	modelIdx = make(map[string]int)
	for i, m := range modelList {
		for _, a := range modelKeys(m) {
			modelIdx[compact(a)] = i
		}
	}
}

var gpuColumns = []string{"key", "name", "aliases", "vendor", "memory_gib", "usable_mib", "bf16", "fp8", "dense_tflops", "bandwidth_gbps", "source"}

func parseGPUs(data []byte) ([]GPU, error) {
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("read csv: %w", err)
	}
	if len(rows) < 2 || strings.Join(rows[0], ",") != strings.Join(gpuColumns, ",") {
		return nil, fmt.Errorf("header must be %v", gpuColumns)
	}
	var out []GPU
	for n, r := range rows[1:] {
		memGiB, err1 := strconv.ParseFloat(r[4], 64)
		usableMiB, err2 := strconv.ParseFloat(r[5], 64)
		tflops, err3 := strconv.ParseFloat(r[8], 64)
		bw, err4 := strconv.ParseFloat(r[9], 64)
		for _, e := range []error{err1, err2, err3, err4} {
			if e != nil {
				return nil, fmt.Errorf("row %d (%s): %w", n+2, r[0], e)
			}
		}
		if usableMiB <= 0 || usableMiB > memGiB*1024 {
			return nil, fmt.Errorf("row %d (%s): usable %g MiB out of range", n+2, r[0], usableMiB)
		}
		out = append(out, GPU{
			Key:           r[0],
			Name:          r[1],
			Aliases:       strings.Split(r[2], ";"),
			Vendor:        r[3],
			MemoryBytes:   int64(memGiB * float64(gib)),
			UsableBytes:   int64(usableMiB * float64(mib)),
			BF16:          r[6] == "yes",
			FP8:           r[7] == "yes",
			DenseTFLOPS:   tflops,
			BandwidthGBps: bw,
			Source:        r[10],
		})
	}
	return out, nil
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
