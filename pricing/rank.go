package pricing

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/vrambot/vrambot/advisor/catalog"
)

// TrainingMFU is the model FLOPs utilisation assumed for cost to finish: the
// share of a GPU's dense bf16 peak a training job really sustains. PaLM
// (Chowdhery et al. 2022, table 3) reports 46.2 % on a tuned stack; 40 % is a
// round figure below it, since most fine-tuning stacks are less tuned.
const TrainingMFU = 0.40

// Ranking limits: enough choice to compare, short enough for a chat reply.
const (
	MaxOnDemand = 5 // best on-demand offers, one per GPU model
	MaxSpot     = 3 // best spot offers, listed after on-demand
)

// Rank returns the offers that fit req, one best offer per GPU model: first
// on-demand (at most MaxOnDemand), then spot (at most MaxSpot). The rules,
// in order (README, "Prices"):
//
//   - An offer fits when its GPU (looked up in gpus by GPUKey) reports at
//     least req.MemoryPerGPUBytes usable memory, has bf16/fp8 when needed,
//     and one instance has at least req.GPUCount GPUs (a multi-GPU plan runs
//     inside one node). Offers of GPUs missing from gpus, without a positive
//     finite price, or for a GPU component alone (ComponentOnly) are left out.
//   - An offer older than UnrankedAfterDays is left out while its GPU has a
//     fresher whole-instance offer anywhere in offers; when it has none, the
//     old offer is ranked and its RankNote says so.
//   - An instance with more GPUs than the plan needs is ranked only when it
//     costs less than every fitting offer of exactly the needed count that is
//     at least as fresh (spot compared with spot, on-demand with on-demand),
//     and its RankNote says so: a one-GPU plan is not sent to a 2× box that
//     merely has a lower $/GPU-hour.
//   - Fresh offers (AgeDays <= StaleAfterDays) come before stale ones, and
//     those before outdated ones; within that, cheapest first, where
//     "cheapest" is the instance $/h, or the cost to finish when
//     req.TrainFLOPs > 0, so a faster, dearer GPU can win.
//
// The requested GPU's best fitting offer is always included and marked
// Requested, even when it is not among the cheapest. Offers must carry
// AgeDays (see Annotate). The input is not modified.
func Rank(offers []Offer, req Requirement, gpus []catalog.GPU) []Offer {
	byKey := make(map[string]catalog.GPU, len(gpus))
	for _, g := range gpus {
		byKey[g.Key] = g
	}
	need := max(req.GPUCount, 1)
	recent := recentGPUs(offers)
	var fitting []ranked
	for _, o := range offers {
		gpu, ok := byKey[o.GPUKey]
		if !ok || o.ComponentOnly || !fits(gpu, o, req, need) {
			continue
		}
		o.RankNote = ""
		if tier(o) == tierOutdated {
			if recent[o.GPUKey] {
				continue
			}
			o.RankNote = fmt.Sprintf("priced %s: no fresher price for this GPU", AgeText(o.AgeDays))
		}
		fitting = append(fitting, score(o, gpu, req))
	}

	bestOnDemand := make(map[string]ranked)
	bestSpot := make(map[string]ranked)
	requested := make(map[bool]ranked) // by spot; the requested GPU's best, oversized boxes included
	exact := cheapestExact(fitting, need)
	for _, r := range fitting {
		if r.offer.GPUKey == req.RequestedGPU {
			if cur, ok := requested[r.offer.Spot]; !ok || r.less(cur) {
				requested[r.offer.Spot] = r
			}
		}
		if r.offer.GPUCount > need {
			if exact.undercuts(r) {
				continue
			}
			r.offer.RankNote = joinNotes(r.offer.RankNote, oversizedNote(r.offer, need, exact.has(r)))
		}
		best := bestOnDemand
		if r.offer.Spot {
			best = bestSpot
		}
		if cur, ok := best[r.offer.GPUKey]; !ok || r.less(cur) {
			best[r.offer.GPUKey] = r
		}
	}
	onDemand := sortedValues(bestOnDemand)
	spot := sortedValues(bestSpot)

	picked := slices.Clone(onDemand[:min(len(onDemand), MaxOnDemand)])
	pickedSpot := slices.Clone(spot[:min(len(spot), MaxSpot)])
	// The requested GPU's best offer: on-demand if it has one, else spot. It
	// is dearer than every picked one, so appending keeps the order.
	// A requested GPU whose only fitting offers are bigger boxes than the
	// plan needs gets its best one, saying so.
	oversizedRequested := func(r ranked) ranked {
		r.offer.RankNote = joinNotes(r.offer.RankNote,
			fmt.Sprintf("rents %d GPUs: the GPU you named has no smaller offer that fits", r.offer.GPUCount))
		return r
	}
	if req.RequestedGPU != "" {
		if r, ok := bestOnDemand[req.RequestedGPU]; ok {
			picked = appendMissing(picked, r)
		} else if r, ok := requested[false]; ok {
			picked = appendMissing(picked, oversizedRequested(r))
		} else if r, ok := bestSpot[req.RequestedGPU]; ok {
			pickedSpot = appendMissing(pickedSpot, r)
		} else if r, ok := requested[true]; ok {
			pickedSpot = appendMissing(pickedSpot, oversizedRequested(r))
		}
	}

	out := make([]Offer, 0, len(picked)+len(pickedSpot))
	for _, r := range slices.Concat(picked, pickedSpot) {
		o := r.offer
		o.Requested = req.RequestedGPU != "" && o.GPUKey == req.RequestedGPU
		out = append(out, o)
	}
	return out
}

// recentGPUs are the GPUs with a whole-instance offer no older than
// UnrankedAfterDays, fitting or not.
func recentGPUs(offers []Offer) map[string]bool {
	recent := make(map[string]bool)
	for _, o := range offers {
		if !o.ComponentOnly && tier(o) != tierOutdated {
			recent[o.GPUKey] = true
		}
	}
	return recent
}

// exactCosts is the lowest cost of a fitting offer with exactly the needed
// number of GPUs, by spot or not and freshness tier.
type exactCosts map[exactClass]float64

type exactClass struct {
	spot bool
	tier int
}

func cheapestExact(fitting []ranked, need int) exactCosts {
	out := make(exactCosts)
	for _, r := range fitting {
		if r.offer.GPUCount != need {
			continue
		}
		k := exactClass{r.offer.Spot, tier(r.offer)}
		if c, ok := out[k]; !ok || r.cost < c {
			out[k] = r.cost
		}
	}
	return out
}

// undercuts reports an exact-size offer at least as fresh as r that costs
// no more: r, a bigger box, is then not worth ranking. Fresher tiers count
// because r ranks after all of them anyway; staler ones do not, because r
// ranks before them.
func (e exactCosts) undercuts(r ranked) bool {
	for t := tierFresh; t <= tier(r.offer); t++ {
		if c, ok := e[exactClass{r.offer.Spot, t}]; ok && c <= r.cost {
			return true
		}
	}
	return false
}

// has reports whether an exact-size offer as fresh as r, or fresher, fits
// in r's market (on-demand or spot).
func (e exactCosts) has(r ranked) bool {
	for t := tierFresh; t <= tier(r.offer); t++ {
		if _, ok := e[exactClass{r.offer.Spot, t}]; ok {
			return true
		}
	}
	return false
}

// oversizedNote says why a bigger box than the plan needs is ranked:
// cheaper than every exact-size offer of its market and freshness, or the
// only kind that fits there (exactExists false).
func oversizedNote(o Offer, need int, exactExists bool) string {
	size := "single-GPU"
	if need > 1 {
		size = fmt.Sprintf("%d-GPU", need)
	}
	if o.Spot {
		size += " spot"
	}
	var class string
	switch tier(o) {
	case tierFresh:
		class = "fresh " + size + " offer"
	case tierStale:
		class = fmt.Sprintf("%s offer at most %d days old", size, UnrankedAfterDays)
	default:
		class = size + " offer"
	}
	if !exactExists {
		return fmt.Sprintf("rents %d GPUs: no %s fits", o.GPUCount, class)
	}
	return fmt.Sprintf("rents %d GPUs: cheaper than any %s that fits", o.GPUCount, class)
}

func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// fits reports whether one instance of o can hold the requirement.
func fits(gpu catalog.GPU, o Offer, req Requirement, need int) bool {
	usable := gpu.UsableBytes
	if usable <= 0 {
		usable = gpu.MemoryBytes
	}
	switch {
	case usable < req.MemoryPerGPUBytes,
		req.NeedBF16 && !gpu.BF16,
		req.NeedFP8 && !gpu.FP8,
		o.GPUCount < need,
		!(o.PricePerHourUSD > 0) || math.IsInf(o.PricePerHourUSD, 0):
		return false
	}
	return true
}

// ranked is an offer with the figure it is ordered by.
type ranked struct {
	offer Offer
	// cost is the instance $/h, or the cost to finish when the job size is
	// known; +Inf when the job size is known but the GPU's speed is not.
	cost float64
}

// score fills in hours and cost to finish (when req has a job size) and
// returns the offer with its ordering figure.
func score(o Offer, gpu catalog.GPU, req Requirement) ranked {
	o.HoursToFinish, o.CostToFinishUSD = nil, nil
	if req.TrainFLOPs <= 0 {
		return ranked{offer: o, cost: o.PricePerHourUSD}
	}
	if gpu.DenseTFLOPS <= 0 {
		return ranked{offer: o, cost: math.Inf(1)}
	}
	util := TrainingMFU
	if u, ok := req.Utilisation[gpu.Key]; ok && u > 0 {
		util = u
	}
	hours := req.TrainFLOPs / (float64(o.GPUCount) * gpu.DenseTFLOPS * 1e12 * util) / 3600
	cost := hours * o.PricePerHourUSD
	o.HoursToFinish, o.CostToFinishUSD = &hours, &cost
	return ranked{offer: o, cost: cost}
}

// less orders by freshness tier, cost, then $/GPU-hour, then names, so ties
// are stable whatever order the sources listed them in.
func (r ranked) less(s ranked) bool {
	return compareRanked(r, s) < 0
}

func compareRanked(r, s ranked) int {
	return cmp.Or(
		cmp.Compare(tier(r.offer), tier(s.offer)),
		cmp.Compare(r.cost, s.cost),
		cmp.Compare(r.offer.PricePerHourUSD, s.offer.PricePerHourUSD),
		cmp.Compare(r.offer.PricePerGPUHourUSD, s.offer.PricePerGPUHourUSD),
		cmp.Compare(r.offer.GPUKey, s.offer.GPUKey),
		cmp.Compare(r.offer.Provider, s.offer.Provider),
		cmp.Compare(r.offer.InstanceType, s.offer.InstanceType),
		cmp.Compare(r.offer.Region, s.offer.Region),
	)
}

// appendMissing appends r unless an offer of its GPU is already in list.
func appendMissing(list []ranked, r ranked) []ranked {
	if slices.ContainsFunc(list, func(x ranked) bool { return x.offer.GPUKey == r.offer.GPUKey }) {
		return list
	}
	return append(list, r)
}

func sortedValues(m map[string]ranked) []ranked {
	out := make([]ranked, 0, len(m))
	for _, r := range m {
		out = append(out, r)
	}
	slices.SortFunc(out, compareRanked)
	return out
}
