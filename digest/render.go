package digest

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vrambot/vrambot/digest/fleet"
	"github.com/vrambot/vrambot/feedback"
	"github.com/vrambot/vrambot/reply"
)

// ReplyKind is the reply.Reply Kind of every digest message.
const ReplyKind = "digest"

// Detail list lengths in the thread.
const (
	maxJobLines     = 10
	maxRestartLines = 10
)

// AllClear reports whether there is nothing to act on: metrics and the OOM
// log were read, GPUs were seen, none ran near OOM, restarted, idled while
// holding memory or stopped reporting, no server sat mostly idle, and nobody
// pasted an OOM.
func (d Digest) AllClear() bool {
	return d.DataQuality.Prometheus == StatusOK && d.DataQuality.OOMLog == StatusOK && d.GPUsSeen > 0 &&
		len(d.NearOOM) == 0 && len(d.IdleHolding) == 0 && len(d.ServingIdle) == 0 && d.Fleet.Restarts == 0 &&
		d.OOMEvents.Total == 0 && len(d.DataQuality.StoppedReporting) == 0
}

// Reply is the digest's main Slack message: headline and key numbers, the
// suggestions, and a footer on data freshness and gaps. Details go in
// ThreadReplies, the chart with this message; --json prints d itself.
func (d Digest) Reply() reply.Reply {
	loc := d.Window.End.Location()
	title := "GPU memory digest"
	if d.Demo {
		title += " (demo day)"
	}
	r := reply.Reply{
		Kind:  ReplyKind,
		Title: fmt.Sprintf("%s: %s → %s", title, d.Window.Start.In(loc).Format("Mon 2 Jan 15:04"), d.Window.End.Format("Mon 2 Jan 15:04 MST")),
	}
	r.Summary = d.headline()
	if d.DataQuality.Prometheus == StatusOK && d.GPUsSeen > 0 && !d.AllClear() {
		r.Fields = d.keyNumbers()
	}
	if len(d.Suggestions) > 0 {
		r.Sections = append(r.Sections, reply.Section{Title: "Suggestions", Items: d.Suggestions})
	}
	r.Context = d.footer()
	return r
}

func (d Digest) restartedJobs() []Job {
	var out []Job
	for _, j := range d.Jobs {
		if j.Restarts > 0 {
			out = append(out, j)
		}
	}
	return out
}

func (d Digest) headline() string {
	if d.AllClear() {
		return fmt.Sprintf("All clear: %s seen, none above 95%% memory, no restarts, none idle while holding memory, no OOMs pasted in Slack.", fleet.Plural(d.GPUsSeen, "GPU"))
	}
	var head string
	switch {
	case d.DataQuality.Prometheus == StatusNotConfigured:
		head = "Prometheus is not configured, so this digest has no GPU metrics"
	case d.DataQuality.Prometheus != StatusOK:
		head = "Prometheus could not be queried, so this digest has no GPU metrics"
	case d.GPUsSeen == 0:
		head = "Prometheus has no dcgm-exporter data for this window"
	default:
		var parts []string
		if len(d.NearOOMJobs) > 0 {
			parts = append(parts, d.nearOOMCount()+" near OOM")
		}
		if jobs := d.restartedJobs(); len(jobs) > 0 {
			parts = append(parts, fmt.Sprintf("%s restarted (%s)", fleet.Plural(len(jobs), "job"), fleet.Plural(d.Fleet.Restarts, "restart")))
		}
		if len(d.IdleJobs) > 0 {
			s := fmt.Sprintf("%s idle while holding memory (%s GPU-hours", d.idleCount(), formatNumber(d.Fleet.IdleGPUHours))
			if d.Fleet.IdleUSD != nil {
				s += ", " + formatUSD(*d.Fleet.IdleUSD)
			}
			parts = append(parts, s+")")
		}
		if n := len(d.ServingIdle); n > 0 {
			s := fmt.Sprintf("%d serving, mostly idle (%s GPU-hours idle", n, formatNumber(d.Fleet.ServingIdleGPUHours))
			if d.Fleet.ServingIdleUSD != nil {
				s += ", " + formatUSD(*d.Fleet.ServingIdleUSD)
			}
			parts = append(parts, s+")")
		}
		if n := len(d.RightSize); n > 0 {
			parts = append(parts, fmt.Sprintf("%s would fit a smaller GPU (%s/week)", fleet.Plural(n, "job"), formatUSD(d.rightSizeUSD())))
		}
		if n := len(d.DataQuality.StoppedReporting); n > 0 {
			parts = append(parts, fmt.Sprintf("%d stopped reporting", n))
		}
		if len(parts) == 0 {
			parts = append(parts, "none near OOM or idle while holding memory")
		}
		head = fmt.Sprintf("%s seen: %s", fleet.Plural(d.GPUsSeen, "GPU"), strings.Join(parts, ", "))
	}
	switch {
	case d.DataQuality.OOMLog == StatusNotConfigured:
		return head + "; no OOM log is configured."
	case d.DataQuality.OOMLog != StatusOK:
		return head + "; the OOM log could not be read."
	case d.OOMEvents.Total == 0:
		return head + "; no OOMs pasted in Slack."
	}
	return fmt.Sprintf("%s; %s pasted in Slack.", head, fleet.Plural(d.OOMEvents.Total, "OOM"))
}

func (d Digest) keyNumbers() []reply.Field {
	fs := []reply.Field{
		{Label: "GPUs seen", Value: fmt.Sprintf("%d (%s)", d.GPUsSeen, fleet.Plural(len(d.Jobs), "job"))},
		{Label: "Fleet memory", Value: fmt.Sprintf("peak %s, average %s", formatRatio(d.Fleet.PeakUsedRatio), formatRatio(d.Fleet.AvgUsedRatio))},
	}
	if len(d.NearOOMJobs) > 0 {
		n := d.NearOOMJobs[0]
		worst := n.GPU
		if n.Job != "" {
			worst = n.Job + " on " + n.PeakGPU
		}
		fs = append(fs, reply.Field{Label: "Near OOM", Value: fmt.Sprintf("%s; worst %s, %s+ for %s", d.nearOOMCount(), worst, formatRatio(d.NearOOMRatio), formatHours(n.HoursAbove95))})
	}
	if jobs := d.restartedJobs(); len(jobs) > 0 {
		var names []string
		for _, j := range jobs {
			names = append(names, fmt.Sprintf("%s ×%d", j.Name, j.Restarts))
		}
		fs = append(fs, reply.Field{Label: "Restarts", Value: fmt.Sprintf("%d (%s)", d.Fleet.Restarts, fleet.ListSome(names))})
	}
	if len(d.IdleJobs) > 0 {
		v := fmt.Sprintf("%s, %s GPU-hours", d.idleCount(), formatNumber(d.Fleet.IdleGPUHours))
		if d.Fleet.IdleUSD != nil {
			v += ", " + formatUSD(*d.Fleet.IdleUSD)
		}
		fs = append(fs, reply.Field{Label: "Idle holding memory", Value: v})
	}
	if len(d.ServingIdle) > 0 {
		v := fmt.Sprintf("%d, %s GPU-hours idle", len(d.ServingIdle), formatNumber(d.Fleet.ServingIdleGPUHours))
		if d.Fleet.ServingIdleUSD != nil {
			v += ", " + formatUSD(*d.Fleet.ServingIdleUSD)
		}
		fs = append(fs, reply.Field{Label: "Serving, mostly idle", Value: v})
	}
	if len(d.RightSize) > 0 {
		fs = append(fs, reply.Field{Label: "Right-size", Value: fmt.Sprintf("%s, %s/week at worst", fleet.Plural(len(d.RightSize), "job"), formatUSD(d.rightSizeUSD()))})
	}
	if d.OOMEvents.Total > 0 {
		v := strconv.Itoa(d.OOMEvents.Total)
		if c, n := topCause(d.OOMEvents.ByCause); n > 0 {
			v += fmt.Sprintf(" (%d %s)", n, c)
		}
		fs = append(fs, reply.Field{Label: "OOMs pasted", Value: v})
	}
	if fb := d.Feedback; fb != nil && fb.Up+fb.Down > 0 {
		fs = append(fs, reply.Field{Label: "Feedback on answers", Value: feedbackText(*fb)})
	}
	return fs
}

// feedbackText is "👍 12 · 👎 3 (vram 👍 9 · 👎 1, oom 👍 3 · 👎 2)".
func feedbackText(c feedback.Counts) string {
	v := fmt.Sprintf("👍 %d · 👎 %d", c.Up, c.Down)
	if len(c.ByKind) > 1 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(c.ByKind)) {
			t := c.ByKind[k]
			parts = append(parts, fmt.Sprintf("%s 👍 %d · 👎 %d", k, t.Up, t.Down))
		}
		v += " (" + strings.Join(parts, ", ") + ")"
	}
	return v
}

// footer says how fresh the data is and what is missing.
func (d Digest) footer() []string {
	dq := d.DataQuality
	loc := d.Window.End.Location()
	var out []string
	switch dq.Prometheus {
	case StatusOK:
		from := "dcgm-exporter via Prometheus"
		if d.Demo {
			from = "a simulated day of dcgm-exporter series (`vrambot digest --demo`)"
		}
		out = append(out, fmt.Sprintf("Data: %s up to %s, in %s buckets.", from, d.Window.End.Format(timeLayout+" MST"), dq.Step))
	case StatusNotConfigured:
		out = append(out, "No GPU metrics: set VRAMBOT_PROMETHEUS_URL to a Prometheus that scrapes dcgm-exporter.")
	case StatusUnreachable:
		out = append(out, "No GPU metrics: Prometheus unreachable ("+truncate(dq.PrometheusError, 200)+").")
	default:
		// Prometheus answered and refused the queries: the detail is for
		// operators (--json and the bot's log), not the channel.
		out = append(out, "No GPU metrics: Prometheus answered but failed the digest's queries (details: `vrambot digest --json`, the bot's log).")
	}
	switch dq.OOMLog {
	case StatusNotConfigured:
		out = append(out, "No OOM log: the bot's store is not configured.")
	case StatusUnavailable:
		out = append(out, "OOM log unavailable: the bot's store did not answer (details in the bot's log).")
	}
	var gaps []string
	for _, s := range dq.StoppedReporting {
		gaps = append(gaps, fmt.Sprintf("%s stopped reporting at %s", s.Name(), formatTime(s.LastSeen, loc)))
	}
	gaps = append(gaps, dq.MissingMetrics...)
	if len(gaps) > 0 {
		out = append(out, "Gaps: "+strings.Join(gaps, "; ")+".")
	}
	if !d.AllClear() && len(d.NearOOM)+len(d.IdleHolding)+len(d.ServingIdle)+len(d.Jobs)+len(d.RightSize)+d.OOMEvents.Total+len(d.TopConsumers) > 0 {
		out = append(out, "Details in the thread.")
	}
	return out
}

// Text is the digest as `vrambot digest` prints it: the main message, then
// each thread reply after a "---" line.
func (d Digest) Text() string {
	texts := []string{reply.Text(d.Reply())}
	for _, t := range d.ThreadReplies() {
		texts = append(texts, reply.Text(t))
	}
	return strings.Join(texts, "\n---\n\n")
}

// ThreadReplies are the details posted in the main message's thread, one
// message per topic; an all-clear digest has none.
func (d Digest) ThreadReplies() []reply.Reply {
	if d.AllClear() {
		return nil
	}
	loc := d.Window.End.Location()
	var out []reply.Reply
	add := func(title string, s reply.Section) {
		out = append(out, reply.Reply{Kind: ReplyKind, Title: title, Sections: []reply.Section{s}})
	}
	if len(d.NearOOMJobs) > 0 {
		var items []string
		for _, g := range d.NearOOMJobs {
			items = append(items, g.line(d.NearOOMRatio, loc))
		}
		add("Near OOM", reply.Section{Text: fmt.Sprintf("Jobs whose memory reached %s of a GPU's capacity (FB_USED + FB_FREE + FB_RESERVED of one sample), one line per job: hours with any of its GPUs there, and its highest peak. A job that died of OOM never shows 100%%: the failing allocation is never resident.", formatRatio(d.NearOOMRatio)), Items: items})
	}
	if jobs := d.restartedJobs(); len(jobs) > 0 {
		var items []string
		for _, j := range jobs[:min(len(jobs), maxRestartLines)] {
			s := fmt.Sprintf("%s (%s) restarted %s: memory fell to about 0 by %s on %s", j.Name, j.Kind, times(j.Restarts), formatTimes(j.RestartTimes, loc), fleet.ListSome(j.GPUNames))
			for _, o := range j.OOMs {
				s += fmt.Sprintf("; OOM pasted in %s at %s, memory fell to 0 by %s on %s", channelRef(o.Channel), formatTime(o.At, loc), formatTime(o.RestartAt, loc), o.GPU)
				if o.Permalink != "" {
					s += " (" + o.Permalink + ")"
				}
			}
			items = append(items, s)
		}
		add("Restarts", reply.Section{Text: "Held memory fell to about zero and climbed again under the same job: the process died and was restarted (a CUDA OOM ends the process). Matched with the OOMs pasted in Slack at the same time on a GPU of the same capacity.", Items: items})
	}
	if len(d.IdleJobs) > 0 {
		var items []string
		for _, g := range d.IdleJobs {
			items = append(items, g.line())
		}
		add("Idle while holding memory", reply.Section{Text: "Under 5% engine activity while holding at least 1 GiB, one line per job; serving engines are listed apart.", Items: items})
	}
	if len(d.ServingIdle) > 0 {
		var items []string
		for _, s := range d.ServingIdle {
			line := fmt.Sprintf("%s (%s): idle %s of %s GPU-hours (%s)", s.Name, fleet.Plural(s.GPUs, "GPU"), formatNumber(s.IdleGPUHours), formatNumber(s.GPUHours), formatRatio(s.IdleShare))
			if s.USD != nil {
				line += fmt.Sprintf(", %s idle (%s)", formatUSD(*s.USD), s.PriceSource)
			}
			items = append(items, line)
		}
		add("Serving, mostly idle", reply.Section{Text: "Inference servers hold their memory by design (vLLM, SGLang and TGI pre-allocate gpu_memory_utilization of it); these sat idle between requests most of the window.", Items: items})
	}
	if len(d.RightSize) > 0 {
		var items []string
		for _, r := range d.RightSize {
			items = append(items, d.rightSizeLine(r))
		}
		add(fmt.Sprintf("Right-size (%s/week)", formatUSD(d.rightSizeUSD())), reply.Section{Text: rightSizeText, Items: items})
	}
	if len(d.Jobs) > 0 {
		var items []string
		for _, j := range d.Jobs[:min(len(d.Jobs), maxJobLines)] {
			s := fmt.Sprintf("%s (%s, %s): %s GPU-hours, peak %s", j.Name, j.Kind, fleet.Plural(j.GPUs, "GPU"), formatNumber(j.GPUHours), formatRatio(j.PeakUsedRatio))
			if j.HoursAbove95 > 0 {
				s += fmt.Sprintf(", %s+ for %s", formatRatio(d.NearOOMRatio), formatHours(j.HoursAbove95))
			}
			if j.Restarts > 0 {
				s += ", restarted " + times(j.Restarts)
			}
			if j.CostUSD != nil {
				s += ", " + formatUSD(*j.CostUSD)
			}
			items = append(items, s)
		}
		text := "GPUs grouped by owner, largest first."
		if n := len(d.Jobs) - maxJobLines; n > 0 {
			text += fmt.Sprintf(" %d more in `vrambot digest --json`.", n)
		}
		add(fmt.Sprintf("Jobs (%d)", len(d.Jobs)), reply.Section{Text: text, Items: items})
	}
	if len(d.TopConsumers) > 0 {
		var items []string
		for _, c := range d.TopConsumers {
			items = append(items, fmt.Sprintf("%s (%s): %s GiB-hours on %s", c.Name, c.Kind, formatNumber(c.MemoryGiBHours), fleet.Plural(c.GPUs, "GPU")))
		}
		add("Top consumers", reply.Section{Text: "GPU memory used over the window.", Items: items})
	}
	if d.OOMEvents.Total > 0 {
		var items []string
		for _, t := range d.OOMEvents.Threads {
			s := formatTime(t.At, loc) + " " + joinNonEmpty(", ", t.Framework, t.Format, causeText(t.Cause), t.Device)
			if t.TriedBytes != nil {
				s += ", tried " + formatBytes(*t.TriedBytes)
			}
			if t.Job != "" {
				s += fmt.Sprintf(", %s restarted on %s", t.Job, t.GPU)
			}
			switch {
			case t.Permalink != "":
				s += ": " + t.Permalink
			case t.Channel != "":
				s += ": " + channelRef(t.Channel)
			}
			items = append(items, s)
		}
		text := "By cause: " + formatCounts(d.OOMEvents.ByCause) + ". By format: " + formatCounts(d.OOMEvents.ByFormat) + "."
		if n := d.OOMEvents.Total - len(d.OOMEvents.Threads); n > 0 {
			text += fmt.Sprintf(" The %d newest are not listed.", n)
		}
		add(fmt.Sprintf("OOMs pasted in Slack (%d)", d.OOMEvents.Total), reply.Section{Text: text, Items: items})
	}
	if dq := d.DataQuality; len(dq.MissingMetrics)+len(dq.StoppedReporting)+len(dq.Labels) > 0 {
		var items []string
		for _, s := range dq.StoppedReporting {
			items = append(items, fmt.Sprintf("%s stopped reporting: last sample %s", s.Name(), s.LastSeen.In(loc).Format(timeLayout+" MST")))
		}
		items = append(items, dq.MissingMetrics...)
		for _, l := range dq.Labels {
			items = append(items, "Labels: "+l)
		}
		add("Data quality", reply.Section{Items: items})
	}
	return out
}

// channelRef names a channel: "channel C0ML" (ids stay readable in text
// and in Slack alike).
func channelRef(id string) string {
	if id == "" {
		return "a channel"
	}
	return "channel " + id
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

func causeText(c string) string {
	if c == "" {
		return ""
	}
	return "cause " + c
}

func joinNonEmpty(sep string, parts ...string) string {
	var keep []string
	for _, p := range parts {
		if p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, sep)
}

// formatCounts is "fragmentation 2, batch-too-large 1" (largest first, then
// by name).
func formatCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sortByCount(keys, m)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// formatHours is "6 h", "3 h 10 min" or "45 min".
func formatHours(h float64) string {
	m := int(math.Round(h * 60))
	switch {
	case m < 60:
		return fmt.Sprintf("%d min", m)
	case m%60 == 0:
		return fmt.Sprintf("%d h", m/60)
	}
	return fmt.Sprintf("%d h %d min", m/60, m%60)
}

// formatNumber prints at most one decimal and drops a trailing ".0".
func formatNumber(v float64) string {
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

// formatBytes uses binary units, as nvidia-smi and PyTorch do.
func formatBytes(b int64) string {
	switch {
	case b >= 1<<30:
		return formatNumber(float64(b)/(1<<30)) + " GiB"
	case b >= 1<<20:
		return formatNumber(float64(b)/(1<<20)) + " MiB"
	}
	return strconv.FormatInt(b, 10) + " B"
}

func formatRatio(r float64) string { return formatNumber(r*100) + "%" }

func formatUSD(v float64) string { return fmt.Sprintf("$%.2f", v) }

// timeLayout is how every time in the digest is written: with its day, so
// a Wednesday-to-Wednesday window says which Wednesday ("Wed 25 Nov 23:55").
const timeLayout = "Mon 2 Jan 15:04"

// formatTime is t in loc as timeLayout writes it.
func formatTime(t time.Time, loc *time.Location) string { return t.In(loc).Format(timeLayout) }

// formatTimes writes times in order, the day once for the times on it:
// "Mon 8 Jan 03:15, 09:40; Tue 9 Jan 01:00".
func formatTimes(ts []time.Time, loc *time.Location) string {
	var days []string
	lastDay := ""
	for _, t := range ts {
		t = t.In(loc)
		day := t.Format("Mon 2 Jan")
		if day == lastDay {
			days[len(days)-1] += ", " + t.Format("15:04")
			continue
		}
		lastDay = day
		days = append(days, day+" "+t.Format("15:04"))
	}
	return strings.Join(days, "; ")
}

// formatOf is "78.9 of 79.6 GiB": a part and its whole in the whole's unit.
func formatOf(part, whole int64) string {
	unit, div := "GiB", float64(1<<30)
	if whole < 1<<30 {
		unit, div = "MiB", float64(1<<20)
	}
	return fmt.Sprintf("%s of %s %s", formatNumber(float64(part)/div), formatNumber(float64(whole)/div), unit)
}

// truncate cuts s to n runes, marking the cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
