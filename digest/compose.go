package digest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
)

// GPUPricer prices an idle GPU-hour by the DCGM modelName
// ("NVIDIA A100-SXM4-80GB"); ok is false when no price is known.
type GPUPricer interface {
	PricePerGPUHour(gpuModelName string) (usd float64, source string, ok bool)
}

// EventSource is where the digest reads OOM events from (*EventLog).
type EventSource interface {
	Since(ctx context.Context, t time.Time) ([]OOMEvent, error)
}

var _ EventSource = (*EventLog)(nil)

// Inputs are what a digest is composed from. Nil sources are "not
// configured" and are named in the digest's data quality, never an error.
type Inputs struct {
	Window     Window
	Metrics    Metrics
	Events     EventSource
	Pricer     GPUPricer
	Thresholds Thresholds
}

// Display limits: enough to act on, short enough to read in Slack.
const (
	maxNearOOM     = 10
	maxIdleHolding = 10
	maxConsumers   = 5
	maxThreads     = 50
	maxChartSeries = 8
	maxSuggestions = 3
)

// Prometheus and event-log states in DataQuality.
const (
	StatusOK            = "ok"
	StatusNotConfigured = "not_configured"
	StatusUnreachable   = "unreachable"
	StatusQueryFailed   = "query_failed"
	StatusUnavailable   = "unavailable"
)

// Digest is the composed digest; its JSON is `vrambot digest --json`
// (DESIGN.md §3.3).
type Digest struct {
	Window       WindowInfo    `json:"window"`
	GPUsSeen     int           `json:"gpus_seen"`
	Fleet        FleetSummary  `json:"fleet"`
	NearOOM      []NearOOM     `json:"near_oom"`
	IdleHolding  []IdleHolding `json:"idle_holding"`
	TopConsumers []Consumer    `json:"top_consumers"`
	OOMEvents    OOMSummary    `json:"oom_events"`
	Suggestions  []string      `json:"suggestions"`
	DataQuality  DataQuality   `json:"data_quality"`
	// Chart holds the memory-ratio series of the GPUs worth drawing (the top
	// ones by peak); it is not part of the JSON.
	Chart []Series `json:"-"`
}

// WindowInfo is the covered interval; Duration is like "24h".
type WindowInfo struct {
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	Duration string    `json:"duration"`
}

// FleetSummary are the headline numbers.
type FleetSummary struct {
	PeakUsedRatio  float64  `json:"peak_used_ratio"`
	AvgUsedRatio   float64  `json:"avg_used_ratio"`
	MemoryGiBHours float64  `json:"memory_gib_hours"`
	IdleGPUHours   float64  `json:"idle_gpu_hours"`
	IdleUSD        *float64 `json:"idle_usd"` // nil when no idle GPU has a price
}

// GPURef names a GPU or MIG instance in the JSON.
type GPURef struct {
	Host        string `json:"host"`
	GPU         string `json:"gpu"`
	UUID        string `json:"uuid"`
	Model       string `json:"model,omitempty"`
	MIGProfile  string `json:"mig_profile,omitempty"`
	MIGInstance string `json:"mig_instance,omitempty"`
}

// NearOOM is a GPU that ran at or above the near-OOM ratio.
type NearOOM struct {
	GPURef
	PeakUsedRatio float64 `json:"peak_used_ratio"`
	HoursAbove95  float64 `json:"hours_above_95"`
	PeakUsedBytes int64   `json:"peak_used_bytes"`
	TotalBytes    int64   `json:"total_bytes"`
	Owner         string  `json:"owner,omitempty"`
}

// IdleHolding is a GPU that sat idle while holding memory.
type IdleHolding struct {
	GPURef
	IdleHours       float64  `json:"idle_hours"`
	MemoryHeldBytes int64    `json:"memory_held_bytes"`
	Owner           string   `json:"owner,omitempty"`
	GPUHours        float64  `json:"gpu_hours"` // idle hours times the share of the GPU (MIG)
	USD             *float64 `json:"usd"`
	PriceSource     string   `json:"price_source,omitempty"`
}

// Consumer is a namespace (or Slurm job, or a host where no owner is known)
// and the GPU memory it used.
type Consumer struct {
	Name           string  `json:"name"`
	Kind           string  `json:"kind"` // "namespace", "pod", "job", "host"
	GPUs           int     `json:"gpus"`
	MemoryGiBHours float64 `json:"memory_gib_hours"`
}

// OOMSummary counts the OOMs pasted in Slack during the window.
type OOMSummary struct {
	Total    int            `json:"total"`
	ByFormat map[string]int `json:"by_format"`
	ByCause  map[string]int `json:"by_cause"`
	Threads  []OOMThread    `json:"threads"`
}

// OOMThread links one OOM's Slack thread; no pasted text.
type OOMThread struct {
	At         time.Time `json:"at"`
	Channel    string    `json:"channel"`
	ThreadTS   string    `json:"thread_ts,omitempty"`
	Permalink  string    `json:"permalink,omitempty"`
	Framework  string    `json:"framework,omitempty"`
	Format     string    `json:"format,omitempty"`
	Cause      string    `json:"cause,omitempty"`
	Device     string    `json:"device,omitempty"`
	TriedBytes *int64    `json:"tried_to_allocate_bytes"`
}

// DataQuality says what the digest could not see.
type DataQuality struct {
	Prometheus       string    `json:"prometheus"` // ok, not_configured, unreachable, query_failed
	PrometheusError  string    `json:"prometheus_error,omitempty"`
	OOMLog           string    `json:"oom_log"` // ok, not_configured, unavailable
	OOMLogError      string    `json:"oom_log_error,omitempty"`
	Step             string    `json:"step,omitempty"`
	MissingMetrics   []string  `json:"missing_metrics"`
	StoppedReporting []Stopped `json:"stopped_reporting"`
	Labels           []string  `json:"labels"`
}

// Stopped is a GPU whose samples end well before the window does.
type Stopped struct {
	GPURef
	LastSeen time.Time `json:"last_seen"`
}

// Series is one line of the chart.
type Series struct {
	Name   string
	Points []Point
}

// Compose builds the digest for in.Window. Missing or failing sources are
// reported in DataQuality; only an unusable window is an error.
func Compose(ctx context.Context, in Inputs) (Digest, error) {
	w := in.Window
	if err := w.validate(); err != nil {
		return Digest{}, err
	}
	th := in.Thresholds.withDefaults()
	d := Digest{
		Window:       WindowInfo{Start: w.Start, End: w.End, Duration: formatDuration(w.Duration())},
		NearOOM:      []NearOOM{},
		IdleHolding:  []IdleHolding{},
		TopConsumers: []Consumer{},
		OOMEvents:    OOMSummary{ByFormat: map[string]int{}, ByCause: map[string]int{}, Threads: []OOMThread{}},
		Suggestions:  []string{},
		DataQuality:  DataQuality{MissingMetrics: []string{}, StoppedReporting: []Stopped{}, Labels: []string{}},
	}

	var fleet Fleet
	switch {
	case in.Metrics == nil:
		d.DataQuality.Prometheus = StatusNotConfigured
	default:
		f, err := in.Metrics.Fleet(ctx, w, th)
		if err != nil {
			d.DataQuality.Prometheus = StatusUnreachable
			var apiErr *v1.Error
			if errors.As(err, &apiErr) && apiErr.Type != v1.ErrTimeout && apiErr.Type != v1.ErrCanceled && apiErr.Type != v1.ErrServer {
				d.DataQuality.Prometheus = StatusQueryFailed
			}
			d.DataQuality.PrometheusError = err.Error()
			break
		}
		fleet = f
		d.DataQuality.Prometheus = StatusOK
		d.DataQuality.Step = formatDuration(f.Step)
		d.DataQuality.MissingMetrics = append(d.DataQuality.MissingMetrics, f.Missing...)
		d.DataQuality.Labels = append(d.DataQuality.Labels, f.Labels...)
	}
	d.addGPUs(fleet, w, th, in.Pricer)

	switch {
	case in.Events == nil:
		d.DataQuality.OOMLog = StatusNotConfigured
	default:
		events, err := in.Events.Since(ctx, w.Start)
		if err != nil {
			d.DataQuality.OOMLog = StatusUnavailable
			d.DataQuality.OOMLogError = err.Error()
			break
		}
		d.DataQuality.OOMLog = StatusOK
		d.addEvents(events, w)
	}
	d.Suggestions = suggest(d, fleet)
	return d, nil
}

func (d *Digest) addGPUs(f Fleet, w Window, th Thresholds, pricer GPUPricer) {
	d.GPUsSeen = len(f.GPUs)
	var ratioSum float64
	ratioN := 0
	var idleUSD float64
	priced := false
	consumers := map[string]*consumerAcc{}
	for _, g := range f.GPUs {
		ref := GPURef{Host: g.Host, GPU: g.GPU, UUID: g.UUID, Model: g.Model, MIGProfile: g.MIGProfile, MIGInstance: g.MIGInstance}
		d.Fleet.PeakUsedRatio = max(d.Fleet.PeakUsedRatio, g.PeakUsedRatio)
		if g.TotalBytes > 0 {
			ratioSum += g.AvgUsedRatio
			ratioN++
		}
		d.Fleet.MemoryGiBHours += g.GiBHours
		if g.TotalBytes > 0 && g.PeakUsedRatio >= th.NearOOMRatio {
			d.NearOOM = append(d.NearOOM, NearOOM{
				GPURef: ref, PeakUsedRatio: round(g.PeakUsedRatio, 3), HoursAbove95: round(g.HoursAbove, 2),
				PeakUsedBytes: g.PeakUsedBytes, TotalBytes: g.TotalBytes, Owner: g.Owner.String(),
			})
		}
		if g.IdleHours >= th.MinIdleHours {
			ih := IdleHolding{
				GPURef: ref, IdleHours: round(g.IdleHours, 2), MemoryHeldBytes: g.IdleHeldBytes,
				Owner: g.IdleOwner.String(), GPUHours: round(g.IdleHours*migShare(g.MIGProfile, g.Model), 2),
			}
			if pricer != nil {
				if usd, src, ok := pricer.PricePerGPUHour(g.Model); ok {
					v := round(ih.GPUHours*usd, 2)
					ih.USD, ih.PriceSource = &v, src
					idleUSD += v
					priced = true
				}
			}
			d.Fleet.IdleGPUHours += ih.GPUHours
			d.IdleHolding = append(d.IdleHolding, ih)
		}
		if g.Stopped(w, f.Step) {
			d.DataQuality.StoppedReporting = append(d.DataQuality.StoppedReporting, Stopped{GPURef: ref, LastSeen: g.LastSeen})
		}
		addConsumers(consumers, g)
	}
	if ratioN > 0 {
		d.Fleet.AvgUsedRatio = round(ratioSum/float64(ratioN), 3)
	}
	d.Fleet.PeakUsedRatio = round(d.Fleet.PeakUsedRatio, 3)
	d.Fleet.MemoryGiBHours = round(d.Fleet.MemoryGiBHours, 1)
	d.Fleet.IdleGPUHours = round(d.Fleet.IdleGPUHours, 2)
	if priced {
		v := round(idleUSD, 2)
		d.Fleet.IdleUSD = &v
	}
	sort.SliceStable(d.NearOOM, func(i, j int) bool {
		a, b := d.NearOOM[i], d.NearOOM[j]
		if a.HoursAbove95 != b.HoursAbove95 {
			return a.HoursAbove95 > b.HoursAbove95
		}
		return a.PeakUsedRatio > b.PeakUsedRatio
	})
	sort.SliceStable(d.IdleHolding, func(i, j int) bool {
		a, b := d.IdleHolding[i], d.IdleHolding[j]
		if a.GPUHours != b.GPUHours {
			return a.GPUHours > b.GPUHours
		}
		return a.MemoryHeldBytes > b.MemoryHeldBytes
	})
	d.NearOOM = d.NearOOM[:min(len(d.NearOOM), maxNearOOM)]
	d.IdleHolding = d.IdleHolding[:min(len(d.IdleHolding), maxIdleHolding)]
	d.TopConsumers = topConsumers(consumers)
	d.Chart = chartSeries(f.GPUs)
}

type consumerAcc struct {
	Consumer
	gpus map[GPUKey]bool
}

// addConsumers books g's memory to its owners' namespaces (or jobs); memory
// no owner is known for is booked to the host, so bare-metal fleets still
// get a ranking.
func addConsumers(acc map[string]*consumerAcc, g GPUStats) {
	book := func(name, kind string, gib float64) {
		if gib <= 0 {
			return
		}
		k := kind + "\x00" + name
		c := acc[k]
		if c == nil {
			c = &consumerAcc{Consumer: Consumer{Name: name, Kind: kind}, gpus: map[GPUKey]bool{}}
			acc[k] = c
		}
		c.MemoryGiBHours += gib
		c.gpus[g.GPUKey] = true
	}
	owned := 0.0
	for _, u := range g.Usage {
		switch {
		case u.Owner.Namespace != "":
			book(u.Owner.Namespace, "namespace", u.GiBHours)
		case u.Owner.Pod != "":
			book(u.Owner.Pod, "pod", u.GiBHours)
		default:
			book(u.Owner.Job, "job", u.GiBHours)
		}
		owned += u.GiBHours
	}
	book(g.Host, "host", g.GiBHours-owned)
}

func topConsumers(acc map[string]*consumerAcc) []Consumer {
	out := []Consumer{}
	for _, c := range acc {
		c.GPUs = len(c.gpus)
		c.MemoryGiBHours = round(c.MemoryGiBHours, 1)
		if c.MemoryGiBHours > 0 {
			out = append(out, c.Consumer)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].MemoryGiBHours != out[j].MemoryGiBHours {
			return out[i].MemoryGiBHours > out[j].MemoryGiBHours
		}
		return out[i].Name < out[j].Name
	})
	return out[:min(len(out), maxConsumers)]
}

// chartSeries picks the GPUs worth drawing: the highest peaks first.
func chartSeries(gpus []GPUStats) []Series {
	idx := make([]int, 0, len(gpus))
	for i, g := range gpus {
		if len(g.Ratio) > 0 {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return gpus[idx[a]].PeakUsedRatio > gpus[idx[b]].PeakUsedRatio })
	var out []Series
	for _, i := range idx[:min(len(idx), maxChartSeries)] {
		out = append(out, Series{Name: gpus[i].Name(), Points: gpus[i].Ratio})
	}
	return out
}

func (d *Digest) addEvents(events []OOMEvent, w Window) {
	for _, e := range events {
		if e.At.Before(w.Start) || !e.At.Before(w.End) {
			continue
		}
		d.OOMEvents.Total++
		d.OOMEvents.ByFormat[orUnknown(e.Format)]++
		d.OOMEvents.ByCause[orUnknown(e.Cause)]++
		if len(d.OOMEvents.Threads) < maxThreads {
			d.OOMEvents.Threads = append(d.OOMEvents.Threads, OOMThread{
				At: e.At.In(w.End.Location()), Channel: e.Channel, ThreadTS: e.ThreadTS, Permalink: e.Permalink,
				Framework: e.Framework, Format: e.Format, Cause: e.Cause, Device: e.Device, TriedBytes: e.TriedBytes,
			})
		}
	}
	sort.SliceStable(d.OOMEvents.Threads, func(i, j int) bool { return d.OOMEvents.Threads[i].At.Before(d.OOMEvents.Threads[j].At) })
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// suggest derives at most three concrete actions from the findings, the
// most urgent first: a job about to OOM, money burnt by idle GPUs, the
// commonest OOM cause, then blind spots in the data.
func suggest(d Digest, f Fleet) []string {
	out := []string{}
	if len(d.NearOOM) > 0 {
		n := d.NearOOM[0]
		who := n.Owner
		if who == "" {
			who = "the job"
		}
		out = append(out, fmt.Sprintf("%s on %s spent %s at or above 95%% memory (peak %s of %s): cut the micro-batch and add gradient accumulation, or set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`, before it OOMs.",
			who, refName(n.GPURef), formatHours(n.HoursAbove95), formatBytes(n.PeakUsedBytes), formatBytes(n.TotalBytes)))
	}
	if len(d.IdleHolding) > 0 {
		ih := d.IdleHolding[0]
		who := ih.Owner
		if who == "" {
			who = "whatever holds it"
		}
		cost := ""
		if ih.USD != nil {
			cost = fmt.Sprintf(", about %s", formatUSD(*ih.USD))
		}
		s := fmt.Sprintf("Stop or scale down %s: idle %s on %s while holding %s%s.", who, formatHours(ih.IdleHours), refName(ih.GPURef), formatBytes(ih.MemoryHeldBytes), cost)
		if notebooks := countNotebooks(d.IdleHolding); notebooks > 1 {
			s += fmt.Sprintf(" %d idle notebooks hold GPUs: an idle culler (e.g. JupyterHub's cull-idle) would free them.", notebooks)
		}
		out = append(out, s)
	}
	if cause, n := topCause(d.OOMEvents.ByCause); n > 0 {
		s := fmt.Sprintf("%d of the %s pasted in Slack had cause `%s`: see the linked threads for the staged fixes.", n, plural(d.OOMEvents.Total, "OOM"), cause)
		if strings.Contains(cause, "frag") {
			s = fmt.Sprintf("%d of the %s pasted in Slack were fragmentation: make `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` the default in the team's launch scripts.", n, plural(d.OOMEvents.Total, "OOM"))
		}
		out = append(out, s)
	}
	if len(d.DataQuality.StoppedReporting) > 0 {
		s := d.DataQuality.StoppedReporting[0]
		out = append(out, fmt.Sprintf("Check dcgm-exporter on %s: no samples since %s.", s.Host, s.LastSeen.In(d.Window.End.Location()).Format("Mon 15:04")))
	}
	return out[:min(len(out), maxSuggestions)]
}

func countNotebooks(ih []IdleHolding) int {
	n := 0
	for _, h := range ih {
		o := strings.ToLower(h.Owner)
		if strings.Contains(o, "jupyter") || strings.Contains(o, "notebook") {
			n++
		}
	}
	return n
}

// topCause is the commonest known cause (ties: alphabetical).
func topCause(byCause map[string]int) (string, int) {
	best, bestN := "", 0
	for _, c := range sortedKeys(byCause) {
		if c != "unknown" && byCause[c] > bestN {
			best, bestN = c, byCause[c]
		}
	}
	return best, bestN
}

func refName(r GPURef) string {
	return GPUStats{GPUKey: GPUKey{Host: r.Host, GPU: r.GPU, MIGInstance: r.MIGInstance}, MIGProfile: r.MIGProfile}.Name()
}

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}
