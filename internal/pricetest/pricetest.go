// Package pricetest is the one fixed offer finder the tests of the
// commands and the bot use, so that a reply's golden file pins the reply and
// not a price source. It is imported by tests only.
package pricetest

import (
	"context"
	"sync"

	"github.com/vrambot/vrambot/pricing"
)

// Cost-to-finish terms of the fake: a 300 TFLOPS GPU at 40% utilisation,
// round numbers that make a golden file's hours easy to check by hand.
const (
	fakeTFLOPS      = 300e12
	fakeUtilisation = 0.4
)

// Book answers FindOffers from fixed offers: those with enough memory per
// GPU and enough GPUs, the requested GPU marked, a cost to finish when the
// requirement has a job size. It records the last requirement.
type Book struct {
	Offers     []pricing.Offer
	Provenance []string

	mu   sync.Mutex
	last pricing.Requirement
}

// FindOffers implements commands.OfferFinder.
func (b *Book) FindOffers(_ context.Context, req pricing.Requirement) ([]pricing.Offer, []string) {
	b.mu.Lock()
	b.last = req
	b.mu.Unlock()
	var out []pricing.Offer
	for _, o := range b.Offers {
		if o.GPUMemoryBytes < req.MemoryPerGPUBytes || o.GPUCount < req.GPUCount {
			continue
		}
		o.Requested = o.GPUKey == req.RequestedGPU
		if req.TrainFLOPs > 0 {
			hours := req.TrainFLOPs / (float64(o.GPUCount) * fakeTFLOPS * fakeUtilisation) / 3600
			cost := hours * o.PricePerHourUSD
			o.HoursToFinish, o.CostToFinishUSD = &hours, &cost
		}
		out = append(out, o)
	}
	return out, b.Provenance
}

// Last is the requirement of the last FindOffers call.
func (b *Book) Last() pricing.Requirement {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last
}
