// Package rightsize decides, for one job seen by the digest, the smallest
// GPU that would hold it: a smaller card from the price list, or a MIG
// slice of the GPU it runs on (docs/digest.md §8). Its peak memory per GPU
// with Margin of headroom decides what holds it; its busy share decides how
// much a proposal may slow it, and so whether it still saves money.
//
// It is pure: the job's figures and the prices come in as values, the
// proposal (or the reason there is none) goes out.
package rightsize

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/vrambot/vrambot/advisor/catalog"
)

// The rules, each stated once (docs/digest.md §8.1-§8.4).
const (
	// Margin is the headroom a proposal must hold over the job's peak: the
	// peak is a sample maximum (dcgm-exporter samples every 30 s, and a
	// longer evaluation step or a bigger batch can come later), so a card
	// that holds only the peak seen would be the next OOM.
	Margin = 0.20
	// TightRatio: a job whose peak reached 90% of its GPU is near its
	// capacity, not over-provisioned.
	TightRatio = 0.90
	// MinHours is how long a job must have held its GPUs for its peak to
	// say what it needs: a short run may not have reached its largest step.
	MinHours = 2.0
	// MaxSlowdown bounds the worst-case slowdown of a proposal: a job that
	// could take more than two and a half times as long is not the same
	// job, whatever it saves.
	MaxSlowdown = 2.5
	// MinSavingShare is the least a proposal must save in the worst case,
	// as a share of what the job's GPUs cost today.
	MinSavingShare = 0.05
	// MaxIdleShare: a job idle (while holding memory) half its GPU-hours or
	// more is told to stop, under idle while holding memory; shrinking its
	// GPU is the smaller saving.
	MaxIdleShare = 0.5
	// HoursPerWeek turns an hourly saving into a weekly one.
	HoursPerWeek = 168.0
)

// Job is what the digest saw of one job over its window.
type Job struct {
	Name string
	// Serving is a serving engine (vLLM, SGLang, TGI, Triton…): it sizes its
	// memory by gpu_memory_utilization, not by its load.
	Serving bool
	// GPUs is how many GPUs it held.
	GPUs int
	// Model is the DCGM modelName of its GPUs; "" when it ran on several.
	Model string
	// MIGProfile is set when its GPUs are already MIG slices.
	MIGProfile string
	// PeakBytes is the most memory one of its GPUs held under it, and
	// CapacityBytes that GPU's capacity (FB_USED + FB_FREE + FB_RESERVED).
	PeakBytes, CapacityBytes int64
	// Activity is its mean engine activity (0..1) while holding memory;
	// without an activity metric (HasActivity false) it counts as busy all
	// the time.
	Activity    float64
	HasActivity bool
	// IdleShare is the share of its GPU-hours it sat idle holding memory.
	IdleShare float64
	// Hours is how long it held GPUs in the window.
	Hours float64
	// GPUHoursPerWeek is its GPU-hours at the window's rate, per week.
	GPUHoursPerWeek float64
	// Restarted is true when it restarted (or an OOM was matched with it):
	// its peak may be short of what it tried to allocate.
	Restarted bool
}

// Price is one GPU-hour of a GPU and where the price came from.
type Price struct {
	USDPerGPUHour float64
	Source        string
}

// Prices are GPU-hour prices by catalog GPU key; a GPU without one is
// never proposed.
type Prices map[string]Price

// Reason says why a job got no proposal; Proposed means it got one.
type Reason string

// The reasons, in the order they are checked.
const (
	Proposed        Reason = ""
	ReasonServing   Reason = "serving engine: memory sized by gpu_memory_utilization, not by load"
	ReasonRestarted Reason = "restarted: its peak may be short of what it tried to allocate"
	ReasonIdle      Reason = "idle most of the window: stopping it saves more"
	ReasonOnMIG     Reason = "already on a MIG slice"
	ReasonMixedGPUs Reason = "runs on several GPU models"
	ReasonUnknown   Reason = "GPU not in the catalog"
	ReasonShortRun  Reason = "held its GPUs too briefly for its peak to say what it needs"
	ReasonNearPeak  Reason = "peak near its GPU's capacity"
	ReasonNoPrice   Reason = "no price for its GPU"
	ReasonTooBig    Reason = "nothing smaller holds its peak with the margin"
	ReasonShards    Reason = "multi-GPU: no smaller card holds a shard with the margin (MIG slices cannot run one job across GPUs)"
	ReasonNoSaving  Reason = "nothing smaller saves money at its busy share"
)

// Proposal is the smallest GPU that holds the job and saves the most.
type Proposal struct {
	Job   string
	GPUs  int
	Today catalog.GPU
	// Card is set for a whole smaller card; MIG for a slice of Today.
	Card *catalog.GPU
	MIG  *catalog.MIGProfile
	// PeakBytes and CapacityBytes are the job's (per GPU), NeedBytes the
	// peak with Margin, MemoryBytes what the proposal holds.
	PeakBytes, CapacityBytes, NeedBytes, MemoryBytes int64
	// Activity is the busy share the slowdown was judged on.
	Activity float64
	// Slowdown is how much longer the job would run in the worst case (its
	// busy time stretched by the compute or memory bandwidth it loses).
	Slowdown float64
	// USDPerWeekSaved assumes that worst case; USDPerWeekSavedBest that the
	// job runs as fast as today.
	USDPerWeekSaved, USDPerWeekSavedBest float64
	// PriceSource names the prices compared: today's GPU's, and the card's.
	PriceSource string
}

// Name is what the job would move to: "L40S" or "MIG 3g.40gb".
func (p Proposal) Name() string {
	if p.MIG != nil {
		return "MIG " + p.MIG.Name
	}
	if p.Card != nil {
		return p.Card.Name
	}
	return ""
}

// Candidates are the cards a job on today's GPU could move to, whatever
// its size: NVIDIA datacenter and workstation cards (GeForce and TITAN
// cards are licensed for desktops, not datacenters) with less memory than
// today's as marketed (an H100 is no smaller than an A100 80GB for
// reporting 42 MiB less), with bf16 when today's GPU has it.
func Candidates(today catalog.GPU) []catalog.GPU {
	var out []catalog.GPU
	for _, g := range catalog.GPUs() {
		if g.Vendor != "NVIDIA" || consumer(g) || g.Key == today.Key || g.MemoryBytes >= today.MemoryBytes {
			continue
		}
		if today.BF16 && !g.BF16 {
			continue
		}
		if g.DenseTFLOPS <= 0 || g.BandwidthGBps <= 0 {
			continue
		}
		out = append(out, g)
	}
	return out
}

func consumer(g catalog.GPU) bool {
	return strings.HasPrefix(g.Name, "GeForce") || strings.HasPrefix(g.Name, "TITAN")
}

// Holders checks the rules that need no price and returns today's GPU and
// the cards that would hold the job (its peak per GPU with Margin), for the
// caller to price; reason says why the job is out when it is.
func Holders(j Job) (today catalog.GPU, cards []catalog.GPU, reason Reason) {
	switch {
	case j.Serving:
		return today, nil, ReasonServing
	case j.Restarted:
		return today, nil, ReasonRestarted
	case j.MIGProfile != "":
		return today, nil, ReasonOnMIG
	case j.Model == "":
		return today, nil, ReasonMixedGPUs
	}
	today, ok := catalog.NormalizeGPU(j.Model, 0, "")
	if !ok || today.DenseTFLOPS <= 0 || today.BandwidthGBps <= 0 {
		return today, nil, ReasonUnknown
	}
	switch {
	case j.Hours < MinHours:
		return today, nil, ReasonShortRun
	case j.CapacityBytes <= 0 || float64(j.PeakBytes) >= TightRatio*float64(j.CapacityBytes):
		return today, nil, ReasonNearPeak
	case j.IdleShare >= MaxIdleShare:
		return today, nil, ReasonIdle
	}
	need := needBytes(j)
	for _, c := range Candidates(today) {
		if c.UsableBytes >= need {
			cards = append(cards, c)
		}
	}
	if len(cards) == 0 && len(migHolders(j, today, need)) == 0 {
		if j.GPUs > 1 {
			return today, nil, ReasonShards
		}
		return today, nil, ReasonTooBig
	}
	return today, cards, Proposed
}

// needBytes is the job's peak per GPU with Margin.
func needBytes(j Job) int64 { return int64(math.Ceil(float64(j.PeakBytes) * (1 + Margin))) }

// migHolders are the MIG profiles of today's GPU that hold need, for a
// single-GPU job: a CUDA process sees one MIG device at most, so a job
// across GPUs cannot run on slices.
func migHolders(j Job, today catalog.GPU, need int64) []catalog.MIGProfile {
	mg, ok := catalog.LookupMIG(today.Key)
	if !ok || j.GPUs > 1 {
		return nil
	}
	var out []catalog.MIGProfile
	for _, p := range mg.Profiles {
		if p.MemoryBytes >= need {
			out = append(out, p)
		}
	}
	return out
}

// Advise returns the job's proposal, or the reason it has none. prices
// need today's GPU and the cards Holders returned; a card without a price
// is never proposed.
func Advise(j Job, prices Prices) (Proposal, Reason) {
	today, cards, reason := Holders(j)
	if reason != Proposed {
		return Proposal{}, reason
	}
	now, ok := prices[today.Key]
	if !ok || now.USDPerGPUHour <= 0 {
		return Proposal{}, ReasonNoPrice
	}
	a := 1.0
	if j.HasActivity {
		a = min(max(j.Activity, 0), 1)
	}
	need := needBytes(j)
	base := Proposal{
		Job: j.Name, GPUs: j.GPUs, Today: today, PeakBytes: j.PeakBytes, CapacityBytes: j.CapacityBytes,
		NeedBytes: need, Activity: a,
	}
	var options []option
	if mg, ok := catalog.LookupMIG(today.Key); ok {
		for _, p := range migHolders(j, today, need) {
			options = append(options, option{mig: &p, memory: p.MemoryBytes, cost: now.USDPerGPUHour * mg.ComputeShare(p), source: now.Source})
		}
	}
	for _, c := range cards {
		pc, ok := prices[c.Key]
		if !ok || pc.USDPerGPUHour <= 0 {
			continue
		}
		options = append(options, option{card: &c, memory: c.UsableBytes, cost: pc.USDPerGPUHour, source: now.Source + "; " + pc.Source})
	}
	var best *Proposal
	for _, o := range options {
		s := Slowdown(today, o.card, o.mig, a)
		worst := now.USDPerGPUHour - o.cost*s
		if s > MaxSlowdown || worst < MinSavingShare*now.USDPerGPUHour {
			continue
		}
		p := base
		p.Card, p.MIG, p.MemoryBytes, p.Slowdown, p.PriceSource = o.card, o.mig, o.memory, round(s, 2), o.source
		p.USDPerWeekSaved = round(worst*j.GPUHoursPerWeek, 2)
		p.USDPerWeekSavedBest = round((now.USDPerGPUHour-o.cost)*j.GPUHoursPerWeek, 2)
		if best == nil || better(p, *best) {
			best = &p
		}
	}
	if best == nil {
		return Proposal{}, ReasonNoSaving
	}
	return *best, Proposed
}

// option is one GPU that holds the job, priced per GPU-hour.
type option struct {
	card   *catalog.GPU
	mig    *catalog.MIGProfile
	memory int64
	cost   float64 // $ per GPU-hour of the option, at today's speed
	source string
}

// Slowdown is how much longer a job busy a (0..1) of the time on today's
// GPU could take on a card or on a MIG slice of today's GPU, in the worst
// case: its busy time stretches by the larger of the compute and memory
// bandwidth ratios (dense bf16 TFLOPS and GB/s of the catalog; a slice's
// share of the compute and memory slices), its idle time (data loading,
// waiting for users) does not. A faster GPU is never counted as a
// speed-up. It is 0 when neither card nor slice is given.
func Slowdown(today catalog.GPU, card *catalog.GPU, mig *catalog.MIGProfile, a float64) float64 {
	var ratio float64
	switch {
	case mig != nil:
		mg, ok := catalog.LookupMIG(today.Key)
		if !ok {
			return 0
		}
		ratio = max(1/mg.ComputeShare(*mig), 1/mg.MemoryShare(*mig))
	case card != nil && card.DenseTFLOPS > 0 && card.BandwidthGBps > 0:
		ratio = max(today.DenseTFLOPS/card.DenseTFLOPS, today.BandwidthGBps/card.BandwidthGBps)
	default:
		return 0
	}
	return slowdown(a, ratio)
}

func slowdown(a, ratio float64) float64 {
	return (1 - a) + a*max(ratio, 1)
}

// better orders proposals: the largest worst-case saving, then the least
// memory, then a MIG slice (no move to another node), then by name.
func better(a, b Proposal) bool {
	return cmp.Or(
		cmp.Compare(b.USDPerWeekSaved, a.USDPerWeekSaved),
		cmp.Compare(a.MemoryBytes, b.MemoryBytes),
		cmp.Compare(boolRank(a.MIG == nil), boolRank(b.MIG == nil)),
		strings.Compare(a.Name(), b.Name()),
	) < 0
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

// Sort orders proposals by weekly saving, largest first, then by job.
func Sort(ps []Proposal) {
	slices.SortStableFunc(ps, func(a, b Proposal) int {
		return cmp.Or(cmp.Compare(b.USDPerWeekSaved, a.USDPerWeekSaved), strings.Compare(a.Job, b.Job))
	})
}
