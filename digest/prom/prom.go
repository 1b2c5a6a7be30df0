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
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"golang.org/x/sync/errgroup"

	"github.com/vrambot/vrambot/digest/fleet"
	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/internal/redact"
)

// DefaultQueryTimeout bounds each Prometheus query; a digest makes eight
// (a count of the fleet, then seven range queries).
const DefaultQueryTimeout = 30 * time.Second

// Bounds of what the digest reads from Prometheus, whatever it answers
// (issue 26: a Prometheus returning huge series, NaN, negative memory,
// 10,000 GPUs, label values with Slack markup).
const (
	// maxPointsPerQuery bounds the samples of one range query: about
	// 32 MiB once read (a fleet.Point is 32 bytes), so the seven queries
	// hold under a quarter GiB. A fleet whose GPUs times buckets would pass
	// it is read in coarser buckets: up to 3,640 GPUs keep a day's 288
	// five-minute buckets, 10,000 GPUs get 14-minute ones.
	maxPointsPerQuery = 1 << 20
	// maxSeriesPerQuery bounds the series of one query (GPUs and MIG
	// slices), past which the digest refuses the answer.
	maxSeriesPerQuery = 1 << 16
	// maxResponseBytes bounds one answer's body: maxPointsPerQuery samples
	// of about 25 bytes of JSON and maxSeriesPerQuery label sets.
	maxResponseBytes = 128 << 20
	// queriesAtOnce bounds the range queries run at once, so their
	// answers are not all held in memory together.
	queriesAtOnce = 2
	// maxLabelBytes cuts a label value to the longest Kubernetes object
	// or DNS name (253, RFC 1123); nothing real is longer.
	maxLabelBytes = 253
	// maxMemoryMiB bounds a memory sample: 4 TiB, ten times any GPU's.
	maxMemoryMiB = 4 << 20
)

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
	client := http.Client{}
	if cfg.client != nil {
		client = *cfg.client
	}
	next := client.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	client.Transport = limitedTransport{next: next, max: maxResponseBytes}
	c, err := api.NewClient(api.Config{Address: address, Client: &client})
	if err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "prometheus client for %s", u.Redacted())
	}
	return &Source{api: v1.NewAPI(c), address: redact.URL(address), timeout: cfg.timeout}, nil
}

// Address is the Prometheus URL without credentials, query or fragment.
func (s *Source) Address() string { return s.address }

// query is one range query of the digest and where its result goes.
type query struct {
	name  string
	expr  string
	dst   *[]fleet.Series
	valid func(float64) bool // a sample the metric can hold
}

// Fleet runs the digest's range queries over w and reduces them to per-GPU
// and per-job facts.
func (s *Source) Fleet(ctx context.Context, w fleet.Window, th fleet.Thresholds) (fleet.Fleet, error) {
	if err := w.Validate(); err != nil {
		return fleet.Fleet{}, err
	}
	step := s.stepFor(ctx, w)
	var raw fleet.Raw
	// Each point at t summarises the bucket (t-step, t]. The selector is one
	// millisecond short of the step so that a sample on a bucket edge is
	// counted once, on Prometheus 2.x (closed ranges) and 3.x (left-open) alike.
	sel := "[" + model.Duration(step-time.Millisecond).String() + "]"
	over := func(fn, metric string) string { return fn + "(" + metric + sel + ")" }
	queries := []query{
		{fleet.MetricFBUsed + " max", over("max_over_time", fleet.MetricFBUsed), &raw.UsedMax, validMemory},
		{fleet.MetricFBUsed + " avg", over("avg_over_time", fleet.MetricFBUsed), &raw.UsedAvg, validMemory},
		{fleet.MetricFBUsed + " min", over("min_over_time", fleet.MetricFBUsed), &raw.UsedMin, validMemory},
		{fleet.MetricFBFree, over("avg_over_time", fleet.MetricFBFree), &raw.Free, validMemory},
		{fleet.MetricFBReserved, over("avg_over_time", fleet.MetricFBReserved), &raw.Reserved, validMemory},
		{fleet.MetricEngineActive, over("avg_over_time", fleet.MetricEngineActive), &raw.Engine, validRatio},
		{fleet.MetricGPUUtil, over("avg_over_time", fleet.MetricGPUUtil), &raw.Util, validPercent},
	}
	n := w.Buckets(step)
	r := v1.Range{Start: w.BucketEnd(0, n, step), End: w.End, Step: step}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(queriesAtOnce)
	for _, q := range queries {
		g.Go(func() error {
			m, err := s.queryRange(gctx, q, r)
			if err != nil {
				return err
			}
			if len(m) > maxSeriesPerQuery {
				return errs.New(errs.Internal, "prometheus %s: query %s: %d series, more than the digest reads (%d)", s.address, q.name, len(m), maxSeriesPerQuery)
			}
			*q.dst = toSeries(m, q.valid)
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

// toSeries copies a matrix into fleet's plain series, dropping samples
// the metric cannot hold (NaN, infinities, negative memory, a ratio past
// 1): fleet reads a dropped sample as a gap. Label values are cut to
// maxLabelBytes and control characters become spaces, so no label can
// break a line of the digest or outgrow a Slack block.
func toSeries(m model.Matrix, valid func(float64) bool) []fleet.Series {
	out := make([]fleet.Series, 0, len(m))
	for _, ss := range m {
		l := make(map[string]string, len(ss.Metric))
		for k, v := range ss.Metric {
			l[string(k)] = cleanLabel(string(v))
		}
		pts := make([]fleet.Point, 0, len(ss.Values))
		for _, p := range ss.Values {
			if v := float64(p.Value); valid(v) {
				pts = append(pts, fleet.Point{T: p.Timestamp.Time(), V: v})
			}
		}
		out = append(out, fleet.Series{Labels: l, Points: pts})
	}
	return out
}

// Samples each metric can hold: memory in MiB, a ratio (engine active,
// 0 to 1) and a percentage (utilisation, 0 to 100), with a little room for
// a counter's rounding.
func validMemory(v float64) bool  { return v >= 0 && v <= maxMemoryMiB }
func validRatio(v float64) bool   { return v >= 0 && v <= 1.001 }
func validPercent(v float64) bool { return v >= 0 && v <= 100.1 }

// cleanLabel cuts v to maxLabelBytes (at a rune boundary) and turns
// control characters into spaces.
func cleanLabel(v string) string {
	if len(v) > maxLabelBytes {
		cut := maxLabelBytes
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		v = v[:cut]
	}
	if strings.IndexFunc(v, unicode.IsControl) < 0 {
		return v
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, v)
}

// stepFor is the bucket width for w: fleet.StepFor's, or coarser when the
// fleet is so large that a query would pass maxPointsPerQuery. The fleet
// is counted with one instant query; when that fails, the usual step is
// used and the range queries report the failure.
func (s *Source) stepFor(ctx context.Context, w fleet.Window) time.Duration {
	step := fleet.StepFor(w.Duration())
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	expr := "count(max_over_time(" + fleet.MetricFBUsed + "[" + model.Duration(w.Duration()).String() + "]))"
	val, _, _, err := s.api.Query(ctx, expr, w.End, v1.WithTimeout(s.timeout))
	if err != nil {
		return step
	}
	vec, ok := val.(model.Vector)
	if !ok || len(vec) != 1 || !(float64(vec[0].Value) > 0) {
		return step
	}
	return stepForFleet(w.Duration(), step, float64(vec[0].Value))
}

// stepForFleet widens step until gpus series of d/step buckets fit in
// maxPointsPerQuery, in whole minutes.
func stepForFleet(d, step time.Duration, gpus float64) time.Duration {
	buckets := math.Floor(maxPointsPerQuery / gpus)
	if buckets >= float64(d/step) {
		return step
	}
	wide := time.Duration(math.Ceil(float64(d) / max(buckets, 1)))
	if rem := wide % time.Minute; rem != 0 {
		wide += time.Minute - rem
	}
	return min(wide, d)
}

// limitedTransport refuses an answer whose body runs past max bytes.
type limitedTransport struct {
	next http.RoundTripper
	max  int64
}

func (t limitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > t.max {
		resp.Body.Close()
		return nil, errTooLarge
	}
	resp.Body = &limitedBody{ReadCloser: resp.Body, left: t.max}
	return resp, nil
}

// errTooLarge: an answer past maxResponseBytes.
var errTooLarge = fmt.Errorf("answer larger than %d MiB, more than the digest reads", maxResponseBytes>>20)

type limitedBody struct {
	io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
