package pricing_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/pricing"
	"github.com/vrambot/vrambot/pricing/source"
	"github.com/vrambot/vrambot/store"
)

// TestEmbeddedSnapshotEndToEnd ranks the real embedded snapshot the way the
// CLI does with no Redis: a 7B LoRA at ~20 GiB with the A100 requested.
func TestEmbeddedSnapshotEndToEnd(t *testing.T) {
	emb := source.Embedded()
	book := pricing.NewBook(store.NewMemory(), []pricing.Source{emb}, emb, pricing.WithLogger(quiet))
	offers, notes := book.FindOffers(t.Context(), pricing.Requirement{
		MemoryPerGPUBytes: 20 * gib, GPUCount: 1, NeedBF16: true, RequestedGPU: "A100-80GB",
	})
	if len(offers) == 0 {
		t.Fatal("no offers from the embedded snapshot")
	}
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "prices: embedded snapshot of 20") || !strings.HasSuffix(notes[0], "(offline default)") {
		t.Errorf("notes = %q", notes)
	}
	first := offers[0]
	if first.Spot || first.GPUMemoryBytes > 48*gib {
		t.Errorf("cheapest offer %s %s (%d GiB, spot %v): want an on-demand card of 48 GB or less", first.GPU, first.InstanceType, first.GPUMemoryBytes/gib, first.Spot)
	}
	if !slices.ContainsFunc(offers, func(o pricing.Offer) bool { return o.GPUKey == "A100-80GB" && o.Requested }) {
		t.Error("the requested A100 80GB is not in the ranking")
	}
	seen := map[string]bool{}
	for _, o := range offers {
		if o.AsOf == "" || o.Source == "" || o.Provider == "" {
			t.Errorf("offer %+v lacks its date, source or provider", o)
		}
		if o.GPUKey == "V100-16GB" || o.GPUKey == "V100-32GB" || o.GPUKey == "T4" {
			t.Errorf("%s offered for a bf16 job", o.GPU)
		}
		k := o.GPUKey + map[bool]string{true: " spot"}[o.Spot]
		if seen[k] {
			t.Errorf("two offers for %s", k)
		}
		seen[k] = true
	}
}

// TestEmbeddedRankingSweep checks issue 14's acceptance over the real
// snapshot at every per-GPU size from 1 to 300 GiB and for 1, 2 and 8 GPUs:
// the first offer ranked is the cheapest fresh (not stale) whole instance
// that fits, when one exists; no GPU-only price is ranked; and no price
// older than 180 days is ranked while a fresher one exists for its GPU.
func TestEmbeddedRankingSweep(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	emb := source.Embedded()
	book := pricing.NewBook(store.NewMemory(), []pricing.Source{emb}, emb, pricing.WithLogger(quiet), pricing.WithClock(func() time.Time { return now }))
	l, err := book.Listing(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	usable := map[string]int64{}
	for _, g := range catalog.GPUs() {
		usable[g.Key] = g.UsableBytes
	}
	recent := map[string]bool{}
	for _, o := range l.Offers {
		if !o.ComponentOnly && o.AgeDays <= pricing.UnrankedAfterDays {
			recent[o.GPUKey] = true
		}
	}
	checked := 0
	for _, gpus := range []int{1, 2, 8} {
		for need := int64(1); need <= 300; need++ {
			req := pricing.Requirement{MemoryPerGPUBytes: need * gib, GPUCount: gpus}
			ranked := pricing.Rank(l.Offers, req, catalog.GPUs())
			var cheapest *pricing.Offer
			for i, o := range l.Offers {
				if o.ComponentOnly || o.Spot || o.Stale || o.GPUCount < gpus || usable[o.GPUKey] < req.MemoryPerGPUBytes {
					continue
				}
				if cheapest == nil || o.PricePerHourUSD < cheapest.PricePerHourUSD {
					cheapest = &l.Offers[i]
				}
			}
			for _, o := range ranked {
				if o.ComponentOnly {
					t.Fatalf("%d GiB x %d: GPU-only price ranked: %s %s", need, gpus, o.Provider, o.InstanceType)
				}
				if o.AgeDays > pricing.UnrankedAfterDays && recent[o.GPUKey] {
					t.Fatalf("%d GiB x %d: %s %s is %d days old while a fresher %s price exists", need, gpus, o.Provider, o.InstanceType, o.AgeDays, o.GPU)
				}
			}
			if cheapest == nil {
				continue
			}
			checked++
			if len(ranked) == 0 || ranked[0].Spot || ranked[0].PricePerHourUSD != cheapest.PricePerHourUSD {
				got := "nothing"
				if len(ranked) > 0 {
					got = ranked[0].Provider + " " + ranked[0].InstanceType
				}
				t.Fatalf("%d GiB x %d GPUs: first ranked %s, want the cheapest fresh whole instance %s %s ($%.3f/h)",
					need, gpus, got, cheapest.Provider, cheapest.InstanceType, cheapest.PricePerHourUSD)
			}
		}
	}
	if checked < 400 {
		t.Errorf("only %d sizes had a fresh offer to check", checked)
	}
}

// BenchmarkRankSnapshot ranks the whole embedded snapshot for one /vram
// answer, as a request does.
func BenchmarkRankSnapshot(b *testing.B) {
	emb := source.Embedded()
	book := pricing.NewBook(store.NewMemory(), []pricing.Source{emb}, emb, pricing.WithLogger(quiet))
	l, err := book.Listing(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	gpus := catalog.GPUs()
	req := pricing.Requirement{MemoryPerGPUBytes: 20 * gib, GPUCount: 1, RequestedGPU: "A100-80GB"}
	for b.Loop() {
		pricing.Rank(l.Offers, req, gpus)
	}
}
