package bot

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy bounds the retries of one call to Slack (a Web API method, a
// response_url follow-up, an upload or a download). Slack's own advice
// (docs/slack.md §rate limits; api.slack.com/apis/rate-limits) is to back
// off and retry on 429 after Retry-After, and on 5xx and connection errors.
type RetryPolicy struct {
	// Deadline bounds all attempts of one call together.
	Deadline time.Duration
	// AttemptTimeout bounds one attempt, so that a hung answer is retried.
	AttemptTimeout time.Duration
	// BaseDelay is the first backoff; each retry doubles it up to MaxDelay.
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// MaxAttempts counts the first try.
	MaxAttempts int
}

// DefaultRetryPolicy: a call gets up to 6 tries within 30 s, each at most
// 10 s (Slack answers a healthy call in well under a second), backing off
// 250 ms, 500 ms, 1 s, 2 s, 4 s with jitter.
var DefaultRetryPolicy = RetryPolicy{
	Deadline:       30 * time.Second,
	AttemptTimeout: 10 * time.Second,
	BaseDelay:      250 * time.Millisecond,
	MaxDelay:       4 * time.Second,
	MaxAttempts:    6,
}

func (p *RetryPolicy) setDefaults() {
	d := DefaultRetryPolicy
	if p.Deadline <= 0 {
		p.Deadline = d.Deadline
	}
	if p.AttemptTimeout <= 0 {
		p.AttemptTimeout = d.AttemptTimeout
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = d.BaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = d.MaxDelay
	}
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = d.MaxAttempts
	}
}

// backoff is the wait before retry number n (1-based): BaseDelay·2^(n-1)
// capped at MaxDelay, with "equal jitter" (half fixed, half random) so that
// replicas retrying together spread out.
func (p RetryPolicy) backoff(n int) time.Duration {
	d := p.BaseDelay << min(n-1, 16)
	if d <= 0 || d > p.MaxDelay {
		d = p.MaxDelay
	}
	return d/2 + rand.N(d/2+1)
}

// retryTransport is the RoundTripper under every Slack call the bot makes:
// it retries connection errors, hung attempts, 5xx and 429 under a
// RetryPolicy. A request whose body cannot be replayed (no GetBody) is sent
// once. The caller's context still ends everything.
type retryTransport struct {
	next    http.RoundTripper
	policy  RetryPolicy
	apiPath string // path prefix of the Web API base URL, to name methods
	metrics *metrics
}

// callLabelKey carries the metrics label of a call that is not a Web API
// method (response_url, download, upload).
type callLabelKey struct{}

func withCallLabel(ctx context.Context, label string) context.Context {
	return context.WithValue(ctx, callLabelKey{}, label)
}

// methodRE matches a Web API method name (chat.postMessage); anything else
// is labelled "other", so no URL text becomes a label value.
var methodRE = regexp.MustCompile(`^[a-z]+(\.[a-zA-Z]+){1,3}$`)

func (t *retryTransport) label(req *http.Request) string {
	if l, ok := req.Context().Value(callLabelKey{}).(string); ok {
		return l
	}
	if m, ok := strings.CutPrefix(req.URL.Path, t.apiPath); ok && methodRE.MatchString(m) {
		return m
	}
	return "other"
}

// Retry reasons (a closed label set).
const (
	retryServerError = "server_error"
	retryRateLimited = "rate_limited"
	retryConnection  = "connection"
	retryTimeout     = "attempt_timeout"
)

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	deadline := time.Now().Add(t.policy.Deadline)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	for attempt := 1; ; attempt++ {
		try := req
		if attempt > 1 {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			try = req.Clone(ctx)
			try.Body = body
		}
		attemptEnd := time.Now().Add(t.policy.AttemptTimeout)
		if deadline.Before(attemptEnd) {
			attemptEnd = deadline
		}
		actx, cancel := context.WithDeadline(ctx, attemptEnd)
		resp, err := t.next.RoundTrip(try.WithContext(actx))
		if ctx.Err() != nil {
			cancel()
			if resp != nil {
				resp.Body.Close()
			}
			return nil, ctx.Err()
		}
		reason, wait := t.classify(resp, err, actx)
		if reason == "" {
			// Done: the attempt's context lives until the body is closed.
			resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
			return resp, nil
		}
		if wait == 0 {
			wait = t.policy.backoff(attempt)
		}
		if !replayable || attempt >= t.policy.MaxAttempts || time.Now().Add(wait).After(deadline) {
			// Out of tries: hand back the last answer as it is.
			if resp != nil {
				resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
				return resp, nil
			}
			cancel()
			return nil, err
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}
		cancel()
		t.metrics.retry(t.label(req), reason)
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
}

// classify names why an attempt should be retried ("" when it should not)
// and how long Slack asked to wait (0: back off).
func (t *retryTransport) classify(resp *http.Response, err error, actx context.Context) (reason string, wait time.Duration) {
	switch {
	case err != nil && errors.Is(actx.Err(), context.DeadlineExceeded):
		return retryTimeout, 0
	case err != nil:
		return retryConnection, 0
	case resp.StatusCode == http.StatusTooManyRequests:
		wait = time.Second // Slack always sends Retry-After; a second if not
		if s, perr := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); perr == nil && s > 0 {
			wait = time.Duration(s) * time.Second
		}
		return retryRateLimited, wait
	case resp.StatusCode >= http.StatusInternalServerError:
		return retryServerError, 0
	}
	return "", 0
}

// cancelOnClose ends an attempt's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
