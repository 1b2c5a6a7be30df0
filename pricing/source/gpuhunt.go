package source

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vrambot/vrambot/pricing"
)

// DefaultGPUHuntURL is where dstack publishes the gpuhunt catalogs
// (docs/pricing.md §2.1): <base>/v3/<provider>/version and
// <base>/v3/<provider>/<version>/catalog.zip, public, updated hourly.
const DefaultGPUHuntURL = "https://dstack-gpu-pricing.s3.eu-west-1.amazonaws.com"

// GPUHuntProviders are the providers gpuhunt publishes as pre-built catalogs
// (docs/pricing.md §2.1, "offline providers"); the others are queried live by
// gpuhunt itself and have no file to fetch.
var GPUHuntProviders = []string{"aws", "azure", "gcp", "lambdalabs", "runpod", "oci", "nebius", "verda", "cloudrift"}

// gpuhuntOnlineProviders are gpuhunt providers with no published catalog;
// FromSpec names them in its error.
var gpuhuntOnlineProviders = []string{"crusoe", "digitalocean", "hotaisle", "jarvislabs", "seeweb", "vastai", "vultr"}

// gpuhuntProviderNames maps gpuhunt's provider ids to the provider names the
// embedded snapshot uses, so one provider ranks as one.
var gpuhuntProviderNames = map[string]string{"lambdalabs": "lambda"}

// gpuhuntVersion matches a published version ("20260818-42"); anything else
// is refused before it is put into a URL path.
var gpuhuntVersion = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// gpuhuntProvider matches a provider id before it is put into a URL path.
var gpuhuntProvider = regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)

// gpuhuntColumns are the CATALOG_V2_FIELDS the parser needs.
var gpuhuntColumns = []string{"instance_name", "location", "price", "gpu_count", "gpu_name", "gpu_memory", "spot"}

// gpuhunt fetches dstack gpuhunt per-provider catalogs.
type gpuhunt struct {
	baseURL   string
	providers []string
	client    *http.Client
	now       func() time.Time

	mu   sync.Mutex
	last map[string]gpuhuntCatalog // provider -> last catalog read
}

// gpuhuntCatalog is one provider's catalog as last read, kept so an
// unchanged version is not downloaded again.
type gpuhuntCatalog struct {
	version string
	fetched pricing.Fetched
}

// NewGPUHunt returns a source for the gpuhunt catalogs of the given
// providers ("aws", "lambdalabs", ...) under baseURL (DefaultGPUHuntURL when
// empty). Each fetch reads the provider's version file first and downloads
// the catalog only when the version changed since the last fetch by this
// source. A nil client gets one with a timeout.
func NewGPUHunt(baseURL string, providers []string, client *http.Client) pricing.Source {
	if baseURL == "" {
		baseURL = DefaultGPUHuntURL
	}
	return &gpuhunt{
		baseURL:   strings.TrimRight(baseURL, "/"),
		providers: slices.Clone(providers),
		client:    httpClient(client),
		now:       time.Now,
		last:      make(map[string]gpuhuntCatalog),
	}
}

// Name implements pricing.Source: "gpuhunt:aws", or "gpuhunt:aws+gcp" for
// several providers.
func (g *gpuhunt) Name() string { return "gpuhunt:" + strings.Join(g.providers, "+") }

// Fetch implements pricing.Source. Providers are read in turn; any failure
// fails the fetch, so the cache keeps the last complete data.
func (g *gpuhunt) Fetch(ctx context.Context) (pricing.Fetched, error) {
	if len(g.providers) == 0 {
		return pricing.Fetched{}, errors.New("gpuhunt: no provider given")
	}
	var all pricing.Fetched
	for _, p := range g.providers {
		f, err := g.fetchProvider(ctx, p)
		if err != nil {
			return pricing.Fetched{}, fmt.Errorf("gpuhunt %s: %w", p, err)
		}
		all.Offers = append(all.Offers, f.Offers...)
		all.Dropped += f.Dropped
	}
	return all, nil
}

// fetchProvider reads one provider's version and, when it changed, its catalog.
func (g *gpuhunt) fetchProvider(ctx context.Context, provider string) (pricing.Fetched, error) {
	if !gpuhuntProvider.MatchString(provider) {
		return pricing.Fetched{}, fmt.Errorf("not a provider id: %.40q", provider)
	}
	base := g.baseURL + "/v3/" + provider
	body, err := get(ctx, g.client, base+"/version")
	if err != nil {
		return pricing.Fetched{}, fmt.Errorf("version: %w", err)
	}
	version := strings.TrimSpace(string(body))
	if !gpuhuntVersion.MatchString(version) {
		return pricing.Fetched{}, fmt.Errorf("version file: not a catalog version: %.40q", version)
	}

	g.mu.Lock()
	last, seen := g.last[provider]
	g.mu.Unlock()
	if seen && last.version == version {
		slog.DebugContext(ctx, "gpuhunt catalog unchanged", "provider", provider, "version", version)
		return cloneFetched(last.fetched), nil
	}

	archive, err := get(ctx, g.client, base+"/"+version+"/catalog.zip")
	if err != nil {
		return pricing.Fetched{}, fmt.Errorf("catalog: %w", err)
	}
	csvData, err := gpuhuntCSV(archive, provider)
	if err != nil {
		return pricing.Fetched{}, fmt.Errorf("catalog %s: %w", version, err)
	}
	f, err := parseGPUHuntCSV(csvData, provider, version, versionDate(version, g.now()))
	if err != nil {
		return pricing.Fetched{}, fmt.Errorf("catalog %s: %w", version, err)
	}
	g.mu.Lock()
	g.last[provider] = gpuhuntCatalog{version: version, fetched: cloneFetched(f)}
	g.mu.Unlock()
	return f, nil
}

// zipMagic starts every zip archive; a body without it is taken as the CSV
// itself, so a mirror may serve catalogs unzipped.
var zipMagic = []byte("PK\x03\x04")

// gpuhuntCSV returns the provider's CSV from a catalog zip (the file
// "<provider>.csv", or the only CSV in the archive), or data itself when it
// is not a zip.
func gpuhuntCSV(data []byte, provider string) ([]byte, error) {
	if !bytes.HasPrefix(data, zipMagic) {
		return data, nil
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("open zip: %w", err)
	}
	var csvFiles []*zip.File
	for _, f := range zr.File {
		if path.Ext(f.Name) != ".csv" {
			continue
		}
		if path.Base(f.Name) == provider+".csv" {
			return readZipFile(f)
		}
		csvFiles = append(csvFiles, f)
	}
	if len(csvFiles) == 1 {
		return readZipFile(csvFiles[0])
	}
	return nil, fmt.Errorf("zip holds no %s.csv (%d other CSV files)", provider, len(csvFiles))
}

// readZipFile reads one archived file, capped like a response body so a zip
// bomb cannot fill memory.
func readZipFile(f *zip.File) ([]byte, error) {
	if f.UncompressedSize64 > maxResponseBytes {
		return nil, fmt.Errorf("%s: %w", f.Name, errTooLarge)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	defer rc.Close()
	data, err := readCapped(rc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name, err)
	}
	return data, nil
}

// versionDate reads the date a gpuhunt version starts with ("20260818-42" is
// 2026-08-18); a version without one is dated by the fetch.
func versionDate(version string, now time.Time) string {
	if len(version) >= 8 {
		if t, err := time.Parse("20060102", version[:8]); err == nil {
			return t.Format(dateLayout)
		}
	}
	return today(now)
}

// parseGPUHuntCSV reads a gpuhunt catalog CSV (CATALOG_V2_FIELDS, matched by
// header name). Rows without a GPU are CPU instances, not offers, and are
// skipped without being counted; GPU rows that cannot be read or mapped are
// dropped and counted.
func parseGPUHuntCSV(data []byte, provider, version, asOf string) (pricing.Fetched, error) {
	t, err := newCSVTable(data, gpuhuntColumns...)
	if err != nil {
		return pricing.Fetched{}, err
	}
	providerName := provider
	if n, ok := gpuhuntProviderNames[provider]; ok {
		providerName = n
	}
	label := fmt.Sprintf("gpuhunt %s catalog v%s", provider, version)
	var c collector
	for rec := range t.rows(&c) {
		gpuName, countCell := t.get(rec, "gpu_name"), t.get(rec, "gpu_count")
		if gpuName == "" && (countCell == "" || parseFloat(countCell) == 0) {
			continue // a CPU-only instance
		}
		count, okCount := parseCount(countCell)
		price, okPrice := parsePrice(t.get(rec, "price"))
		spot, okSpot := parseBool(t.get(rec, "spot"))
		if !okCount || !okPrice || !okSpot {
			c.drop()
			continue
		}
		instance := t.get(rec, "instance_name")
		c.add(row{
			provider: providerName,
			instance: instance,
			gpuName:  gpuName,
			memoryGB: parseFloat(t.get(rec, "gpu_memory")),
			hint:     instance,
			count:    count,
			price:    price,
			spot:     spot,
			region:   t.get(rec, "location"),
			asOf:     asOf,
			source:   label,
		})
	}
	return c.fetched, nil
}

// parseBool reads gpuhunt's Python booleans ("True"/"False"); empty is false.
func parseBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "true", "1":
		return true, true
	case "false", "0", "":
		return false, true
	}
	return false, false
}

// cloneFetched copies f so a kept catalog is not changed through a caller's
// slice.
func cloneFetched(f pricing.Fetched) pricing.Fetched {
	return pricing.Fetched{Offers: slices.Clone(f.Offers), Dropped: f.Dropped}
}
