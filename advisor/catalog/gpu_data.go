package catalog

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// gpusCSV is the GPU catalog: one row per card with the source of its
// figures. Like models.json it is parsed once; a malformed file is a build
// defect caught by the package tests, so loading panics rather than serving
// a partial catalog.
//
//go:embed gpus.csv
var gpusCSV []byte

const (
	gib = int64(1) << 30
	mib = int64(1) << 20
)

var (
	gpuList  = mustParseGPUs(gpusCSV)
	gpuIndex = indexGPUAliases(gpuList) // compact alias → index into gpuList
	// familyIndex maps the model words of every family (its token and each
	// alias that names no variant or memory size: "h100", "4090", "rtx a6000")
	// to the family.
	familyIndex = indexFamilies(gpuList)
	// familyWords are familyIndex's keys, longest first, for reading model
	// words with a variant glued on ("h100nvl").
	familyWords = sortedFamilyWords(familyIndex)
)

var gpuColumns = []string{"key", "name", "aliases", "family", "variant", "vendor", "memory_gib", "usable_mib",
	"bf16", "fp8", "compute_capability", "dense_tflops", "bandwidth_gbps", "host_mib", "source"}

// gpuVariants are the form factors a catalog row may name.
var gpuVariants = []string{"", variantSXM, variantPCIe, variantNVL}

func mustParseGPUs(data []byte) []GPU {
	gpus, err := parseGPUs(data)
	if err != nil {
		panic(fmt.Sprintf("catalog: gpus.csv: %v", err))
	}
	return gpus
}

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
		memGiB, err1 := strconv.ParseFloat(r[6], 64)
		usableMiB, err2 := strconv.ParseFloat(r[7], 64)
		tflops, err3 := strconv.ParseFloat(r[11], 64)
		bw, err4 := strconv.ParseFloat(r[12], 64)
		var cc, hostMiB float64
		var err5, err6 error
		if r[10] != "" { // NVIDIA's numbering; other vendors leave it empty
			cc, err5 = strconv.ParseFloat(r[10], 64)
		}
		if r[13] != "" { // unified memory only; a discrete card's is empty
			hostMiB, err6 = strconv.ParseFloat(r[13], 64)
		}
		for _, e := range []error{err1, err2, err3, err4, err5, err6} {
			if e != nil {
				return nil, fmt.Errorf("row %d (%s): %w", n+2, r[0], e)
			}
		}
		if usableMiB <= 0 || usableMiB > memGiB*1024 {
			return nil, fmt.Errorf("row %d (%s): usable %g MiB out of range", n+2, r[0], usableMiB)
		}
		if hostMiB < 0 || hostMiB >= usableMiB {
			return nil, fmt.Errorf("row %d (%s): host %g MiB out of range", n+2, r[0], hostMiB)
		}
		if r[3] == "" || r[3] != compactModel(r[3]) {
			return nil, fmt.Errorf("row %d (%s): family %q must be one lower-case model word", n+2, r[0], r[3])
		}
		if !slices.Contains(gpuVariants, r[4]) {
			return nil, fmt.Errorf("row %d (%s): variant %q is none of %q", n+2, r[0], r[4], gpuVariants)
		}
		out = append(out, GPU{
			Key:               r[0],
			Name:              r[1],
			Aliases:           strings.Split(r[2], ";"),
			Family:            r[3],
			Variant:           r[4],
			Vendor:            r[5],
			MemoryBytes:       int64(memGiB * float64(gib)),
			UsableBytes:       int64(usableMiB * float64(mib)),
			BF16:              r[8] == "yes",
			FP8:               r[9] == "yes",
			ComputeCapability: cc,
			DenseTFLOPS:       tflops,
			BandwidthGBps:     bw,
			HostBytes:         int64(hostMiB * float64(mib)),
			Source:            r[14],
		})
	}
	return out, nil
}

func gpuKeys(g GPU) []string { return append([]string{g.Key, g.Name}, g.Aliases...) }

func indexGPUAliases(gpus []GPU) map[string]int {
	idx := make(map[string]int)
	for i, g := range gpus {
		for _, a := range gpuKeys(g) {
			idx[compact(a)] = i
		}
	}
	return idx
}

// indexFamilies maps model words to families. A word claimed by two
// families is a catalog defect, as an alias naming two cards is.
func indexFamilies(gpus []GPU) map[string]string {
	idx := make(map[string]string)
	add := func(word, family string) {
		if prev, ok := idx[word]; ok && prev != family {
			panic(fmt.Sprintf("catalog: gpus.csv: model word %q names families %s and %s", word, prev, family))
		}
		idx[word] = family
	}
	for _, g := range gpus {
		add(g.Family, g.Family)
		for _, name := range gpuKeys(g) {
			if w, ok := familyWord(name); ok {
				add(w, g.Family)
			}
		}
	}
	return idx
}

// familyWord is a name's model word: its words joined, when none of them is
// a variant or memory word and it does not end in a variant ("rtx a6000" →
// "rtxa6000"; "h100-sxm", "h100nvl" and "a100 80gb" name a variant, not the
// family). Vendor words are dropped.
func familyWord(name string) (string, bool) {
	var b strings.Builder
	for _, w := range nameWords(name) {
		if vendorWords[w] {
			continue
		}
		if isVariantWord(w) {
			return "", false
		}
		b.WriteString(w)
	}
	word := b.String()
	for i := 1; i < len(word); i++ {
		if variantOf(word[i:]) != "" {
			return "", false
		}
	}
	return word, word != ""
}

func sortedFamilyWords(idx map[string]string) []string {
	words := make([]string, 0, len(idx))
	for w := range idx {
		words = append(words, w)
	}
	slices.SortFunc(words, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return words
}
