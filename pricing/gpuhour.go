package pricing

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/vrambot/vrambot/advisor/catalog"
)

// PricePerGPUHour prices one GPU-hour of the GPU that DCGM's modelName
// names ("NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3"), for the digest's
// cost of idle GPUs: the cheapest on-demand whole-instance $/GPU-hour among
// the freshest offers for that catalog GPU (fresh ones if there are any,
// else stale ones, else older ones). provenance names the GPU, provider,
// instance, source and as-of date, and says when the price is stale. It
// reads the listing user requests read (see Reload), never the network; ok
// is false for a GPU the catalog does not know, one with no price, or ctx
// done.
func (b *Book) PricePerGPUHour(ctx context.Context, dcgmModelName string) (usdPerGPUHour float64, provenance string, ok bool) {
	if ctx.Err() != nil {
		return 0, "", false
	}
	gpu, ok := catalog.NormalizeGPU(dcgmModelName, 0, "")
	if !ok {
		return 0, "", false
	}
	l, err := b.requestListing(ctx)
	if err != nil {
		return 0, "", false
	}
	o, ok := cheapestGPUHour(l.Offers, gpu.Key)
	if !ok {
		return 0, "", false
	}
	provenance = fmt.Sprintf("cheapest on-demand %s: %s %s at $%.2f/GPU-h (%s, as of %s",
		gpu.Name, o.Provider, o.InstanceType, o.PricePerGPUHourUSD, o.Source, o.AsOf)
	if o.Stale {
		provenance += ", " + AgeText(o.AgeDays) + ": stale"
	}
	return o.PricePerGPUHourUSD, provenance + ")", true
}

// cheapestGPUHour is the on-demand whole-instance offer of gpuKey with the
// lowest $/GPU-hour in the freshest tier that has one.
func cheapestGPUHour(offers []Offer, gpuKey string) (Offer, bool) {
	var cands []Offer
	for _, o := range offers {
		if o.GPUKey == gpuKey && !o.Spot && !o.ComponentOnly && o.PricePerGPUHourUSD > 0 {
			cands = append(cands, o)
		}
	}
	if len(cands) == 0 {
		return Offer{}, false
	}
	return slices.MinFunc(cands, func(a, b Offer) int {
		return cmp.Or(
			cmp.Compare(tier(a), tier(b)),
			cmp.Compare(a.PricePerGPUHourUSD, b.PricePerGPUHourUSD),
			cmp.Compare(a.Provider, b.Provider),
			cmp.Compare(a.InstanceType, b.InstanceType),
		)
	}), true
}
