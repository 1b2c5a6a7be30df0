package oom

import (
	"regexp"
	"strings"

	"github.com/vrambot/vrambot/advisor/catalog"
)

var (
	// reModelID matches Hugging Face ids ("meta-llama/Llama-3.1-8B-Instruct")
	// and sized names ("llama-2-7b", "Qwen2.5-0.5B-Instruct").
	reModelID = regexp.MustCompile(`\b[A-Za-z][\w.-]{1,40}/[A-Za-z][\w.-]{1,80}\b|\b[A-Za-z][A-Za-z0-9.]{1,20}(?:-[\w.]{1,20}){0,4}-\d+(?:\.\d+)?[bBmM]\b(?:-[\w.]{1,20}){0,3}`)
	// reGPUName matches a GPU product name as nvidia-smi or a log prints it.
	reGPUName = regexp.MustCompile(`\b(?:NVIDIA|Tesla|GeForce|Quadro|AMD Instinct|Radeon)(?: [\w-]{1,20}){1,5}|\bTPU v\d+\w*(?:-\d+)?`)
)

// maxHintCandidates bounds the catalog lookups per paste; hintReach is how
// far from the OOM a model or GPU name is looked for.
const (
	maxHintCandidates = 64
	hintReach         = 8 << 10
)

// hints returns the model and the GPU named in the paste itself, if any: a
// model only when the catalog knows it, a GPU by its product name.
func hints(text string) (model, gpu *string) {
	for i, m := range reModelID.FindAllString(text, maxHintCandidates) {
		if i >= maxHintCandidates {
			break
		}
		if strings.Contains(m, "site-packages") || strings.HasSuffix(m, ".py") {
			continue
		}
		if _, ok := catalog.LookupModel(m); ok {
			model = str(m)
			break
		}
	}
	if g := reGPUName.FindString(text); g != "" {
		gpu = str(strings.TrimSpace(g))
	}
	return model, gpu
}
