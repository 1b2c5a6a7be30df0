package oom

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/advisor/oom"
	"github.com/vrambot/vrambot/advisor/units"
	"github.com/vrambot/vrambot/command/layout"
	"github.com/vrambot/vrambot/pricing"
	"github.com/vrambot/vrambot/query"
	"github.com/vrambot/vrambot/reply"
)

// OfferFinder returns the best-priced offers that meet a requirement and
// their provenance, from a cache (pricing.Book implements it).
type OfferFinder interface {
	FindOffers(ctx context.Context, req pricing.Requirement) ([]pricing.Offer, []string)
}

// Answer is an OOM diagnosis: the reply to show and the structured result
// that `vrambot oom --json` prints.
type Answer struct {
	reply.Reply
	Result Result
}

// Result is `vrambot oom --json` (docs/contracts.md §3): every field of the
// parsed report at the top level, the diagnosis, and (an addition to the
// contract) the offers that fit when the diagnosis points at a bigger GPU.
type Result struct {
	oom.Report
	Diagnosis oom.Diagnosis   `json:"diagnosis"`
	Offers    []pricing.Offer `json:"offers,omitempty"`
}

// Reply limits: a reply is read in ten seconds, and Slack clamps anyway.
const (
	maxOOMTitleRunes = 150 // Slack header block limit
	maxOOMOffers     = 5
	maxOOMCauses     = 4
)

// Diagnose parses and diagnoses a pasted OOM. With no OOM in the text it
// says so briefly (the bot stays silent in channels; the CLI prints it).
// offers may be nil.
func Diagnose(ctx context.Context, text string, offers OfferFinder) Answer {
	rep := oom.Parse(text)
	d := oom.Diagnose(rep)
	res := Result{Report: rep, Diagnosis: d}
	if !rep.Detected {
		return Answer{Result: res, Reply: reply.Reply{
			Kind:    "oom",
			Title:   "No out-of-memory error found",
			Summary: "The text holds no OOM message this bot knows. Paste the whole error, from the traceback to the last line of the message.",
		}}
	}
	r := reply.Reply{
		Kind:    "oom",
		Title:   layout.OneLine(titleText(rep), maxOOMTitleRunes),
		Verdict: &reply.Verdict{Band: reply.BandNo},
		Bar:     memoryBar(rep),
		Summary: summaryText(d),
	}
	if rep.Extra["non_fatal"] == true {
		r.Verdict.Band = reply.BandTight
	}
	// The lead: the first fixes, each with its snippet under it.
	var fixes []fix.Fix
	for _, st := range d.Stages {
		fixes = append(fixes, st.Fixes...)
	}
	shown := min(len(fixes), layout.LeadFixes)
	for i, f := range fixes[:shown] {
		r.Sections = append(r.Sections, layout.FixSection(i+1, f, nil))
	}
	details := &reply.Reply{Kind: "oom", Title: layout.DetailsTitle(r.Title), Fields: fieldsOf(rep)}
	if len(d.Causes) > 0 {
		details.Sections = append(details.Sections, causesSection(d.Causes))
	}
	if d.Sizing != nil {
		details.Sections = append(details.Sections, sizingSection(d.Sizing))
	}
	n := 0
	for _, st := range d.Stages {
		details.Sections = append(details.Sections, stageSection(st, &n, shown))
	}
	var provenance []string
	if d.NeedBytes > 0 && offers != nil {
		found, prov := offers.FindOffers(ctx, pricing.Requirement{MemoryPerGPUBytes: d.NeedBytes, GPUCount: 1})
		provenance = prov
		if len(found) > 0 {
			res.Offers = found
			title := fmt.Sprintf("GPUs with more than %s", oom.GiB(d.NeedBytes))
			r.Sections = append(r.Sections, layout.OffersSection(title, found, func(_ int, o pricing.Offer) string { return layout.OfferLine(o) }))
			details.Sections = append(details.Sections, layout.OfferTable(title, found[:min(len(found), maxOOMOffers)]))
		}
	}
	notes := contextLines(rep, d)
	for _, n := range notes[:min(len(notes), layout.LeadNotes)] {
		r.Context = append(r.Context, layout.OneLine(n, layout.LeadNoteRunes))
	}
	r.Context = append(r.Context, provenance...)
	details.Context = append(notes, provenance...)
	r.Details = details
	if q := estimateQuery(rep, d); q != "" {
		r.Actions = []reply.Action{{ID: reply.ActionEstimate, Text: "Estimate this workload", Value: q}}
	}
	return Answer{Reply: r, Result: res}
}

// oomBar pictures the device when the paste gives its capacity: what the
// process holds (its reserved but unused share apart), other processes,
// then the request that failed, running past the card when it did not fit.
func memoryBar(r oom.Report) *reply.Bar {
	if r.TotalCapacityBytes == nil || *r.TotalCapacityBytes <= 0 {
		return nil
	}
	val := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	unused := val(r.ReservedUnallocatedBytes)
	held := val(r.ProcessInUseBytes) - unused
	if r.ProcessInUseBytes == nil {
		held = val(r.AllocatedByFrameworkBytes)
		if r.ReservedByFrameworkBytes != nil {
			unused = max(0, val(r.ReservedByFrameworkBytes)-held)
		}
	}
	var others int64
	for _, p := range r.OtherProcesses {
		others += p.Bytes
	}
	if held <= 0 && others <= 0 {
		return nil
	}
	bar := &reply.Bar{CapacityBytes: *r.TotalCapacityBytes, Capacity: oom.GiB(*r.TotalCapacityBytes)}
	for _, p := range []struct {
		mark, label string
		n           int64
	}{
		{"P", "this process", held}, {"U", "reserved, unused", unused}, {"X", "other processes", others},
		{"!", "the request that failed", val(r.TriedToAllocateBytes)},
	} {
		if p.n > 0 {
			bar.Parts = append(bar.Parts, reply.BarPart{Mark: p.mark, Label: p.label, Value: oom.GiB(p.n), Bytes: p.n})
		}
	}
	return bar
}

// estimateQuery is the /vram query of the workload a paste names (the
// "Estimate this workload" button), or "" when it names no model.
func estimateQuery(r oom.Report, d oom.Diagnosis) string {
	var q query.Words
	if s := d.Sizing; s != nil {
		w := s.Workload
		q.Model, q.Method = w.ModelName, string(w.Method)
		if g, ok := catalog.LookupGPU(s.GPU); ok && len(g.Aliases) > 0 {
			q.GPU = g.Aliases[0]
		} else if s.UsableBytes > 0 {
			q.GPU = query.BudgetWord(s.UsableBytes)
		}
		if w.GPUs > 1 {
			q.Count = w.GPUs
		}
		q.Settings = []query.KeyValue{{Key: "bs", Value: strconv.Itoa(max(1, w.Batch))}, {Key: "seq", Value: strconv.Itoa(max(1, w.SeqLen))}}
	} else if r.ModelHint != nil {
		q.Model = *r.ModelHint
		if r.GPUHint != nil {
			if g, ok := catalog.LookupGPU(*r.GPUHint); ok && len(g.Aliases) > 0 {
				q.GPU = g.Aliases[0]
			}
		}
	}
	text, _ := q.Text()
	return text
}

// oomTitle is "CUDA OOM in backward on cuda:0 — tried 2.00 GiB of 79.15 GiB".
func titleText(r oom.Report) string {
	var b strings.Builder
	b.WriteString(labelOf(r))
	switch r.Phase {
	case oom.PhaseUnknown:
	case oom.PhaseLoad:
		b.WriteString(" at load")
	case oom.PhaseOptimizer:
		b.WriteString(" in optimizer.step")
	default:
		b.WriteString(" in " + r.Phase)
	}
	if r.Device != nil {
		b.WriteString(" on " + *r.Device)
	}
	switch {
	case r.TriedToAllocateBytes != nil && r.TotalCapacityBytes != nil:
		fmt.Fprintf(&b, " — tried %s of %s", oom.GiB(*r.TriedToAllocateBytes), oom.GiB(*r.TotalCapacityBytes))
	case r.TriedToAllocateBytes != nil:
		fmt.Fprintf(&b, " — tried %s", oom.GiB(*r.TriedToAllocateBytes))
	case r.TotalCapacityBytes != nil:
		fmt.Fprintf(&b, " — %s device", oom.GiB(*r.TotalCapacityBytes))
	}
	return b.String()
}

// oomLabel names the kind of OOM the way people say it.
func labelOf(r oom.Report) string {
	if r.Extra["non_fatal"] == true {
		return "TensorFlow allocator warning (not a failure)"
	}
	switch r.Extra["kind"] {
	case "pinned-host-alloc-failed":
		return "Pinned host memory OOM"
	case oom.KindDataLoaderShm:
		return "Shared memory (/dev/shm) OOM"
	case oom.KindNCCL:
		return "NCCL OOM"
	}
	switch r.Extra["stack"] {
	case oom.StackLlamaCPP:
		return "llama.cpp OOM"
	case oom.StackOllama:
		return "Ollama OOM"
	case "sglang":
		return "SGLang OOM"
	}
	if r.Device != nil && *r.Device == "cpu" {
		return "Host RAM OOM"
	}
	if r.Extra["stack"] == "text-generation-inference" && r.Format == oom.FormatOther {
		return "TGI out of memory"
	}
	switch r.Format {
	case oom.FormatHIP:
		return "HIP OOM"
	case oom.FormatMPS:
		return "MPS OOM"
	case oom.FormatCPUAlloc:
		return "Host RAM OOM"
	case oom.FormatTFBFC:
		return "TensorFlow OOM"
	case oom.FormatXLA:
		return "XLA OOM"
	case oom.FormatVLLMKV:
		return "vLLM KV-cache error"
	case oom.FormatCuBLAS:
		return "cuBLAS allocation failure"
	}
	switch {
	case r.Device != nil && strings.HasPrefix(*r.Device, "xpu"):
		return "XPU OOM"
	case r.Device != nil && *r.Device == "cpu":
		return "Host RAM OOM"
	case r.Framework == oom.FrameworkTensorFlow:
		return "TensorFlow OOM"
	case r.Framework == oom.FrameworkJAX:
		return "JAX OOM"
	case r.Framework == oom.FrameworkVLLM:
		return "vLLM OOM"
	}
	return "CUDA OOM"
}

// oomSummary is the top cause in one sentence.
func summaryText(d oom.Diagnosis) string {
	if len(d.Causes) == 0 {
		return ""
	}
	c := d.Causes[0]
	return c.Title + ": " + c.Evidence + "."
}

func fieldsOf(r oom.Report) []reply.Field {
	var fs []reply.Field
	add := func(label string, v *int64) {
		if v != nil {
			fs = append(fs, reply.Field{Label: label, Value: oom.GiB(*v)})
		}
	}
	add("Tried to allocate", r.TriedToAllocateBytes)
	add("Total capacity", r.TotalCapacityBytes)
	add("Free", r.FreeBytes)
	add("Allocated by framework", r.AllocatedByFrameworkBytes)
	add("Reserved by framework", r.ReservedByFrameworkBytes)
	add("Reserved, unallocated", r.ReservedUnallocatedBytes)
	add("This process", r.ProcessInUseBytes)
	for i, p := range r.OtherProcesses {
		if i == 3 {
			fs = append(fs, reply.Field{Label: "Other processes", Value: fmt.Sprintf("%d more", len(r.OtherProcesses)-3)})
			break
		}
		label := "Other process"
		if p.PID > 0 {
			label = fmt.Sprintf("Process %d", p.PID)
		}
		fs = append(fs, reply.Field{Label: label, Value: oom.GiB(p.Bytes)})
	}
	fs = append(fs, reply.Field{Label: "Framework", Value: frameworkLabel(r)})
	if r.Occurrences > 1 {
		fs = append(fs, reply.Field{Label: "OOMs in paste", Value: fmt.Sprint(r.Occurrences)})
	}
	return fs
}

// frameworkLabel names the tool that failed: the report's framework and
// format, and the engine the reader recorded (extra.stack: SGLang, TGI,
// llama.cpp, Ollama) where the corpus vocabulary says only "other"
// (internal/oomcorpus/public/README.md).
func frameworkLabel(r oom.Report) string {
	if stack, ok := r.Extra["stack"].(string); ok && stack != "" && r.Framework == oom.FrameworkOther {
		return stack + " (" + r.Format + ")"
	}
	return r.Framework + " (" + r.Format + ")"
}

func causesSection(cs []oom.Cause) reply.Section {
	s := reply.Section{Title: "Likely causes"}
	for _, c := range cs[:min(len(cs), maxOOMCauses)] {
		s.Items = append(s.Items, c.Title+" — "+c.Evidence)
	}
	return s
}

// stageSection lists a stage's fixes; n counts the fixes before it, and
// the snippets of the first shown are in the lead, so not repeated here.
func stageSection(st fix.Stage, n *int, shown int) reply.Section {
	s := reply.Section{Title: fmt.Sprintf("Stage %d: %s", st.Stage, st.Title)}
	for i, f := range st.Fixes {
		*n++
		item := fmt.Sprintf("%d) %s", i+1, f.Heading())
		if f.SavesBytes != nil && f.TotalAfterBytes != nil {
			item += fmt.Sprintf(" — saves %s → %s per GPU", units.FormatGiB(*f.SavesBytes), units.FormatGiB(*f.TotalAfterBytes))
		}
		if f.Cost != "" {
			item += " — cost: " + f.Cost
		}
		if *n <= shown && f.Snippet != "" {
			item += fmt.Sprintf(" — snippet: fix %d of the answer", *n)
		}
		s.Items = append(s.Items, item)
		if f.Snippet != "" && *n > shown {
			s.Code = append(s.Code, reply.Code{Lang: f.SnippetLang, Text: snippetHeader(f.SnippetLang, i+1) + f.Snippet})
		}
	}
	return s
}

// snippetHeader labels a code block with the number of its fix, in the
// snippet's comment syntax (JSON has none, so it gets no label).
func snippetHeader(lang string, n int) string {
	switch lang {
	case "json", "":
		return ""
	case "text":
		return fmt.Sprintf("(%d) ", n)
	}
	return fmt.Sprintf("# %d)\n", n)
}

// oomContext says what the paste did not say, so nobody reads a guess as
// a fact.
func contextLines(r oom.Report, d oom.Diagnosis) []string {
	var out []string
	if r.Occurrences > 1 {
		out = append(out, fmt.Sprintf("The paste holds %d OOM messages; the numbers are from the first.", r.Occurrences))
	}
	var missing []string
	if r.TriedToAllocateBytes == nil {
		missing = append(missing, "the request size")
	}
	if r.TotalCapacityBytes == nil && (r.Device == nil || *r.Device != "cpu") {
		missing = append(missing, "the GPU's capacity")
	}
	if r.Device == nil {
		missing = append(missing, "the device")
	}
	if r.Phase == oom.PhaseUnknown {
		missing = append(missing, "where in the job it happened (no telling stack frame)")
	}
	if len(missing) > 0 {
		out = append(out, "Not in the paste: "+strings.Join(missing, ", ")+".")
	}
	if r.ModelHint != nil {
		out = append(out, "Model named in the paste: "+*r.ModelHint+".")
	}
	if d.Sizing != nil {
		out = append(out, "Savings are the /vram estimator's for the workload the paste names; "+strings.Join(d.Sizing.Workload.Assumptions, "; ")+".")
	} else {
		out = append(out, "Fix savings are not quantified: the paste does not describe the workload; `/vram` estimates one.")
	}
	return out
}

// sizingSection is the estimate of the workload the paste names, as /vram
// gives it.
func sizingSection(s *oom.Sizing) reply.Section {
	w := s.Workload
	sec := reply.Section{
		Title: "The workload in the paste, estimated",
		Text: fmt.Sprintf("%s, %s, %s, batch %d × %d tokens on %s: %s per GPU of %s usable (%s).",
			w.ModelName, w.Method, w.Precision, w.Batch, w.SeqLen, s.GPU, units.FormatGiB(s.Estimate.TotalBytes), units.FormatGiB(s.UsableBytes), s.Fit),
	}
	for _, p := range []struct {
		label string
		n     int64
	}{
		{"weights", s.Estimate.WeightsBytes}, {"gradients", s.Estimate.GradientsBytes}, {"optimizer states", s.Estimate.OptimizerBytes},
		{"activations", s.Estimate.ActivationsBytes}, {"logits", s.Estimate.LogitsBytes}, {"KV cache", s.Estimate.KVCacheBytes},
	} {
		if p.n > 0 {
			sec.Items = append(sec.Items, fmt.Sprintf("%s %s", p.label, units.FormatGiB(p.n)))
		}
	}
	return sec
}
