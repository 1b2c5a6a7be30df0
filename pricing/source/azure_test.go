package source

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func newTestAzure(baseURL string) *azure {
	a := NewAzure(baseURL, nil).(*azure)
	a.now = fixedClock
	return a
}

// azureFixtureServer serves the recorded pages: three NC pages chained by
// NextPageLink ($skip), one ND page and one NV page. It checks the filter of
// every request.
func azureFixtureServer(t *testing.T) *httptest.Server {
	t.Helper()
	pages := map[string]string{
		"NC":      "azure/nc-page1.json",
		"NC@1000": "azure/nc-page2.json",
		"NC@2000": "azure/nc-page3.json",
		"ND":      "azure/nd.json",
		"NV":      "azure/nv.json",
	}
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		filter := q.Get("$filter")
		if r.URL.Path != "/api/retail/prices" || q.Get("api-version") != azureAPIVersion || r.Header.Get("User-Agent") != userAgent {
			t.Errorf("unexpected request %s (User-Agent %q)", r.URL, r.Header.Get("User-Agent"))
		}
		key := ""
		for _, series := range azureSeries {
			if strings.Contains(filter, "contains(armSkuName,'Standard_"+series+"')") {
				key = series
			}
		}
		if skip := q.Get("$skip"); skip != "" {
			key += "@" + skip
		}
		if key != "NC@1000" && key != "NC@2000" && !strings.Contains(filter, "contains(productName,'Windows') eq false") {
			t.Errorf("filter %q does not exclude Windows", filter)
		}
		path, ok := pages[key]
		if !ok {
			http.Error(w, "no such page "+key, http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte(strings.ReplaceAll(string(mustRead(t, path)), "{{BASE}}", srv.URL)))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestAzurePaging(t *testing.T) {
	srv := azureFixtureServer(t)
	src := newTestAzure(srv.URL + "/api/retail/prices")
	got, err := src.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	const label = "Azure Retail Prices API (fetched 2026-11-29)"
	want := []string{
		// NC page 1: pay-as-you-go and spot; Windows, Low Priority, a
		// reservation and a secondary meter region are skipped.
		"azure|Standard_NC24ads_A100_v4|A100 80GB|A100-80GB|1|85899345920|3.673000|3.673000|false|eastus|2026-11-29|" + label,
		"azure|Standard_NC24ads_A100_v4|A100 80GB|A100-80GB|1|85899345920|1.201900|1.201900|true|eastus|2026-11-29|" + label,
		// NC page 2: the P100 NC6s_v2 is not in the catalog (dropped).
		"azure|Standard_NC40ads_H100_v5|H100 NVL 94GB|H100-NVL|1|100931731456|6.980000|6.980000|false|eastus|2026-11-29|" + label,
		"azure|Standard_NC80adis_H100_v5|H100 NVL 94GB|H100-NVL|2|100931731456|17.640000|8.820000|false|eastus|2026-11-29|" + label,
		// NC page 3: a third of an A10 is dropped; a monthly unit is skipped.
		"azure|Standard_NC4as_T4_v3|T4|T4|1|17179869184|0.526000|0.526000|false|eastus|2026-11-29|" + label,
		"azure|Standard_ND96isr_H100_v5|H100 80GB SXM|H100-SXM|8|85899345920|98.320000|12.290000|false|eastus|2026-11-29|" + label,
		"azure|Standard_ND96asr_v4|A100 40GB|A100-40GB|8|42949672960|27.196800|3.399600|false|eastus|2026-11-29|" + label,
		// NV: a sixth of an A10 is dropped, the whole one kept.
		"azure|Standard_NV36ads_A10_v5|A10|A10|1|25769803776|3.200000|3.200000|false|eastus|2026-11-29|" + label,
	}
	assertFetched(t, got, want, 3)
}

func TestAzurePageLimit(t *testing.T) {
	var requests atomic.Int64
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := requests.Add(1)
		fmt.Fprintf(w, `{"Items": [], "NextPageLink": %q}`, fmt.Sprintf("%s/prices?$skip=%d", srv.URL, n*1000))
	}))
	defer srv.Close()
	got, err := newTestAzure(srv.URL + "/prices").Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Offers) != 0 {
		t.Errorf("got %d offers from empty pages", len(got.Offers))
	}
	if want := int64(azureMaxPages * len(azureSeries)); requests.Load() != want {
		t.Errorf("%d requests, want %d (the page limit for each series)", requests.Load(), want)
	}
}

func TestAzureErrors(t *testing.T) {
	tests := []struct {
		name    string
		handler func(base string) http.HandlerFunc
		wantErr string
	}{
		{"500", func(string) http.HandlerFunc { return status(http.StatusInternalServerError) }, "page 1: get "},
		{"not JSON", func(string) http.HandlerFunc { return body([]byte("<html>")) }, "decode prices page"},
		{"next page on another host", func(string) http.HandlerFunc {
			return body([]byte(`{"Items": [], "NextPageLink": "https://evil.example/prices?$skip=1000"}`))
		}, "not on 127.0.0.1"},
		{"500 on page 2", func(base string) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Get("$skip") != "" {
					http.Error(w, "boom", http.StatusInternalServerError)
					return
				}
				fmt.Fprintf(w, `{"Items": [], "NextPageLink": "%s/prices?$skip=1000"}`, base)
			}
		}, "page 2: get "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var srv *httptest.Server
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				tt.handler(srv.URL)(w, r)
			}))
			defer srv.Close()
			_, err := newTestAzure(srv.URL + "/prices").Fetch(context.Background())
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "azure NC series: ") {
				t.Fatalf("err = %v, want one from the NC series containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestAzureTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(10 * time.Second):
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	assertFetchDeadline(t, newTestAzure(srv.URL), 100*time.Millisecond)
}

func TestAzureSKU(t *testing.T) {
	tests := []struct {
		sku       string
		wantGPU   string
		wantCount int
		wantOK    bool
	}{
		{"Standard_NC24ads_A100_v4", "A100 80GB", 1, true},
		{"Standard_NC96ads_A100_v4", "A100 80GB", 4, true},
		{"Standard_ND96amsr_A100_v4", "A100 80GB", 8, true},
		{"Standard_ND96asr_v4", "A100 40GB", 8, true},
		{"Standard_ND96asr_A100_v4", "A100 40GB", 8, true},
		{"Standard_NC40ads_H100_v5", "H100 NVL", 1, true},
		{"Standard_NC80adis_H100_v5", "H100 NVL", 2, true},
		{"Standard_NCC40ads_H100_v5", "H100 NVL", 1, true},
		{"Standard_ND96isr_H100_v5", "H100 SXM", 8, true},
		{"Standard_ND96isr_H200_v5", "H200", 8, true},
		{"Standard_ND96isr_MI300X_v5", "MI300X", 8, true},
		{"Standard_NC4as_T4_v3", "T4", 1, true},
		{"Standard_NC64as_T4_v3", "T4", 4, true},
		{"Standard_NC6s_v3", "V100 16GB", 1, true},
		{"Standard_NC24rs_v3", "V100 16GB", 4, true},
		{"Standard_ND40rs_v2", "V100 32GB", 8, true},
		{"Standard_NV36ads_A10_v5", "A10", 1, true},
		{"Standard_NV72ads_A10_v5", "A10", 2, true},
		{"Standard_NV6ads_A10_v5", "A10", 0, false}, // a sixth of a GPU
		{"Standard_NC8ads_A10_v4", "A10", 0, false}, // a third of a GPU
		{"Standard_NC6s_v2", "", 0, false},          // P100, not in the table
		{"Standard_D4s_v5", "", 0, false},           // no GPU
		{"Standard_NC24ads_A100_v4_Promo", "", 0, false},
	}
	for _, tt := range tests {
		gpu, count, ok := azureSKU(tt.sku)
		if (ok && (gpu != tt.wantGPU || count != tt.wantCount)) || ok != tt.wantOK {
			t.Errorf("azureSKU(%q) = %q, %d, %t; want %q, %d, %t", tt.sku, gpu, count, ok, tt.wantGPU, tt.wantCount, tt.wantOK)
		}
	}
}
