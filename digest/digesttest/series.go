// Package digesttest holds the digest's test data and test doubles: days of
// dcgm-exporter series written as the exporter and Prometheus would label
// them, their OpenMetrics text for `promtool tsdb create-blocks-from`
// (docs/digest.md §3.3), a real Prometheus loaded with them, an in-process
// simulation of the digest's range queries, and a fake Prometheus HTTP API
// answering from that simulation. It is imported by tests only.
package digesttest

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/vrambot/vrambot/digest/fleet"
)

// Series is one exported series: a metric, its labels, and its value at a
// time (ok false: no sample then).
type Series struct {
	Metric string
	Labels map[string]string
	Value  func(t time.Time) (float64, bool)
}

// Day is a window of series sampled every Every, from just after Start up
// to and including End.
type Day struct {
	Start, End time.Time
	Every      time.Duration
	Series     []Series
}

// Window is the day's window.
func (d Day) Window() fleet.Window { return fleet.Window{Start: d.Start, End: d.End} }

// Times are the sample times.
func (d Day) Times() []time.Time {
	var ts []time.Time
	for t := d.Start.Add(d.Every); !t.After(d.End); t = t.Add(d.Every) {
		ts = append(ts, t)
	}
	return ts
}

// WriteOpenMetrics writes the days' series as OpenMetrics text: each family
// contiguous under its # TYPE line, timestamps in seconds, ending with # EOF.
func WriteOpenMetrics(w io.Writer, days ...Day) error {
	bw := bufio.NewWriter(w)
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

// Constant is a series value at all times.
func Constant(v float64) func(time.Time) (float64, bool) {
	return func(time.Time) (float64, bool) { return v, true }
}

// Until reports v up to and including stop, then nothing.
func Until(stop time.Time, v float64) func(time.Time) (float64, bool) {
	return func(t time.Time) (float64, bool) { return v, !t.After(stop) }
}

// Between reports v in (from, to], nothing outside.
func Between(from, to time.Time, v func(time.Time) (float64, bool)) func(time.Time) (float64, bool) {
	return func(t time.Time) (float64, bool) {
		if !t.After(from) || t.After(to) {
			return 0, false
		}
		return v(t)
	}
}

// GPULabels are the labels dcgm-exporter 4.x puts on every metric, plus
// those Prometheus adds when scraping through a ServiceMonitor.
func GPULabels(hostLabel, host, gpu, uuid, model, instance string, extra ...string) map[string]string {
	l := map[string]string{
		hostLabel: host, "gpu": gpu, "UUID": uuid, "device": "nvidia" + gpu, "modelName": model,
		"pci_bus_id": "00000000:1" + gpu + ":00.0", "DCGM_FI_DRIVER_VERSION": "550.54.15",
		"instance": instance, "job": "nvidia-dcgm-exporter",
		"namespace": "gpu-operator", "pod": "nvidia-dcgm-exporter-" + host[len(host)-1:],
	}
	for i := 0; i+1 < len(extra); i += 2 {
		l[extra[i]] = extra[i+1]
	}
	return l
}

// Workload is the exported_* labels of a pod's container, as a ServiceMonitor
// with honorLabels: false renames them.
func Workload(ns, pod, container string) []string {
	return []string{"exported_namespace", ns, "exported_pod", pod, "exported_container", container}
}

// With returns a copy of l with the extra name/value pairs set.
func With(l map[string]string, extra ...string) map[string]string {
	out := maps.Clone(l)
	for i := 0; i+1 < len(extra); i += 2 {
		out[extra[i]] = extra[i+1]
	}
	return out
}

// Memory returns USED, FREE and (unless withoutReserved) RESERVED series
// of one label set adding up to totalMiB whenever used has a sample.
func Memory(l map[string]string, totalMiB, reservedMiB float64, used func(time.Time) (float64, bool), withoutReserved bool) []Series {
	free := func(t time.Time) (float64, bool) {
		u, ok := used(t)
		return totalMiB - reservedMiB - u, ok
	}
	out := []Series{
		{fleet.MetricFBUsed, l, used},
		{fleet.MetricFBFree, l, free},
	}
	if !withoutReserved {
		res := func(t time.Time) (float64, bool) { _, ok := used(t); return reservedMiB, ok }
		out = append(out, Series{fleet.MetricFBReserved, l, res})
	}
	return out
}
