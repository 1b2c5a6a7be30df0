// Package accuracy measures the memory estimator against public measured
// cases (testdata/cases.jsonl and the later sets beside it) side by side with two rules of
// thumb. It parses bytes and computes; reading the file is the caller's job.
package accuracy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/memory"
)

// Case is one line of cases.jsonl. Nullable fields are pointers.
type Case struct {
	ID                string  `json:"id"`
	Model             string  `json:"model"`
	ParamsB           float64 `json:"params_b"`
	Method            string  `json:"method"`
	Precision         string  `json:"precision"`
	Optimizer         string  `json:"optimizer"`
	Batch             *int    `json:"batch"`
	SeqLen            *int    `json:"seq_len"`
	GradCheckpointing *bool   `json:"grad_checkpointing"`
	ZeroStage         *int    `json:"zero_stage"`
	NumGPUs           *int    `json:"num_gpus"`
	ReportedGB        float64 `json:"reported_gb"` // decimal GB (1e9 bytes) in every case
	Kind              string  `json:"kind"`
	Notes             string  `json:"notes"`
	Measure           string  `json:"measure"`
	Bound             string  `json:"bound"`
	Source            string  `json:"source"`
	GPU               string  `json:"gpu"`

	// The training techniques, as the query grammar names them
	// (docs/contracts.md §2); empty or zero when the run did not use them or the source
	// does not say.

	// Checkpointing is off, full, selective or offloaded; it overrides
	// GradCheckpointing when both are given.
	Checkpointing string `json:"checkpointing,omitempty"`
	// Sharding is ddp, fsdp or deepspeed (ZeRO at ZeroStage).
	Sharding string `json:"sharding,omitempty"`
	// Offload is optimizer or param.
	Offload string `json:"offload,omitempty"`
	// Loss is standard or chunked.
	Loss string `json:"loss,omitempty"`
	// OptimInBackward: the optimizer step fused into backward.
	OptimInBackward bool `json:"optim_in_bwd,omitempty"`
	// ActivationOffload: activations offloaded to CPU RAM.
	ActivationOffload bool `json:"act_offload,omitempty"`
	// Framework is the training stack (unsloth, torchtune, ...).
	Framework   string `json:"framework,omitempty"`
	LoRARank    int    `json:"lora_rank,omitempty"`
	LoRATargets string `json:"lora_targets,omitempty"` // qv, attn, all
	TP          int    `json:"tp,omitempty"`
	PP          int    `json:"pp,omitempty"`
	Attention   string `json:"attention,omitempty"` // flash, eager
	// ShorterSequences marks runs whose real sequences were shorter than
	// SeqLen (padding to the longest of each batch, unpacked data): the
	// estimate at SeqLen is an upper bound, and must not fall far below.
	ShorterSequences bool `json:"shorter_sequences,omitempty"`
	// Compile marks runs under torch.compile, which fuses kernels and
	// keeps fewer activations than the estimator models.
	Compile bool `json:"compile,omitempty"`
	// GradAccum is the micro-batches per optimizer step (0: one).
	GradAccum int `json:"grad_accum,omitempty"`
	// SyncEachBatch: the run reduce-scattered its gradients on every
	// micro-batch (accelerate's sync_each_batch, or FSDP2 under accelerate
	// before 1.11, which had no no_sync for it; testdata/SOURCES.md).
	SyncEachBatch *bool `json:"sync_each_batch,omitempty"`
	// LoRAExperts: LoRA on the routed experts' fused weights too (PEFT
	// target_parameters); QuantizeExperts: the routed experts quantised
	// with a bitsandbytes base (axolotl quantize_moe_experts). Nil: the
	// framework's default.
	LoRAExperts     *bool `json:"lora_experts,omitempty"`
	QuantizeExperts *bool `json:"quantize_experts,omitempty"`

	// Category groups the cases of a set by the technique they test
	// (fsdp2, offload, moe-ft, unsloth, low-bit-optim, ...), for the
	// per-category table; empty in the older sets.
	Category string `json:"category,omitempty"`
	// ReportedRaw is the figure as the source prints it, before the
	// conversion to decimal GB (GiB, "about X", per-GPU or total).
	ReportedRaw string `json:"reported_raw,omitempty"`
	// ExtraSettings are what the run states that the case's fields above
	// cannot say (testdata/SOURCES.md records how each was handled).
	ExtraSettings string `json:"extra_settings,omitempty"`
}

// maxLineBytes bounds one JSONL line.
const maxLineBytes = 1 << 20

// ParseCases reads JSON Lines; blank lines are skipped, a bad line is an
// error naming its line number.
func ParseCases(data []byte) ([]Case, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	var out []Case
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var c Case
		if err := json.Unmarshal(line, &c); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if c.ID == "" {
			return nil, fmt.Errorf("line %d: case without id", n)
		}
		if math.IsNaN(c.ReportedGB) || math.IsInf(c.ReportedGB, 0) || c.ReportedGB < 0 {
			return nil, fmt.Errorf("line %d (%s): bad reported_gb", n, c.ID)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read cases: %w", err)
	}
	return out, nil
}

// excluded are measured cases whose number is not a per-GPU total of the
// stated workload, with the reason.
var excluded = map[string]string{
	"zero-paper-gpt2-1.5b-activations": "reports activations alone (ZeRO paper §3.2), not a per-GPU total",
	"torchtune-l31-8b-lora-a6000":      "the README does not state the A6000 row's settings (30.3 GiB against 16.2 GiB on a 4090 for the same recipe)",
	// Held-out torchtitan runs with Float8 linears (testdata/SOURCES.md):
	// precision=fp8 names a checkpoint format, and training under it is
	// estimated in bf16.
	"torchtitan-l31-8b-fsdp8-sac-compile-float8":          float8Training,
	"torchtitan-l31-8b-fsdp128-sac-compile-float8":        float8Training,
	"torchtitan-l31-70b-fsdp32-tp8-fullac-float8":         float8Training,
	"torchtitan-l31-70b-fsdp32-tp8-fullac-float8-asynctp": float8Training,
	"torchtitan-trainy-l31-8b-fsdp32-h200":                float8Training,
	"torchtitan-trainy-l31-8b-fsdp64-h200":                float8Training,
}

// float8Training is the reason a Float8 training run is not judged.
const float8Training = "Float8 training (torchao float8 linears): the grammar has no word for it, so the case is not fully specified"

// Measure says which estimate a case is compared with.
type Measure string

// Measures.
const (
	MeasurePeakAllocated Measure = "peak_allocated" // torch.cuda.max_memory_allocated, "peak memory active"
	MeasurePeakReserved  Measure = "peak_reserved"  // torch.cuda.max_memory_reserved: the allocator's segments, no CUDA context
	MeasureTotal         Measure = "total"          // nvidia-smi, NVML: reserved + CUDA context + NCCL
)

// measureOf reads how a case's figure was taken: nvidia-smi and NVML
// (WandB's system panel) see the whole process, max_memory_reserved the
// caching allocator's segments, anything else the tensors allocated.
func measureOf(text string) Measure {
	t := strings.ToLower(text)
	switch {
	case strings.Contains(t, "nvidia-smi") || strings.Contains(t, "nvml"):
		return MeasureTotal
	case strings.Contains(t, "reserved"):
		return MeasurePeakReserved
	}
	return MeasurePeakAllocated
}

// Workload maps a case to a workload, or says why the case does not specify
// one: only measured cases (not formulas, rules of thumb or bounds) with a
// known method, precision and optimizer, and for training a batch and
// sequence length, are judged.
func (c Case) Workload() (memory.Workload, Measure, string) {
	if reason, ok := excluded[c.ID]; ok {
		return memory.Workload{}, "", reason
	}
	switch {
	case c.Kind != "measured":
		return memory.Workload{}, "", "kind " + c.Kind
	case c.Bound != "" && c.Bound != BoundCapacity:
		return memory.Workload{}, "", "a " + c.Bound + " bound, not a measurement"
	case c.Precision == "unknown" || c.Precision == "":
		return memory.Workload{}, "", "precision not stated"
	case c.Method != "inference" && (c.Optimizer == "unknown" || c.Optimizer == ""):
		return memory.Workload{}, "", "optimizer not stated"
	case c.Method != "inference" && (c.Batch == nil || c.SeqLen == nil):
		return memory.Workload{}, "", "batch or sequence length not stated"
	case c.NumGPUs == nil:
		return memory.Workload{}, "", "GPU count not stated"
	}
	w := memory.Workload{
		Method:    memory.Method(c.Method),
		Precision: memory.Precision(c.Precision),
		Optimizer: memory.Optimizer(c.Optimizer),
		GPUs:      *c.NumGPUs,
		Batch:     1,
		SeqLen:    inferencePromptTokens,
	}
	if m, ok := lookupCaseModel(c.Model); ok {
		w.Model = m
		w.ModelName = m.Name
	} else {
		w.Params = int64(c.ParamsB * 1e9)
	}
	if c.Batch != nil {
		w.Batch = *c.Batch
	}
	if c.SeqLen != nil {
		w.SeqLen = *c.SeqLen
	}
	if c.GradCheckpointing != nil {
		w.GradCheckpointing = *c.GradCheckpointing
		w.Checkpointing = memory.CheckpointOff
		if w.GradCheckpointing {
			w.Checkpointing = memory.CheckpointFull
		}
	}
	if c.Checkpointing != "" {
		w.Checkpointing = memory.Checkpointing(c.Checkpointing)
	}
	if c.ZeroStage != nil {
		w.ZeroStage = *c.ZeroStage
	}
	w.Sharding = memory.Sharding(c.Sharding)
	w.Offload = memory.Offload(c.Offload)
	w.Loss = memory.Loss(c.Loss)
	w.OptimizerInBackward = c.OptimInBackward
	w.GradAccumSteps = c.GradAccum
	w.ActivationOffload = c.ActivationOffload
	w.Framework = memory.Framework(c.Framework)
	w.TP, w.PP = c.TP, c.PP
	w.LoRAExperts, w.QuantizeExperts = switchOf(c.LoRAExperts), switchOf(c.QuantizeExperts)
	w.SyncEachBatch = switchOf(c.SyncEachBatch)
	w.GPUMemoryBytes = gpuMemoryOf(c.GPU)
	w.Attention = memory.Attention(c.Attention)
	if w.Method == memory.MethodInference && w.GPUs > 1 && w.ZeroStage == 0 && w.TP <= 1 && w.PP <= 1 {
		// Inference over several GPUs without ZeRO is accelerate's
		// device_map split: a naive pipeline, layers divided across GPUs.
		w.PP = w.GPUs
	}
	if memory.Method(c.Method).IsAdapter() {
		w.LoRARank = c.LoRARank
		w.LoRATargets = c.LoRATargets
		if w.LoRATargets == "" {
			w.LoRATargets = memory.DefaultLoRATargets
		}
	}
	return w, measureOf(c.Measure), ""
}

// switchOf is a case's optional flag as a workload switch.
func switchOf(b *bool) memory.Switch {
	switch {
	case b == nil:
		return ""
	case *b:
		return memory.SwitchOn
	}
	return memory.SwitchOff
}

// inferencePromptTokens stands for "a short prompt" where an inference case
// gives no length (litgpt generate, accelerate load benchmarks).
const inferencePromptTokens = 128

// lookupCaseModel tries the case's model text: an id or name, possibly
// followed by a parenthesised remark.
func lookupCaseModel(s string) (catalog.Model, bool) {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, " ("); i > 0 {
		s = s[:i]
	}
	return catalog.LookupModel(s)
}

// Rule names the estimators compared.
type Rule string

// The estimator and the three baselines.
const (
	// RuleEstimator is memory.Estimate.
	RuleEstimator Rule = "estimator"
	// RuleWeightsMultiple is the "model memory calculator" rule (HF
	// accelerate estimate-memory, EleutherAI): weights at the stated
	// precision × 4 for Adam training (any method), × 1.2 for inference.
	RuleWeightsMultiple Rule = "4x/1.2x weights"
	// RulePerBillion is LLaMA-Factory's hardware table as GB per billion
	// parameters: full AMP/fp32 18, full pure 16-bit 8, LoRA/freeze 2,
	// QLoRA 8-bit 1, QLoRA 4-bit 0.5; inference the weight bytes (4/2/1/0.5).
	RulePerBillion Rule = "18/8/2/0.5 GB per B"
	// RuleGPUPoor is the gpu_poor web calculator's formula (gpupoor.go).
	RuleGPUPoor Rule = "gpu_poor"
)

// Rules lists the estimators in report order.
var Rules = []Rule{RuleEstimator, RuleWeightsMultiple, RulePerBillion, RuleGPUPoor}

// weightBytesPerParam is the bytes per parameter the rules of thumb assume.
func weightBytesPerParam(p memory.Precision) float64 {
	switch p {
	case memory.PrecisionFP32:
		return 4
	case memory.PrecisionInt8:
		return 1
	case memory.PrecisionNF4:
		return 0.5
	default:
		return 2
	}
}

// ruleOfThumb evaluates a rule on a resolved workload, in bytes (total over
// the job: the rules know nothing of GPUs).
func ruleOfThumb(rule Rule, w memory.Workload) float64 {
	p := float64(w.Params)
	weights := p * weightBytesPerParam(w.Precision)
	switch rule {
	case RuleGPUPoor:
		return gpuPoorBytes(w)
	case RuleWeightsMultiple:
		if w.Method == memory.MethodInference {
			return 1.2 * weights
		}
		return 4 * weights
	default:
		switch w.Method {
		case memory.MethodInference:
			return weights
		case memory.MethodFull:
			if w.Precision == memory.PrecisionBF16 || w.Precision == memory.PrecisionFP16 {
				return 8 * p
			}
			return 18 * p
		case memory.MethodQLoRA:
			if w.Precision == memory.PrecisionInt8 {
				return p
			}
			return 0.5 * p
		default:
			return 2 * p
		}
	}
}

// BoundCapacity marks a case whose reported memory is the capacity of the
// GPU at which its workload is the largest that fits (Unsloth's
// context-length benchmarks): the estimate must fit that capacity, and
// not by far (MaxUnderCapacityPct).
const BoundCapacity = "boundary"

// MaxUnderCapacityPct is how far under the capacity the estimate of the
// largest workload that fits may read.
const MaxUnderCapacityPct = 25

// CapacityViolations lists the capacity cases whose estimate does not fit
// the capacity or reads more than MaxUnderCapacityPct under it.
func (rep Report) CapacityViolations() []Row {
	var out []Row
	for _, r := range rep.Capacities {
		if e := r.ErrorPct(RuleEstimator); e > 0 || e < -MaxUnderCapacityPct {
			out = append(out, r)
		}
	}
	return out
}

// MaxUnderBoundPct is how far below its measurement an estimate may fall
// on a run whose real sequences were shorter than the length estimated:
// at the stated maximum the estimate is an upper bound, so it must not
// read more than 10% under what the shorter sequences measured.
const MaxUnderBoundPct = 10

// BoundViolations lists the upper-bound cases whose estimate reads more
// than MaxUnderBoundPct under the measurement.
func (rep Report) BoundViolations() []Row {
	var out []Row
	for _, r := range rep.UpperBounds {
		if r.ErrorPct(RuleEstimator) < -MaxUnderBoundPct {
			out = append(out, r)
		}
	}
	return out
}

// Row is one judged case.
type Row struct {
	ID       string
	Method   memory.Method
	Measure  Measure
	Reported float64          // bytes
	Got      map[Rule]float64 // bytes
	// ShorterSequences: the run's real sequences were shorter than the
	// estimated length (Case.ShorterSequences).
	ShorterSequences bool
	// Category is the case's (Case.Category); Parallelism how the
	// resolved workload spreads over its GPUs (memory.ParallelismOf).
	Category    string
	Parallelism memory.Parallelism
}

// ErrorPct is the signed error of a rule in percent of the reported value.
func (r Row) ErrorPct(rule Rule) float64 {
	return 100 * (r.Got[rule] - r.Reported) / r.Reported
}

// Skipped is a case that was not judged, with the reason.
type Skipped struct{ ID, Reason string }

// Summary is one rule's accuracy over a set of judged cases.
type Summary struct {
	Rule             Rule
	MedianAbsErrPct  float64
	P90AbsErrPct     float64 // 90th percentile of |error|
	Within25PctShare float64 // 0..1
	Cases            int
}

// MethodSummary is every rule's accuracy on one method's cases.
type MethodSummary struct {
	Method    memory.Method
	Summaries []Summary
}

// Report is the whole comparison.
type Report struct {
	Rows []Row
	// UpperBounds are the cases whose real sequences were shorter than
	// the stated length (Case.ShorterSequences): the estimate at that
	// length is an upper bound, checked apart from the error statistics
	// (it must not fall more than MaxUnderBoundPct below the measurement).
	UpperBounds []Row
	// Capacities are the capacity-boundary cases (BoundCapacity), checked
	// apart from the error statistics too.
	Capacities []Row
	Skipped    []Skipped
	Summaries  []Summary
	// ByMethod is the same per method, in memory.BandMethods order
	// (methods without a judged case are left out).
	ByMethod []MethodSummary
}

// Evaluate judges every case that specifies its workload.
func Evaluate(cases []Case) Report {
	var rep Report
	for _, c := range cases {
		w, measure, reason := c.Workload()
		if reason != "" {
			rep.Skipped = append(rep.Skipped, Skipped{c.ID, reason})
			continue
		}
		if c.ReportedGB <= 0 {
			rep.Skipped = append(rep.Skipped, Skipped{c.ID, "no reported value"})
			continue
		}
		w = memory.Resolve(w)
		b := memory.Estimate(w)
		est := float64(b.PeakAllocatedBytes)
		switch measure {
		case MeasureTotal:
			est = float64(b.TotalBytes)
		case MeasurePeakReserved:
			est = float64(b.ReservedBytes)
			if b.ReservedBytes == 0 { // a serving engine's breakdown
				est = float64(b.TotalBytes)
			}
		}
		// The rules give a job total; the cases report the most loaded GPU.
		gpus := float64(max(1, w.GPUs))
		got := map[Rule]float64{RuleEstimator: est}
		for _, rule := range Rules[1:] {
			got[rule] = ruleOfThumb(rule, w) / gpus
		}
		row := Row{
			ID:               c.ID,
			Method:           w.Method,
			Measure:          measure,
			Reported:         c.ReportedGB * 1e9,
			Got:              got,
			ShorterSequences: c.ShorterSequences,
			Category:         c.Category,
			Parallelism:      memory.ParallelismOf(w),
		}
		switch {
		case c.ShorterSequences:
			rep.UpperBounds = append(rep.UpperBounds, row)
			continue
		case c.Bound == BoundCapacity:
			rep.Capacities = append(rep.Capacities, row)
			continue
		}
		rep.Rows = append(rep.Rows, row)
	}
	for _, rule := range Rules {
		rep.Summaries = append(rep.Summaries, summarize(rule, rep.Rows))
	}
	for _, m := range memory.BandMethods {
		var rows []Row
		for _, r := range rep.Rows {
			if r.Method == m {
				rows = append(rows, r)
			}
		}
		if len(rows) == 0 {
			continue
		}
		ms := MethodSummary{Method: m}
		for _, rule := range Rules {
			ms.Summaries = append(ms.Summaries, summarize(rule, rows))
		}
		rep.ByMethod = append(rep.ByMethod, ms)
	}
	return rep
}

func summarize(rule Rule, rows []Row) Summary {
	s := Summary{Rule: rule, Cases: len(rows)}
	if len(rows) == 0 {
		return s
	}
	errs := make([]float64, len(rows))
	within := 0
	for i, r := range rows {
		errs[i] = math.Abs(r.ErrorPct(rule))
		if errs[i] <= 25 {
			within++
		}
	}
	slices.Sort(errs)
	n := len(errs)
	if n%2 == 1 {
		s.MedianAbsErrPct = errs[n/2]
	} else {
		s.MedianAbsErrPct = (errs[n/2-1] + errs[n/2]) / 2
	}
	// Nearest-rank 90th percentile.
	s.P90AbsErrPct = errs[max(0, int(math.Ceil(0.9*float64(n)))-1)]
	s.Within25PctShare = float64(within) / float64(n)
	return s
}

// Summary returns the summary of one rule.
func (rep Report) Summary(rule Rule) Summary {
	for _, s := range rep.Summaries {
		if s.Rule == rule {
			return s
		}
	}
	return Summary{Rule: rule}
}

// MethodSummary returns one rule's summary on one method's cases.
func (rep Report) MethodSummary(m memory.Method, rule Rule) Summary {
	for _, ms := range rep.ByMethod {
		if ms.Method != m {
			continue
		}
		for _, s := range ms.Summaries {
			if s.Rule == rule {
				return s
			}
		}
	}
	return Summary{Rule: rule}
}

// Bands is the estimator's error band per method and, where a method has
// at least memory.MinCellCases judged cases under one parallelism, per
// method and parallelism: the table the replies quote (memory.ErrorBands;
// median and 90th-percentile |error| and the share within 25%).
func (rep Report) Bands() []memory.ErrorBand {
	band := func(m memory.Method, p memory.Parallelism, s Summary) memory.ErrorBand {
		return memory.ErrorBand{
			Method:            m,
			Parallelism:       p,
			Cases:             s.Cases,
			MedianAbsErrorPct: round1(s.MedianAbsErrPct),
			P90AbsErrorPct:    round1(s.P90AbsErrPct),
			Within25PctShare:  math.Round(1000*s.Within25PctShare) / 1000,
		}
	}
	cells := rep.Cells()
	var out []memory.ErrorBand
	for _, ms := range rep.ByMethod {
		out = append(out, band(ms.Method, "", rep.MethodSummary(ms.Method, RuleEstimator)))
		for _, c := range cells {
			if c.Method == ms.Method && c.Summary.Cases >= memory.MinCellCases {
				out = append(out, band(c.Method, c.Parallelism, c.Summary))
			}
		}
	}
	return out
}

func round1(v float64) float64 { return math.Round(10*v) / 10 }

// WriteTable writes the side-by-side table (GB = 1e9 bytes, as the cases
// report), the summary and the per-method table.
func (rep Report) WriteTable(out io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%-42s %-5s %9s", "case", "vs", "reported")
	for _, rule := range Rules {
		fmt.Fprintf(&b, " %17s", rule)
	}
	b.WriteByte('\n')
	for _, r := range rep.Rows {
		fmt.Fprintf(&b, "%-42s %-5s %8.2fG", r.ID, r.Measure.short(), r.Reported/1e9)
		for _, rule := range Rules {
			fmt.Fprintf(&b, " %8.2fG %+6.0f%%", r.Got[rule]/1e9, r.ErrorPct(rule))
		}
		b.WriteByte('\n')
	}
	if len(rep.UpperBounds) > 0 {
		fmt.Fprintf(&b, "\nupper bounds (real sequences shorter than estimated; the estimate must not read more than %d%% under):\n", MaxUnderBoundPct)
		for _, r := range rep.UpperBounds {
			fmt.Fprintf(&b, "%-42s %-5s %8.2fG %8.2fG %+6.0f%%\n", r.ID, r.Measure.short(), r.Reported/1e9, r.Got[RuleEstimator]/1e9, r.ErrorPct(RuleEstimator))
		}
	}
	if len(rep.Capacities) > 0 {
		fmt.Fprintf(&b, "\ncapacity boundaries (the largest workload that fits the GPU; the estimate must fit, by at most %d%%):\n", MaxUnderCapacityPct)
		for _, r := range rep.Capacities {
			fmt.Fprintf(&b, "%-42s %-5s %8.2fG %8.2fG %+6.0f%%\n", r.ID, r.Measure.short(), r.Reported/1e9, r.Got[RuleEstimator]/1e9, r.ErrorPct(RuleEstimator))
		}
	}
	b.WriteByte('\n')
	rep.writeSummary(&b)
	_, err := io.WriteString(out, b.String())
	if err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

// short is the measure's column label.
func (m Measure) short() string {
	switch m {
	case MeasureTotal:
		return "total"
	case MeasurePeakReserved:
		return "rsvd"
	}
	return "peak"
}

// WriteSummary writes only the case counts, each rule's summary and the
// per-method table.
func (rep Report) WriteSummary(out io.Writer) error {
	var b strings.Builder
	rep.writeSummary(&b)
	if _, err := io.WriteString(out, b.String()); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

func (rep Report) writeSummary(b *strings.Builder) {
	fmt.Fprintf(b, "%d cases judged, %d upper bounds (%d more than %d%% under), %d capacity boundaries (%d over or more than %d%% under), %d skipped (formula, rule-of-thumb, bound or unstated workload)\n",
		len(rep.Rows), len(rep.UpperBounds), len(rep.BoundViolations()), MaxUnderBoundPct,
		len(rep.Capacities), len(rep.CapacityViolations()), MaxUnderCapacityPct, len(rep.Skipped))
	for _, s := range rep.Summaries {
		fmt.Fprintf(b, "%-22s median |error| %5.1f%%   within 25%%: %5.1f%% (%d cases)\n",
			s.Rule, s.MedianAbsErrPct, 100*s.Within25PctShare, s.Cases)
	}
	if len(rep.ByMethod) == 0 {
		return
	}
	fmt.Fprintf(b, "\nper method: median |error| / within 25%%\n%-10s %5s", "method", "cases")
	for _, rule := range Rules {
		fmt.Fprintf(b, " %22s", rule)
	}
	fmt.Fprintf(b, " %12s\n", "estimator p90")
	for _, ms := range rep.ByMethod {
		fmt.Fprintf(b, "%-10s %5d", ms.Method, ms.Summaries[0].Cases)
		for _, s := range ms.Summaries {
			fmt.Fprintf(b, " %12.1f%% / %5.1f%%", s.MedianAbsErrPct, 100*s.Within25PctShare)
		}
		fmt.Fprintf(b, " %11.1f%%\n", ms.Summaries[0].P90AbsErrPct)
	}
	rep.writeGroups(b)
}
