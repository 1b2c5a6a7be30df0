package fleet

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
	"unicode"
)

// Kind is what a job does with its GPUs.
type Kind string

// The job kinds of the digest's JSON (docs/contracts.md §3).
const (
	KindTraining Kind = "training"
	KindServing  Kind = "serving"
	KindNotebook Kind = "notebook"
	KindUnknown  Kind = "unknown"
)

// Job is the GPUs of one owner (Owner.JobName) over the window.
type Job struct {
	Name      string // "namespace/pod", "namespace/workload" or "job 123"
	Namespace string
	Workload  string
	HPCJob    string
	// Pods and Containers are the distinct pod and container names seen.
	Pods       []string
	Containers []string
	Kind       Kind
	// KindReason says why the job got its kind, in words.
	KindReason string
	GPUs       []GPUKey
	GPUNames   []string
	Hosts      []string
	// PeakUsedRatio is the highest peak used/capacity of any of its GPUs,
	// at PeakAt on PeakGPU, which then held PeakUsedBytes of its
	// CapacityBytes.
	PeakUsedRatio float64
	PeakAt        time.Time
	PeakGPU       string
	PeakUsedBytes int64
	CapacityBytes int64
	// MIGProfiles are the MIG profiles of its GPUs that are MIG slices.
	MIGProfiles []string
	// Hours is how long it held at least one GPU (whole buckets).
	Hours float64
	// HoursAbove counts wall-clock hours in which any of its GPUs was at or
	// above Thresholds.NearOOMRatio.
	HoursAbove float64
	// GPUHours is the time it held its GPUs (a MIG slice counts as its share
	// of a GPU); IdleGPUHours the part of it idle while holding memory.
	GPUHours     float64
	IdleGPUHours float64
	GiBHours     float64
	// ByModel splits GPUHours by GPU model, for pricing.
	ByModel []ModelHours
	// Activity is the mean engine activity (0..1) while holding memory;
	// HasActivity is false when no activity metric was reported.
	Activity    float64
	HasActivity bool
	// Restarts are the job's restarts: drops on several of its GPUs within
	// a few minutes of each other are one restart.
	Restarts            []JobRestart
	FirstSeen, LastSeen time.Time
	// Ratio is the highest peak used/capacity of its GPUs per bucket, for
	// the chart.
	Ratio []Point
}

// ModelHours are a job's GPU-hours on one GPU model.
type ModelHours struct {
	Model        string
	GPUHours     float64
	IdleGPUHours float64
}

// JobRestart is one restart of a job and the GPUs whose memory fell.
type JobRestart struct {
	At   time.Time
	GPUs []string
}

// Serving detection by memory shape (docs/vllm-kv.md §1): vLLM, SGLang and
// TGI pre-allocate gpu_memory_utilization × total memory at start (0.9 by
// default, 0.8-0.95 in common use) and hold it flat whatever the load.
const (
	servingMinRatio = 0.80
	servingMaxRatio = 0.96
	// servingSpread is how much the held ratio may move (95th minus 5th
	// percentile) for memory to count as held flat.
	servingSpread = 0.03
	// servingMaxActivity: a server between requests is far from saturated;
	// a training step keeps the engine busy.
	servingMaxActivity = 0.5
	// servingMinHeld is how long the flat plateau must last.
	servingMinHeld = time.Hour
)

// Name tokens that say what a workload is: the engines' usual pod, image
// and container names, Jupyter, and the words training jobs are named with.
var (
	servingTokens  = []string{"vllm", "tgi", "sglang", "triton", "tritonserver", "tensorrtllm", "lmdeploy"}
	notebookTokens = []string{"jupyter", "jupyterlab", "jupyterhub", "notebook", "notebooks"}
	trainingTokens = []string{"train", "training", "trainer", "finetune", "ft", "sft", "pretrain", "pretraining", "dpo", "ddp", "fsdp", "deepspeed", "megatron"}
)

type jobAcc struct {
	job        Job
	pods       map[string]bool
	containers map[string]bool
	hosts      map[string]bool
	gpus       map[int]*jobGPU
	gpuOrder   []int
	above      map[int]bool
	held       map[int]bool
	migs       map[string]bool
	actSum     float64
	actN       int
	restarts   []Restart
	ratio      map[int]float64 // bucket -> highest peak ratio
	ends       map[int]time.Time
}

// jobGPU is what a job did on one of its GPUs.
type jobGPU struct {
	name        string
	model       string
	share       float64
	owned, idle int       // buckets with a memory sample, and idle while holding
	held        []float64 // used/capacity of each bucket it held memory, in order
}

func buildJobs(w Window, step time.Duration, th Thresholds, gpus []GPU, bks [][]bucket) []Job {
	stepH := step.Hours()
	holdMiB := float64(th.HoldingBytes) / mib
	accs := map[string]*jobAcc{}
	var names []string
	for gi, g := range gpus {
		capMiB := float64(g.CapacityBytes) / mib
		share := g.Share()
		n := len(bks[gi])
		for i, b := range bks[gi] {
			if !present(b.used) || b.owner.IsZero() {
				continue
			}
			name := b.owner.JobName()
			j := accs[name]
			if j == nil {
				j = &jobAcc{
					job:  Job{Name: name, Namespace: b.owner.Namespace, Workload: b.owner.Workload, HPCJob: b.owner.HPCJob},
					pods: map[string]bool{}, containers: map[string]bool{}, hosts: map[string]bool{},
					gpus: map[int]*jobGPU{}, above: map[int]bool{}, held: map[int]bool{}, migs: map[string]bool{},
					ratio: map[int]float64{}, ends: map[int]time.Time{},
				}
				accs[name] = j
				names = append(names, name)
			}
			if b.owner.Pod != "" {
				j.pods[b.owner.Pod] = true
			}
			if b.owner.Container != "" {
				j.containers[b.owner.Container] = true
			}
			if g.Host != "" {
				j.hosts[g.Host] = true
			}
			jg := j.gpus[gi]
			if jg == nil {
				jg = &jobGPU{name: g.Name(), model: g.Model, share: share}
				j.gpus[gi] = jg
				j.gpuOrder = append(j.gpuOrder, gi)
			}
			at := w.BucketEnd(i, n, step)
			if j.job.FirstSeen.IsZero() || at.Before(j.job.FirstSeen) {
				j.job.FirstSeen = at
			}
			if at.After(j.job.LastSeen) {
				j.job.LastSeen = at
			}
			jg.owned++
			j.held[i] = true
			if g.MIGProfile != "" {
				j.migs[g.MIGProfile] = true
			}
			j.job.GiBHours += b.used / 1024 * stepH
			if capMiB > 0 && present(b.peak) {
				r := b.peak / capMiB
				if r > j.job.PeakUsedRatio {
					j.job.PeakUsedRatio, j.job.PeakAt, j.job.PeakGPU = r, at, g.Name()
					j.job.PeakUsedBytes, j.job.CapacityBytes = int64(b.peak*mib), g.CapacityBytes
				}
				if r >= th.NearOOMRatio {
					j.above[i] = true
				}
				if old, ok := j.ratio[i]; !ok || r > old {
					j.ratio[i], j.ends[i] = r, at
				}
			}
			if b.used < holdMiB {
				continue
			}
			if capMiB > 0 {
				jg.held = append(jg.held, b.used/capMiB)
			}
			if present(b.act) {
				j.actSum += b.act
				j.actN++
				if b.act < th.IdleActivity {
					jg.idle++
				}
			}
		}
		for _, r := range g.Restarts {
			if j := accs[r.Owner.JobName()]; j != nil && !r.Owner.IsZero() {
				j.restarts = append(j.restarts, r)
			}
		}
	}
	jobs := make([]Job, 0, len(names))
	for _, name := range names {
		jobs = append(jobs, accs[name].finish(gpus, step, stepH))
	}
	sort.SliceStable(jobs, func(a, b int) bool {
		if jobs[a].GPUHours != jobs[b].GPUHours {
			return jobs[a].GPUHours > jobs[b].GPUHours
		}
		return jobs[a].Name < jobs[b].Name
	})
	return jobs
}

// finish derives the job's figures. Hours are counted in whole buckets and
// multiplied once, so a day is exactly 24 hours.
func (j *jobAcc) finish(gpus []GPU, step time.Duration, stepH float64) Job {
	out := j.job
	out.Pods = sortedKeys(j.pods)
	out.Containers = sortedKeys(j.containers)
	out.Hosts = sortedKeys(j.hosts)
	sort.Ints(j.gpuOrder)
	byModel := map[string]*ModelHours{}
	for _, gi := range j.gpuOrder {
		jg := j.gpus[gi]
		out.GPUs = append(out.GPUs, gpus[gi].Key)
		out.GPUNames = append(out.GPUNames, jg.name)
		mh := byModel[jg.model]
		if mh == nil {
			mh = &ModelHours{Model: jg.model}
			byModel[jg.model] = mh
		}
		mh.GPUHours += float64(jg.owned) * stepH * jg.share
		mh.IdleGPUHours += float64(jg.idle) * stepH * jg.share
		out.GPUHours += float64(jg.owned) * stepH * jg.share
		out.IdleGPUHours += float64(jg.idle) * stepH * jg.share
	}
	for _, m := range sortedKeys(byModel) {
		out.ByModel = append(out.ByModel, *byModel[m])
	}
	out.HoursAbove = float64(len(j.above)) * stepH
	out.Hours = float64(len(j.held)) * stepH
	out.MIGProfiles = sortedKeys(j.migs)
	if j.actN > 0 {
		out.Activity, out.HasActivity = j.actSum/float64(j.actN), true
	}
	out.Restarts = clusterRestarts(j.restarts, gpus, step)
	var idx []int
	for i := range j.ratio {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		out.Ratio = append(out.Ratio, Point{T: j.ends[i], V: j.ratio[i]})
	}
	out.Kind, out.KindReason = j.classify(out, step)
	return out
}

// clusterRestarts merges drops on several GPUs of one job that happen within
// a few minutes of each other (a multi-GPU job's ranks die together) into
// one restart.
// Only the GPUs the restarts name are looked up: a fleet of 10,000 GPUs
// in 10,000 jobs named every GPU once per job (10^8 names, minutes).
func clusterRestarts(rs []Restart, gpus []GPU, step time.Duration) []JobRestart {
	if len(rs) == 0 {
		return nil
	}
	names := map[GPUKey]string{}
	for _, r := range rs {
		names[r.GPU] = ""
	}
	pos := map[string]int{}
	for i, g := range gpus {
		if _, ok := names[g.Key]; ok {
			names[g.Key] = g.Name()
			pos[g.Name()] = i
		}
	}
	sort.SliceStable(rs, func(a, b int) bool { return rs[a].At.Before(rs[b].At) })
	within := max(2*step, 10*time.Minute)
	var out []JobRestart
	for _, r := range rs {
		name := names[r.GPU]
		if k := len(out) - 1; k >= 0 && r.At.Sub(out[k].At) <= within {
			if !contains(out[k].GPUs, name) {
				out[k].GPUs = append(out[k].GPUs, name)
			}
			continue
		}
		out = append(out, JobRestart{At: r.At, GPUs: []string{name}})
	}
	for _, r := range out {
		sort.Slice(r.GPUs, func(a, b int) bool { return pos[r.GPUs[a]] < pos[r.GPUs[b]] })
	}
	return out
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// classify names what the job is: by its pod, container or workload name
// first (an engine's name is the strongest evidence), then by the memory
// shape of a serving engine.
func (j *jobAcc) classify(job Job, step time.Duration) (Kind, string) {
	var names []string
	names = append(names, job.Pods...)
	names = append(names, job.Containers...)
	if job.Workload != "" {
		names = append(names, job.Workload)
	}
	for _, rule := range []struct {
		kind   Kind
		tokens []string
	}{
		{KindServing, servingTokens},
		{KindNotebook, notebookTokens},
		{KindTraining, trainingTokens},
	} {
		for _, name := range names {
			if tok, ok := matchToken(name, rule.tokens); ok {
				return rule.kind, fmt.Sprintf("name %q says %s", name, tok)
			}
		}
	}
	if ratio, ok := j.flatAtEngineShare(job, step); ok {
		return KindServing, fmt.Sprintf("memory held flat at %.0f%% of capacity with low engine activity, as a serving engine pre-allocates gpu_memory_utilization", ratio*100)
	}
	return KindUnknown, "neither its name nor its memory shape says"
}

// flatAtEngineShare reports whether every GPU of the job held memory flat at
// a serving engine's share of capacity for at least servingMinHeld, with the
// engine far from saturated, and the median held ratio.
func (j *jobAcc) flatAtEngineShare(job Job, step time.Duration) (float64, bool) {
	if job.HasActivity && job.Activity >= servingMaxActivity {
		return 0, false
	}
	need := int(math.Ceil(float64(servingMinHeld) / float64(step)))
	var medians []float64
	for _, gi := range j.gpuOrder {
		held := j.gpus[gi].held
		// The first held bucket may be the ramp while the engine starts.
		if len(held) < need+1 {
			return 0, false
		}
		s := append([]float64(nil), held[1:]...)
		sort.Float64s(s)
		p5, p50, p95 := quantile(s, 0.05), quantile(s, 0.5), quantile(s, 0.95)
		if p95-p5 > servingSpread || p50 < servingMinRatio || p50 > servingMaxRatio {
			return 0, false
		}
		medians = append(medians, p50)
	}
	if len(medians) == 0 {
		return 0, false
	}
	sort.Float64s(medians)
	return quantile(medians, 0.5), true
}

// quantile of sorted s (nearest rank).
func quantile(s []float64, q float64) float64 {
	return s[int(math.Round(q*float64(len(s)-1)))]
}

// matchToken reports the first token of name (split at anything that is not
// a letter, lower-cased) found in tokens; "text-generation-inference" is
// TGI's long name.
func matchToken(name string, tokens []string) (string, bool) {
	lower := strings.ToLower(name)
	if contains(tokens, "tgi") && strings.Contains(lower, "text-generation-inference") {
		return "tgi", true
	}
	for _, t := range strings.FieldsFunc(lower, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if contains(tokens, t) {
			return t, true
		}
	}
	return "", false
}
