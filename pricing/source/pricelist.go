package source

import (
	"strings"

	"github.com/vrambot/vrambot/pricing"
)

// Columns of the price-list CSV: the embedded snapshot's header, which custom
// CSV price lists reuse. gpu_memory_gb, spot_price_per_hour_usd,
// component_only, region, source and date may be left out of a custom list.
// component_only is "yes" for a price of the GPU alone, which needs a host
// VM priced elsewhere.
const (
	colProvider  = "provider"
	colInstance  = "instance_type"
	colGPU       = "gpu"
	colGPUCount  = "gpu_count"
	colGPUMemory = "gpu_memory_gb"
	colPrice     = "price_per_hour_usd"
	colSpotPrice = "spot_price_per_hour_usd"
	colComponent = "component_only"
	colRegion    = "region"
	colRowSource = "source"
	colDate      = "date"
)

// priceListLabel makes an offer's Source from the row's date and source cell.
type priceListLabel func(date, rowSource string) string

// parsePriceListCSV reads a CSV with the snapshot's header. A row with a spot
// price gives a second, spot offer. Rows without a date get defaultAsOf.
func parsePriceListCSV(data []byte, defaultAsOf string, label priceListLabel) (pricing.Fetched, error) {
	t, err := newCSVTable(data, colProvider, colInstance, colGPU, colGPUCount, colPrice)
	if err != nil {
		return pricing.Fetched{}, err
	}
	var c collector
	for rec := range t.rows(&c) {
		count, okCount := parseCount(t.get(rec, colGPUCount))
		price, okPrice := parsePrice(t.get(rec, colPrice))
		if !okCount || !okPrice {
			c.drop()
			continue
		}
		date := t.get(rec, colDate)
		if date == "" {
			date = defaultAsOf
		}
		r := row{
			provider: t.get(rec, colProvider),
			instance: t.get(rec, colInstance),
			gpuName:  t.get(rec, colGPU),
			memoryGB: parseFloat(t.get(rec, colGPUMemory)),
			count:    count,
			price:    price,
			region:   t.get(rec, colRegion),
			asOf:     date,
			source:   label(date, t.get(rec, colRowSource)),
		}
		switch cell := strings.ToLower(t.get(rec, colComponent)); cell {
		case "", "no", "false":
		case "yes", "true":
			r.componentOnly = true
		default:
			c.drop()
			continue
		}
		r.hint = r.instance
		if r.provider == "" {
			c.drop()
			continue
		}
		c.add(r)
		if cell := t.get(rec, colSpotPrice); cell != "" {
			spot, ok := parsePrice(cell)
			if !ok {
				c.drop()
				continue
			}
			r.price, r.spot = spot, true
			c.add(r)
		}
	}
	return c.fetched, nil
}
