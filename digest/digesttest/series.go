// Package digesttest holds the digest's test data and test doubles: days of
// dcgm-exporter series written as the exporter and Prometheus would label
// them (built with digest/simulate, whose names it re-exports), their
// OpenMetrics text for `promtool tsdb create-blocks-from` (docs/digest.md
// §3.3), a real Prometheus loaded with them, the in-process simulation of
// the digest's range queries, and a fake Prometheus HTTP API answering from
// that simulation. It is imported by tests only.
package digesttest

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/vrambot/vrambot/digest/simulate"
)

// Series is one exported series (simulate.Series).
type Series = simulate.Series

// Day is a window of series sampled every Every (simulate.Day).
type Day = simulate.Day

// Constant, Until, Between, GPULabels, Workload, With and Memory build
// series as digest/simulate does.
var (
	Constant  = simulate.Constant
	Until     = simulate.Until
	Between   = simulate.Between
	GPULabels = simulate.GPULabels
	Workload  = simulate.Workload
	With      = simulate.With
	Memory    = simulate.Memory
)

// WriteOpenMetrics writes the days' series as OpenMetrics text: each family
// contiguous under its # TYPE line, timestamps in seconds, ending with # EOF.
func WriteOpenMetrics(w io.Writer, days ...Day) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	type daySeries struct {
		day Day
		s   Series
	}
	byMetric := map[string][]daySeries{}
	for _, d := range days {
		for _, s := range d.Series {
			byMetric[s.Metric] = append(byMetric[s.Metric], daySeries{d, s})
		}
	}
	for _, m := range slices.Sorted(maps.Keys(byMetric)) {
		fmt.Fprintf(bw, "# TYPE %s gauge\n", m)
		for _, ds := range byMetric[m] {
			ls := labelString(ds.s.Labels)
			for _, t := range ds.day.Times() {
				v, ok := ds.s.Value(t)
				if !ok {
					continue
				}
				// Seconds, not milliseconds: promtool silently accepts
				// milliseconds and lands the data in the year 56,000.
				if t.Unix() > 1e11 {
					return fmt.Errorf("timestamp %d is not in seconds", t.Unix())
				}
				fmt.Fprintf(bw, "%s{%s} %g %d\n", m, ls, v, t.Unix())
			}
		}
	}
	fmt.Fprintln(bw, "# EOF")
	return bw.Flush()
}

func labelString(l map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(l)) {
		parts = append(parts, fmt.Sprintf("%s=%q", k, l[k]))
	}
	return strings.Join(parts, ",")
}
