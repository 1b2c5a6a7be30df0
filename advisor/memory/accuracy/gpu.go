package accuracy

import (
	"regexp"
	"strings"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/units"
)

// defaultGPUKey is the GPU a /vram query assumes when it names none (the
// query grammar's default), used for a case whose source names no card.
const defaultGPUKey = "A100-80GB"

var (
	gpuCount  = regexp.MustCompile(`^\s*\d+\s*[x×]\s*`)
	gpuRemark = regexp.MustCompile(`\([^)]*\)`)
	gpuBudget = regexp.MustCompile(`^(\d+(?:\.\d+)?)\s*gi?b$`)
)

// caseGPU reads the card a case ran on from its gpu text ("Tesla T4 16GB",
// "2x RTX 4090 24GB", "A100-SXM4-80GB", "1x 48GB GPU"), with the word a
// /vram query names it by: a catalog alias, or a memory budget ("48gb")
// when the source gives only the size. ok is false when the text names
// neither (the query's default GPU then stands for it).
func caseGPU(text string) (g catalog.GPU, word string, ok bool) {
	t := strings.ToLower(gpuRemark.ReplaceAllString(text, ""))
	t = strings.TrimSpace(gpuCount.ReplaceAllString(t, ""))
	if first, _, found := strings.Cut(t, ","); found {
		t = strings.TrimSpace(first)
	}
	size := strings.TrimSpace(strings.TrimSuffix(t, "gpu"))
	if m := gpuBudget.FindStringSubmatch(size); m != nil {
		n, err := units.Parse(m[1] + "gb")
		if err != nil {
			return catalog.GPU{}, "", false
		}
		return catalog.GPU{Name: size, MemoryBytes: n, UsableBytes: n}, m[1] + "gb", true
	}
	if strings.Contains(t, "/") || strings.Contains(t, "model not stated") || t == "" {
		return catalog.GPU{}, "", false
	}
	g, ok = catalog.NormalizeGPU(t, 0, "")
	if !ok || g.Key == "" {
		return catalog.GPU{}, "", false
	}
	word = strings.ToLower(g.Key)
	if len(g.Aliases) > 0 {
		word = g.Aliases[0]
	}
	if back, found := catalog.LookupGPU(word); !found || back.Key != g.Key {
		return catalog.GPU{}, "", false
	}
	return g, word, true
}

// gpuMemoryOf is the memory of the card a case ran on, or of the query's
// default GPU when the case names none.
func gpuMemoryOf(text string) int64 {
	if g, _, ok := caseGPU(text); ok {
		return g.UsableBytes
	}
	if g, ok := catalog.LookupGPU(defaultGPUKey); ok {
		return g.UsableBytes
	}
	return 0
}
