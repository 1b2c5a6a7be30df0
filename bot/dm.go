package bot

import (
	"context"
	"strings"

	"github.com/vrambot/vrambot/reply"
)

// handleDM answers a direct message (the App Home's Messages tab) the way
// a mention is answered in a channel: an OOM paste, as text or an attached
// snippet, gets its diagnosis in its thread; a config.json its estimate;
// a greeting the usage; anything else is read as a /vram query or
// question. The answer is in the conversation, in the question's thread
// when it was asked in one.
func (s *Server) handleDM(ctx context.Context, ev innerEvent) {
	text := strings.TrimSpace(mentionRE.ReplaceAllString(slackUnescape(ev.Text), " "))
	if f, ok := s.attachedConfig(ev); ok {
		var r reply.Reply
		if err := s.computeAnswer(ctx, func(cctx context.Context) { r = s.vramConfigReply(cctx, configQuery(text), f) }); err != nil && r.Kind == "" {
			r = errorReply(tooSlowText)
		}
		r.Ephemeral = false
		s.post(ctx, kindEvent, ev.Channel, ev.ThreadTS, r)
		return
	}
	full := s.gatherText(ctx, ev, text)
	cctx := ctx
	if q := dmQuery(text); full == text && q != "" && runeLen(q) <= maxQueryRunes {
		// A question whose model is on the Hub: looked up in the Hub pool
		// before the answer takes a compute slot.
		var err error
		if cctx, err = s.lookUpModel(ctx, ev.User, q); err != nil {
			s.post(ctx, kindEvent, ev.Channel, ev.ThreadTS, s.vramOutcome(q, false, reply.Reply{}, err))
			return
		}
	}
	var r reply.Reply
	var oom OOMFacts
	if err := s.computeAnswer(cctx, func(cctx context.Context) { r, oom = s.dmAnswer(cctx, text, full) }); err != nil && r.Kind == "" {
		s.log.Warn("direct message not answered in time", "err", err)
		r, oom = errorReply(tooSlowText), OOMFacts{}
	}
	if oom.Detected {
		s.answerOOM(ctx, ev, r, oom)
		return
	}
	r.Ephemeral = false
	s.post(ctx, kindEvent, ev.Channel, ev.ThreadTS, r)
}

// dmQuery is the /vram query a direct message asks ("" for a greeting):
// its text without a leading "vram".
func dmQuery(text string) string {
	q := text
	if word, rest, _ := strings.Cut(q, " "); strings.EqualFold(word, "vram") || strings.EqualFold(word, "/vram") {
		q = strings.TrimSpace(rest)
	}
	if greetings[strings.ToLower(strings.Trim(q, "!. "))] {
		return ""
	}
	return q
}

// greetings are messages that ask what the bot does.
var greetings = map[string]bool{"help": true, "hi": true, "hello": true, "hey": true, "?": true, "thanks": true, "thank you": true, "usage": true}

// dmAnswer computes the answer to a direct message: text is the message
// without mentions, full the text with attached snippets.
func (s *Server) dmAnswer(ctx context.Context, text, full string) (reply.Reply, OOMFacts) {
	if strings.TrimSpace(full) != "" {
		if r, facts := s.deps.Commands.OOM(ctx, full); facts.Detected {
			return r, facts
		}
	}
	q := dmQuery(text)
	if q == "" {
		r := usageReply("")
		r.Ephemeral = false
		return r, OOMFacts{}
	}
	if runeLen(q) > maxQueryRunes {
		return errorReply("That message is long for a question and holds no out-of-memory error I know. Ask in a few words, or paste the whole error."), OOMFacts{}
	}
	return s.vramReply(ctx, q, false), OOMFacts{}
}
