package bot

import (
	"context"
	"strings"

	"github.com/vrambot/vrambot/reply"
)

// How a mention or a direct message is read and answered, one answer per
// message (docs/slack.md §C.1): an OOM in its text or files first, then a
// job, then an attached config.json, then what it says (a /vram query,
// help).

// reading is a message read once: its text, its text files, the job and
// the config.json in them.
type reading struct {
	text   string // without mentions, unescaped
	files  []attachment
	job    jobPlan
	config *attachment // an attached config.json, when Deps.Configs is set
}

// withoutMentions is a message's text as the user wrote it, without the
// mentions in it.
func withoutMentions(raw string) string {
	return strings.TrimSpace(mentionRE.ReplaceAllString(slackUnescape(raw), " "))
}

// readMessage downloads a message's text files and reads it as a job
// (whole: its whole text too, for the shortcut). A message that starts
// with "vram" asks a query: a job that does not read is then no reason to
// refuse it.
func (s *Server) readMessage(ctx context.Context, ev innerEvent, text string, whole bool) reading {
	rd := reading{text: text}
	if len(ev.Files) > 0 {
		rd.files = s.attachments(ctx, ev)
	}
	rd.config = s.markConfigs(rd.files)
	rd.job = s.planJob(text, rd.files, whole)
	if _, asked := vramWords(text); asked && !rd.job.ok() {
		rd.job.given = false
	}
	return rd
}

// full is the text and its files, where an OOM may be.
func (rd reading) full() string { return joinText(rd.text, rd.files) }

// answersItself reports a message whose job or config.json is the answer
// whatever its words say.
func (rd reading) answersItself() bool { return rd.job.ok() || rd.config != nil }

// messageAnswer is the answer to a mention or a direct message.
type messageAnswer struct {
	r   reply.Reply
	oom OOMFacts
	// job: the answer is a job's (the shortcut on the message then points
	// at it); byAsker: its asker may change it in place (Apply).
	job, byAsker bool
}

// answerMessage answers a message read: the model of its job (or of
// lookup, the /vram query fallback asks) is looked up on the Hub first,
// outside a compute slot; then, in one, the answer (messageReply).
func (s *Server) answerMessage(ctx context.Context, user string, rd reading, lookup string, fallback func(context.Context) reply.Reply) messageAnswer {
	switch {
	case rd.job.ok():
		lookup = rd.job.query
	case rd.config != nil || rd.job.given:
		lookup = ""
	}
	cctx := ctx
	var lookupErr error
	if lookup != "" {
		cctx, lookupErr = s.lookUpModel(ctx, user, lookup)
	}
	var a messageAnswer
	err := s.computeAnswer(cctx, func(cctx context.Context) { a = s.messageReply(cctx, rd, lookup, lookupErr, fallback) })
	if err != nil && a.r.Kind == "" {
		s.log.Warn("message not answered in time", "err", err)
		a = messageAnswer{r: errorReply(tooSlowText)}
	}
	return a
}

// messageReply computes the answer to a message read, in order: an OOM in
// its text or files (whose diagnosis sizes a job in the same paste), its
// job, its config.json, why a job given does not read, the fallback.
func (s *Server) messageReply(ctx context.Context, rd reading, lookup string, lookupErr error, fallback func(context.Context) reply.Reply) messageAnswer {
	if full := rd.full(); strings.TrimSpace(full) != "" {
		if r, facts := s.deps.Commands.OOM(ctx, full); facts.Detected {
			return messageAnswer{r: r, oom: facts}
		}
	}
	switch {
	case lookupErr != nil:
		return messageAnswer{r: s.vramOutcome(lookup, false, reply.Reply{}, lookupErr), byAsker: true}
	case rd.job.ok():
		r, _ := s.jobReply(ctx, rd.job)
		return messageAnswer{r: r, job: true, byAsker: true}
	case rd.config != nil:
		return messageAnswer{r: s.configReply(ctx, configQuery(rd.text), *rd.config)}
	case rd.job.given:
		return messageAnswer{r: s.jobRefusal(ctx, rd.job, jobRefusedTitle), byAsker: true}
	}
	return messageAnswer{r: fallback(ctx), byAsker: true}
}

// jobRefusedTitle heads the answer to a job given that does not read.
const jobRefusedTitle = "Could not read that job"

// postAnswer posts a message's answer in thread: an OOM's as answerOOM
// does; a job's marks the message as sized, so the shortcut on it points
// here. asker ("" for none) may change the answer in place.
func (s *Server) postAnswer(ctx context.Context, ev innerEvent, thread, asker string, a messageAnswer) {
	if a.oom.Detected {
		s.answerOOM(ctx, ev, a.r, a.oom)
		return
	}
	if a.job {
		s.markSized(ctx, ev.Channel, ev.TS)
	}
	a.r.Ephemeral = false
	if !a.byAsker {
		asker = ""
	}
	s.postFor(ctx, kindEvent, ev.Channel, thread, a.r, asker)
}
