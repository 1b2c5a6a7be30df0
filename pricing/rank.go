package pricing

import (
	"cmp"
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
// on-demand, cheapest first (at most MaxOnDemand), then spot (at most
// MaxSpot). "Cheapest" is the instance $/h, or the cost to finish when
// req.TrainFLOPs > 0, so a faster, dearer GPU can win. The requested GPU's
// best fitting offer is always included and marked Requested, even when it
// is not among the cheapest.
//
// An offer fits when its GPU (looked up in gpus by GPUKey) reports at least
// req.MemoryPerGPUBytes usable memory, has bf16/fp8 when needed, and one
// instance has at least req.GPUCount GPUs: a multi-GPU plan is assumed to
// run inside one node. Offers of GPUs missing from gpus, or without a
// positive finite price, are left out. The input is not modified.
func Rank(offers []Offer, req Requirement, gpus []catalog.GPU) []Offer {
	byKey := make(map[string]catalog.GPU, len(gpus))
	for _, g := range gpus {
		byKey[g.Key] = g
	}
	need := max(req.GPUCount, 1)
	bestOnDemand := make(map[string]ranked)
	bestSpot := make(map[string]ranked)
	for _, o := range offers {
		gpu, ok := byKey[o.GPUKey]
		if !ok || !fits(gpu, o, req, need) {
			continue
		}
		r := score(o, gpu, req)
		best := bestOnDemand
		if o.Spot {
			best = bestSpot
		}
		if cur, ok := best[o.GPUKey]; !ok || r.less(cur) {
			best[o.GPUKey] = r
		}
	}
	onDemand := sortedValues(bestOnDemand)
	spot := sortedValues(bestSpot)

	picked := slices.Clone(onDemand[:min(len(onDemand), MaxOnDemand)])
	pickedSpot := slices.Clone(spot[:min(len(spot), MaxSpot)])
	// The requested GPU's best offer: on-demand if it has one, else spot. It
	// is dearer than every picked one, so appending keeps the order.
	if req.RequestedGPU != "" {
		if r, ok := bestOnDemand[req.RequestedGPU]; ok {
			picked = appendMissing(picked, r)
		} else if r, ok := bestSpot[req.RequestedGPU]; ok {
			pickedSpot = appendMissing(pickedSpot, r)
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

// less orders by cost, then $/GPU-hour, then names, so ties are stable
// whatever order the sources listed them in.
func (r ranked) less(s ranked) bool {
	return compareRanked(r, s) < 0
}

func compareRanked(r, s ranked) int {
	return cmp.Or(
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
