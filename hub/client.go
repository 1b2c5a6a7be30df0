// Package hub is the Hugging Face Hub client: a model repo's config.json,
// its safetensors parameter count, and a search by name, spoken as
// huggingface_hub speaks the Hub's HTTP API (docs/hub-api.md). It is an
// edge: the model resolver (package models) uses it behind an interface of
// its own, and nothing in advisor/ knows it exists.
//
// The token (HF_TOKEN) goes only to the configured endpoint's origin: a
// redirect to any other scheme, host or port is followed without it.
// Every answer is read under a size cap and every request under a timeout.
package hub

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/vrambot/vrambot/advisor/hfconfig"
	"github.com/vrambot/vrambot/internal/jsonlimit"
	"github.com/vrambot/vrambot/internal/redact"
)

// DefaultEndpoint is huggingface_hub's default HF_ENDPOINT.
const DefaultEndpoint = "https://huggingface.co"

// DefaultTimeout bounds one request when Options.Timeout is zero: the
// default of huggingface_hub's HF_HUB_ETAG_TIMEOUT (docs/hub-api.md §1).
const DefaultTimeout = 10 * time.Second

// Size caps. A config.json is capped where the config reader caps it (one
// owner: advisor/hfconfig); a model-info answer limited to the safetensors
// field is a few hundred bytes, a search page of searchLimit hits a few KiB.
const (
	MaxConfigBytes = hfconfig.MaxConfigBytes
	maxInfoBytes   = 1 << 20
	maxSearchBytes = 1 << 20
	// maxErrorBytes is how much of an error answer is read to classify it.
	maxErrorBytes = 4 << 10
	// maxRedirects: a renamed repo answers with one relative redirect; a
	// chain longer than this is a loop or a misconfigured mirror.
	maxRedirects = 5
	// searchLimit is how many hits a name search asks for.
	searchLimit = 20
)

// userAgent names the client to the Hub, as huggingface_hub's headers do.
const userAgent = "vrambot (+https://github.com/vrambot/vrambot)"

// Options configure a Client.
type Options struct {
	// Endpoint is HF_ENDPOINT; "" means DefaultEndpoint. A trailing slash
	// is ignored.
	Endpoint string
	// Token is HF_TOKEN, sent as a bearer token to Endpoint's origin only.
	Token string
	// Timeout bounds each request (DefaultTimeout when zero).
	Timeout time.Duration
	// Transport carries the requests (http.DefaultTransport when nil).
	Transport http.RoundTripper
}

// Client calls the Hub. It is safe for concurrent use.
type Client struct {
	base    *url.URL
	token   string
	timeout time.Duration
	http    *http.Client
}

// New returns a Client for opts.Endpoint. It does no I/O.
func New(opts Options) (*Client, error) {
	raw := strings.TrimRight(opts.Endpoint, "/")
	if raw == "" {
		raw = DefaultEndpoint
	}
	base, err := url.Parse(raw)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" || base.User != nil {
		return nil, errors.New("hub: HF_ENDPOINT must be an http(s) base URL without credentials")
	}
	c := &Client{base: base, token: opts.Token, timeout: opts.Timeout}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	transport := opts.Transport
	if transport == nil {
		transport = http.DefaultTransport
	}
	c.http = &http.Client{Transport: transport, CheckRedirect: c.checkRedirect}
	return c, nil
}

// Endpoint is the Hub's base URL, for messages.
func (c *Client) Endpoint() string { return c.base.String() }

// HasToken reports whether requests carry HF_TOKEN.
func (c *Client) HasToken() bool { return c.token != "" }

var errRedirectLoop = fmt.Errorf("more than %d redirects", maxRedirects)

// checkRedirect follows relative redirects (renamed repos) with the token
// and any other redirect without it (docs/hub-api.md §3). net/http calls it
// after copying the headers onto the next request, so deleting the header
// here removes it from that request.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return errRedirectLoop
	}
	if !sameOrigin(req.URL, c.base) {
		req.Header.Del("Authorization")
	}
	return nil
}

// sameOrigin compares scheme, host and port (the default port of the
// scheme when none is written).
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// Config returns the text of repo's config.json on its main revision:
// GET {endpoint}/{repo}/resolve/main/config.json. It checks only that the
// answer is a JSON object under MaxConfigBytes; reading it is
// advisor/hfconfig's job.
func (c *Client) Config(ctx context.Context, repo string) ([]byte, error) {
	if !ValidRepoID(repo) {
		return nil, invalidID(repo)
	}
	body, err := c.get(ctx, repo, "/"+repo+"/resolve/main/config.json", nil, MaxConfigBytes, "config.json")
	if err != nil {
		return nil, err
	}
	// An object with balanced brackets, checked without decoding it (the
	// reader bounds and decodes it): config.json files may hold NaN and
	// Infinity, which encoding/json refuses.
	if err := jsonObject(ctx, body); err != nil {
		return nil, &Error{Reason: ReasonNotJSON, Repo: repo, Status: http.StatusOK, Err: err,
			Message: fmt.Sprintf("the config.json of %s on the Hub is not a JSON object (is HF_ENDPOINT a Hugging Face Hub?)", repo)}
	}
	return body, nil
}

// errNotObject: the text does not start with '{'.
var errNotObject = errors.New("not a JSON object")

// jsonObject reports whether body reads as one JSON object: it starts with
// '{' and its brackets balance (internal/jsonlimit's scan, no allocation).
func jsonObject(ctx context.Context, body []byte) error {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return errNotObject
	}
	return jsonlimit.Check(ctx, trimmed, jsonlimit.Limits{Depth: jsonlimit.MaxDepth})
}

// Safetensors is the safetensors field of the Hub's model info: element
// counts of every tensor stored in the repo's *.safetensors files, by dtype
// (docs/hub-api.md §2). Packed formats count packed elements, not
// parameters.
type Safetensors struct {
	Parameters map[string]int64 `json:"parameters"`
	Total      int64            `json:"total"`
}

// Info returns the safetensors parameter count of repo:
// GET {endpoint}/api/models/{repo}?expand=safetensors. ok is false when the
// Hub has no count for it (no safetensors files, or a gated repo's listing
// without a token).
func (c *Client) Info(ctx context.Context, repo string) (st Safetensors, ok bool, err error) {
	if !ValidRepoID(repo) {
		return Safetensors{}, false, invalidID(repo)
	}
	body, err := c.get(ctx, repo, "/api/models/"+repo, url.Values{"expand": {"safetensors"}}, maxInfoBytes, "model info")
	if err != nil {
		return Safetensors{}, false, err
	}
	st, ok, err = ParseInfo(body)
	if err != nil {
		return Safetensors{}, false, &Error{Reason: ReasonNotJSON, Repo: repo, Status: http.StatusOK, Err: err,
			Message: fmt.Sprintf("the Hub's model info for %s is not the JSON it documents", repo)}
	}
	return st, ok, nil
}

// maxParams bounds a count read from the Hub: 100 trillion, ~50× the
// largest published model, so sums cannot overflow.
const maxParams = 1e14

// ParseInfo reads the safetensors field of a model-info answer. Counts
// must be whole, non-negative and below 1e14; total, when absent, is the
// sum over dtypes. ok is false when the answer has no usable count.
func ParseInfo(body []byte) (st Safetensors, ok bool, err error) {
	var doc struct {
		Safetensors *struct {
			Parameters map[string]json.Number `json:"parameters"`
			Total      *json.Number           `json:"total"`
		} `json:"safetensors"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return Safetensors{}, false, err
	}
	if doc.Safetensors == nil {
		return Safetensors{}, false, nil
	}
	st.Parameters = make(map[string]int64, len(doc.Safetensors.Parameters))
	var sum int64
	for dtype, n := range doc.Safetensors.Parameters {
		v, good := count(n)
		if !good || dtype == "" || len(dtype) > 16 {
			return Safetensors{}, false, nil
		}
		st.Parameters[dtype] = v
		sum += v
	}
	if sum > maxParams {
		return Safetensors{}, false, nil
	}
	st.Total = sum
	if t := doc.Safetensors.Total; t != nil {
		v, good := count(*t)
		if !good {
			return Safetensors{}, false, nil
		}
		st.Total = v
	}
	return st, st.Total > 0, nil
}

// count reads a JSON number as a whole parameter count.
func count(n json.Number) (int64, bool) {
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || v < 0 || v > maxParams {
		return 0, false
	}
	return v, true
}

// Hit is one search result.
type Hit struct {
	ID        string `json:"id"`
	Downloads int64  `json:"downloads"`
}

// Search lists model repos whose id contains name, most downloaded first:
// GET {endpoint}/api/models?search={name}&sort=downloads&direction=-1&limit=20
// (the listing of docs/hub-api.md §2). Hits with an id that is not a valid
// repo id are dropped.
func (c *Client) Search(ctx context.Context, name string) ([]Hit, error) {
	if !ValidName(name) {
		return nil, invalidID(name)
	}
	q := url.Values{"search": {name}, "sort": {"downloads"}, "direction": {"-1"}, "limit": {strconv.Itoa(searchLimit)}}
	body, err := c.get(ctx, name, "/api/models", q, maxSearchBytes, "search")
	if err != nil {
		return nil, err
	}
	hits, err := ParseSearch(body)
	if err != nil {
		return nil, &Error{Reason: ReasonNotJSON, Repo: name, Status: http.StatusOK, Err: err,
			Message: fmt.Sprintf("the Hub's search answer for %s is not the JSON it documents", name)}
	}
	return hits, nil
}

// ParseSearch reads a model listing: a JSON array of objects with "id"
// (or the older "modelId") and "downloads". Entries with an invalid id are
// skipped; at most searchLimit are kept.
func ParseSearch(body []byte) ([]Hit, error) {
	var raw []struct {
		ID        string          `json:"id"`
		ModelID   string          `json:"modelId"`
		Downloads json.RawMessage `json:"downloads"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, err
	}
	hits := []Hit{}
	for _, r := range raw {
		id := r.ID
		if id == "" {
			id = r.ModelID
		}
		if !ValidRepoID(id) {
			continue
		}
		d, _ := count(json.Number(r.Downloads)) // a missing or odd count sorts last
		hits = append(hits, Hit{ID: id, Downloads: d})
		if len(hits) == searchLimit {
			break
		}
	}
	return hits, nil
}

func invalidID(s string) *Error {
	return &Error{Reason: ReasonNoRepo, Repo: s, Message: "not a Hugging Face repo id (namespace/name of letters, digits, '-', '_' and '.')"}
}

// get performs one GET and returns the body of a 200 answer, at most limit
// bytes. what names the document in messages.
func (c *Client) get(ctx context.Context, repo, path string, query url.Values, limit int64, what string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	u := *c.base
	u.Path = strings.TrimRight(c.base.Path, "/") + path
	u.RawPath = ""
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("hub: build request: %w", err)
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, repo, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, c.statusError(repo, what, resp)
	}
	if resp.ContentLength > limit {
		return nil, tooLarge(repo, what, limit)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, c.transportError(ctx, repo, err)
	}
	if int64(len(body)) > limit {
		return nil, tooLarge(repo, what, limit)
	}
	return body, nil
}

func tooLarge(repo, what string, limit int64) *Error {
	return &Error{Reason: ReasonTooLarge, Repo: repo, Status: http.StatusOK,
		Message: fmt.Sprintf("the Hub's %s for %s is larger than %d KiB, more than any real one", what, repo, limit>>10)}
}

// transportError classifies a failure to get a complete answer. The
// cause is redacted (no query string) and scrubbed of the token.
func (c *Client) transportError(ctx context.Context, repo string, err error) error {
	cause := errors.New(redact.Secret(redact.Error(err, redact.URL).Error(), c.token))
	host := c.base.Host
	var netErr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded || errors.As(err, &netErr) && netErr.Timeout():
		return &Error{Reason: ReasonTimeout, Repo: repo, Err: cause,
			Message: fmt.Sprintf("the Hub at %s did not answer in time", host)}
	case errors.Is(err, context.Canceled):
		return &Error{Reason: ReasonTimeout, Repo: repo, Err: err, Message: "the Hub lookup was cancelled"}
	case errors.Is(err, errRedirectLoop):
		return &Error{Reason: ReasonServer, Repo: repo, Err: cause,
			Message: fmt.Sprintf("the Hub at %s redirected %s more than %d times", host, repo, maxRedirects)}
	}
	why := "the connection failed"
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var certErr *tls.CertificateVerificationError
	switch {
	case errors.As(err, &dnsErr):
		why = "its name does not resolve"
	case errors.As(err, &certErr):
		why = "its TLS certificate was refused"
	case errors.As(err, &opErr) && opErr.Op == "dial":
		why = "the connection was refused"
	}
	return &Error{Reason: ReasonUnreachable, Repo: repo, Err: cause,
		Message: fmt.Sprintf("the Hub at %s cannot be reached (%s)", host, why)}
}

// statusError classifies a non-200 answer from X-Error-Code and the status
// (docs/hub-api.md §4). The body is read only to find the Hub's
// "Invalid credentials" message; it is never shown.
func (c *Client) statusError(repo, what string, resp *http.Response) error {
	head, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
	code := resp.Header.Get("X-Error-Code")
	msg := resp.Header.Get("X-Error-Message") + " " + string(head)
	st := resp.StatusCode
	e := &Error{Repo: repo, Status: st}
	page := c.base.Host + "/" + repo
	switch {
	case strings.Contains(msg, "Invalid credentials") || strings.Contains(msg, "Invalid username or password"):
		e.Reason, e.Message = ReasonBadToken, "the Hub refused the token in HF_TOKEN (invalid credentials): check or replace it"
	case code == "GatedRepo":
		e.Reason = ReasonGated
		if c.token == "" {
			e.Message = fmt.Sprintf("%s is gated: set HF_TOKEN to a token of an account that was granted access on %s", repo, page)
		} else {
			e.Message = fmt.Sprintf("%s is gated and the account of HF_TOKEN has not been granted access yet: request it on %s", repo, page)
		}
	case code == "EntryNotFound" || code == "RevisionNotFound":
		e.Reason, e.Message = ReasonNoFile, fmt.Sprintf("%s has no %s on its main branch (GGUF-only and other non-transformers repos have none)", repo, what)
	case strings.Contains(msg, "Access to this resource is disabled"):
		e.Reason, e.Message = ReasonDisabled, fmt.Sprintf("%s is disabled on the Hub", repo)
	case st == http.StatusNotFound || code == "RepoNotFound":
		e.Reason = ReasonNoRepo
		e.Message = fmt.Sprintf("no model %s on the Hub", repo)
		if st == http.StatusUnauthorized && c.token == "" {
			e.Message += " (or it is private: set HF_TOKEN to a token that can read it)"
		}
	case st == http.StatusUnauthorized:
		// Without a token the Hub answers 401 alike for missing, private
		// and gated repos (huggingface_hub _http.py, docs/hub-api.md §4).
		e.Reason = ReasonNoRepo
		if c.token == "" {
			e.Message = fmt.Sprintf("no model %s on the Hub, or it is private or gated: set HF_TOKEN to a token that can read it", repo)
		} else {
			e.Message = fmt.Sprintf("no model %s on the Hub that the token in HF_TOKEN can read", repo)
		}
	case st == http.StatusForbidden:
		e.Reason = ReasonForbidden
		if c.token == "" {
			e.Message = fmt.Sprintf("%s is private or gated: set HF_TOKEN to a token that can read it", repo)
		} else {
			e.Message = fmt.Sprintf("the token in HF_TOKEN may not read %s (a fine-grained token without access to it?)", repo)
		}
	case st == http.StatusTooManyRequests:
		e.Reason = ReasonRateLimited
		e.Message = "the Hub is rate-limiting these requests (HTTP 429)"
		e.RetryAfter = retryAfter(resp.Header)
		if e.RetryAfter > 0 {
			e.Message += fmt.Sprintf("; retry in %d s", int(e.RetryAfter/time.Second))
		}
		if c.token == "" {
			e.Message += "; an HF_TOKEN raises the limit"
		}
	default:
		e.Reason = ReasonServer
		e.Message = fmt.Sprintf("the Hub answered HTTP %d for %s", st, repo)
		e.RetryAfter = retryAfter(resp.Header)
	}
	return e
}

// maxRetryAfter bounds what the Hub may ask a wait to be: its windows are
// 5 minutes long (docs/hub-api.md §5).
const maxRetryAfter = RateWindow

// retryAfter reads when to ask again: Retry-After in seconds, else the
// t= (seconds to reset) of the RateLimit header, as huggingface_hub's
// parse_ratelimit_headers reads it (docs/hub-api.md §5); 0 when neither
// says. A date or a value past the window is ignored or capped.
func retryAfter(h http.Header) time.Duration {
	secs := func(v string) time.Duration {
		if v == "" || len(v) > 6 || strings.Trim(v, "0123456789") != "" {
			return 0
		}
		n, _ := strconv.Atoi(v)
		return min(time.Duration(n)*time.Second, maxRetryAfter)
	}
	if d := secs(strings.TrimSpace(h.Get("Retry-After"))); d > 0 {
		return d
	}
	for _, part := range strings.Split(h.Get("RateLimit"), ";") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(part), "t="); ok {
			return secs(v)
		}
	}
	return 0
}
