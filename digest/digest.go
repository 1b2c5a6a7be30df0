// Package digest composes the cluster GPU-memory digest (docs/digest.md §6): the
// facts digest/fleet derives from dcgm-exporter series, the OOMs the bot saw
// in Slack (EventLog) and GPU-hour prices become a Digest: its JSON is
// `vrambot digest --json` (docs/contracts.md §3), Reply and ThreadReplies its
// Slack messages, ChartPNG its chart (digest/chart).
//
// The sources are small interfaces declared here; digest/prom reads
// Prometheus, digest/schedule posts on a cron schedule exactly once across
// replicas.
package digest

import (
	"context"
	"math"
	"sort"
	"time"

	"github.com/vrambot/vrambot/digest/chart"
	"github.com/vrambot/vrambot/digest/fleet"
	"github.com/vrambot/vrambot/feedback"
	"github.com/vrambot/vrambot/internal/errs"
)

// Metrics is where per-GPU facts come from: digest/prom's Source in
// production. A nil Metrics in Inputs means "Prometheus not configured".
// Errors carry a kind (internal/errs): Unavailable when the source could
// not be reached, anything else when it answered but failed.
type Metrics interface {
	Fleet(ctx context.Context, w fleet.Window, th fleet.Thresholds) (fleet.Fleet, error)
}

// Pricer prices a GPU-hour by the DCGM modelName ("NVIDIA A100-SXM4-80GB")
// or, for right-sizing's candidates, the catalog's name ("L40S", "A100
// 40GB"); ok is false when no price is known. provenance says where the
// price came from, in words.
type Pricer interface {
	PricePerGPUHour(ctx context.Context, dcgmModelName string) (usdPerGPUHour float64, provenance string, ok bool)
}

// EventSource is where the digest reads OOM events from (*EventLog).
type EventSource interface {
	Since(ctx context.Context, t time.Time) ([]OOMEvent, error)
}

var _ EventSource = (*EventLog)(nil)

// Inputs are what a digest is composed from. Nil sources are "not
// configured" and are named in the digest's data quality, never an error.
type Inputs struct {
	Window     fleet.Window
	Metrics    Metrics
	Events     EventSource
	Pricer     Pricer
	Feedback   FeedbackSource
	Thresholds fleet.Thresholds
	// Demo marks metrics that are a simulated day (`vrambot digest --demo`):
	// the digest says so in its title and footer.
	Demo bool
}

// FeedbackSource is where the digest reads the 👍/👎 people gave the bot's
// answers in the window (*feedback.Log).
type FeedbackSource interface {
	Since(ctx context.Context, t time.Time) (feedback.Counts, error)
}

// Display limits: enough to act on, short enough to read in Slack.
const (
	maxNearOOM     = 10
	maxIdleHolding = 10
	maxServingIdle = 10
	maxJobs        = 50
	maxConsumers   = 5
	maxThreads     = 50
	maxSuggestions = 3
)

// mostlyIdle is the share of its held GPU-hours a serving job must spend
// idle to be listed as "serving, mostly idle".
const mostlyIdle = 0.5

// Prometheus and event-log states in DataQuality.
const (
	StatusOK            = "ok"
	StatusNotConfigured = "not_configured"
	StatusUnreachable   = "unreachable"
	StatusQueryFailed   = "query_failed"
	StatusUnavailable   = "unavailable"
)

// Digest is the composed digest; its JSON is `vrambot digest --json`
// (docs/contracts.md §3).
type Digest struct {
	// Demo is true for the digest of a simulated day (digest/demo).
	Demo     bool         `json:"demo,omitempty"`
	Window   WindowInfo   `json:"window"`
	GPUsSeen int          `json:"gpus_seen"`
	Fleet    FleetSummary `json:"fleet"`
	// NearOOMRatio is the used/capacity ratio from which a GPU is near OOM.
	NearOOMRatio float64       `json:"near_oom_ratio"`
	NearOOM      []NearOOM     `json:"near_oom"`
	IdleHolding  []IdleHolding `json:"idle_holding"`
	// NearOOMJobs and IdleJobs are near_oom and idle_holding one entry per
	// job, as the text shows them (docs/digest.md §9).
	NearOOMJobs []NearOOMJob `json:"near_oom_jobs"`
	IdleJobs    []IdleJob    `json:"idle_holding_jobs"`
	// ServingIdle are serving jobs idle most of the time they held their
	// GPUs: memory held by design, listed apart from idle_holding.
	ServingIdle []ServingIdle `json:"serving_mostly_idle"`
	Jobs        []Job         `json:"jobs"`
	// RightSize are jobs a smaller GPU would hold for less money
	// (docs/digest.md §8), the largest saving first.
	RightSize    []RightSize `json:"right_size"`
	TopConsumers []Consumer  `json:"top_consumers"`
	OOMEvents    OOMSummary  `json:"oom_events"`
	// Feedback counts the 👍/👎 on the bot's answers in the window; nil
	// when no vote log is configured or it could not be read.
	Feedback    *feedback.Counts `json:"feedback,omitempty"`
	Suggestions []string         `json:"suggestions"`
	DataQuality DataQuality      `json:"data_quality"`

	// chart is what ChartPNG draws; not part of the JSON.
	chart chart.Input
}

// WindowInfo is the covered interval; Duration is like "24h" or "7d".
type WindowInfo struct {
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	Duration string    `json:"duration"`
}

// FleetSummary are the headline numbers.
type FleetSummary struct {
	PeakUsedRatio  float64 `json:"peak_used_ratio"`
	AvgUsedRatio   float64 `json:"avg_used_ratio"`
	MemoryGiBHours float64 `json:"memory_gib_hours"`
	// IdleGPUHours and IdleUSD cover idle_holding (serving excluded).
	IdleGPUHours float64  `json:"idle_gpu_hours"`
	IdleUSD      *float64 `json:"idle_usd"` // nil when no idle GPU has a price
	// ServingIdleGPUHours and ServingIdleUSD cover serving_mostly_idle.
	ServingIdleGPUHours float64  `json:"serving_idle_gpu_hours"`
	ServingIdleUSD      *float64 `json:"serving_idle_usd"`
	Restarts            int      `json:"restarts"`
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

// Name is how the GPU is shown.
func (r GPURef) Name() string { return fleet.GPUName(r.Host, r.GPU, r.MIGInstance, r.MIGProfile) }

func refOf(g fleet.GPU) GPURef {
	return GPURef{Host: g.Host, GPU: g.Index, UUID: g.Key.UUID, Model: g.Model, MIGProfile: g.MIGProfile, MIGInstance: g.Key.MIGInstance}
}

// NearOOM is a GPU that ran at or above the near-OOM ratio.
type NearOOM struct {
	GPURef
	PeakUsedRatio float64   `json:"peak_used_ratio"`
	HoursAbove95  float64   `json:"hours_above_95"`
	PeakUsedBytes int64     `json:"peak_used_bytes"`
	CapacityBytes int64     `json:"capacity_bytes"`
	TotalBytes    int64     `json:"total_bytes"` // = capacity_bytes, kept for earlier readers
	PeakAt        time.Time `json:"peak_at"`
	// Owner is namespace/pod at the time of the peak, Job the job it
	// belongs to (see jobs[]).
	Owner string `json:"owner,omitempty"`
	Job   string `json:"job,omitempty"`
	// Restarts of the owner's job in the window (it may already have crashed).
	Restarts int `json:"restarts"`
}

// IdleHolding is a GPU an owner (not a serving engine) held memory on while idle.
type IdleHolding struct {
	GPURef
	IdleHours       float64  `json:"idle_hours"`
	MemoryHeldBytes int64    `json:"memory_held_bytes"`
	Owner           string   `json:"owner,omitempty"`
	Job             string   `json:"job,omitempty"`
	Kind            string   `json:"kind"` // the owner's job kind
	GPUHours        float64  `json:"gpu_hours"`
	USD             *float64 `json:"usd"`
	PriceSource     string   `json:"price_source,omitempty"`
}

// ServingIdle is a serving job idle most of the time it held its GPUs.
type ServingIdle struct {
	Name         string   `json:"name"`
	Namespace    string   `json:"namespace"`
	Pod          string   `json:"pod"`
	GPUs         int      `json:"gpus"`
	GPUHours     float64  `json:"gpu_hours"`
	IdleGPUHours float64  `json:"idle_gpu_hours"`
	IdleShare    float64  `json:"idle_share"`
	USD          *float64 `json:"usd"` // the idle GPU-hours' cost
	PriceSource  string   `json:"price_source,omitempty"`
}

// Job is one owner's GPUs over the window (docs/contracts.md §3, turn 2).
type Job struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// Pod is the job's pod; empty when several pods make the job (Pods).
	Pod           string   `json:"pod"`
	Pods          []string `json:"pods,omitempty"`
	Workload      string   `json:"workload,omitempty"`
	Kind          string   `json:"kind"` // training, serving, notebook, unknown
	KindReason    string   `json:"kind_reason"`
	GPUs          int      `json:"gpus"`
	GPUNames      []string `json:"gpu_names"`
	PeakUsedRatio float64  `json:"peak_used_ratio"`
	// PeakUsedBytes of CapacityBytes were held on PeakGPU at PeakAt.
	PeakUsedBytes int64       `json:"peak_used_bytes"`
	CapacityBytes int64       `json:"capacity_bytes"`
	PeakGPU       string      `json:"peak_gpu,omitempty"`
	PeakAt        *time.Time  `json:"peak_at,omitempty"`
	HoursAbove95  float64     `json:"hours_above_95"`
	Restarts      int         `json:"restarts"`
	RestartTimes  []time.Time `json:"restart_times"`
	GPUHours      float64     `json:"gpu_hours"`
	IdleGPUHours  float64     `json:"idle_gpu_hours"`
	// Activity is its mean engine activity (0..1) while holding memory;
	// null when no activity metric was reported.
	Activity *float64 `json:"activity"`
	// CostUSD prices GPUHours; nil when some GPU model has no price.
	CostUSD        *float64 `json:"cost_usd"`
	PriceSource    string   `json:"price_source,omitempty"`
	MemoryGiBHours float64  `json:"memory_gib_hours"`
	// OOMs are the OOMs pasted in Slack matched with the job's restarts.
	OOMs []MatchedOOM `json:"ooms,omitempty"`
}

// MatchedOOM is an OOM pasted in Slack and the restart it was matched with.
type MatchedOOM struct {
	At        time.Time `json:"at"`
	Channel   string    `json:"channel"`
	Permalink string    `json:"permalink,omitempty"`
	RestartAt time.Time `json:"restart_at"`
	GPU       string    `json:"gpu"`
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
	// Job and GPU are set when the OOM was matched with a restart.
	Job string `json:"job,omitempty"`
	GPU string `json:"gpu,omitempty"`
}

// DataQuality says what the digest could not see.
type DataQuality struct {
	Prometheus       string    `json:"prometheus"` // ok, not_configured, unreachable, query_failed
	PrometheusError  string    `json:"prometheus_error,omitempty"`
	OOMLog           string    `json:"oom_log"` // ok, not_configured, unavailable
	OOMLogError      string    `json:"oom_log_error,omitempty"`
	FeedbackLog      string    `json:"feedback_log,omitempty"` // ok, unavailable; empty when not configured
	FeedbackLogError string    `json:"feedback_log_error,omitempty"`
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

// Compose builds the digest for in.Window. Missing or failing sources are
// reported in DataQuality; only an unusable window is an error (Invalid).
func Compose(ctx context.Context, in Inputs) (Digest, error) {
	w := in.Window
	if err := w.Validate(); err != nil {
		return Digest{}, err
	}
	th := in.Thresholds.WithDefaults()
	d := Digest{
		Demo:         in.Demo,
		Window:       WindowInfo{Start: w.Start, End: w.End, Duration: FormatWindow(w.Duration())},
		NearOOM:      []NearOOM{},
		IdleHolding:  []IdleHolding{},
		NearOOMJobs:  []NearOOMJob{},
		IdleJobs:     []IdleJob{},
		ServingIdle:  []ServingIdle{},
		Jobs:         []Job{},
		RightSize:    []RightSize{},
		TopConsumers: []Consumer{},
		OOMEvents:    OOMSummary{ByFormat: map[string]int{}, ByCause: map[string]int{}, Threads: []OOMThread{}},
		Suggestions:  []string{},
		DataQuality:  DataQuality{MissingMetrics: []string{}, StoppedReporting: []Stopped{}, Labels: []string{}},
	}

	var f fleet.Fleet
	switch {
	case in.Metrics == nil:
		d.DataQuality.Prometheus = StatusNotConfigured
	default:
		got, err := in.Metrics.Fleet(ctx, w, th)
		if err != nil {
			d.DataQuality.Prometheus = StatusQueryFailed
			if errs.Is(err, errs.Unavailable) {
				d.DataQuality.Prometheus = StatusUnreachable
			}
			d.DataQuality.PrometheusError = err.Error()
			break
		}
		f = got
		d.DataQuality.Prometheus = StatusOK
		d.DataQuality.Step = FormatWindow(f.Step)
		d.DataQuality.MissingMetrics = append(d.DataQuality.MissingMetrics, f.Missing...)
		d.DataQuality.Labels = append(d.DataQuality.Labels, f.Labels...)
	}
	prices := newPriceCache(ctx, in.Pricer, w.End)
	d.NearOOMRatio = th.NearOOMRatio
	d.addGPUs(f, w, th, prices)

	var events []OOMEvent
	switch {
	case in.Events == nil:
		d.DataQuality.OOMLog = StatusNotConfigured
	default:
		got, err := in.Events.Since(ctx, w.Start)
		if err != nil {
			d.DataQuality.OOMLog = StatusUnavailable
			d.DataQuality.OOMLogError = err.Error()
			break
		}
		d.DataQuality.OOMLog = StatusOK
		events = inWindow(got, w)
	}
	if in.Feedback != nil {
		if c, err := in.Feedback.Since(ctx, w.Start); err != nil {
			d.DataQuality.FeedbackLog = StatusUnavailable
			d.DataQuality.FeedbackLogError = err.Error()
		} else {
			d.DataQuality.FeedbackLog = StatusOK
			d.Feedback = &c
		}
	}
	matches := matchOOMs(events, f)
	d.addJobs(f, prices, matches)
	d.addRightSize(f, w, prices, matches)
	d.addEvents(events, w, matches)
	d.chart = chartInput(d, f, th, events, matches)
	d.Suggestions = suggest(d)
	return d, nil
}

// priceCache asks the Pricer once per GPU model; end is when the window
// ends, the day prices' ages are told on (withAge).
type priceCache struct {
	ctx    context.Context
	pricer Pricer
	end    time.Time
	seen   map[string]price
}

type price struct {
	usd  float64
	src  string
	okay bool
}

func newPriceCache(ctx context.Context, p Pricer, end time.Time) *priceCache {
	return &priceCache{ctx: ctx, pricer: p, end: end, seen: map[string]price{}}
}

func (c *priceCache) get(model string) (float64, string, bool) {
	if c.pricer == nil || model == "" {
		return 0, "", false
	}
	p, ok := c.seen[model]
	if !ok {
		p.usd, p.src, p.okay = c.pricer.PricePerGPUHour(c.ctx, model)
		p.okay = p.okay && p.usd > 0 && !math.IsInf(p.usd, 0)
		p.src = withAge(p.src, c.end)
		c.seen[model] = p
	}
	return p.usd, p.src, p.okay
}

func (d *Digest) addGPUs(f fleet.Fleet, w fleet.Window, th fleet.Thresholds, prices *priceCache) {
	d.GPUsSeen = len(f.GPUs)
	kinds := map[string]fleet.Kind{}
	restarts := map[string]int{}
	for _, j := range f.Jobs {
		kinds[j.Name] = j.Kind
		restarts[j.Name] = len(j.Restarts)
	}
	var ratioSum float64
	ratioN := 0
	var idleUSD float64
	priced := false
	consumers := map[string]*consumerAcc{}
	for _, g := range f.GPUs {
		ref := refOf(g)
		d.Fleet.PeakUsedRatio = max(d.Fleet.PeakUsedRatio, g.PeakUsedRatio)
		if g.CapacityBytes > 0 {
			ratioSum += g.AvgUsedRatio
			ratioN++
		}
		d.Fleet.MemoryGiBHours += g.GiBHours
		if g.CapacityBytes > 0 && g.PeakUsedRatio >= th.NearOOMRatio {
			d.NearOOM = append(d.NearOOM, NearOOM{
				GPURef: ref, PeakUsedRatio: round(g.PeakUsedRatio, 3), HoursAbove95: round(g.HoursAbove, 2),
				PeakUsedBytes: g.PeakUsedBytes, CapacityBytes: g.CapacityBytes, TotalBytes: g.CapacityBytes,
				PeakAt: g.PeakAt, Owner: g.PeakOwner.String(), Job: g.PeakOwner.JobName(), Restarts: restarts[g.PeakOwner.JobName()],
			})
		}
		for _, u := range g.Usage {
			if u.IdleHours < th.MinIdleHours {
				continue
			}
			kind := fleet.KindUnknown
			if !u.Owner.IsZero() {
				kind = kinds[u.Owner.JobName()]
			}
			if kind == fleet.KindServing {
				continue // listed under serving_mostly_idle
			}
			ih := IdleHolding{
				GPURef: ref, IdleHours: round(u.IdleHours, 2), MemoryHeldBytes: u.IdleHeldBytes,
				Owner: u.Owner.String(), Job: u.Owner.JobName(), Kind: string(kind), GPUHours: round(u.IdleHours*g.Share(), 2),
			}
			if usd, src, ok := prices.get(g.Model); ok {
				v := round(ih.GPUHours*usd, 2)
				ih.USD, ih.PriceSource = &v, src
				idleUSD += v
				priced = true
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
	d.NearOOMJobs = groupNearOOM(f, th)
	d.IdleJobs = groupIdle(f, d.IdleHolding)
	d.NearOOM = d.NearOOM[:min(len(d.NearOOM), maxNearOOM)]
	d.IdleHolding = d.IdleHolding[:min(len(d.IdleHolding), maxIdleHolding)]
	d.TopConsumers = topConsumers(consumers)
}

type consumerAcc struct {
	Consumer
	gpus map[fleet.GPUKey]bool
}

// addConsumers books g's memory to its owners' namespaces (or jobs); memory
// no owner is known for is booked to the host, so bare-metal fleets still
// get a ranking.
func addConsumers(acc map[string]*consumerAcc, g fleet.GPU) {
	book := func(name, kind string, gib float64) {
		if gib <= 0 {
			return
		}
		k := kind + "\x00" + name
		c := acc[k]
		if c == nil {
			c = &consumerAcc{Consumer: Consumer{Name: name, Kind: kind}, gpus: map[fleet.GPUKey]bool{}}
			acc[k] = c
		}
		c.MemoryGiBHours += gib
		c.gpus[g.Key] = true
	}
	for _, u := range g.Usage {
		switch {
		case u.Owner.IsZero():
			book(g.Host, "host", u.GiBHours)
		case u.Owner.Namespace != "":
			book(u.Owner.Namespace, "namespace", u.GiBHours)
		case u.Owner.Pod != "":
			book(u.Owner.Pod, "pod", u.GiBHours)
		default:
			book(u.Owner.JobName(), "job", u.GiBHours)
		}
	}
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

func inWindow(events []OOMEvent, w fleet.Window) []OOMEvent {
	var out []OOMEvent
	for _, e := range events {
		if !e.At.Before(w.Start) && e.At.Before(w.End) {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

func (d *Digest) addEvents(events []OOMEvent, w fleet.Window, matches map[int]oomMatch) {
	for i, e := range events {
		d.OOMEvents.Total++
		d.OOMEvents.ByFormat[orUnknown(e.Format)]++
		d.OOMEvents.ByCause[orUnknown(e.Cause)]++
		if len(d.OOMEvents.Threads) < maxThreads {
			t := OOMThread{
				At: e.At.In(w.End.Location()), Channel: e.Channel, ThreadTS: e.ThreadTS, Permalink: e.Permalink,
				Framework: e.Framework, Format: e.Format, Cause: e.Cause, Device: e.Device, TriedBytes: e.TriedBytes,
			}
			if m, ok := matches[i]; ok {
				t.Job, t.GPU = m.job, m.gpu
			}
			d.OOMEvents.Threads = append(d.OOMEvents.Threads, t)
		}
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}
