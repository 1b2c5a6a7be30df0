package pricing_test

import (
	"slices"
	"strings"
	"testing"

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
