package oom

import (
	"fmt"
	"math"
)

// The paste's own numbers are a measurement: what the process held when
// it failed and what it asked for are facts, an estimate of the job as
// read is a model of it. The sizing must agree with the measurement; where
// it does not (by more than disagreeShare), the measurement is trusted and
// the reply says so (docs/oom-diagnosis.md §7).

// Measurement is what the paste's numbers say the failing step needed.
type Measurement struct {
	// HeldBytes is what the process held when it failed (Held says which
	// number of the message that is), AskedBytes the request that failed;
	// NeedBytes their sum, the least the step needed.
	HeldBytes  int64  `json:"held_bytes"`
	Held       string `json:"held"`
	AskedBytes int64  `json:"asked_bytes"`
	NeedBytes  int64  `json:"need_bytes"`
	// CapacityBytes is the device's memory as the message reports it;
	// ShortBytes what the step needed beyond it (0 when it did not).
	CapacityBytes int64 `json:"capacity_bytes"`
	ShortBytes    int64 `json:"short_bytes"`
	// Limit says what the capacity is ("on a GPU of", "against MPS's limit of").
	Limit string `json:"-"`
	// EstimateBytes is the estimator's per-GPU total for the job as read
	// (0 when the paste names no workload); Trusted is "measurement" or
	// "estimate", and Why says why.
	EstimateBytes int64   `json:"estimate_bytes,omitempty"`
	Ratio         float64 `json:"ratio,omitempty"`
	Trusted       string  `json:"trusted,omitempty"`
	Why           string  `json:"why,omitempty"`
}

// Readings a measurement can be trusted over.
const (
	TrustMeasurement = "measurement"
	TrustEstimate    = "estimate"
)

// disagreeShare is how far an estimate may be from the measured need (in
// either direction) and still be taken for a model of the same job.
const disagreeShare = 1.5

// Text is the measurement in a sentence: "your step needed at least 25.9
// GiB: 21.3 held + 4.6 asked, on a 23.5 GiB GPU".
func (m Measurement) Text() string {
	s := fmt.Sprintf("your step needed at least %s: %s held (%s) + %s asked", gib1(m.NeedBytes), gib1(m.HeldBytes), m.Held, gib1(m.AskedBytes))
	if m.CapacityBytes > 0 {
		s += fmt.Sprintf(", %s %s", orWord(m.Limit, "on a GPU of"), gib1(m.CapacityBytes))
		if m.ShortBytes > 0 {
			s += fmt.Sprintf(": %s short", gib1(m.ShortBytes))
		}
	}
	return s
}

// gib1 writes bytes as GiB with one decimal, as the reply reads them.
func gib1(n int64) string { return fmt.Sprintf("%.1f GiB", float64(n)/float64(gib)) }

// measure reads what the process held and asked for from the message: the
// new form's "this process has X in use" (or PyTorch's own counts), the old
// form's reserved total, MPS's allocations, CuPy's pool.
func measure(r Report) *Measurement {
	if r.TriedToAllocateBytes == nil || r.TotalCapacityBytes == nil || *r.TotalCapacityBytes <= 0 {
		return nil
	}
	m := &Measurement{AskedBytes: *r.TriedToAllocateBytes, CapacityBytes: *r.TotalCapacityBytes}
	ru, hasRU := reservedUnallocated(r)
	switch {
	case r.ProcessInUseBytes != nil:
		m.HeldBytes, m.Held = *r.ProcessInUseBytes, "this process, with non-PyTorch memory"
	case r.Format == FormatMPS && r.AllocatedByFrameworkBytes != nil:
		other, _ := r.Extra["mps_other_allocations"].(int64)
		m.HeldBytes, m.Held = *r.AllocatedByFrameworkBytes+other, "MPS allocated and other allocations"
		m.Limit = "against MPS's limit of"
	case r.ReservedByFrameworkBytes != nil:
		m.HeldBytes, m.Held = *r.ReservedByFrameworkBytes, "reserved by PyTorch"
	case r.AllocatedByFrameworkBytes != nil && hasRU:
		m.HeldBytes, m.Held = *r.AllocatedByFrameworkBytes+ru, "reserved by PyTorch"
	case r.AllocatedByFrameworkBytes != nil:
		m.HeldBytes, m.Held = *r.AllocatedByFrameworkBytes, "allocated"
	default:
		return nil
	}
	if m.HeldBytes <= 0 || m.AskedBytes >= absurdFactor*m.CapacityBytes {
		return nil
	}
	m.NeedBytes = m.HeldBytes + m.AskedBytes
	m.ShortBytes = max(0, m.NeedBytes-m.CapacityBytes)
	return m
}

// reconcile compares the estimate of the job as read with the measurement.
// A job that ran past loading had every weight, gradient and optimizer
// state resident, so an estimate far from what it held is not this job:
// the measurement is trusted, the estimate set aside. At load the
// measurement is only a lower bound, and the estimate stands.
func (b *builder) reconcile() {
	m, s := b.measured, b.sizing
	if m == nil || s == nil || m.NeedBytes <= 0 || s.Estimate.TotalBytes <= 0 {
		return
	}
	est := s.Estimate.TotalBytes
	m.EstimateBytes = est
	m.Ratio = math.Round(100*float64(est)/float64(m.NeedBytes)) / 100
	// Before the first step (loading, the optimizer's creation, an
	// engine's start-up) the job has not reached its peak.
	early := b.r.Phase == PhaseLoad
	if j := b.r.Job; j != nil {
		early = early || j.Where == WhereOptimizerInit || j.Where == WhereWeightsLoad || j.Where == WhereKVStartup
	}
	ran := !early && (b.r.Phase != PhaseUnknown || 2*m.HeldBytes >= m.CapacityBytes)
	job := fmt.Sprintf("%s %s of %s", s.Workload.Method, s.Workload.Precision, s.Workload.ModelName)
	switch {
	case !ran:
		m.Trusted = TrustEstimate
		m.Why = fmt.Sprintf("the OOM came before the job's first step: %s is a lower bound, and the estimate of %s (%s) stands", gib1(m.NeedBytes), job, gib1(est))
	case m.Ratio > disagreeShare || m.Ratio < 1/disagreeShare:
		m.Trusted = TrustMeasurement
		m.Why = fmt.Sprintf("the estimate of %s is %s, %.1f× what the step held and asked for; the job ran up to the OOM, so its own numbers are the measurement and the fixes are sized from them", job, gib1(est), m.Ratio)
		b.sizing, b.setAside = nil, s
	default:
		m.Trusted = TrustEstimate
		m.Why = fmt.Sprintf("the estimate of %s (%s) is within %.1f× of what the step held and asked for", job, gib1(est), disagreeShare)
	}
}
