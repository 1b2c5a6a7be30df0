package digest

import (
	"sort"
	"strings"
	"time"

	"github.com/vrambot/vrambot/digest/fleet"
)

// OOM matching: an OOM pasted in Slack is matched with a restart when it was
// pasted from shortly before the bucket in which memory fell to zero (the
// crash is somewhere in that bucket; clocks differ by a little) to an hour
// after it (people paste the traceback once they have looked at it), and,
// when the paste states the GPU's total capacity, that capacity is the
// GPU's within capacityTolerance (PyTorch reports the total the driver
// gives it, a little under FB_USED + FB_FREE + FB_RESERVED).
const (
	matchClockSkew    = 2 * time.Minute
	matchAfter        = time.Hour
	capacityTolerance = 0.10
)

// oomMatch is the restart an OOM event was matched with.
type oomMatch struct {
	event     OOMEvent
	job       string
	gpu       string
	restartAt time.Time
}

// matchOOMs pairs each OOM event (by index) with the nearest restart it
// could be: see matchClockSkew, matchAfter and capacityTolerance.
func matchOOMs(events []OOMEvent, f fleet.Fleet) map[int]oomMatch {
	capacity := map[string]int64{}
	for _, g := range f.GPUs {
		capacity[g.Name()] = g.CapacityBytes
	}
	out := map[int]oomMatch{}
	for i, e := range events {
		best, bestDist := oomMatch{}, time.Duration(-1)
		for _, j := range f.Jobs {
			for _, r := range j.Restarts {
				if e.At.Before(r.At.Add(-f.Step-matchClockSkew)) || e.At.After(r.At.Add(matchAfter)) {
					continue
				}
				gpu := ""
				for _, name := range r.GPUs {
					if e.TotalBytes == nil || capacityMatches(*e.TotalBytes, capacity[name]) {
						gpu = name
						break
					}
				}
				if gpu == "" {
					continue
				}
				dist := e.At.Sub(r.At)
				if dist < 0 {
					dist = -dist
				}
				if bestDist < 0 || dist < bestDist {
					best, bestDist = oomMatch{event: e, job: j.Name, gpu: gpu, restartAt: r.At}, dist
				}
			}
		}
		if bestDist >= 0 {
			out[i] = best
		}
	}
	return out
}

func capacityMatches(pasted, capacity int64) bool {
	if capacity <= 0 || pasted <= 0 {
		return true
	}
	diff := float64(pasted - capacity)
	if diff < 0 {
		diff = -diff
	}
	return diff <= capacityTolerance*float64(capacity)
}

// addJobs lists the jobs, prices them, and picks out the serving jobs that
// were mostly idle.
func (d *Digest) addJobs(f fleet.Fleet, prices *priceCache, matches map[int]oomMatch) {
	var matchedEvents []int
	for i := range matches {
		matchedEvents = append(matchedEvents, i)
	}
	sort.Ints(matchedEvents)
	var servingUSD float64
	servingPriced := false
	for _, fj := range f.Jobs {
		j := Job{
			Name: fj.Name, Namespace: fj.Namespace, Workload: fj.Workload, Kind: string(fj.Kind), KindReason: fj.KindReason,
			GPUs: len(fj.GPUs), GPUNames: fj.GPUNames, PeakUsedRatio: round(fj.PeakUsedRatio, 3),
			PeakUsedBytes: fj.PeakUsedBytes, CapacityBytes: fj.CapacityBytes, PeakGPU: fj.PeakGPU,
			HoursAbove95: round(fj.HoursAbove, 2), Restarts: len(fj.Restarts), RestartTimes: []time.Time{},
			GPUHours: round(fj.GPUHours, 2), IdleGPUHours: round(fj.IdleGPUHours, 2), MemoryGiBHours: round(fj.GiBHours, 1),
		}
		if fj.HasActivity {
			a := round(fj.Activity, 3)
			j.Activity = &a
		}
		if !fj.PeakAt.IsZero() {
			at := fj.PeakAt
			j.PeakAt = &at
		}
		if len(fj.Pods) == 1 {
			j.Pod = fj.Pods[0]
		} else {
			j.Pods = fj.Pods
		}
		for _, r := range fj.Restarts {
			j.RestartTimes = append(j.RestartTimes, r.At)
		}
		cost, idleCost, src, ok := priceJob(fj, prices)
		if ok {
			c := round(cost, 2)
			j.CostUSD, j.PriceSource = &c, src
		}
		d.Fleet.Restarts += j.Restarts
		if fj.Kind == fleet.KindServing && fj.GPUHours > 0 && fj.IdleGPUHours/fj.GPUHours >= mostlyIdle {
			si := ServingIdle{
				Name: j.Name, Namespace: j.Namespace, Pod: j.Pod, GPUs: j.GPUs, GPUHours: j.GPUHours,
				IdleGPUHours: j.IdleGPUHours, IdleShare: round(fj.IdleGPUHours/fj.GPUHours, 2),
			}
			if ok {
				v := round(idleCost, 2)
				si.USD, si.PriceSource = &v, src
				servingUSD += v
				servingPriced = true
			}
			d.Fleet.ServingIdleGPUHours += si.IdleGPUHours
			d.ServingIdle = append(d.ServingIdle, si)
		}
		d.Jobs = append(d.Jobs, j)
	}
	for _, i := range matchedEvents {
		m := matches[i]
		for k := range d.Jobs {
			if d.Jobs[k].Name == m.job {
				d.Jobs[k].OOMs = append(d.Jobs[k].OOMs, MatchedOOM{
					At: m.event.At, Channel: m.event.Channel, Permalink: m.event.Permalink, RestartAt: m.restartAt, GPU: m.gpu,
				})
			}
		}
	}
	d.Fleet.ServingIdleGPUHours = round(d.Fleet.ServingIdleGPUHours, 2)
	if servingPriced {
		v := round(servingUSD, 2)
		d.Fleet.ServingIdleUSD = &v
	}
	sort.SliceStable(d.ServingIdle, func(a, b int) bool { return d.ServingIdle[a].IdleGPUHours > d.ServingIdle[b].IdleGPUHours })
	d.ServingIdle = d.ServingIdle[:min(len(d.ServingIdle), maxServingIdle)]
	d.Jobs = d.Jobs[:min(len(d.Jobs), maxJobs)]
}

// priceJob is the cost of a job's GPU-hours and of its idle GPU-hours, when
// every GPU model it ran on has a price.
func priceJob(j fleet.Job, prices *priceCache) (cost, idle float64, source string, ok bool) {
	var sources []string
	for _, m := range j.ByModel {
		usd, src, priced := prices.get(m.Model)
		if !priced {
			return 0, 0, "", false
		}
		cost += m.GPUHours * usd
		idle += m.IdleGPUHours * usd
		if !contains(sources, src) {
			sources = append(sources, src)
		}
	}
	return cost, idle, strings.Join(sources, "; "), len(j.ByModel) > 0
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
