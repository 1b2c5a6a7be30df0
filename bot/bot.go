// Package bot is the Slack adapter: it receives slash commands, events and
// button presses over HTTP (signed requests) or Socket Mode, answers within
// Slack's 3-second window, dedupes every kind of request in the store so
// several replicas reply once, paces and retries what it posts, and renders
// reply.Reply as Block Kit. It is the only package that imports slack-go.
package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"
	"golang.org/x/sync/singleflight"

	"github.com/vrambot/vrambot/reply"
)

// Commands is what the bot needs from the command set. VRAM's error carries
// a kind (internal/errs) that decides what the user sees; OOM gives the
// facts of the paste with its reply, Detected false when the text held no
// out-of-memory error at all.
type Commands interface {
	VRAM(ctx context.Context, query string) (reply.Reply, error)
	OOM(ctx context.Context, text string) (reply.Reply, OOMFacts)
}

// OOMFacts are what the bot keeps of a diagnosed paste: whether it held an
// OOM and the parsed fields the digest counts (docs/contracts.md §3's
// `oom --json` fields), never the pasted text.
type OOMFacts struct {
	Detected                 bool
	Format, Framework, Phase string
	Device                   string
	Cause                    string // the first cause's id
	TriedBytes, TotalBytes   *int64
}

// Store is what the bot needs from the store (store.Store has it): claims
// and "answered" markers for dedupe, and a ping for /readyz.
type Store interface {
	Get(ctx context.Context, key string) ([]byte, error)
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	SetNX(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error)
	Delete(ctx context.Context, key string) error
	Ping(ctx context.Context) error
}

// OOMSeen is an out-of-memory error the bot answered in a channel: where,
// when, and its parsed facts, never the pasted text.
type OOMSeen struct {
	Channel   string
	ThreadTS  string
	Permalink string
	At        time.Time
	Facts     OOMFacts
}

// OOMRecorder stores an OOMSeen for the digest.
type OOMRecorder func(ctx context.Context, ev OOMSeen) error

// Defaults for Config's zero values.
const (
	// DefaultInlineBudget is how long a request may compute before the bot
	// acks and follows up: Slack wants a 2xx within 3 s (docs/slack.md §A.1).
	DefaultInlineBudget = 2 * time.Second
	// DefaultWorkTimeout bounds computing one answer (not posting it).
	DefaultWorkTimeout = 30 * time.Second
	// DefaultPostInterval paces posts per channel: Slack allows about one
	// message per second per channel (docs/slack.md §A.5).
	DefaultPostInterval = time.Second
	// DefaultChannelQueue is how many answers may wait for their turn in one
	// channel: a minute of posts at DefaultPostInterval. Past it, pastes get
	// one coalesced notice instead of an answer each.
	DefaultChannelQueue = 60
	// DefaultPostTimeout bounds waiting for a channel's turn and posting
	// (with retries); it is separate from the work timeout, so a burst in
	// one channel waits instead of timing out.
	DefaultPostTimeout = 2 * time.Minute
	// DefaultMaxBodyBytes caps an inbound request body.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultMaxFileBytes caps a downloaded snippet.
	DefaultMaxFileBytes = 2 << 20
	// DefaultDedupeTTL keeps "answered" markers well past Slack's last
	// retry of an event (about 5 minutes after the first, docs/slack.md
	// §A.3) and past the 5-minute signature window of a replay.
	DefaultDedupeTTL = time.Hour
	// DefaultClaimTTL is the lease of an event being answered. Its holder
	// renews it while it works; a claim whose outcome was unknown (the
	// store timed out, and may still apply it) lapses within it, so Slack's
	// retry after about a minute is answered.
	DefaultClaimTTL = 45 * time.Second
	// DefaultMaxInFlight bounds answers computed at once (CPU-bound work).
	DefaultMaxInFlight = 64
	// DefaultMaxPending bounds admitted work (computing, queued or
	// posting): about 30 s of answers at DefaultMaxInFlight, past which a
	// backlog only grows. Past it an event gets 503 with "busy: …" as its
	// body and Slack retries it (about a minute, then 5 minutes later);
	// a slash command or a click is told the bot is busy. Home tab opens
	// never count against it (homequeue.go).
	DefaultMaxPending = 2000
	// DefaultDrainTimeout bounds how long shutdown finishes acked work
	// (VRAMBOT_DRAIN_TIMEOUT).
	DefaultDrainTimeout = 30 * time.Second
	// DefaultMaxConnections bounds concurrent HTTP connections; more wait
	// in the kernel's accept queue.
	DefaultMaxConnections = 512
	// DefaultReadTimeout bounds reading one request, body included: a
	// client that never finishes its body is cut off. Slack sends a
	// request in one go.
	DefaultReadTimeout = 10 * time.Second
)

// HTTP server limits that need no configuration.
const (
	readHeaderTimeout = 5 * time.Second
	// writeTimeout must outlast the inline budget of a slash command.
	writeTimeout = 15 * time.Second
	// idleTimeout closes keep-alive connections nobody uses.
	idleTimeout = 60 * time.Second
	// maxHeaderBytes: Slack's headers are a few hundred bytes.
	maxHeaderBytes = 16 << 10
)

// Config is the bot's configuration. BotToken and at least one of
// SigningSecret (HTTP mode) or AppToken (Socket Mode) are required.
type Config struct {
	BotToken      string
	SigningSecret string
	AppToken      string
	// APIURL replaces Slack's Web API base URL (VRAMBOT_SLACK_API_URL).
	APIURL string

	InlineBudget   time.Duration
	WorkTimeout    time.Duration
	PostInterval   time.Duration
	ChannelQueue   int
	PostTimeout    time.Duration
	MaxBodyBytes   int64
	MaxFileBytes   int64
	DedupeTTL      time.Duration
	ClaimTTL       time.Duration
	MaxInFlight    int
	MaxPending     int
	DrainTimeout   time.Duration
	MaxConnections int
	ReadTimeout    time.Duration
	Retry          RetryPolicy
	// The Hub pool (hubpool.go) and the Home tab queue (homequeue.go).
	MaxHubLookups int
	MaxHubQueue   int
	HubWait       time.Duration
	HomeQueue     int
}

func (c *Config) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	defInt := func(n *int, v int) {
		if *n <= 0 {
			*n = v
		}
	}
	def(&c.InlineBudget, DefaultInlineBudget)
	def(&c.WorkTimeout, DefaultWorkTimeout)
	def(&c.PostInterval, DefaultPostInterval)
	def(&c.PostTimeout, DefaultPostTimeout)
	def(&c.DedupeTTL, DefaultDedupeTTL)
	def(&c.ClaimTTL, DefaultClaimTTL)
	def(&c.DrainTimeout, DefaultDrainTimeout)
	def(&c.ReadTimeout, DefaultReadTimeout)
	def(&c.HubWait, DefaultHubWait)
	defInt(&c.MaxHubLookups, DefaultMaxHubLookups)
	defInt(&c.MaxHubQueue, DefaultMaxHubQueue)
	defInt(&c.HomeQueue, DefaultHomeQueue)
	defInt(&c.ChannelQueue, DefaultChannelQueue)
	defInt(&c.MaxInFlight, DefaultMaxInFlight)
	defInt(&c.MaxPending, DefaultMaxPending)
	defInt(&c.MaxConnections, DefaultMaxConnections)
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxFileBytes <= 0 {
		c.MaxFileBytes = DefaultMaxFileBytes
	}
	c.Retry.setDefaults()
}

// Deps are the bot's collaborators. Commands and Store are required.
type Deps struct {
	Commands Commands
	Store    Store
	// RecordOOM, when set, is called for every OOM answered in a channel.
	RecordOOM OOMRecorder
	Logger    *slog.Logger
	// Transport carries every call to Slack (nil: http.DefaultTransport);
	// the bot puts its retries on top.
	Transport http.RoundTripper
	// Configs, when set, answers mentions that attach a config.json
	// (configfile.go); without it such a mention is an ordinary one.
	Configs ConfigVRAM
	// Jobs, when set, reads a job pasted in a code block or attached to a
	// mention or a direct message, and answers the "Size this job"
	// shortcut (job.go); without it nothing is read as a job.
	Jobs Jobs
	// Lookups, when set, says which /vram queries must ask the Hub first:
	// those are acked at once and answered through response_url. When it
	// also implements HubPrefetcher, the lookup runs in the Hub pool
	// before the answer takes a compute slot.
	Lookups HubLookups
	// Models, when set, feeds the /vram form's model typeahead.
	Models ModelOptions
	// LastDigest and OOMs, when set, fill the App Home tab.
	LastDigest LastDigest
	OOMs       OOMCounter
	// RecordFeedback, when set, keeps every 👍/👎 (they are counted in
	// /metrics either way).
	RecordFeedback FeedbackRecorder
}

// HubLookups says whether a /vram query names a model that must be looked
// up on the Hugging Face Hub (in neither the catalog nor the cache), and
// which: a cheap check that never calls the Hub.
type HubLookups interface {
	HubLookup(ctx context.Context, query string) (ref string, needed bool)
}

// Server is the Slack app.
type Server struct {
	cfg     Config
	deps    Deps
	log     *slog.Logger
	api     *slack.Client
	http    *http.Client // response_url, uploads; retried
	files   *http.Client // downloads: retried, redirects checked
	apiURL  *url.URL
	poster  *Poster
	metrics *metrics
	bodies  bodyPool

	self      atomic.Pointer[string]
	selfCalls singleflight.Group

	// compute bounds answers computed at once.
	compute chan struct{}
	// hubSlots bounds Hub lookups at once; hubWaiting counts those running
	// or waiting for a slot.
	hubSlots   chan struct{}
	hubWaiting atomic.Int64
	// home is the Home tab queue.
	home homeQueue
	// closed is closed when the drain starts.
	closed chan struct{}

	// Admission: work is admitted under mu, never once closing is set, so
	// a drain that has started sees every piece of work it must wait for.
	mu       sync.Mutex
	closing  bool
	pending  map[uint64]workItem
	nextWork uint64
	inflight sync.WaitGroup

	drainOnce sync.Once
	drained   chan struct{}
	drainErr  error
	// baseCtx parents deferred work; cancelled when a drain runs out of time.
	baseCtx    context.Context
	cancelWork context.CancelFunc
}

// workItem describes admitted work for the drain's log: never message text.
type workItem struct {
	kind    string
	channel string
	ref     string // event id or similar
	since   time.Time
}

// New builds a Server. It does no network I/O.
func New(cfg Config, deps Deps) (*Server, error) {
	if cfg.BotToken == "" {
		return nil, errors.New("bot: SLACK_BOT_TOKEN is required")
	}
	if cfg.SigningSecret == "" && cfg.AppToken == "" {
		return nil, errors.New("bot: SLACK_SIGNING_SECRET (HTTP mode) or SLACK_APP_TOKEN (Socket Mode) is required")
	}
	if deps.Commands == nil || deps.Store == nil {
		return nil, errors.New("bot: Commands and Store are required")
	}
	cfg.setDefaults()
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	apiURL, err := url.Parse(apiBaseURL(cfg.APIURL))
	if err != nil {
		return nil, fmt.Errorf("bot: Slack API URL: %w", err)
	}
	m := newMetrics()
	transport := newRetryTransport(deps.Transport, cfg.Retry, apiURL, m)
	httpClient := &http.Client{Transport: transport}
	opts := []slack.Option{slack.OptionHTTPClient(httpClient), slack.OptionAPIURL(apiURL.String())}
	if cfg.AppToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(cfg.AppToken))
	}
	s := &Server{
		cfg:      cfg,
		deps:     deps,
		log:      deps.Logger,
		api:      slack.New(cfg.BotToken, opts...),
		http:     httpClient,
		apiURL:   apiURL,
		metrics:  m,
		compute:  make(chan struct{}, cfg.MaxInFlight),
		hubSlots: make(chan struct{}, cfg.MaxHubLookups),
		closed:   make(chan struct{}),
		pending:  make(map[uint64]workItem),
		drained:  make(chan struct{}),
	}
	s.files = &http.Client{Transport: transport, CheckRedirect: s.checkDownloadRedirect}
	s.baseCtx, s.cancelWork = context.WithCancel(context.Background())
	s.poster = newPoster(s.api, httpClient, newLanes(cfg.PostInterval, cfg.ChannelQueue), s.log, m)
	return s, nil
}

// apiBaseURL is the Web API base URL for VRAMBOT_SLACK_API_URL ("" is
// Slack's), with the trailing slash slack-go joins method names onto: the
// one place that normalises it.
func apiBaseURL(raw string) string {
	if raw == "" {
		return slack.APIURL
	}
	if raw[len(raw)-1] != '/' {
		raw += "/"
	}
	return raw
}

func newRetryTransport(next http.RoundTripper, p RetryPolicy, apiURL *url.URL, m *metrics) *retryTransport {
	if next == nil {
		next = http.DefaultTransport
	}
	p.setDefaults()
	return &retryTransport{next: next, policy: p, apiPath: apiURL.Path, metrics: m}
}

// Poster returns the Server's poster, for the digest: it shares the
// server's per-channel pacing, retries and metrics.
func (s *Server) Poster() *Poster { return s.poster }

// errFull: the pending-work cap (Config.MaxPending) is reached.
var errFull = errors.New("bot: at the pending-work cap")

// admitWhy registers work, or says why not: errClosing or errFull.
func (s *Server) admitWhy(it workItem) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return 0, errClosing
	}
	if len(s.pending) >= s.cfg.MaxPending {
		return 0, errFull
	}
	return s.admitLocked(it), nil
}

// admitAlways registers work whatever the cap, unless the server is
// draining: for work that bounds itself (the Home tab publisher).
func (s *Server) admitAlways(it workItem) (uint64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return 0, false
	}
	return s.admitLocked(it), true
}

// admitLocked registers work; s.mu must be held.
func (s *Server) admitLocked(it workItem) uint64 {
	s.nextWork++
	it.since = time.Now()
	s.pending[s.nextWork] = it
	s.inflight.Add(1)
	return s.nextWork
}

func (s *Server) release(id uint64) {
	s.mu.Lock()
	delete(s.pending, id)
	s.mu.Unlock()
	s.inflight.Done()
}

// closeLocked stops admitting work; s.mu must be held.
func (s *Server) closeLocked() {
	if !s.closing {
		close(s.closed)
	}
	s.closing = true
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// goWork runs fn in the background as admitted work. fn's context ends only
// when a drain runs out of time: fn bounds its own steps (computeAnswer,
// PostTimeout). It reports false when the work was not admitted.
func (s *Server) goWork(it workItem, fn func(ctx context.Context)) bool {
	return s.goWorkWhy(it, fn) == nil
}

// goWorkWhy is goWork, saying why work was not admitted (errClosing,
// errFull).
func (s *Server) goWorkWhy(it workItem, fn func(ctx context.Context)) error {
	id, err := s.admitWhy(it)
	if err != nil {
		s.metrics.refused(it.kind)
		return err
	}
	go func() {
		defer s.release(id)
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("panic in slack handler", "kind", it.kind, "panic", fmt.Sprint(p))
			}
		}()
		fn(s.baseCtx)
	}()
	return nil
}

// computeAnswer runs fn under the compute bound and the work timeout. It
// fails only when no compute slot came free in time; fn reports its own
// outcome.
func (s *Server) computeAnswer(ctx context.Context, fn func(ctx context.Context)) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.WorkTimeout)
	defer cancel()
	select {
	case s.compute <- struct{}{}:
		defer func() { <-s.compute }()
	case <-ctx.Done():
		return fmt.Errorf("waiting for a compute slot: %w", ctx.Err())
	}
	fn(ctx)
	return nil
}

// postContext bounds waiting for a channel's turn and posting.
func (s *Server) postContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.PostTimeout)
}

// Serve runs Handler on addr until ctx is cancelled, then stops the
// listener and drains in-flight work (DrainTimeout). It serves health and
// metrics in both modes; Socket Mode itself is Run, started beside it.
func (s *Server) Serve(ctx context.Context, addr string) error {
	ln, err := s.Listen(addr)
	if err != nil {
		return err
	}
	return s.ServeListener(ctx, ln)
}

// Drain stops admitting work and waits for what was admitted, up to
// DrainTimeout; work still running then is cancelled and logged as
// dropped. Every caller (HTTP, Socket Mode, serve) shares one drain.
func (s *Server) Drain() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.DrainTimeout)
	defer cancel()
	return s.Shutdown(ctx)
}

// Run runs Socket Mode until ctx is cancelled, then drains in-flight
// work. It needs Config.AppToken.
func (s *Server) Run(ctx context.Context) error {
	if s.cfg.AppToken == "" {
		return errors.New("bot: socket mode needs SLACK_APP_TOKEN")
	}
	err := s.runSocketMode(ctx)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return errors.Join(err, s.Drain())
}

// dropWait bounds how long a drain that ran out of time waits for the
// cancelled work to return (it stops at its next context check).
const dropWait = 5 * time.Second

// Shutdown stops admitting work and waits for admitted work until ctx
// ends; work still running then is cancelled, and what was dropped is
// logged. Later calls wait for the first one and return its result.
func (s *Server) Shutdown(ctx context.Context) error {
	s.drainOnce.Do(func() {
		defer close(s.drained)
		s.mu.Lock()
		s.closeLocked()
		n := len(s.pending)
		s.mu.Unlock()
		if n > 0 {
			s.log.Info("draining acked work", "pending", n)
		}
		done := make(chan struct{})
		go func() {
			s.inflight.Wait()
			close(done)
		}()
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		dropped := s.pendingWork()
		s.cancelWork()
		for _, it := range dropped {
			s.metrics.dropped(it.kind)
			s.log.Warn("drain deadline: dropped acked work", "kind", it.kind, "channel", it.channel, "ref", it.ref, "age", time.Since(it.since).Round(time.Millisecond).String())
		}
		s.log.Warn("drain deadline passed", "dropped", len(dropped))
		s.drainErr = fmt.Errorf("bot: drain: %d replies dropped: %w", len(dropped), ctx.Err())
		select {
		case <-done:
		case <-time.After(dropWait):
			s.drainErr = errors.Join(s.drainErr, errors.New("bot: drain: cancelled work did not return"))
		}
	})
	<-s.drained
	return s.drainErr
}

func (s *Server) pendingWork() []workItem {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]workItem, 0, len(s.pending))
	for _, it := range s.pending {
		out = append(out, it)
	}
	return out
}

// selfTimeout bounds auth.test.
const selfTimeout = 5 * time.Second

// botUserID returns the bot's own user id from auth.test, cached after the
// first success; fallback (from the event's authorizations) is used while
// auth.test fails. Concurrent callers share one auth.test call and no lock
// is held across it.
func (s *Server) botUserID(ctx context.Context, fallback string) string {
	if id := s.self.Load(); id != nil {
		return *id
	}
	v, err, _ := s.selfCalls.Do("auth.test", func() (any, error) {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), selfTimeout)
		defer cancel()
		resp, err := s.api.AuthTestContext(actx)
		if err != nil {
			return "", err
		}
		s.self.Store(&resp.UserID)
		return resp.UserID, nil
	})
	if err != nil {
		s.metrics.apiError("auth.test")
		s.log.Warn("auth.test failed; using the event's authorizations", "err", redactErr(err))
		return fallback
	}
	return v.(string)
}
