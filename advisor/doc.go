// Package advisor is the pure domain core of vrambot: no I/O, no Slack, no
// Redis. Its subpackages each do one job:
//
//   - catalog: embedded GPU and model-architecture catalogs
//   - memory:  workloads and the per-GPU memory estimator
//   - plan:    the staged-fix planner (easiest fix first, re-estimated)
//   - oom:     the OOM paste parser and its diagnosis
//   - fix:     the staged-fix types shared by plan and oom
//   - rightsize: the smallest GPU (a smaller card or a MIG slice) that
//     holds a job the digest saw, and what it would save
package advisor
