package bot

import (
	"context"
	"strings"

	"github.com/vrambot/vrambot/reply"
)

// handleDM answers a direct message (the App Home's Messages tab) the way
// a mention is answered in a channel (messageReply): an OOM paste, as text
// or an attached snippet, gets its diagnosis in its thread; a job (a code
// block, a job file) its estimate; a config.json its estimate; a greeting
// the usage; anything else is read as a /vram query or question. The
// answer is in the conversation, in the question's thread when it was
// asked in one.
func (s *Server) handleDM(ctx context.Context, ev innerEvent) {
	text := withoutMentions(ev.Text)
	rd := s.readMessage(ctx, ev, text, false)
	q := dmQuery(text)
	lookup := ""
	if rd.full() == text && q != "" && runeLen(q) <= maxQueryRunes {
		// A question whose model is on the Hub: looked up in the Hub pool
		// before the answer takes a compute slot.
		lookup = q
	}
	a := s.answerMessage(ctx, ev.User, rd, lookup, func(cctx context.Context) reply.Reply { return s.dmQueryReply(cctx, q) })
	s.postAnswer(ctx, ev, ev.ThreadTS, "", a)
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

// dmQueryReply answers a direct message that holds no OOM, job or
// config: the usage for a greeting, else its /vram query.
func (s *Server) dmQueryReply(ctx context.Context, q string) reply.Reply {
	if q == "" {
		r := usageReply("")
		r.Ephemeral = false
		return r
	}
	if runeLen(q) > maxQueryRunes {
		return errorReply("That message is long for a question and holds no out-of-memory error I know. Ask in a few words, or paste the whole error.")
	}
	return s.vramReply(ctx, q, false)
}
