package digest

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Metrics is where per-GPU facts come from: PromSource in production, a fake
// in tests. A nil Metrics in Inputs means "Prometheus not configured".
type Metrics interface {
	Fleet(ctx context.Context, w Window, th Thresholds) (Fleet, error)
}

// Window is the half-open interval [Start, End) a digest covers.
type Window struct {
	Start time.Time
	End   time.Time
}

// NewWindow returns the window of length d that ends at end.
func NewWindow(end time.Time, d time.Duration) Window {
	return Window{Start: end.Add(-d), End: end}
}

// Duration is End - Start.
func (w Window) Duration() time.Duration { return w.End.Sub(w.Start) }

// validate rejects windows a range query cannot answer.
func (w Window) validate() error {
	if w.Start.IsZero() || w.End.IsZero() {
		return errors.New("digest window: start and end must be set")
	}
	if !w.End.After(w.Start) {
		return fmt.Errorf("digest window: end %s is not after start %s", w.End.Format(time.RFC3339), w.Start.Format(time.RFC3339))
	}
	if w.Duration() > MaxWindow {
		return fmt.Errorf("digest window: %s is longer than the %s limit", w.Duration(), MaxWindow)
	}
	return nil
}

// MaxWindow bounds a digest's window: a week at the coarsest step still fits
// well under Prometheus' 11,000 points per series (digest.md §2.4).
const MaxWindow = 31 * 24 * time.Hour

// Thresholds are what counts as near-OOM and as idle. Zero fields take the
// defaults of DefaultThresholds.
type Thresholds struct {
	// NearOOMRatio is the used/total memory ratio from which a GPU is near OOM.
	NearOOMRatio float64
	// IdleActivity is the graphics-engine activity (0..1) below which a GPU is idle.
	IdleActivity float64
	// HoldingBytes is how much memory an idle GPU must hold to count as holding.
	HoldingBytes int64
	// MinIdleHours is the least idle-while-holding time worth reporting.
	MinIdleHours float64
}

// DefaultThresholds are digest.md §2.5's values: 95 % memory, 5 % activity,
// 1 GiB held, and an hour of idling before anyone is told about it.
var DefaultThresholds = Thresholds{NearOOMRatio: 0.95, IdleActivity: 0.05, HoldingBytes: 1 << 30, MinIdleHours: 1}

func (th Thresholds) withDefaults() Thresholds {
	if th.NearOOMRatio <= 0 {
		th.NearOOMRatio = DefaultThresholds.NearOOMRatio
	}
	if th.IdleActivity <= 0 {
		th.IdleActivity = DefaultThresholds.IdleActivity
	}
	if th.HoldingBytes <= 0 {
		th.HoldingBytes = DefaultThresholds.HoldingBytes
	}
	if th.MinIdleHours <= 0 {
		th.MinIdleHours = DefaultThresholds.MinIdleHours
	}
	return th
}

// Fleet is what a metrics source knows about the GPUs over a window.
type Fleet struct {
	// Step is the bucket width every hour figure is counted in.
	Step time.Duration
	GPUs []GPUStats
	// Missing names metrics (or label conventions) absent from the data, in
	// words fit for the digest's data-quality footer.
	Missing []string
	// Labels says which label conventions were detected, e.g. "host from hostname".
	Labels []string
}

// Owner is the workload a GPU was allocated to, when the exporter knows it.
type Owner struct {
	Namespace string `json:"namespace,omitempty"`
	Pod       string `json:"pod,omitempty"`
	Job       string `json:"job,omitempty"` // Slurm/HPC job id (hpc_job)
}

// String is "namespace/pod", "job 123" or "" when unknown.
func (o Owner) String() string {
	switch {
	case o.Namespace != "" && o.Pod != "":
		return o.Namespace + "/" + o.Pod
	case o.Pod != "":
		return o.Pod
	case o.Namespace != "":
		return o.Namespace
	case o.Job != "":
		return "job " + o.Job
	}
	return ""
}

// GPUKey identifies one GPU or MIG instance across series.
type GPUKey struct {
	Host        string
	GPU         string // index on the node
	UUID        string
	MIGInstance string // GPU_I_ID, empty on a whole GPU
}

// GPUStats are one GPU's (or MIG instance's) facts over the window.
type GPUStats struct {
	GPUKey
	Model      string // modelName, e.g. "NVIDIA A100-SXM4-80GB"
	MIGProfile string // GPU_I_PROFILE, e.g. "1g.10gb"
	Owner      Owner  // the owner seen in the most buckets

	TotalBytes    int64 // used + free (+ reserved)
	PeakUsedBytes int64
	PeakUsedRatio float64
	AvgUsedRatio  float64
	HoursAbove    float64 // hours at or above Thresholds.NearOOMRatio
	// ActivityMetric is the metric idle time was judged on, "" when none reported.
	ActivityMetric string
	IdleHours      float64 // hours idle while holding at least Thresholds.HoldingBytes
	IdleHeldBytes  int64   // mean memory held during those hours
	IdleOwner      Owner   // the owner during those hours
	GiBHours       float64 // memory used integrated over the window

	// Usage splits GiBHours by owner, for top consumers.
	Usage []OwnerUsage
	// FirstSeen and LastSeen bound the buckets with a memory sample.
	FirstSeen, LastSeen time.Time
	// Ratio is the peak used/total per bucket, for the chart.
	Ratio []Point
}

// OwnerUsage is the memory one owner used on one GPU.
type OwnerUsage struct {
	Owner    Owner
	GiBHours float64
	Hours    float64
}

// Point is one sample of a chart series.
type Point struct {
	T time.Time
	V float64
}

// Stopped reports whether the GPU's last sample is well before the window's
// end: its exporter (or node) stopped reporting.
func (g GPUStats) Stopped(w Window, step time.Duration) bool {
	return !g.LastSeen.IsZero() && w.End.Sub(g.LastSeen) > staleAfter(step)
}

// staleAfter is how long without samples makes a GPU "stopped": three
// buckets, and never less than 15 minutes so one missed scrape or a slow
// exporter restart is not news.
func staleAfter(step time.Duration) time.Duration {
	return max(3*step, 15*time.Minute)
}

// StepFor picks the bucket width for a window: about 288 buckets (5 minutes
// for a day, digest.md §2.4), whole minutes, between 1 minute and 1 hour.
func StepFor(d time.Duration) time.Duration {
	step := d / 288
	if rem := step % time.Minute; rem != 0 {
		step += time.Minute - rem
	}
	return min(max(step, time.Minute), time.Hour)
}
