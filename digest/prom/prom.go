// Package prom is the digest's Prometheus adapter: it runs the range queries
// over dcgm-exporter's series (docs/digest.md §2, §3), hands the results to
// digest/fleet as plain series, and says what kind of failure a failed query
// was (internal/errs): Unavailable when Prometheus could not be reached or
// did not answer in time, Internal when it answered but rejected or garbled
// the query. Nothing outside this package sees the Prometheus client's types.
package prom

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"golang.org/x/sync/errgroup"

	"github.com/vrambot/vrambot/digest/fleet"
	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/internal/redact"
)

// DefaultQueryTimeout bounds each Prometheus query; a digest makes seven.
const DefaultQueryTimeout = 30 * time.Second

// Source reads dcgm-exporter series from Prometheus.
type Source struct {
	api     v1.API
	address string // redacted, for messages
	timeout time.Duration
}

// Option configures a Source.
type Option func(*config)

type config struct {
	client  *http.Client
	timeout time.Duration
}

// WithHTTPClient makes the source use c (proxies, TLS, tests).
func WithHTTPClient(c *http.Client) Option {
	return func(pc *config) { pc.client = c }
}

// WithQueryTimeout bounds each query at d instead of DefaultQueryTimeout.
func WithQueryTimeout(d time.Duration) Option {
	return func(pc *config) { pc.timeout = d }
}

// New returns a source querying the Prometheus at address
// (VRAMBOT_PROMETHEUS_URL, e.g. "http://prometheus:9090"). A malformed
// address is an Invalid error.
func New(address string, opts ...Option) (*Source, error) {
	cfg := config{timeout: DefaultQueryTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	u, err := url.Parse(address)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, errs.New(errs.Invalid, "prometheus url %q: want http(s)://host[:port][/path]", redact.URL(address))
	}
	c, err := api.NewClient(api.Config{Address: address, Client: cfg.client})
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "prometheus client for %s", u.Redacted())
	}
	return &Source{api: v1.NewAPI(c), address: redact.URL(address), timeout: cfg.timeout}, nil
}

// Address is the Prometheus URL without credentials, query or fragment.
func (s *Source) Address() string { return s.address }

// query is one range query of the digest and where its result goes.
type query struct {
	name string
	expr string
	dst  *[]fleet.Series
}

// Fleet runs the digest's range queries over w and reduces them to per-GPU
// and per-job facts.
func (s *Source) Fleet(ctx context.Context, w fleet.Window, th fleet.Thresholds) (fleet.Fleet, error) {
	if err := w.Validate(); err != nil {
		return fleet.Fleet{}, err
	}
	step := fleet.StepFor(w.Duration())
	var raw fleet.Raw
	// Each point at t summarises the bucket (t-step, t]. The selector is one
	// millisecond short of the step so that a sample on a bucket edge is
	// counted once, on Prometheus 2.x (closed ranges) and 3.x (left-open) alike.
	sel := "[" + model.Duration(step-time.Millisecond).String() + "]"
	over := func(fn, metric string) string { return fn + "(" + metric + sel + ")" }
	queries := []query{
		{fleet.MetricFBUsed + " max", over("max_over_time", fleet.MetricFBUsed), &raw.UsedMax},
		{fleet.MetricFBUsed + " avg", over("avg_over_time", fleet.MetricFBUsed), &raw.UsedAvg},
		{fleet.MetricFBUsed + " min", over("min_over_time", fleet.MetricFBUsed), &raw.UsedMin},
		{fleet.MetricFBFree, over("avg_over_time", fleet.MetricFBFree), &raw.Free},
		{fleet.MetricFBReserved, over("avg_over_time", fleet.MetricFBReserved), &raw.Reserved},
		{fleet.MetricEngineActive, over("avg_over_time", fleet.MetricEngineActive), &raw.Engine},
		{fleet.MetricGPUUtil, over("avg_over_time", fleet.MetricGPUUtil), &raw.Util},
	}
	n := w.Buckets(step)
	r := v1.Range{Start: w.BucketEnd(0, n, step), End: w.End, Step: step}
	g, gctx := errgroup.WithContext(ctx)
	for _, q := range queries {
		g.Go(func() error {
			m, err := s.queryRange(gctx, q, r)
			if err != nil {
				return err
			}
			*q.dst = toSeries(m)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return fleet.Fleet{}, err
	}
	return fleet.Analyze(w, step, th, raw), nil
}

func (s *Source) queryRange(ctx context.Context, q query, r v1.Range) (model.Matrix, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, s.timeout, fmt.Errorf("prometheus query timeout (%s) reached", s.timeout))
	defer cancel()
	val, _, _, err := s.api.QueryRange(ctx, q.expr, r, v1.WithTimeout(s.timeout))
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w (%w)", err, cause)
		}
		return nil, s.classify(q, redact.Error(err, redact.URL))
	}
	m, ok := val.(model.Matrix)
	if !ok {
		return nil, errs.New(errs.Internal, "prometheus %s: query %s: got a %s, want a matrix", s.address, q.name, val.Type())
	}
	return m, nil
}

// classify gives a failed query its kind. Prometheus' own error types
// (docs/digest.md §3.1): bad_data and execution mean it answered and
// rejected the query, bad_response that the answer was not Prometheus';
// timeout, canceled, server errors, other 4xx codes (a proxy, a login page,
// a wrong path) and transport failures mean it could not be asked.
func (s *Source) classify(q query, err error) error {
	kind := errs.Unavailable
	var apiErr *v1.Error
	if errors.As(err, &apiErr) {
		switch apiErr.Type {
		case v1.ErrBadData, v1.ErrExec, v1.ErrBadResponse:
			kind = errs.Internal
		}
	}
	return errs.Wrap(kind, err, "prometheus %s: query %s", s.address, q.name)
}

// toSeries copies a matrix into fleet's plain series.
func toSeries(m model.Matrix) []fleet.Series {
	out := make([]fleet.Series, 0, len(m))
	for _, ss := range m {
		l := make(map[string]string, len(ss.Metric))
		for k, v := range ss.Metric {
			l[string(k)] = string(v)
		}
		pts := make([]fleet.Point, 0, len(ss.Values))
		for _, p := range ss.Values {
			pts = append(pts, fleet.Point{T: p.Timestamp.Time(), V: float64(p.Value)})
		}
		out = append(out, fleet.Series{Labels: l, Points: pts})
	}
	return out
}
