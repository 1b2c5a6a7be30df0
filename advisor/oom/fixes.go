package oom

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/fix"
)

// stages renders the requested fixes from the catalogue (advisor/fix) in
// the idiom of the paste's stack and device, leaving out those that do not
// exist for them or do not fit what the paste shows (stackFits), taking the
// planner's quantified fix where the paste names a workload, and groups
// them by level, easiest first, keeping the order the causes asked for
// them within a level. The fixes for where the job failed (lead.go) go
// first, in a stage of their own; a fix known to fall short of the memory
// missing is never first and says so. The hardware stage only appears
// when a cause pointed at it.
func (b *builder) stages() []fix.Stage {
	made := map[string]fix.Fix{}
	var order []string
	for _, id := range b.nextSteps(b.fixes) {
		if f, ok := b.render(id); ok && made[f.ID].ID == "" {
			made[f.ID] = f
			order = append(order, f.ID)
		}
	}
	short := map[string]bool{}
	for _, id := range order {
		if gain, gap, ok := b.shortfall(id); ok && gain < gap {
			short[id] = true
			b.fallShort = append(b.fallShort, id)
			f := made[id]
			f.Detail = joinDetail(f.Detail, fmt.Sprintf("cannot close the gap alone: +%s against the %s missing", gib1(max(0, gain)), gib1(gap)))
			made[id] = f
		}
	}
	lead := b.leadStage(made, order, short)
	byLevel := map[fix.Level][]fix.Fix{}
	for _, id := range order {
		if slices.Contains(lead, id) {
			continue
		}
		d, _ := fix.Lookup(id)
		byLevel[d.Level] = append(byLevel[d.Level], made[id])
	}
	var out []fix.Stage
	if len(lead) > 0 {
		d, _ := fix.Lookup(lead[0])
		st := fix.Stage{Stage: 1, Level: d.Level, Title: "First, for where it failed: " + orWord(b.leadWhy, "the fix that addresses it")}
		for _, id := range lead {
			st.Fixes = append(st.Fixes, made[id])
		}
		out = append(out, st)
	}
	for _, l := range slices.Sorted(maps.Keys(byLevel)) {
		out = append(out, fix.Stage{Stage: len(out) + 1, Level: l, Title: l.Title(), Fixes: byLevel[l]})
	}
	if out == nil {
		out = []fix.Stage{}
	}
	return out
}

// render makes fix id, in the device's and the stack's idiom, when it
// applies to what the paste shows.
func (b *builder) render(id string) (fix.Fix, bool) {
	if id = b.deviceFix(id); id == "" || !b.stackFits(id) {
		return fix.Fix{}, false
	}
	if b.stack != stackNone && !fix.Applies(id, b.stack) {
		return fix.Fix{}, false
	}
	f, ok := fix.Make(id, b.stack, b.params())
	if !ok {
		return fix.Fix{}, false
	}
	if q, ok := b.quantified(id); ok {
		f = q
	}
	return f, true
}

// leadStage picks the lead fixes: those for where the job failed that
// were made and do not fall short, the first of them and the ones after
// it at its level (a stage holds one level); with no lead, the first fix
// that does not fall short when the easiest one does.
func (b *builder) leadStage(made map[string]fix.Fix, order []string, short map[string]bool) []string {
	var cands []string
	for _, id := range b.nextSteps(b.lead) {
		if id = b.deviceFix(id); id != "" && made[id].ID != "" && !short[id] && !slices.Contains(cands, id) {
			cands = append(cands, id)
		}
	}
	if len(cands) == 0 && len(order) > 0 && short[b.firstByLevel(order)] {
		for _, id := range order {
			if !short[id] {
				cands = []string{id}
				b.leadWhy = "what can close the gap"
				break
			}
		}
	}
	if len(cands) == 0 {
		return nil
	}
	first, _ := fix.Lookup(cands[0])
	lead := cands[:1]
	for _, id := range cands[1:] {
		if d, _ := fix.Lookup(id); d.Level == first.Level {
			lead = append(lead, id)
		}
	}
	return lead
}

// firstByLevel is the fix the level order would put first.
func (b *builder) firstByLevel(order []string) string {
	best, bestLevel := "", fix.LevelHardware+1
	for _, id := range order {
		if d, _ := fix.Lookup(id); d.Level < bestLevel {
			best, bestLevel = id, d.Level
		}
	}
	return best
}

func joinDetail(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// stackNone is the stack of programs the catalogue has no idiom for
// (TensorRT, CuPy, numba, Lua Torch): their fixes come without snippets.
const stackNone fix.Framework = "none"

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
	// The planner writes the catalog's id of the model; the commands name
	// the one the paste ran.
	if cat := b.sizing.Workload.Model.HFID; ok && cat != "" {
		if own := b.params().ModelID; own != "" && own != cat {
			f.Snippet = replaceModelID(f.Snippet, cat, own)
		}
	}
	return f, ok
}

// replaceModelID puts own where a snippet names the catalog's id cat as a
// whole word (not inside a longer id that starts with it).
func replaceModelID(snippet, cat, own string) string {
	var b strings.Builder
	for {
		i := strings.Index(snippet, cat)
		if i < 0 {
			b.WriteString(snippet)
			return b.String()
		}
		end := i + len(cat)
		b.WriteString(snippet[:i])
		if end < len(snippet) && (isWordByte(snippet[end]) || snippet[end] == '-' || snippet[end] == '.') {
			b.WriteString(cat)
		} else {
			b.WriteString(own)
		}
		snippet = snippet[end:]
	}
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
		// Not for a convolutional net; a job already split over a whole
		// node needs another lever than more tensor parallelism.
		if f.Convolutional || id == fix.TensorParallel && f.Workload.TP >= 8 {
			return false
		}
	case fix.InferenceMode:
		// Not where autograd is already off, nor for a training step.
		if f.NoGrad || b.r.Phase == PhaseGenerate || f.Training && b.r.Phase != PhaseEval {
			return false
		}
	case fix.MixedPrecision:
		// The paste already computes in 16 bits.
		if f.Workload.Precision != "" || f.Workload.Quantization == "bnb-4bit" {
			return false
		}
	}
	// An adapter job already trains LoRA (QLoRA: on 4-bit weights), and
	// its optimizer states are the adapters' few.
	switch m := f.Workload.Method; {
	case (m == "lora" || m == "qlora") && (id == fix.LoRA || id == fix.Optim8bit):
		return false
	case m == "qlora" && (id == fix.QLoRA || id == fix.NF4Weights):
		return false
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
	// The model as the paste names it: the id it ran, never the catalog's
	// base model for it (a served -Instruct stays -Instruct). A bare name
	// that is no id is given the catalog's id of it.
	if r.ModelHint != nil {
		p.ModelID = *r.ModelHint
		if m, ok := catalog.LookupModel(*r.ModelHint); ok && m.HFID != "" && !strings.Contains(*r.ModelHint, "/") {
			p.ModelID = m.HFID
		}
	}
	if w.Model != "" {
		p.ModelID = w.Model
	}
	if w.MaxSeqs > 1 {
		p.Sequences, p.WasSequences = w.MaxSeqs/2, w.MaxSeqs
	}
	if g, ok := gpuOf(r); ok && g.Key != "" {
		p.GPUName, p.NoBF16, p.FP8 = g.Name, !g.BF16, g.FP8
	}
	if u := b.utilization(); u < raisedUtilization {
		p.GPUMemoryUtilization = raisedUtilization
	}
	if b.lowerUtil > 0 && b.has(CauseVLLMStartup) {
		p.GPUMemoryUtilization = b.lowerUtil
	} else if slices.Contains(b.fixes, fix.LowerGPUMemoryUtil) && !slices.Contains(b.fixes, fix.GPUMemoryUtilization) {
		// A tenth less of the GPU than the engine was given (its default
		// when the paste does not say).
		p.GPUMemoryUtilization = math.Round((b.utilization()-0.1)*100) / 100
	}
	if w.BatchedTokens > 1 {
		p.BatchedTokens = w.BatchedTokens / 2
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
		if s.smaller != "" {
			p.Quant = s.smaller
			if q := b.r.Facts.Workload.Quant; q != "" && strings.Contains(strings.ToUpper(p.ModelID), q) && strings.HasSuffix(strings.ToLower(p.ModelID), ".gguf") {
				i := strings.LastIndex(strings.ToUpper(p.ModelID), q)
				p.QuantFile = p.ModelID[:i] + s.smaller + p.ModelID[i+len(q):]
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
