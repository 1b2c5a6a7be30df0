package vram

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/advisor/memory"
	"github.com/vrambot/vrambot/advisor/plan"
	"github.com/vrambot/vrambot/advisor/serving"
	"github.com/vrambot/vrambot/command/layout"
	"github.com/vrambot/vrambot/query"
	"github.com/vrambot/vrambot/reply"
)

// The /vram reply is read in two parts (reply package doc): the lead a
// channel sees — the verdict, the memory bar, the few changes worth making
// each with its snippet and a button that applies it, the best offers and
// one line of assumptions — and the details with the rest.

// vramBand is the reply band of a fit.
func bandOf(f memory.Fit) reply.Band {
	switch f {
	case memory.FitFits:
		return reply.BandFits
	case memory.FitTight:
		return reply.BandTight
	}
	return reply.BandNo
}

// vramShortVerdict is the header's verdict: "fits 10.9 of 23.6 GiB",
// "tight: 22.9 of 23.6 GiB", "needs 27.6 of 23.6 GiB".
func shortVerdictText(f memory.Fit, total int64, g catalog.GPU) string {
	of := fmt.Sprintf("%s of %s", strings.TrimSuffix(layout.GiB(total), " GiB"), layout.GiB(g.UsableBytes))
	switch f {
	case memory.FitFits:
		return "fits " + of
	case memory.FitTight:
		return "tight: " + of
	}
	return "needs " + of
}

// vramBar pictures the estimate against the GPU's usable memory.
func memoryBar(b memory.Breakdown, g catalog.GPU) *reply.Bar {
	parts := []struct {
		mark, label string
		n           int64
	}{
		{"W", "weights", b.WeightsBytes},
		{"G", "gradients", b.GradientsBytes},
		{"O", "optimizer", b.OptimizerBytes},
		{"A", "activations", b.ActivationsBytes},
		{"L", "logits", b.LogitsBytes},
		{"K", "KV cache", b.KVCacheBytes},
		{"R", "runtime", b.RuntimeOverheadBytes},
	}
	bar := &reply.Bar{CapacityBytes: g.UsableBytes, Capacity: layout.GiB(g.UsableBytes) + " usable"}
	for _, p := range parts {
		// A part under 1% of the total is too small to draw or to matter.
		if p.n <= 0 || p.n*100 < b.TotalBytes {
			continue
		}
		bar.Parts = append(bar.Parts, reply.BarPart{Mark: p.mark, Label: p.label, Value: layout.GiB(p.n), Bytes: p.n})
	}
	return bar
}

// applyAction is the button that runs the query again with c applied, or
// nil when the query cannot carry it (query.Query.Apply).
func applyAction(n int, q query.Query, c query.Change) *reply.Action {
	text, ok := q.Apply(c)
	if !ok {
		return nil
	}
	return &reply.Action{ID: reply.ActionApplyPrefix + strconv.Itoa(n), Text: c.Label(), Value: text}
}

// assumptionNotes are the assumptions that are not a default filled in
// ("… not given: …"): where the model came from, a GPU's missing bf16.
func assumptionNotes(assumptions []string) []string {
	var out []string
	for _, a := range assumptions {
		if !strings.Contains(a, "not given") {
			out = append(out, a)
		}
	}
	return out
}

// leadContext is the lead's one line of context, in a few elements: how
// the query was read, the defaults assumed, the notes that matter and the
// prices' provenance (once).
func leadContext(text string, q query.Query, w memory.Workload, notes []string, provenance []string) []string {
	var out []string
	if line := q.ReadingLine(text); line != "" {
		out = append(out, line)
	}
	if a := q.AssumedSettings(w); len(a) > 0 {
		out = append(out, "Assumed: "+strings.Join(a, " · "))
	}
	for i, n := range notes {
		if i == layout.LeadNotes {
			out = append(out, fmt.Sprintf("%s more in the details.", plural(len(notes)-layout.LeadNotes, "note", "notes")))
			break
		}
		out = append(out, layout.OneLine(n, layout.LeadNoteRunes))
	}
	if len(provenance) > 0 {
		out = append(out, strings.Join(provenance, "; "))
	}
	return out
}

// shortVerdict is the header's verdict of a serving answer: "starts: 7.4
// requests of 8k at once", "does not start".
func (a servingAnswer) shortVerdict() string {
	r := a.result
	switch {
	case !r.Starts:
		return "does not start"
	case r.Layers > 0:
		return fmt.Sprintf("starts: %d/%d layers on the GPU", r.GPULayers, r.Layers)
	case a.load > 0 && !serving.HoldsLoad(a.load)(r):
		return fmt.Sprintf("starts, holds %s of the %d sequences", concurrencyWords(r.MaxConcurrency), a.load)
	}
	return fmt.Sprintf("starts: %s requests of %s at once", concurrencyWords(r.MaxConcurrency), lenWords(r.MaxModelLen))
}

// bar pictures the engine's memory on one GPU: weights, the activation
// peak, what is not torch's, CUDA graphs and the KV cache it allocates.
func (a servingAnswer) bar() *reply.Bar {
	r := a.result
	parts := []struct {
		mark, label string
		n           int64
	}{
		{"W", "weights", r.WeightsBytes}, {"A", "activation peak", r.ActivationBytes},
		{"N", "non-torch", r.NonTorchBytes}, {"C", "CUDA graphs", r.GraphBytes},
		{"K", "KV cache", max(0, r.KVCacheAvailableBytes)},
	}
	bar := &reply.Bar{CapacityBytes: r.TotalMemoryBytes, Capacity: layout.GiB(r.TotalMemoryBytes)}
	if r.MemoryFraction > 0 && r.Layers == 0 {
		bar.Capacity += fmt.Sprintf(", %s plans with %.2f of it", a.engine.Label(), r.MemoryFraction)
	}
	var total int64
	for _, p := range parts {
		total += max(0, p.n)
	}
	for _, p := range parts {
		if p.n <= 0 || p.n*100 < total {
			continue
		}
		bar.Parts = append(bar.Parts, reply.BarPart{Mark: p.mark, Label: p.label, Value: layout.GiB(p.n), Bytes: p.n})
	}
	return bar
}

// change is what a serving change sets in the query: the differences
// between the deployment asked and the one the change makes.
func (a servingAnswer) change(c serving.Change) query.Change {
	from, to := a.result, c.Result
	var out query.Change
	if g := to.Deployment.GPU; g.Key != "" && g.Key != from.Deployment.GPU.Key && len(g.Aliases) > 0 {
		out = append(out, query.KeyValue{Key: "gpu", Value: g.Aliases[0]})
	}
	if to.TP != from.TP && to.TP > 0 {
		out = append(out, query.KeyValue{Key: "tp", Value: strconv.Itoa(to.TP)}, query.KeyValue{Key: "gpus", Value: strconv.Itoa(to.TP * max(1, to.PP))})
	}
	if to.MaxModelLen != from.MaxModelLen && to.MaxModelLen > 0 {
		out = append(out, query.KeyValue{Key: "seq", Value: strconv.Itoa(to.MaxModelLen)})
	}
	if to.KVCacheDtype != from.KVCacheDtype {
		if kv, ok := query.CanonicalValue("kv", to.KVCacheDtype); ok {
			out = append(out, query.KeyValue{Key: "kv", Value: kv})
		}
	}
	if to.MemoryFraction != from.MemoryFraction && to.MemoryFraction > 0 {
		out = append(out, query.KeyValue{Key: "gpu-util", Value: strconv.FormatFloat(to.MemoryFraction, 'f', -1, 64)})
	}
	if q := to.Input.Model.Quant; q != nil && (from.Input.Model.Quant == nil || q.Method != from.Input.Model.Quant.Method) {
		if p, ok := query.CanonicalValue("precision", q.Method); ok {
			out = append(out, query.KeyValue{Key: "precision", Value: p})
		}
	}
	if to.MaxNumSeqs != from.MaxNumSeqs && to.MaxNumSeqs > 0 {
		out = append(out, query.KeyValue{Key: "max-num-seqs", Value: strconv.Itoa(to.MaxNumSeqs)})
	}
	return out
}

// stageAction is the button of the n-th fix of a plan: it applies fixes
// 1 to n, whose memory the row shows ("→ 20.6 GiB" is the total after all
// of them), and says so ("Apply fixes 1–3"); the first says its settings
// ("Apply gc=on").
func stageAction(n int, q query.Query, w memory.Workload, p plan.Result, fixes []fix.Fix) *reply.Action {
	if n > len(p.After) {
		return nil
	}
	after := p.After[n-1]
	var c query.Change
	for _, f := range fixes {
		c = c.Merge(query.FixChange(f, w, after))
	}
	want := func(key string) string { return query.SettingOf(after, key) }
	text, ok := q.ApplyExplicit(c, want)
	if !ok {
		return nil
	}
	a := &reply.Action{ID: reply.ActionApplyPrefix + strconv.Itoa(n), Text: c.Label(), Value: text}
	if n > 1 {
		a.Text = fmt.Sprintf("Apply fixes 1–%d", n)
	}
	return a
}
