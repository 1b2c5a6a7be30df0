package accuracy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vrambot/vrambot/advisor/memory"
)

// parallelismOrder is the report order of the parallelism classes.
var parallelismOrder = []memory.Parallelism{
	memory.ParallelSingle, memory.ParallelDDP, memory.ParallelFSDP, memory.ParallelFSDPOffload,
	memory.ParallelZeRO, memory.ParallelZeROOffload, memory.ParallelModelSplit,
}

// CellSummary is the estimator's accuracy on the judged cases of one
// method under one parallelism: the cells the replies' error bands come
// from (docs/memory-model.md §6.7).
type CellSummary struct {
	Method      memory.Method
	Parallelism memory.Parallelism
	Summary     Summary
}

// Cells is the estimator's summary per method and parallelism, in
// memory.BandMethods and parallelismOrder order (empty cells left out).
func (rep Report) Cells() []CellSummary {
	var out []CellSummary
	for _, m := range memory.BandMethods {
		for _, p := range parallelismOrder {
			var rows []Row
			for _, r := range rep.Rows {
				if r.Method == m && r.Parallelism == p {
					rows = append(rows, r)
				}
			}
			if len(rows) > 0 {
				out = append(out, CellSummary{Method: m, Parallelism: p, Summary: summarize(RuleEstimator, rows)})
			}
		}
	}
	return out
}

// CategorySummary is the estimator on one category's cases: the judged
// ones' summary and the upper bounds with how many read more than
// MaxUnderBoundPct under their measurement.
type CategorySummary struct {
	Category                     string
	Summary                      Summary
	UpperBounds, BoundViolations int
}

// Categories summarises every category a case names, sorted; empty when
// no case names one.
func (rep Report) Categories() []CategorySummary {
	var names []string
	for _, rows := range [][]Row{rep.Rows, rep.UpperBounds} {
		for _, r := range rows {
			if r.Category != "" && !slices.Contains(names, r.Category) {
				names = append(names, r.Category)
			}
		}
	}
	slices.Sort(names)
	violations := rep.BoundViolations()
	var out []CategorySummary
	for _, name := range names {
		cs := CategorySummary{Category: name}
		var rows []Row
		for _, r := range rep.Rows {
			if r.Category == name {
				rows = append(rows, r)
			}
		}
		cs.Summary = summarize(RuleEstimator, rows)
		for _, r := range rep.UpperBounds {
			if r.Category == name {
				cs.UpperBounds++
			}
		}
		for _, r := range violations {
			if r.Category == name {
				cs.BoundViolations++
			}
		}
		out = append(out, cs)
	}
	return out
}

// writeGroups writes the per method-and-parallelism table and, when the
// cases name categories, the per-category one.
func (rep Report) writeGroups(b *strings.Builder) {
	cells := rep.Cells()
	if len(cells) > 0 {
		fmt.Fprintf(b, "\nper method and parallelism (estimator): cases, median |error|, within 25%%, p90\n")
		for _, c := range cells {
			s := c.Summary
			fmt.Fprintf(b, "%-10s %-13s %5d %7.1f%% %7.1f%% %7.1f%%\n", c.Method, c.Parallelism, s.Cases, s.MedianAbsErrPct, 100*s.Within25PctShare, s.P90AbsErrPct)
		}
	}
	cats := rep.Categories()
	if len(cats) == 0 {
		return
	}
	fmt.Fprintf(b, "\nper category (estimator): judged cases, median |error|, within 25%%; upper bounds (more than %d%% under)\n", MaxUnderBoundPct)
	for _, c := range cats {
		s := c.Summary
		fmt.Fprintf(b, "%-16s %5d %7.1f%% %7.1f%%   %3d (%d)\n", c.Category, s.Cases, s.MedianAbsErrPct, 100*s.Within25PctShare, c.UpperBounds, c.BoundViolations)
	}
}
