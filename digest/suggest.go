package digest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vrambot/vrambot/advisor/rightsize"
	"github.com/vrambot/vrambot/digest/fleet"
)

// suggest derives at most three concrete actions from the findings, the
// most urgent first: a job at the edge of OOM (or already crashing), jobs
// that keep restarting, then the money (idle GPUs, right-sizing, quiet
// servers), the largest sum over the window first, then the commonest OOM
// cause and blind spots in the data. A job is named in one suggestion at
// most.
func suggest(d Digest) []string {
	out := []string{}
	loc := d.Window.End.Location()
	mentioned := map[string]bool{}
	if len(d.NearOOMJobs) > 0 {
		n := d.NearOOMJobs[0]
		who := n.label(false)
		if n.Job == "" {
			who = "the job on " + n.GPU
		}
		peak := fmt.Sprintf("peak %s", formatOf(n.PeakUsedBytes, n.CapacityBytes))
		if n.Job != "" && n.GPUs > 1 {
			peak += " on " + n.onGPU(n.PeakGPU)
		}
		fix := "cut the micro-batch and add gradient accumulation, or set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`"
		if n.Restarts > 0 {
			out = append(out, fmt.Sprintf("%s ran at %s of memory (%s) and restarted %s: it is probably dying of OOM; %s.",
				who, formatRatio(n.PeakUsedRatio), peak, times(n.Restarts), fix))
		} else {
			out = append(out, fmt.Sprintf("%s spent %s at %s+ memory (%s): %s, before it OOMs.",
				who, formatHours(n.HoursAbove95), formatRatio(d.NearOOMRatio), peak, fix))
		}
		mentioned[n.Job] = true
	}
	for _, j := range d.restartedJobs() {
		if mentioned[j.Name] {
			continue
		}
		s := fmt.Sprintf("%s restarted %s (memory fell to 0 by %s): read its logs for the exit reason", j.Name, times(j.Restarts), formatTimes(j.RestartTimes, loc))
		if len(j.OOMs) > 0 {
			s += fmt.Sprintf("; %s pasted in Slack at the same time, so the staged fixes in %s apply", fleet.Plural(len(j.OOMs), "OOM"), threadRef(j.OOMs[0]))
		}
		out = append(out, s+".")
		mentioned[j.Name] = true
		break
	}
	out = append(out, moneySuggestions(d, mentioned)...)
	if cause, n := topCause(d.OOMEvents.ByCause); n > 0 {
		s := fmt.Sprintf("%d of the %s pasted in Slack had cause `%s`: see the linked threads for the staged fixes.", n, fleet.Plural(d.OOMEvents.Total, "OOM"), cause)
		if strings.Contains(cause, "frag") {
			s = fmt.Sprintf("%d of the %s pasted in Slack were fragmentation: make `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` the default in the team's launch scripts.", n, fleet.Plural(d.OOMEvents.Total, "OOM"))
		}
		out = append(out, s)
	}
	if len(d.DataQuality.StoppedReporting) > 0 {
		s := d.DataQuality.StoppedReporting[0]
		out = append(out, fmt.Sprintf("Check dcgm-exporter on %s: no samples since %s.", s.Host, formatTime(s.LastSeen, loc)))
	}
	return out[:min(len(out), maxSuggestions)]
}

// moneySuggestion is a suggestion that saves usd over the window.
type moneySuggestion struct {
	text string
	usd  float64
}

// moneySuggestions are the idle GPU, right-size and quiet-server
// suggestions, the one saving the most over the window first (a weekly
// right-size saving counts for the window's share of a week). A finding
// without a price ranks last.
func moneySuggestions(d Digest, mentioned map[string]bool) []string {
	var ms []moneySuggestion
	for _, g := range d.IdleJobs {
		if g.Job != "" && mentioned[g.Job] {
			continue
		}
		who := g.label(false)
		if g.Job == "" {
			who = "whatever holds " + g.GPU
		}
		cost, usd := "", -1.0
		if g.USD != nil {
			cost, usd = fmt.Sprintf(", about %s", formatUSD(*g.USD)), *g.USD
		}
		s := fmt.Sprintf("Stop or scale down %s: idle %s while holding %s%s.", who, formatHours(g.IdleHours), formatBytes(g.MemoryHeldBytes), cost)
		if notebooks := countNotebooks(d.IdleHolding); notebooks > 1 {
			s += fmt.Sprintf(" %d idle notebooks hold GPUs: an idle culler (e.g. JupyterHub's cull-idle) would free them.", notebooks)
		}
		ms = append(ms, moneySuggestion{s, usd})
		mentioned[g.Job] = true
		break
	}
	weeks := d.Window.End.Sub(d.Window.Start).Hours() / rightsize.HoursPerWeek
	for _, r := range d.RightSize {
		if mentioned[r.Job] {
			continue
		}
		s := fmt.Sprintf("Move %s to %s: its peak of %s per GPU fits with %s to spare, saving at least %s a week (%s).",
			r.Job, r.target(), formatBytes(r.PeakBytes), formatRatio(rightsize.Margin), formatUSD(r.USDPerWeekSaved), d.speedNote(r))
		ms = append(ms, moneySuggestion{s, r.USDPerWeekSaved * weeks})
		mentioned[r.Job] = true
		break
	}
	if len(d.ServingIdle) > 0 && !mentioned[d.ServingIdle[0].Name] {
		s := d.ServingIdle[0]
		cost, usd := "", -1.0
		if s.USD != nil {
			cost, usd = ", "+formatUSD(*s.USD), *s.USD
		}
		ms = append(ms, moneySuggestion{fmt.Sprintf("%s served from %s but was idle %s of the time (%s idle GPU-hours%s): fewer replicas, a smaller model or GPU, or scale-to-zero would free them.",
			s.Name, fleet.Plural(s.GPUs, "GPU"), formatRatio(s.IdleShare), formatNumber(s.IdleGPUHours), cost), usd})
	}
	sort.SliceStable(ms, func(a, b int) bool { return ms[a].usd > ms[b].usd })
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.text
	}
	return out
}

func threadRef(o MatchedOOM) string {
	if o.Permalink != "" {
		return "its thread (" + o.Permalink + ")"
	}
	return "its thread in " + channelRef(o.Channel)
}

func countNotebooks(ih []IdleHolding) int {
	n := 0
	for _, h := range ih {
		if h.Kind == string(fleet.KindNotebook) {
			n++
		}
	}
	return n
}

// topCause is the commonest known cause (ties: alphabetical).
func topCause(byCause map[string]int) (string, int) {
	keys := make([]string, 0, len(byCause))
	for k := range byCause {
		if k != "unknown" {
			keys = append(keys, k)
		}
	}
	sortByCount(keys, byCause)
	if len(keys) == 0 {
		return "", 0
	}
	return keys[0], byCause[keys[0]]
}

// sortByCount orders keys by count, largest first, then by name.
func sortByCount(keys []string, m map[string]int) {
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
}
