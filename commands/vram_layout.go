package commands

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/advisor/memory"
	"github.com/vrambot/vrambot/advisor/serving"
	"github.com/vrambot/vrambot/pricing"
	"github.com/vrambot/vrambot/reply"
)

// The /vram reply is read in two parts (reply package doc): the lead a
// channel sees — the verdict, the memory bar, the few changes worth making
// each with its snippet and a button that applies it, the best offers and
// one line of assumptions — and the details with the rest.

// Lead limits: what a reader takes in at a glance. With the header,
// summary, offers, context and buttons, a lead is at most 12 blocks.
const (
	leadFixes  = 3
	leadOffers = 3
	// leadNotes are the assumptions that are not defaults (where the model
	// came from, a bf16 warning) shown in the lead; the rest are in the details.
	leadNotes     = 2
	leadNoteRunes = 280
)

// vramBand is the reply band of a fit.
func vramBand(f memory.Fit) reply.Band {
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
func vramShortVerdict(f memory.Fit, total int64, g catalog.GPU) string {
	of := fmt.Sprintf("%s of %s", strings.TrimSuffix(vramGiB(total), " GiB"), vramGiB(g.UsableBytes))
	switch f {
	case memory.FitFits:
		return "fits " + of
	case memory.FitTight:
		return "tight: " + of
	}
	return "needs " + of
}

// vramBar pictures the estimate against the GPU's usable memory.
func vramBar(b memory.Breakdown, g catalog.GPU) *reply.Bar {
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
	bar := &reply.Bar{CapacityBytes: g.UsableBytes, Capacity: vramGiB(g.UsableBytes) + " usable"}
	for _, p := range parts {
		// A part under 1% of the total is too small to draw or to matter.
		if p.n <= 0 || p.n*100 < b.TotalBytes {
			continue
		}
		bar.Parts = append(bar.Parts, reply.BarPart{Mark: p.mark, Label: p.label, Value: vramGiB(p.n), Bytes: p.n})
	}
	return bar
}

// fixSettings are the query settings each fix of the catalogue changes,
// so that its button can run the query again with it (the values come
// from the plan's final workload).
var fixSettings = map[string][]string{
	fix.GradCheckpointing: {"gc"}, fix.FlashAttention: {"attn"}, fix.MixedPrecision: {"precision"},
	fix.HalfPrecision: {"precision"}, fix.Int8Weights: {"precision"}, fix.GradAccum: {"bs", "ga"},
	fix.SmallerBatch: {"bs"}, fix.LoRA: {"method"}, fix.QLoRA: {"method"}, fix.Optim8bit: {"optim"},
	fix.Zero2: {"zero", "gpus"}, fix.Zero3: {"zero", "gpus"}, fix.ZeroOffload: {"offload", "zero"},
	fix.ParamOffload: {"offload", "zero"}, fix.TensorParallel: {"tp", "gpus"}, fix.MaxModelLen: {"seq"},
	fix.FP8KVCache: {"kv"}, fix.ChunkedLoss: {"loss"}, fix.OptimizerInBackward: {"optim-in-bwd"},
	fix.ActivationOffload: {"act-offload"}, fix.NF4Weights: {"precision"},
}

// settingOf is w's value of a query setting, as the grammar writes it.
func settingOf(w memory.Workload, key string) string {
	switch key {
	case "method":
		return string(w.Method)
	case "precision":
		return string(w.Precision)
	case "optim":
		return string(w.Optimizer)
	case "bs":
		return strconv.Itoa(w.Batch)
	case "seq":
		return strconv.Itoa(w.SeqLen)
	case "gc":
		switch {
		case w.Checkpointing == memory.CheckpointSelective || w.Checkpointing == memory.CheckpointOffloaded:
			return string(w.Checkpointing)
		case w.GradCheckpointing:
			return "on"
		}
		return "off"
	case "attn":
		return string(w.Attention)
	case "kv":
		return w.KVCacheDtype
	case "engine":
		return w.Engine
	case "zero":
		return strconv.Itoa(w.ZeroStage)
	case "offload":
		return string(w.Offload)
	case "gpus":
		return strconv.Itoa(max(1, w.GPUs))
	case "tp":
		return strconv.Itoa(max(1, w.TP))
	case "pp":
		return strconv.Itoa(max(1, w.PP))
	case "loss":
		if w.ChunkedLoss || w.Loss == memory.LossChunked {
			return "chunked"
		}
		return "standard"
	case "optim-in-bwd":
		return onOff(w.OptimizerInBackward)
	case "act-offload":
		return onOff(w.ActivationOffload)
	case "ga":
		return strconv.Itoa(max(1, w.GradAccumSteps))
	case "rank":
		return strconv.Itoa(w.LoRARank)
	case "targets":
		return w.LoRATargets
	}
	return ""
}

// change is a set of query settings, as a button applies them.
type change []setting

// label is the change as a button says it: "Apply gc=on", "Try qlora",
// "Try tp=4 gpus=4".
func (c change) label() string {
	verb := "Apply"
	var words []string
	for _, s := range c {
		switch s.key {
		case "method":
			verb = "Try"
			words = append(words, s.value)
			continue
		case "gpus", "tp", "pp", "zero", "offload":
			verb = "Try"
		}
		words = append(words, s.key+"="+s.value)
	}
	return verb + " " + strings.Join(words, " ")
}

// applied is the query with the change: the method's own precision when
// the method changes.
func (c change) applied(base canonQuery) canonQuery {
	q := base
	for _, s := range c {
		if s.key == "method" {
			q.kv = slices.DeleteFunc(slices.Clone(q.kv), func(s setting) bool { return s.key == "precision" })
		}
		q = q.with(s.key, s.value)
	}
	return q
}

// fixChange is what fix f changes in the query, with values from the
// workload after the plan; nil when the grammar cannot say it (a fix in
// the user's code, a bigger GPU).
func fixChange(f fix.Fix, base, final memory.Workload) change {
	keys, ok := fixSettings[f.ID]
	if !ok {
		return nil
	}
	var c change
	for _, k := range keys {
		if v := settingOf(final, k); v != "" && v != settingOf(base, k) {
			c = append(c, setting{k, v})
		}
	}
	return c
}

// workloadChange is what differs between two workloads in the given
// settings, as the grammar writes it.
func workloadChange(base, after memory.Workload, keys ...string) change {
	var c change
	for _, k := range keys {
		if v := settingOf(after, k); v != "" && v != settingOf(base, k) {
			c = append(c, setting{k, v})
		}
	}
	return c
}

// words is the change as settings: "zero=3 gpus=16 gc=on".
func (c change) words() string {
	var out []string
	for _, s := range c {
		out = append(out, s.key+"="+s.value)
	}
	return strings.Join(out, " ")
}

// applyAction is the button that runs the query again with c applied, or
// nil when the query cannot carry it (a config.json given beside it) or
// the result would not parse.
func applyAction(n int, q Query, c change) *reply.Action {
	if len(c) == 0 || !q.canon.Runnable() {
		return nil
	}
	text := c.applied(q.canon).String()
	if text == q.canon.String() {
		return nil // nothing left to change
	}
	p, err := parseTokens(tokenizeQuery(text), nil)
	if err != nil {
		return nil
	}
	if p.model != nil { // a catalog model: the whole query can be checked
		if _, err := p.query(); err != nil {
			return nil
		}
	}
	return &reply.Action{ID: reply.ActionApplyPrefix + strconv.Itoa(n), Text: c.label(), Value: text}
}

// leadFixSection is one fix of the lead: its heading with the memory after
// it and its cost, its snippet directly under it, its button beside it.
func leadFixSection(n int, f fix.Fix, action *reply.Action) reply.Section {
	s := reply.Section{Title: fmt.Sprintf("%d. %s", n, f.Heading()), Action: action}
	var text []string
	if f.TotalAfterBytes != nil {
		after := "→ " + vramGiB(*f.TotalAfterBytes) + " per GPU"
		if f.SavesBytes != nil {
			after += " (saves " + vramGiB(*f.SavesBytes) + ")"
		}
		text = append(text, after)
	}
	if f.Cost != "" {
		text = append(text, "cost: "+f.Cost)
	}
	s.Text = strings.Join(text, " · ")
	if f.Snippet != "" {
		s.Code = []reply.Code{{Lang: f.SnippetLang, Text: f.Snippet}}
	}
	return s
}

// offerShortLine is one offer of the lead: provider, GPU × count, $/h and
// age (where and from which source are in the details and the footer).
func offerShortLine(o pricing.Offer) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s · %s × %d · %s/h", o.Provider, o.GPU, max(1, o.GPUCount), vramUSD(o.PricePerHourUSD))
	if o.Spot {
		b.WriteString(" spot")
	}
	if o.HoursToFinish != nil && o.CostToFinishUSD != nil {
		fmt.Fprintf(&b, " · %s to finish", vramUSD(*o.CostToFinishUSD))
	}
	b.WriteString(" · " + pricing.AgeText(o.AgeDays))
	if o.Stale {
		b.WriteString(" (stale)")
	}
	if o.Requested {
		b.WriteString(" · the GPU you named")
	}
	return b.String()
}

// leadOffersSection lists the best offers in short.
func leadOffersSection(title string, offers []pricing.Offer, lines func(int, pricing.Offer) string) reply.Section {
	s := reply.Section{Title: title}
	if len(offers) == 0 {
		s.Text = "No offer in the price data fits this workload."
		return s
	}
	for i, o := range offers[:min(len(offers), leadOffers)] {
		s.Items = append(s.Items, lines(i, o))
	}
	if len(offers) > leadOffers {
		s.Title += fmt.Sprintf(" (%d of %d; all in the details)", leadOffers, len(offers))
	}
	return s
}

// assumedSettings are the defaults the reading filled in, written as the
// settings that would change them: "bs=1 seq=2048 optim=adamw gc=off".
func assumedSettings(q Query, w memory.Workload) []string {
	given := map[string]bool{}
	for _, s := range q.canon.kv {
		given[s.key] = true
	}
	training := w.Method != memory.MethodInference
	served := serving.Engine(w.Engine).Serving()
	lora := w.Method == memory.MethodLoRA || w.Method == memory.MethodQLoRA
	var out []string
	if slices.Contains(q.Defaults, DefaultGPU) {
		out = append(out, "GPU "+q.GPU.Name)
	}
	if slices.Contains(q.Defaults, DefaultMethod) {
		out = append(out, string(w.Method))
	}
	keys := []struct {
		key  string
		when bool
	}{
		{"precision", true}, {"optim", training}, {"bs", !served}, {"seq", true}, {"gc", training},
		{"attn", true}, {"kv", !training}, {"engine", !training}, {"rank", lora}, {"targets", lora},
	}
	for _, k := range keys {
		if !k.when || given[k.key] {
			continue
		}
		if v := settingOf(w, k.key); v != "" && v != "0" {
			out = append(out, k.key+"="+v)
		}
	}
	return out
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
func leadContext(query string, q Query, w memory.Workload, notes []string, provenance []string) []string {
	var out []string
	if q.Natural || !sameReading(query, q.ReadAs) {
		line := "Read as `" + q.ReadAs + "`"
		if len(q.Ignored) > 0 {
			line += " (left out: " + strings.Join(q.Ignored, ", ") + ")"
		}
		out = append(out, line)
	}
	if a := assumedSettings(q, w); len(a) > 0 {
		out = append(out, "Assumed: "+strings.Join(a, " · "))
	}
	for i, n := range notes {
		if i == leadNotes {
			out = append(out, fmt.Sprintf("%s more in the details.", vramPlural(len(notes)-leadNotes, "note", "notes")))
			break
		}
		out = append(out, oneLine(n, leadNoteRunes))
	}
	if len(provenance) > 0 {
		out = append(out, strings.Join(provenance, "; "))
	}
	return out
}

// detailsTitle names the details of a reply titled title.
func detailsTitle(title string) string { return "Details · " + title }

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
	bar := &reply.Bar{CapacityBytes: r.TotalMemoryBytes, Capacity: vramGiB(r.TotalMemoryBytes)}
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
		bar.Parts = append(bar.Parts, reply.BarPart{Mark: p.mark, Label: p.label, Value: vramGiB(p.n), Bytes: p.n})
	}
	return bar
}

// change is what a serving change sets in the query: the differences
// between the deployment asked and the one the change makes.
func (a servingAnswer) change(c serving.Change) change {
	from, to := a.result, c.Result
	var out change
	if g := to.Deployment.GPU; g.Key != "" && g.Key != from.Deployment.GPU.Key && len(g.Aliases) > 0 {
		out = append(out, setting{"gpu", g.Aliases[0]})
	}
	if to.TP != from.TP && to.TP > 0 {
		out = append(out, setting{"tp", strconv.Itoa(to.TP)}, setting{"gpus", strconv.Itoa(to.TP * max(1, to.PP))})
	}
	if to.MaxModelLen != from.MaxModelLen && to.MaxModelLen > 0 {
		out = append(out, setting{"seq", strconv.Itoa(to.MaxModelLen)})
	}
	if to.KVCacheDtype != from.KVCacheDtype {
		if kv, ok := kvEnum.values[strings.ToLower(to.KVCacheDtype)]; ok {
			out = append(out, setting{"kv", kv})
		}
	}
	if to.MemoryFraction != from.MemoryFraction && to.MemoryFraction > 0 {
		out = append(out, setting{"gpu-util", strconv.FormatFloat(to.MemoryFraction, 'f', -1, 64)})
	}
	if q := to.Input.Model.Quant; q != nil && (from.Input.Model.Quant == nil || q.Method != from.Input.Model.Quant.Method) {
		if p, ok := precisionEnum.values[strings.ToLower(q.Method)]; ok {
			out = append(out, setting{"precision", p})
		}
	}
	if to.MaxNumSeqs != from.MaxNumSeqs && to.MaxNumSeqs > 0 {
		out = append(out, setting{"max-num-seqs", strconv.Itoa(to.MaxNumSeqs)})
	}
	return out
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
