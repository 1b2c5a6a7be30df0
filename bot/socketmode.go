package bot

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/slack-go/slack/socketmode"
)

// runSocketMode connects with the app-level token and serves envelopes
// until ctx is cancelled. slack-go reconnects on its own (backoff capped at
// 5 minutes) and returns only for fatal auth errors or cancellation.
func (s *Server) runSocketMode(ctx context.Context) error {
	sm := socketmode.New(s.api, socketmode.OptionLog(slogOutput{s.log}))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case evt := <-sm.Events:
				s.socketEvent(ctx, sm, evt)
			}
		}
	}()
	err := sm.RunContext(ctx)
	cancel()
	<-done
	return err
}

// socketEvent acks every envelope and routes it to the same core as HTTP.
// Payloads are decoded by our own decoders from the raw envelope, so an
// event slack-go could not parse (ErrorBadMessage) is still acked and served.
func (s *Server) socketEvent(ctx context.Context, sm *socketmode.Client, evt socketmode.Event) {
	start := time.Now()
	switch evt.Type {
	case socketmode.EventTypeEventsAPI, socketmode.EventTypeSlashCommand, socketmode.EventTypeInteractive:
		if evt.Request != nil {
			s.goSocketRequest(ctx, sm, *evt.Request, start)
		}
	case socketmode.EventTypeErrorBadMessage:
		bad, ok := evt.Data.(*socketmode.ErrorBadMessage)
		if !ok {
			return
		}
		var req socketmode.Request
		if err := json.Unmarshal(bad.Message, &req); err != nil || req.EnvelopeID == "" {
			s.log.Warn("socket mode: unreadable envelope", "err", bad.Cause)
			return
		}
		s.goSocketRequest(ctx, sm, req, start)
	case socketmode.EventTypeConnected:
		s.log.Info("socket mode connected")
	case socketmode.EventTypeConnectionError, socketmode.EventTypeInvalidAuth:
		s.metrics.apiError("apps.connections.open")
		s.log.Warn("socket mode connection problem", "type", string(evt.Type))
	}
}

// goSocketRequest serves one envelope on its own goroutine, admitted like
// any other work (so a drain waits for it, and nothing starts after the
// drain began): a slash command may wait up to the inline budget, which
// must not hold up the envelopes behind it. An envelope that is not
// admitted is not acked, so Slack redelivers it to another connection.
func (s *Server) goSocketRequest(ctx context.Context, sm *socketmode.Client, req socketmode.Request, start time.Time) {
	kind := socketKind(req.Type)
	if !s.goWork(workItem{kind: kind, ref: "envelope"}, func(context.Context) { s.socketRequest(ctx, sm, req, start) }) {
		s.metrics.observe(kind, outcomeUnavailable, start)
	}
}

func socketKind(t string) string {
	switch t {
	case socketmode.RequestTypeSlashCommands:
		return kindCommand
	case socketmode.RequestTypeInteractive:
		return kindInteraction
	}
	return kindEvent
}

func (s *Server) socketRequest(ctx context.Context, sm *socketmode.Client, req socketmode.Request, start time.Time) {
	ack := func(payload any) {
		if err := sm.AckCtx(ctx, req.EnvelopeID, payload); err != nil {
			s.log.Warn("socket mode ack failed", "type", req.Type, "err", err)
		}
	}
	switch req.Type {
	case socketmode.RequestTypeEventsAPI:
		env, err := decodeEvent(req.Payload)
		if err != nil {
			ack(nil) // a redelivery would not decode either
			s.metrics.observe(kindEvent, outcomeBadRequest, start)
			return
		}
		// Ack only what was taken: an unacked envelope is redelivered, as a
		// non-2xx answer is in HTTP mode (for example while the store is down).
		outcome, err := s.acceptEvent(ctx, env)
		if err == nil {
			ack(nil)
		}
		s.metrics.observe(kindEvent, outcome, start)
	case socketmode.RequestTypeSlashCommands:
		cmd, err := decodeSlashCommandJSON(req.Payload)
		if err != nil {
			ack(nil)
			s.metrics.observe(kindCommand, outcomeBadRequest, start)
			return
		}
		resp, outcome := s.slash(ctx, cmd, commandKey(req.Payload))
		if outcome == outcomeDuplicate || resp.empty() {
			ack(nil)
		} else if err := sm.AckCtx(ctx, req.EnvelopeID, resp); err != nil {
			// Over the 20 KB ack limit: ack empty, answer by response_url.
			ack(nil)
			s.respond(ctx, kindCommand, cmd.ResponseURL, resp)
		}
		s.metrics.observe(kindCommand, outcome, start)
	case socketmode.RequestTypeInteractive:
		in, err := decodeInteractionJSON(req.Payload)
		if err != nil {
			ack(nil)
			s.metrics.observe(kindInteraction, outcomeBadRequest, start)
			return
		}
		// The ack carries a typeahead's options or a form's errors.
		outcome, body := s.interact(ctx, in)
		ack(body)
		s.metrics.observe(kindInteraction, outcome, start)
	default:
		ack(nil)
	}
}

// slogOutput adapts slog to the Output method slack-go's socketmode logs to.
type slogOutput struct{ log *slog.Logger }

func (o slogOutput) Output(_ int, msg string) error {
	o.log.Debug("socketmode: " + msg)
	return nil
}
