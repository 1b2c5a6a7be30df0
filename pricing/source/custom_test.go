package source

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

func newTestCustom(url string) *custom {
	c := NewCustom(url, nil).(*custom)
	c.now = fixedClock
	return c
}

func TestCustomPriceLists(t *testing.T) {
	tests := []struct {
		file        string
		want        []string
		wantDropped int
	}{
		{
			file: "rates.csv",
			want: []string{
				"onprem|dgx-a100-node|A100 80GB|A100-80GB|8|85899345920|9.600000|1.200000|false|dc-frankfurt|2026-11-01|custom price list (127.0.0.1)",
				// No date: dated by the fetch.
				"onprem|ws-4090|GeForce RTX 4090|RTX4090|1|25769803776|0.210000|0.210000|false|dc-frankfurt|2026-11-29|custom price list (127.0.0.1)",
				"onprem|ws-4090|GeForce RTX 4090|RTX4090|1|25769803776|0.100000|0.100000|true|dc-frankfurt|2026-11-29|custom price list (127.0.0.1)",
			},
			wantDropped: 3, // a K80, a count "zero", a date not YYYY-MM-DD
		},
		{
			file: "rates.json",
			want: []string{
				"onprem|dgx-h100|H100 80GB SXM|H100-SXM|8|85899345920|24.000000|3.000000|false|dc-paris|2026-11-15|finance rate card Q4",
				// Priced per GPU-hour: the instance price is per GPU x count.
				"onprem|l40s-box|L40S|L40S|2|51539607552|1.100000|0.550000|true|dc-paris|2026-11-29|custom price list (127.0.0.1)",
			},
			wantDropped: 3, // an unknown GPU, no price, a string instead of an offer
		},
		{
			file: "wrapped.json",
			want: []string{
				"onprem|v100-node|V100 32GB|V100-32GB|4|34359738368|2.000000|0.500000|false|dc-lyon|2026-10-01|custom price list (127.0.0.1)",
				"onprem|t4-card|T4|T4|1|17179869184|0.300000|0.300000|false|dc-lyon|2026-10-01|custom price list (127.0.0.1)|component only",
			},
		},
		{
			file: "components.csv",
			want: []string{
				"onprem|t4-card|T4|T4|1|17179869184|0.300000|0.300000|false||2026-11-01|custom price list (127.0.0.1)|component only",
				"onprem|t4-box|T4|T4|1|17179869184|0.550000|0.550000|false||2026-11-01|custom price list (127.0.0.1)",
			},
			wantDropped: 1, // component_only "maybe"
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			srv := newRecordingServer(t, map[string]http.HandlerFunc{"/rates": body(mustRead(t, "custom/"+tt.file))})
			src := newTestCustom(srv.URL + "/rates?token=s3cret")
			if got, want := src.Name(), "custom:"+srv.URL+"/rates"; got != want {
				t.Errorf("Name() = %q, want %q (no query: it may hold a token)", got, want)
			}
			got, err := src.Fetch(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			// The label names the list's host; the test server's port varies.
			for i := range got.Offers {
				got.Offers[i].Source = strings.Replace(got.Offers[i].Source, srv.Listener.Addr().String(), "127.0.0.1", 1)
			}
			assertFetched(t, got, tt.want, tt.wantDropped)
		})
	}
}

func TestCustomErrors(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		wantErr string
	}{
		{"500", status(http.StatusInternalServerError), "500 Internal Server Error"},
		{"403", status(http.StatusForbidden), "403 Forbidden"},
		{"object without offers", body([]byte(`{"prices": []}`)), `no "offers" array`},
		{"broken JSON", body([]byte(`[{"provider": "x"`)), "decode JSON price list"},
		{"CSV with another header", body([]byte("name,cost\nfoo,1\n")), `missing column "provider"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRecordingServer(t, map[string]http.HandlerFunc{"/rates": tt.handler})
			_, err := newTestCustom(srv.URL + "/rates?token=s3cret").Fetch(context.Background())
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("err = %q shows the URL's token", err)
			}
		})
	}
}
