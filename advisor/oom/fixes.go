package oom

import (
	"slices"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/fix"
)

// stages renders the requested fixes from the catalogue (advisor/fix) in
// the idiom of the paste's stack, leaving out those that do not exist for
// it, and groups them by level, easiest first, keeping the order the causes
// asked for them within a level. The hardware stage only appears when a
// cause pointed at it.
func (b *builder) stages() []fix.Stage {
	p := b.params()
	byLevel := map[fix.Level][]fix.Fix{}
	for _, id := range b.fixes {
		if !fix.Applies(id, b.stack) {
			continue
		}
		f, ok := fix.Make(id, b.stack, p)
		if !ok {
			continue
		}
		d, _ := fix.Lookup(id)
		byLevel[d.Level] = append(byLevel[d.Level], f)
	}
	levels := make([]fix.Level, 0, len(byLevel))
	for l := range byLevel {
		levels = append(levels, l)
	}
	slices.Sort(levels)
	out := make([]fix.Stage, 0, len(levels))
	for i, l := range levels {
		out = append(out, fix.Stage{Stage: i + 1, Level: l, Title: l.Title(), Fixes: byLevel[l]})
	}
	return out
}

// params are the values the paste gives the fixes' details and snippets;
// the catalogue puts placeholders where it says nothing.
func (b *builder) params() fix.Params {
	r := b.r
	var p fix.Params
	if r.ModelHint != nil {
		p.ModelID = *r.ModelHint
		if m, ok := catalog.LookupModel(*r.ModelHint); ok && m.HFID != "" {
			p.ModelID = m.HFID
		}
	}
	if r.GPUHint != nil {
		if g, ok := catalog.LookupGPU(*r.GPUHint); ok {
			p.GPUName, p.NoBF16, p.FP8 = g.Name, !g.BF16, g.FP8
		}
	}
	if u, ok := r.Extra["gpu_memory_utilization"].(float64); ok && u < raisedUtilization {
		p.GPUMemoryUtilization = raisedUtilization
	}
	p.NeedBytes = max(b.need, loadNeed(r))
	return p
}

// raisedUtilization is the share of the GPU to give an engine whose budget
// was too small: vLLM's 0.9 default leaves ~10% for other processes and
// CUDA graphs, and 0.95 is as far as it is safe to go on a dedicated GPU.
const raisedUtilization = 0.95
