// Package digest builds the scheduled cluster GPU-memory digest (DESIGN.md §7):
// per-GPU facts from dcgm-exporter series in Prometheus, the OOM events the
// bot saw in Slack, their composition into a Digest (JSON for
// `vrambot digest --json`, a reply.Reply for Slack and the CLI), a PNG chart,
// and a cron scheduler that posts exactly one digest per period across
// replicas sharing one store.
package digest
