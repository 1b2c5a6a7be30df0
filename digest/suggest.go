package digest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vrambot/vrambot/digest/fleet"
)

// suggest derives at most three concrete actions from the findings, the
// most urgent first: a job at the edge of OOM (or already crashing), jobs
// that keep restarting, money burnt by idle GPUs, quiet servers, the
// commonest OOM cause, then blind spots in the data.
func suggest(d Digest) []string {
	out := []string{}
	loc := d.Window.End.Location()
	mentioned := map[string]bool{}
	if len(d.NearOOM) > 0 {
		n := d.NearOOM[0]
		who := n.Owner
		if who == "" {
			who = "the job"
		}
		fix := "cut the micro-batch and add gradient accumulation, or set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`"
		if n.Restarts > 0 {
			out = append(out, fmt.Sprintf("%s on %s ran at %s of memory (peak %s of %s) and restarted %s: it is probably dying of OOM; %s.",
				who, n.Name(), formatRatio(n.PeakUsedRatio), formatBytes(n.PeakUsedBytes), formatBytes(n.CapacityBytes), times(n.Restarts), fix))
		} else {
			out = append(out, fmt.Sprintf("%s on %s spent %s at or above 95%% memory (peak %s of %s): %s, before it OOMs.",
				who, n.Name(), formatHours(n.HoursAbove95), formatBytes(n.PeakUsedBytes), formatBytes(n.CapacityBytes), fix))
		}
		mentioned[jobOf(d, n.Owner)] = true
	}
	for _, j := range d.restartedJobs() {
		if mentioned[j.Name] {
			continue
		}
		var at []string
		for _, t := range j.RestartTimes {
			at = append(at, formatClock(t, loc))
		}
		s := fmt.Sprintf("%s restarted %s (memory fell to 0 by %s): read its logs for the exit reason", j.Name, times(j.Restarts), fleet.ListSome(at))
		if len(j.OOMs) > 0 {
			s += fmt.Sprintf("; %s pasted in Slack at the same time, so the staged fixes in %s apply", fleet.Plural(len(j.OOMs), "OOM"), threadRef(j.OOMs[0]))
		}
		out = append(out, s+".")
		mentioned[j.Name] = true
		break
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
		s := fmt.Sprintf("Stop or scale down %s: idle %s on %s while holding %s%s.", who, formatHours(ih.IdleHours), ih.Name(), formatBytes(ih.MemoryHeldBytes), cost)
		if notebooks := countNotebooks(d.IdleHolding); notebooks > 1 {
			s += fmt.Sprintf(" %d idle notebooks hold GPUs: an idle culler (e.g. JupyterHub's cull-idle) would free them.", notebooks)
		}
		out = append(out, s)
	}
	if len(d.ServingIdle) > 0 {
		s := d.ServingIdle[0]
		cost := ""
		if s.USD != nil {
			cost = ", " + formatUSD(*s.USD)
		}
		out = append(out, fmt.Sprintf("%s served from %s but was idle %s of the time (%s idle GPU-hours%s): fewer replicas, a smaller model or GPU, or scale-to-zero would free them.",
			s.Name, fleet.Plural(s.GPUs, "GPU"), formatRatio(s.IdleShare), formatNumber(s.IdleGPUHours), cost))
	}
	if cause, n := topCause(d.OOMEvents.ByCause); n > 0 {
		s := fmt.Sprintf("%d of the %s pasted in Slack had cause `%s`: see the linked threads for the staged fixes.", n, fleet.Plural(d.OOMEvents.Total, "OOM"), cause)
		if strings.Contains(cause, "frag") {
			s = fmt.Sprintf("%d of the %s pasted in Slack were fragmentation: make `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` the default in the team's launch scripts.", n, fleet.Plural(d.OOMEvents.Total, "OOM"))
		}
		out = append(out, s)
	}
	if len(d.DataQuality.StoppedReporting) > 0 {
		s := d.DataQuality.StoppedReporting[0]
		out = append(out, fmt.Sprintf("Check dcgm-exporter on %s: no samples since %s.", s.Host, formatClock(s.LastSeen, loc)))
	}
	return out[:min(len(out), maxSuggestions)]
}

// jobOf is the job an owner ("namespace/pod") belongs to.
func jobOf(d Digest, owner string) string {
	for _, j := range d.Jobs {
		if j.Name == owner || (j.Namespace != "" && j.Namespace+"/"+j.Pod == owner) || contains(prefixed(j.Namespace, j.Pods), owner) {
			return j.Name
		}
	}
	return owner
}

func prefixed(ns string, pods []string) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = ns + "/" + p
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
