package source

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/pricing"
)

// maxGPUCount bounds the GPUs of one offer; the largest real shapes are 16
// (GCP a2-megagpu-16g), so anything far above is a malformed row.
const maxGPUCount = 1024

// maxPricePerHourUSD bounds the price of one instance; the dearest real shape
// costs about $100/h, so a price above this is a unit or parsing error.
const maxPricePerHourUSD = 100_000

// dateLayout is the as-of date format of every offer.
const dateLayout = "2006-01-02"

// row is one price as a source read it, before the GPU is mapped.
type row struct {
	provider string
	instance string
	gpuName  string
	memoryGB float64 // per GPU as the row states it, to tell variants apart; 0 when unknown
	hint     string  // other row text that can tell GPU variants apart
	count    int
	// componentOnly marks a price for the GPU alone, which cannot be rented
	// without a host VM priced elsewhere (GCP's n1-attachable T4, V100, P100).
	componentOnly bool
	price         float64 // USD per hour for the whole instance
	spot          bool
	region        string
	asOf          string
	source        string
}

// offer maps r onto the catalog and fills every Offer field. It reports
// false for a row whose GPU is not in the catalog or whose count, price or
// date is not usable; sources count those as dropped.
func (r row) offer() (pricing.Offer, bool) {
	if r.count < 1 || r.count > maxGPUCount || !validPrice(r.price) || !validDate(r.asOf) {
		return pricing.Offer{}, false
	}
	gpu, ok := catalog.NormalizeGPU(r.gpuName, r.memoryGB, r.hint+" "+instanceVariantWords(r.hint))
	if !ok {
		return pricing.Offer{}, false
	}
	return pricing.Offer{
		Provider:           strings.TrimSpace(r.provider),
		InstanceType:       strings.TrimSpace(r.instance),
		GPU:                gpu.Name,
		GPUKey:             gpu.Key,
		GPUCount:           r.count,
		GPUMemoryBytes:     gpu.MemoryBytes, // marketed size: rows disagree (MiB, GB, usable)
		PricePerHourUSD:    r.price,
		PricePerGPUHourUSD: r.price / float64(r.count),
		Spot:               r.spot,
		Region:             strings.TrimSpace(r.region),
		AsOf:               r.asOf,
		Source:             r.source,
		ComponentOnly:      r.componentOnly,
	}, true
}

// instanceFamilies are instance types whose GPU variant the provider fixes
// while its catalogs name only "H100" or "A100": AWS p5 and GCP a3 are H100
// SXM (HGX boards), as are Azure ND H100 v5 and OCI BM.GPU.H100; AWS p4de,
// GCP a2-ultragpu and Azure NC/ND A100 v4 "ads"/"amsr" carry the 80 GB A100.
// The words are read by catalog.NormalizeGPU like the rest of the row.
var instanceFamilies = []struct {
	match func(instance string) bool
	words string
}{
	{func(s string) bool { return strings.HasPrefix(s, "p5.") || strings.HasPrefix(s, "a3-") }, "sxm"},
	{func(s string) bool { return strings.Contains(s, "nd96isr_h100") || strings.HasPrefix(s, "bm.gpu.h100") }, "sxm"},
	{func(s string) bool { return strings.HasPrefix(s, "p4de.") || strings.HasPrefix(s, "a2-ultragpu") }, "80gb"},
	{func(s string) bool { return strings.Contains(s, "ads_a100_v4") || strings.Contains(s, "amsr_a100") }, "80gb"},
}

// instanceVariantWords returns the variant words instanceFamilies knows for
// an instance type ("" for most).
func instanceVariantWords(instance string) string {
	instance = strings.ToLower(strings.TrimSpace(instance))
	var words []string
	for _, f := range instanceFamilies {
		if f.match(instance) {
			words = append(words, f.words)
		}
	}
	return strings.Join(words, " ")
}

// collector gathers a source's offers and counts the rows it drops.
type collector struct {
	fetched pricing.Fetched
}

// add maps r and keeps it, or counts it as dropped.
func (c *collector) add(r row) {
	o, ok := r.offer()
	if !ok {
		c.fetched.Dropped++
		return
	}
	c.fetched.Offers = append(c.fetched.Offers, o)
}

// drop counts a row that could not even be read.
func (c *collector) drop() { c.fetched.Dropped++ }

// validPrice reports a finite, positive, plausible hourly price.
func validPrice(p float64) bool {
	return !math.IsNaN(p) && p > 0 && p < maxPricePerHourUSD
}

// validDate reports a YYYY-MM-DD date.
func validDate(s string) bool {
	_, err := time.Parse(dateLayout, s)
	return err == nil
}

// parsePrice reads a price cell; an empty cell reports false.
func parsePrice(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	p, err := strconv.ParseFloat(s, 64)
	if err != nil || !validPrice(p) {
		return 0, false
	}
	return p, true
}

// parseCount reads a GPU count that may be written as a float ("8.0");
// fractions (a sixth of an A10) report false.
func parseCount(s string) (int, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, false
	}
	return wholeCount(f)
}

// wholeCount accepts a whole number of GPUs between 1 and maxGPUCount.
func wholeCount(f float64) (int, bool) {
	if f != math.Trunc(f) || f < 1 || f > maxGPUCount {
		return 0, false
	}
	return int(f), true
}

// parseFloat reads an optional non-negative number; empty or bad is 0.
func parseFloat(s string) float64 {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0
	}
	return f
}

// today is the UTC date of now, as an offer's as-of for sources that carry
// no date of their own.
func today(now time.Time) string {
	return now.UTC().Format(dateLayout)
}
