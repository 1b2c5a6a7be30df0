package bot

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Request kinds and outcomes used as metric labels. Both sets are closed so
// that no untrusted text becomes a label value.
const (
	kindCommand     = "command"
	kindEvent       = "event"
	kindInteraction = "interaction"
	kindHome        = "home" // the Home tab publisher

	outcomeInline       = "inline"       // answered in the response body
	outcomeDeferred     = "deferred"     // acked, answered later
	outcomeAccepted     = "accepted"     // event acked and queued
	outcomeDuplicate    = "duplicate"    // answered before (a retry or a replay)
	outcomeInProgress   = "in_progress"  // being answered by another delivery: Slack retries later
	outcomeChallenge    = "challenge"    // url_verification
	outcomeIgnored      = "ignored"      // not for us (other payload types)
	outcomeUnauthorized = "unauthorized" // bad or missing signature
	outcomeTooLarge     = "too_large"
	outcomeBadRequest   = "bad_request"
	outcomeUnavailable  = "unavailable" // shutting down, full, or the store did not answer
)

// metrics are the bot's Prometheus collectors, on a registry of its own so
// tests and several Servers in one process do not collide.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	ooms     *prometheus.CounterVec
	apiErrs  *prometheus.CounterVec
	retries  *prometheus.CounterVec
	failed   *prometheus.CounterVec
	refusals *prometheus.CounterVec
	drops    *prometheus.CounterVec
	dedupe   *prometheus.CounterVec
	votes    *prometheus.CounterVec
	overflow prometheus.Counter
	hub      *prometheus.CounterVec
	home     *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vrambot_slack_requests_total",
			Help: "Slack requests received, by kind and outcome.",
		}, []string{"kind", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "vrambot_slack_request_duration_seconds",
			Help:    "Time to acknowledge a Slack request, by kind.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2, 2.5, 3, 5},
		}, []string{"kind"}),
		ooms: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vrambot_ooms_parsed_total",
			Help: "Out-of-memory errors recognised in Slack messages, by format.",
		}, []string{"format"}),
		apiErrs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vrambot_slack_api_errors_total",
			Help: "Failed Slack Web API calls, by method.",
		}, []string{"method"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vrambot_slack_api_retries_total",
			Help: "Slack calls retried, by method and reason (server_error, rate_limited, connection, attempt_timeout).",
		}, []string{"method", "reason"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vrambot_slack_answers_failed_total",
			Help: "Answers that could not be delivered after every retry, by request kind and reason.",
		}, []string{"kind", "reason"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vrambot_slack_work_refused_total",
			Help: "Requests not admitted because the bot was draining or full, by kind.",
		}, []string{"kind"}),
		drops: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vrambot_slack_drain_dropped_total",
			Help: "Acked work cancelled because the shutdown drain ran out of time, by kind.",
		}, []string{"kind"}),
		dedupe: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vrambot_slack_dedupe_errors_total",
			Help: "Dedupe claims the store did not answer, by kind.",
		}, []string{"kind"}),
		votes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vrambot_feedback_total",
			Help: "👍 and 👎 given to answers, by answer kind (vram, oom) and vote (up, down).",
		}, []string{"kind", "vote"}),
		overflow: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vrambot_slack_channel_queue_full_total",
			Help: "Posts refused because their channel's queue was full.",
		}),
		hub: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vrambot_slack_hub_lookups_total",
			Help: "Hub lookups ahead of an answer, by outcome (looked_up, refused: queue full, timed_out: no slot in time).",
		}, []string{"outcome"}),
		home: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vrambot_slack_home_views_total",
			Help: "Home tab opens, by outcome (published, fresh: published for that user within a minute, coalesced: already waiting, dropped: queue full or shutting down, failed).",
		}, []string{"outcome"}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.ooms, m.apiErrs, m.retries, m.failed, m.refusals, m.drops, m.dedupe, m.votes, m.overflow, m.hub, m.home,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observe(kind, outcome string, start time.Time) {
	m.requests.WithLabelValues(kind, outcome).Inc()
	m.latency.WithLabelValues(kind).Observe(time.Since(start).Seconds())
}

func (m *metrics) apiError(method string) { m.apiErrs.WithLabelValues(method).Inc() }

func (m *metrics) retry(method, reason string) { m.retries.WithLabelValues(method, reason).Inc() }

func (m *metrics) answerFailed(kind, reason string) { m.failed.WithLabelValues(kind, reason).Inc() }

func (m *metrics) refused(kind string) { m.refusals.WithLabelValues(kind).Inc() }

func (m *metrics) dropped(kind string) { m.drops.WithLabelValues(kind).Inc() }

func (m *metrics) dedupeError(kind string) { m.dedupe.WithLabelValues(kind).Inc() }

func (m *metrics) queueFull() { m.overflow.Inc() }

func (m *metrics) hubLookup(outcome string) { m.hub.WithLabelValues(outcome).Inc() }

func (m *metrics) homeView(outcome string) { m.home.WithLabelValues(outcome).Inc() }

// feedbackVote counts a vote; kind and vote come from closed sets.
func (m *metrics) feedbackVote(kind, vote string) { m.votes.WithLabelValues(kind, vote).Inc() }

// maxFormatLabel bounds the format label; formats come from our parser's
// vocabulary, the bound is a guard against a change there.
const maxFormatLabel = 32

func (m *metrics) oom(format string) {
	if format == "" {
		format = "unknown"
	}
	m.ooms.WithLabelValues(truncateRunes(format, maxFormatLabel)).Inc()
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}
