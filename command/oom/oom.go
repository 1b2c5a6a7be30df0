package oom

import (
	"context"
	"fmt"
	"slices"
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
	// JobFile is the job the paste holds beside its traceback, when it
	// holds one (an addition to the contract).
	JobFile *JobFile `json:"job_file,omitempty"`
}

// Reply limits: a reply is read in ten seconds, and Slack clamps anyway.
const (
	maxOOMTitleRunes = 150 // Slack header block limit
	maxOOMOffers     = 5
	maxOOMCauses     = 4
)

// Diagnose parses and diagnoses a pasted OOM. With no OOM in the text it
// says so briefly (the bot stays silent in channels; the CLI prints it).
// A paste that holds its job too (a config or a launch line beside the
// traceback) is sized from the job, its model resolved with deps.Models.
// Either of deps may be nil.
func Diagnose(ctx context.Context, text string, deps Deps) Answer {
	offers := deps.Offers
	rep := oom.Parse(text)
	var d oom.Diagnosis
	var jf *JobFile
	if rep.Detected {
		var pj oom.PastedJob
		if jf, pj = pastedJob(ctx, rep, text, deps.Models); jf != nil && jf.Used {
			d = oom.DiagnoseJob(rep, pj)
		} else {
			d = oom.Diagnose(rep)
		}
	}
	res := Result{Report: rep, Diagnosis: d, JobFile: jf}
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
	if rep.NonFatal {
		r.Verdict.Band = reply.BandTight
	}
	// The lead: the first fixes, each with its snippet under it.
	fixes := leadOrder(d)
	shown := min(len(fixes), layout.LeadFixes)
	answer := map[string]int{}
	for i, f := range fixes[:shown] {
		r.Sections = append(r.Sections, layout.FixSection(i+1, f, nil))
		answer[f.ID] = i + 1
	}
	details := &reply.Reply{Kind: "oom", Title: layout.DetailsTitle(r.Title), Fields: fieldsOf(rep)}
	if rep.Job != nil && len(rep.Job.Read) > 0 {
		details.Sections = append(details.Sections, readSection(rep.Job))
	}
	if len(d.Causes) > 0 {
		details.Sections = append(details.Sections, causesSection(d.Causes))
	}
	if d.Sizing != nil {
		details.Sections = append(details.Sections, sizingSection(d.Sizing))
	}
	for _, st := range d.Stages {
		details.Sections = append(details.Sections, stageSection(st, answer))
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
	notes := contextLines(rep, d, jobLines(jf, d))
	for _, n := range notes[:min(len(notes), layout.LeadNotes)] {
		r.Context = append(r.Context, layout.OneLine(n, layout.LeadNoteRunes))
	}
	r.Context = append(r.Context, provenance...)
	details.Context = append(notes, provenance...)
	r.Details = details
	q := estimateQuery(rep, d)
	if jf != nil && jf.Used {
		q = jobEstimateQuery(jf)
	}
	if q != "" {
		r.Actions = []reply.Action{{ID: reply.ActionEstimate, Text: "Estimate this workload", Value: q}}
	}
	return Answer{Reply: r, Result: res}
}

// leadOrder is the order the answer shows the fixes in: the stages' order,
// with the fixes the paste's numbers show cannot close the gap after all
// the others (they say so in their detail).
func leadOrder(d oom.Diagnosis) []fix.Fix {
	var fixes, short []fix.Fix
	for _, st := range d.Stages {
		for _, f := range st.Fixes {
			if slices.Contains(d.FallShort, f.ID) {
				short = append(short, f)
				continue
			}
			fixes = append(fixes, f)
		}
	}
	return append(fixes, short...)
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
	s := d.Sizing
	if s == nil {
		s = d.SetAside
	}
	if s != nil {
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
	if r.NonFatal {
		return "TensorFlow allocator warning (not a failure)"
	}
	switch r.ErrorKind {
	case "pinned-host-alloc-failed":
		return "Pinned host memory OOM"
	case oom.KindDataLoaderShm:
		return "Shared memory (/dev/shm) OOM"
	case oom.KindNCCL:
		return "NCCL OOM"
	case oom.KindCUDADriver:
		return "CUDA driver OOM"
	case oom.KindCuPy:
		return "CuPy OOM"
	case oom.KindVLLMCumem:
		return "vLLM sleep-mode OOM"
	}
	switch r.Engine {
	case oom.StackTensorRTLLM:
		return "TensorRT-LLM OOM"
	case oom.StackTensorRT:
		return "TensorRT OOM"
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
	if r.Engine == "text-generation-inference" && r.Format == oom.FormatOther {
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
	if stack := r.Engine; stack != "" && r.Framework == oom.FrameworkOther {
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

// stageSection lists a stage's fixes; the snippets of those the answer
// shows (answer: the fix's number there) are in the lead, so not repeated.
func stageSection(st fix.Stage, answer map[string]int) reply.Section {
	s := reply.Section{Title: fmt.Sprintf("Stage %d: %s", st.Stage, st.Title)}
	for i, f := range st.Fixes {
		item := fmt.Sprintf("%d) %s", i+1, f.Heading())
		if f.SavesBytes != nil && f.TotalAfterBytes != nil {
			item += fmt.Sprintf(" — saves %s → %s per GPU", units.FormatGiB(*f.SavesBytes), units.FormatGiB(*f.TotalAfterBytes))
		}
		if f.Cost != "" {
			item += " — cost: " + f.Cost
		}
		n, inAnswer := answer[f.ID]
		if inAnswer && f.Snippet != "" {
			item += fmt.Sprintf(" — snippet: fix %d of the answer", n)
		}
		s.Items = append(s.Items, item)
		if f.Snippet != "" && !inAnswer {
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

// contextLines say what the paste did not say, so nobody reads a guess
// as a fact: what was read from it, what its numbers measured, then the
// job it holds (job), then what is missing.
func contextLines(r oom.Report, d oom.Diagnosis, job []string) []string {
	var out []string
	if line := readLine(r.Job); line != "" {
		out = append(out, line)
	}
	if line := measuredLine(d.Measured); line != "" {
		out = append(out, line)
	}
	out = append(out, job...)
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
	if r.Phase == oom.PhaseUnknown && (r.Job == nil || r.Job.Where == oom.WhereUnknown) {
		missing = append(missing, "where in the job it happened (no telling stack frame)")
	}
	if len(missing) > 0 {
		out = append(out, "Not in the paste: "+strings.Join(missing, ", ")+".")
	}
	if r.ModelHint != nil {
		out = append(out, "Model named in the paste: "+*r.ModelHint+".")
	}
	switch {
	case d.Sizing != nil:
		out = append(out, "Savings are the /vram estimator's for the workload the paste names; "+strings.Join(d.Sizing.Workload.Assumptions, "; ")+".")
	case d.Measured != nil && d.Measured.Trusted == oom.TrustMeasurement:
		out = append(out, "Fix savings are not quantified: the estimate of the job as read disagrees with the paste's own numbers, which are what the fixes are sized against.")
	default:
		out = append(out, "Fix savings are not quantified: the paste does not describe the workload; `/vram` estimates one.")
	}
	return out
}

// readOrder is the order the settings read from a paste are listed in:
// what ran first, then its sizes.
var readOrder = []string{"model", "method", "engine", "quantization", "trainable_params", "zero_stage", "sharding", "offload", "tp",
	"gpus", "max_model_len", "n_ctx", "ngl", "gguf_type", "max_seqs", "batched_tokens", "batch", "grad_accum_steps", "seq_len", "precision",
	"gradient_checkpointing", "optimizer", "gpu_memory_utilization", "kv_cache_dtype"}

// readWords names a setting in the reply.
var readWords = map[string]string{"trainable_params": "trainable params", "zero_stage": "ZeRO stage", "max_model_len": "max_model_len",
	"n_ctx": "-c", "ngl": "-ngl", "gguf_type": "GGUF", "max_seqs": "max sequences", "batched_tokens": "batched tokens", "grad_accum_steps": "accumulation",
	"seq_len": "sequence length", "gradient_checkpointing": "checkpointing", "gpu_memory_utilization": "gpu_memory_utilization",
	"kv_cache_dtype": "KV dtype", "tp": "tensor parallel"}

// sortedReadings are the job's readings in readOrder.
func sortedReadings(j *oom.Job) []oom.Reading {
	out := slices.Clone(j.Read)
	rank := func(s string) int {
		if i := slices.Index(readOrder, s); i >= 0 {
			return i
		}
		return len(readOrder)
	}
	slices.SortStableFunc(out, func(a, b oom.Reading) int { return rank(a.Setting) - rank(b.Setting) })
	return out
}

// readLine is every setting read from the paste, in one line, with where
// in the job it failed: nobody should take a default for a reading.
func readLine(j *oom.Job) string {
	if j == nil || len(j.Read) == 0 {
		return ""
	}
	var parts []string
	for _, rd := range sortedReadings(j) {
		name := rd.Setting
		if w, ok := readWords[name]; ok {
			name = w
		}
		parts = append(parts, name+" "+rd.Value)
	}
	line := "Read from the paste: " + strings.Join(parts, " · ")
	if j.Where != oom.WhereUnknown {
		line += "; where it failed: " + j.Where
	}
	return line + "."
}

// measuredLine is the paste's own numbers as a measurement of the step,
// and which reading the fixes are sized from.
func measuredLine(m *oom.Measurement) string {
	if m == nil {
		return ""
	}
	s := "Y" + m.Text()[1:] + "."
	switch m.Trusted {
	case oom.TrustMeasurement:
		s += fmt.Sprintf(" The estimate of the job as read is %.1f× that and is set aside: the paste's own numbers are trusted, and the fixes are sized against them.", m.Ratio)
	case oom.TrustEstimate:
		s += " " + strings.ToUpper(m.Why[:1]) + m.Why[1:] + "."
	}
	return s
}

// readSection lists each setting read with the words it was read from.
func readSection(j *oom.Job) reply.Section {
	s := reply.Section{Title: "Read from the paste"}
	for _, rd := range sortedReadings(j) {
		s.Items = append(s.Items, fmt.Sprintf("%s: %s — from `%s`", rd.Setting, rd.Value, rd.From))
	}
	if j.Where != oom.WhereUnknown {
		s.Items = append(s.Items, "where it failed: "+j.Where+orEmpty(" — "+j.WhereEvidence, j.WhereEvidence))
	}
	return s
}

func orEmpty(s, cond string) string {
	if cond == "" {
		return ""
	}
	return s
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
