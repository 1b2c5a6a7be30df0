package oom

import (
	"fmt"
	"math"
	"regexp"
	"strconv"

	"github.com/vrambot/vrambot/advisor/fix"
)

// Readings of the ranks a paste shows (docs/oom-diagnosis.md §5): two
// processes writing their tracebacks over each other, the same OOM on
// several GPUs of one job, ranks of one engine that see different budgets.

// Cause IDs of these readings.
const (
	CauseReplicated = "every-rank-holds-the-whole-model"
	CauseRankUneven = "one-rank-has-less-memory"
)

var (
	reTracebackHead = regexp.MustCompile(`(?m)^[^\n]{0,60}Traceback \(most recent call last\):`)
	reFrameLine     = regexp.MustCompile(`(?m)^[^\n]{0,60}\bFile "[^"\n]{1,400}", line \d+`)
	reChained       = regexp.MustCompile(`During handling of the above exception|The above exception was the direct cause`)
	reOOMDevice     = regexp.MustCompile(`Tried to allocate [^\n]{0,40}?\((?:GPU|XPU|NPU) (\d+);|(?:GPU|XPU|NPU) (\d+) has a total capacity`)
	reRankKV        = regexp.MustCompile(`Available KV cache memory: (-?\d+(?:\.\d+)?) GiB`)
)

// interleavedTracebacks reports a traceback whose frames come before its
// header, or two headers, where no exception was chained to another: two
// processes (ranks) wrote to one terminal at once.
func interleavedTracebacks(text string) bool {
	if reChained.MatchString(text) {
		return false
	}
	heads := reTracebackHead.FindAllStringIndex(text, 2)
	switch len(heads) {
	case 0:
		return false
	case 2:
		return true
	}
	f := reFrameLine.FindStringIndex(text)
	return f != nil && f[0] < heads[0][0]
}

// oomDevices counts the distinct devices the paste's allocator messages
// name: one job's ranks each running out.
func oomDevices(text string) int {
	seen := map[string]bool{}
	for _, m := range reOOMDevice.FindAllStringSubmatch(text, 64) {
		seen[m[1]+m[2]] = true
	}
	return len(seen)
}

// replicated reports a training job whose every rank ran out with its GPU
// full and nothing sharded: data parallelism keeps a whole copy of the
// model states on each GPU, so the GPUs it has are the fix.
func (b *builder) replicated() bool {
	r, j := b.r, b.r.Job
	if !torchTraining(r) || j == nil || j.Sharding != nil || j.ZeroStage != nil && *j.ZeroStage >= 2 {
		return false
	}
	if j.Method != nil && *j.Method != "full" || r.TotalCapacityBytes == nil || r.AllocatedByFrameworkBytes == nil {
		return false
	}
	n := oomDevices(r.Facts.text)
	if n < 2 || float64(*r.AllocatedByFrameworkBytes) < 0.9*float64(*r.TotalCapacityBytes) {
		return false
	}
	steps := b.nextSteps([]string{fix.Zero2})
	b.cause(CauseReplicated, "Every GPU holds a whole copy of the model states",
		fmt.Sprintf("the same OOM on %d GPUs, each with %s of %s allocated, and nothing in the paste shards the model: each rank keeps all the weights, gradients and optimizer states", n, GiB(*r.AllocatedByFrameworkBytes), GiB(*r.TotalCapacityBytes)),
		append(steps, fix.GradAccum, fix.GradCheckpointing)...)
	b.setLead("model states copied on every GPU", steps...)
	return true
}

// rankBudgets reads vLLM's per-worker KV budgets: the least and the most.
func rankBudgets(text string) (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, m := range reRankKV.FindAllStringSubmatch(text, 64) {
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			continue
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	return lo, hi, hi > lo
}

// unevenRanks reads ranks of one vLLM model that see different budgets,
// one of them none: the same weights and profile on each, so something
// else holds that rank's GPU.
func (b *builder) unevenRanks() bool {
	lo, hi, ok := rankBudgets(b.r.Facts.text)
	if !ok || lo >= 0 || hi <= 0 {
		return false
	}
	b.cause(CauseRankUneven, "One rank's GPU has less memory free than the others'",
		fmt.Sprintf("vLLM's workers of one model logged from %.2f to %.2f GiB of KV cache memory: each holds the same share of the weights, so another process holds memory on the GPU of the rank left with none", lo, hi),
		fix.KillOtherProcess, fix.LowerGPUMemoryUtil)
	b.setLead("memory another process holds on one rank's GPU", fix.KillOtherProcess, fix.LowerGPUMemoryUtil)
	return true
}
