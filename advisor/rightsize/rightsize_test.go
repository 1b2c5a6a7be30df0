package rightsize

import (
	"math"
	"testing"

	"github.com/vrambot/vrambot/advisor/catalog"
)

const (
	gib  = int64(1) << 30
	mib  = int64(1) << 20
	h100 = "NVIDIA H100 80GB HBM3"
	a100 = "NVIDIA A100-SXM4-80GB"
	// Capacities as dcgm-exporter reports them (USED + FREE + RESERVED).
	h100Cap = 81559 * mib
	a100Cap = 81920 * mib
)

var testPrices = Prices{
	"H100-SXM":  {2.50, "h100 price"},
	"A100-80GB": {1.50, "a100 price"},
	"A100-40GB": {1.20, "a100-40 price"},
	"L40S":      {0.80, "l40s price"},
	"L4":        {0.70, "l4 price"},
}

// busy is the job: 17.5 GiB of an H100 80GB all day, busy 75%.
func busy() Job {
	return Job{Name: "ml/small-ft-0", GPUs: 1, Model: h100, PeakBytes: 17*gib + gib/2, CapacityBytes: h100Cap,
		Activity: 0.75, HasActivity: true, Hours: 24, GPUHoursPerWeek: 168}
}

func with(j Job, f func(*Job)) Job { f(&j); return j }

func TestAdvise(t *testing.T) {
	tests := []struct {
		name     string
		job      Job
		prices   Prices
		want     string // the proposal's Name, or ""
		reason   Reason
		slowdown float64
		saved    float64 // worst-case $/week
	}{
		{
			// 3g.40gb: 3/7 of $2.50 is $1.07/h; busy 75% on 3/7 of the
			// compute (and 4/8 of the bandwidth) it runs up to 2x as long,
			// $2.14 a today-hour: $0.36/h, $60/week saved at worst. A
			// 4g.40gb saves nothing at worst (4/7 x 1.75); an L40S would be
			// 3.2x slower (a quarter of the H100's bandwidth).
			name: "busy job on a fifth of an H100 gets a MIG slice", job: busy(),
			want: "MIG 3g.40gb", slowdown: 2, saved: 60,
		},
		{
			name: "mostly waiting, the cheaper L40S wins", job: with(busy(), func(j *Job) { j.Activity = 0.1 }),
			want: "L40S", slowdown: 1.29, saved: 246.93,
		},
		{
			name: "only today's price known: MIG, priced from today's GPU", job: busy(),
			prices: Prices{"H100-SXM": {2.50, "h100 price"}}, want: "MIG 3g.40gb", slowdown: 2, saved: 60,
		},
		{
			// Busy a fifth of the time: the slice slows it 1.27x at worst.
			name: "a notebook on an A100 fits a 3g.40gb", job: Job{Name: "research/jupyter-0", GPUs: 1, Model: a100,
				PeakBytes: 30 * gib, CapacityBytes: a100Cap, Activity: 0.2, HasActivity: true, IdleShare: 0.3, Hours: 24, GPUHoursPerWeek: 168},
			want: "MIG 3g.40gb", slowdown: 1.27, saved: 115.2,
		},
		{
			name: "a multi-GPU job with small shards gets smaller cards, never MIG", job: with(busy(), func(j *Job) {
				j.GPUs, j.PeakBytes, j.Activity, j.GPUHoursPerWeek = 4, 10*gib, 0.05, 4*168
			}),
			want: "L40S", slowdown: 1.14, saved: 1065.06,
		},
		{name: "near its peak", job: with(busy(), func(j *Job) { j.PeakBytes = h100Cap * 96 / 100 }), reason: ReasonNearPeak},
		{name: "serving engine", job: with(busy(), func(j *Job) { j.Serving = true }), reason: ReasonServing},
		{name: "multi-GPU shards too big", job: Job{Name: "ml/resnet-ddp-0", GPUs: 4, Model: a100, PeakBytes: 62000 * mib, // × 1.2 is more than the 72 GB RTX PRO 5000 holds
			CapacityBytes: a100Cap, Activity: 0.9, HasActivity: true, Hours: 24, GPUHoursPerWeek: 4 * 168}, reason: ReasonShards},
		{name: "too big for anything smaller", job: with(busy(), func(j *Job) { j.PeakBytes = 62000 * mib }), reason: ReasonTooBig},
		{name: "idle most of the window", job: with(busy(), func(j *Job) { j.IdleShare = 0.6 }), reason: ReasonIdle},
		{name: "restarted", job: with(busy(), func(j *Job) { j.Restarted = true }), reason: ReasonRestarted},
		{name: "short run", job: with(busy(), func(j *Job) { j.Hours = 1.5 }), reason: ReasonShortRun},
		{name: "no price for today's GPU", job: busy(), prices: Prices{"L40S": {0.8, "l40s"}}, reason: ReasonNoPrice},
		{name: "several models", job: with(busy(), func(j *Job) { j.Model = "" }), reason: ReasonMixedGPUs},
		{name: "already a MIG slice", job: with(busy(), func(j *Job) { j.MIGProfile = "3g.40gb" }), reason: ReasonOnMIG},
		{name: "unknown GPU", job: with(busy(), func(j *Job) { j.Model = "NVIDIA Quantum 9000" }), reason: ReasonUnknown},
		// Busy 95%: a 3g.40gb takes 2.27x as long and saves 3% at worst.
		{name: "compute-bound", job: with(busy(), func(j *Job) { j.Activity = 0.95 }), reason: ReasonNoSaving},
		// Without an activity metric it counts as busy all the time.
		{name: "no activity metric", job: with(busy(), func(j *Job) { j.HasActivity = false }), reason: ReasonNoSaving},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prices := tt.prices
			if prices == nil {
				prices = testPrices
			}
			p, reason := Advise(tt.job, prices)
			if reason != tt.reason || p.Name() != tt.want {
				t.Fatalf("Advise = %q (%s), want %q (%s)", p.Name(), reason, tt.want, tt.reason)
			}
			if reason != Proposed {
				return
			}
			if p.Slowdown != tt.slowdown || math.Abs(p.USDPerWeekSaved-tt.saved) > 0.005 {
				t.Errorf("slowdown %v, saved $%.2f/week; want %v, $%.2f", p.Slowdown, p.USDPerWeekSaved, tt.slowdown, tt.saved)
			}
			if p.NeedBytes < tt.job.PeakBytes+tt.job.PeakBytes/5 || p.MemoryBytes < p.NeedBytes {
				t.Errorf("holds %d bytes for a need of %d (peak %d + %.0f%%)", p.MemoryBytes, p.NeedBytes, tt.job.PeakBytes, Margin*100)
			}
			if p.USDPerWeekSavedBest < p.USDPerWeekSaved || p.PriceSource == "" || p.GPUs != tt.job.GPUs {
				t.Errorf("best case $%.2f < worst $%.2f, or no price source %q, or %d GPUs", p.USDPerWeekSavedBest, p.USDPerWeekSaved, p.PriceSource, p.GPUs)
			}
		})
	}
}

// TestCandidates: datacenter and workstation cards smaller than today's,
// with bf16 when today's has it; never a GeForce, TITAN or another vendor.
func TestCandidates(t *testing.T) {
	today, _ := catalog.LookupGPU("H100-SXM")
	names := map[string]bool{}
	for _, c := range Candidates(today) {
		names[c.Key] = true
		if c.MemoryBytes >= today.MemoryBytes || c.Vendor != "NVIDIA" || !c.BF16 || consumer(c) {
			t.Errorf("%s is a candidate for an H100", c.Key)
		}
	}
	for _, want := range []string{"L4", "L40S", "A10G", "A100-40GB", "RTX6000-Ada"} {
		if !names[want] {
			t.Errorf("%s is not a candidate for an H100", want)
		}
	}
	for _, not := range []string{"RTX4090", "T4", "V100-32GB", "H100-SXM", "H200", "MI300X"} {
		if names[not] {
			t.Errorf("%s is a candidate for an H100", not)
		}
	}
}

func TestSlowdown(t *testing.T) {
	tests := []struct{ a, ratio, want float64 }{
		{0, 5, 1}, // idle: no slower
		{1, 2, 2}, // busy all the time: the full ratio
		{0.75, 7.0 / 3, 2},
		{0.5, 0.5, 1}, // a faster GPU is not counted as a speed-up
	}
	for _, tt := range tests {
		if got := slowdown(tt.a, tt.ratio); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("slowdown(%v, %v) = %v, want %v", tt.a, tt.ratio, got, tt.want)
		}
	}
}
