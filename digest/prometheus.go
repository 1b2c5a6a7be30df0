package digest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/vrambot/vrambot/internal/redact"
	"golang.org/x/sync/errgroup"
)

// dcgm-exporter metric names (digest.md §1.1). Memory is in MiB; there is no
// total-memory metric by default, so total = used + free (+ reserved).
const (
	metricFBUsed       = "DCGM_FI_DEV_FB_USED"
	metricFBFree       = "DCGM_FI_DEV_FB_FREE"
	metricFBReserved   = "DCGM_FI_DEV_FB_RESERVED"
	metricEngineActive = "DCGM_FI_PROF_GR_ENGINE_ACTIVE" // ratio 0..1, works on MIG
	metricGPUUtil      = "DCGM_FI_DEV_GPU_UTIL"          // percent, coarse, not on MIG
)

// DefaultQueryTimeout bounds each Prometheus query; a digest makes six.
const DefaultQueryTimeout = 30 * time.Second

// PromSource reads dcgm-exporter series from Prometheus.
type PromSource struct {
	api     v1.API
	address string // redacted, for messages
	timeout time.Duration
}

var _ Metrics = (*PromSource)(nil)

// PromOption configures a PromSource.
type PromOption func(*promConfig)

type promConfig struct {
	client  *http.Client
	timeout time.Duration
}

// WithHTTPClient makes the source use c (proxies, TLS, tests).
func WithHTTPClient(c *http.Client) PromOption {
	return func(pc *promConfig) { pc.client = c }
}

// WithQueryTimeout bounds each query at d instead of DefaultQueryTimeout.
func WithQueryTimeout(d time.Duration) PromOption {
	return func(pc *promConfig) { pc.timeout = d }
}

// NewPrometheus returns a source querying the Prometheus at address
// (VRAMBOT_PROMETHEUS_URL, e.g. "http://prometheus:9090").
func NewPrometheus(address string, opts ...PromOption) (*PromSource, error) {
	cfg := promConfig{timeout: DefaultQueryTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	u, err := url.Parse(address)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("prometheus url %q: want http(s)://host[:port][/path]", redact.URL(address))
	}
	c, err := api.NewClient(api.Config{Address: address, Client: cfg.client})
	if err != nil {
		return nil, fmt.Errorf("prometheus client for %s: %w", u.Redacted(), err)
	}
	return &PromSource{api: v1.NewAPI(c), address: u.Redacted(), timeout: cfg.timeout}, nil
}

// Address is the Prometheus URL with any password redacted.
func (p *PromSource) Address() string { return p.address }

// promQuery is one range query of the digest and where its result goes.
type promQuery struct {
	name string
	expr string
	dst  *model.Matrix
}

// Fleet runs the digest's range queries over w and reduces them to per-GPU facts.
func (p *PromSource) Fleet(ctx context.Context, w Window, th Thresholds) (Fleet, error) {
	if err := w.validate(); err != nil {
		return Fleet{}, err
	}
	step := StepFor(w.Duration())
	var res rawSeries
	// Each point at t summarises the bucket (t-step, t]. The selector is one
	// millisecond short of the step so that a sample on a bucket edge is
	// counted once, on Prometheus 2.x (closed ranges) and 3.x (left-open) alike.
	sel := "[" + model.Duration(step-time.Millisecond).String() + "]"
	queries := []promQuery{
		{metricFBUsed + " max", "max_over_time(" + metricFBUsed + sel + ")", &res.usedMax},
		{metricFBUsed + " avg", "avg_over_time(" + metricFBUsed + sel + ")", &res.usedAvg},
		{metricFBFree, "avg_over_time(" + metricFBFree + sel + ")", &res.free},
		{metricFBReserved, "avg_over_time(" + metricFBReserved + sel + ")", &res.reserved},
		{metricEngineActive, "avg_over_time(" + metricEngineActive + sel + ")", &res.engine},
		{metricGPUUtil, "avg_over_time(" + metricGPUUtil + sel + ")", &res.util},
	}
	n := int(w.Duration() / step)
	r := v1.Range{Start: w.End.Add(-time.Duration(n-1) * step), End: w.End, Step: step}
	g, gctx := errgroup.WithContext(ctx)
	for _, q := range queries {
		g.Go(func() error {
			m, err := p.queryRange(gctx, q, r)
			if err != nil {
				return err
			}
			*q.dst = m
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return Fleet{}, err
	}
	return analyze(w, step, th, res), nil
}

func (p *PromSource) queryRange(ctx context.Context, q promQuery, r v1.Range) (model.Matrix, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, p.timeout, fmt.Errorf("prometheus query timeout (%s) reached", p.timeout))
	defer cancel()
	val, _, _, err := p.api.QueryRange(ctx, q.expr, r, v1.WithTimeout(p.timeout))
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: query %s: %w", p.address, q.name, redact.Error(err, redact.URL))
	}
	m, ok := val.(model.Matrix)
	if !ok {
		return nil, fmt.Errorf("prometheus %s: query %s: got a %s, want a matrix", p.address, q.name, val.Type())
	}
	return m, nil
}
