package oom

import (
	"maps"
	"slices"
	"strings"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/fix"
)

// stages renders the requested fixes from the catalogue (advisor/fix) in
// the idiom of the paste's stack, leaving out those that do not exist for
// it or do not fit what the paste shows (stackFits), taking the planner's
// quantified fix where the paste names a workload, and groups them by
// level, easiest first, keeping the order the causes asked for them within
// a level. The hardware stage only appears when a cause pointed at it.
func (b *builder) stages() []fix.Stage {
	p := b.params()
	byLevel := map[fix.Level][]fix.Fix{}
	var seen []string
	for _, id := range b.nextSteps(b.fixes) {
		if slices.Contains(seen, id) || !fix.Applies(id, b.stack) || !b.stackFits(id) {
			continue
		}
		seen = append(seen, id)
		f, ok := fix.Make(id, b.stack, p)
		if !ok {
			continue
		}
		if q, ok := b.quantified(id); ok {
			f = q
		}
		d, _ := fix.Lookup(id)
		byLevel[d.Level] = append(byLevel[d.Level], f)
	}
	levels := slices.Sorted(maps.Keys(byLevel))
	out := make([]fix.Stage, 0, len(levels))
	for i, l := range levels {
		out = append(out, fix.Stage{Stage: i + 1, Level: l, Title: l.Title(), Fixes: byLevel[l]})
	}
	return out
}

// quantified is the planner's version of fix id, with its savings, when
// the paste named a workload and the plan holds that fix.
func (b *builder) quantified(id string) (fix.Fix, bool) {
	if b.sizing == nil {
		return fix.Fix{}, false
	}
	f, ok := b.sizing.plan[id]
	if ok && id == fix.GradAccum {
		// The planner splits the micro-batch it was given; the paste's own
		// accumulation multiplies both sides, so that the effective batch
		// the user runs stays the same.
		w := b.r.Facts.Workload
		if m := b.sizing.microBatch; m > 0 && w.Batch > m && w.AccumSteps > 1 {
			p := b.params()
			p.MicroBatch, p.AccumSteps, p.Batch = m, w.AccumSteps*w.Batch/m, w.Batch*w.AccumSteps
			if g, ok := fix.Make(id, b.stack, p); ok {
				g.SavesBytes, g.TotalAfterBytes = f.SavesBytes, f.TotalAfterBytes
				f = g
			}
		}
	}
	return f, ok
}

// nextSteps replaces the generic ZeRO fix by the next step from what the
// paste runs: ZeRO-2, then ZeRO-3, then optimizer offload, then parameter
// offload (docs/contracts.md §6: the least invasive sharding that is new).
func (b *builder) nextSteps(ids []string) []string {
	w := b.r.Facts.Workload
	var out []string
	for _, id := range ids {
		if id != fix.Zero2 {
			out = append(out, id)
			continue
		}
		switch {
		case w.ZeroStage == 3 && w.Offload == "param":
		case w.ZeroStage == 3 && w.Offload == "optimizer":
			out = append(out, fix.ParamOffload)
		case w.ZeroStage == 3:
			out = append(out, fix.ZeroOffload, fix.ParamOffload)
		case w.ZeroStage == 2:
			out = append(out, fix.Zero3)
		default:
			out = append(out, fix.Zero2, fix.Zero3)
		}
	}
	return out
}

// stackFits leaves out fixes that do not fit what the paste shows of the
// model and its context: attention and logits fixes for a convolutional
// net, turning autograd off where it already is (inside generate(), under
// no_grad), an fp8 KV cache on a GPU without fp8.
func (b *builder) stackFits(id string) bool {
	f := b.r.Facts
	switch id {
	case fix.FlashAttention, fix.ChunkedLoss, fix.LoRA, fix.QLoRA, fix.MaxModelLen, fix.FP8KVCache, fix.NF4Weights, fix.TensorParallel:
		if f.Convolutional {
			return false
		}
	case fix.InferenceMode:
		// Not where autograd is already off, nor for a training step.
		if f.NoGrad || b.r.Phase == PhaseGenerate || f.Training && b.r.Phase != PhaseEval {
			return false
		}
	case fix.MixedPrecision:
		// The paste already computes in 16 bits.
		if f.Workload.Precision != "" {
			return false
		}
	}
	if id == fix.FP8KVCache && b.stack != fix.FrameworkLlamaCPP && b.stack != fix.FrameworkOllama {
		if g, ok := gpuOf(b.r); ok && g.Key != "" && !g.FP8 {
			return false
		}
	}
	if id == fix.GPUMemoryUtilization {
		// Raising only helps when the engine was given less than it can take.
		if u := b.utilization(); u >= raisedUtilization {
			return false
		}
	}
	return true
}

// params are the values the paste gives the fixes' details and snippets;
// the catalogue puts placeholders where it says nothing.
func (b *builder) params() fix.Params {
	r, w := b.r, b.r.Facts.Workload
	var p fix.Params
	if r.ModelHint != nil {
		p.ModelID = *r.ModelHint
		if m, ok := catalog.LookupModel(*r.ModelHint); ok && m.HFID != "" {
			p.ModelID = m.HFID
		}
	}
	if w.Model != "" {
		p.ModelID = w.Model
	}
	if g, ok := gpuOf(r); ok && g.Key != "" {
		p.GPUName, p.NoBF16, p.FP8 = g.Name, !g.BF16, g.FP8
	}
	if u := b.utilization(); u < raisedUtilization {
		p.GPUMemoryUtilization = raisedUtilization
	}
	if b.lowerUtil > 0 && b.has(CauseVLLMStartup) {
		p.GPUMemoryUtilization = b.lowerUtil
	}
	if w.Batch > 1 {
		// The largest micro-batch at most half the one that failed that
		// divides it, with the accumulation that keeps the effective batch.
		accum, m := max(1, w.AccumSteps), w.Batch/2
		for w.Batch%m != 0 {
			m--
		}
		p.MicroBatch, p.AccumSteps, p.Batch = m, accum*w.Batch/m, w.Batch*accum
	}
	p.MaxModelLen, p.EngineMaxModelLen, p.WasMaxModelLen = b.maxModelLen, b.engineMaxLen, b.wasMaxLen
	if s := b.ggmlSizes; s.layers > 0 {
		p.TotalLayers = s.layers
		p.GPULayers = s.fitLayers
		if s.fitCtx > 0 {
			p.MaxModelLen, p.WasMaxModelLen = s.fitCtx, s.ctx
		}
		if s.weights4bit > 0 {
			p.Quant = smallerQuant
			if q := b.r.Facts.Workload.Quant; q != "" && strings.Contains(strings.ToUpper(p.ModelID), q) && strings.HasSuffix(strings.ToLower(p.ModelID), ".gguf") {
				i := strings.LastIndex(strings.ToUpper(p.ModelID), q)
				p.QuantFile = p.ModelID[:i] + smallerQuant + p.ModelID[i+len(q):]
			}
		}
	}
	if w.ZeroStage > 0 {
		p.ZeroStage = w.ZeroStage
	}
	p.GPUs = w.GPUs
	p.NeedBytes = b.needBytes()
	return p
}

// raisedUtilization is the share of the GPU to give an engine whose budget
// was too small: vLLM's 0.9 default leaves ~10% for other processes and
// CUDA graphs, and 0.95 is as far as it is safe to go on a dedicated GPU.
const raisedUtilization = 0.95
