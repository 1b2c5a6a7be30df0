package digest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestNewPrometheusRejects(t *testing.T) {
	for _, u := range []string{"", "prometheus:9090", "ftp://prometheus:9090", "http://", "://x"} {
		if _, err := NewPrometheus(u); err == nil {
			t.Errorf("NewPrometheus(%q) accepted", u)
		}
	}
	if _, err := NewPrometheus("http://prometheus.monitoring:9090/prom"); err != nil {
		t.Errorf("NewPrometheus with a path prefix: %v", err)
	}
}

// cannedPrometheus answers every range query of a metric with one series
// (Prometheus 2.42's JSON shape, digest.md §3.1).
func cannedPrometheus(t *testing.T, values map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.URL.Path != "/api/v1/query_range" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		q := r.Form.Get("query")
		end := r.Form.Get("end")
		result := "[]"
		for metric, v := range values {
			if strings.Contains(q, "("+metric+"[") {
				result = fmt.Sprintf(`[{"metric":{"__name__":%q,"Hostname":"n1","gpu":"0","UUID":"GPU-1","modelName":"Tesla T4","namespace":"ml","pod":"p"},"values":[[%s,%q]]}]`, metric, end, v)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":%s}}`, result)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestPromSourceParsesRangeQueries(t *testing.T) {
	srv := cannedPrometheus(t, map[string]string{metricFBUsed: "15000", metricFBFree: "60", metricFBReserved: "300", metricGPUUtil: "0"})
	src, err := NewPrometheus(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	w := Window{Start: storyEnd.Add(-24 * time.Hour), End: storyEnd}
	f, err := src.Fleet(context.Background(), w, Thresholds{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.GPUs) != 1 {
		t.Fatalf("%d GPUs, want 1", len(f.GPUs))
	}
	g := f.GPUs[0]
	if g.Host != "n1" || g.Owner.String() != "ml/p" || g.TotalBytes != 15360*mib || g.IdleHours != 5.0/60 || !g.LastSeen.Equal(storyEnd) {
		t.Errorf("got %+v", g)
	}
}

func TestPromSourceFailures(t *testing.T) {
	stop := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer slow.Close()
	defer close(stop) // before Close, which waits for the handlers
	badQuery := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"status":"error","errorType":"bad_data","error":"invalid parameter \"query\": parse error"}`)
	}))
	defer badQuery.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()

	tests := []struct {
		name       string
		url        string
		wantStatus string
		wantErr    string
	}{
		{"connection refused, password redacted", strings.Replace(downURL, "http://", "http://admin:s3cret@", 1), StatusUnreachable, "connection refused"},
		{"timeout", slow.URL, StatusUnreachable, "timeout"},
		{"bad query", badQuery.URL, StatusQueryFailed, "bad_data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := NewPrometheus(tt.url, WithQueryTimeout(300*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			d, err := Compose(context.Background(), Inputs{Window: Window{Start: storyStart, End: storyEnd}, Metrics: src})
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("took %s despite a 300 ms query timeout", took)
			}
			dq := d.DataQuality
			if dq.Prometheus != tt.wantStatus || !strings.Contains(dq.PrometheusError, tt.wantErr) {
				t.Errorf("status %q error %q; want %q containing %q", dq.Prometheus, dq.PrometheusError, tt.wantStatus, tt.wantErr)
			}
			if strings.Contains(dq.PrometheusError, "s3cret") || strings.Contains(renderedText(d), "s3cret") {
				t.Errorf("password leaked: %s", dq.PrometheusError)
			}
		})
	}
}

func renderedText(d Digest) string { return string(renderAll(d)) }
