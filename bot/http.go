package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/slack-go/slack"
)

// Handler returns the HTTP endpoints: the three Slack request URLs (HTTP
// mode; refused when no signing secret is configured), health, readiness
// and metrics.
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

// readyTimeout bounds the store ping behind /readyz.
const readyTimeout = 2 * time.Second

func (s *Server) serveReady(w http.ResponseWriter, r *http.Request) {
	if s.closing.Load() {
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

// signedHandler handles a request whose body passed signature verification.
// It returns the outcome label for the metrics.
type signedHandler func(w http.ResponseWriter, r *http.Request, body []byte) string

// signed reads the raw body under the size cap and verifies Slack's v0
// signature and the 5-minute window before anything parses it.
func (s *Server) signed(kind string, next signedHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		outcome := s.verifyAndServe(w, r, next)
		s.metrics.observe(kind, outcome, start)
	}
}

func (s *Server) verifyAndServe(w http.ResponseWriter, r *http.Request, next signedHandler) string {
	if s.cfg.SigningSecret == "" {
		// Without a secret every signature would be forgeable.
		writeText(w, http.StatusNotFound, "http mode disabled")
		return outcomeUnauthorized
	}
	if r.ContentLength > s.cfg.MaxBodyBytes {
		w.Header().Set("Connection", "close")
		writeText(w, http.StatusRequestEntityTooLarge, "body too large")
		return outcomeTooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeText(w, http.StatusRequestEntityTooLarge, "body too large")
			return outcomeTooLarge
		}
		writeText(w, http.StatusBadRequest, "unreadable body")
		return outcomeBadRequest
	}
	if err := verify(r.Header, body, s.cfg.SigningSecret); err != nil {
		s.log.Info("refused unsigned slack request", "path", r.URL.Path, "reason", err.Error())
		writeText(w, http.StatusUnauthorized, "invalid signature")
		return outcomeUnauthorized
	}
	if s.closing.Load() {
		// Slack retries events elsewhere; users of commands see a timeout.
		writeText(w, http.StatusServiceUnavailable, "shutting down")
		return outcomeUnavailable
	}
	return next(w, r, body)
}

// verify checks the v0 signature of body and the request timestamp
// (slack.NewSecretsVerifier rejects timestamps more than 5 minutes off).
func verify(h http.Header, body []byte, secret string) error {
	sv, err := slack.NewSecretsVerifier(h, secret)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if _, err := sv.Write(body); err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if err := sv.Ensure(); err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	return nil
}

func (s *Server) serveCommand(w http.ResponseWriter, r *http.Request, body []byte) string {
	cmd, err := decodeSlashCommand(body)
	if err != nil {
		writeText(w, http.StatusBadRequest, "bad slash command")
		return outcomeBadRequest
	}
	msg, outcome := s.slash(cmd)
	writeJSON(w, msg)
	return outcome
}

func (s *Server) serveEvent(w http.ResponseWriter, r *http.Request, body []byte) string {
	env, err := decodeEvent(body)
	if err != nil {
		writeText(w, http.StatusBadRequest, "bad event")
		return outcomeBadRequest
	}
	if env.Type == envelopeURLVerification {
		writeText(w, http.StatusOK, env.Challenge)
		return outcomeChallenge
	}
	outcome, err := s.acceptEvent(r.Context(), env)
	if err != nil {
		// A non-2xx makes Slack retry, possibly on a healthy replica.
		writeText(w, http.StatusServiceUnavailable, "try again")
		return outcome
	}
	w.WriteHeader(http.StatusOK)
	return outcome
}

func (s *Server) serveInteraction(w http.ResponseWriter, r *http.Request, body []byte) string {
	in, err := decodeInteraction(body)
	if err != nil {
		writeText(w, http.StatusBadRequest, "bad interaction")
		return outcomeBadRequest
	}
	outcome := s.interact(in)
	w.WriteHeader(http.StatusOK)
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
