package catalog

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// NormalizeGPU maps a provider's or nvidia-smi's spelling of a GPU onto the
// catalog. memoryGB is the per-GPU memory the source states (0 when it
// states none); hint is other text of the same row (an instance type, a
// GpuInfo name) that may name the variant or the memory when the GPU name
// does not ("gpu_1x_h100_sxm5", "1x_A100-80GB_SECURE").
//
// The name is read into a family ("h100"), the variants it names (SXM,
// PCIe, NVL; "HBM3", "HGX" and "Mega" are only ever SXM) and a memory size,
// all from the catalog's own rows and aliases, so a card added to gpus.csv is
// recognised without code. Within the family the named variant wins, then
// the stated memory (the nearest card, refused when more than a quarter
// away: a 48 GB "RTX 4090" is a modified card, an 8 GB "RTX 3060" is not the
// 12 GB one). When the name leaves variants open, the card with the least
// memory and then the fewest TFLOPS is chosen, so that a fit or a speed is
// never claimed that the real card would miss: a bare "H100" is the PCIe
// card, a bare "A100" the 40 GB one. It reports false for a name that is no
// GPU the catalog knows.
func NormalizeGPU(name string, memoryGB float64, hint string) (GPU, bool) {
	if math.IsNaN(memoryGB) || math.IsInf(memoryGB, 0) || memoryGB < 0 {
		memoryGB = 0
	}
	sp := parseSpelling(name, true)
	if sp.family == "" {
		return lookupFallback(name, memoryGB)
	}
	// In instance names a trailing "g" is a GPU count (a2-highgpu-8g), so
	// only "GB" counts as memory there.
	hs := parseSpelling(hint, false)
	mem := cmp.Or(sp.memoryGB, memoryGB, hs.memoryGB)
	cands, named := sp.candidates(familyMembers(sp.family), hs)
	if mem > 0 {
		var ok bool
		if cands, ok = nearestMemory(cands, mem); !ok {
			// "GH200 480GB" names the superchip's CPU and GPU memory together:
			// an alias may still know it; the row's own memory is checked there.
			return lookupFallback(name, memoryGB)
		}
	}
	if !named {
		// NVL cards are sold as bridged pairs under their own name: a name
		// that names no variant is not one, unless its memory says so.
		if pcieOrSXM := slices.DeleteFunc(slices.Clone(cands), func(g GPU) bool { return g.Variant == variantNVL }); len(pcieOrSXM) > 0 {
			cands = pcieOrSXM
		}
	}
	return conservative(cands).clone(), true
}

// Variants a catalog row may have (gpus.csv, column variant).
const (
	variantSXM  = "sxm"
	variantPCIe = "pcie"
	variantNVL  = "nvl"
)

// memoryTolerance is how far (as a fraction of the catalog's memory) a
// stated memory may be from a card's before the card is refused.
const memoryTolerance = 0.25

// vendorWords are dropped before matching: providers add them freely
// ("NVIDIA GeForce RTX 4090", "AMD Instinct MI300X", "nvidia-tesla-t4").
var vendorWords = map[string]bool{
	"nvidia": true, "amd": true, "intel": true, "habana": true, "apple": true,
	"geforce": true, "tesla": true, "instinct": true, "quadro": true,
	"tensor": true, "core": true, "gpu": true, "gpus": true,
}

// gpuSpelling is a GPU name taken apart: its family, the variant words
// around it and any memory size written in it.
type gpuSpelling struct {
	family   string
	variants []string // variantSXM, variantPCIe, variantNVL as named
	memoryGB float64  // 0 when the name states none
}

// nameWords lower-cases s and splits it into ASCII letter-and-digit words.
func nameWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)))
	})
}

// maxModelWords bounds how many words one model name spans ("rtx pro 6000
// blackwell" is four).
const maxModelWords = 4

// parseSpelling reads the family, variants and memory of s. shortG accepts
// "80g" as 80 GB, as GPU names write it ("A100-80G").
func parseSpelling(s string, shortG bool) gpuSpelling {
	var words []string
	for _, w := range nameWords(s) {
		if !vendorWords[w] {
			words = append(words, w)
		}
	}
	var sp gpuSpelling
	for i := 0; i < len(words); i++ {
		w := words[i]
		if gb, ok := memoryWord(w, shortG); ok {
			sp.memoryGB = gb
			continue
		}
		if isNumber(w) && i+1 < len(words) && (words[i+1] == "gb" || words[i+1] == "gib") {
			n, _ := strconv.ParseFloat(w, 64)
			sp.memoryGB = n
			i++
			continue
		}
		if sp.family == "" {
			if fam, n := matchModel(words[i:]); n > 0 {
				sp.family = fam
				i += n - 1
				continue
			}
			if fam, rest, ok := splitGlued(w); ok {
				sp.family = fam
				sp.readVariant(rest, shortG)
				continue
			}
		}
		sp.readVariant(w, shortG)
	}
	return sp
}

// matchModel finds the longest run of words at the start of ws that joins
// into a model word ("rtx", "pro", "6000" → "rtxpro6000") and returns its
// family and length; 0 when none does.
func matchModel(ws []string) (string, int) {
	for n := min(maxModelWords, len(ws)); n >= 1; n-- {
		if fam, ok := familyIndex[strings.Join(ws[:n], "")]; ok {
			return fam, n
		}
	}
	return "", 0
}

// splitGlued reads a model word with a variant glued to it ("h100nvl",
// "h100sxm5", "a100pcie", "a100-80g" written "a10080g").
func splitGlued(w string) (family, rest string, ok bool) {
	for _, m := range familyWords {
		if rest, found := strings.CutPrefix(w, m); found && rest != "" && isVariantWord(rest) {
			return familyIndex[m], rest, true
		}
	}
	return "", "", false
}

// isVariantWord reports the words readVariant understands.
func isVariantWord(w string) bool {
	if variantOf(w) != "" {
		return true
	}
	_, ok := memoryWord(w, true)
	return ok
}

// variantOf reads a form-factor word; "" for any other word.
func variantOf(w string) string {
	switch {
	case strings.HasPrefix(w, "sxm"), w == "hbm3", w == "hbm3e", w == "mega", w == "hgx":
		return variantSXM
	case w == "pcie":
		return variantPCIe
	case w == "nvl":
		return variantNVL
	}
	return ""
}

// readVariant records a variant or memory word; other words are ignored.
func (sp *gpuSpelling) readVariant(w string, shortG bool) {
	if v := variantOf(w); v != "" {
		if !slices.Contains(sp.variants, v) {
			sp.variants = append(sp.variants, v)
		}
		return
	}
	if gb, ok := memoryWord(w, shortG); ok {
		sp.memoryGB = gb
	}
}

// candidates are the family members the spelling allows: those of a variant
// it names (or, when it names none, that the hint names), else all of them;
// named reports that a variant was named. A variant no member has (an "A100
// SXM4", whose two catalog rows are told apart by memory alone) is no filter.
func (sp gpuSpelling) candidates(members []GPU, hint gpuSpelling) (cands []GPU, named bool) {
	variants := sp.variants
	if len(variants) == 0 {
		variants = hint.variants
	}
	for _, g := range members {
		if g.Variant != "" && slices.Contains(variants, g.Variant) {
			cands = append(cands, g)
		}
	}
	if len(cands) == 0 {
		return members, false
	}
	return cands, true
}

// nearestMemory returns the candidates whose memory is nearest memoryGB,
// refusing them when more than memoryTolerance away.
func nearestMemory(cands []GPU, memoryGB float64) ([]GPU, bool) {
	var best []GPU
	bestDiff := math.Inf(1)
	for _, g := range cands {
		gb := float64(g.MemoryBytes) / float64(gib)
		switch d := math.Abs(gb - memoryGB); {
		case d < bestDiff:
			best, bestDiff = []GPU{g}, d
		case d == bestDiff:
			best = append(best, g)
		}
	}
	if len(best) == 0 || bestDiff > memoryTolerance*float64(best[0].MemoryBytes)/float64(gib) {
		return nil, false
	}
	return best, true
}

// conservative is the card that promises least: the least memory, then the
// fewest TFLOPS, then catalog order.
func conservative(cands []GPU) GPU {
	return slices.MinFunc(cands, func(a, b GPU) int {
		return cmp.Or(cmp.Compare(a.MemoryBytes, b.MemoryBytes), cmp.Compare(a.DenseTFLOPS, b.DenseTFLOPS))
	})
}

// memoryWord reads "80gb" or "80gib" as 80, and "80g" when shortG is set.
func memoryWord(w string, shortG bool) (float64, bool) {
	for _, unit := range []string{"gib", "gb", "g"} {
		if unit == "g" && !shortG {
			continue
		}
		if n, found := strings.CutSuffix(w, unit); found && isNumber(n) {
			v, err := strconv.ParseFloat(n, 64)
			return v, err == nil && v > 0 && v < 10000
		}
	}
	return 0, false
}

// isNumber reports whether w is a non-empty run of at most six ASCII digits.
func isNumber(w string) bool {
	if w == "" || len(w) > 6 {
		return false
	}
	for _, r := range w {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// lookupFallback asks the catalog's aliases for names the family reading
// does not resolve, refusing a match whose memory is far from what the row
// says: "RTX 6000" is a 24 GB Quadro, not the 48 GB Ada.
func lookupFallback(name string, memoryGB float64) (GPU, bool) {
	name = strings.TrimSpace(name)
	if name == "" {
		return GPU{}, false
	}
	g, ok := LookupGPU(name)
	if !ok {
		return GPU{}, false
	}
	if memoryGB > 0 {
		catalogGB := float64(g.MemoryBytes) / float64(gib)
		if math.Abs(catalogGB-memoryGB) > memoryTolerance*catalogGB {
			return GPU{}, false
		}
	}
	return g, true
}
