package memory

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
)

// ErrorBand is the estimator's measured error on one method's public
// measured cases, or on those of one method under one parallelism (the
// same method reads differently on one GPU, under FSDP or with CPU
// offload): the table `go run ./advisor/memory/cmd/accuracy` prints
// (advisor/memory/accuracy), embedded here as errorbands.json so that every
// estimate can say how far off it tends to be. The accuracy package's tests
// recompute it from the cases and fail when this copy is stale.
type ErrorBand struct {
	Method Method `json:"method"`
	// Parallelism is set for a band of one parallelism's cases; empty for
	// the method's band over all of them.
	Parallelism       Parallelism `json:"parallelism,omitempty"`
	Cases             int         `json:"cases"`
	MedianAbsErrorPct float64     `json:"median_abs_error_pct"`
	P90AbsErrorPct    float64     `json:"p90_abs_error_pct"`
	Within25PctShare  float64     `json:"within_25_pct_share"`
	// BorrowedFrom is set when Method has no measured case and the band
	// is that of the nearest method measured.
	BorrowedFrom Method `json:"borrowed_from,omitempty"`
	// Unmatched is set when the workload's parallelism has too few
	// measured cases of its method (MinCellCases) and the method's band
	// over every parallelism stands in.
	Unmatched Parallelism `json:"unmatched_parallelism,omitempty"`
	Source    string      `json:"source,omitempty"`
}

// MinCellCases is how many measured cases a method needs under one
// parallelism for a band of its own; below it the method's band over
// every parallelism is quoted, and says so.
const MinCellCases = 5

// BandSource says where the bands come from and how to reproduce them.
const BandSource = "advisor/memory/accuracy on the public measured cases (go run ./advisor/memory/cmd/accuracy)"

// BandMethods are the methods with a band, in report order.
var BandMethods = []Method{MethodFull, MethodLoRA, MethodQLoRA, MethodDoRA, MethodFreeze, MethodInference}

// bandFallback is the method whose band stands in for one with no
// measured case: DoRA is LoRA plus a magnitude vector, freeze trains a
// slice of the full model.
var bandFallback = map[Method]Method{MethodDoRA: MethodLoRA, MethodFreeze: MethodFull, MethodQLoRA: MethodLoRA}

//go:embed errorbands.json
var errorBandsJSON []byte

// bandKey is a band's method and parallelism ("" for the method's band).
type bandKey struct {
	m Method
	p Parallelism
}

// errorBands is errorbands.json parsed once, in file order; the file is
// the package's own generated data, so a parse error is a build defect
// its tests catch.
var errorBands, errorBandIndex = func() ([]ErrorBand, map[bandKey]ErrorBand) {
	var list []ErrorBand
	if err := json.Unmarshal(errorBandsJSON, &list); err != nil {
		return nil, nil
	}
	idx := make(map[bandKey]ErrorBand, len(list))
	for i := range list {
		list[i].Source = BandSource
		idx[bandKey{list[i].Method, list[i].Parallelism}] = list[i]
	}
	return list, idx
}()

// ErrorBands lists the embedded bands as errorbands.json orders them:
// each method's band, then its bands per parallelism.
func ErrorBands() []ErrorBand { return append([]ErrorBand(nil), errorBands...) }

// ErrorBandFor is the measured band for method m over every parallelism,
// or the nearest measured method's (BorrowedFrom says so); ok is false
// when none is known.
func ErrorBandFor(m Method) (ErrorBand, bool) {
	if b, ok := errorBandIndex[bandKey{m, ""}]; ok && b.Cases > 0 {
		return b, true
	}
	if f, ok := bandFallback[m]; ok {
		if b, ok := ErrorBandFor(f); ok {
			b.BorrowedFrom, b.Method = b.Method, m
			return b, true
		}
	}
	return ErrorBand{}, false
}

// ErrorBandOf is the band a resolved workload's estimate quotes: its
// method's under its parallelism when that has at least MinCellCases
// measured cases, else its method's over every parallelism (Unmatched
// names the parallelism it could not match).
func ErrorBandOf(w Workload) (ErrorBand, bool) {
	p := ParallelismOf(w)
	if b, ok := errorBandIndex[bandKey{w.Method, p}]; ok && b.Cases >= MinCellCases {
		return b, true
	}
	b, ok := ErrorBandFor(w.Method)
	if ok && b.BorrowedFrom == "" {
		b.Unmatched = p
	}
	return b, ok
}

// Text is the band as a reply states it: "±6% typical, 9 in 10 within
// ±18% (23 measured LoRA runs on 1 GPU)".
func (b ErrorBand) Text() string {
	runs := MethodLabel(b.Method) + " runs"
	if b.Parallelism != "" {
		runs += " " + b.Parallelism.Label()
	}
	s := fmt.Sprintf("±%s%% typical, 9 in 10 within ±%s%% (%d measured %s",
		pct(b.MedianAbsErrorPct), pct(b.P90AbsErrorPct), b.Cases, runs)
	switch {
	case b.BorrowedFrom != "":
		s = fmt.Sprintf("±%s%% typical, 9 in 10 within ±%s%% (no measured %s run: the band of %d measured %s runs",
			pct(b.MedianAbsErrorPct), pct(b.P90AbsErrorPct), MethodLabel(b.Method), b.Cases, MethodLabel(b.BorrowedFrom))
	case b.Unmatched != "" && b.Unmatched != ParallelSingle:
		s += fmt.Sprintf("; fewer than %d measured %s", MinCellCases, b.Unmatched.Label())
	}
	return s + ")"
}

func pct(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }

// MethodLabel is a method's name in prose.
func MethodLabel(m Method) string {
	switch m {
	case MethodFull:
		return "full fine-tuning"
	case MethodLoRA:
		return "LoRA"
	case MethodQLoRA:
		return "QLoRA"
	case MethodDoRA:
		return "DoRA"
	case MethodFreeze:
		return "freeze"
	}
	return string(m)
}

// Parallelism is how a workload spreads over its GPUs, as the error bands
// split their cases: the same method measures differently on one GPU, under
// DDP, sharded (FSDP, ZeRO) or offloaded to the CPU, so a band quotes the
// cases of the same method and parallelism (docs/memory-model.md §6.7).
type Parallelism string

// Parallelism classes.
const (
	ParallelSingle      Parallelism = "single"       // one GPU
	ParallelDDP         Parallelism = "ddp"          // data parallel, nothing sharded
	ParallelFSDP        Parallelism = "fsdp"         // FSDP (FULL_SHARD or SHARD_GRAD_OP)
	ParallelFSDPOffload Parallelism = "fsdp-offload" // FSDP with its CPU offload
	ParallelZeRO        Parallelism = "zero"         // DeepSpeed ZeRO-1/2/3 on the GPUs
	ParallelZeROOffload Parallelism = "zero-offload" // DeepSpeed ZeRO with CPU offload
	ParallelModelSplit  Parallelism = "model-split"  // tensor or pipeline parallel (a layer split for inference)
)

// ParallelismOf classes a resolved workload.
func ParallelismOf(w Workload) Parallelism {
	switch {
	case w.TP > 1 || w.PP > 1:
		return ParallelModelSplit
	case w.GPUs <= 1 && (w.Offload == OffloadNone || w.Offload == ""):
		return ParallelSingle
	case w.Sharding == ShardingFSDP && w.Offload != OffloadNone && w.Offload != "":
		return ParallelFSDPOffload
	case w.Sharding == ShardingFSDP:
		return ParallelFSDP
	case w.Sharding == ShardingDeepSpeed && w.Offload != OffloadNone && w.Offload != "":
		return ParallelZeROOffload
	case w.Sharding == ShardingDeepSpeed:
		return ParallelZeRO
	case w.GPUs <= 1:
		return ParallelSingle
	}
	return ParallelDDP
}

// Label is the class in prose ("on 1 GPU", "under FSDP").
func (p Parallelism) Label() string {
	switch p {
	case ParallelSingle:
		return "on 1 GPU"
	case ParallelDDP:
		return "under DDP"
	case ParallelFSDP:
		return "under FSDP"
	case ParallelFSDPOffload:
		return "under FSDP with CPU offload"
	case ParallelZeRO:
		return "under DeepSpeed ZeRO"
	case ParallelZeROOffload:
		return "under DeepSpeed ZeRO with CPU offload"
	case ParallelModelSplit:
		return "split by tensor or pipeline parallelism"
	}
	return string(p)
}
