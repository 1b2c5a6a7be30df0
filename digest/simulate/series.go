// Package simulate makes days of dcgm-exporter series without a GPU: series
// written as the exporter and Prometheus would label them, and an
// in-process evaluation of the digest's range queries over them (Sim), so a
// digest can be composed with no Prometheus at all. `vrambot digest --demo`
// runs on it (digest/demo), and so do the tests (digest/digesttest, which
// adds OpenMetrics text, a real and a fake Prometheus).
package simulate

import (
	"maps"
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

// At is the time h hours and m minutes after start.
func At(start time.Time, h, m int) time.Time {
	return start.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
}
