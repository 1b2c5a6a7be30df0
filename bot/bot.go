// Package bot is the Slack adapter: it receives slash commands, events and
// button presses over HTTP (signed requests) or Socket Mode, answers within
// Slack's 3-second window, dedupes events in the store so several replicas
// reply once, and renders reply.Reply as Block Kit. It is the only package
// that imports slack-go.
package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"

	"github.com/vrambot/vrambot/reply"
	"github.com/vrambot/vrambot/store"
)

// Commands is what the bot needs from the command set. VRAM's error is bad
// input and its message is shown to the user; OOM reports whether the text
// held an out-of-memory error at all.
type Commands interface {
	VRAM(ctx context.Context, query string) (reply.Reply, error)
	OOM(ctx context.Context, text string) (r reply.Reply, detected bool)
}

// OOMSeen is an out-of-memory error the bot answered in a channel. It holds
// the parsed result, never the pasted text.
type OOMSeen struct {
	Channel   string
	ThreadTS  string
	Permalink string
	At        time.Time
	Result    any
}

// OOMRecorder stores an OOMSeen for the digest.
type OOMRecorder func(ctx context.Context, ev OOMSeen) error

// Defaults for Config's zero values.
const (
	// DefaultInlineBudget is how long a request may compute before the bot
	// acks and follows up: Slack wants a 2xx within 3 s (api.slack.com/interactivity/handling#acknowledgment_response).
	DefaultInlineBudget = 2 * time.Second
	// DefaultWorkTimeout bounds one piece of deferred work (compute and post).
	DefaultWorkTimeout = 30 * time.Second
	// DefaultPostInterval paces chat.postMessage per channel: Slack allows
	// about one message per second per channel (api.slack.com/docs/rate-limits).
	DefaultPostInterval = time.Second
	// DefaultMaxBodyBytes caps an inbound request body.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultMaxFileBytes caps a downloaded snippet.
	DefaultMaxFileBytes = 2 << 20
	// DefaultDedupeTTL keeps event ids long enough to cover Slack's retries
	// (immediately, after ~1 min and after ~5 min).
	DefaultDedupeTTL = time.Hour
	// DefaultMaxInFlight bounds concurrent deferred work.
	DefaultMaxInFlight = 64
	// DefaultDrainTimeout bounds how long shutdown waits for in-flight replies.
	DefaultDrainTimeout = 10 * time.Second
)

// Config is the bot's configuration. BotToken and at least one of
// SigningSecret (HTTP mode) or AppToken (Socket Mode) are required.
type Config struct {
	BotToken      string
	SigningSecret string
	AppToken      string
	// APIURL replaces Slack's Web API base URL (VRAMBOT_SLACK_API_URL).
	APIURL string

	InlineBudget time.Duration
	WorkTimeout  time.Duration
	PostInterval time.Duration
	MaxBodyBytes int64
	MaxFileBytes int64
	DedupeTTL    time.Duration
	MaxInFlight  int
	DrainTimeout time.Duration
}

func (c *Config) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.InlineBudget, DefaultInlineBudget)
	def(&c.WorkTimeout, DefaultWorkTimeout)
	def(&c.PostInterval, DefaultPostInterval)
	def(&c.DedupeTTL, DefaultDedupeTTL)
	def(&c.DrainTimeout, DefaultDrainTimeout)
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxFileBytes <= 0 {
		c.MaxFileBytes = DefaultMaxFileBytes
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
}

// Deps are the bot's collaborators. Commands and Store are required.
type Deps struct {
	Commands Commands
	Store    store.Store
	// RecordOOM, when set, is called for every OOM answered in a channel.
	RecordOOM OOMRecorder
	Logger    *slog.Logger
	// HTTPClient is used for the Web API, response_url and file downloads.
	HTTPClient *http.Client
	// Configs, when set, answers mentions that attach a config.json
	// (configfile.go); without it such a mention is an ordinary one.
	Configs ConfigVRAM
}

// Server is the Slack app.
type Server struct {
	cfg     Config
	deps    Deps
	log     *slog.Logger
	api     *slack.Client
	http    *http.Client
	poster  *Poster
	metrics *metrics

	selfMu sync.Mutex
	selfID string

	// work bounds concurrent deferred work; inflight tracks it for draining.
	work     chan struct{}
	inflight sync.WaitGroup
	closing  atomic.Bool
	// baseCtx parents deferred work; cancelled when a drain runs out of time.
	baseCtx    context.Context
	cancelWork context.CancelFunc
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
	if deps.HTTPClient == nil {
		deps.HTTPClient = &http.Client{Timeout: 15 * time.Second}
	}
	opts := slackOptions(deps.HTTPClient, cfg.APIURL)
	if cfg.AppToken != "" {
		opts = append(opts, slack.OptionAppLevelToken(cfg.AppToken))
	}
	s := &Server{
		cfg:     cfg,
		deps:    deps,
		log:     deps.Logger,
		api:     slack.New(cfg.BotToken, opts...),
		http:    deps.HTTPClient,
		metrics: newMetrics(),
		work:    make(chan struct{}, cfg.MaxInFlight),
	}
	s.baseCtx, s.cancelWork = context.WithCancel(context.Background())
	s.poster = newPoster(s.api, cfg.PostInterval, s.log, s.metrics)
	return s, nil
}

// Poster returns the Server's poster, for the digest.
func (s *Server) Poster() *Poster { return s.poster }

// Serve runs Handler on addr until ctx is cancelled, then stops the
// listener and drains in-flight replies. It serves health and metrics in
// both modes; Socket Mode itself is Run, started beside it.
func (s *Server) Serve(ctx context.Context, addr string) error {
	srv := &http.Server{Addr: addr, Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() {
		if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("bot: listen on %s: %w", addr, err)
		}
	}()
	s.log.Info("slack bot listening", "addr", addr, "http_mode", s.cfg.SigningSecret != "")
	var listenErr error
	select {
	case <-ctx.Done():
	case listenErr = <-errc:
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), s.cfg.DrainTimeout)
	defer cancel()
	httpErr := srv.Shutdown(shutdownCtx)
	drainErr := s.Shutdown(shutdownCtx)
	return errors.Join(listenErr, httpErr, drainErr)
}

// Run runs Socket Mode until ctx is cancelled, then drains in-flight
// replies. It needs Config.AppToken.
func (s *Server) Run(ctx context.Context) error {
	if s.cfg.AppToken == "" {
		return errors.New("bot: socket mode needs SLACK_APP_TOKEN")
	}
	err := s.runSocketMode(ctx)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	drainCtx, cancel := context.WithTimeout(context.Background(), s.cfg.DrainTimeout)
	defer cancel()
	return errors.Join(err, s.Shutdown(drainCtx))
}

// Shutdown stops taking new work and waits for in-flight replies until ctx
// ends; work still running then is cancelled.
func (s *Server) Shutdown(ctx context.Context) error {
	s.closing.Store(true)
	done := make(chan struct{})
	go func() {
		s.inflight.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.cancelWork()
		return fmt.Errorf("bot: drain in-flight replies: %w", ctx.Err())
	}
}

// goWork runs fn in the background under the work bound and the work
// timeout. It reports false when the server is shutting down.
func (s *Server) goWork(kind string, fn func(ctx context.Context)) bool {
	if s.closing.Load() {
		return false
	}
	s.inflight.Add(1)
	go func() {
		defer s.inflight.Done()
		ctx, cancel := context.WithTimeout(s.baseCtx, s.cfg.WorkTimeout)
		defer cancel()
		select {
		case s.work <- struct{}{}:
			defer func() { <-s.work }()
		case <-ctx.Done():
			s.log.Warn("work dropped: no slot before timeout", "kind", kind)
			return
		}
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("panic in slack handler", "kind", kind, "panic", fmt.Sprint(p))
			}
		}()
		fn(ctx)
	}()
	return true
}

// botUserID returns the bot's own user id from auth.test, cached after the
// first success; fallback (from the event's authorizations) is used while
// auth.test fails.
func (s *Server) botUserID(ctx context.Context, fallback string) string {
	s.selfMu.Lock()
	defer s.selfMu.Unlock()
	if s.selfID != "" {
		return s.selfID
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := s.api.AuthTestContext(ctx)
	if err != nil {
		s.metrics.apiError("auth.test")
		s.log.Warn("auth.test failed; using the event's authorizations", "err", err)
		return fallback
	}
	s.selfID = resp.UserID
	return s.selfID
}

// slackOptions are the Web API client options every client of the bot uses:
// the HTTP client, retries, and the base URL (VRAMBOT_SLACK_API_URL) with the
// trailing slash slack-go joins method names onto.
func slackOptions(client *http.Client, apiURL string) []slack.Option {
	opts := []slack.Option{slack.OptionHTTPClient(client), slack.OptionRetry(3)}
	if apiURL != "" {
		if !strings.HasSuffix(apiURL, "/") {
			apiURL += "/"
		}
		opts = append(opts, slack.OptionAPIURL(apiURL))
	}
	return opts
}
