package digest

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/rightsize"
	"github.com/vrambot/vrambot/digest/fleet"
	"github.com/vrambot/vrambot/pricing"
)

// maxRightSize bounds the right-size list.
const maxRightSize = 10

// RightSize is a job whose GPU is bigger than it needs, and the smallest
// GPU that would hold it (docs/digest.md §8). The JSON fields are exactly
// `digest --json`'s right_size[] (issue 27).
type RightSize struct {
	Job  string `json:"job"`
	GPUs int    `json:"gpus"`
	// GPU is today's GPU, as the catalog names it ("H100 80GB SXM").
	GPU string `json:"gpu"`
	// PeakBytes is the most one of its GPUs held, CapacityBytes that GPU's
	// capacity.
	PeakBytes     int64             `json:"peak_bytes"`
	CapacityBytes int64             `json:"capacity_bytes"`
	Proposal      RightSizeProposal `json:"proposal"`
	// USDPerWeekSaved assumes the worst case: the job's busy time stretched
	// by the compute or memory bandwidth it loses.
	USDPerWeekSaved float64 `json:"usd_per_week_saved"`
	PriceSource     string  `json:"price_source"`

	// bestUSD is the weekly saving if the job keeps its speed, for the
	// suggestion (composed with the digest, so not part of the JSON).
	bestUSD float64
}

// RightSizeProposal is a whole smaller card (GPU) or a MIG slice of
// today's GPU (MIGProfile); exactly one is set.
type RightSizeProposal struct {
	GPU        string `json:"gpu,omitempty"`
	MIGProfile string `json:"mig_profile,omitempty"`
}

// addRightSize asks advisor/rightsize about every job: the rules that need
// no price first, then prices for today's GPU and the cards that would hold
// the job, so the price book is asked only about GPUs that matter.
func (d *Digest) addRightSize(f fleet.Fleet, w fleet.Window, prices *priceCache, matches map[int]oomMatch) {
	matched := map[string]bool{}
	for _, m := range matches {
		matched[m.job] = true
	}
	hours := w.Duration().Hours()
	var out []rightsize.Proposal
	for _, fj := range f.Jobs {
		j := rightsize.Job{
			Name: fj.Name, Serving: fj.Kind == fleet.KindServing, GPUs: len(fj.GPUs),
			PeakBytes: fj.PeakUsedBytes, CapacityBytes: fj.CapacityBytes,
			Activity: fj.Activity, HasActivity: fj.HasActivity, Hours: fj.Hours,
			Restarted: len(fj.Restarts) > 0 || matched[fj.Name],
		}
		if len(fj.ByModel) == 1 {
			j.Model = fj.ByModel[0].Model
		}
		if len(fj.MIGProfiles) > 0 {
			j.MIGProfile = fj.MIGProfiles[0]
		}
		if fj.GPUHours > 0 {
			j.IdleShare = fj.IdleGPUHours / fj.GPUHours
		}
		if hours > 0 {
			j.GPUHoursPerWeek = fj.GPUHours * rightsize.HoursPerWeek / hours
		}
		today, cards, reason := rightsize.Holders(j)
		if reason != rightsize.Proposed {
			continue
		}
		ps := rightsize.Prices{}
		if usd, src, ok := prices.get(j.Model); ok {
			ps[today.Key] = rightsize.Price{USDPerGPUHour: usd, Source: src}
		}
		for _, c := range cards {
			if usd, src, ok := prices.get(c.Name); ok {
				ps[c.Key] = rightsize.Price{USDPerGPUHour: usd, Source: src}
			}
		}
		if p, reason := rightsize.Advise(j, ps); reason == rightsize.Proposed {
			out = append(out, p)
		}
	}
	rightsize.Sort(out)
	for _, p := range out[:min(len(out), maxRightSize)] {
		rs := RightSize{
			Job: p.Job, GPUs: p.GPUs, GPU: p.Today.Name, PeakBytes: p.PeakBytes, CapacityBytes: p.CapacityBytes,
			USDPerWeekSaved: p.USDPerWeekSaved, PriceSource: p.PriceSource, bestUSD: p.USDPerWeekSavedBest,
		}
		if p.MIG != nil {
			rs.Proposal.MIGProfile = p.MIG.Name
		} else {
			rs.Proposal.GPU = p.Card.Name
		}
		d.RightSize = append(d.RightSize, rs)
	}
}

// asOfDate finds the as-of date a price's provenance states.
var asOfDate = regexp.MustCompile(`as of (\d{4}-\d{2}-\d{2})([,)])`)

// withAge adds the price's age on the day the window ends to a provenance
// that states its as-of date without one ("as of 2026-11-29)" becomes "as
// of 2026-11-29, 2 days old)"), so a digest read later still says how old
// its prices were.
func withAge(src string, end time.Time) string {
	m := asOfDate.FindStringSubmatchIndex(src)
	if m == nil || src[m[4]:m[5]] == "," {
		return src // no date, or the age (or staleness) is already stated
	}
	asOf, err := time.Parse(time.DateOnly, src[m[2]:m[3]])
	if err != nil || asOf.After(end) {
		return src // a price from after the window has no age in it
	}
	days := pricing.AgeDays(src[m[2]:m[3]], end)
	return src[:m[3]] + ", " + pricing.AgeText(days) + src[m[3]:]
}

// gpuName is how the catalog names a DCGM modelName ("NVIDIA H100 80GB
// HBM3" is "H100 80GB SXM"); a GPU the catalog lacks keeps its own name.
func gpuName(dcgmModel string) string {
	if g, ok := catalog.NormalizeGPU(dcgmModel, 0, ""); ok {
		return g.Name
	}
	return dcgmModel
}

// rightSizeText heads the thread's right-size list.
var rightSizeText = fmt.Sprintf("Jobs on GPUs bigger than they need: each job's peak memory per GPU plus %s headroom, against the smaller cards of the price list and the MIG slices of its own GPU. "+
	"Savings are the worst case, the job's busy time stretched by the compute or memory bandwidth it loses; serving engines, jobs near their GPU's capacity, jobs that restarted and jobs idle most of the window are never proposed.",
	formatRatio(rightsize.Margin))

// rightSizeUSD is what every right-size proposal saves per week, at worst.
func (d Digest) rightSizeUSD() float64 {
	var sum float64
	for _, r := range d.RightSize {
		sum += r.USDPerWeekSaved
	}
	return round(sum, 2)
}

// today is the catalog GPU the job runs on, the card it would move to (nil
// for a MIG slice) and the slice (nil for a card), from the JSON's names.
func (r RightSize) resolve() (today catalog.GPU, card *catalog.GPU, mig *catalog.MIGProfile, total int) {
	today, _ = catalog.NormalizeGPU(r.GPU, 0, "")
	if r.Proposal.MIGProfile != "" {
		if mg, ok := catalog.LookupMIG(today.Key); ok {
			if p, ok := mg.Profile(r.Proposal.MIGProfile); ok {
				return today, nil, &p, mg.ComputeSlices
			}
		}
		return today, nil, nil, 0
	}
	if c, ok := catalog.NormalizeGPU(r.Proposal.GPU, 0, ""); ok {
		return today, &c, nil, 0
	}
	return today, nil, nil, 0
}

// busy is the job's busy share (jobs[].activity), if the digest lists it.
func (d Digest) busy(job string) (float64, bool) {
	for _, j := range d.Jobs {
		if j.Name == job && j.Activity != nil {
			return *j.Activity, true
		}
	}
	return 0, false
}

// rightSizeLine is a proposal as the thread shows it, from the JSON's
// fields and the catalog: "ml/ft (1× H100 80GB SXM): peak 17.5 of 79.6
// GiB, busy 75% → MIG 3g.40gb (39.5 GiB, 3/7 of its compute): $44.88/week
// at worst, up to 2× as long (prices: …)".
func (d Digest) rightSizeLine(r RightSize) string {
	today, card, mig, total := r.resolve()
	target := ""
	switch {
	case mig != nil:
		target = fmt.Sprintf("MIG %s (%s, %d/%d of its compute)", mig.Name, formatBytes(mig.MemoryBytes), mig.ComputeSlices, total)
	case card != nil && r.GPUs > 1:
		target = fmt.Sprintf("%d× %s (%s each)", r.GPUs, card.Name, formatBytes(card.UsableBytes))
	case card != nil:
		target = fmt.Sprintf("%d× %s (%s)", r.GPUs, card.Name, formatBytes(card.UsableBytes))
	default:
		target = r.Proposal.GPU + r.Proposal.MIGProfile
	}
	busy := ""
	a, known := d.busy(r.Job)
	if known {
		busy = ", busy " + formatRatio(a)
	} else {
		a = 1 // as rightsize judges a job without an activity metric
	}
	s := fmt.Sprintf("%s (%d× %s): peak %s%s → %s: %s/week at worst", r.Job, r.GPUs, r.GPU, formatOf(r.PeakBytes, r.CapacityBytes),
		busy, target, formatUSD(r.USDPerWeekSaved))
	if sd := rightsize.Slowdown(today, card, mig, a); sd > 1 {
		s += fmt.Sprintf(", up to %s× as long", formatNumber(sd))
	}
	return s + " (prices: " + r.PriceSource + ")"
}

// target is what the job would move to: "a MIG 3g.40gb slice of its H100
// 80GB SXM" or "4× L40S".
func (r RightSize) target() string {
	if r.Proposal.MIGProfile != "" {
		return fmt.Sprintf("a MIG %s slice of its %s", r.Proposal.MIGProfile, r.GPU)
	}
	if r.GPUs == 1 {
		return article(r.Proposal.GPU) + " " + r.Proposal.GPU
	}
	return fmt.Sprintf("%d× %s", r.GPUs, r.Proposal.GPU)
}

// speedNote says what the worst case assumes.
func (d Digest) speedNote(r RightSize) string {
	today, card, mig, _ := r.resolve()
	a, known := d.busy(r.Job)
	if !known {
		a = 1
	}
	sd := rightsize.Slowdown(today, card, mig, a)
	if sd <= 1 {
		return "it would run as fast"
	}
	s := fmt.Sprintf("if its busy time is compute- or bandwidth-bound it could take up to %s× as long", formatNumber(sd))
	if r.bestUSD > r.USDPerWeekSaved {
		s += fmt.Sprintf("; %s if it keeps its speed", formatUSD(r.bestUSD))
	}
	return s
}

// article is "an" before a name read with a vowel sound ("an L40S", "an
// A100 40GB", "an RTX 6000 Ada"), else "a" ("a T4").
func article(name string) string {
	if name != "" && strings.ContainsRune("AEFHILMNORSX", rune(strings.ToUpper(name)[0])) {
		return "an"
	}
	return "a"
}
