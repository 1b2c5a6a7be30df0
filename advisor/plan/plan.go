// Package plan is the staged-fix planner: for a workload that does not fit
// a GPU it proposes changes, easiest first (docs/contracts.md §6), re-estimating the
// modified workload with the memory estimator after each one, and stops as
// soon as the workload fits. It is pure: no I/O.
package plan

import (
	"slices"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/advisor/memory"
)

// minSavingFraction is the smallest saving worth a fix: a change that saves
// less than 1% of the current total is noise next to the estimate's error.
const minSavingFraction = 0.01

// Result is a plan: the stages of fixes (empty when the workload already
// fits comfortably), the workload after all of them and its estimate.
type Result struct {
	Stages []fix.Stage
	// Fits is true when Final fits the GPU (band fits or tight).
	Fits bool
	// Fit and HeadroomBytes are memory.Assess of FinalEstimate on the GPU.
	Fit           memory.Fit
	HeadroomBytes int64
	// Final is the workload with every fix applied, FinalEstimate its breakdown.
	Final         memory.Workload
	FinalEstimate memory.Breakdown
	// After is the workload after each fix, in the stages' order: a
	// button that applies fixes 1 to n runs After[n-1].
	After []memory.Workload
	// ChangedMethod is true when a stage changes what is trained or the
	// weights' precision (LoRA, QLoRA, quantised weights).
	ChangedMethod bool
	// Offloads is true when a stage moves state to CPU RAM, which slows
	// every step: ScaleOut then shows the faster route on more GPUs.
	Offloads bool
	// AddsGPUs is true when a stage adds GPUs to the user's.
	AddsGPUs bool
	// ScaleOut keeps what the user asked for (method, precision) and adds
	// GPUs instead. It is computed when the stages change the method or
	// precision (LoRA, QLoRA, quantised weights), offload to CPU RAM, add
	// GPUs themselves, or still do not fit; nil otherwise and when no
	// count up to MaxScaleOutGPUs fits.
	ScaleOut *ScaleOut
}

// ScaleOut is a multi-GPU proposal: ZeRO-3 (FSDP) for training, tensor and
// pipeline parallelism for inference, on the smallest GPU count that fits.
// Its Stages are the single-GPU fixes it still needs (checkpointing, a
// smaller micro-batch...) followed by the multi-GPU one.
type ScaleOut struct {
	GPUs     int
	Stages   []fix.Stage
	Workload memory.Workload
	Estimate memory.Breakdown
}

// MaxScaleOutGPUs bounds the scale-out search: 64 nodes of 8 GPUs is beyond
// what a chat answer should propose.
const MaxScaleOutGPUs = 512

// Plan finds the fixes that make w fit on gpu, easiest first, with snippets
// written for fw (plain PyTorch when unknown). w is resolved with
// memory.Resolve first, so a raw parsed workload is fine.
func Plan(w memory.Workload, gpu catalog.GPU, fw fix.Framework) Result {
	p := planner{gpu: gpu, fw: fw}
	base := resolve(w)
	greedy := p.greedy(base, allCandidates)
	if isTraining(base) {
		// Keep the user's GPU and how many, and change as little else as
		// will fit, in the order practitioners try (docs/contracts.md §6):
		// settings first, then the method (LoRA, QLoRA's 4-bit weights),
		// then CPU offload, which slows every step; only when none of
		// these fits does the plan add GPUs.
		for _, keeps := range []func(*candidate) bool{settingsOnly, keepsHardware, keepsHardwareOffloading} {
			if kept := p.greedy(base, keeps); p.fitsAt(p.run(base, kept)) {
				greedy = kept
				break
			}
		}
	}
	steps := greedy
	if end := p.run(base, steps); !p.fitsAt(end) {
		if fit, _ := memory.Assess(memory.Estimate(end), gpu); fit == memory.FitTight {
			// Tight on one GPU beats a second GPU for the last few percent.
			p.tightOK = true
		} else if s, ok := p.scaleOutStep(end); ok {
			steps = append(steps, s)
		}
	}
	if p.reached(p.run(base, steps)) {
		steps = p.prune(base, steps)
		steps = p.relax(base, steps)
	}
	res := p.result(base, steps)
	res.ChangedMethod = changesWhatWasAsked(steps)
	res.Offloads = offloads(steps)
	res.AddsGPUs = addsGPUs(steps)
	if res.ChangedMethod || res.Offloads || !res.Fits || res.AddsGPUs {
		res.ScaleOut = p.scaleOutAlternative(base, greedy)
	}
	return res
}

// planner holds the target GPU and the snippet framework for one plan.
type planner struct {
	gpu catalog.GPU
	fw  fix.Framework
	// tightOK is set when no single-GPU plan reaches the band "fits": the
	// plan is then pruned and relaxed to stay "tight" instead.
	tightOK bool
}

// step is one chosen fix with its parameter (micro-batch, context length,
// GPU count; 0 for fixes without one).
type step struct {
	c     *candidate
	param int
}

// resolve re-derives a workload after a change while keeping its
// assumptions: assumptions describe what the user asked, not the fixes.
func resolve(w memory.Workload) memory.Workload {
	assumptions := w.Assumptions
	r := memory.Resolve(w)
	if assumptions != nil {
		r.Assumptions = assumptions
	}
	return r
}

// apply runs one step on w and re-resolves the result.
func (p planner) apply(w memory.Workload, s step) memory.Workload {
	return resolve(s.c.apply(w, p.gpu, s.param))
}

// run applies steps in order to base.
func (p planner) run(base memory.Workload, steps []step) memory.Workload {
	w := base
	for _, s := range steps {
		w = p.apply(w, s)
	}
	return w
}

// fitsAt reports whether w fits the GPU with comfortable headroom (band
// "fits"); the planner aims for that, not for "tight".
func (p planner) fitsAt(w memory.Workload) bool {
	fit, _ := memory.Assess(memory.Estimate(w), p.gpu)
	return fit == memory.FitFits
}

// reached reports whether w meets the plan's goal: "fits", or "tight" when
// that is the best one GPU can do.
func (p planner) reached(w memory.Workload) bool {
	fit, _ := memory.Assess(memory.Estimate(w), p.gpu)
	return fit == memory.FitFits || (p.tightOK && fit == memory.FitTight)
}

// greedy walks the candidates in order, easiest first, and keeps each one
// that saves at least minSavingFraction, stopping as soon as the workload
// fits. A candidate with a parameter takes the least invasive value that
// fits, or the most saving one when none does.
func (p planner) greedy(base memory.Workload, use func(*candidate) bool) []step {
	var steps []step
	cur := base
	if p.fitsAt(cur) {
		return nil
	}
	curTotal := memory.Estimate(cur).TotalBytes
	for _, c := range candidatesFor(base) {
		if !use(c) {
			continue
		}
		params := c.params(cur, p.gpu)
		if len(params) == 0 {
			continue
		}
		chosen := params[len(params)-1]
		for _, v := range params {
			if p.fitsAt(p.apply(cur, step{c, v})) {
				chosen = v
				break
			}
		}
		next := p.apply(cur, step{c, chosen})
		nextTotal := memory.Estimate(next).TotalBytes
		if float64(curTotal-nextTotal) < minSavingFraction*float64(curTotal) {
			continue
		}
		steps = append(steps, step{c, chosen})
		cur, curTotal = next, nextTotal
		if p.fitsAt(cur) {
			break
		}
	}
	return steps
}

func allCandidates(*candidate) bool { return true }

// The passes of a training plan: settings only (the method and the
// hardware as asked, nothing on the CPU); the hardware as asked with
// another method; the hardware as asked with offloads too.
func settingsOnly(c *candidate) bool            { return !c.changesMethod && !c.multiGPU && !c.offload }
func keepsHardware(c *candidate) bool           { return !c.multiGPU && !c.offload }
func keepsHardwareOffloading(c *candidate) bool { return !c.multiGPU }

// prune drops every step the plan still fits without, so an early fix made
// redundant by a later one (8-bit Adam before LoRA) is not proposed. It
// repeats until nothing more can go, so every kept step saves memory.
// Costless steps (autocast, SDPA: faster and exact) stay.
func (p planner) prune(base memory.Workload, steps []step) []step {
	for changed := true; changed; {
		changed = false
		for i := len(steps) - 2; i >= 0; i-- {
			if steps[i].c.costless {
				continue
			}
			without := append(append([]step{}, steps[:i]...), steps[i+1:]...)
			if p.applicable(base, without) && p.reached(p.run(base, without)) {
				steps, changed = without, true
			}
		}
	}
	return steps
}

// applicable reports whether every step still applies, with its parameter,
// to the workload the steps before it produce.
func (p planner) applicable(base memory.Workload, steps []step) bool {
	w := base
	for _, s := range steps {
		if !slices.Contains(s.c.params(w, p.gpu), s.param) {
			return false
		}
		w = p.apply(w, s)
	}
	return true
}

// relax gives back as much of what the user asked for as still fits: the
// largest micro-batch, the longest context, now that later fixes made room.
func (p planner) relax(base memory.Workload, steps []step) []step {
	for i, s := range steps {
		w := p.run(base, steps[:i])
		for _, v := range s.c.params(w, p.gpu) {
			if v == s.param {
				break
			}
			try := append([]step{}, steps...)
			try[i].param = v
			if p.applicable(base, try) && p.reached(p.run(base, try)) {
				steps = try
				break
			}
		}
	}
	return steps
}

// result re-estimates the chain step by step and groups the fixes into stages.
func (p planner) result(base memory.Workload, steps []step) Result {
	cur := base
	prevTotal := memory.Estimate(cur).TotalBytes
	var stages []fix.Stage
	var after []memory.Workload
	for _, s := range steps {
		next := p.apply(cur, s)
		after = append(after, next)
		b := memory.Estimate(next)
		f := s.c.describe(cur, next, p.gpu, p.fw, s.param)
		f.SavesBytes = fix.Bytes(prevTotal - b.TotalBytes)
		f.TotalAfterBytes = fix.Bytes(b.TotalBytes)
		if n := len(stages); n == 0 || stages[n-1].Level != s.c.level() {
			stages = append(stages, fix.Stage{Stage: n + 1, Level: s.c.level(), Title: s.c.level().Title()})
		}
		stages[len(stages)-1].Fixes = append(stages[len(stages)-1].Fixes, f)
		cur, prevTotal = next, b.TotalBytes
	}
	b := memory.Estimate(cur)
	fit, headroom := memory.Assess(b, p.gpu)
	if stages == nil {
		stages = []fix.Stage{}
	}
	return Result{
		Stages:        stages,
		Fits:          fit != memory.FitDoesNotFit,
		Fit:           fit,
		HeadroomBytes: headroom,
		Final:         cur,
		FinalEstimate: b,
		After:         after,
	}
}

// changesWhatWasAsked reports whether a step changes the training method or
// the weights' precision, which the user may not want.
func changesWhatWasAsked(steps []step) bool {
	for _, s := range steps {
		if s.c.changesMethod {
			return true
		}
	}
	return false
}

// offloads reports whether a step moves state to CPU RAM.
func offloads(steps []step) bool {
	for _, s := range steps {
		if s.c.offload {
			return true
		}
	}
	return false
}

// addsGPUs reports whether a step adds GPUs.
func addsGPUs(steps []step) bool {
	for _, s := range steps {
		if s.c.multiGPU {
			return true
		}
	}
	return false
}

// scaleOutStep is the multi-GPU step appended when nothing fits on one GPU.
func (p planner) scaleOutStep(w memory.Workload) (step, bool) {
	c := scaleOutCandidate(w)
	for _, n := range c.params(w, p.gpu) {
		if p.fitsAt(p.apply(w, step{c, n})) {
			return step{c, n}, true
		}
	}
	return step{}, false
}

// scaleOutAlternative keeps the user's method and precision: of the fixes
// the greedy pass tried, those that change neither (and do not offload to
// the CPU, a different route), then the smallest multi-GPU layout that fits,
// pruned like the main plan.
func (p planner) scaleOutAlternative(base memory.Workload, greedy []step) *ScaleOut {
	p.tightOK = false // more GPUs can always buy real headroom
	var kept []step
	for _, s := range greedy {
		if !s.c.changesMethod && !s.c.multiGPU && !s.c.offload {
			kept = append(kept, s)
		}
	}
	s, ok := p.scaleOutStep(p.run(base, kept))
	if !ok {
		return nil
	}
	steps := p.relax(base, p.prune(base, append(kept, s)))
	r := p.result(base, steps)
	return &ScaleOut{GPUs: r.Final.GPUs, Stages: r.Stages, Workload: r.Final, Estimate: r.FinalEstimate}
}
