package catalog

import (
	"slices"
	"strings"
	"unicode"

	"github.com/vrambot/vrambot/suggest"
)

// GPU is one accelerator model as the estimator and the price ranking see it.
type GPU struct {
	Key     string   `json:"key"`  // canonical id, e.g. "A100-80GB", "H100-SXM", "RTX4090"
	Name    string   `json:"name"` // display name, e.g. "A100 80GB"
	Aliases []string `json:"aliases,omitempty"`
	// Family groups the variants sold under one model name ("h100" holds the
	// SXM, PCIe and NVL cards); Variant is the form factor that tells them
	// apart ("sxm", "pcie", "nvl"; empty when the family has one form).
	Family      string `json:"family"`
	Variant     string `json:"variant,omitempty"`
	Vendor      string `json:"vendor"`
	MemoryBytes int64  `json:"memory_bytes"` // marketed capacity
	UsableBytes int64  `json:"usable_bytes"` // what the card reports to CUDA/ROCm as total
	BF16        bool   `json:"bf16"`
	FP8         bool   `json:"fp8"`
	// ComputeCapability is NVIDIA's (8.9 for Ada; 0 for other vendors):
	// the serving engines need 7.0 or newer (docs/gpu-specs.md).
	ComputeCapability float64 `json:"compute_capability,omitempty"`
	DenseTFLOPS       float64 `json:"dense_tflops"` // dense bf16 (fp16 tensor where no bf16) TFLOPS
	BandwidthGBps     float64 `json:"bandwidth_gbps"`
	// HostBytes is, on unified memory (GB10), the least of UsableBytes the
	// operating system holds at an idle start: CUDA counts the whole pool
	// as the GPU's, but what is free at start-up is the host's MemAvailable
	// (docs/gpu-specs.md "Unified memory"). Zero on a discrete card.
	HostBytes int64  `json:"host_bytes,omitempty"`
	Source    string `json:"source"`
}

// Unified is whether the GPU shares its memory with the host (GB10).
func (g GPU) Unified() bool { return g.HostBytes > 0 }

// GPUs returns the GPU catalog in catalog order (a copy: callers may modify it).
func GPUs() []GPU {
	out := make([]GPU, len(gpuList))
	for i, g := range gpuList {
		out[i] = g.clone()
	}
	return out
}

func (g GPU) clone() GPU {
	g.Aliases = slices.Clone(g.Aliases)
	return g
}

// LookupGPU finds a GPU by key, display name or alias, ignoring case, spaces,
// dashes and underscores and a leading vendor word: "a100" is the 80GB card,
// "a100-40gb" the 40GB one, "h100" the SXM card, "v100" the 16GB one. These
// are the defaults of the /vram grammar (docs/contracts.md §2); provider and DCGM
// spellings go through NormalizeGPU instead.
func LookupGPU(s string) (GPU, bool) {
	k := compact(s)
	for _, vendor := range []string{"", "nvidia", "amd", "intel", "apple", "geforce", "tesla"} {
		if i, ok := gpuIndex[strings.TrimPrefix(k, vendor)]; ok {
			return gpuList[i].clone(), true
		}
	}
	return GPU{}, false
}

// FindGPUs reads the GPU names people type when they ask for prices: a
// family name gives every variant ("h100" is the SXM, PCIe and NVL cards,
// "a100" both memory sizes), a catalog name or alias gives that card ("a100
// 80gb", "rtx 4090", "mi300x"), and a spelling the aliases miss is read as
// NormalizeGPU reads it, keeping every variant it leaves open ("nvidia h100
// 80gb hbm3" is the SXM card; "h100 80gb" the SXM and PCIe ones). ok is false
// when nothing matches.
func FindGPUs(s string) ([]GPU, bool) {
	if fam, ok := familyIndex[compactModel(s)]; ok {
		return cloneAll(familyMembers(fam)), true
	}
	if g, ok := LookupGPU(s); ok {
		return []GPU{g}, true
	}
	sp := parseSpelling(s, true)
	if sp.family == "" {
		return nil, false
	}
	cands, _ := sp.candidates(familyMembers(sp.family), gpuSpelling{})
	if sp.memoryGB > 0 {
		var ok bool
		if cands, ok = nearestMemory(cands, sp.memoryGB); !ok {
			return nil, false
		}
	}
	return cloneAll(cands), len(cands) > 0
}

func cloneAll(gpus []GPU) []GPU {
	out := make([]GPU, len(gpus))
	for i, g := range gpus {
		out[i] = g.clone()
	}
	return out
}

// familyMembers returns the catalog rows of one family, in catalog order.
func familyMembers(family string) []GPU {
	var out []GPU
	for _, g := range gpuList {
		if g.Family == family {
			out = append(out, g)
		}
	}
	return out
}

// SuggestGPU returns the GPU alias closest to s by edit distance, or "" when
// nothing is close (more than a third of the input would have to change).
// Only names of the same generation are candidates (see gpuGeneration), so a
// "b2000" may become "b200" but never "h200", and a "rtx5900" "rtx5090",
// never "rtx4090"; and a name that is another model number of the same
// series ("5070", "mi350x") gets none: suggesting a different card would
// answer a different question.
func SuggestGPU(s string) string {
	if len(s) > maxSuggestInput {
		return "" // as nearestName: pasted junk is close to nothing
	}
	gen := gpuGeneration(s)
	if gen == "" {
		return ""
	}
	var names []string
	for _, g := range gpuList {
		for _, a := range g.Aliases {
			if gpuGeneration(a) == gen && !otherModelNumber(s, a) {
				names = append(names, a)
			}
		}
	}
	return nearestName(s, names)
}

// otherModelNumber reports that a and b are two model numbers of one
// series rather than a typo of each other: the same letters, and numbers
// that differ by more than one inserted, deleted or swapped digit. "5070"
// and "5090", "h300" and "h20", "mi350x" and "mi300" are other cards;
// "rtx4900" and "rtx4090", "a1000" and "a100" are typos.
func otherModelNumber(a, b string) bool {
	la, da := modelNumber(a)
	lb, db := modelNumber(b)
	if la != lb || da == "" || db == "" || da == db {
		return false
	}
	if suggest.Distance(da, db) == 1 {
		sa, sb := []byte(da), []byte(db)
		slices.Sort(sa)
		slices.Sort(sb)
		if len(da) != len(db) || string(sa) == string(sb) {
			return false // one digit inserted, deleted or swapped
		}
	}
	return true
}

// modelNumber splits a GPU name into its series letters and its first run
// of digits ("mi355x" → "mi", "355"), as gpuGeneration reads them.
func modelNumber(s string) (letters, digits string) {
	k := seriesName(s)
	i := strings.IndexFunc(k, func(r rune) bool { return !unicode.IsLetter(r) })
	if i < 0 {
		return k, ""
	}
	j := strings.IndexFunc(k[i:], func(r rune) bool { return !unicode.IsDigit(r) })
	if j < 0 {
		j = len(k) - i
	}
	return k[:i], k[i : i+j]
}

// seriesName is compact s without vendor words and without an "rtx"/"gtx"
// in front of a number.
func seriesName(s string) string {
	k := compact(s)
	for _, vendor := range []string{"nvidia", "amd", "intel", "apple", "geforce", "tesla", "quadro", "instinct"} {
		k = strings.TrimPrefix(k, vendor)
	}
	for _, series := range []string{"rtx", "gtx"} {
		if rest, ok := strings.CutPrefix(k, series); ok && rest != "" && unicode.IsDigit(rune(rest[0])) {
			k = rest
		}
	}
	return k
}

// gpuGeneration is the part of a GPU name that says which generation it
// belongs to: the letters of the model ("h" for H100/H200, "b" for
// B200/B300, "mi" for MI300X/MI355X, "rtxa" for the RTX A-series), or, for a
// bare GeForce-style number, its first digit ("4" for 4090/4080, "5" for
// 5090/5080). Vendor and "rtx"/"gtx" prefixes do not count. "" when s has no
// letters or digits.
func gpuGeneration(s string) string {
	k := seriesName(s)
	letters := strings.IndexFunc(k, func(r rune) bool { return !unicode.IsLetter(r) })
	switch {
	case letters > 0:
		return k[:letters]
	case letters < 0:
		return k // letters only
	case k == "":
		return ""
	}
	return k[:1] // starts with a digit: the generation digit
}

// compactModel is compact with vendor words dropped, the key of familyIndex.
func compactModel(s string) string {
	var b strings.Builder
	for _, w := range nameWords(s) {
		if !vendorWords[w] {
			b.WriteString(w)
		}
	}
	return b.String()
}
