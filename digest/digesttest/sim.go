package digesttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vrambot/vrambot/digest/fleet"
	"github.com/vrambot/vrambot/digest/simulate"
)

// Sim answers the digest's questions from days of series without a
// Prometheus (simulate.Sim).
type Sim = simulate.Sim

// Raw is what digest/prom's seven range queries return over w.
func Raw(w fleet.Window, step time.Duration, days ...Day) fleet.Raw {
	return simulate.Raw(w, step, days...)
}

// Evaluate is fn(metric[step]) at each of ends (equally spaced by step).
func Evaluate(days []Day, fn, metric string, ends []time.Time, step time.Duration) []fleet.Series {
	return simulate.Evaluate(days, fn, metric, ends, step)
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
