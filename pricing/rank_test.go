package pricing_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

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
			name: "two GPUs: the 2x 4090 instance fits",
			req:  pricing.Requirement{MemoryPerGPUBytes: 20 * gib, GPUCount: 2},
			want: []string{"RTX4090 2x $0.66", "A100-80GB 8x $11.12", "H100-SXM 8x $19.92"},
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
