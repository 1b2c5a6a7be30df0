package prices_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/command/prices"
	"github.com/vrambot/vrambot/query"

	"github.com/vrambot/vrambot/internal/golden"
	"github.com/vrambot/vrambot/pricing"
	"github.com/vrambot/vrambot/reply"
	"github.com/vrambot/vrambot/store"
)

// pricesFakeSource is a fixed pricing.Source.
type pricesFakeSource struct {
	name   string
	offers []pricing.Offer
	err    error
}

func (s *pricesFakeSource) Name() string { return s.name }
func (s *pricesFakeSource) Fetch(context.Context) (pricing.Fetched, error) {
	return pricing.Fetched{Offers: s.offers, Dropped: 1}, s.err
}

func pricesOffer(provider, instance, gpuKey string, count int, perHour float64, spot bool, region, asOf string) pricing.Offer {
	g, ok := catalog.LookupGPU(gpuKey)
	if !ok {
		panic("unknown GPU " + gpuKey)
	}
	return pricing.Offer{
		Provider: provider, InstanceType: instance, GPU: g.Name, GPUKey: g.Key, GPUCount: count,
		GPUMemoryBytes: g.MemoryBytes, PricePerHourUSD: perHour, PricePerGPUHourUSD: perHour / float64(count),
		Spot: spot, Region: region, AsOf: asOf, Source: "test " + provider,
	}
}

func pricesSnapshot() *pricesFakeSource {
	return &pricesFakeSource{name: "embedded", offers: []pricing.Offer{
		pricesOffer("aws", "g5.xlarge", "A10G", 1, 1.006, false, "us-east-1", "2026-01-21"),
		pricesOffer("aws", "p4de.24xlarge", "A100-80GB", 8, 40.96, false, "us-east-1", "2026-01-21"),
		pricesOffer("lambda", "gpu_1x_a100_sxm4", "A100-80GB", 1, 1.29, false, "us-east-1", "2026-09-20"),
		pricesOffer("runpod", "RTX 4090 community", "RTX4090", 1, 0.34, false, "US", "2026-09-25"),
		pricesOffer("vast", "2x-RTX_3090", "RTX3090", 2, 0.33, false, "Germany, DE, EU", "2026-11-29"),
		pricesOffer("gcp", "a2-ultragpu-1g", "A100-80GB", 1, 1.57, true, "us-central1", "2026-11-29"),
		pricesOffer("hyperstack", "gpu_1x_a6000", "RTXA6000", 1, 0.50, false, "canada-1", "2026-11-09"),
		pricesOffer("lambda", "gpu_1x_h100_sxm5", "H100-SXM", 1, 2.99, false, "us-east-1", "2026-09-20"),
		pricesOffer("lambda", "gpu_1x_h100_pcie", "H100-PCIe", 1, 2.49, false, "us-east-1", "2026-11-20"),
		pricesOffer("runpod", "H100 NVL - Community Cloud", "H100-NVL", 1, 2.59, false, "community", "2026-11-09"),
		pricesOffer("azure", "Standard_NC4as_T4_v3", "T4", 1, 0.53, false, "US (west/central)", "2023-10-30"),
		pricesOffer("aws", "g4dn.xlarge", "T4", 1, 0.526, false, "us-east-1", "2026-01-21"),
		pricesOffer("azure", "Standard_NC6s_v3", "V100-16GB", 1, 3.06, false, "centralus", "2024-01-05"),
		pricesOffer("vast", "8x-Tesla_V100-32-65536", "V100-16GB", 8, 0.85, false, "Sweden, SE, EU", "2026-11-29"),
		componentOffer(pricesOffer("gcp", "nvidia-tesla-t4 GPU component only (add n1 VM)", "T4", 1, 0.35, false, "us-central1", "2026-11-29")),
		pricesOffer("coreweave", "RTX PRO 6000 Blackwell Server Edition (8 GPU)", "RTXPRO6000", 8, 20.00, false, "North America", "2026-09-20"),
	}}
}

func componentOffer(o pricing.Offer) pricing.Offer {
	o.ComponentOnly = true
	return o
}

var pricesQuietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

func pricesClock() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) }

// pricesOfflineBook is the default CLI setup: no Redis, embedded snapshot only.
func pricesOfflineBook() *pricing.Book {
	emb := pricesSnapshot()
	return pricing.NewBook(store.NewMemory(), []pricing.Source{emb}, emb,
		pricing.WithClock(pricesClock), pricing.WithLogger(pricesQuietLog))
}

// pricesCachedBook has a fresh gpuhunt source and a failed one in its cache.
func pricesCachedBook(t *testing.T) *pricing.Book {
	t.Helper()
	st := store.NewMemory()
	hunt := &pricesFakeSource{name: "gpuhunt:aws", offers: []pricing.Offer{
		pricesOffer("aws", "p5.48xlarge", "H100-SXM", 8, 55.04, false, "us-east-1", "2026-11-29"),
		pricesOffer("aws", "p4d.24xlarge", "A100-40GB", 8, 21.96, false, "us-east-1", "2026-11-29"),
		pricesOffer("aws", "p4d.24xlarge", "A100-40GB", 8, 9.83, true, "us-east-2", "2026-11-29"),
	}}
	azure := &pricesFakeSource{name: "azure", offers: []pricing.Offer{
		pricesOffer("azure", "Standard_NC24ads_A100_v4", "A100-80GB", 1, 3.67, false, "eastus", "2026-11-28"),
	}}
	earlier := func() time.Time { return pricesClock().Add(-4 * time.Hour) }
	pricing.NewBook(st, []pricing.Source{hunt, azure}, nil, pricing.WithClock(earlier), pricing.WithLogger(pricesQuietLog)).Refresh(t.Context())
	azure.err = errors.New("azure retail prices: HTTP 503")
	pricing.NewBook(st, []pricing.Source{hunt, azure}, nil, pricing.WithClock(pricesClock), pricing.WithLogger(pricesQuietLog)).Refresh(t.Context())
	return pricing.NewBook(st, []pricing.Source{hunt, azure}, pricesSnapshot(),
		pricing.WithClock(func() time.Time { return pricesClock().Add(90 * time.Minute) }), pricing.WithLogger(pricesQuietLog))
}

func TestPricesGolden(t *testing.T) {
	tests := []struct {
		name string
		book func(t *testing.T) *pricing.Book
		q    prices.Query
	}{
		{"offline-all", func(*testing.T) *pricing.Book { return pricesOfflineBook() }, prices.Query{}},
		{"offline-a100", func(*testing.T) *pricing.Book { return pricesOfflineBook() }, prices.Query{GPU: "a100"}},
		{"offline-min-48gib", func(*testing.T) *pricing.Book { return pricesOfflineBook() }, prices.Query{MinMemoryBytes: 48 << 30}},
		{"offline-none", func(*testing.T) *pricing.Book { return pricesOfflineBook() }, prices.Query{GPU: "h200"}},
		{"offline-h100-family", func(*testing.T) *pricing.Book { return pricesOfflineBook() }, prices.Query{GPU: "h100"}},
		{"offline-t4-ages", func(*testing.T) *pricing.Book { return pricesOfflineBook() }, prices.Query{GPU: "t4"}},
		{"offline-bare-48", func(*testing.T) *pricing.Book { return pricesOfflineBook() },
			prices.Query{MinMemoryBytes: 48 << 30, MinMemoryNote: "--min-memory 48 has no unit: read as 48 GB"}},
		{"cached-stale", pricesCachedBook, prices.Query{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := prices.List(t.Context(), tt.book(t), tt.q)
			r := a.Reply
			if err != nil {
				t.Fatalf("Prices: %v", err)
			}
			if r.Kind != "prices" || r.Title == "" || r.Summary == "" {
				t.Errorf("reply lacks kind, title or summary: %+v", r)
			}
			golden.Check(t, tt.name+".txt", []byte(reply.Text(r)))
			js, err := json.MarshalIndent(a.Result, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tt.name+".json", append(js, '\n'))
		})
	}
}

// TestPricesJSONShape pins the JSON field names of `prices --json`.
func TestPricesJSONShape(t *testing.T) {
	a, err := prices.List(t.Context(), pricesOfflineBook(), prices.Query{GPU: "4090"})
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(a.Result)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Offers  []map[string]any `json:"offers"`
		Sources []map[string]any `json:"sources"`
	}
	if err := json.Unmarshal(js, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Offers) != 1 || len(got.Sources) != 1 {
		t.Fatalf("got %d offers, %d sources; want 1 and 1: %s", len(got.Offers), len(got.Sources), js)
	}
	for _, k := range []string{"provider", "instance_type", "gpu", "gpu_count", "gpu_memory_bytes", "price_per_hour_usd",
		"price_per_gpu_hour_usd", "spot", "requested", "region", "as_of", "source", "hours_to_finish", "cost_to_finish_usd",
		"stale", "age_days", "component_only", "gpu_usable_bytes"} {
		if _, ok := got.Offers[0][k]; !ok {
			t.Errorf("offer lacks %q: %s", k, js)
		}
	}
	for _, k := range []string{"name", "fetched_at", "offers", "error"} {
		if _, ok := got.Sources[0][k]; !ok {
			t.Errorf("source lacks %q: %s", k, js)
		}
	}
}

func TestPricesBadInput(t *testing.T) {
	tests := []struct {
		q              prices.Query
		wantReason     string
		wantSuggestion string
	}{
		{prices.Query{GPU: "a1000"}, `unknown GPU "a1000"`, "a100"},
		{prices.Query{GPU: "h10"}, `unknown GPU "h10"`, "h100"},
		{prices.Query{GPU: "quantum-toaster"}, `unknown GPU "quantum-toaster"`, ""},
		{prices.Query{GPU: "\x1b[31m" + strings.Repeat("x", 100)}, `unknown GPU "?[31mxxxxxxxxxxxxxxxxxxx…"`, ""},
		{prices.Query{MinMemoryBytes: -1}, "minimum memory must not be negative", ""},
	}
	for _, tt := range tests {
		t.Run(tt.wantReason, func(t *testing.T) {
			_, err := prices.List(t.Context(), pricesOfflineBook(), tt.q)
			qe, ok := errors.AsType[*query.Error](err)
			if !ok {
				t.Fatalf("error = %v (%T), want a *QueryError", err, err)
			}
			if !strings.HasPrefix(qe.Reason, tt.wantReason) || qe.Suggestion != tt.wantSuggestion {
				t.Errorf("error = %+v, want reason %q, suggestion %q", qe, tt.wantReason, tt.wantSuggestion)
			}
			if len(qe.Error()) > 120 || strings.ContainsRune(qe.Error(), 0x1b) {
				t.Errorf("error message not short and printable: %q", qe.Error())
			}
		})
	}
}

func TestPricesNoPricesAtAll(t *testing.T) {
	book := pricing.NewBook(store.NewMemory(), nil, nil, pricing.WithLogger(pricesQuietLog))
	_, err := prices.List(t.Context(), book, prices.Query{})
	if err == nil {
		t.Fatal("Prices succeeded with no prices anywhere")
	}
	if _, ok := errors.AsType[*query.Error](err); ok {
		t.Errorf("no prices is a runtime failure, not bad input: %v", err)
	}
}

// TestPricesLongListIsCut checks the text table stops at 25 rows while the
// JSON keeps every offer.
func TestPricesLongListIsCut(t *testing.T) {
	src := &pricesFakeSource{name: "many"}
	for i := range 40 {
		src.offers = append(src.offers, pricesOffer("p", fmt.Sprintf("i%02d", i), "L4", 1, 0.5+float64(i)/100, false, "r", "2026-11-29"))
	}
	book := pricing.NewBook(store.NewMemory(), []pricing.Source{src}, nil, pricing.WithLogger(pricesQuietLog))
	book.Refresh(t.Context())
	a, err := prices.List(t.Context(), book, prices.Query{})
	if err != nil {
		t.Fatal(err)
	}
	r := a.Reply
	if n := len(a.Result.Offers); n != 40 {
		t.Errorf("JSON offers = %d, want all 40", n)
	}
	table := r.Sections[0].Code[0].Text
	if rows := strings.Count(table, "\n") - 1; rows != 25 {
		t.Errorf("table has %d rows, want 25", rows)
	}
	if !strings.Contains(r.Sections[0].Text, "The first 25 of 40") {
		t.Errorf("section text %q does not say the table is cut", r.Sections[0].Text)
	}
}

func TestParseMemory(t *testing.T) {
	tests := []struct {
		in       string
		want     int64
		wantNote bool
		wantErr  bool
	}{
		{"24GiB", 24 << 30, false, false},
		{"24gb", 24 << 30, false, false},
		{"24 GB", 24 << 30, false, false},
		{"80G", 80 << 30, false, false},
		{"512MiB", 512 << 20, false, false},
		{"512m", 512 << 20, false, false},
		{"1.5TB", 3 << 39, false, false},
		{"0.5g", 1 << 29, false, false},
		{" 48gib ", 48 << 30, false, false},
		{"48", 48 << 30, true, false}, // a bare number is GB, and the reply says so
		{"24", 24 << 30, true, false},
		{"0.5", 1 << 29, true, false},
		{"", 0, false, true},
		{"GiB", 0, false, true},
		{"-24GiB", 0, false, true},
		{"-24", 0, false, true},
		{"0GiB", 0, false, true},
		{"0", 0, false, true},
		{"24.5.1GiB", 0, false, true},
		{".GiB", 0, false, true},
		{"1e3GiB", 0, false, true},
		{"24kb", 24 << 10, false, false},
		{"17TiB", 0, false, true},
		{"99999", 0, false, true},
		{"99999999999999999999GiB", 0, false, true},
		{"NaNGiB", 0, false, true},
		{"infgb", 0, false, true},
	}
	for _, tt := range tests {
		got, note, err := prices.ParseMemory(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want || (note != "") != tt.wantNote {
			t.Errorf("ParseMemory(%q) = %d, %q, %v; want %d, note %v, error %v", tt.in, got, note, err, tt.want, tt.wantNote, tt.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "memory size") {
			t.Errorf("ParseMemory(%q) error %q does not say what it was parsing", tt.in, err)
		}
		if note != "" && !strings.Contains(note, "GB") {
			t.Errorf("ParseMemory(%q) note %q does not say the unit assumed", tt.in, note)
		}
	}
}

func FuzzParseMemory(f *testing.F) {
	for _, s := range []string{"24GiB", "80G", "512MiB", "1.5TB", "", "-1g", "1e9g", "\xff\xfeGB", "48"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, note, err := prices.ParseMemory(s)
		if err == nil && (n < 1 || n > 16<<40) {
			t.Errorf("ParseMemory(%q) = %d: out of range without an error", s, n)
		}
		if err != nil && len(err.Error()) > 200 || err != nil && !utf8.ValidString(err.Error()) {
			t.Errorf("error message of %d bytes", len(err.Error()))
		}
		if len(note) > 200 && !utf8.ValidString(note) {
			t.Errorf("note of %d bytes", len(note))
		}
	})
}

// TestPricesIssue14 checks the acceptance points of issue 14 on the offline
// book: every variant of a family, ages judged, GPU-only prices apart, and
// text that fits 100 columns.
func TestPricesIssue14(t *testing.T) {
	book := pricesOfflineBook()
	res := func(q prices.Query) (reply.Reply, prices.Result) {
		t.Helper()
		a, err := prices.List(t.Context(), book, q)
		if err != nil {
			t.Fatal(err)
		}
		return a.Reply, a.Result
	}

	_, h100 := res(prices.Query{GPU: "h100"})
	variants := map[string]bool{}
	for _, o := range h100.Offers {
		variants[o.GPUKey] = true
	}
	if !variants["H100-SXM"] || !variants["H100-PCIe"] || !variants["H100-NVL"] || len(variants) != 3 {
		t.Errorf("--gpu h100 lists %v, want SXM, PCIe and NVL", variants)
	}
	for _, name := range []string{"rtx 4090", "a100 80gb", "mi300x", "RTX4090", "nvidia h100 nvl"} {
		if _, err := prices.List(t.Context(), book, prices.Query{GPU: name}); err != nil {
			t.Errorf("--gpu %q: %v", name, err)
		}
	}

	r, all := res(prices.Query{})
	for i, o := range all.Offers {
		if o.Stale != (o.AgeDays > pricing.StaleAfterDays) {
			t.Errorf("%s %s: %d days old, stale %v", o.Provider, o.InstanceType, o.AgeDays, o.Stale)
		}
		if i == 0 && (o.ComponentOnly || o.Stale) {
			t.Errorf("first listed offer %s %s is component-only or stale", o.Provider, o.InstanceType)
		}
	}
	text := reply.Text(r)
	for _, line := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(line); n > 100 {
			t.Errorf("line of %d columns: %q", n, line)
		}
	}
	for _, want := range []string{"GPU component only", "Older than 180 days, superseded", "age* = stale", "2023-10-30"} {
		if !strings.Contains(text, want) && !strings.Contains(jsonOf(t, all), want) {
			t.Errorf("prices output lacks %q:\n%s", want, text)
		}
	}
	// The outdated V100 row is superseded by the fresh 8x V100; the outdated
	// T4 rows are the only whole-instance T4 prices, so they stay, marked.
	if section := sectionText(r, "Older than 180 days"); !strings.Contains(section, "Standard_NC6s_v3") || strings.Contains(section, "g4dn") {
		t.Errorf("superseded section = %q", section)
	}
	if section := sectionText(r, "On-demand"); !strings.Contains(section, "g4dn.xlarge") || !strings.Contains(section, "**") {
		t.Errorf("on-demand section lacks the T4's only price, marked: %q", section)
	}
}

func sectionText(r reply.Reply, titlePrefix string) string {
	for _, s := range r.Sections {
		if strings.HasPrefix(s.Title, titlePrefix) {
			var b strings.Builder
			for _, c := range s.Code {
				b.WriteString(c.Text)
			}
			return b.String()
		}
	}
	return ""
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
