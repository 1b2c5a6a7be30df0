package bot

import (
	"context"
	"errors"

	"github.com/vrambot/vrambot/reply"
)

// The message shortcuts (declared in the manifest): on any message —
// someone else's, a bot's, one in a thread — "Diagnose OOM" (callback
// diagnose_oom) reads the message (and its attached snippets) and answers
// with one diagnosis in that message's thread; "Size this job" (size_job)
// reads the job in it (a code block, a job file, or the message itself)
// and answers with its estimate there. One click answers once (the click
// is claimed), and a message is answered once however many people ask
// (the message is claimed too; later askers are told where the answer
// is). What is no OOM or no job is said privately.

// Messages users see from the shortcuts.
const (
	alreadyDiagnosedText = "I already answered that message in its thread."
	diagnoseUnsureText   = "I could not check whether that message was already answered (my store did not answer), so I did not answer it. Please try again in a moment."
	alreadySizedText     = "I already sized the job in that message, in its thread."
)

// diagnoseMessage handles "Diagnose OOM".
func (s *Server) diagnoseMessage(ctx context.Context, in interaction) string {
	return s.messageShortcut(ctx, in, callbackDiagnoseOOM, s.diagnose)
}

// sizeJobMessage handles "Size this job".
func (s *Server) sizeJobMessage(ctx context.Context, in interaction) string {
	return s.messageShortcut(ctx, in, callbackSizeJob, s.sizeJob)
}

// messageShortcut claims a shortcut's click and runs answer on the message
// it was run on, as admitted work.
func (s *Server) messageShortcut(ctx context.Context, in interaction, callback string, answer func(context.Context, interaction, innerEvent)) string {
	channel, ts := in.channelID(), in.Message.TS
	if ts == "" {
		ts = in.MessageTS
	}
	if channel == "" || ts == "" {
		return outcomeIgnored
	}
	it := workItem{kind: kindInteraction, channel: channel, ref: callback}
	err := s.claimOnce(ctx, actionKey(in.User.ID, callback, in.ActionTS+in.TriggerID))
	switch {
	case errors.Is(err, errDuplicate):
		return outcomeDuplicate
	case err != nil:
		// Fail closed: a public answer must not go out twice.
		s.metrics.dedupeError(kindInteraction)
		s.log.Warn("shortcut dedupe failed; not answering", "callback", callback, "err", err)
		s.goWork(it, func(ctx context.Context) {
			s.respond(ctx, kindInteraction, in.ResponseURL, ephemeralText(diagnoseUnsureText))
		})
		return outcomeUnavailable
	}
	ev := in.Message
	ev.Type, ev.Channel, ev.TS = eventMessage, channel, ts
	if !s.goWork(it, func(ctx context.Context) { answer(ctx, in, ev) }) {
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
	if thread, _, ok := s.answerInThread(ctx, in, ev, diagnosedKey(ev.Channel, ev.TS), alreadyDiagnosedText, r); ok {
		s.metrics.oom(facts.Format)
		s.recordOOM(ctx, ev, thread, facts)
	}
}

// sizeJob answers "Size this job": the job's model looked up on the Hub
// first, then its estimate in the message's thread; a message that holds
// no job gets the job reader's reason, privately.
func (s *Server) sizeJob(ctx context.Context, in interaction, ev innerEvent) {
	rd := s.readMessage(ctx, ev, withoutMentions(ev.Text), true)
	var r reply.Reply
	ok := false
	if rd.job.ok() {
		cctx, err := s.lookUpModel(ctx, in.User.ID, rd.job.query)
		if err != nil {
			r = s.vramOutcome(rd.job.query, false, reply.Reply{}, err)
		} else if err := s.computeAnswer(cctx, func(cctx context.Context) { r, ok = s.jobReply(cctx, rd.job) }); err != nil && r.Kind == "" {
			r = errorReply(tooSlowText)
		}
	} else if err := s.computeAnswer(ctx, func(cctx context.Context) { r = s.jobRefusal(cctx, rd.job, notJobTitle) }); err != nil {
		r = errorReply(tooSlowText)
	}
	if !ok {
		// No job, or one that cannot be answered: only the asker hears why.
		r.Ephemeral = true
		s.respond(ctx, kindInteraction, in.ResponseURL, s.responseFor(ctx, r))
		return
	}
	// The asker may then apply its fixes in place (applyFix).
	if _, posted, _ := s.answerInThread(ctx, in, ev, sizedKey(ev.Channel, ev.TS), alreadySizedText, r); posted != "" {
		s.rememberAsker(ctx, ev.Channel, posted, in.User.ID)
	}
}

// answerInThread posts a shortcut's answer in the thread of the message it
// ran on, once per message (key); a later asker is told so (already).
// Where the bot cannot post (not a member of the channel, say), the asker
// gets the answer privately. It reports the thread, the posted message's
// ts ("" when answered privately) and whether the answer went out.
func (s *Server) answerInThread(ctx context.Context, in interaction, ev innerEvent, key, already string, r reply.Reply) (thread, posted string, ok bool) {
	switch err := s.claimOnce(ctx, key); {
	case errors.Is(err, errDuplicate):
		s.respond(ctx, kindInteraction, in.ResponseURL, ephemeralText(already))
		return "", "", false
	case err != nil:
		s.metrics.dedupeError(kindInteraction)
		s.respond(ctx, kindInteraction, in.ResponseURL, ephemeralText(diagnoseUnsureText))
		return "", "", false
	}
	r.Ephemeral = false
	thread = threadOf(ev)
	pctx, cancel := s.postContext(ctx)
	posted, err := s.poster.postReply(pctx, ev.Channel, thread, r, s.detailsKeyFor(pctx, thread, r))
	cancel()
	if err != nil {
		s.metrics.answerFailed(kindInteraction, failureReason(err))
		s.log.Info("shortcut answer not posted in the thread; answering privately", "channel", ev.Channel, "err", err)
		r.Ephemeral = true
		s.respond(ctx, kindInteraction, in.ResponseURL, s.responseFor(ctx, r))
		posted = ""
	}
	return thread, posted, true
}

// diagnosedKey marks a message as diagnosed (by the shortcut or because
// it was answered as a paste).
func diagnosedKey(channel, ts string) string { return dedupeKey(diagnosedKeyPrefix, channel, ts) }

// sizedKey marks a message whose job was answered (by the shortcut or
// because it was answered as a mention or a direct message).
func sizedKey(channel, ts string) string { return dedupeKey(sizedKeyPrefix, channel, ts) }

// markSized marks the message at channel, ts as sized: the shortcut on it
// then points at the answer.
func (s *Server) markSized(ctx context.Context, channel, ts string) {
	if err := s.claimOnce(ctx, sizedKey(channel, ts)); err != nil && !errors.Is(err, errDuplicate) {
		s.log.Info("job message not marked as sized", "err", err)
	}
}
