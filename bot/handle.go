package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/internal/redact"
	"github.com/vrambot/vrambot/reply"
)

// This file is the transport-neutral core: HTTP and Socket Mode decode a
// request, then call slash, acceptEvent or interact.

// shareActionID is the action_id of the "Share in channel" button on /vram
// answers; its value is the query. It equals commands.ShareActionID, whose
// replies may carry the button already.
const shareActionID = "share"

// dedupeTimeout bounds the store call made before acking an event.
const dedupeTimeout = time.Second

var errClosing = errors.New("bot: shutting down")

// commandResponse is the synchronous answer to a slash command (HTTP body
// or Socket Mode ack payload) and the body of a response_url follow-up.
type commandResponse struct {
	ResponseType    string        `json:"response_type"`
	Text            string        `json:"text"`
	Blocks          []slack.Block `json:"blocks,omitempty"`
	ReplaceOriginal bool          `json:"replace_original,omitempty"`
}

func responseFor(r reply.Reply) commandResponse {
	out := render(r)
	rt := slack.ResponseTypeInChannel
	if r.Ephemeral {
		rt = slack.ResponseTypeEphemeral
	}
	return commandResponse{ResponseType: rt, Text: out.fallback, Blocks: out.blocks}
}

// slash answers a slash command. It computes with the inline budget; when
// that runs out it returns a short "working" ack and the answer follows
// through response_url.
func (s *Server) slash(cmd slashCommand) (commandResponse, string) {
	s.log.Debug("slash command", "command", cmd.Command, "channel", cmd.ChannelID, "user", cmd.UserID)
	query := strings.TrimSpace(cmd.Text)
	if query == "" || strings.EqualFold(query, "help") {
		return responseFor(usageReply(cmd.Command)), outcomeInline
	}
	if runeLen(query) > maxQueryRunes {
		return responseFor(errorReply(fmt.Sprintf("That query is %d characters long; a /vram query is a few words (at most %d characters).", runeLen(query), maxQueryRunes))), outcomeInline
	}
	h := &handoff{waiting: true, ch: make(chan reply.Reply, 1)}
	started := s.goWork(kindCommand, func(ctx context.Context) {
		r := s.vramReply(ctx, query, true)
		if h.give(r) {
			return
		}
		resp := responseFor(r)
		resp.ReplaceOriginal = true // replaces the "working on it" ack
		s.respond(ctx, cmd.ResponseURL, resp)
	})
	if !started {
		return responseFor(errorReply("vrambot is restarting; please try again in a moment.")), outcomeUnavailable
	}
	timer := time.NewTimer(s.cfg.InlineBudget)
	defer timer.Stop()
	select {
	case r := <-h.ch:
		return responseFor(r), outcomeInline
	case <-timer.C:
		if r, ok := h.abandon(); ok {
			return responseFor(r), outcomeInline
		}
		return commandResponse{ResponseType: slack.ResponseTypeEphemeral, Text: "Working on it…"}, outcomeDeferred
	}
}

// handoff passes a result from a worker to a waiter that may give up.
type handoff struct {
	mu      sync.Mutex
	waiting bool
	ch      chan reply.Reply
}

// give hands r to the waiter and reports whether it was still waiting.
func (h *handoff) give(r reply.Reply) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.waiting {
		return false
	}
	h.ch <- r
	return true
}

// abandon stops waiting; it returns a result that arrived meanwhile.
func (h *handoff) abandon() (reply.Reply, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.waiting = false
	select {
	case r := <-h.ch:
		return r, true
	default:
		return reply.Reply{}, false
	}
}

// vramReply runs a /vram query. Bad input becomes an error reply with the
// command's own message; share adds the "Share in channel" button.
func (s *Server) vramReply(ctx context.Context, query string, share bool) reply.Reply {
	r, err := s.deps.Commands.VRAM(ctx, query)
	return s.vramOutcome(query, share, r, err)
}

// vramOutcome turns a /vram answer or error into the reply to post.
func (s *Server) vramOutcome(query string, share bool, r reply.Reply, err error) reply.Reply {
	if err != nil {
		// The user sees the message of a classified error; anything
		// internal stays in the log (internal/errs).
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
		r.Actions = append(r.Actions, reply.Action{ID: shareActionID, Text: "Share in channel", Value: query})
	}
	return r
}

// respond posts a follow-up to a response_url (valid for 30 minutes and 5
// posts, and usable where the bot is not a channel member).
func (s *Server) respond(ctx context.Context, responseURL string, resp commandResponse) {
	if responseURL == "" {
		s.log.Warn("no response_url to follow up on")
		return
	}
	msg := &slack.WebhookMessage{
		Text:            resp.Text,
		Blocks:          &slack.Blocks{BlockSet: resp.Blocks},
		ResponseType:    resp.ResponseType,
		ReplaceOriginal: resp.ReplaceOriginal,
	}
	if err := slack.PostWebhookCustomHTTPContext(ctx, responseURL, s.http, msg); err != nil {
		s.metrics.apiError("response_url")
		s.log.Error("response_url follow-up failed", "err", redact.Error(err, redact.Origin))
	}
}

// acceptEvent filters, dedupes and queues an event. An error means the
// event was not taken and Slack should retry it.
func (s *Server) acceptEvent(ctx context.Context, env eventEnvelope) (string, error) {
	if env.Type == envelopeRateLimited {
		s.log.Warn("slack reports app_rate_limited: events are being dropped")
		return outcomeIgnored, nil
	}
	if env.Type != envelopeCallback || !wanted(env.Event) {
		return outcomeIgnored, nil
	}
	key := ""
	if env.EventID != "" {
		key = "event:" + env.EventID
		dctx, cancel := context.WithTimeout(ctx, dedupeTimeout)
		first, err := s.deps.Store.SetNX(dctx, key, []byte("1"), s.cfg.DedupeTTL)
		cancel()
		if err != nil {
			s.log.Error("event dedupe failed", "event_id", env.EventID, "err", err)
			return outcomeUnavailable, fmt.Errorf("dedupe event: %w", err)
		}
		if !first {
			return outcomeDuplicate, nil
		}
	}
	if !s.goWork(kindEvent, func(ctx context.Context) { s.handleEvent(ctx, env) }) {
		if key != "" {
			// Let a Slack retry reach a replica that is not shutting down.
			_ = s.deps.Store.Delete(context.WithoutCancel(ctx), key)
		}
		return outcomeUnavailable, errClosing
	}
	return outcomeAccepted, nil
}

// Event types and message subtypes the bot acts on.
const (
	eventMessage    = "message"
	eventAppMention = "app_mention"
	subtypeFile     = "file_share"
)

// wanted is the cheap filter applied before dedupe: messages from people
// (plain or with a file) and mentions. Bots, edits (message_changed),
// deletions and other subtypes are dropped; bot_id catches the bot's own
// DM messages, which carry no bot_message subtype (bolt-js#580).
func wanted(ev innerEvent) bool {
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
		if self != "" && mentions(ev.Text, self) {
			return // the app_mention copy of this message gets the answer
		}
		text := s.gatherText(ctx, ev, slackUnescape(ev.Text))
		if strings.TrimSpace(text) == "" {
			return
		}
		if r, detected := s.deps.Commands.OOM(ctx, text); detected {
			s.answerOOM(ctx, ev, r)
		}
	case eventAppMention:
		s.handleMention(ctx, ev)
	}
}

func (s *Server) handleMention(ctx context.Context, ev innerEvent) {
	text := strings.TrimSpace(mentionRE.ReplaceAllString(slackUnescape(ev.Text), " "))
	thread := threadOf(ev)
	if f, ok := s.attachedConfig(ev); ok {
		s.post(ctx, ev.Channel, thread, s.vramConfigReply(ctx, configQuery(text), f))
		return
	}
	if word, rest, _ := strings.Cut(text, " "); strings.EqualFold(word, "vram") {
		rest = strings.TrimSpace(rest)
		r := usageReply("@vrambot vram")
		if rest != "" && !strings.EqualFold(rest, "help") {
			r = s.vramReply(ctx, rest, false)
		}
		s.post(ctx, ev.Channel, thread, r)
		return
	}
	if full := s.gatherText(ctx, ev, text); strings.TrimSpace(full) != "" {
		if r, detected := s.deps.Commands.OOM(ctx, full); detected {
			s.answerOOM(ctx, ev, r)
			return
		}
	}
	s.post(ctx, ev.Channel, thread, mentionHelpReply())
}

// answerOOM reacts to the paste, answers in its thread and records the OOM
// for the digest (also when the answer could not be posted: the OOM happened).
func (s *Server) answerOOM(ctx context.Context, ev innerEvent, r reply.Reply) {
	s.metrics.oom(oomFormat(r.Result))
	if err := s.api.AddReactionContext(ctx, "eyes", slack.ItemRef{Channel: ev.Channel, Timestamp: ev.TS}); err != nil {
		s.metrics.apiError("reactions.add")
		s.log.Info("reaction failed", "channel", ev.Channel, "err", err)
	}
	thread := threadOf(ev)
	r.Ephemeral = false
	s.post(ctx, ev.Channel, thread, r)
	if s.deps.RecordOOM == nil {
		return
	}
	seen := OOMSeen{Channel: ev.Channel, ThreadTS: thread, At: time.Now().UTC(), Result: r.Result}
	if link, err := s.api.GetPermalinkContext(ctx, &slack.PermalinkParameters{Channel: ev.Channel, Ts: ev.TS}); err == nil {
		seen.Permalink = link
	} else {
		s.metrics.apiError("chat.getPermalink")
		s.log.Info("permalink lookup failed", "channel", ev.Channel, "err", err)
	}
	if err := s.deps.RecordOOM(ctx, seen); err != nil {
		s.log.Error("record OOM for the digest failed", "channel", ev.Channel, "err", err)
	}
}

// postFailedText is what users see when Slack refuses an answer (for
// example invalid_blocks); details go to the log only.
const postFailedText = "Sorry, I have an answer but Slack refused to show it. The error is logged for the operators."

// post posts r; when Slack refuses it, it tries a short plain-text notice
// so the user is not left waiting.
func (s *Server) post(ctx context.Context, channel, thread string, r reply.Reply) {
	_, err := s.poster.PostReply(ctx, channel, thread, r)
	if err == nil {
		return
	}
	s.log.Error("posting reply failed", "channel", channel, "thread_ts", thread, "kind", r.Kind, "err", err)
	if _, ok := errors.AsType[slack.SlackErrorResponse](err); ok {
		if err := s.poster.postText(ctx, channel, thread, postFailedText); err != nil {
			s.log.Error("posting failure notice failed", "channel", channel, "err", err)
		}
	}
}

// interact handles a button press. Only "Share in channel" exists: it re-runs
// the query from the button value and posts the answer for everyone.
func (s *Server) interact(in interaction) string {
	if in.Type != "block_actions" {
		return outcomeIgnored
	}
	for _, a := range in.Actions {
		if a.ActionID != shareActionID || strings.TrimSpace(a.Value) == "" {
			continue
		}
		query := truncateRunes(a.Value, maxQueryRunes)
		channel := in.Channel.ID
		if channel == "" {
			channel = in.Container.ChannelID
		}
		ok := s.goWork(kindInteraction, func(ctx context.Context) {
			r := s.vramReply(ctx, query, false)
			if in.ResponseURL == "" {
				s.post(ctx, channel, "", r)
				return
			}
			resp := responseFor(r)
			if userIDRE.MatchString(in.User.ID) && len(resp.Blocks) < maxBlocks {
				// Our own markup (a validated user id), so not escaped.
				resp.Blocks = append(resp.Blocks, slack.NewContextBlock("",
					slack.NewTextBlockObject(slack.MarkdownType, "Shared by <@"+in.User.ID+">", false, false)))
			}
			s.respond(ctx, in.ResponseURL, resp)
		})
		if !ok {
			return outcomeUnavailable
		}
		return outcomeAccepted
	}
	return outcomeIgnored
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

// oomFormat reads the "format" of an OOM result through its JSON contract
// (DESIGN.md §3.3), so bot does not depend on the commands package.
func oomFormat(result any) string {
	if result == nil {
		return ""
	}
	raw, err := json.Marshal(result)
	if err != nil {
		return ""
	}
	var v struct {
		Format string `json:"format"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	return v.Format
}

func usageReply(command string) reply.Reply {
	if command == "" {
		command = "/vram"
	}
	return reply.Reply{
		Kind:    "help",
		Title:   "vrambot: GPU memory plans and OOM triage",
		Summary: "Ask how much GPU memory a model needs, what to change until it fits, and which GPUs are cheapest.",
		Sections: []reply.Section{
			{Title: "Examples", Items: []string{
				"`" + command + " 7b lora a100`",
				"`" + command + " llama-3-8b qlora bs=4 seq=4096 4090`",
				"`" + command + " mistral-7b inference 24gb`",
			}},
			{Title: "Out-of-memory errors", Text: "Paste a CUDA out-of-memory traceback in a channel I am in (or mention me with it) and I answer in its thread."},
		},
		Context:   []string{"Tokens in any order: model, method (full, lora, qlora, freeze, inference), GPU or budget, and key=value options such as bs, seq, precision, optim, gc, zero, gpus."},
		Ephemeral: true,
	}
}

func mentionHelpReply() reply.Reply {
	return reply.Reply{
		Kind:    "help",
		Title:   "How I can help",
		Summary: "Mention me with `vram <query>` (for example `@vrambot vram 7b lora a100`), or with a CUDA out-of-memory traceback.",
	}
}

func errorReply(msg string) reply.Reply {
	return reply.Reply{
		Kind:      "error",
		Title:     "Could not answer that",
		Summary:   msg,
		Context:   []string{"Try `/vram help` for the query grammar."},
		Ephemeral: true,
	}
}
