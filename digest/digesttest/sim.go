package digesttest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vrambot/vrambot/digest/fleet"
)

// Sim answers the digest's questions from days of series without a
// Prometheus, reducing each bucket as the range queries of digest/prom do.
type Sim struct{ Days []Day }

// Fleet implements the digest's Metrics.
func (s Sim) Fleet(_ context.Context, w fleet.Window, th fleet.Thresholds) (fleet.Fleet, error) {
	if err := w.Validate(); err != nil {
		return fleet.Fleet{}, err
	}
	step := fleet.StepFor(w.Duration())
	return fleet.Analyze(w, step, th, Raw(w, step, s.Days...)), nil
}

// Raw is what digest/prom's seven range queries return over w.
func Raw(w fleet.Window, step time.Duration, days ...Day) fleet.Raw {
	n := w.Buckets(step)
	ends := make([]time.Time, n)
	for i := range ends {
		ends[i] = w.BucketEnd(i, n, step)
	}
	q := func(fn, metric string) []fleet.Series { return Evaluate(days, fn, metric, ends, step) }
	return fleet.Raw{
		UsedMax:  q("max_over_time", fleet.MetricFBUsed),
		UsedAvg:  q("avg_over_time", fleet.MetricFBUsed),
		UsedMin:  q("min_over_time", fleet.MetricFBUsed),
		Free:     q("avg_over_time", fleet.MetricFBFree),
		Reserved: q("avg_over_time", fleet.MetricFBReserved),
		Engine:   q("avg_over_time", fleet.MetricEngineActive),
		Util:     q("avg_over_time", fleet.MetricGPUUtil),
	}
}

// Evaluate is fn(metric[step]) at each of ends (equally spaced by step):
// each point reduces the samples in (end-step, end].
func Evaluate(days []Day, fn, metric string, ends []time.Time, step time.Duration) []fleet.Series {
	if len(ends) == 0 {
		return nil
	}
	var out []fleet.Series
	for _, d := range days {
		for _, s := range d.Series {
			if s.Metric != metric {
				continue
			}
			vals := make([][]float64, len(ends))
			for _, t := range d.Times() {
				v, ok := s.Value(t)
				if !ok {
					continue
				}
				x := t.Sub(ends[0])
				k := int(x / step)
				if x > time.Duration(k)*step {
					k++
				}
				if k >= 0 && k < len(ends) {
					vals[k] = append(vals[k], v)
				}
			}
			var pts []fleet.Point
			for k, vs := range vals {
				if len(vs) > 0 {
					pts = append(pts, fleet.Point{T: ends[k], V: reduce(fn, vs)})
				}
			}
			if len(pts) > 0 {
				out = append(out, fleet.Series{Labels: s.Labels, Points: pts})
			}
		}
	}
	return out
}

func reduce(fn string, vs []float64) float64 {
	switch fn {
	case "max_over_time":
		return slices.Max(vs)
	case "min_over_time":
		return slices.Min(vs)
	}
	sum := 0.0
	for _, v := range vs {
		sum += v
	}
	return sum / float64(len(vs))
}

// FakePrometheus serves Prometheus' range-query API from the days: it
// understands the digest's queries, fn(METRIC[range]), and answers the
// matrix Sim would compute, in Prometheus 2.x's JSON (docs/digest.md §3.1).
func FakePrometheus(tb testing.TB, days ...Day) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.URL.Path != "/api/v1/query_range" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		fn, metric, ok := parseQuery(r.Form.Get("query"))
		start, err1 := strconv.ParseFloat(r.Form.Get("start"), 64)
		end, err2 := strconv.ParseFloat(r.Form.Get("end"), 64)
		stepS, err3 := strconv.ParseFloat(r.Form.Get("step"), 64)
		if !ok || err1 != nil || err2 != nil || err3 != nil || stepS <= 0 || end < start {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"status":"error","errorType":"bad_data","error":"fake prometheus: unsupported query"}`)
			return
		}
		step := time.Duration(stepS * float64(time.Second))
		var ends []time.Time
		for t := unix(start); !t.After(unix(end)); t = t.Add(step) {
			ends = append(ends, t)
		}
		type stream struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		}
		result := []stream{}
		for _, s := range Evaluate(days, fn, metric, ends, step) {
			st := stream{Metric: s.Labels}
			for _, p := range s.Points {
				st.Values = append(st.Values, [2]any{float64(p.T.UnixMilli()) / 1000, strconv.FormatFloat(p.V, 'f', -1, 64)})
			}
			result = append(result, st)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "matrix", "result": result}})
	}))
	tb.Cleanup(srv.Close)
	return srv
}

func unix(s float64) time.Time {
	return time.UnixMilli(int64(s * 1000)).UTC()
}

// parseQuery reads "fn(METRIC[range])".
func parseQuery(q string) (fn, metric string, ok bool) {
	fn, rest, ok := strings.Cut(q, "(")
	if !ok {
		return "", "", false
	}
	metric, _, ok = strings.Cut(rest, "[")
	return fn, metric, ok && metric != ""
}
