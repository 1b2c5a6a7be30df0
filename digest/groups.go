package digest

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/vrambot/vrambot/digest/fleet"
)

// Findings are shown one line per job (docs/digest.md §9): an 8-GPU job
// near OOM is one line naming its GPUs, not eight. A GPU with no known
// owner is a line of its own.

// JobRef names what a grouped finding is about: a job and the GPUs it ran
// on, or a GPU with no known owner.
type JobRef struct {
	Job  string `json:"job,omitempty"` // "" when the owner is unknown
	Kind string `json:"kind,omitempty"`
	GPU  string `json:"gpu,omitempty"` // the GPU, when the owner is unknown
	// GPUs is how many GPUs the job held, Model their catalog name ("H100
	// 80GB SXM", "A100 80GB MIG 1g.10gb"; "" when several), Hosts theirs.
	GPUs  int      `json:"gpus"`
	Model string   `json:"model,omitempty"`
	Hosts []string `json:"hosts,omitempty"`
}

func newJobRef(j fleet.Job) JobRef {
	r := JobRef{Job: j.Name, Kind: string(j.Kind), GPUs: len(j.GPUs), Hosts: j.Hosts}
	if len(j.ByModel) == 1 {
		r.Model = gpuName(j.ByModel[0].Model)
		if len(j.MIGProfiles) == 1 {
			r.Model += " MIG " + j.MIGProfiles[0]
		}
	}
	return r
}

func gpuRef(g fleet.GPU) JobRef {
	return JobRef{GPU: g.Name(), GPUs: 1, Model: gpuName(g.Model)}
}

// label is "ml/ddp (training, 8× H100 80GB SXM on node-a)" or "node-a GPU
// 3 (H100 80GB SXM), owner unknown".
func (r JobRef) label(withKind bool) string {
	if r.Job == "" {
		s := r.GPU
		if r.Model != "" {
			s += " (" + r.Model + ")"
		}
		return s + ", owner unknown"
	}
	return r.Job + " (" + r.desc(withKind) + ")"
}

// desc is what the job runs on: "training, 8× H100 80GB SXM on node-a"; a
// GPU with no known owner is its name.
func (r JobRef) desc(withKind bool) string {
	if r.Job == "" {
		return r.GPU
	}
	var parts []string
	if withKind && r.Kind != "" {
		parts = append(parts, r.Kind)
	}
	gpus := fleet.Plural(r.GPUs, "GPU")
	if r.Model != "" {
		gpus = fmt.Sprintf("%d× %s", r.GPUs, r.Model)
	}
	if len(r.Hosts) > 0 {
		gpus += " on " + fleet.ListSome(r.Hosts)
	}
	return strings.Join(append(parts, gpus), ", ")
}

// onGPU names a GPU of the job briefly: "GPU 3" when the job has one host.
func (r JobRef) onGPU(name string) string {
	if len(r.Hosts) == 1 {
		if rest, ok := strings.CutPrefix(name, r.Hosts[0]+" "); ok {
			return rest
		}
	}
	return name
}

// NearOOMJob is near_oom grouped by the job that held the GPUs at their
// peak: one entry per job, or per GPU with no known owner.
type NearOOMJob struct {
	JobRef
	// GPUsNearOOM is how many of its GPUs reached the threshold.
	GPUsNearOOM int `json:"gpus_near_oom"`
	// HoursAbove95 counts the hours any of them was at or above it.
	HoursAbove95  float64   `json:"hours_above_95"`
	PeakUsedRatio float64   `json:"peak_used_ratio"`
	PeakUsedBytes int64     `json:"peak_used_bytes"`
	CapacityBytes int64     `json:"capacity_bytes"`
	PeakGPU       string    `json:"peak_gpu"`
	PeakAt        time.Time `json:"peak_at"`
	Restarts      int       `json:"restarts"`
}

// IdleJob is idle_holding grouped by the owner's job: one entry per job,
// or per GPU with no known owner.
type IdleJob struct {
	JobRef
	GPUsIdle int `json:"gpus_idle"`
	// IdleHours is the longest idle time of any of its GPUs, and
	// MemoryHeldBytes the memory they held meanwhile, added up.
	IdleHours       float64 `json:"idle_hours"`
	MemoryHeldBytes int64   `json:"memory_held_bytes"`
	GPUHours        float64 `json:"gpu_hours"`
	// USD is the idle GPU-hours' cost when each of them has a price.
	USD         *float64 `json:"usd"`
	PriceSource string   `json:"price_source,omitempty"`
}

// groupNearOOM groups the GPUs at or above the threshold by the job that
// held them at their peak, the longest time near OOM first.
func groupNearOOM(f fleet.Fleet, th fleet.Thresholds) []NearOOMJob {
	jobs := jobsByName(f)
	var out []NearOOMJob
	at := map[string]int{}
	for _, g := range f.GPUs {
		if g.CapacityBytes <= 0 || g.PeakUsedRatio < th.NearOOMRatio {
			continue
		}
		j, ok := jobs[g.PeakOwner.JobName()]
		if g.PeakOwner.IsZero() || !ok {
			out = append(out, NearOOMJob{JobRef: gpuRef(g), GPUsNearOOM: 1, HoursAbove95: round(g.HoursAbove, 2), PeakUsedRatio: round(g.PeakUsedRatio, 3),
				PeakUsedBytes: g.PeakUsedBytes, CapacityBytes: g.CapacityBytes, PeakGPU: g.Name(), PeakAt: g.PeakAt})
			continue
		}
		if i, seen := at[j.Name]; seen {
			out[i].GPUsNearOOM++
			continue
		}
		at[j.Name] = len(out)
		out = append(out, NearOOMJob{JobRef: newJobRef(j), GPUsNearOOM: 1, HoursAbove95: round(j.HoursAbove, 2), PeakUsedRatio: round(j.PeakUsedRatio, 3),
			PeakUsedBytes: j.PeakUsedBytes, CapacityBytes: j.CapacityBytes, PeakGPU: j.PeakGPU, PeakAt: j.PeakAt, Restarts: len(j.Restarts)})
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].HoursAbove95 != out[b].HoursAbove95 {
			return out[a].HoursAbove95 > out[b].HoursAbove95
		}
		return out[a].PeakUsedRatio > out[b].PeakUsedRatio
	})
	return out[:min(len(out), maxNearOOM)]
}

// groupIdle groups idle-while-holding entries by their owner's job, the
// most GPU-hours first.
func groupIdle(f fleet.Fleet, entries []IdleHolding) []IdleJob {
	jobs := jobsByName(f)
	gpus := map[string]fleet.GPU{}
	for _, g := range f.GPUs {
		gpus[g.Name()] = g
	}
	type acc struct {
		usd      float64
		unpriced bool
		sources  []string
	}
	var out []IdleJob
	var accs []acc
	at := map[string]int{}
	for _, e := range entries {
		key := "job\x00" + e.Job
		if e.Job == "" {
			key = "gpu\x00" + e.Name()
		}
		i, seen := at[key]
		if !seen {
			ref := gpuRef(gpus[e.Name()])
			if j, ok := jobs[e.Job]; ok && e.Job != "" {
				ref = newJobRef(j)
			}
			at[key], i = len(out), len(out)
			out = append(out, IdleJob{JobRef: ref})
			accs = append(accs, acc{})
		}
		g, a := &out[i], &accs[i]
		g.GPUsIdle++
		g.IdleHours = max(g.IdleHours, e.IdleHours)
		g.MemoryHeldBytes += e.MemoryHeldBytes
		g.GPUHours += e.GPUHours
		if e.USD == nil {
			a.unpriced = true
			continue
		}
		a.usd += *e.USD
		if !contains(a.sources, e.PriceSource) {
			a.sources = append(a.sources, e.PriceSource)
		}
	}
	for i := range out {
		out[i].GPUHours = round(out[i].GPUHours, 2)
		if !accs[i].unpriced {
			v := round(accs[i].usd, 2)
			out[i].USD, out[i].PriceSource = &v, strings.Join(accs[i].sources, "; ")
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].GPUHours != out[b].GPUHours {
			return out[a].GPUHours > out[b].GPUHours
		}
		return out[a].MemoryHeldBytes > out[b].MemoryHeldBytes
	})
	return out[:min(len(out), maxIdleHolding)]
}

func jobsByName(f fleet.Fleet) map[string]fleet.Job {
	m := make(map[string]fleet.Job, len(f.Jobs))
	for _, j := range f.Jobs {
		m[j.Name] = j
	}
	return m
}

// line is the near-OOM finding as the thread shows it: "ml/ddp (8× H100
// 80GB SXM on node-a): 95%+ for 3 h 10 min, peak 78.9 of 79.6 GiB on GPU 3
// at Wed 25 Nov 23:55".
func (g NearOOMJob) line(th float64, loc *time.Location) string {
	where := " on " + g.onGPU(g.PeakGPU)
	if g.Job == "" {
		where = ""
	}
	s := fmt.Sprintf("%s: %s+ for %s, peak %s%s at %s", g.label(false), formatRatio(th), formatHours(g.HoursAbove95),
		formatOf(g.PeakUsedBytes, g.CapacityBytes), where, formatTime(g.PeakAt, loc))
	if g.GPUsNearOOM < g.GPUs {
		s += fmt.Sprintf("; %d of its %d GPUs reached %s", g.GPUsNearOOM, g.GPUs, formatRatio(th))
	}
	if g.Restarts > 0 {
		s += "; restarted " + times(g.Restarts)
	}
	return s
}

// line is the idle finding: "research/jupyter-alice-0 (notebook, 1× A100
// 80GB on node-a): idle 24 h holding 30 GiB, 24 GPU-hours, $36.00 (…)".
func (g IdleJob) line() string {
	what := fmt.Sprintf("idle %s holding %s", formatHours(g.IdleHours), formatBytes(g.MemoryHeldBytes))
	if g.GPUsIdle > 1 {
		what = fmt.Sprintf("idle up to %s on %d GPUs holding %s in all", formatHours(g.IdleHours), g.GPUsIdle, formatBytes(g.MemoryHeldBytes))
	}
	s := fmt.Sprintf("%s: %s, %s GPU-hours", g.label(true), what, formatNumber(g.GPUHours))
	if g.USD != nil {
		s += fmt.Sprintf(", %s (%s)", formatUSD(*g.USD), g.PriceSource)
	}
	return s
}

// countText is "1 job (8 GPUs)", "2 GPUs" or "1 job and 1 GPU" for
// groups of which owned are jobs and gpus counts every GPU in them.
func countText(groups, owned, gpus int) string {
	unowned := groups - owned
	var s string
	switch {
	case owned > 0 && unowned > 0:
		s = fleet.Plural(owned, "job") + " and " + fleet.Plural(unowned, "GPU")
	case owned > 0:
		s = fleet.Plural(owned, "job")
	default:
		return fleet.Plural(unowned, "GPU")
	}
	if gpus > groups {
		s += fmt.Sprintf(" (%d GPUs)", gpus)
	}
	return s
}

func (d Digest) nearOOMCount() string {
	owned, gpus := 0, 0
	for _, g := range d.NearOOMJobs {
		if g.Job != "" {
			owned++
		}
		gpus += g.GPUsNearOOM
	}
	return countText(len(d.NearOOMJobs), owned, gpus)
}

func (d Digest) idleCount() string {
	owned, gpus := 0, 0
	for _, g := range d.IdleJobs {
		if g.Job != "" {
			owned++
		}
		gpus += g.GPUsIdle
	}
	return countText(len(d.IdleJobs), owned, gpus)
}
