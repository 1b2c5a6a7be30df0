package source

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vrambot/vrambot/pricing"
)

// fixedNow is the fetch time tests give sources that date offers by the fetch.
var fixedNow = time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)

func fixedClock() time.Time { return fixedNow }

// offerLine writes every field a source sets, so one string comparison
// checks an offer exactly. Prices are rounded to 1e-6 USD: sums such as GCP
// host + GPU are not exact in binary floating point.
func offerLine(o pricing.Offer) string {
	line := fmt.Sprintf("%s|%s|%s|%s|%d|%d|%.6f|%.6f|%t|%s|%s|%s",
		o.Provider, o.InstanceType, o.GPU, o.GPUKey, o.GPUCount, o.GPUMemoryBytes,
		o.PricePerHourUSD, o.PricePerGPUHourUSD, o.Spot, o.Region, o.AsOf, o.Source)
	if o.ComponentOnly {
		line += "|component only"
	}
	return line
}

func offerLines(offers []pricing.Offer) []string {
	lines := make([]string, len(offers))
	for i, o := range offers {
		lines[i] = offerLine(o)
	}
	return lines
}

// assertFetched checks the exact offers (in order) and the dropped count.
func assertFetched(t *testing.T, got pricing.Fetched, wantLines []string, wantDropped int) {
	t.Helper()
	gotLines := offerLines(got.Offers)
	if strings.Join(gotLines, "\n") != strings.Join(wantLines, "\n") {
		t.Errorf("offers:\ngot:\n%s\nwant:\n%s", strings.Join(gotLines, "\n"), strings.Join(wantLines, "\n"))
	}
	if got.Dropped != wantDropped {
		t.Errorf("dropped = %d, want %d", got.Dropped, wantDropped)
	}
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// zipOf builds a zip archive holding the named files.
func zipOf(t testing.TB, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// recordingServer serves routes by path and counts requests per path; it
// fails the test when a request lacks the vrambot User-Agent.
type recordingServer struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newRecordingServer(t *testing.T, routes map[string]http.HandlerFunc) *recordingServer {
	t.Helper()
	rs := &recordingServer{hits: make(map[string]int)}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rs.mu.Lock()
		rs.hits[r.URL.Path]++
		rs.mu.Unlock()
		if ua := r.Header.Get("User-Agent"); ua != "vrambot" {
			t.Errorf("%s: User-Agent %q, want vrambot", r.URL.Path, ua)
		}
		h, ok := routes[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}))
	t.Cleanup(rs.Close)
	return rs
}

func (rs *recordingServer) count(path string) int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.hits[path]
}

// body serves fixed bytes.
func body(data []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(data) }
}

// status serves an error status.
func status(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "upstream broke", code) }
}

// assertFetchDeadline fetches from src under a deadline of d and checks that
// the fetch fails with the deadline, soon after it (not after the server).
func assertFetchDeadline(t *testing.T, src pricing.Source, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	_, err := src.Fetch(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("Fetch returned after %s, want soon after the %s deadline", elapsed, d)
	}
}
