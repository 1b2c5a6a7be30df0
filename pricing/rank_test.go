package pricing_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/pricing"
)

const gib = int64(1) << 30

// offer builds a test offer of count GPUs of the catalog GPU key at $/h.
func offer(key string, count int, perHour float64, spot bool) pricing.Offer {
	g, ok := catalog.LookupGPU(key)
	if !ok {
		panic("test uses an unknown GPU key " + key)
	}
	return pricing.Offer{
		Provider: "p-" + strings.ToLower(key), InstanceType: fmt.Sprintf("%dx-%s", count, key),
		GPU: g.Name, GPUKey: g.Key, GPUCount: count, GPUMemoryBytes: g.MemoryBytes,
		PricePerHourUSD: perHour, PricePerGPUHourUSD: perHour / float64(count),
		Spot: spot, Region: "us", AsOf: "2026-11-29", Source: "test",
	}
}

// summary renders ranked offers as "KEY $price [spot] [requested]" lines.
func summary(offers []pricing.Offer) []string {
	out := make([]string, len(offers))
	for i, o := range offers {
		s := fmt.Sprintf("%s %dx $%.2f", o.GPUKey, o.GPUCount, o.PricePerHourUSD)
		if o.Spot {
			s += " spot"
		}
		if o.Requested {
			s += " requested"
		}
		out[i] = s
	}
	return out
}

func TestRank(t *testing.T) {
	market := []pricing.Offer{
		offer("A100-80GB", 1, 1.39, false),
		offer("H100-SXM", 1, 2.49, false),
		offer("RTX4090", 1, 0.34, false),
		offer("RTX4090", 1, 0.74, false), // dearer duplicate: only the best per GPU stays
		offer("RTX4090", 2, 0.66, false), // cheaper per GPU, dearer per instance
		offer("L4", 1, 0.70, false),
		offer("A10G", 1, 1.006, false),
		offer("T4", 1, 0.35, false),
		offer("V100-16GB", 1, 0.30, false),
		offer("V100-32GB", 1, 0.55, false),
		offer("L40S", 1, 0.86, false),
		offer("RTX4090", 1, 0.20, true),
		offer("A100-80GB", 1, 0.80, true),
		offer("A100-80GB", 8, 11.12, false),
		offer("H100-SXM", 8, 19.92, false),
	}
	tests := []struct {
		name string
		req  pricing.Requirement
		want []string
	}{
		{
			// The headline case: a 7B LoRA at ~20 GiB goes to a 24 GB card, not an 80 GB one.
			name: "7B LoRA at 20 GiB prefers a cheaper 24 GB card",
			req:  pricing.Requirement{MemoryPerGPUBytes: 20 * gib, GPUCount: 1, NeedBF16: true},
			want: []string{
				"RTX4090 1x $0.34", "L4 1x $0.70", "L40S 1x $0.86", "A10G 1x $1.01", "A100-80GB 1x $1.39",
				"RTX4090 1x $0.20 spot", "A100-80GB 1x $0.80 spot",
			},
		},
		{
			name: "requested GPU included although five are cheaper",
			req:  pricing.Requirement{MemoryPerGPUBytes: 20 * gib, GPUCount: 1, NeedBF16: true, RequestedGPU: "H100-SXM"},
			want: []string{
				"RTX4090 1x $0.34", "L4 1x $0.70", "L40S 1x $0.86", "A10G 1x $1.01", "A100-80GB 1x $1.39",
				"H100-SXM 1x $2.49 requested",
				"RTX4090 1x $0.20 spot", "A100-80GB 1x $0.80 spot",
			},
		},
		{
			name: "requested GPU among the cheapest is marked in place, spot too",
			req:  pricing.Requirement{MemoryPerGPUBytes: 20 * gib, GPUCount: 1, NeedBF16: true, RequestedGPU: "A100-80GB"},
			want: []string{
				"RTX4090 1x $0.34", "L4 1x $0.70", "L40S 1x $0.86", "A10G 1x $1.01", "A100-80GB 1x $1.39 requested",
				"RTX4090 1x $0.20 spot", "A100-80GB 1x $0.80 spot requested",
			},
		},
		{
			name: "requested GPU that does not fit is not offered",
			req:  pricing.Requirement{MemoryPerGPUBytes: 20 * gib, GPUCount: 1, NeedBF16: true, RequestedGPU: "T4"},
			want: []string{
				"RTX4090 1x $0.34", "L4 1x $0.70", "L40S 1x $0.86", "A10G 1x $1.01", "A100-80GB 1x $1.39",
				"RTX4090 1x $0.20 spot", "A100-80GB 1x $0.80 spot",
			},
		},
		{
			name: "without a bf16 need V100 and T4 compete on price",
			req:  pricing.Requirement{MemoryPerGPUBytes: 10 * gib, GPUCount: 1},
			want: []string{
				"V100-16GB 1x $0.30", "RTX4090 1x $0.34", "T4 1x $0.35", "V100-32GB 1x $0.55", "L4 1x $0.70",
				"RTX4090 1x $0.20 spot", "A100-80GB 1x $0.80 spot",
			},
		},
		{
			name: "bf16 need excludes V100 and T4",
			req:  pricing.Requirement{MemoryPerGPUBytes: 10 * gib, GPUCount: 1, NeedBF16: true},
			want: []string{
				"RTX4090 1x $0.34", "L4 1x $0.70", "L40S 1x $0.86", "A10G 1x $1.01", "A100-80GB 1x $1.39",
				"RTX4090 1x $0.20 spot", "A100-80GB 1x $0.80 spot",
			},
		},
		{
			name: "fp8 need keeps Hopper and Ada only",
			req:  pricing.Requirement{MemoryPerGPUBytes: 10 * gib, GPUCount: 1, NeedFP8: true},
			want: []string{"RTX4090 1x $0.34", "L4 1x $0.70", "L40S 1x $0.86", "H100-SXM 1x $2.49", "RTX4090 1x $0.20 spot"},
		},
		{
			name: "70 GiB per GPU needs an 80 GB class card",
			req:  pricing.Requirement{MemoryPerGPUBytes: 70 * gib, GPUCount: 1},
			want: []string{"A100-80GB 1x $1.39", "H100-SXM 1x $2.49", "A100-80GB 1x $0.80 spot"},
		},
		{
			name: "eight GPUs need an eight-GPU instance",
			req:  pricing.Requirement{MemoryPerGPUBytes: 30 * gib, GPUCount: 8},
			want: []string{"A100-80GB 8x $11.12", "H100-SXM 8x $19.92"},
		},
		{
			// The 8-GPU boxes fit too, but cost more than the 2-GPU one.
			name: "two GPUs: the 2x 4090 instance fits, bigger boxes are not offered",
			req:  pricing.Requirement{MemoryPerGPUBytes: 20 * gib, GPUCount: 2},
			want: []string{"RTX4090 2x $0.66"},
		},
		{
			name: "nothing fits",
			req:  pricing.Requirement{MemoryPerGPUBytes: 500 * gib, GPUCount: 1},
			want: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := slices.Clone(market)
			got := summary(pricing.Rank(market, tt.req, catalog.GPUs()))
			if !slices.Equal(got, tt.want) {
				t.Errorf("Rank =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
			if !slices.EqualFunc(before, market, func(a, b pricing.Offer) bool { return a == b }) {
				t.Error("Rank modified its input")
			}
		})
	}
}

// TestRankCostToFinish checks that with a job size the order is by cost to
// finish, so a faster, dearer GPU can beat a cheaper, slower one.
func TestRankCostToFinish(t *testing.T) {
	market := []pricing.Offer{
		offer("A10G", 1, 1.006, false),
		offer("H100-SXM", 1, 2.49, false),
		offer("V100-32GB", 1, 0.55, false), // fp16 tensor speed (no bf16)
	}
	req := pricing.Requirement{MemoryPerGPUBytes: 20 * gib, GPUCount: 1}

	byPrice := summary(pricing.Rank(market, req, catalog.GPUs()))
	if want := []string{"V100-32GB 1x $0.55", "A10G 1x $1.01", "H100-SXM 1x $2.49"}; !slices.Equal(byPrice, want) {
		t.Fatalf("without a job size: %v, want %v", byPrice, want)
	}

	req.TrainFLOPs = 6 * 7e9 * 1e9 // 7B params, 1B tokens
	ranked := pricing.Rank(market, req, catalog.GPUs())
	if got, want := summary(ranked), []string{"H100-SXM 1x $2.49", "V100-32GB 1x $0.55", "A10G 1x $1.01"}; !slices.Equal(got, want) {
		t.Fatalf("with a job size: %v, want %v (cost to finish flips the order)", got, want)
	}
	h100, _ := catalog.LookupGPU("H100-SXM")
	wantHours := req.TrainFLOPs / (h100.DenseTFLOPS * 1e12 * pricing.TrainingMFU) / 3600
	o := ranked[0]
	if o.HoursToFinish == nil || o.CostToFinishUSD == nil {
		t.Fatal("H100 offer lacks hours/cost to finish")
	}
	if math.Abs(*o.HoursToFinish-wantHours) > 1e-9 || math.Abs(*o.CostToFinishUSD-wantHours*2.49) > 1e-9 {
		t.Errorf("H100: %.3f h, $%.2f; want %.3f h, $%.2f", *o.HoursToFinish, *o.CostToFinishUSD, wantHours, wantHours*2.49)
	}
	if v100 := ranked[1]; v100.HoursToFinish == nil || math.Abs(*v100.HoursToFinish-wantHours*989.4/125) > 1e-6 {
		t.Errorf("V100 hours to finish should use its fp16 tensor speed (125 TFLOPS)")
	}
	// Eight GPUs finish eight times faster for eight times the hourly price.
	eight := pricing.Rank([]pricing.Offer{offer("H100-SXM", 8, 8*2.49, false)}, req, catalog.GPUs())
	if got := *eight[0].HoursToFinish; math.Abs(got-wantHours/8) > 1e-9 {
		t.Errorf("8x H100: %.3f h, want %.3f", got, wantHours/8)
	}
}

func TestRankSkipsBadOffers(t *testing.T) {
	unknown := offer("L4", 1, 0.1, false)
	unknown.GPUKey = "NOT-A-GPU"
	free := offer("L4", 1, 0, false)
	nan := offer("L4", 1, math.NaN(), false)
	inf := offer("L4", 1, math.Inf(1), false)
	good := offer("L4", 1, 0.7, false)
	got := summary(pricing.Rank([]pricing.Offer{unknown, free, nan, inf, good}, pricing.Requirement{GPUCount: 1}, catalog.GPUs()))
	if want := []string{"L4 1x $0.70"}; !slices.Equal(got, want) {
		t.Errorf("Rank = %v, want %v", got, want)
	}
}

// aged sets an offer's age as the book's listing would (pricing.Annotate).
func aged(o pricing.Offer, days int) pricing.Offer {
	o.AgeDays, o.Stale = days, days > pricing.StaleAfterDays
	return o
}

// notes renders ranked offers with their rank notes.
func notes(offers []pricing.Offer) []string {
	out := summary(offers)
	for i, o := range offers {
		if o.RankNote != "" {
			out[i] += " (" + o.RankNote + ")"
		}
	}
	return out
}

// TestRankWholeInstances covers the issue-14 rules: multi-GPU boxes for a
// one-GPU plan, and prices for the GPU alone.
func TestRankWholeInstances(t *testing.T) {
	component := offer("T4", 1, 0.35, false)
	component.ComponentOnly = true
	tests := []struct {
		name   string
		market []pricing.Offer
		req    pricing.Requirement
		want   []string
	}{
		{
			name:   "a 2x box cheaper than every single-GPU box is ranked, saying so",
			market: []pricing.Offer{offer("RTX3090", 2, 0.33, false), offer("RTX4090", 1, 0.34, false), offer("L4", 1, 0.70, false)},
			req:    pricing.Requirement{MemoryPerGPUBytes: 20 * gib, GPUCount: 1},
			want: []string{
				"RTX3090 2x $0.33 (rents 2 GPUs: cheaper than any fresh single-GPU offer that fits)",
				"RTX4090 1x $0.34", "L4 1x $0.70",
			},
		},
		{
			name:   "a 2x box with a lower $/GPU-hour but a higher $/h is not",
			market: []pricing.Offer{offer("RTX3090", 2, 0.40, false), offer("RTX4090", 1, 0.34, false)},
			req:    pricing.Requirement{MemoryPerGPUBytes: 20 * gib, GPUCount: 1},
			want:   []string{"RTX4090 1x $0.34"},
		},
		{
			name:   "with no single-GPU box at all the smallest box is ranked",
			market: []pricing.Offer{offer("H100-SXM", 8, 31.92, false), offer("A100-80GB", 8, 11.12, false)},
			req:    pricing.Requirement{MemoryPerGPUBytes: 70 * gib, GPUCount: 1},
			want: []string{
				"A100-80GB 8x $11.12 (rents 8 GPUs: no fresh single-GPU offer fits)",
				"H100-SXM 8x $31.92 (rents 8 GPUs: no fresh single-GPU offer fits)",
			},
		},
		{
			// Fresh offers rank first, so a fresh box is judged against fresh
			// single-GPU offers; the cheaper stale one follows it.
			name:   "a fresh 2x box against a cheaper stale single-GPU box",
			market: []pricing.Offer{offer("B200", 2, 9.41, false), aged(offer("B200", 1, 6.99, false), 72), offer("H200", 1, 2.65, false)},
			req:    pricing.Requirement{MemoryPerGPUBytes: 150 * gib, GPUCount: 1},
			want: []string{
				"B200 2x $9.41 (rents 2 GPUs: no fresh single-GPU offer fits)",
			},
		},
		{
			name: "a stale 2x box is judged against single-GPU boxes at least as fresh",
			market: []pricing.Offer{
				aged(offer("RTX3090", 2, 0.30, false), 60), aged(offer("RTX3090", 2, 0.33, false), 90), offer("RTX4090", 1, 0.34, false),
				aged(offer("L40S", 2, 0.50, false), 45), offer("L4", 1, 0.45, false),
			},
			req: pricing.Requirement{MemoryPerGPUBytes: 20 * gib, GPUCount: 1},
			want: []string{
				"RTX4090 1x $0.34", "L4 1x $0.45", // the stale 2x L40S costs more than both: not ranked
				"RTX3090 2x $0.30 (rents 2 GPUs: cheaper than any single-GPU offer at most 180 days old that fits)",
			},
		},
		{
			name:   "the requested GPU's only box is bigger than needed: shown, saying so",
			market: []pricing.Offer{offer("RTX4090", 1, 0.34, false), offer("H100-SXM", 8, 31.92, false)},
			req:    pricing.Requirement{MemoryPerGPUBytes: 20 * gib, GPUCount: 1, RequestedGPU: "H100-SXM"},
			want: []string{
				"RTX4090 1x $0.34",
				"H100-SXM 8x $31.92 requested (rents 8 GPUs: the GPU you named has no smaller offer that fits)",
			},
		},
		{
			name:   "a price for the GPU alone is never ranked, even when cheapest",
			market: []pricing.Offer{component, offer("T4", 1, 0.526, false), offer("L4", 1, 0.80, false)},
			req:    pricing.Requirement{MemoryPerGPUBytes: 10 * gib, GPUCount: 1, RequestedGPU: "T4"},
			want:   []string{"T4 1x $0.53 requested", "L4 1x $0.80"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := notes(pricing.Rank(tt.market, tt.req, catalog.GPUs())); !slices.Equal(got, tt.want) {
				t.Errorf("Rank =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

// TestRankFreshness covers the age rules: fresh before stale, and prices
// older than half a year only when nothing fresher exists for the GPU.
func TestRankFreshness(t *testing.T) {
	req := pricing.Requirement{MemoryPerGPUBytes: 10 * gib, GPUCount: 1}
	tests := []struct {
		name   string
		market []pricing.Offer
		want   []string
	}{
		{
			name: "an outdated price is dropped while its GPU has a fresher one, even a dearer one",
			market: []pricing.Offer{
				aged(offer("T4", 1, 0.20, false), 700), aged(offer("T4", 1, 0.53, false), 10), aged(offer("L4", 1, 0.80, false), 2),
			},
			want: []string{"T4 1x $0.53", "L4 1x $0.80"},
		},
		{
			name: "a fresher offer that does not fit still makes an outdated one unrankable",
			market: []pricing.Offer{
				aged(offer("V100-16GB", 8, 6.32, false), 400), aged(offer("V100-16GB", 1, 0.79, true), 3),
			},
			want: []string{"V100-16GB 1x $0.79 spot"},
		},
		{
			name:   "an outdated price that is the only one for its GPU is ranked, saying so",
			market: []pricing.Offer{aged(offer("A10G", 1, 1.006, false), 314), aged(offer("L4", 1, 0.80, false), 2)},
			want:   []string{"L4 1x $0.80", "A10G 1x $1.01 (priced 314 days old: no fresher price for this GPU)"},
		},
		{
			name: "fresh offers come first, then stale ones, each cheapest first",
			market: []pricing.Offer{
				aged(offer("RTX4090", 1, 0.30, false), 45), aged(offer("L4", 1, 0.80, false), 2),
				aged(offer("A10G", 1, 1.006, false), 20), aged(offer("L40S", 1, 0.79, false), 90),
			},
			want: []string{"L4 1x $0.80", "A10G 1x $1.01", "RTX4090 1x $0.30", "L40S 1x $0.79"},
		},
		{
			name: "a GPU's best offer is its freshest tier's cheapest",
			market: []pricing.Offer{
				aged(offer("RTX4090", 1, 0.30, false), 45), aged(offer("RTX4090", 1, 0.40, false), 1),
			},
			want: []string{"RTX4090 1x $0.40"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := notes(pricing.Rank(tt.market, req, catalog.GPUs())); !slices.Equal(got, tt.want) {
				t.Errorf("Rank =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

func TestAgeDays(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		asOf string
		want int
	}{
		{"2026-12-01", 0}, {"2026-11-30", 1}, {"2026-10-07", 55}, {"2026-01-21", 314}, {"2023-10-30", 1128},
		{"2026-12-25", 0}, {"", -1}, {"01/12/2026", -1},
	}
	for _, tt := range tests {
		if got := pricing.AgeDays(tt.asOf, now); got != tt.want {
			t.Errorf("AgeDays(%q) = %d, want %d", tt.asOf, got, tt.want)
		}
	}
	offers := []pricing.Offer{{AsOf: "2026-11-01"}, {AsOf: "2026-10-31"}, {AsOf: "garbage"}}
	pricing.Annotate(offers, now, nil)
	if offers[0].Stale || !offers[1].Stale || offers[0].AgeDays != 30 || offers[2].AgeDays <= pricing.UnrankedAfterDays {
		t.Errorf("Annotate: %+v", offers)
	}
}
