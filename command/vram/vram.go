package vram

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/fix"
	"github.com/vrambot/vrambot/advisor/memory"
	"github.com/vrambot/vrambot/advisor/plan"
	"github.com/vrambot/vrambot/advisor/serving"
	"github.com/vrambot/vrambot/command/layout"
	"github.com/vrambot/vrambot/models"
	"github.com/vrambot/vrambot/pricing"
	"github.com/vrambot/vrambot/query"
	"github.com/vrambot/vrambot/reply"
)

// OfferFinder returns the best-priced offers that meet a requirement
// (cheapest first, the requested GPU included) and provenance lines: which
// source, how old, which fallbacks were used. It reads a cache and never
// blocks on the network. pricing.Book implements it.
type OfferFinder interface {
	FindOffers(ctx context.Context, req pricing.Requirement) ([]pricing.Offer, []string)
}

// VRAMResult is the structured /vram answer: `vrambot vram --json`
// (docs/contracts.md §3). Workload, Estimate, Fits and HeadroomBytes describe the
// workload as asked; Stages are the fixes; Offers fit the plan's final
// workload. Fit (the band) and Verdict are additions to the contract.
type Result struct {
	Workload      Workload         `json:"workload"`
	Estimate      memory.Breakdown `json:"estimate"`
	GPU           GPU              `json:"gpu"`
	Fits          bool             `json:"fits"`
	Fit           memory.Fit       `json:"fit"`
	HeadroomBytes int64            `json:"headroom_bytes"`
	Verdict       string           `json:"verdict"`
	// Answer is a yes-or-no question's answer ("can I …?"): yes, yes-with
	// (the settings in AnswerSettings make it fit) or no.
	Answer         string   `json:"answer,omitempty"`
	AnswerSettings []string `json:"answer_settings,omitempty"`
	// ErrorBand is the estimator's measured error on this method's public
	// cases under this parallelism where enough are measured, else over
	// all of them (memory.ErrorBandOf); absent when none is known.
	ErrorBand *memory.ErrorBand `json:"error_band,omitempty"`
	// CostToFinish is the job's compute, present with tokens=.
	CostToFinish *Cost       `json:"cost_to_finish,omitempty"`
	Stages       []fix.Stage `json:"stages"`
	// ScaleOut keeps the user's method on more GPUs; set when the stages
	// change the method or nothing fits on one GPU.
	ScaleOut *ScaleOut       `json:"scale_out,omitempty"`
	Offers   []pricing.Offer `json:"offers"`
	// Serving is the serving engine's own arithmetic (engine=vllm, sglang,
	// tgi, llama.cpp, ollama): what it logs at start-up on this GPU, how
	// many sequences it holds, what a million tokens cost.
	Serving *Serving `json:"serving,omitempty"`
	// Job is what a job file said (vram --job; docs/jobs.md §1).
	Job *JobResult `json:"job,omitempty"`
}

// VRAMWorkload is the resolved workload with what the estimate used about
// the model: active_params (parameters a token passes through; params for
// a dense model) and the architecture facts (layers by attention kind, KV
// bytes per token, experts, quantisation), additions to docs/contracts.md §3.
type Workload struct {
	memory.Workload
	ActiveParams int64               `json:"active_params"`
	Architecture memory.Architecture `json:"architecture"`
}

// VRAMGPU is the GPU the workload was compared against.
type GPU struct {
	Name        string `json:"name"`
	Key         string `json:"key,omitempty"` // catalog key; empty for a memory budget
	UsableBytes int64  `json:"usable_bytes"`
}

// VRAMScaleOut is the multi-GPU alternative of plan.ScaleOut: the fixes it
// needs, the last of which adds the GPUs.
type ScaleOut struct {
	GPUs int `json:"gpus"`
	// AddedGPUs is how many more than the user's own.
	AddedGPUs  int         `json:"added_gpus"`
	TotalBytes int64       `json:"total_bytes"` // per GPU
	Stages     []fix.Stage `json:"stages"`
}

// VRAMCost is the compute of the job that cost to finish prices: FLOPs by
// method (memory.JobFLOPs) and the formula that gave them; the offers
// carry the hours and dollars at each GPU's utilisation.
type Cost struct {
	Tokens  int64   `json:"tokens"`
	FLOPs   float64 `json:"flops"`
	Formula string  `json:"formula"`
}

// ShareActionID is the Action ID of the "Share in channel" button; its value
// is the query, so the bot can re-run it and post the answer publicly. A
// query is at most maxQueryBytes (1000), within Slack's 2000-character limit
// on a button value.
const ShareActionID = "share"

// Deps are Estimate's collaborators. A nil field means none: models from
// the catalog (and sizes) only, no prices.
type Deps struct {
	Models query.ModelResolver
	Offers OfferFinder
}

// Answer is a /vram answer: the reply to show and the structured result
// that `vrambot vram --json` prints.
type Answer struct {
	reply.Reply
	Result Result
}

// Estimate answers a /vram query: the memory breakdown, fits or not, the
// staged fixes and the best-priced GPUs that fit the plan. The error is
// bad input (a *query.Error, with a message meant for the user) or a model
// that could not be resolved (the resolver's error, with its kind: not
// found, or the Hub unavailable).
func Estimate(ctx context.Context, text string, deps Deps) (Answer, error) {
	return estimate(ctx, text, nil, deps)
}

// EstimateConfig answers text for the model a Hugging Face config.json
// describes (vrambot vram --config, a config.json attached in Slack); name
// is how the reply calls it (models.ConfigName). The query names no model.
// A config that cannot be read is an errs.Invalid error naming the key.
func EstimateConfig(ctx context.Context, text string, config []byte, name string, deps Deps) (Answer, error) {
	res, err := models.FromConfig(config, name)
	if err != nil {
		return Answer{}, err
	}
	a, err := estimate(ctx, text, &res, deps)
	// The share button re-runs its query text, which does not carry the file.
	a.Reply.Actions = nil
	return a, err
}

func estimate(ctx context.Context, text string, preset *models.Resolution, deps Deps) (Answer, error) {
	q, err := query.ParseWith(ctx, text, deps.Models, preset)
	if err != nil {
		return Answer{}, err
	}
	offers := deps.Offers
	w := memory.Resolve(q.Workload)
	if w.Method == memory.MethodInference && serving.Engine(w.Engine).Serving() {
		return servingReply(ctx, text, q, w, offers), nil
	}
	est := memory.Estimate(w)
	fit, headroom := memory.Assess(est, q.GPU)
	p := plan.Plan(w, q.GPU, q.Framework)

	res := Result{
		Workload:      Workload{Workload: w, ActiveParams: w.Model.ActiveParams(), Architecture: memory.DescribeArchitecture(w)},
		Estimate:      est,
		GPU:           GPU{Name: q.GPU.Name, Key: q.GPU.Key, UsableBytes: q.GPU.UsableBytes},
		Fits:          fit != memory.FitDoesNotFit,
		Fit:           fit,
		HeadroomBytes: headroom,
		Verdict:       verdictText(fit, headroom, est, q.GPU),
		Stages:        p.Stages,
		Offers:        []pricing.Offer{},
	}
	if res.Workload.Assumptions == nil {
		res.Workload.Assumptions = []string{}
	}
	if b, ok := memory.ErrorBandOf(w); ok {
		res.ErrorBand = &b
	}
	if flops, formula := memory.JobFLOPs(p.Final); flops > 0 {
		res.CostToFinish = &Cost{Tokens: p.Final.Tokens, FLOPs: flops, Formula: formula}
	}
	if p.ScaleOut != nil {
		res.ScaleOut = &ScaleOut{GPUs: p.ScaleOut.GPUs, AddedGPUs: max(0, p.ScaleOut.GPUs-w.GPUs), TotalBytes: p.ScaleOut.Estimate.TotalBytes, Stages: p.ScaleOut.Stages}
	}

	var provenance []string
	if offers != nil {
		found, prov := offers.FindOffers(ctx, requirement(q, p))
		if found != nil {
			res.Offers = found
		}
		provenance = prov
	} else {
		provenance = []string{"prices: no price source configured"}
	}

	a := planAnswer(q, w, fit, est, p)
	if q.YesNo {
		res.Answer, res.AnswerSettings = a.kind, a.settings
	}
	return Answer{Reply: planReply(text, q, w, res, p, est, a, provenance), Result: res}, nil
}

// vramReply lays out a planned answer: the lead (verdict, bar, the first
// fixes with their snippets and buttons, the scale-out, the best offers,
// the assumptions in a line) and the details (the whole breakdown, every
// stage and offer, every assumption).
func planReply(text string, q query.Query, w memory.Workload, res Result, p plan.Result, est memory.Breakdown, a answer, provenance []string) reply.Reply {
	r := reply.Reply{
		Kind:      "vram",
		Title:     titleText(w, q.GPU),
		Verdict:   &reply.Verdict{Band: a.band, Text: a.text},
		Bar:       memoryBar(est, q.GPU),
		Summary:   summaryText(res, p),
		Context:   leadContext(text, q, w, assumptionNotes(w.Assumptions), provenance),
		Ephemeral: true,
		Actions:   []reply.Action{{ID: ShareActionID, Text: "Share in channel", Value: strings.TrimSpace(text)}},
	}
	var fixes []fix.Fix
	for _, st := range p.Stages {
		fixes = append(fixes, st.Fixes...)
	}
	shown := min(len(fixes), layout.LeadFixes)
	for i, f := range fixes[:shown] {
		r.Sections = append(r.Sections, layout.FixSection(i+1, f, stageAction(i+1, q, w, p, fixes[:i+1])))
	}
	if so := p.ScaleOut; so != nil && (p.ChangedMethod || !p.Fits) {
		r.Sections = append(r.Sections, scaleOutLead(so, w, q, shown+1))
	}
	r.Sections = append(r.Sections, layout.OffersSection("Best prices for the plan", res.Offers, func(_ int, o pricing.Offer) string { return layout.OfferLine(o) }))
	r.Details = &reply.Reply{
		Kind:     "vram",
		Title:    layout.DetailsTitle(r.Title),
		Fields:   breakdownFields(est),
		Sections: detailSections(res, p, w, shown),
		Context:  detailsContext(w, provenance),
	}
	return r
}

// scaleOutLead is the multi-GPU alternative in the lead: its memory per
// GPU and a button that shows it.
func scaleOutLead(so *plan.ScaleOut, w memory.Workload, q query.Query, n int) reply.Section {
	s := scaleOutSection(so, w)
	s.Code, s.Items = nil, nil // in the details
	c := query.WorkloadChange(w, so.Workload, "gpus", "zero", "offload", "tp", "pp", "gc", "bs")
	s.Text = fmt.Sprintf("%s per GPU", layout.GiB(so.Estimate.TotalBytes))
	if len(c) > 0 {
		s.Text += " with " + c.Words()
	}
	if a := applyAction(n, q, c); a != nil {
		a.Text = fmt.Sprintf("Show %d GPUs", so.GPUs)
		s.Action = a
	}
	return s
}

// vramServing answers a query for a serving engine: the verdict leads with
// the engine's start-up result on the GPU asked.
func servingReply(ctx context.Context, text string, q query.Query, w memory.Workload, offers OfferFinder) Answer {
	a := answerServing(ctx, q, w, offers)
	r := a.result
	if a.setup != nil {
		// The answer is for the setup sized: its GPUs and split.
		w.GPUs, w.TP = a.setup.GPUs, r.TP
	}
	est := memory.Estimate(w)
	fit := memory.FitDoesNotFit
	switch {
	case r.Starts && (a.load == 0 || serving.HoldsLoad(a.load)(r)):
		fit = memory.FitFits
	case r.Starts:
		fit = memory.FitTight
	}
	verdict := a.verdict()
	res := Result{
		Workload:      Workload{Workload: w, ActiveParams: w.Model.ActiveParams(), Architecture: memory.DescribeArchitecture(w)},
		Estimate:      est,
		GPU:           GPU{Name: q.GPU.Name, Key: q.GPU.Key, UsableBytes: q.GPU.UsableBytes},
		Fits:          r.Starts,
		Fit:           fit,
		HeadroomBytes: q.GPU.UsableBytes - est.TotalBytes,
		Verdict:       verdict,
		Stages:        a.servingStages(),
		Offers:        a.offers,
		Serving:       a.json(),
	}
	if res.Offers == nil {
		res.Offers = []pricing.Offer{}
	}
	if res.Workload.Assumptions == nil {
		res.Workload.Assumptions = []string{}
	}
	summary := verdict + "."
	if len(a.changes) > 0 {
		summary += "\nCheapest change: " + a.changes[0].Heading() + "."
	}
	assumptions := append(append([]string{}, w.Assumptions...), r.Assumptions...)
	gpus, leadNotes := max(1, w.GPUs), assumptionNotes(w.Assumptions)
	if a.setup != nil {
		gpus = a.setup.GPUs
		note := fmt.Sprintf("No GPU named: sized as the smallest %s setup that holds the %d sequences, %s", a.setup.GPUName, a.load, sizedWords(*a.setup))
		leadNotes = append([]string{note}, leadNotes...)
		assumptions = append([]string{note}, assumptions...)
	}
	title := fmt.Sprintf("%s · inference · %s · %s", w.ModelName, a.engine.Label(), gpuLabel(q.GPU, gpus))
	lead := reply.Reply{
		Kind:      "vram",
		Title:     title,
		Verdict:   &reply.Verdict{Band: bandOf(fit), Text: a.shortVerdict()},
		Bar:       a.bar(),
		Summary:   summary,
		Context:   leadContext(text, q, w, leadNotes, a.prov),
		Ephemeral: true,
		Actions:   []reply.Action{{ID: ShareActionID, Text: "Share in channel", Value: strings.TrimSpace(text)}},
	}
	for i, c := range a.changes[:min(len(a.changes), layout.LeadFixes)] {
		lead.Sections = append(lead.Sections, layout.FixSection(i+1, c.Fix, applyAction(i+1, q, a.change(c))))
	}
	if a.load > 0 {
		users := a.usersSection()
		users.Items = nil // every GPU's sizing is in the details
		lead.Sections = append(lead.Sections, users)
	}
	lead.Sections = append(lead.Sections, layout.OffersSection("Best prices to serve it", a.offers, func(i int, o pricing.Offer) string {
		line := layout.OfferLine(o)
		if i < len(a.costs) && a.costs[i].CostPerMillionTokensUSD != nil {
			line += " · " + layout.USD(*a.costs[i].CostPerMillionTokensUSD) + " per million tokens" + a.pricedAt()
		}
		return line
	}))
	context := assumptions
	if a.speed.Basis != "" {
		context = append(context, "throughput: "+a.speed.Basis)
	}
	lead.Details = &reply.Reply{
		Kind:     "vram",
		Title:    layout.DetailsTitle(title),
		Fields:   a.fields(),
		Sections: a.sections(w),
		Context:  append(context, a.prov...),
	}
	return Answer{Reply: lead, Result: res}
}

// vramRequirement is what the plan's final workload needs from a GPU offer.
func requirement(q query.Query, p plan.Result) pricing.Requirement {
	final := p.Final
	req := pricing.Requirement{
		MemoryPerGPUBytes: p.FinalEstimate.TotalBytes,
		GPUCount:          max(1, final.GPUs),
		// A defaulted bf16 would run as fp16 on a card without bf16 with the
		// same memory, so only an explicit bf16 rules those cards out.
		NeedBF16:     !slices.Contains(q.Defaults, query.DefaultPrecision) && (final.Precision == memory.PrecisionBF16 || final.Precision == memory.PrecisionMixedBF16),
		NeedFP8:      final.KVCacheDtype == "fp8",
		RequestedGPU: q.RequestedGPU,
	}
	if flops, formula := memory.JobFLOPs(final); flops > 0 {
		req.TrainFLOPs = flops
		req.Utilisation = map[string]float64{}
		seen := map[memory.GPUClass]string{}
		var classes []string
		for _, g := range catalog.GPUs() {
			u := memory.UtilisationFor(g)
			req.Utilisation[g.Key] = u.Share
			if _, ok := seen[u.Class]; !ok {
				seen[u.Class] = u.Source
				classes = append(classes, fmt.Sprintf("%s %.0f%% (%s)", u.Class, 100*u.Share, u.Source))
			}
		}
		req.UtilisationNote = fmt.Sprintf("cost to finish: %.3g FLOPs = %s, at a utilisation of dense TFLOPS by GPU class: %s",
			flops, formula, strings.Join(classes, "; "))
	}
	return req
}

func gpuLabel(g catalog.GPU, n int) string {
	if n > 1 {
		return fmt.Sprintf("%d× %s", n, g.Name)
	}
	return g.Name
}

func titleText(w memory.Workload, g catalog.GPU) string {
	return fmt.Sprintf("%s · %s · %s", w.ModelName, memory.MethodLabel(w.Method), gpuLabel(g, w.GPUs))
}

// vramVerdict is the band with its margin, per GPU.
func verdictText(fit memory.Fit, headroom int64, b memory.Breakdown, g catalog.GPU) string {
	switch fit {
	case memory.FitFits:
		return fmt.Sprintf("fits: needs %s of %s usable per GPU (%s to spare)", layout.GiB(b.TotalBytes), layout.GiB(g.UsableBytes), layout.GiB(headroom))
	case memory.FitTight:
		if headroom < 0 {
			return fmt.Sprintf("tight: needs %s of %s usable per GPU (%s over: may not start)", layout.GiB(b.TotalBytes), layout.GiB(g.UsableBytes), layout.GiB(-headroom))
		}
		return fmt.Sprintf("tight: needs %s of %s usable per GPU (only %s to spare)", layout.GiB(b.TotalBytes), layout.GiB(g.UsableBytes), layout.GiB(headroom))
	}
	return fmt.Sprintf("does not fit: needs %s per GPU, %s more than the %s usable", layout.GiB(b.TotalBytes), layout.GiB(-headroom), layout.GiB(g.UsableBytes))
}

func summaryText(res Result, p plan.Result) string {
	v := res.Verdict
	s := strings.ToUpper(v[:1]) + v[1:] + "."
	if res.ErrorBand != nil {
		s += "\nMeasured error of such estimates: " + res.ErrorBand.Text() + "."
	}
	nfix := 0
	for _, st := range p.Stages {
		nfix += len(st.Fixes)
	}
	switch {
	case nfix == 0:
		return s
	case p.Fits:
		return fmt.Sprintf("%s\nAfter %s in %s: %s per GPU (%s).", s, plural(nfix, "fix", "fixes"), plural(len(p.Stages), "stage", "stages"), layout.GiB(p.FinalEstimate.TotalBytes), p.Fit)
	}
	return fmt.Sprintf("%s\nAfter %s: %s per GPU, which still does not fit; see the GPUs below.", s, plural(nfix, "fix", "fixes"), layout.GiB(p.FinalEstimate.TotalBytes))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// vramBreakdown lists the estimate, skipping parts that are zero.
func breakdownFields(b memory.Breakdown) []reply.Field {
	parts := []struct {
		label string
		bytes int64
		keep  bool
	}{
		{"Weights", b.WeightsBytes, true},
		{"Gradients", b.GradientsBytes, false},
		{"Optimizer states", b.OptimizerBytes, false},
		{"Activations", b.ActivationsBytes, false},
		{"Logits", b.LogitsBytes, false},
		{"KV cache", b.KVCacheBytes, false},
		{"Peak allocated (torch)", b.PeakAllocatedBytes, true},
		{"Allocator + CUDA context", b.RuntimeOverheadBytes, true},
		{"Total (nvidia-smi)", b.TotalBytes, true},
	}
	var out []reply.Field
	for _, p := range parts {
		if p.keep || p.bytes != 0 {
			out = append(out, reply.Field{Label: p.label, Value: layout.GiB(p.bytes)})
		}
	}
	return out
}

// vramSections are the details' plan: every stage and fix (the snippets
// of the first shown in the lead are not repeated), the scale-out and
// every offer.
func detailSections(res Result, p plan.Result, w memory.Workload, shown int) []reply.Section {
	var out []reply.Section
	n := 0
	for _, st := range p.Stages {
		last := st.Fixes[len(st.Fixes)-1]
		head := reply.Section{Title: fmt.Sprintf("Stage %d · %s", st.Stage, st.Title)}
		if last.TotalAfterBytes != nil {
			head.Text = "After this stage: " + layout.GiB(*last.TotalAfterBytes) + " per GPU"
		}
		out = append(out, head)
		for _, f := range st.Fixes {
			n++
			s := fixSection(f)
			if n <= shown && len(s.Code) > 0 {
				s.Code = nil
				s.Text = strings.TrimSpace(s.Text + fmt.Sprintf(" Snippet: fix %d of the answer.", n))
			}
			out = append(out, s)
		}
	}
	if so := p.ScaleOut; so != nil && (p.ChangedMethod || p.Offloads) {
		out = append(out, scaleOutSection(so, w))
	}
	out = append(out, offersSection(res.Offers))
	return out
}

// vramScaleOutSection is the alternative that keeps the user's method:
// the fixes as a list, the snippet of the one that adds GPUs.
func scaleOutSection(so *plan.ScaleOut, w memory.Workload) reply.Section {
	kept := memory.MethodLabel(w.Method)
	if w.Method == memory.MethodInference {
		kept = string(w.Precision) + " weights"
	}
	s := reply.Section{
		Title: fmt.Sprintf("Or keep %s on %d GPUs (%d more than your %d)", kept, so.GPUs, so.GPUs-w.GPUs, w.GPUs),
		Text:  fmt.Sprintf("%s per GPU with:", layout.GiB(so.Estimate.TotalBytes)),
	}
	var last fix.Fix
	for _, st := range so.Stages {
		for _, f := range st.Fixes {
			s.Items = append(s.Items, fmt.Sprintf("%s (cost: %s)", f.Heading(), f.Cost))
			last = f
		}
	}
	if last.Snippet != "" {
		s.Code = []reply.Code{{Lang: last.SnippetLang, Text: last.Snippet}}
	}
	return s
}

func fixSection(f fix.Fix) reply.Section {
	s := reply.Section{Title: f.Heading()}
	var text []string
	if f.SavesBytes != nil && f.TotalAfterBytes != nil {
		text = append(text, fmt.Sprintf("Saves %s → %s per GPU.", layout.GiB(*f.SavesBytes), layout.GiB(*f.TotalAfterBytes)))
	}
	if f.Cost != "" {
		text = append(text, "Cost: "+f.Cost+".")
	}
	s.Text = strings.Join(text, " ")
	if f.Snippet != "" {
		s.Code = []reply.Code{{Lang: f.SnippetLang, Text: f.Snippet}}
	}
	return s
}

func offersSection(offers []pricing.Offer) reply.Section {
	s := reply.Section{Title: "GPUs that fit the plan (best price first)"}
	if len(offers) == 0 {
		s.Text = "No offer in the price data fits this workload."
		return s
	}
	for _, o := range offers {
		s.Items = append(s.Items, offerLine(o))
	}
	return s
}

// vramOfferLine is one ranked offer: what it rents and for how much (a box
// of several GPUs says so and prices the whole box), where, how old the
// price is, and why it is ranked when the ranking says (pricing.Rank).
func offerLine(o pricing.Offer) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: ", o.Provider, o.InstanceType)
	switch o.GPUCount {
	case 1:
		fmt.Fprintf(&b, "%s at %s/h", o.GPU, layout.USD(o.PricePerHourUSD))
	case 2:
		fmt.Fprintf(&b, "2× %s (%s/h for both, %s/GPU-h)", o.GPU, layout.USD(o.PricePerHourUSD), layout.USD(o.PricePerGPUHourUSD))
	default:
		fmt.Fprintf(&b, "%d× %s (%s/h for all %d, %s/GPU-h)", o.GPUCount, o.GPU, layout.USD(o.PricePerHourUSD), o.GPUCount, layout.USD(o.PricePerGPUHourUSD))
	}
	if o.Spot {
		b.WriteString(", spot")
	}
	if o.Region != "" {
		b.WriteString(", " + o.Region)
	}
	if o.HoursToFinish != nil && o.CostToFinishUSD != nil {
		fmt.Fprintf(&b, ", %s h and %s to finish", strconv.FormatFloat(*o.HoursToFinish, 'f', 1, 64), layout.USD(*o.CostToFinishUSD))
	}
	fmt.Fprintf(&b, " (as of %s, %s", o.AsOf, pricing.AgeText(o.AgeDays))
	if o.Stale {
		b.WriteString(": stale")
	}
	fmt.Fprintf(&b, ", %s)", o.Source)
	if o.RankNote != "" {
		b.WriteString("; " + o.RankNote)
	}
	if o.Requested {
		b.WriteString(" [the GPU you named]")
	}
	return b.String()
}

func detailsContext(w memory.Workload, provenance []string) []string {
	out := append([]string{}, w.Assumptions...)
	if w.Tokens == 0 {
		out = append(out, "add tokens=2B (the job size) for the time and cost to finish")
	}
	return append(out, provenance...)
}
