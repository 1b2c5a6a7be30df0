package bot

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/netutil"
)

// Handler returns the HTTP endpoints: the three Slack request URLs (HTTP
// mode; refused when no signing secret is configured), health, readiness
// and metrics (docs/contracts.md §5).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /slack/commands", s.signed(kindCommand, s.serveCommand))
	mux.HandleFunc("POST /slack/events", s.signed(kindEvent, s.serveEvent))
	mux.HandleFunc("POST /slack/interactivity", s.signed(kindInteraction, s.serveInteraction))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeText(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", s.serveReady)
	mux.Handle("GET /metrics", s.metrics.handler())
	return mux
}

// Listen opens addr with at most MaxConnections connections served at once
// (the rest wait in the kernel's accept queue).
func (s *Server) Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("bot: listen on %s: %w", addr, err)
	}
	return netutil.LimitListener(ln, s.cfg.MaxConnections), nil
}

// httpServer is the server for Handler with every timeout set: a client
// gets ReadTimeout for its whole request and 60 s idle between requests.
func (s *Server) httpServer() *http.Server {
	return &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}
}

// ServeListener serves Handler on ln until ctx is cancelled; then it stops
// admitting work, closes the listener, waits for open requests and drains
// admitted work, all within DrainTimeout.
func (s *Server) ServeListener(ctx context.Context, ln net.Listener) error {
	srv := s.httpServer()
	errc := make(chan error, 1)
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		errc <- err
	}()
	s.log.Info("slack bot listening", "addr", ln.Addr().String(), "http_mode", s.cfg.SigningSecret != "")
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	s.stopAdmitting()
	drainCtx, cancel := context.WithTimeout(context.Background(), s.cfg.DrainTimeout)
	defer cancel()
	httpErr := srv.Shutdown(drainCtx)
	if httpErr != nil {
		httpErr = errors.Join(fmt.Errorf("bot: http shutdown: %w", httpErr), srv.Close())
	}
	drainErr := s.Shutdown(drainCtx)
	if serveErr == nil {
		serveErr = <-errc
	}
	if serveErr != nil {
		serveErr = fmt.Errorf("bot: serve: %w", serveErr)
	}
	return errors.Join(serveErr, httpErr, drainErr)
}

// stopAdmitting refuses new work from now on (requests still open get 503).
func (s *Server) stopAdmitting() {
	s.mu.Lock()
	s.closeLocked()
	s.mu.Unlock()
}

// readyTimeout bounds the store ping behind /readyz.
const readyTimeout = 2 * time.Second

func (s *Server) serveReady(w http.ResponseWriter, r *http.Request) {
	if s.isClosing() {
		writeText(w, http.StatusServiceUnavailable, "shutting down")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if err := s.deps.Store.Ping(ctx); err != nil {
		s.log.Warn("readiness: store unreachable", "err", err)
		writeText(w, http.StatusServiceUnavailable, "store unreachable")
		return
	}
	writeText(w, http.StatusOK, "ok")
}

// signedRequest is a request whose body passed signature verification.
type signedRequest struct {
	body      []byte // valid until the handler returns (pooled)
	timestamp string
}

// signedHandler handles a verified request and returns the outcome label.
type signedHandler func(w http.ResponseWriter, r *http.Request, req signedRequest) string

// signed verifies Slack's v0 signature before anything parses the body.
func (s *Server) signed(kind string, next signedHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		outcome := s.verifyAndServe(w, r, s.bodyLimit(kind), next)
		s.metrics.observe(kind, outcome, start)
	}
}

// Signature rules (docs/slack.md §A.2; api.slack.com/authentication/verifying-requests-from-slack).
const (
	signatureVersion = "v0"
	// maxClockSkew is the window Slack's docs give for the timestamp.
	maxClockSkew = 5 * time.Minute
)

var (
	errNoSignature = errors.New("missing X-Slack-Signature or X-Slack-Request-Timestamp")
	errBadStamp    = errors.New("timestamp not a number")
	errStale       = errors.New("timestamp outside the 5-minute window")
	errBadFormat   = errors.New("signature not v0=<64 hex digits>")
	errMismatch    = errors.New("signature does not match the body")
)

// checkSignatureHeaders checks everything about the signature that can be
// checked before the body arrives, so an unsigned or replayed-late request
// is refused without reading (or buffering) its body.
func checkSignatureHeaders(h http.Header, now time.Time) (stamp string, mac []byte, err error) {
	stamp, sig := h.Get("X-Slack-Request-Timestamp"), h.Get("X-Slack-Signature")
	if stamp == "" || sig == "" {
		return "", nil, errNoSignature
	}
	secs, err := strconv.ParseInt(stamp, 10, 64)
	if err != nil {
		return "", nil, errBadStamp
	}
	if d := now.Sub(time.Unix(secs, 0)); d > maxClockSkew || d < -maxClockSkew {
		return "", nil, errStale
	}
	hexMAC, ok := strings.CutPrefix(sig, signatureVersion+"=")
	if !ok || len(hexMAC) != 2*sha256.Size {
		return "", nil, errBadFormat
	}
	mac, err = hex.DecodeString(hexMAC)
	if err != nil {
		return "", nil, errBadFormat
	}
	return stamp, mac, nil
}

// verifyBody checks mac = HMAC-SHA256(secret, "v0:" + stamp + ":" + body).
func verifyBody(secret, stamp string, body, mac []byte) error {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(signatureVersion + ":" + stamp + ":"))
	h.Write(body)
	if !hmac.Equal(h.Sum(nil), mac) {
		return errMismatch
	}
	return nil
}

// maxInteractionBodyBytes caps an interaction's body: a message shortcut
// carries the message it is run on, 40,000 characters of text (Slack's
// cap, docs/slack.md §A.6) and again in its blocks, each character up to
// 12 bytes once form-encoded (an emoji: 4 bytes of UTF-8, %XX each), about
// 1 MiB for the message alone.
const maxInteractionBodyBytes = 4 << 20

// bodyLimit is the body cap of a request kind: MaxBodyBytes, and for
// interactions at least maxInteractionBodyBytes.
func (s *Server) bodyLimit(kind string) int64 {
	if kind == kindInteraction {
		return max(s.cfg.MaxBodyBytes, maxInteractionBodyBytes)
	}
	return s.cfg.MaxBodyBytes
}

func (s *Server) verifyAndServe(w http.ResponseWriter, r *http.Request, limit int64, next signedHandler) string {
	if s.cfg.SigningSecret == "" {
		// Without a secret every signature would be forgeable.
		writeText(w, http.StatusNotFound, "http mode disabled")
		return outcomeUnauthorized
	}
	stamp, mac, err := checkSignatureHeaders(r.Header, time.Now())
	if err != nil {
		s.log.Info("refused unsigned slack request", "path", r.URL.Path, "reason", err.Error())
		w.Header().Set("Connection", "close") // its body is never read
		writeText(w, http.StatusUnauthorized, "invalid signature")
		return outcomeUnauthorized
	}
	if r.ContentLength > limit {
		w.Header().Set("Connection", "close")
		writeText(w, http.StatusRequestEntityTooLarge, "body too large")
		return outcomeTooLarge
	}
	buf := s.bodies.get()
	defer s.bodies.put(buf)
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit)); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			writeText(w, http.StatusRequestEntityTooLarge, "body too large")
			return outcomeTooLarge
		}
		writeText(w, http.StatusBadRequest, "unreadable body")
		return outcomeBadRequest
	}
	if err := verifyBody(s.cfg.SigningSecret, stamp, buf.Bytes(), mac); err != nil {
		s.log.Info("refused unsigned slack request", "path", r.URL.Path, "reason", err.Error())
		writeText(w, http.StatusUnauthorized, "invalid signature")
		return outcomeUnauthorized
	}
	if s.isClosing() {
		// Slack retries events elsewhere; users of commands see a timeout.
		writeText(w, http.StatusServiceUnavailable, "shutting down")
		return outcomeUnavailable
	}
	return next(w, r, signedRequest{body: buf.Bytes(), timestamp: stamp})
}

// bodyPool recycles request body buffers. A buffer that grew past
// maxPooledBody is left to the garbage collector, so one burst of large
// bodies does not pin its memory for the life of the process.
type bodyPool struct{ p sync.Pool }

const maxPooledBody = 64 << 10

func (b *bodyPool) get() *bytes.Buffer {
	if buf, ok := b.p.Get().(*bytes.Buffer); ok {
		return buf
	}
	return new(bytes.Buffer)
}

func (b *bodyPool) put(buf *bytes.Buffer) {
	if buf.Cap() > maxPooledBody {
		return
	}
	buf.Reset()
	b.p.Put(buf)
}

func (s *Server) serveCommand(w http.ResponseWriter, r *http.Request, req signedRequest) string {
	cmd, err := decodeSlashCommand(req.body)
	if err != nil {
		writeText(w, http.StatusBadRequest, "bad slash command")
		return outcomeBadRequest
	}
	msg, outcome := s.slash(r.Context(), cmd, commandKey([]byte(req.timestamp), req.body))
	if outcome == outcomeDuplicate || msg.empty() {
		w.WriteHeader(http.StatusOK) // an empty 200: Slack shows nothing more
		return outcome
	}
	writeJSON(w, msg)
	return outcome
}

func (s *Server) serveEvent(w http.ResponseWriter, r *http.Request, req signedRequest) string {
	env, err := decodeEvent(req.body)
	if err != nil {
		s.log.Info("undecodable event", "err", err)
		writeText(w, http.StatusBadRequest, "bad event")
		return outcomeBadRequest
	}
	if env.Type == envelopeURLVerification {
		writeText(w, http.StatusOK, env.Challenge)
		return outcomeChallenge
	}
	outcome, err := s.acceptEvent(r.Context(), env)
	if err != nil {
		// A non-2xx makes Slack retry, possibly on a healthy replica; the
		// body says why (never more than these fixed words).
		writeText(w, http.StatusServiceUnavailable, refusalText(err))
		return outcome
	}
	w.WriteHeader(http.StatusOK)
	return outcome
}

func (s *Server) serveInteraction(w http.ResponseWriter, r *http.Request, req signedRequest) string {
	in, err := decodeInteraction(req.body)
	if err != nil {
		writeText(w, http.StatusBadRequest, "bad interaction")
		return outcomeBadRequest
	}
	outcome, body := s.interact(r.Context(), in)
	if body == nil {
		w.WriteHeader(http.StatusOK)
		return outcome
	}
	writeJSON(w, body)
	return outcome
}

func writeText(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, text)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
