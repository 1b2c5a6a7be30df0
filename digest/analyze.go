package digest

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
)

const mib = 1 << 20

// rawSeries are the range-query results analyze reduces, one matrix per
// metric, each point summarising one bucket.
type rawSeries struct {
	usedMax, usedAvg, free, reserved, engine, util model.Matrix
}

// labelScheme is how this Prometheus spells hosts and owners (digest.md §1.2).
type labelScheme struct {
	// exported is true when the workload labels arrive as exported_namespace/
	// exported_pod (ServiceMonitor honorLabels: false); namespace/pod then
	// name the exporter pod and must not be read as the owner.
	exported bool
}

func detectScheme(ms ...model.Matrix) labelScheme {
	for _, m := range ms {
		for _, s := range m {
			if s.Metric["exported_namespace"] != "" || s.Metric["exported_pod"] != "" {
				return labelScheme{exported: true}
			}
		}
	}
	return labelScheme{}
}

// hostLabel returns the host and the label it came from: "hostname" since
// dcgm-exporter renamed it, "Hostname" before, else Prometheus' "instance".
func hostLabel(m model.Metric) (host, label string) {
	for _, l := range []model.LabelName{"hostname", "Hostname"} {
		if v := m[l]; v != "" {
			return string(v), string(l)
		}
	}
	inst := string(m["instance"])
	if h, _, ok := strings.Cut(inst, ":"); ok && h != "" && !strings.Contains(h, "[") {
		inst = h
	}
	return inst, "instance"
}

func (ls labelScheme) owner(m model.Metric) Owner {
	o := Owner{Job: string(m["hpc_job"])}
	if ls.exported {
		o.Namespace, o.Pod = string(m["exported_namespace"]), string(m["exported_pod"])
		return o
	}
	o.Namespace, o.Pod = string(m["namespace"]), string(m["pod"])
	// Scraped without any workload mapping, namespace/pod can only be the
	// exporter's own pod: that is not an owner.
	if strings.Contains(o.Pod, "dcgm-exporter") {
		o.Namespace, o.Pod = "", ""
	}
	return o
}

// gpuAcc gathers one GPU's buckets from all its series. NaN marks a bucket
// without a sample.
type gpuAcc struct {
	key                                            GPUKey
	model, migProfile, hostFrom                    string
	usedMax, usedAvg, free, reserved, engine, util []float64
	owner                                          []Owner
}

func newAcc(k GPUKey, n int) *gpuAcc {
	nan := func() []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = math.NaN()
		}
		return s
	}
	return &gpuAcc{key: k, usedMax: nan(), usedAvg: nan(), free: nan(), reserved: nan(), engine: nan(), util: nan(), owner: make([]Owner, n)}
}

// analyze reduces the range queries over w (n buckets of width step ending at
// w.End) to per-GPU facts.
func analyze(w Window, step time.Duration, th Thresholds, raw rawSeries) Fleet {
	th = th.withDefaults()
	n := int(w.Duration() / step)
	scheme := detectScheme(raw.usedAvg, raw.usedMax)
	accs := map[GPUKey]*gpuAcc{}
	bucketOf := func(ts model.Time) (int, bool) {
		back := w.End.Sub(ts.Time())
		i := n - 1 - int((back+step/2)/step)
		return i, i >= 0 && i < n
	}
	add := func(m model.Matrix, pick func(*gpuAcc) []float64, withOwner bool) {
		for _, s := range m {
			host, from := hostLabel(s.Metric)
			k := GPUKey{Host: host, GPU: string(s.Metric["gpu"]), UUID: string(s.Metric["UUID"]), MIGInstance: string(s.Metric["GPU_I_ID"])}
			a := accs[k]
			if a == nil {
				a = newAcc(k, n)
				a.hostFrom = from
				accs[k] = a
			}
			if v := string(s.Metric["modelName"]); v != "" {
				a.model = v
			}
			if v := string(s.Metric["GPU_I_PROFILE"]); v != "" {
				a.migProfile = v
			}
			o := scheme.owner(s.Metric)
			dst := pick(a)
			for _, p := range s.Values {
				i, ok := bucketOf(p.Timestamp)
				v := float64(p.Value)
				if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
					continue
				}
				// Pod churn and MPS sharing give one GPU several series;
				// the GPU's figure is the largest.
				if math.IsNaN(dst[i]) || v > dst[i] {
					dst[i] = v
				}
				if withOwner && o != (Owner{}) {
					a.owner[i] = o
				}
			}
		}
	}
	add(raw.usedMax, func(a *gpuAcc) []float64 { return a.usedMax }, false)
	add(raw.usedAvg, func(a *gpuAcc) []float64 { return a.usedAvg }, true)
	add(raw.free, func(a *gpuAcc) []float64 { return a.free }, false)
	add(raw.reserved, func(a *gpuAcc) []float64 { return a.reserved }, false)
	add(raw.engine, func(a *gpuAcc) []float64 { return a.engine }, false)
	add(raw.util, func(a *gpuAcc) []float64 { return a.util }, false)

	f := Fleet{Step: step}
	var noActivity, coarse, noMemory []string
	hostLabels := map[string]int{}
	for _, a := range accs {
		g := a.stats(w, step, n, th)
		f.GPUs = append(f.GPUs, g)
		hostLabels[a.hostFrom]++
		switch {
		case g.TotalBytes == 0:
			noMemory = append(noMemory, g.Name())
		case g.ActivityMetric == "":
			noActivity = append(noActivity, g.Name())
		case g.ActivityMetric == metricGPUUtil:
			coarse = append(coarse, g.Name())
		}
	}
	sort.Slice(f.GPUs, func(i, j int) bool { return f.GPUs[i].GPUKey.less(f.GPUs[j].GPUKey) })

	switch {
	case len(raw.usedAvg) == 0:
		f.Missing = append(f.Missing, "no "+metricFBUsed+" samples in the window (is dcgm-exporter scraped by this Prometheus)")
	case len(raw.free) == 0:
		f.Missing = append(f.Missing, metricFBFree+" absent: memory ratios unknown")
	case len(raw.reserved) == 0:
		f.Missing = append(f.Missing, metricFBReserved+" absent (dcgm-exporter before 4.3.1-4.4.0): totals are used + free, slightly low")
	}
	if len(noMemory) > 0 && len(raw.usedAvg) > 0 {
		f.Missing = append(f.Missing, fmt.Sprintf("no memory metrics for %s", listSome(noMemory)))
	}
	if len(noActivity) > 0 {
		f.Missing = append(f.Missing, fmt.Sprintf("no %s or %s for %s: idle time unknown", metricEngineActive, metricGPUUtil, listSome(noActivity)))
	}
	if len(coarse) > 0 {
		f.Missing = append(f.Missing, fmt.Sprintf("%s absent for %s: idle judged on the coarser %s", metricEngineActive, listSome(coarse), metricGPUUtil))
	}
	if len(f.GPUs) > 0 {
		var hl []string
		for _, l := range sortedKeys(hostLabels) {
			hl = append(hl, fmt.Sprintf("%s (%s)", l, plural(hostLabels[l], "GPU")))
		}
		f.Labels = append(f.Labels, "host from "+strings.Join(hl, ", "))
		if scheme.exported {
			f.Labels = append(f.Labels, "owner from exported_namespace/exported_pod (ServiceMonitor honorLabels: false)")
		}
	}
	return f
}

// stats reduces one GPU's buckets.
func (a *gpuAcc) stats(w Window, step time.Duration, n int, th Thresholds) GPUStats {
	g := GPUStats{GPUKey: a.key, Model: a.model, MIGProfile: a.migProfile}
	stepH := step.Hours()
	at := func(i int) time.Time { return w.End.Add(-time.Duration(n-1-i) * step) }

	var totalMiB float64
	for i := range n {
		if present(a.usedAvg[i]) && present(a.free[i]) {
			t := a.usedAvg[i] + a.free[i]
			if present(a.reserved[i]) {
				t += a.reserved[i]
			}
			totalMiB = max(totalMiB, t)
		}
		if present(a.usedAvg[i]) || present(a.usedMax[i]) || present(a.free[i]) || present(a.engine[i]) || present(a.util[i]) {
			if g.FirstSeen.IsZero() {
				g.FirstSeen = at(i)
			}
			g.LastSeen = at(i)
		}
	}
	g.TotalBytes = int64(totalMiB * mib)

	hasEngine, hasUtil := false, false
	var usedSum, idleHeld float64
	var usedN, idleN, aboveN int
	owners, idleOwners := map[Owner]int{}, map[Owner]int{}
	usage := map[Owner]*OwnerUsage{}
	for i := range n {
		peak := a.usedMax[i]
		if !present(peak) {
			peak = a.usedAvg[i]
		}
		if present(peak) {
			g.PeakUsedBytes = max(g.PeakUsedBytes, int64(peak*mib))
			if totalMiB > 0 {
				r := peak / totalMiB
				g.Ratio = append(g.Ratio, Point{T: at(i), V: r})
				g.PeakUsedRatio = max(g.PeakUsedRatio, r)
				if r >= th.NearOOMRatio {
					aboveN++
				}
			}
		}
		used := a.usedAvg[i]
		if !present(used) {
			continue
		}
		usedSum += used
		usedN++
		owners[a.owner[i]]++
		g.GiBHours += used / 1024 * stepH
		u := usage[a.owner[i]]
		if u == nil {
			u = &OwnerUsage{Owner: a.owner[i]}
			usage[a.owner[i]] = u
		}
		u.GiBHours += used / 1024 * stepH
		u.Hours += stepH

		act := math.NaN()
		switch {
		case present(a.engine[i]):
			act, hasEngine = a.engine[i], true
		case present(a.util[i]):
			act, hasUtil = a.util[i]/100, true
		}
		if present(act) && act < th.IdleActivity && used*mib >= float64(th.HoldingBytes) {
			idleN++
			idleHeld += used
			idleOwners[a.owner[i]]++
		}
	}
	switch {
	case hasEngine:
		g.ActivityMetric = metricEngineActive
	case hasUtil:
		g.ActivityMetric = metricGPUUtil
	}
	if usedN > 0 && totalMiB > 0 {
		g.AvgUsedRatio = usedSum / float64(usedN) / totalMiB
	}
	// Hours are counted in whole buckets, so a full day is exactly 24.
	g.HoursAbove = float64(aboveN) * stepH
	if idleN > 0 {
		g.IdleHours = float64(idleN) * stepH
		g.IdleHeldBytes = int64(idleHeld / float64(idleN) * mib)
		g.IdleOwner = mostFrequent(idleOwners)
	}
	g.Owner = mostFrequent(owners)
	for _, u := range usage {
		if u.Owner != (Owner{}) {
			g.Usage = append(g.Usage, *u)
		}
	}
	sort.Slice(g.Usage, func(i, j int) bool { return g.Usage[i].Owner.String() < g.Usage[j].Owner.String() })
	return g
}

func present(v float64) bool { return !math.IsNaN(v) }

// mostFrequent returns the non-empty owner seen in the most buckets (ties:
// the alphabetically first), or the empty Owner.
func mostFrequent(counts map[Owner]int) Owner {
	var best Owner
	bestN := 0
	for o, c := range counts {
		if o == (Owner{}) {
			continue
		}
		if c > bestN || (c == bestN && o.String() < best.String()) {
			best, bestN = o, c
		}
	}
	return best
}

// Name is how a GPU is shown: "node-a GPU 1", "node-c GPU 0 MIG 7 (1g.10gb)".
func (g GPUStats) Name() string {
	s := g.Host + " GPU " + g.GPU
	if g.Host == "" {
		s = "GPU " + g.GPU
	}
	if g.MIGInstance != "" {
		s += " MIG " + g.MIGInstance
		if g.MIGProfile != "" {
			s += " (" + g.MIGProfile + ")"
		}
	}
	return s
}

func (k GPUKey) less(o GPUKey) bool {
	if k.Host != o.Host {
		return k.Host < o.Host
	}
	if k.GPU != o.GPU {
		return numericLess(k.GPU, o.GPU)
	}
	if k.MIGInstance != o.MIGInstance {
		return numericLess(k.MIGInstance, o.MIGInstance)
	}
	return k.UUID < o.UUID
}

// numericLess orders "" (a whole GPU) first, "2" before "10", and
// non-numbers after numbers.
func numericLess(a, b string) bool {
	if a == "" || b == "" {
		return a == "" && b != ""
	}
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	switch {
	case errA == nil && errB == nil:
		return x < y
	case errA == nil:
		return true
	case errB == nil:
		return false
	}
	return a < b
}

// migShare is the fraction of a whole GPU a MIG profile holds: "3g.40gb" is
// 3 of the 7 compute slices of an A100/H100 (4 on an A30). It is 1 for a
// whole GPU and for profiles it cannot read.
func migShare(profile, model string) float64 {
	if profile == "" {
		return 1
	}
	g, _, ok := strings.Cut(profile, "g.")
	if !ok {
		return 1
	}
	slices, err := strconv.Atoi(g)
	if err != nil || slices <= 0 {
		return 1
	}
	total := 7
	if strings.Contains(model, "A30") {
		total = 4
	}
	if slices >= total {
		return 1
	}
	return float64(slices) / float64(total)
}

// listSome names up to three items and counts the rest.
func listSome(items []string) string {
	sort.Strings(items)
	if len(items) <= 3 {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:3], ", "), len(items)-3)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
