package source

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

const awsVersion = "20261120-7"

var awsWant = []string{
	"aws|p4d.24xlarge|A100 40GB|A100-40GB|8|42949672960|21.957642|2.744705|false|us-east-1|2026-11-20|gpuhunt aws catalog v20261120-7",
	"aws|p4de.24xlarge|A100 80GB|A100-80GB|8|85899345920|27.447050|3.430881|false|us-east-1|2026-11-20|gpuhunt aws catalog v20261120-7",
	"aws|p5.48xlarge|H100 80GB SXM|H100-SXM|8|85899345920|55.040000|6.880000|false|us-east-1|2026-11-20|gpuhunt aws catalog v20261120-7",
	"aws|p5.48xlarge|H100 80GB SXM|H100-SXM|8|85899345920|9.667000|1.208375|true|us-east-2|2026-11-20|gpuhunt aws catalog v20261120-7",
	"aws|g5.xlarge|A10G|A10G|1|25769803776|1.006000|1.006000|false|us-east-1|2026-11-20|gpuhunt aws catalog v20261120-7",
	"aws|g6e.xlarge|L40S|L40S|1|51539607552|1.861000|1.861000|false|us-east-1|2026-11-20|gpuhunt aws catalog v20261120-7",
	"aws|p6-b200.48xlarge|B200|B200|8|193273528320|113.932800|14.241600|false|us-east-1|2026-11-20|gpuhunt aws catalog v20261120-7",
}

// awsDropped: the K80 (not in the catalog), a bad price, a bad spot flag
// and a short row. The CPU-only m5.large is no offer and is not counted.
const awsDropped = 4

func newTestGPUHunt(baseURL string, providers ...string) *gpuhunt {
	g := NewGPUHunt(baseURL, providers, nil).(*gpuhunt)
	g.now = fixedClock
	return g
}

func TestGPUHuntZippedCatalog(t *testing.T) {
	srv := newRecordingServer(t, map[string]http.HandlerFunc{
		"/v3/aws/version": body([]byte(awsVersion + "\n")),
		"/v3/aws/" + awsVersion + "/catalog.zip": body(zipOf(t, map[string][]byte{
			"aws.csv": mustRead(t, "gpuhunt/aws.csv"),
		})),
	})
	src := newTestGPUHunt(srv.URL, "aws")
	if got, want := src.Name(), "gpuhunt:aws"; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
	got, err := src.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	assertFetched(t, got, awsWant, awsDropped)
}

func TestGPUHuntProviders(t *testing.T) {
	lambda := mustRead(t, "gpuhunt/lambdalabs.csv")
	tests := []struct {
		name    string
		catalog []byte // what catalog.zip serves
	}{
		{"zip with only its CSV", zipOf(t, map[string][]byte{"lambdalabs.csv": lambda})},
		{"all-in-one zip", zipOf(t, map[string][]byte{
			"aws.csv": mustRead(t, "gpuhunt/aws.csv"), "lambdalabs.csv": lambda, "version": []byte("20261121-1"),
		})},
		{"unzipped mirror", lambda},
	}
	want := []string{
		"lambda|gpu_1x_h100_sxm5|H100 80GB SXM|H100-SXM|1|85899345920|4.290000|4.290000|false|us-east-1|2026-11-21|gpuhunt lambdalabs catalog v20261121-1",
		"lambda|gpu_1x_h100_pcie|H100 80GB PCIe|H100-PCIe|1|85899345920|3.290000|3.290000|false|us-east-1|2026-11-21|gpuhunt lambdalabs catalog v20261121-1",
		"lambda|gpu_8x_a100_80gb_sxm4|A100 80GB|A100-80GB|8|85899345920|22.320000|2.790000|false|us-east-1|2026-11-21|gpuhunt lambdalabs catalog v20261121-1",
		"lambda|gpu_1x_a10|A10|A10|1|25769803776|1.290000|1.290000|false|us-west-1|2026-11-21|gpuhunt lambdalabs catalog v20261121-1",
		"lambda|gpu_1x_a6000|RTX A6000|RTXA6000|1|51539607552|1.090000|1.090000|false|us-west-1|2026-11-21|gpuhunt lambdalabs catalog v20261121-1",
		"lambda|gpu_1x_gh200|GH200 96GB|GH200|1|103079215104|2.290000|2.290000|false|us-east-3|2026-11-21|gpuhunt lambdalabs catalog v20261121-1",
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRecordingServer(t, map[string]http.HandlerFunc{
				"/v3/lambdalabs/version":                body([]byte("20261121-1")),
				"/v3/lambdalabs/20261121-1/catalog.zip": body(tt.catalog),
			})
			got, err := newTestGPUHunt(srv.URL, "lambdalabs").Fetch(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			assertFetched(t, got, want, 0)
		})
	}
}

func TestGPUHuntVersionUnchangedSkipsDownload(t *testing.T) {
	version := awsVersion
	archive := zipOf(t, map[string][]byte{"aws.csv": mustRead(t, "gpuhunt/aws.csv")})
	srv := newRecordingServer(t, map[string]http.HandlerFunc{
		"/v3/aws/version":                        func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(version)) },
		"/v3/aws/" + awsVersion + "/catalog.zip": body(archive),
		"/v3/aws/20261120-8/catalog.zip":         body(archive),
	})
	src := newTestGPUHunt(srv.URL, "aws")
	first, err := src.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	first.Offers[0].Provider = "changed by the caller" // must not leak into the kept catalog
	second, err := src.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	assertFetched(t, second, awsWant, awsDropped)
	if n := srv.count("/v3/aws/" + awsVersion + "/catalog.zip"); n != 1 {
		t.Errorf("catalog downloaded %d times for one version, want 1", n)
	}
	if n := srv.count("/v3/aws/version"); n != 2 {
		t.Errorf("version read %d times, want 2", n)
	}

	version = "20261120-8"
	if _, err := src.Fetch(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := srv.count("/v3/aws/20261120-8/catalog.zip"); n != 1 {
		t.Errorf("new version downloaded %d times, want 1", n)
	}
}

func TestGPUHuntErrors(t *testing.T) {
	good := zipOf(t, map[string][]byte{"aws.csv": mustRead(t, "gpuhunt/aws.csv")})
	tests := []struct {
		name    string
		routes  map[string]http.HandlerFunc
		wantErr string
	}{
		{"version 500", map[string]http.HandlerFunc{
			"/v3/aws/version": status(http.StatusInternalServerError),
		}, "500 Internal Server Error"},
		{"catalog 404", map[string]http.HandlerFunc{
			"/v3/aws/version": body([]byte(awsVersion)),
		}, "404 Not Found"},
		{"version is an HTML page", map[string]http.HandlerFunc{
			"/v3/aws/version": body([]byte("<html><body>maintenance</body></html>")),
		}, "not a catalog version"},
		{"zip without the provider's CSV", map[string]http.HandlerFunc{
			"/v3/aws/version": body([]byte(awsVersion)),
			"/v3/aws/" + awsVersion + "/catalog.zip": body(zipOf(t, map[string][]byte{
				"gcp.csv": []byte("a"), "azure.csv": []byte("b"),
			})),
		}, "zip holds no aws.csv"},
		{"truncated zip", map[string]http.HandlerFunc{
			"/v3/aws/version":                        body([]byte(awsVersion)),
			"/v3/aws/" + awsVersion + "/catalog.zip": body(good[:len(good)/2]),
		}, "open zip"},
		{"CSV without gpuhunt columns", map[string]http.HandlerFunc{
			"/v3/aws/version":                        body([]byte(awsVersion)),
			"/v3/aws/" + awsVersion + "/catalog.zip": body([]byte("name,price\nx,1\n")),
		}, `missing column "instance_name"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRecordingServer(t, tt.routes)
			_, err := newTestGPUHunt(srv.URL, "aws").Fetch(context.Background())
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
			if !strings.HasPrefix(err.Error(), "gpuhunt aws: ") {
				t.Errorf("err = %q, want it to name the provider", err)
			}
		})
	}
}

func TestGPUHuntTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := newRecordingServer(t, map[string]http.HandlerFunc{
		"/v3/aws/version": func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		},
	})
	defer close(release)
	assertFetchDeadline(t, newTestGPUHunt(srv.URL, "aws"), 100*time.Millisecond)
}

func TestVersionDate(t *testing.T) {
	tests := []struct{ version, want string }{
		{"20260818-42", "2026-08-18"},
		{"20261120", "2026-11-20"},
		{"20261399-1", "2026-11-29"}, // no such month: dated by the fetch
		{"latest", "2026-11-29"},
	}
	for _, tt := range tests {
		if got := versionDate(tt.version, fixedNow); got != tt.want {
			t.Errorf("versionDate(%q) = %q, want %q", tt.version, got, tt.want)
		}
	}
}

func TestGPUHuntSeveralProviders(t *testing.T) {
	srv := newRecordingServer(t, map[string]http.HandlerFunc{
		"/v3/aws/version": body([]byte(awsVersion)),
		"/v3/aws/" + awsVersion + "/catalog.zip": body(zipOf(t, map[string][]byte{
			"aws.csv": mustRead(t, "gpuhunt/aws.csv"),
		})),
		"/v3/gcp/version": status(http.StatusServiceUnavailable),
	})
	src := newTestGPUHunt(srv.URL, "aws", "gcp")
	if got, want := src.Name(), "gpuhunt:aws+gcp"; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
	// One failing provider fails the fetch, so the cache keeps its last
	// complete data instead of replacing it with a partial one.
	_, err := src.Fetch(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), "gpuhunt gcp: ") || !strings.Contains(err.Error(), "503") {
		t.Errorf("err = %v, want the gcp 503", err)
	}
	if _, err := newTestGPUHunt(srv.URL).Fetch(context.Background()); err == nil {
		t.Error("a source with no provider fetched without error")
	}
	if _, err := newTestGPUHunt(srv.URL, "../aws").Fetch(context.Background()); err == nil || !strings.Contains(err.Error(), "not a provider id") {
		t.Errorf("err = %v, want a refused provider id", err)
	}
}
