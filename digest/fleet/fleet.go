// Package fleet turns dcgm-exporter series into facts about GPUs and the
// jobs that held them (docs/digest.md §6, docs/digest.md): a GPU is its UUID (and
// MIG instance) whatever its labels, with the owner at each time; its
// capacity is USED + FREE + RESERVED of one sample; jobs are the GPUs of one
// owner together, classified as training, serving or notebook; restarts are
// held memory falling to about zero and climbing again under the same owner.
//
// It is pure: series come in as plain values (the Prometheus adapter in
// digest/prom, or a test), facts go out. Label values are untrusted text and
// are only ever compared and copied, never interpreted as code or format.
package fleet

import (
	"math"
	"sort"
	"time"
)

// Series is one exporter series reduced to one value per bucket: Points[i].T
// is the end of the bucket (T-step, T] it summarises.
type Series struct {
	Labels map[string]string
	Points []Point
}

// Point is one value at a time.
type Point struct {
	T time.Time
	V float64
}

// Raw are the per-bucket reductions Analyze works from, one list of series
// per metric and reduction (memory in MiB, activity as exported).
type Raw struct {
	UsedMax  []Series // max_over_time(FB_USED): near-OOM peaks
	UsedAvg  []Series // avg_over_time(FB_USED): held memory, capacity
	UsedMin  []Series // min_over_time(FB_USED): drops to zero (restarts)
	Free     []Series // avg_over_time(FB_FREE)
	Reserved []Series // avg_over_time(FB_RESERVED)
	Engine   []Series // avg_over_time(PROF_GR_ENGINE_ACTIVE), 0..1
	Util     []Series // avg_over_time(DEV_GPU_UTIL), 0..100
}

// Thresholds are what counts as near OOM, idle and holding. Zero fields take
// the defaults of DefaultThresholds.
type Thresholds struct {
	// NearOOMRatio is the used/capacity ratio from which a GPU is near OOM.
	NearOOMRatio float64
	// IdleActivity is the graphics-engine activity (0..1) below which a GPU is idle.
	IdleActivity float64
	// HoldingBytes is how much memory a GPU must hold to count as holding.
	HoldingBytes int64
	// MinIdleHours is the least idle-while-holding time worth reporting.
	MinIdleHours float64
}

// DefaultThresholds are docs/digest.md §2.5's values: 95 % memory, 5 %
// activity, 1 GiB held, and an hour of idling before anyone is told about it.
var DefaultThresholds = Thresholds{NearOOMRatio: 0.95, IdleActivity: 0.05, HoldingBytes: 1 << 30, MinIdleHours: 1}

// WithDefaults fills zero fields from DefaultThresholds.
func (th Thresholds) WithDefaults() Thresholds {
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

// Fleet is what the series say about the GPUs over a window.
type Fleet struct {
	// Step is the bucket width every hour figure is counted in.
	Step time.Duration
	GPUs []GPU
	// Jobs are the owners of GPUs, one entry per job (see Owner.JobName).
	Jobs []Job
	// Missing names metrics (or label conventions) absent from the data, in
	// words fit for the digest's data-quality footer.
	Missing []string
	// Labels says which label conventions were detected, e.g. "host from hostname".
	Labels []string
}

// GPUKey identifies one GPU or MIG instance: its UUID and GPU_I_ID. Host and
// Index are set only for series without a UUID.
type GPUKey struct {
	UUID        string
	MIGInstance string
	Host, Index string
}

// Owner is the workload a GPU was allocated to, as the exporter labels it.
type Owner struct {
	Namespace string
	Pod       string
	Container string
	// Workload is a label naming the job several pods make up (workloadLabels).
	Workload string
	// HPCJob is a Slurm/HPC job id (hpc_job).
	HPCJob string
}

// IsZero reports whether no owner is known.
func (o Owner) IsZero() bool { return o == Owner{} }

// String is "namespace/pod", "job 123" or "" when unknown.
func (o Owner) String() string {
	switch {
	case o.Namespace != "" && o.Pod != "":
		return o.Namespace + "/" + o.Pod
	case o.Pod != "":
		return o.Pod
	case o.Workload != "":
		return o.JobName()
	case o.HPCJob != "":
		return "job " + o.HPCJob
	}
	return ""
}

// JobName names the job o belongs to: "namespace/workload" when a workload
// label groups pods, else "namespace/pod", else the Slurm job.
func (o Owner) JobName() string {
	if o.Workload != "" {
		if o.Namespace != "" {
			return o.Namespace + "/" + o.Workload
		}
		return o.Workload
	}
	if o.Pod == "" && o.HPCJob != "" {
		return "job " + o.HPCJob
	}
	return o.String()
}

// GPU is one GPU's (or MIG instance's) facts over the window.
type GPU struct {
	Key GPUKey
	// Host and Index are the host and index of the GPU's latest sample.
	Host, Index string
	Model       string // modelName, e.g. "NVIDIA A100-SXM4-80GB"
	MIGProfile  string // GPU_I_PROFILE, e.g. "1g.10gb"
	// Owner is the owner seen in the most buckets.
	Owner Owner

	// CapacityBytes is USED + FREE (+ RESERVED) of one series at one bucket:
	// the largest such sum, never a sum across series.
	CapacityBytes int64
	// CapacityWithoutReserved is true when no sample had FB_RESERVED.
	CapacityWithoutReserved bool
	PeakUsedBytes           int64
	PeakUsedRatio           float64
	PeakAt                  time.Time
	// PeakOwner is the owner at the time of the peak.
	PeakOwner    Owner
	AvgUsedRatio float64
	HoursAbove   float64 // hours at or above Thresholds.NearOOMRatio
	// ActivityMetric is the metric idleness was judged on, "" when none reported.
	ActivityMetric string
	GiBHours       float64 // memory used integrated over the window

	// Usage splits the window by owner (no owner included, as the zero Owner).
	Usage []OwnerUsage
	// Restarts are the drops of held memory to about zero that the same job
	// climbed back from.
	Restarts []Restart
	// FirstSeen and LastSeen bound the buckets with any sample.
	FirstSeen, LastSeen time.Time
	// Ratio is the peak used/capacity per bucket, for the chart.
	Ratio []Point
}

// OwnerUsage is what one owner did on one GPU.
type OwnerUsage struct {
	Owner    Owner
	GiBHours float64
	Hours    float64 // hours with a memory sample under this owner
	// IdleHours are hours idle while holding at least Thresholds.HoldingBytes.
	IdleHours float64
	// IdleHeldBytes is the mean memory held during IdleHours.
	IdleHeldBytes int64
}

// Restart is memory falling to about zero and climbing again.
type Restart struct {
	// At is the end of the bucket in which memory reached about zero: the
	// drop happened in the step before it.
	At    time.Time
	GPU   GPUKey
	Owner Owner
}

// IdleHours is the GPU's idle-while-holding time over all owners.
func (g GPU) IdleHours() float64 {
	var h float64
	for _, u := range g.Usage {
		h += u.IdleHours
	}
	return h
}

// Stopped reports whether the GPU's last sample is well before the window's
// end: its exporter (or node) stopped reporting.
func (g GPU) Stopped(w Window, step time.Duration) bool {
	return !g.LastSeen.IsZero() && w.End.Sub(g.LastSeen) > staleAfter(step)
}

// staleAfter is how long without samples makes a GPU "stopped": three
// buckets, and never less than 15 minutes so one missed scrape or a slow
// exporter restart is not news.
func staleAfter(step time.Duration) time.Duration {
	return max(3*step, 15*time.Minute)
}

// Name is how a GPU is shown: "node-a GPU 1", "node-c GPU 0 MIG 7 (1g.10gb)".
func (g GPU) Name() string {
	return GPUName(g.Host, g.Index, g.Key.MIGInstance, g.MIGProfile)
}

// GPUName formats a GPU's host, index and MIG instance the way GPU.Name does.
func GPUName(host, index, mig, profile string) string {
	s := host + " GPU " + index
	if host == "" {
		s = "GPU " + index
	}
	if mig != "" {
		s += " MIG " + mig
		if profile != "" {
			s += " (" + profile + ")"
		}
	}
	return s
}

// Share is the fraction of a whole GPU the instance is: 1 for a whole GPU,
// slices/7 (slices/4 on an A30) for a MIG profile such as "3g.40gb".
func (g GPU) Share() float64 { return MIGShare(g.MIGProfile, g.Model) }

func sortStrings(s []string) { sort.Strings(s) }

func present(v float64) bool { return !math.IsNaN(v) }
