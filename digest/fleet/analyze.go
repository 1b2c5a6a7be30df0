package fleet

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

const mib = 1 << 20

// The reductions of Raw, indexing seriesAcc.v.
const (
	mUsedMax = iota
	mUsedAvg
	mUsedMin
	mFree
	mReserved
	mEngine
	mUtil
	nMetrics
)

// Restart detection: a process that exits frees its framebuffer; one that
// is alive keeps at least its CUDA context, about 300 MB with lazy module
// loading (docs/memory-model.md §1.7). "About zero" is 2 % of capacity,
// between 64 and 256 MiB, so an empty MIG slice reads as zero and a live
// process's context does not.
const (
	zeroShare  = 0.02
	zeroMinMiB = 64
	zeroMaxMiB = 256
)

// seriesAcc is one series' buckets for every reduction; NaN marks a bucket
// without a sample.
type seriesAcc struct {
	owner                             Owner
	host, hostFrom, index, model, mig string
	v                                 [nMetrics][]float64
}

// gpuAcc gathers one GPU's series.
type gpuAcc struct {
	key    GPUKey
	series map[string]*seriesAcc
	ids    []string // series ids in arrival order, so results never depend on map order
}

// bucket is one GPU's state in one bucket, reduced over its series.
type bucket struct {
	present bool
	used    float64 // MiB, mean over the bucket, of the series holding the most
	peak    float64 // MiB, max
	low     float64 // MiB, min
	act     float64 // 0..1
	owner   Owner
}

// Analyze reduces the per-bucket series over w (buckets of width step ending
// at w.End) to per-GPU and per-job facts.
func Analyze(w Window, step time.Duration, th Thresholds, raw Raw) Fleet {
	th = th.WithDefaults()
	f := Fleet{Step: step}
	n := w.Buckets(step)
	if n <= 0 {
		return f
	}
	acc := newAccumulator(w, step, n, detectScheme(raw.UsedAvg, raw.UsedMax, raw.UsedMin))
	for _, set := range []struct {
		series []Series
		m      int
	}{
		{raw.UsedMax, mUsedMax}, {raw.UsedAvg, mUsedAvg}, {raw.UsedMin, mUsedMin}, {raw.Free, mFree},
		{raw.Reserved, mReserved}, {raw.Engine, mEngine}, {raw.Util, mUtil},
	} {
		acc.add(set.series, set.m)
	}
	var buckets [][]bucket
	var q quality
	f.GPUs, buckets, q = acc.reduce(th)
	f.Jobs = buildJobs(w, step, th, f.GPUs, buckets)
	q.noUUID = acc.noUUID
	f.Missing = q.missing(raw)
	if len(f.GPUs) > 0 {
		f.Labels = q.labels(acc.scheme)
	}
	return f
}

// accumulator gathers a window's series by GPU and by series, each value
// in its bucket.
type accumulator struct {
	w      Window
	step   time.Duration
	n      int
	scheme labelScheme
	accs   map[GPUKey]*gpuAcc
	keys   []GPUKey
	noUUID int
}

func newAccumulator(w Window, step time.Duration, n int, scheme labelScheme) *accumulator {
	return &accumulator{w: w, step: step, n: n, scheme: scheme, accs: map[GPUKey]*gpuAcc{}}
}

// bucketOf is the bucket of time t, false outside the window.
func (a *accumulator) bucketOf(t time.Time) (int, bool) {
	back := a.w.End.Sub(t)
	if back < -a.step/2 {
		return 0, false
	}
	i := a.n - 1 - int((back+a.step/2)/a.step)
	return i, i >= 0 && i < a.n
}

// add puts the points of set into metric m of their GPU's series: the
// bucket's maximum (its minimum for mUsedMin), never NaN or Inf.
func (a *accumulator) add(set []Series, m int) {
	for _, s := range set {
		dst := a.series(s).v[m]
		for _, p := range s.Points {
			i, ok := a.bucketOf(p.T)
			v := p.V
			if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			if !present(dst[i]) || (m == mUsedMin && v < dst[i]) || (m != mUsedMin && v > dst[i]) {
				dst[i] = v
			}
		}
	}
}

// series is the accumulator of s's GPU and series, made on first sight.
func (a *accumulator) series(s Series) *seriesAcc {
	host, from := hostOf(s.Labels)
	k := gpuKeyOf(s.Labels, host)
	g := a.accs[k]
	if g == nil {
		g = &gpuAcc{key: k, series: map[string]*seriesAcc{}}
		a.accs[k] = g
		a.keys = append(a.keys, k)
		if k.UUID == "" {
			a.noUUID++
		}
	}
	id := seriesID(s.Labels)
	sa := g.series[id]
	if sa == nil {
		sa = &seriesAcc{owner: a.scheme.ownerOf(s.Labels), host: host, hostFrom: from,
			index: s.Labels[labelGPU], model: s.Labels[labelModel], mig: s.Labels[labelMIGProfile]}
		for j := range sa.v {
			sa.v[j] = nanSlice(a.n)
		}
		g.series[id] = sa
		g.ids = append(g.ids, id)
	}
	return sa
}

// reduce turns each GPU's series into its figures and buckets, in the
// fleet's order (lessGPU), and notes what each GPU lacked.
func (a *accumulator) reduce(th Thresholds) ([]GPU, [][]bucket, quality) {
	q := quality{hostLabels: map[string]int{}}
	gpus := make([]GPU, 0, len(a.keys))
	var buckets [][]bucket
	for _, k := range a.keys {
		acc := a.accs[k]
		g, bks := acc.reduce(a.w, a.step, a.n, th)
		gpus = append(gpus, g)
		buckets = append(buckets, bks)
		q.hostLabels[acc.latest().hostFrom]++
		switch {
		case g.CapacityBytes == 0:
			q.noMemory = append(q.noMemory, g.Name())
		case g.ActivityMetric == "":
			q.noActivity = append(q.noActivity, g.Name())
		case g.ActivityMetric == MetricGPUUtil:
			q.coarse = append(q.coarse, g.Name())
		}
	}
	order := make([]int, len(gpus))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return lessGPU(gpus[order[i]], gpus[order[j]]) })
	sortedGPUs := make([]GPU, len(order))
	sortedBuckets := make([][]bucket, len(order))
	for i, o := range order {
		sortedGPUs[i], sortedBuckets[i] = gpus[o], buckets[o]
	}
	return sortedGPUs, sortedBuckets, q
}

// quality is what the series lacked, for the digest's data-quality notes.
type quality struct {
	noActivity, coarse, noMemory []string
	hostLabels                   map[string]int // host label → GPUs named by it
	noUUID                       int
}

// missing lists the metrics and labels the window lacked.
func (q quality) missing(raw Raw) []string {
	var out []string
	switch {
	case len(raw.UsedAvg) == 0:
		out = append(out, "no "+MetricFBUsed+" samples in the window (is dcgm-exporter scraped by this Prometheus)")
	case len(raw.Free) == 0:
		out = append(out, MetricFBFree+" absent: memory ratios unknown")
	case len(raw.Reserved) == 0:
		out = append(out, MetricFBReserved+" absent (dcgm-exporter before 4.3.1-4.4.0): capacities are used + free, slightly low")
	}
	if len(q.noMemory) > 0 && len(raw.UsedAvg) > 0 && len(raw.Free) > 0 {
		out = append(out, fmt.Sprintf("no memory capacity for %s", ListSome(q.noMemory)))
	}
	if len(q.noActivity) > 0 {
		out = append(out, fmt.Sprintf("no %s or %s for %s: idle time unknown", MetricEngineActive, MetricGPUUtil, ListSome(q.noActivity)))
	}
	if len(q.coarse) > 0 {
		out = append(out, fmt.Sprintf("%s absent for %s: idle judged on the coarser %s", MetricEngineActive, ListSome(q.coarse), MetricGPUUtil))
	}
	if len(raw.UsedMin) == 0 && len(raw.UsedAvg) > 0 {
		out = append(out, "no minimum of "+MetricFBUsed+" per bucket: restarts unknown")
	}
	if q.noUUID > 0 {
		out = append(out, fmt.Sprintf("%s without a UUID label: identified by host and index, so a relabelled host splits them", Plural(q.noUUID, "GPU")))
	}
	return out
}

// labels says which labels named the hosts and owners.
func (q quality) labels(scheme labelScheme) []string {
	var hl []string
	for _, l := range sortedKeys(q.hostLabels) {
		hl = append(hl, fmt.Sprintf("%s (%s)", l, Plural(q.hostLabels[l], "GPU")))
	}
	out := []string{"host from " + strings.Join(hl, ", ")}
	if scheme.exported {
		out = append(out, "owner from exported_namespace/exported_pod (ServiceMonitor honorLabels: false)")
	}
	return out
}

func nanSlice(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = math.NaN()
	}
	return s
}

// latest returns the series whose last sample is the newest: its host,
// index and model describe the GPU now.
func (a *gpuAcc) latest() *seriesAcc {
	best, bestAt := a.series[a.ids[0]], -1
	for _, id := range a.ids {
		sa := a.series[id]
		for i := len(sa.v[mUsedAvg]) - 1; i > bestAt; i-- {
			if anyPresent(sa, i) {
				best, bestAt = sa, i
				break
			}
		}
	}
	return best
}

func anyPresent(sa *seriesAcc, i int) bool {
	for m := range sa.v {
		if present(sa.v[m][i]) {
			return true
		}
	}
	return false
}

// capacityMiB is the largest USED + FREE (+ RESERVED) of one series in one
// bucket. Series whose USED and FREE labels do not line up (a relabelling
// rule touching one metric) are paired only in buckets where the GPU has a
// single series of each, so two owners' series are never added together.
func (a *gpuAcc) capacityMiB(n int) (capMiB float64, withReserved bool) {
	for _, id := range a.ids {
		sa := a.series[id]
		for i := range n {
			u, fr := sa.v[mUsedAvg][i], sa.v[mFree][i]
			if !present(u) || !present(fr) {
				continue
			}
			t := u + fr
			if r := sa.v[mReserved][i]; present(r) {
				t += r
				withReserved = true
			}
			capMiB = max(capMiB, t)
		}
	}
	if capMiB > 0 {
		return capMiB, withReserved
	}
	for i := range n {
		var used, free, res []float64
		for _, id := range a.ids {
			sa := a.series[id]
			if v := sa.v[mUsedAvg][i]; present(v) {
				used = append(used, v)
			}
			if v := sa.v[mFree][i]; present(v) {
				free = append(free, v)
			}
			if v := sa.v[mReserved][i]; present(v) {
				res = append(res, v)
			}
		}
		if len(used) != 1 || len(free) != 1 || len(res) > 1 {
			continue
		}
		t := used[0] + free[0]
		if len(res) == 1 {
			t += res[0]
			withReserved = true
		}
		capMiB = max(capMiB, t)
	}
	return capMiB, withReserved
}

// buckets reduces the GPU's series bucket by bucket. Pod churn and MPS
// sharing give one GPU several series: held memory is the series holding the
// most (its owner is the bucket's owner), the peak the largest maximum, the
// low the smallest minimum; every series reports the whole device.
func (a *gpuAcc) buckets(n int) (bks []bucket, hasEngine, hasUtil bool) {
	bks = make([]bucket, n)
	for i := range n {
		b := bucket{used: math.NaN(), peak: math.NaN(), low: math.NaN(), act: math.NaN()}
		engine, util := math.NaN(), math.NaN()
		var ownerUsed = math.Inf(-1)
		for _, id := range a.ids {
			sa := a.series[id]
			if !b.present && anyPresent(sa, i) {
				b.present = true
			}
			if v := sa.v[mUsedAvg][i]; present(v) {
				if !present(b.used) || v > b.used {
					b.used = v
				}
				if !sa.owner.IsZero() && v > ownerUsed {
					b.owner, ownerUsed = sa.owner, v
				}
			}
			if v := sa.v[mUsedMax][i]; present(v) && (!present(b.peak) || v > b.peak) {
				b.peak = v
			}
			if v := sa.v[mUsedMin][i]; present(v) && (!present(b.low) || v < b.low) {
				b.low = v
			}
			if v := sa.v[mEngine][i]; present(v) && (!present(engine) || v > engine) {
				engine = v
			}
			if v := sa.v[mUtil][i]; present(v) && (!present(util) || v > util) {
				util = v
			}
		}
		if !present(b.peak) {
			b.peak = b.used
		}
		switch {
		case present(engine):
			b.act, hasEngine = engine, true
		case present(util):
			b.act, hasUtil = util/100, true
		}
		bks[i] = b
	}
	return bks, hasEngine, hasUtil
}

// reduce computes the GPU's facts from its buckets.
func (a *gpuAcc) reduce(w Window, step time.Duration, n int, th Thresholds) (GPU, []bucket) {
	last := a.latest()
	g := GPU{Key: a.key, Host: last.host, Index: last.index}
	for _, id := range a.ids {
		sa := a.series[id]
		if sa.model != "" {
			g.Model = sa.model
		}
		if sa.mig != "" {
			g.MIGProfile = sa.mig
		}
	}
	if last.model != "" {
		g.Model = last.model
	}
	capMiB, withReserved := a.capacityMiB(n)
	g.CapacityBytes = int64(capMiB * mib)
	g.CapacityWithoutReserved = capMiB > 0 && !withReserved
	bks, hasEngine, hasUtil := a.buckets(n)
	switch {
	case hasEngine:
		g.ActivityMetric = MetricEngineActive
	case hasUtil:
		g.ActivityMetric = MetricGPUUtil
	}

	stepH := step.Hours()
	holdMiB := float64(th.HoldingBytes) / mib
	var usedSum float64
	usedN, aboveN := 0, 0
	owners := map[Owner]int{}
	usage := map[Owner]*usageAcc{}
	var usageOrder []Owner
	for i, b := range bks {
		at := w.BucketEnd(i, n, step)
		if b.present {
			if g.FirstSeen.IsZero() {
				g.FirstSeen = at
			}
			g.LastSeen = at
		}
		if present(b.peak) {
			g.PeakUsedBytes = max(g.PeakUsedBytes, int64(b.peak*mib))
			if capMiB > 0 {
				r := b.peak / capMiB
				g.Ratio = append(g.Ratio, Point{T: at, V: r})
				if r > g.PeakUsedRatio {
					g.PeakUsedRatio, g.PeakAt, g.PeakOwner = r, at, b.owner
				}
				if r >= th.NearOOMRatio {
					aboveN++
				}
			}
		}
		if !present(b.used) {
			continue
		}
		usedSum += b.used
		usedN++
		owners[b.owner]++
		gib := b.used / 1024 * stepH
		g.GiBHours += gib
		u := usage[b.owner]
		if u == nil {
			u = &usageAcc{}
			usage[b.owner] = u
			usageOrder = append(usageOrder, b.owner)
		}
		u.gib += gib
		u.n++
		if present(b.act) && b.act < th.IdleActivity && b.used >= holdMiB {
			u.idleN++
			u.idleHeld += b.used
		}
	}
	if usedN > 0 && capMiB > 0 {
		g.AvgUsedRatio = usedSum / float64(usedN) / capMiB
	}
	// Hours are counted in whole buckets, so a full day is exactly 24.
	g.HoursAbove = float64(aboveN) * stepH
	g.Owner = mostFrequent(owners)
	for _, o := range usageOrder {
		u := usage[o]
		ou := OwnerUsage{Owner: o, GiBHours: u.gib, Hours: float64(u.n) * stepH}
		if u.idleN > 0 {
			ou.IdleHours = float64(u.idleN) * stepH
			ou.IdleHeldBytes = int64(u.idleHeld / float64(u.idleN) * mib)
		}
		g.Usage = append(g.Usage, ou)
	}
	sort.SliceStable(g.Usage, func(i, j int) bool { return g.Usage[i].Owner.String() < g.Usage[j].Owner.String() })
	g.Restarts = restarts(g.Key, bks, w, step, capMiB, holdMiB)
	return g, bks
}

type usageAcc struct {
	gib, idleHeld float64
	n, idleN      int
}

// restarts finds held memory falling to about zero and climbing back under
// the same job: the crash-and-restart of a container (a CUDA OOM ends the
// process; Kubernetes restarts the container in the same pod). A fall with
// no climb is a job that ended; a climb under another owner is a new job.
// Buckets without samples (exporter gaps) are skipped, never read as zero.
func restarts(k GPUKey, bks []bucket, w Window, step time.Duration, capMiB, holdMiB float64) []Restart {
	zeroMiB := float64(zeroMaxMiB)
	if capMiB > 0 {
		zeroMiB = min(max(zeroShare*capMiB, zeroMinMiB), zeroMaxMiB)
	}
	var out []Restart
	var held Owner
	haveHeld := false
	drop := -1
	var dropOwner Owner
	for i, b := range bks {
		if !b.present {
			continue
		}
		low := b.low
		if !present(low) {
			low = b.used
		}
		isZero := present(low) && low <= zeroMiB
		isHeld := present(b.used) && b.used >= holdMiB
		if drop >= 0 {
			if !isHeld {
				continue
			}
			if b.owner.JobName() == dropOwner.JobName() {
				out = append(out, Restart{At: w.BucketEnd(drop, len(bks), step), GPU: k, Owner: dropOwner})
			}
			drop = -1
			held, haveHeld = b.owner, true
			continue
		}
		if isZero && haveHeld {
			drop, dropOwner = i, held
			continue
		}
		if isHeld {
			held, haveHeld = b.owner, true
		}
	}
	return out
}

// mostFrequent returns the non-empty owner seen in the most buckets (ties:
// the alphabetically first), or the empty Owner.
func mostFrequent(counts map[Owner]int) Owner {
	var best Owner
	bestN := 0
	for o, c := range counts {
		if o.IsZero() {
			continue
		}
		if c > bestN || (c == bestN && o.String() < best.String()) {
			best, bestN = o, c
		}
	}
	return best
}
