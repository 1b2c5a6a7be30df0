package bot

import (
	"context"
	"errors"

	"github.com/vrambot/vrambot/reply"
)

// The "Diagnose OOM" message shortcut (callback diagnose_oom, declared in
// the manifest): on any message — someone else's, a bot's, one in a thread
// — it reads the message (and its attached snippets) and answers with one
// diagnosis in that message's thread. One click answers once (the click is
// claimed), and a message is diagnosed once however many people ask (the
// message is claimed too; later askers are told where the answer is).

// Messages users see from the shortcut.
const (
	alreadyDiagnosedText = "I already answered that message in its thread."
	diagnoseUnsureText   = "I could not check whether that message was already answered (my store did not answer), so I did not answer it. Please try again in a moment."
)

// diagnoseMessage handles the shortcut.
func (s *Server) diagnoseMessage(ctx context.Context, in interaction) string {
	channel, ts := in.channelID(), in.Message.TS
	if ts == "" {
		ts = in.MessageTS
	}
	if channel == "" || ts == "" {
		return outcomeIgnored
	}
	it := workItem{kind: kindInteraction, channel: channel, ref: callbackDiagnoseOOM}
	err := s.claimOnce(ctx, actionKey(in.User.ID, callbackDiagnoseOOM, in.ActionTS+in.TriggerID))
	switch {
	case errors.Is(err, errDuplicate):
		return outcomeDuplicate
	case err != nil:
		// Fail closed: a public answer must not go out twice.
		s.metrics.dedupeError(kindInteraction)
		s.log.Warn("shortcut dedupe failed; not answering", "err", err)
		s.goWork(it, func(ctx context.Context) {
			s.respond(ctx, kindInteraction, in.ResponseURL, ephemeralText(diagnoseUnsureText))
		})
		return outcomeUnavailable
	}
	ev := in.Message
	ev.Type, ev.Channel, ev.TS = eventMessage, channel, ts
	if !s.goWork(it, func(ctx context.Context) { s.diagnose(ctx, in, ev) }) {
		return outcomeUnavailable
	}
	return outcomeAccepted
}

func (s *Server) diagnose(ctx context.Context, in interaction, ev innerEvent) {
	text := s.gatherText(ctx, ev, slackUnescape(ev.Text))
	var r reply.Reply
	var facts OOMFacts
	if err := s.computeAnswer(ctx, func(cctx context.Context) { r, facts = s.deps.Commands.OOM(cctx, text) }); err != nil {
		s.respond(ctx, kindInteraction, in.ResponseURL, ephemeralText(tooSlowText))
		return
	}
	if !facts.Detected {
		s.respond(ctx, kindInteraction, in.ResponseURL, s.responseFor(ctx, notOOMReply()))
		return
	}
	switch err := s.claimOnce(ctx, diagnosedKey(ev.Channel, ev.TS)); {
	case errors.Is(err, errDuplicate):
		s.respond(ctx, kindInteraction, in.ResponseURL, ephemeralText(alreadyDiagnosedText))
		return
	case err != nil:
		s.metrics.dedupeError(kindInteraction)
		s.respond(ctx, kindInteraction, in.ResponseURL, ephemeralText(diagnoseUnsureText))
		return
	}
	s.metrics.oom(facts.Format)
	r.Ephemeral = false
	thread := threadOf(ev)
	pctx, cancel := s.postContext(ctx)
	_, err := s.poster.postReply(pctx, ev.Channel, thread, r, s.detailsKeyFor(pctx, thread, r))
	cancel()
	if err != nil {
		// Not a member of the channel, say: the person who asked still
		// gets the diagnosis, privately.
		s.metrics.answerFailed(kindInteraction, failureReason(err))
		s.log.Info("shortcut answer not posted in the thread; answering privately", "channel", ev.Channel, "err", err)
		r.Ephemeral = true
		s.respond(ctx, kindInteraction, in.ResponseURL, s.responseFor(ctx, r))
	}
	s.recordOOM(ctx, ev, thread, facts)
}

// diagnosedKey marks a message as diagnosed (by the shortcut or because
// it was answered as a paste).
func diagnosedKey(channel, ts string) string { return dedupeKey(diagnosedKeyPrefix, channel, ts) }
