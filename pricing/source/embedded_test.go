package source

import (
	"bytes"
	"context"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/internal/golden"
)

func TestEmbeddedEveryRowMaps(t *testing.T) {
	got, err := Embedded().Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got.Dropped != 0 {
		t.Errorf("embedded snapshot dropped %d rows, want 0: every row must map to the catalog", got.Dropped)
	}
	rows, err := csv.NewReader(bytes.NewReader(snapshotCSV)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// One offer per row, in file order, then its spot offer when it has one.
	i := 0
	for n, r := range rows[1:] {
		gpu, spot := r[2], r[6]
		wantKey := gpu
		if gpu == "H100" { // variant not stated in the snapshot: the slower card
			wantKey = "H100-PCIe"
		}
		if wantComponent := r[10] == "yes"; wantComponent != got.Offers[i].ComponentOnly {
			t.Errorf("row %d (%s %s): component only %t, want %t", n+2, r[0], r[1], got.Offers[i].ComponentOnly, wantComponent)
		}
		for _, wantSpot := range []bool{false, true} {
			if wantSpot && spot == "" {
				continue
			}
			if i >= len(got.Offers) {
				t.Fatalf("only %d offers for %d rows", len(got.Offers), len(rows)-1)
			}
			o := got.Offers[i]
			if o.GPUKey != wantKey || o.Spot != wantSpot || o.InstanceType != r[1] || o.AsOf != r[9] {
				t.Errorf("row %d (%s %s): offer %s, want GPU %s spot %t", n+2, r[0], r[1], offerLine(o), wantKey, wantSpot)
			}
			i++
		}
	}
	if i != len(got.Offers) {
		t.Errorf("%d offers, want %d", len(got.Offers), i)
	}
}

func TestEmbeddedGolden(t *testing.T) {
	got, err := Embedded().Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "embedded.golden", []byte(strings.Join(offerLines(got.Offers), "\n")+"\n"))
}

func TestEmbeddedReturnsACopy(t *testing.T) {
	first, err := Embedded().Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	first.Offers[0].PricePerHourUSD = -1
	second, err := Embedded().Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if second.Offers[0].PricePerHourUSD == -1 {
		t.Error("a caller's change to the offers leaked into the next Fetch")
	}
}

func TestEmbeddedHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Embedded().Fetch(ctx); err == nil {
		t.Error("Fetch with a cancelled context succeeded")
	}
	if got := Embedded().Name(); got != "embedded" {
		t.Errorf("Name() = %q", got)
	}
}
