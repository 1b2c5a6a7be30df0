package vram

import (
	"fmt"
	"strings"

	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/advisor/memory"
	"github.com/vrambot/vrambot/advisor/plan"
	"github.com/vrambot/vrambot/command/layout"
	"github.com/vrambot/vrambot/query"
	"github.com/vrambot/vrambot/reply"
)

// The answer to the question a query asks, as the header says it: the
// workload as asked fits; it fits with settings that keep the method and
// the hardware (what practitioners answer: "yes, with gradient
// checkpointing"); or it does not, and the smallest change that fits.
// A yes-or-no question ("can I …?") is answered in those words; any other
// query gets the same band in the verdict's words, so the header never
// says ❌ when one-line settings make it fit (docs/contracts.md §3.2).

// Answers, as `vram --json` writes them.
const (
	AnswerYes     = "yes"
	AnswerYesWith = "yes-with"
	AnswerNo      = "no"
)

// answer is the header's verdict and the answer behind it.
type answer struct {
	kind     string
	settings []string // yes-with: the settings that make it fit, as query words
	band     reply.Band
	text     string
}

// planAnswer answers a planned (training or transformers) query.
func planAnswer(q query.Query, w memory.Workload, fit memory.Fit, est memory.Breakdown, p plan.Result) answer {
	gpu := q.GPU
	of := func(total int64) string {
		return fmt.Sprintf("%s of %s", strings.TrimSuffix(layout.GiB(total), " GiB"), layout.GiB(gpu.UsableBytes))
	}
	switch {
	case fit != memory.FitDoesNotFit:
		a := answer{kind: AnswerYes, band: bandOf(fit), text: shortVerdictText(fit, est.TotalBytes, gpu)}
		if q.YesNo {
			a.text = "Yes — " + of(est.TotalBytes)
			if fit == memory.FitTight {
				a.text = "Yes, just — " + of(est.TotalBytes)
			}
		}
		return a
	case p.Fits && keepsWhatWasAsked(p):
		names := fixNames(p.Stages)
		a := answer{kind: AnswerYesWith, band: bandOf(p.Fit), settings: planSettings(w, p)}
		a.text = fmt.Sprintf("fits with %s: %s", names, of(p.FinalEstimate.TotalBytes))
		if q.YesNo {
			a.text = fmt.Sprintf("Yes — with %s (%s)", names, of(p.FinalEstimate.TotalBytes))
		}
		return a
	}
	a := answer{kind: AnswerNo, band: reply.BandNo, text: shortVerdictText(fit, est.TotalBytes, gpu)}
	if q.YesNo {
		a.text = "No — " + noText(p, gpu.Name)
	}
	return a
}

// noText says what would fit when the workload as asked does not.
func noText(p plan.Result, gpu string) string {
	switch {
	case p.Fits:
		return fmt.Sprintf("the smallest change that fits is %s (%s per GPU)", fixNames(p.Stages), layout.GiB(p.FinalEstimate.TotalBytes))
	case p.ScaleOut != nil:
		return fmt.Sprintf("not on %s: it fits on %d of them (%s per GPU)", gpu, p.ScaleOut.GPUs, layout.GiB(p.ScaleOut.Estimate.TotalBytes))
	}
	return fmt.Sprintf("it needs %s per GPU even after every change: see the GPUs below", layout.GiB(p.FinalEstimate.TotalBytes))
}

// keepsWhatWasAsked reports whether a plan keeps the method, the weights'
// precision and the hardware: settings, not another job.
func keepsWhatWasAsked(p plan.Result) bool {
	return !p.ChangedMethod && !p.Offloads && !p.AddsGPUs
}

// fixNames names a plan's fixes as a sentence does: "gradient
// checkpointing and a chunked loss".
func fixNames(stages []fix.Stage) string {
	var names []string
	for _, st := range stages {
		for _, f := range st.Fixes {
			names = append(names, f.Name)
		}
	}
	switch len(names) {
	case 0:
		return "no change"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// planSettings are the settings a plan changes, as query words ("gc=on",
// "bs=2 ga=4").
func planSettings(w memory.Workload, p plan.Result) []string {
	var out []string
	for _, st := range p.Stages {
		for _, f := range st.Fixes {
			for _, kv := range query.FixChange(f, w, p.Final) {
				out = append(out, kv.Key+"="+kv.Value)
			}
		}
	}
	return out
}
