package prom

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	dt "github.com/vrambot/vrambot/digest/digesttest"
	"github.com/vrambot/vrambot/digest/fleet"
	"github.com/vrambot/vrambot/internal/errs"
)

func TestNewRejects(t *testing.T) {
	for _, u := range []string{"", "prometheus:9090", "ftp://prometheus:9090", "http://", "://x"} {
		if _, err := New(u); !errs.Is(err, errs.Invalid) {
			t.Errorf("New(%q) = %v, want an Invalid error", u, err)
		}
	}
	src, err := New("http://admin:pw@prometheus.monitoring:9090/prom?x=1")
	if err != nil {
		t.Fatalf("New with a path prefix: %v", err)
	}
	if a := src.Address(); a != "http://prometheus.monitoring:9090/prom" {
		t.Errorf("address %q, want no credentials or query", a)
	}
}

// TestFleetFromTheAPI reads the cluster day through the HTTP API (a fake
// Prometheus answering the simulated queries) and gets what the simulation
// gives, and sends the count of the fleet and the seven range queries of
// the digest.
func TestFleetFromTheAPI(t *testing.T) {
	day := dt.ClusterDay()
	var mu sync.Mutex
	var queries []string
	fake := dt.FakePrometheus(t, day)
	spy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		mu.Lock()
		queries = append(queries, r.Form.Get("query"))
		mu.Unlock()
		fake.Config.Handler.ServeHTTP(w, r)
	}))
	defer spy.Close()
	src, err := New(spy.URL)
	if err != nil {
		t.Fatal(err)
	}
	got, err := src.Fleet(context.Background(), day.Window(), fleet.Thresholds{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := dt.Sim{Days: []dt.Day{day}}.Fleet(context.Background(), day.Window(), fleet.Thresholds{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fleet over the API differs from the simulation:\n got %d GPUs %d jobs\nwant %d GPUs %d jobs", len(got.GPUs), len(got.Jobs), len(want.GPUs), len(want.Jobs))
	}
	sort.Strings(queries)
	wantQ := []string{
		"avg_over_time(DCGM_FI_DEV_FB_FREE[4m59s999ms])",
		"avg_over_time(DCGM_FI_DEV_FB_RESERVED[4m59s999ms])",
		"avg_over_time(DCGM_FI_DEV_FB_USED[4m59s999ms])",
		"avg_over_time(DCGM_FI_DEV_GPU_UTIL[4m59s999ms])",
		"avg_over_time(DCGM_FI_PROF_GR_ENGINE_ACTIVE[4m59s999ms])",
		"count(max_over_time(DCGM_FI_DEV_FB_USED[1d]))", // the fleet's size, for the step
		"max_over_time(DCGM_FI_DEV_FB_USED[4m59s999ms])",
		"min_over_time(DCGM_FI_DEV_FB_USED[4m59s999ms])",
	}
	if !reflect.DeepEqual(queries, wantQ) {
		t.Errorf("queries\n%q\nwant\n%q", queries, wantQ)
	}
	if _, err := src.Fleet(context.Background(), fleet.Window{}, fleet.Thresholds{}); !errs.Is(err, errs.Invalid) {
		t.Errorf("empty window: %v, want Invalid", err)
	}
}

// TestFailureKinds: what went wrong decides the error's kind, and no
// password reaches the error text.
func TestFailureKinds(t *testing.T) {
	stop := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer slow.Close()
	defer close(stop) // before Close, which waits for the handlers
	answer := func(code int, body string) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			fmt.Fprint(w, body)
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	badQuery := answer(http.StatusBadRequest, `{"status":"error","errorType":"bad_data","error":"invalid parameter \"query\": parse error"}`)
	tooHeavy := answer(http.StatusUnprocessableEntity, `{"status":"error","errorType":"execution","error":"query processing would load too many samples"}`)
	overloaded := answer(http.StatusServiceUnavailable, `{"status":"error","errorType":"timeout","error":"query timed out"}`)
	login := answer(http.StatusForbidden, `<html>sign in</html>`)
	vector := answer(http.StatusOK, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()

	tests := []struct {
		name     string
		url      string
		wantKind errs.Kind
		wantText string
	}{
		{"connection refused, password redacted", strings.Replace(downURL, "http://", "http://admin:s3cret@", 1), errs.Unavailable, "connection refused"},
		{"timeout", slow.URL, errs.Unavailable, "timeout"},
		{"prometheus overloaded", overloaded.URL, errs.Unavailable, "503"},
		{"a login page", login.URL, errs.Unavailable, "403"},
		{"bad query", badQuery.URL, errs.Internal, "bad_data"},
		{"too heavy", tooHeavy.URL, errs.Internal, "too many samples"},
		{"not a matrix", vector.URL, errs.Internal, "want a matrix"},
	}
	w := dt.ClusterDay().Window()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := New(tt.url, WithQueryTimeout(300*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = src.Fleet(context.Background(), w, fleet.Thresholds{})
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %s despite a 300 ms query timeout", took)
			}
			if err == nil || errs.KindOf(err) != tt.wantKind || !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("err = %v (kind %s), want kind %s containing %q", err, errs.KindOf(err), tt.wantKind, tt.wantText)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("password leaked: %v", err)
			}
		})
	}
}
