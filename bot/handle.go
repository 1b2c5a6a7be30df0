package bot

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/internal/redact"
	"github.com/vrambot/vrambot/internal/safetext"
	"github.com/vrambot/vrambot/query"
	"github.com/vrambot/vrambot/reply"
)

// This file is the transport-neutral core: HTTP and Socket Mode decode a
// request, then call slash, acceptEvent or interact.

// shareActionID is the action_id of the "Share in channel" button on /vram
// answers; its value is the query. It equals commands.ShareActionID, whose
// replies may carry the button already.
const shareActionID = "share"

var (
	errClosing    = errors.New("bot: shutting down")
	errRetryLater = errors.New("bot: event held by another delivery")
)

// refusalText is the body of a 503 for an event not taken: why, in fixed
// words (the pending-work cap is Config.MaxPending).
func refusalText(err error) string {
	switch {
	case errors.Is(err, errFull):
		return "busy: at the pending-work cap; retry later"
	case errors.Is(err, errClosing):
		return "shutting down; retry on another replica"
	case errors.Is(err, errRetryLater):
		return "being answered by another delivery; retry later"
	}
	return "store unreachable; retry later"
}

// Messages users see when the bot itself could not answer.
const (
	restartingText = "vrambot is restarting or busy; please try again in a moment."
	tooSlowText    = "Working that out took too long; please try again in a moment."
	// postFailedText: Slack refused an answer or could not be reached; the
	// details are in the log only.
	postFailedText   = "Sorry, I have an answer but could not post it to Slack. The error is logged for the operators."
	shareUnsureText  = "I could not check whether this answer was already shared (my store did not answer), so I did not share it. Please try again in a moment."
	vramRefusedTitle = "Could not answer that"
)

// redactErr strips a URL out of a transport error (a response_url or a
// file URL is itself a credential).
func redactErr(err error) error { return redact.Error(err, redact.Origin) }

// commandResponse is the synchronous answer to a slash command (HTTP body
// or Socket Mode ack payload) and the body of a response_url follow-up.
type commandResponse struct {
	ResponseType    string        `json:"response_type,omitempty"`
	Text            string        `json:"text,omitempty"`
	Blocks          []slack.Block `json:"blocks,omitempty"`
	ReplaceOriginal bool          `json:"replace_original,omitempty"`
}

// responseFor renders r for a response_url answer (or a slash command's
// own answer). Its details are kept in the store behind the Details
// button, since an ephemeral message has no thread.
// detailsKeyFor keeps the details of a reply posted in a thread behind
// its Details button (a thread answer stays one message; one that starts
// a thread gets its details there). "" means: post them.
func (s *Server) detailsKeyFor(ctx context.Context, thread string, r reply.Reply) string {
	if thread == "" || r.Details == nil {
		return ""
	}
	return s.keepDetails(ctx, *r.Details)
}

// empty reports a response with nothing to show (a form was opened).
func (c commandResponse) empty() bool { return c.Text == "" && len(c.Blocks) == 0 }

func (s *Server) responseFor(ctx context.Context, r reply.Reply) commandResponse {
	opts := renderOptions{surface: surfaceResponse}
	if r.Details != nil {
		opts.detailsKey = s.keepDetails(ctx, *r.Details)
	}
	out := render(r, opts)
	rt := slack.ResponseTypeInChannel
	if r.Ephemeral {
		rt = slack.ResponseTypeEphemeral
	}
	return commandResponse{ResponseType: rt, Text: out.fallback, Blocks: out.blocks}
}

// slash answers a slash command. key is its dedupe key ("" skips dedupe).
// With no text it opens the command's form (views.open with the trigger
// id, which Slack honours for 3 s); /oom with text diagnoses the paste. A
// /vram query computes with the inline budget; when that runs out, or at
// once when its model must be looked up on the Hub, it returns a short
// ack and the answer follows through response_url.
func (s *Server) slash(ctx context.Context, cmd slashCommand, key string) (commandResponse, string) {
	s.log.Debug("slash command", "command", cmd.Command, "channel", cmd.ChannelID, "user", cmd.UserID)
	query := strings.TrimSpace(cmd.Text)
	oomCommand := isOOMCommand(cmd.Command)
	if strings.EqualFold(query, "help") {
		return s.responseFor(ctx, usageReply(cmd.Command)), outcomeInline
	}
	if !oomCommand && runeLen(query) > maxQueryRunes {
		return s.responseFor(ctx, errorReply(fmt.Sprintf("That query is %d characters long; a /vram query is a few words (at most %d characters).", runeLen(query), maxQueryRunes))), outcomeInline
	}
	if key != "" {
		switch err := s.claimOnce(ctx, key); {
		case errors.Is(err, errDuplicate):
			return commandResponse{}, outcomeDuplicate // a replay: the first delivery answers
		case err != nil:
			// Fail open: the answer is private to the user who asked, so a
			// replay while the store is down costs little.
			s.metrics.dedupeError(kindCommand)
			s.log.Warn("slash command dedupe failed; answering anyway", "err", err)
		}
	}
	switch {
	case query == "":
		return s.openForm(ctx, cmd, oomCommand)
	case oomCommand:
		return s.slashOOM(ctx, cmd, query)
	}
	if s.deps.Lookups != nil {
		if ref, needed := s.deps.Lookups.HubLookup(ctx, query); needed {
			return s.slashDeferred(cmd, query, ref, "Looking up "+safetext.OneLine(ref, 100)+" on the Hugging Face Hub…")
		}
	}
	h := &handoff{waiting: true, ch: make(chan reply.Reply, 1)}
	started := s.goWork(workItem{kind: kindCommand, channel: cmd.ChannelID}, func(ctx context.Context) {
		r := s.slashAnswer(ctx, query)
		if h.give(r) {
			return
		}
		resp := s.responseFor(ctx, r)
		resp.ReplaceOriginal = true // replaces the "working on it" ack
		s.respond(ctx, kindCommand, cmd.ResponseURL, resp)
	})
	if !started {
		return s.responseFor(ctx, errorReply(restartingText)), outcomeUnavailable
	}
	timer := time.NewTimer(s.cfg.InlineBudget)
	defer timer.Stop()
	select {
	case r := <-h.ch:
		return s.responseFor(ctx, r), outcomeInline
	case <-timer.C:
		if r, ok := h.abandon(); ok {
			return s.responseFor(ctx, r), outcomeInline
		}
		return commandResponse{ResponseType: slack.ResponseTypeEphemeral, Text: workingText}, outcomeDeferred
	}
}

// workingText acks a command whose answer follows through response_url.
const workingText = "Working on it…"

// slashAnswer computes a /vram query's private answer under the work bounds.
func (s *Server) slashAnswer(ctx context.Context, query string) reply.Reply {
	r := reply.Reply{}
	if err := s.computeAnswer(ctx, func(cctx context.Context) { r = s.vramReply(cctx, query, true) }); err != nil && r.Kind == "" {
		s.log.Warn("slash command not computed in time", "err", err)
		r = errorReply(tooSlowText)
	}
	return r
}

// slashDeferred acks with ack and always answers through response_url
// (a Hub lookup may take seconds; a fast one is no reason to answer
// inline, so the ack and the answer come the same way every time).
// The model is looked up in the Hub pool before the answer takes a
// compute slot.
func (s *Server) slashDeferred(cmd slashCommand, query, ref, ack string) (commandResponse, string) {
	if !s.goWork(workItem{kind: kindCommand, channel: cmd.ChannelID}, func(ctx context.Context) {
		var r reply.Reply
		if actx, err := s.lookUpRef(ctx, cmd.UserID, ref); err != nil {
			r = s.vramOutcome(query, true, reply.Reply{}, err)
		} else {
			r = s.slashAnswer(actx, query)
		}
		resp := s.responseFor(ctx, r)
		resp.ReplaceOriginal = true
		s.respond(ctx, kindCommand, cmd.ResponseURL, resp)
	}) {
		return s.responseFor(context.Background(), errorReply(restartingText)), outcomeUnavailable
	}
	return commandResponse{ResponseType: slack.ResponseTypeEphemeral, Text: ack}, outcomeDeferred
}

// slashOOM diagnoses a paste given as /oom's text, privately.
func (s *Server) slashOOM(ctx context.Context, cmd slashCommand, text string) (commandResponse, string) {
	var r reply.Reply
	var facts OOMFacts
	if err := s.computeAnswer(ctx, func(cctx context.Context) { r, facts = s.deps.Commands.OOM(cctx, text) }); err != nil {
		return s.responseFor(ctx, errorReply(tooSlowText)), outcomeInline
	}
	if !facts.Detected {
		return s.responseFor(ctx, notOOMReply()), outcomeInline
	}
	s.metrics.oom(facts.Format)
	r.Ephemeral = true
	return s.responseFor(ctx, r), outcomeInline
}

// handoffOf passes a result from a worker to a waiter that may give up.
type handoffOf[T any] struct {
	mu      sync.Mutex
	waiting bool
	ch      chan T
}

// handoff passes a reply.
type handoff = handoffOf[reply.Reply]

// give hands r to the waiter and reports whether it was still waiting.
func (h *handoffOf[T]) give(r T) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.waiting {
		return false
	}
	h.ch <- r
	return true
}

// abandon stops waiting; it returns a result that arrived meanwhile.
func (h *handoffOf[T]) abandon() (T, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.waiting = false
	select {
	case r := <-h.ch:
		return r, true
	default:
		var zero T
		return zero, false
	}
}

// vramReply runs a /vram query. An error becomes an error reply with the
// message its kind allows (internal/errs): the command's own words for bad
// input, a fixed line for anything internal, whose detail is logged only.
// share adds the "Share in channel" button.
func (s *Server) vramReply(ctx context.Context, query string, share bool) reply.Reply {
	r, err := s.deps.Commands.VRAM(ctx, query)
	return s.vramOutcome(query, share, r, err)
}

// vramOutcome turns a /vram answer or error into the reply to post.
func (s *Server) vramOutcome(query string, share bool, r reply.Reply, err error) reply.Reply {
	if err != nil {
		if k := errs.KindOf(err); k == errs.Internal || k == errs.Unavailable {
			s.log.Error("vram query failed", "kind", k.String(), "err", err)
		} else {
			s.log.Info("vram query refused", "kind", k.String(), "err", err)
		}
		return errorReply(errs.UserMessage(err))
	}
	r.Ephemeral = share
	// Exactly one share button on private answers, none on public ones.
	r.Actions = slices.DeleteFunc(slices.Clone(r.Actions), func(a reply.Action) bool { return a.ID == shareActionID })
	if share && runeLen(query) <= maxButtonValue {
		r.Actions = append([]reply.Action{{ID: shareActionID, Text: "Share in channel", Value: query}}, r.Actions...)
	}
	return r
}

// respond posts a follow-up to a response_url (valid for 30 minutes and 5
// posts, and usable where the bot is not a channel member). The transport
// retries it; a follow-up that finally fails is counted and logged.
func (s *Server) respond(ctx context.Context, kind, responseURL string, resp commandResponse) {
	if responseURL == "" {
		s.log.Warn("no response_url to follow up on")
		return
	}
	ctx, cancel := s.postContext(ctx)
	defer cancel()
	msg := &slack.WebhookMessage{
		Text:            resp.Text,
		ResponseType:    resp.ResponseType,
		ReplaceOriginal: resp.ReplaceOriginal,
	}
	if len(resp.Blocks) > 0 {
		msg.Blocks = &slack.Blocks{BlockSet: resp.Blocks}
	}
	if err := slack.PostWebhookCustomHTTPContext(withCallLabel(ctx, "response_url"), responseURL, s.http, msg); err != nil {
		s.metrics.apiError("response_url")
		s.metrics.answerFailed(kind, failureReason(err))
		s.log.Error("response_url follow-up failed", "err", redactErr(err))
	}
}

// acceptEvent filters, claims and queues an event. An error means the
// event was not taken and Slack should retry it.
func (s *Server) acceptEvent(ctx context.Context, env eventEnvelope) (string, error) {
	if env.Type == envelopeRateLimited {
		s.log.Warn("slack reports app_rate_limited: events are being dropped")
		return outcomeIgnored, nil
	}
	if env.Type != envelopeCallback || !wanted(env.Event) {
		return outcomeIgnored, nil
	}
	if s.isClosing() {
		return outcomeUnavailable, errClosing
	}
	if env.Event.Type == eventAppHomeOpened {
		// Publishing a Home is idempotent, so it needs no claim; it is
		// queued, paced and never refused for load (homequeue.go).
		s.queueHome(env.Event.User)
		return outcomeAccepted, nil
	}
	key := eventKey(env)
	claim, err := s.claimEvent(ctx, key)
	switch claim {
	case claimDuplicate:
		return outcomeDuplicate, nil
	case claimBusy:
		return outcomeInProgress, errRetryLater
	case claimUnknown:
		s.metrics.dedupeError(kindEvent)
		s.log.Error("event claim failed; refusing it so that Slack retries", "event_id", env.EventID, "err", err)
		return outcomeUnavailable, fmt.Errorf("claim event: %w", err)
	}
	it := workItem{kind: kindEvent, channel: env.Event.Channel, ref: env.EventID}
	if err := s.goWorkWhy(it, func(ctx context.Context) {
		l := s.holdLease(key)
		defer l.answered()
		s.handleEvent(ctx, env)
	}); err != nil {
		// Let a Slack retry reach a replica that is not shutting down or full.
		s.releaseClaim(ctx, key)
		if errors.Is(err, errFull) {
			s.log.Warn("event refused: at the pending-work cap; Slack retries it", "event_id", env.EventID, "cap", s.cfg.MaxPending)
		}
		return outcomeUnavailable, err
	}
	return outcomeAccepted, nil
}

// Event types, message subtypes, channel types and App Home tabs the bot
// acts on.
const (
	eventMessage       = "message"
	eventAppMention    = "app_mention"
	eventAppHomeOpened = "app_home_opened"
	subtypeFile        = "file_share"
	channelTypeIM      = "im"
	tabMessages        = "messages"
)

// wanted is the cheap filter applied before dedupe: messages from people
// (plain or with a file) and mentions. Bots, edits (message_changed),
// deletions and other subtypes are dropped; bot_id catches the bot's own
// DM messages, which carry no bot_message subtype (bolt-js#580).
func wanted(ev innerEvent) bool {
	if ev.Type == eventAppHomeOpened {
		// Slack names the tab; an event without one is taken as the Home tab.
		return ev.BotID == "" && ev.User != "" && ev.Tab != tabMessages
	}
	if ev.BotID != "" || ev.User == "" || ev.Channel == "" || ev.TS == "" {
		return false
	}
	switch ev.Type {
	case eventMessage:
		return ev.Subtype == "" || ev.Subtype == subtypeFile
	case eventAppMention:
		return true
	default:
		return false
	}
}

func (s *Server) handleEvent(ctx context.Context, env eventEnvelope) {
	ev := env.Event
	self := s.botUserID(ctx, env.botUser())
	if self != "" && ev.User == self {
		return
	}
	switch ev.Type {
	case eventMessage:
		if isDirectMessage(ev) {
			s.handleDM(ctx, ev)
			return
		}
		if self != "" && mentions(ev.Text, self) {
			return // the app_mention copy of this message gets the answer
		}
		text := s.gatherText(ctx, ev, slackUnescape(ev.Text))
		if strings.TrimSpace(text) == "" {
			return
		}
		var r reply.Reply
		var facts OOMFacts
		if err := s.computeAnswer(ctx, func(cctx context.Context) { r, facts = s.deps.Commands.OOM(cctx, text) }); err != nil {
			s.metrics.answerFailed(kindEvent, reasonTimeout)
			s.log.Warn("message not read in time", "channel", ev.Channel, "event_id", env.EventID, "err", err)
			return
		}
		if facts.Detected {
			s.answerOOM(ctx, ev, r, facts)
		}
	case eventAppMention:
		s.handleMention(ctx, ev)
	}
}

// isDirectMessage reports a message in a conversation with the bot (the
// App Home's messages tab): channel_type "im", or a D… channel id where a
// payload leaves the type out.
func isDirectMessage(ev innerEvent) bool {
	return ev.ChannelType == channelTypeIM || ev.ChannelType == "" && strings.HasPrefix(ev.Channel, "D")
}

// handleMention answers a mention: "@vrambot vram <query>" with the query
// (unless a job or config.json attached answers it), anything else as
// messageReply reads it (an OOM, a job, a config.json) or with help.
func (s *Server) handleMention(ctx context.Context, ev innerEvent) {
	text := withoutMentions(ev.Text)
	rest, asked := vramWords(text)
	var rd reading
	if !asked || s.deps.Jobs != nil || s.deps.Configs != nil {
		rd = s.readMessage(ctx, ev, text, false)
	}
	if asked && !rd.answersItself() {
		s.answerVRAMMention(ctx, ev, rest)
		return
	}
	a := s.answerMessage(ctx, ev.User, rd, "", func(context.Context) reply.Reply { return mentionHelpReply() })
	s.postAnswer(ctx, ev, threadOf(ev), ev.User, a)
}

// answerVRAMMention answers "@vrambot vram <query>" in the mention's
// thread: its model looked up on the Hub first, then the answer.
func (s *Server) answerVRAMMention(ctx context.Context, ev innerEvent, query string) {
	cctx := ctx
	if query != "" && !strings.EqualFold(query, "help") {
		var err error
		if cctx, err = s.lookUpModel(ctx, ev.User, query); err != nil {
			s.post(ctx, kindEvent, ev.Channel, threadOf(ev), s.vramOutcome(query, false, reply.Reply{}, err))
			return
		}
	}
	var r reply.Reply
	if err := s.computeAnswer(cctx, func(cctx context.Context) {
		if query == "" || strings.EqualFold(query, "help") {
			r = usageReply("@vrambot vram")
			return
		}
		r = s.vramReply(cctx, query, false)
	}); err != nil && r.Kind == "" {
		s.log.Warn("mention not answered in time", "channel", ev.Channel, "err", err)
		r = errorReply(tooSlowText)
	}
	r.Ephemeral = false
	s.postFor(ctx, kindEvent, ev.Channel, threadOf(ev), r, ev.User)
}

// answerOOM reacts to the paste, answers in its thread and records the OOM
// for the digest (also when the answer could not be posted: the OOM happened).
func (s *Server) answerOOM(ctx context.Context, ev innerEvent, r reply.Reply, facts OOMFacts) {
	s.metrics.oom(facts.Format)
	rctx, cancel := context.WithTimeout(ctx, s.cfg.Retry.Deadline)
	if err := s.api.AddReactionContext(rctx, "eyes", slack.ItemRef{Channel: ev.Channel, Timestamp: ev.TS}); err != nil {
		s.metrics.apiError("reactions.add")
		s.log.Info("reaction failed", "channel", ev.Channel, "err", redactErr(err))
	}
	cancel()
	// The shortcut on this paste then points at this answer.
	if err := s.claimOnce(ctx, diagnosedKey(ev.Channel, ev.TS)); err != nil && !errors.Is(err, errDuplicate) {
		s.log.Info("paste not marked as answered", "err", err)
	}
	thread := threadOf(ev)
	r.Ephemeral = false
	s.post(ctx, kindEvent, ev.Channel, thread, r)
	s.recordOOM(ctx, ev, thread, facts)
}

// recordOOM hands an answered OOM to the digest's event log.
func (s *Server) recordOOM(ctx context.Context, ev innerEvent, thread string, facts OOMFacts) {
	if s.deps.RecordOOM == nil {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, s.cfg.Retry.Deadline)
	defer cancel()
	seen := OOMSeen{Channel: ev.Channel, ThreadTS: thread, At: time.Now().UTC(), Facts: facts}
	if link, err := s.api.GetPermalinkContext(rctx, &slack.PermalinkParameters{Channel: ev.Channel, Ts: ev.TS}); err == nil {
		seen.Permalink = link
	} else {
		s.metrics.apiError("chat.getPermalink")
		s.log.Info("permalink lookup failed", "channel", ev.Channel, "err", redactErr(err))
	}
	if err := s.deps.RecordOOM(rctx, seen); err != nil {
		s.log.Error("record OOM for the digest failed", "channel", ev.Channel, "err", err)
	}
}

// Why an answer finally failed (a closed label set).
const (
	reasonRefused     = "refused"     // Slack answered ok:false (invalid_blocks, channel_not_found...)
	reasonUnreachable = "unreachable" // 5xx or connection errors past every retry
	reasonRateLimited = "rate_limited"
	reasonQueueFull   = "queue_full"
	reasonTimeout     = "timeout"
	reasonCancelled   = "cancelled" // a drain ran out of time
)

func failureReason(err error) string {
	var slackErr slack.SlackErrorResponse
	var status slack.StatusCodeError
	var limited *slack.RateLimitedError
	var netErr net.Error
	switch {
	case errors.Is(err, errQueueFull):
		return reasonQueueFull
	case errors.As(err, &slackErr):
		return reasonRefused
	case errors.As(err, &limited):
		return reasonRateLimited
	case errors.Is(err, context.Canceled):
		return reasonCancelled
	case errors.Is(err, context.DeadlineExceeded):
		return reasonTimeout
	case errors.As(err, &status), errors.As(err, &netErr):
		return reasonUnreachable
	}
	return reasonUnreachable
}

// post posts r as the answer to a request of kind. When it finally fails,
// the failure is counted, and where a notice can still help (Slack refused
// the blocks, or was unreachable) a short plain-text notice is tried.
func (s *Server) post(ctx context.Context, kind, channel, thread string, r reply.Reply) {
	s.postFor(ctx, kind, channel, thread, r, "")
}

// postFor is post of an answer asked by asker ("" for none): the asker is
// remembered for the posted message, so that their clicks on its buttons
// may change it in place and nobody else's do (applyFix).
func (s *Server) postFor(ctx context.Context, kind, channel, thread string, r reply.Reply, asker string) {
	pctx, cancel := s.postContext(ctx)
	ts, err := s.poster.postReply(pctx, channel, thread, r, s.detailsKeyFor(pctx, thread, r))
	cancel()
	if err == nil {
		if asker != "" && ts != "" {
			s.rememberAsker(ctx, channel, ts, asker)
		}
		return
	}
	reason := failureReason(err)
	s.metrics.answerFailed(kind, reason)
	s.log.Error("posting reply failed", "channel", channel, "thread_ts", thread, "kind", r.Kind, "reason", reason, "err", err)
	if reason != reasonRefused && reason != reasonUnreachable {
		return // a full queue has its own notice; out of time or cancelled: nothing left to try
	}
	nctx, cancel := context.WithTimeout(ctx, noticeTimeout)
	defer cancel()
	if err := s.poster.postText(nctx, channel, thread, postFailedText); err != nil {
		s.log.Error("posting failure notice failed", "channel", channel, "err", err)
	}
}

// userIDRE matches a Slack user id; only such ids are put into a mention.
var userIDRE = regexp.MustCompile(`^[UW][A-Z0-9]{1,20}$`)

// mentionRE matches user mentions such as <@U123> or <@U123|name>.
var mentionRE = regexp.MustCompile(`<@[A-Z0-9]+(\|[^>]*)?>`)

func mentions(text, userID string) bool {
	return strings.Contains(text, "<@"+userID+">") || strings.Contains(text, "<@"+userID+"|")
}

// threadOf is the thread to answer in: the message's thread, or the message
// itself as the thread root.
func threadOf(ev innerEvent) string {
	if ev.ThreadTS != "" {
		return ev.ThreadTS
	}
	return ev.TS
}

// slackUnescape undoes Slack's escaping of message text so the parsers see
// what the user pasted.
var slackUnescaper = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

func slackUnescape(s string) string { return slackUnescaper.Replace(s) }

func usageReply(command string) reply.Reply {
	if command == "" || isOOMCommand(command) {
		command = "/vram"
	}
	return reply.Reply{
		Kind:    "help",
		Title:   "vrambot: GPU memory plans and OOM triage",
		Summary: "Ask how much GPU memory a model needs, what to change until it fits, and which GPUs are cheapest — in the grammar or in plain words.",
		Sections: []reply.Section{
			{Title: "Examples", Items: []string{
				"`" + command + " 7b lora a100`",
				"`" + command + " llama-3-8b qlora bs=4 seq=4096 4090`",
				"`" + command + " can I finetune llama 3 8b on a 4090?`",
				"`" + command + "` alone opens a form",
			}},
			{Title: "Out-of-memory errors", Items: []string{
				"Paste a CUDA out-of-memory traceback in a channel I am in and I answer in its thread.",
				"On any message: ⋯ → *Diagnose OOM* answers in that message's thread.",
				"`/oom` opens a box to paste into; `/oom <paste>` answers privately.",
			}},
			{Title: "Your job, as written", Items: []string{
				"Mention me with a training config or a launch command in a code block, or attach its .yaml/.yml/.json/.py/.sh/.toml file: `@vrambot will this fit on a 4090?`",
				"On any message: ⋯ → *Size this job* answers in that message's thread.",
			}},
			{Title: "Anywhere", Text: "Mention me in a thread (`@vrambot vram 7b lora a100`), or write to me directly in the Messages tab of my App Home."},
		},
		Context:   []string{"Tokens in any order: model, method (full, lora, qlora, freeze, inference), GPU or budget, and key=value settings: " + strings.Join(query.Keys(), ", ") + "."},
		Ephemeral: true,
		Details: &reply.Reply{
			Kind:     "help",
			Title:    "The /vram grammar",
			Sections: []reply.Section{{Title: "Settings", Items: query.HelpLines()}},
			Context:  []string{"Other spellings work too: TrainingArguments', PEFT's, DeepSpeed's and the serving engines' own names (per_device_train_batch_size=4, --max-model-len 8192)."},
		},
	}
}

// notOOMReply answers a paste or message that holds no OOM.
func notOOMReply() reply.Reply {
	return reply.Reply{
		Kind:      "help",
		Title:     "No out-of-memory error found",
		Summary:   "That text holds no out-of-memory message I know. Paste the whole error, from the traceback to the last line of the message.",
		Ephemeral: true,
	}
}

// isOOMCommand reports whether a slash command is /oom (any other is /vram).
func isOOMCommand(command string) bool { return strings.EqualFold(command, "/oom") }

func mentionHelpReply() reply.Reply {
	return reply.Reply{
		Kind:    "help",
		Title:   "How I can help",
		Summary: "Mention me with `vram <query>` (for example `@vrambot vram 7b lora a100`), with your job's config or launch command in a code block or attached, or with a CUDA out-of-memory traceback.",
	}
}

func errorReply(msg string) reply.Reply {
	return reply.Reply{
		Kind:      "error",
		Title:     vramRefusedTitle,
		Summary:   msg,
		Context:   []string{"Try `/vram help` for the query grammar."},
		Ephemeral: true,
	}
}
