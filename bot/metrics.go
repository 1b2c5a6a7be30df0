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

	outcomeInline       = "inline"       // answered in the response body
	outcomeDeferred     = "deferred"     // acked, answered later
	outcomeAccepted     = "accepted"     // event acked and queued
	outcomeDuplicate    = "duplicate"    // event id seen before
	outcomeChallenge    = "challenge"    // url_verification
	outcomeIgnored      = "ignored"      // not for us (other payload types)
	outcomeUnauthorized = "unauthorized" // bad or missing signature
	outcomeTooLarge     = "too_large"
	outcomeBadRequest   = "bad_request"
	outcomeUnavailable  = "unavailable" // shutting down or store down
)

// metrics are the bot's Prometheus collectors, on a registry of its own so
// tests and several Servers in one process do not collide.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	ooms     *prometheus.CounterVec
	apiErrs  *prometheus.CounterVec
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
	}
	m.reg.MustRegister(m.requests, m.latency, m.ooms, m.apiErrs,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observe(kind, outcome string, start time.Time) {
	m.requests.WithLabelValues(kind, outcome).Inc()
	m.latency.WithLabelValues(kind).Observe(time.Since(start).Seconds())
}

func (m *metrics) apiError(method string) { m.apiErrs.WithLabelValues(method).Inc() }

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
