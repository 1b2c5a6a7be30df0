package source

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

func newTestSkyPilot(urls ...string) *skypilot {
	s := NewSkyPilot(urls, nil).(*skypilot)
	s.now = fixedClock
	return s
}

func TestSkyPilotCatalogs(t *testing.T) {
	tests := []struct {
		cloud       string
		want        []string
		wantDropped int
	}{
		{
			// Header order: InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice.
			cloud: "lambda",
			want: []string{
				"lambda|gpu_8x_h100_sxm5|H100 80GB SXM|H100-SXM|8|85899345920|31.920000|3.990000|false|us-east-1|2026-11-29|skypilot catalog lambda/vms.csv (undated; fetched 2026-11-29)",
				"lambda|gpu_1x_h100_pcie|H100 80GB PCIe|H100-PCIe|1|85899345920|3.290000|3.290000|false|us-east-1|2026-11-29|skypilot catalog lambda/vms.csv (undated; fetched 2026-11-29)",
				"lambda|gpu_1x_a100_sxm4|A100 40GB|A100-40GB|1|42949672960|1.990000|1.990000|false|us-east-1|2026-11-29|skypilot catalog lambda/vms.csv (undated; fetched 2026-11-29)",
				"lambda|gpu_1x_a10|A10|A10|1|25769803776|1.290000|1.290000|false|us-west-1|2026-11-29|skypilot catalog lambda/vms.csv (undated; fetched 2026-11-29)",
				"lambda|gpu_8x_b200_sxm6|B200|B200|8|193273528320|39.920000|4.990000|false|us-east-1|2026-11-29|skypilot catalog lambda/vms.csv (undated; fetched 2026-11-29)",
			},
			wantDropped: 2, // count "one", a short row
		},
		{
			// GCP: host VM + GPU rows added per zone; header order differs again.
			cloud: "gcp",
			want: []string{
				"gcp|a2-highgpu-1g|A100 40GB|A100-40GB|1|42949672960|3.673390|3.673390|false|us-central1|2026-11-29|skypilot catalog gcp/vms.csv (undated; fetched 2026-11-29)",
				"gcp|a2-highgpu-1g|A100 40GB|A100-40GB|1|42949672960|1.803850|1.803850|true|us-central1|2026-11-29|skypilot catalog gcp/vms.csv (undated; fetched 2026-11-29)",
				"gcp|a2-highgpu-8g|A100 40GB|A100-40GB|8|42949672960|29.387080|3.673385|false|us-central1|2026-11-29|skypilot catalog gcp/vms.csv (undated; fetched 2026-11-29)",
				"gcp|a2-highgpu-8g|A100 40GB|A100-40GB|8|42949672960|14.430800|1.803850|true|us-central1|2026-11-29|skypilot catalog gcp/vms.csv (undated; fetched 2026-11-29)",
				// The g2 host has no spot price, so the pair has none.
				"gcp|g2-standard-4|L4|L4|1|25769803776|0.800040|0.800040|false|us-central1|2026-11-29|skypilot catalog gcp/vms.csv (undated; fetched 2026-11-29)",
				"gcp|1x T4 (GPU only; add a host VM)|T4|T4|1|17179869184|0.350000|0.350000|false|us-central1|2026-11-29|skypilot catalog gcp/vms.csv (undated; fetched 2026-11-29)|component only",
				"gcp|1x T4 (GPU only; add a host VM)|T4|T4|1|17179869184|0.175000|0.175000|true|us-central1|2026-11-29|skypilot catalog gcp/vms.csv (undated; fetched 2026-11-29)|component only",
			},
			wantDropped: 1, // a3-highgpu-8g has no H100 GPU row in its zone
		},
		{
			cloud: "vast",
			want: []string{
				"vastai|1x-RTX_4090-32-65536|GeForce RTX 4090|RTX4090|1|25769803776|0.400000|0.400000|false|Germany, DE, EU|2026-11-29|skypilot catalog vast/vms.csv (undated; fetched 2026-11-29)",
				"vastai|1x-H100_NVL-32-65536|H100 NVL 94GB|H100-NVL|1|100931731456|2.080000|2.080000|false|Bulgaria, BG, EU|2026-11-29|skypilot catalog vast/vms.csv (undated; fetched 2026-11-29)",
				"vastai|8x-Tesla_V100-32-65536|V100 16GB|V100-16GB|8|17179869184|0.850000|0.106250|false|Sweden, SE, EU|2026-11-29|skypilot catalog vast/vms.csv (undated; fetched 2026-11-29)",
				"vastai|8x-Tesla_V100-32-65536|V100 16GB|V100-16GB|8|17179869184|0.500000|0.062500|true|Sweden, SE, EU|2026-11-29|skypilot catalog vast/vms.csv (undated; fetched 2026-11-29)",
			},
			wantDropped: 1, // NaN price
		},
		{
			// Shadeform resells clouds: the provider is the instance prefix,
			// and SizeInMiB holds GB.
			cloud: "shadeform",
			want: []string{
				"massedcompute|massedcompute_A100-80GB|A100 80GB|A100-80GB|1|85899345920|1.350000|1.350000|false|kansascity-usa-1|2026-11-29|skypilot catalog shadeform/vms.csv (undated; fetched 2026-11-29)",
				"paperspace|paperspace_H100|H100 80GB PCIe|H100-PCIe|1|85899345920|5.990000|5.990000|false|newyork-usa-1|2026-11-29|skypilot catalog shadeform/vms.csv (undated; fetched 2026-11-29)",
				"hyperstack|hyperstack_A6000|RTX A6000|RTXA6000|1|51539607552|0.500000|0.500000|false|montreal-canada-2|2026-11-29|skypilot catalog shadeform/vms.csv (undated; fetched 2026-11-29)",
				"excesssupply|excesssupply_H200x8|H200|H200|8|151397597184|32.000000|4.000000|false|tokyo-japan-5|2026-11-29|skypilot catalog shadeform/vms.csv (undated; fetched 2026-11-29)",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.cloud, func(t *testing.T) {
			path := "/catalogs/v8/" + tt.cloud + "/vms.csv"
			srv := newRecordingServer(t, map[string]http.HandlerFunc{
				path: body(mustRead(t, "skypilot/"+tt.cloud+"/vms.csv")),
			})
			src := newTestSkyPilot(srv.URL + path)
			if got, want := src.Name(), "skypilot:"+tt.cloud; got != want {
				t.Errorf("Name() = %q, want %q", got, want)
			}
			got, err := src.Fetch(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			assertFetched(t, got, tt.want, tt.wantDropped)
		})
	}
}

func TestSkyPilotSeveralFiles(t *testing.T) {
	srv := newRecordingServer(t, map[string]http.HandlerFunc{
		"/v8/vast/vms.csv":      body(mustRead(t, "skypilot/vast/vms.csv")),
		"/v8/shadeform/vms.csv": body(mustRead(t, "skypilot/shadeform/vms.csv")),
	})
	src := newTestSkyPilot(srv.URL+"/v8/vast/vms.csv", srv.URL+"/v8/shadeform/vms.csv")
	if got, want := src.Name(), "skypilot:vast+shadeform"; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
	got, err := src.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Offers) != 8 || got.Dropped != 1 {
		t.Errorf("got %d offers, %d dropped; want 8 and 1", len(got.Offers), got.Dropped)
	}
}

func TestSkyPilotErrors(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		wantErr string
	}{
		{"500", status(http.StatusInternalServerError), "500 Internal Server Error"},
		{"empty body", body(nil), "no CSV header"},
		{"not a catalog", body([]byte("<html>moved</html>\n")), `missing column "InstanceType"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRecordingServer(t, map[string]http.HandlerFunc{"/v8/lambda/vms.csv": tt.handler})
			_, err := newTestSkyPilot(srv.URL + "/v8/lambda/vms.csv").Fetch(context.Background())
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "skypilot lambda: ") {
				t.Fatalf("err = %v, want one from skypilot lambda containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestSkyPilotSlowSource covers a server that answers slowly: within the
// deadline the fetch succeeds; a body that trickles past the deadline fails
// promptly with the context's error instead of hanging.
func TestSkyPilotSlowSource(t *testing.T) {
	catalog := mustRead(t, "skypilot/vast/vms.csv")
	srv := newRecordingServer(t, map[string]http.HandlerFunc{
		"/slow/vast/vms.csv": func(w http.ResponseWriter, _ *http.Request) {
			time.Sleep(150 * time.Millisecond)
			_, _ = w.Write(catalog)
		},
		"/trickle/vast/vms.csv": func(w http.ResponseWriter, r *http.Request) {
			w.(http.Flusher).Flush()
			for _, b := range catalog {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
				_, _ = w.Write([]byte{b})
				w.(http.Flusher).Flush()
			}
		},
	})
	t.Run("slow but in time", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		got, err := newTestSkyPilot(srv.URL + "/slow/vast/vms.csv").Fetch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Offers) != 4 {
			t.Errorf("got %d offers, want 4", len(got.Offers))
		}
	})
	t.Run("trickling past the deadline", func(t *testing.T) {
		assertFetchDeadline(t, newTestSkyPilot(srv.URL+"/trickle/vast/vms.csv"), 200*time.Millisecond)
	})
}

func TestSkyPilotCloud(t *testing.T) {
	tests := []struct{ url, want string }{
		{"https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8/lambda/vms.csv", "lambda"},
		{"http://127.0.0.1:8080/vms.csv", "127.0.0.1:8080"},
		{"http://mirror.internal/catalogs/v7/aws/vms.csv?x=1", "aws"},
	}
	for _, tt := range tests {
		if got := skypilotCloud(tt.url); got != tt.want {
			t.Errorf("skypilotCloud(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
}

func TestGCPHostGPUs(t *testing.T) {
	tests := []struct {
		instance  string
		wantAccel string
		wantCount int
		wantOK    bool
	}{
		{"a2-highgpu-1g", "A100", 1, true},
		{"a2-megagpu-16g", "A100", 16, true},
		{"a2-ultragpu-8g", "A100-80GB", 8, true},
		{"a3-highgpu-8g", "H100", 8, true},
		{"a3-megagpu-8g", "H100-MEGA", 8, true},
		{"a3-ultragpu-8g", "H200", 8, true},
		{"g2-standard-48", "L4", 4, true},
		{"n1-standard-8", "", 0, false},
		{"z9-supergpu-8g", "", 0, false},
	}
	for _, tt := range tests {
		accel, count, ok := gcpHostGPUs(tt.instance)
		if accel != tt.wantAccel || count != tt.wantCount || ok != tt.wantOK {
			t.Errorf("gcpHostGPUs(%q) = %q, %d, %t; want %q, %d, %t",
				tt.instance, accel, count, ok, tt.wantAccel, tt.wantCount, tt.wantOK)
		}
	}
}
