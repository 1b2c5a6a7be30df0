package source

import (
	"context"
	_ "embed"
	"fmt"
	"sync"

	"github.com/vrambot/vrambot/pricing"
)

// snapshotCSV is the dated price snapshot (data/README.md says where it
// came from). It is the default source and the fallback when the cache is
// unreachable, so it must parse with no row dropped (a test checks).
//
//go:embed data/gpu-prices.csv
var snapshotCSV []byte

// snapshotFile names the snapshot in offer sources.
const snapshotFile = "gpu-prices.csv"

// EmbeddedName is the name of the embedded snapshot source.
const EmbeddedName = "embedded"

// embedded is the offline snapshot source.
type embedded struct{}

// Embedded returns the source that reads the price snapshot compiled into
// the binary: no network, every row dated by the source it was taken from.
func Embedded() pricing.Source { return embedded{} }

// Name implements pricing.Source.
func (embedded) Name() string { return EmbeddedName }

// parsedSnapshot parses the snapshot once; it never changes at run time.
var parsedSnapshot = sync.OnceValues(func() (pricing.Fetched, error) {
	f, err := parsePriceListCSV(snapshotCSV, "", func(_, rowSource string) string {
		return fmt.Sprintf("%s (embedded snapshot %s)", rowSource, snapshotFile)
	})
	if err != nil {
		return pricing.Fetched{}, fmt.Errorf("embedded snapshot %s: %w", snapshotFile, err)
	}
	return f, nil
})

// Fetch implements pricing.Source. It returns a copy, so callers may sort or
// annotate the offers.
func (embedded) Fetch(ctx context.Context) (pricing.Fetched, error) {
	if err := ctx.Err(); err != nil {
		return pricing.Fetched{}, err
	}
	f, err := parsedSnapshot()
	if err != nil {
		return pricing.Fetched{}, err
	}
	return cloneFetched(f), nil
}
