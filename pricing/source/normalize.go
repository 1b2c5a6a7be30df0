package source

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/vrambot/vrambot/advisor/catalog"
)

// Catalog keys the normaliser picks between when one model name covers
// several cards. Other models map to their upper-cased name ("l40s" to
// "L40S"). They are keys of the advisor GPU catalog (advisor/catalog/gpus.csv);
// a key the catalog lacks (B200, H200 NVL today) resolves to "not mappable"
// rather than to a wrong card.
const (
	keyH200         = "H200"
	keyGH200        = "GH200"
	keyH100SXM      = "H100-SXM"
	keyH100PCIe     = "H100-PCIe"
	keyH100NVL      = "H100-NVL"
	keyA100With80GB = "A100-80GB"
	keyA100With40GB = "A100-40GB"
	keyV100With16GB = "V100-16GB"
	keyV100With32GB = "V100-32GB"
	keyH200NVL      = "H200-NVL"
	keyRTX6000Ada   = "RTX6000-Ada"
)

// Memory thresholds (GB) that split one model name into catalog entries.
const (
	a100SplitGB  = 60 // A100 40GB vs 80GB
	v100SplitGB  = 24 // V100 16GB vs 32GB
	h100NVLMinGB = 90 // H100 NVL has 94 GB; SXM and PCIe have 80 GB
)

// vendorWords are dropped before matching: providers add them freely
// ("NVIDIA GeForce RTX 4090", "AMD Instinct MI300X", "nvidia-tesla-t4").
var vendorWords = map[string]bool{
	"nvidia": true, "amd": true, "geforce": true, "tesla": true, "instinct": true,
	"quadro": true, "tensor": true, "core": true, "gpu": true, "gpus": true,
}

// gpuSpelling is a GPU name taken apart: the model token, the variant words
// around it and any memory size written in it.
type gpuSpelling struct {
	model    string
	sxm      bool // SXM form factor, or HBM3/HGX/Mega, which only SXM H100s have
	pcie     bool
	nvl      bool
	ada      bool
	memoryGB float64 // 0 when the name states none
}

// NormalizeGPU maps a provider's spelling of a GPU (with its per-GPU memory
// in GB when the source gives it, else 0) onto the advisor GPU catalog:
// "H100 80GB HBM3" and "H100_SXM" are the H100 SXM, "H100 NVL" or an H100 with
// 94 GB the NVL, "A100" with 40 or 80 GB the matching A100, "A10G" is not the
// "A10", "NVIDIA GeForce RTX 4090", "RTX_4090" and "4090" are one card. When
// the memory that tells two variants apart is unknown, the smaller variant is
// chosen so that a fit is never claimed that the real card would miss; for
// the same reason a bare "H100" is the PCIe card, the slower of the two 80 GB
// variants. It reports false when the name is no GPU the catalog knows.
func NormalizeGPU(name string, memoryGB float64) (catalog.GPU, bool) {
	return normalizeGPU(name, memoryGB, "")
}

// normalizeGPU is NormalizeGPU with a hint: other text from the same row
// (instance type, GpuInfo name) that can tell H100 or A100 variants apart when
// the GPU name alone does not ("gpu_1x_h100_sxm5", "p4de.24xlarge").
func normalizeGPU(name string, memoryGB float64, hint string) (catalog.GPU, bool) {
	if math.IsNaN(memoryGB) || math.IsInf(memoryGB, 0) || memoryGB < 0 {
		memoryGB = 0
	}
	sp := parseSpelling(name, true)
	if sp.model == "" {
		return lookupFallback(name, memoryGB)
	}
	if sp.memoryGB == 0 {
		sp.memoryGB = memoryGB
	}
	// In instance names a trailing "g" is a GPU count (a2-highgpu-8g), so
	// only "GB" counts as memory there.
	hs := parseSpelling(hint, false)
	if sp.memoryGB == 0 {
		sp.memoryGB = hs.memoryGB
	}
	if g, ok := resolveKey(sp.key(hs, strings.ToLower(hint))); ok {
		return g, true
	}
	return lookupFallback(name, sp.memoryGB)
}

// key picks the catalog key for the spelling; hint fills in variants the name
// leaves open.
func (sp gpuSpelling) key(hint gpuSpelling, hintText string) string {
	switch sp.model {
	case "h200":
		if sp.nvl {
			return keyH200NVL
		}
		return keyH200
	case "gh200":
		return keyGH200
	case "h100":
		return sp.h100Key(hint, hintText)
	case "a100":
		if sp.memoryGB >= a100SplitGB || (sp.memoryGB == 0 && a100With80GBHint(hintText)) {
			return keyA100With80GB
		}
		return keyA100With40GB
	case "v100":
		if sp.memoryGB >= v100SplitGB {
			return keyV100With32GB
		}
		return keyV100With16GB
	case "rtx6000":
		if sp.ada {
			return keyRTX6000Ada
		}
		return "" // the Turing Quadro RTX 6000 is not in the catalog
	}
	return strings.ToUpper(sp.model)
}

// h100Key tells the three 80/94 GB H100 variants apart.
func (sp gpuSpelling) h100Key(hint gpuSpelling, hintText string) string {
	switch {
	case sp.nvl || sp.memoryGB >= h100NVLMinGB:
		return keyH100NVL
	case sp.pcie:
		return keyH100PCIe
	case sp.sxm:
		return keyH100SXM
	case hint.nvl:
		return keyH100NVL
	case hint.pcie:
		return keyH100PCIe
	case hint.sxm || h100SXMHint(hintText):
		return keyH100SXM
	}
	return keyH100PCIe
}

// h100SXMHint reports instance families known to carry H100 SXM parts:
// AWS p5, GCP a3, Azure ND H100 v5, OCI BM.GPU.H100 (HGX boards).
func h100SXMHint(instance string) bool {
	return strings.HasPrefix(instance, "p5.") || strings.HasPrefix(instance, "a3-") ||
		strings.Contains(instance, "nd96isr_h100") || strings.HasPrefix(instance, "bm.gpu.h100")
}

// a100With80GBHint reports instance families known to carry A100 80GB parts:
// AWS p4de, GCP a2-ultragpu, Azure NC A100 v4 and ND A100 v4 "amsr".
func a100With80GBHint(instance string) bool {
	return strings.HasPrefix(instance, "p4de.") || strings.HasPrefix(instance, "a2-ultragpu") ||
		strings.Contains(instance, "ads_a100_v4") || strings.Contains(instance, "amsr_a100")
}

// modelTokens are the GPU model names the normaliser knows, as they appear
// after lower-casing and joining "rtx" to the word after it. Tokens with a
// variant glued on ("h100nvl", "a100-80gb" -> "a100" + "80gb") are split by
// parseSpelling.
var modelTokens = map[string]string{
	"h200": "h200", "gh200": "gh200", "h100": "h100", "a100": "a100",
	"a10g": "a10g", "a10": "a10", "l40s": "l40s", "l40": "l40", "l4": "l4",
	"rtx4090": "rtx4090", "4090": "rtx4090", "rtx3090": "rtx3090", "3090": "rtx3090",
	"rtxa6000": "rtxa6000", "a6000": "rtxa6000", "v100": "v100", "v100s": "v100",
	"t4": "t4", "mi300x": "mi300x", "b200": "b200", "rtx6000": "rtx6000", "a40": "a40",
}

// parseSpelling lower-cases s, splits it into words at every non-alphanumeric
// rune and reads the model, variant and memory words. shortG accepts "80g"
// as 80 GB, as GPU names write it ("A100-80G").
func parseSpelling(s string, shortG bool) gpuSpelling {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)))
	})
	var sp gpuSpelling
	for i := 0; i < len(words); i++ {
		w := words[i]
		if vendorWords[w] {
			continue
		}
		if w == "rtx" && i+1 < len(words) {
			i++
			w = "rtx" + words[i]
		}
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
		if sp.model == "" {
			if m, rest, ok := splitModel(w); ok {
				sp.model = m
				sp.readVariant(rest, shortG)
				continue
			}
		}
		sp.readVariant(w, shortG)
	}
	return sp
}

// splitModel reads a model word, possibly with a variant glued to it
// ("h100nvl", "h100sxm5", "a100pcie").
func splitModel(w string) (model, rest string, ok bool) {
	if m, ok := modelTokens[w]; ok {
		return m, "", true
	}
	for _, prefix := range []string{"gh200", "h200", "h100", "a100"} {
		if rest, found := strings.CutPrefix(w, prefix); found && isVariantWord(rest) {
			return prefix, rest, true
		}
	}
	return "", "", false
}

// isVariantWord reports the words readVariant understands.
func isVariantWord(w string) bool {
	switch {
	case strings.HasPrefix(w, "sxm"), w == "pcie", w == "nvl", w == "hbm3", w == "hbm3e",
		w == "mega", w == "hgx", w == "ada":
		return true
	}
	_, ok := memoryWord(w, true)
	return ok
}

// readVariant records a variant or memory word; other words are ignored.
func (sp *gpuSpelling) readVariant(w string, shortG bool) {
	switch {
	case strings.HasPrefix(w, "sxm"), w == "hbm3", w == "hbm3e", w == "mega", w == "hgx":
		sp.sxm = true
	case w == "pcie":
		sp.pcie = true
	case w == "nvl":
		sp.nvl = true
	case w == "ada":
		sp.ada = true
	default:
		if gb, ok := memoryWord(w, shortG); ok {
			sp.memoryGB = gb
		}
	}
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

// isNumber reports whether w is a non-empty run of ASCII digits.
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

// catalogByKey indexes the catalog by key once; the catalog is static.
var catalogByKey = sync.OnceValue(func() map[string]catalog.GPU {
	gpus := catalog.GPUs()
	byKey := make(map[string]catalog.GPU, len(gpus))
	for _, g := range gpus {
		byKey[g.Key] = g
	}
	return byKey
})

// resolveKey returns the catalog GPU with this key.
func resolveKey(key string) (catalog.GPU, bool) {
	if key == "" {
		return catalog.GPU{}, false
	}
	if g, ok := catalogByKey()[key]; ok {
		return g, true
	}
	for k, g := range catalogByKey() {
		if strings.EqualFold(k, key) {
			return g, true
		}
	}
	return catalog.GPU{}, false
}

// fallbackMemoryTolerance is how far (as a fraction) a row's stated memory
// may be from the catalog's before a name matched only through the catalog's
// own aliases is refused: "RTX 6000" is a 24 GB Quadro, not the 48 GB Ada.
const fallbackMemoryTolerance = 0.25

// lookupFallback asks the catalog itself for names the table above does not
// know (cards added to the catalog later), refusing a match whose memory is
// far from what the row says.
func lookupFallback(name string, memoryGB float64) (catalog.GPU, bool) {
	name = strings.TrimSpace(name)
	if name == "" {
		return catalog.GPU{}, false
	}
	g, ok := catalog.LookupGPU(name)
	if !ok {
		return catalog.GPU{}, false
	}
	if memoryGB > 0 && g.MemoryBytes > 0 {
		catalogGB := float64(g.MemoryBytes) / (1 << 30)
		if math.Abs(catalogGB-memoryGB) > fallbackMemoryTolerance*catalogGB {
			return catalog.GPU{}, false
		}
	}
	return g, true
}
