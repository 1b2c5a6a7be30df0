package prom

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	dt "github.com/vrambot/vrambot/digest/digesttest"
	"github.com/vrambot/vrambot/digest/fleet"
)

// Issue 26: what a Prometheus may answer that no dcgm-exporter sends.

// hostileProm answers the count query with gpus and every range query
// with gpus series at the requested step, each sample value(metric query),
// and labels from labels(i).
func hostileProm(t *testing.T, gpus int, value func(query string) string, labels func(i int) string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/v1/query" {
			fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[%s,"%d"]}]}}`, r.Form.Get("time"), gpus)
			return
		}
		start, _ := strconv.ParseFloat(r.Form.Get("start"), 64)
		end, _ := strconv.ParseFloat(r.Form.Get("end"), 64)
		step, _ := strconv.ParseFloat(r.Form.Get("step"), 64)
		v := value(r.Form.Get("query"))
		bw := bufio.NewWriterSize(w, 1<<16)
		bw.WriteString(`{"status":"success","data":{"resultType":"matrix","result":[`)
		for i := range gpus {
			if i > 0 {
				bw.WriteString(",")
			}
			fmt.Fprintf(bw, `{"metric":{%s},"values":[`, labels(i))
			for ts := start; ts <= end; ts += step {
				if ts > start {
					bw.WriteString(",")
				}
				fmt.Fprintf(bw, `[%.3f,"%s"]`, ts, v)
			}
			bw.WriteString("]}")
		}
		bw.WriteString("]}}")
		_ = bw.Flush()
	}))
	t.Cleanup(srv.Close)
	return srv
}

func plainLabels(i int) string {
	return fmt.Sprintf(`"Hostname":"node-%04d","gpu":"%d","UUID":"GPU-%08d","modelName":"NVIDIA A100-SXM4-80GB","exported_namespace":"ml","exported_pod":"job-%05d"`, i/8, i%8, i, i)
}

// steady answers a healthy, half-full A100 for every metric.
func steady(q string) string {
	switch {
	case strings.Contains(q, "RESERVED"):
		return "500"
	case strings.Contains(q, "ENGINE"):
		return "0.5"
	case strings.Contains(q, "UTIL"):
		return "50"
	}
	return "40000"
}

// TestHostileSamples: samples no GPU can report (NaN, infinities,
// negative or absurd memory, a ratio past 1, a percentage past 100) are
// gaps, never figures.
func TestHostileSamples(t *testing.T) {
	tests := []struct {
		name  string
		value string
	}{
		{"NaN", "NaN"},
		{"+Inf", "+Inf"},
		{"-Inf", "-Inf"},
		{"negative", "-50000"},
		{"absurd", "1e300"},
	}
	w := dt.ClusterDay().Window()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := hostileProm(t, 2, func(string) string { return tt.value }, plainLabels)
			src, err := New(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			f, err := src.Fleet(t.Context(), w, fleet.Thresholds{})
			if err != nil {
				t.Fatalf("Fleet: %v", err)
			}
			for _, g := range f.GPUs {
				if g.CapacityBytes != 0 || g.PeakUsedBytes != 0 || math.IsNaN(g.PeakUsedRatio) || g.PeakUsedRatio != 0 || g.HoursAbove != 0 {
					t.Errorf("%s: %+v", g.Name(), g)
				}
			}
		})
	}
	for _, tt := range []struct {
		valid func(float64) bool
		ok    []float64
		bad   []float64
	}{
		{validMemory, []float64{0, 81920, maxMemoryMiB}, []float64{-1, maxMemoryMiB + 1, math.NaN(), math.Inf(1)}},
		{validRatio, []float64{0, 0.5, 1}, []float64{-0.1, 2, math.NaN()}},
		{validPercent, []float64{0, 100}, []float64{-1, 101, 1e9, math.Inf(-1)}},
	} {
		for _, v := range tt.ok {
			if !tt.valid(v) {
				t.Errorf("%v refused", v)
			}
		}
		for _, v := range tt.bad {
			if tt.valid(v) {
				t.Errorf("%v accepted", v)
			}
		}
	}
}

// TestHostileLabels: label values are cut to the longest real name and
// lose control characters; Slack markup in them is the renderer's to
// escape (bot.mrkdwn), and reaches it whole.
func TestHostileLabels(t *testing.T) {
	tests := []struct{ in, want string }{
		{"gpu-node-01", "gpu-node-01"},
		{"<!channel> *bold* <@U1|x>", "<!channel> *bold* <@U1|x>"},
		{"line\nbreak\ttab\x00nul", "line break tab nul"},
		{strings.Repeat("h", 5000), strings.Repeat("h", maxLabelBytes)},
		{strings.Repeat("é", 200), strings.Repeat("é", maxLabelBytes/2)},
	}
	for _, tt := range tests {
		if got := cleanLabel(tt.in); got != tt.want {
			t.Errorf("cleanLabel(%.40q) = %.40q (%d bytes), want %.40q", tt.in, got, len(got), tt.want)
		}
	}
	m := model.Matrix{{Metric: model.Metric{"Hostname": model.LabelValue(strings.Repeat("x", 1000) + "\n")}, Values: []model.SamplePair{{Timestamp: 1, Value: 1}}}}
	if got := toSeries(m, validMemory)[0].Labels["Hostname"]; len(got) != maxLabelBytes {
		t.Errorf("label of %d bytes kept", len(got))
	}
}

// TestHostileSizes: an answer of more series than the digest reads, or of
// more bytes, is refused with why, quickly; the count of the fleet widens
// the step instead of reading past maxPointsPerQuery.
func TestHostileSizes(t *testing.T) {
	w := dt.ClusterDay().Window()
	t.Run("too many series", func(t *testing.T) {
		srv := hostileProm(t, maxSeriesPerQuery+1, func(string) string { return "1" }, func(i int) string { return fmt.Sprintf(`"UUID":"GPU-%d"`, i) })
		src, _ := New(srv.URL)
		// The count says so many GPUs that an hour is one bucket; the
		// answer is refused by its count of series.
		_, err := src.Fleet(t.Context(), fleet.Window{Start: w.End.Add(-time.Hour), End: w.End}, fleet.Thresholds{})
		if err == nil || !strings.Contains(err.Error(), "more than the digest reads") {
			t.Fatalf("Fleet = %v", err)
		}
	})
	t.Run("an answer without end", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprint(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"`)
			chunk := []byte(strings.Repeat("x", 1<<16))
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}))
		t.Cleanup(srv.Close)
		src, _ := New(srv.URL)
		start := time.Now()
		_, err := src.Fleet(t.Context(), w, fleet.Thresholds{})
		if err == nil || !strings.Contains(err.Error(), "larger than 128 MiB") {
			t.Fatalf("Fleet = %v", err)
		}
		if took := time.Since(start); took > 60*time.Second {
			t.Errorf("took %s", took)
		}
	})
}

func TestStepForFleet(t *testing.T) {
	day, week := 24*time.Hour, 7*24*time.Hour
	tests := []struct {
		d    time.Duration
		gpus float64
		want time.Duration
	}{
		{day, 1, 5 * time.Minute},
		{day, 3640, 5 * time.Minute},
		{day, 3641, 6 * time.Minute},
		{day, 10000, 14 * time.Minute},
		{week, 100, 35 * time.Minute},
		{week, 10000, 97 * time.Minute},
		{day, 1e9, day},
	}
	for _, tt := range tests {
		if got := stepForFleet(tt.d, fleet.StepFor(tt.d), tt.gpus); got != tt.want {
			t.Errorf("stepForFleet(%s, %v GPUs) = %s, want %s", tt.d, tt.gpus, got, tt.want)
		}
	}
}

// TestTenThousandGPUs reads a fleet of 10,000 GPUs: every GPU is seen, in
// buckets wide enough to keep each query within maxPointsPerQuery.
func TestTenThousandGPUs(t *testing.T) {
	if testing.Short() || raceOn {
		t.Skip("a 10,000-GPU fleet takes seconds (a minute and more under -race)")
	}
	const gpus = 10000
	srv := hostileProm(t, gpus, steady, plainLabels)
	src, err := New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	w := dt.ClusterDay().Window()
	start := time.Now()
	f, err := src.Fleet(context.Background(), w, fleet.Thresholds{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.GPUs) != gpus || f.Step != 14*time.Minute {
		t.Errorf("%d GPUs in %s buckets, want %d in 14m", len(f.GPUs), f.Step, gpus)
	}
	if n := int(w.Duration() / f.Step); n*gpus > maxPointsPerQuery {
		t.Errorf("%d buckets of %d GPUs: past %d points a query", n, gpus, maxPointsPerQuery)
	}
	t.Logf("10,000 GPUs read in %s", time.Since(start).Round(time.Millisecond))
}
