package bot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/reply"
)

// Interactivity (https://docs.slack.dev/interactivity/handling-user-interaction):
// every payload is answered within 3 s. Buttons, forms and shortcuts that
// make the bot post are claimed in the store first (dedupe.go), so a
// replayed or doubly delivered payload posts once; their work runs
// admitted (goWork), so a drain waits for it; everything they post goes
// through the paced, retried poster or response_url.

// Interaction payload types.
const (
	interactionBlockActions    = "block_actions"
	interactionViewSubmission  = "view_submission"
	interactionBlockSuggestion = "block_suggestion"
	interactionMessageAction   = "message_action"
)

// Callback ids of the bot's forms and shortcuts (the manifest declares the
// shortcuts'; docs/contracts.md §8).
const (
	callbackVRAMForm    = "vram_form"
	callbackOOMForm     = "oom_form"
	callbackDiagnoseOOM = "diagnose_oom"
	callbackSizeJob     = "size_job"
)

// interact answers an interaction: the outcome label, and the body of the
// synchronous answer (nil for an empty 200; options for a typeahead; a
// response_action for a form with errors).
func (s *Server) interact(ctx context.Context, in interaction) (string, any) {
	switch in.Type {
	case interactionBlockActions:
		return s.blockActions(ctx, in), nil
	case interactionBlockSuggestion:
		return outcomeInline, s.suggestModels(ctx, in)
	case interactionViewSubmission:
		return s.viewSubmission(ctx, in)
	case interactionMessageAction:
		switch {
		case in.CallbackID == callbackDiagnoseOOM:
			return s.diagnoseMessage(ctx, in), nil
		case in.CallbackID == callbackSizeJob && s.deps.Jobs != nil:
			return s.sizeJobMessage(ctx, in), nil
		}
	}
	return outcomeIgnored, nil
}

// blockActions handles the first button of a click the bot knows.
func (s *Server) blockActions(ctx context.Context, in interaction) string {
	for _, a := range in.Actions {
		value := strings.TrimSpace(a.Value)
		if value == "" {
			continue
		}
		var do func(ctx context.Context, in interaction, value string)
		failClosed := false
		switch {
		case a.ActionID == shareActionID:
			do, failClosed = s.share, true
		case strings.HasPrefix(a.ActionID, reply.ActionApplyPrefix):
			do = s.applyFix
		case a.ActionID == reply.ActionEstimate:
			do, failClosed = s.estimate, true
		case a.ActionID == reply.ActionDetails:
			do = s.showDetails
		case a.ActionID == reply.ActionFeedbackUp, a.ActionID == reply.ActionFeedbackDown:
			return s.feedback(ctx, in, a.ActionID, value)
		default:
			continue
		}
		value = truncateRunes(value, maxButtonValue)
		err := s.claimOnce(ctx, actionKey(in.User.ID, a.ActionID, a.ActionTS))
		if errors.Is(err, errDuplicate) {
			return outcomeDuplicate
		}
		it := workItem{kind: kindInteraction, channel: in.channelID(), ref: a.ActionID}
		if err != nil {
			s.metrics.dedupeError(kindInteraction)
			if failClosed {
				// A public post must not go out twice. The user hears why
				// and can click again.
				s.log.Warn("click dedupe failed; not posting", "action", a.ActionID, "err", err)
				s.goWork(it, func(ctx context.Context) {
					s.respond(ctx, kindInteraction, in.ResponseURL, ephemeralText(shareUnsureText))
				})
				return outcomeUnavailable
			}
			// Replacing a message or showing details twice does no harm.
			s.log.Warn("click dedupe failed; answering anyway", "action", a.ActionID, "err", err)
		}
		if !s.goWork(it, func(ctx context.Context) { do(ctx, in, value) }) {
			return outcomeUnavailable
		}
		return outcomeAccepted
	}
	return outcomeIgnored
}

// ephemeralText is a short private follow-up that leaves the message the
// button is on as it is.
func ephemeralText(text string) commandResponse {
	return commandResponse{ResponseType: slack.ResponseTypeEphemeral, Text: text}
}

// computeVRAM runs a /vram query for the user who clicked: its Hub lookup
// in the Hub pool, then the answer under the work bounds; share marks a
// private answer (with its share button).
func (s *Server) computeVRAM(ctx context.Context, in interaction, query string, share bool) reply.Reply {
	return s.vramAfterLookup(ctx, in.User.ID, query, share)
}

// share re-runs the query and posts the answer for everyone, once per click
// (action_ts + user + action_id), across replicas and replays.
func (s *Server) share(ctx context.Context, in interaction, query string) {
	r := s.computeVRAM(ctx, in, query, false)
	channel := in.channelID()
	if in.ResponseURL == "" {
		s.post(ctx, kindInteraction, channel, "", r)
		return
	}
	resp := s.responseFor(ctx, r)
	if userIDRE.MatchString(in.User.ID) && len(resp.Blocks) < maxBlocks {
		// Our own markup (a validated user id), so not escaped.
		resp.Blocks = append(resp.Blocks, slack.NewContextBlock("",
			slack.NewTextBlockObject(slack.MarkdownType, "Shared by <@"+in.User.ID+">", false, false)))
	}
	s.respond(ctx, kindInteraction, in.ResponseURL, resp)
}

// applyFix re-runs the query with a fix applied (the button's value) and
// replaces the message it is on: through response_url for an ephemeral
// answer, chat.update for one in a channel (whose new details follow in
// its thread).
//
// A message others see (in a channel, not a direct message) is changed in
// place only by the one who asked it (postFor remembers them); anyone else
// who clicks gets the variant privately.
func (s *Server) applyFix(ctx context.Context, in interaction, query string) {
	private := in.Container.IsEphemeral || in.Container.MessageTS == ""
	channel, ts := in.channelID(), in.Container.MessageTS
	if !private && !isDirect(channel) && !s.askedBy(ctx, channel, ts, in.User.ID) {
		s.respond(ctx, kindInteraction, in.ResponseURL, s.responseFor(ctx, s.computeVRAM(ctx, in, query, true)))
		return
	}
	r := s.computeVRAM(ctx, in, query, private)
	if !private && channel != "" {
		pctx, cancel := s.postContext(ctx)
		err := s.poster.UpdateReply(pctx, channel, ts, threadOfMessage(in), r)
		cancel()
		if err == nil {
			return
		}
		s.log.Info("chat.update failed; replacing through response_url", "channel", channel, "err", err)
	}
	resp := s.responseFor(ctx, r)
	resp.ReplaceOriginal = true
	if !private {
		resp.ResponseType = slack.ResponseTypeInChannel
	}
	s.respond(ctx, kindInteraction, in.ResponseURL, resp)
}

// estimate answers an OOM reply's "Estimate this workload": the /vram
// answer for the workload the paste names, in the OOM's thread (privately
// when the OOM answer itself was private).
//
// Under a message others see, one estimate is posted however many people
// click; later clicks get it privately.
func (s *Server) estimate(ctx context.Context, in interaction, query string) {
	channel := in.channelID()
	if in.Container.IsEphemeral || channel == "" || in.Container.MessageTS == "" || !s.firstPublic(ctx, in, reply.ActionEstimate) {
		s.respond(ctx, kindInteraction, in.ResponseURL, s.responseFor(ctx, s.computeVRAM(ctx, in, query, true)))
		return
	}
	r := s.computeVRAM(ctx, in, query, false)
	s.postOrRespond(ctx, in, channel, threadOfMessage(in), r)
}

// askerTTL is how long the asker of a public answer is remembered: a week
// of clicks on its buttons; after it, a click answers privately.
const askerTTL = 7 * 24 * time.Hour

// rememberAsker records who asked the answer posted at channel, ts.
func (s *Server) rememberAsker(ctx context.Context, channel, ts, user string) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dedupeTimeout)
	defer cancel()
	if err := s.deps.Store.Set(sctx, dedupeKey(askerKeyPrefix, channel, ts), []byte(user), askerTTL); err != nil {
		s.log.Info("asker of an answer not recorded; clicks on it answer privately", "channel", channel, "err", err)
	}
}

// askedBy reports whether user asked the answer posted at channel, ts
// (false when nobody is remembered, or the store does not answer).
func (s *Server) askedBy(ctx context.Context, channel, ts, user string) bool {
	sctx, cancel := context.WithTimeout(ctx, dedupeTimeout)
	defer cancel()
	v, err := s.deps.Store.Get(sctx, dedupeKey(askerKeyPrefix, channel, ts))
	return err == nil && user != "" && string(v) == user
}

// isDirect reports a direct-message conversation (a D… id): only the user
// and the bot see what is in it.
func isDirect(channel string) bool { return strings.HasPrefix(channel, "D") }

// firstPublic claims the one public post a button makes under the message
// it is on (the message's channel and ts, and the action), so a click by
// every reader of a channel posts once; a click after the first, or one
// the store could not claim, answers privately instead.
func (s *Server) firstPublic(ctx context.Context, in interaction, action string) bool {
	err := s.claimOnce(ctx, dedupeKey(publicKeyPrefix, action, in.channelID(), in.Container.MessageTS))
	if err != nil && !errors.Is(err, errDuplicate) {
		s.metrics.dedupeError(kindInteraction)
		s.log.Warn("public post not claimed; answering privately", "action", action, "err", err)
	}
	return err == nil
}

// threadOfMessage is the thread of the message an interaction is on.
func threadOfMessage(in interaction) string {
	switch {
	case in.Message.ThreadTS != "":
		return in.Message.ThreadTS
	case in.Container.ThreadTS != "":
		return in.Container.ThreadTS
	case in.Message.TS != "":
		return in.Message.TS
	}
	return in.Container.MessageTS
}

// postOrRespond posts r in channel's thread, or, where the bot cannot post
// (not a member), privately through response_url.
func (s *Server) postOrRespond(ctx context.Context, in interaction, channel, thread string, r reply.Reply) {
	pctx, cancel := s.postContext(ctx)
	_, err := s.poster.postReply(pctx, channel, thread, r, s.detailsKeyFor(pctx, thread, r))
	cancel()
	if err == nil {
		return
	}
	s.metrics.answerFailed(kindInteraction, failureReason(err))
	s.log.Info("posting in the thread failed; answering privately", "channel", channel, "err", err)
	r.Ephemeral = true
	s.respond(ctx, kindInteraction, in.ResponseURL, s.responseFor(ctx, r))
}

// detailsTTL keeps a reply's details for its Details button: longer than
// anyone looks at an ephemeral answer (Slack drops those on reload).
const detailsTTL = 24 * time.Hour

// detailsKeyPrefix names kept details in the store.
const detailsKeyPrefix = "details:"

// keepDetails stores d for a Details button and returns the button's
// value ("" when the store failed: the answer then has no button).
func (s *Server) keepDetails(ctx context.Context, d reply.Reply) string {
	raw, err := json.Marshal(d)
	if err != nil {
		s.log.Error("details not encoded", "err", err)
		return ""
	}
	var id [12]byte
	_, _ = rand.Read(id[:])
	key := hex.EncodeToString(id[:])
	ctx, cancel := context.WithTimeout(ctx, dedupeTimeout)
	defer cancel()
	if err := s.deps.Store.Set(ctx, detailsKeyPrefix+key, raw, detailsTTL); err != nil {
		s.log.Warn("details not kept; the answer has no Details button", "err", err)
		return ""
	}
	return key
}

// detailsGoneText answers a Details button whose details expired.
const detailsGoneText = "Those details are no longer kept; run the command again for a fresh answer."

// showDetails posts the details a Details button names: in the thread of
// a message in a channel, privately for an ephemeral one.
func (s *Server) showDetails(ctx context.Context, in interaction, key string) {
	if !keyPartRE.MatchString(key) {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, dedupeTimeout)
	raw, err := s.deps.Store.Get(sctx, detailsKeyPrefix+key)
	cancel()
	var d reply.Reply
	if err != nil || json.Unmarshal(raw, &d) != nil {
		s.respond(ctx, kindInteraction, in.ResponseURL, ephemeralText(detailsGoneText))
		return
	}
	d.Details = nil
	channel := in.channelID()
	// Under a message others see, the details are posted once in its
	// thread however many people click; later clicks get them privately.
	if in.Container.IsEphemeral || channel == "" || in.Container.MessageTS == "" || !s.firstPublic(ctx, in, reply.ActionDetails) {
		out := render(d, renderOptions{surface: surfaceDetails})
		s.respond(ctx, kindInteraction, in.ResponseURL, commandResponse{ResponseType: slack.ResponseTypeEphemeral, Text: out.fallback, Blocks: out.blocks})
		return
	}
	s.postOrRespond(ctx, in, channel, threadOfMessage(in), d)
}

// Feedback is one 👍 or 👎 on an answer: what kind of answer and where,
// never the answer's text or who gave it.
type Feedback struct {
	At      time.Time `json:"at"`
	Kind    string    `json:"kind"` // "vram", "oom"
	Vote    string    `json:"vote"` // "up", "down"
	Channel string    `json:"channel,omitempty"`
}

// FeedbackRecorder keeps a Feedback (for the digest).
type FeedbackRecorder func(ctx context.Context, f Feedback) error

// Votes.
const (
	voteUp   = "up"
	voteDown = "down"
)

// feedbackThanks is the private answer to a vote.
const feedbackThanks = "Thanks, noted."

// feedback records a vote once per person and message (a second click on
// the same answer, or a replay, changes nothing) and thanks privately.
func (s *Server) feedback(ctx context.Context, in interaction, actionID, kind string) string {
	vote := voteUp
	if actionID == reply.ActionFeedbackDown {
		vote = voteDown
	}
	if !feedbackKinds[kind] {
		return outcomeIgnored
	}
	message := in.Container.MessageTS
	if message == "" {
		message = in.Message.TS
	}
	err := s.claimOnce(ctx, dedupeKey(feedbackKeyPrefix, in.User.ID, in.channelID(), message))
	switch {
	case errors.Is(err, errDuplicate):
		return outcomeDuplicate
	case err != nil:
		s.metrics.dedupeError(kindInteraction)
		s.log.Warn("feedback dedupe failed; counting it anyway", "err", err)
	}
	s.metrics.feedbackVote(kind, vote)
	it := workItem{kind: kindInteraction, channel: in.channelID(), ref: actionID}
	if !s.goWork(it, func(ctx context.Context) {
		if s.deps.RecordFeedback != nil {
			rctx, cancel := context.WithTimeout(ctx, s.cfg.Retry.Deadline)
			if err := s.deps.RecordFeedback(rctx, Feedback{At: time.Now().UTC(), Kind: kind, Vote: vote, Channel: in.channelID()}); err != nil {
				s.log.Error("feedback not recorded", "err", err)
			}
			cancel()
		}
		s.respond(ctx, kindInteraction, in.ResponseURL, ephemeralText(feedbackThanks))
	}) {
		return outcomeUnavailable
	}
	return outcomeAccepted
}

// formState is what the bot keeps in a form's private_metadata: where the
// form was opened, so its answer goes there.
type formState struct {
	Channel     string `json:"c,omitempty"`
	ResponseURL string `json:"r,omitempty"`
}

// viewSubmission answers a submitted form. A /vram form whose query the
// grammar refuses gets the error under its field, within the inline
// budget; otherwise the form closes and the answer is posted where the
// form was opened.
func (s *Server) viewSubmission(ctx context.Context, in interaction) (string, any) {
	switch in.View.CallbackID {
	case callbackVRAMForm, callbackOOMForm:
	default:
		return outcomeIgnored, nil
	}
	var st formState
	if in.View.PrivateMetadata != "" {
		_ = json.Unmarshal([]byte(in.View.PrivateMetadata), &st)
	}
	if in.View.CallbackID == callbackOOMForm {
		return s.submitOOMForm(ctx, in, st)
	}
	query, fieldErrs := vramFormQuery(in)
	if len(fieldErrs) > 0 {
		return outcomeBadRequest, slack.NewErrorsViewSubmissionResponse(fieldErrs)
	}
	// The values are part of the key: a form sent back with an error keeps
	// its view id and hash, and its corrected submission is a new one.
	if err := s.claimOnce(ctx, dedupeKey(viewKeyPrefix, in.User.ID, in.View.ID, in.View.Hash, query)); errors.Is(err, errDuplicate) {
		return outcomeDuplicate, nil
	} else if err != nil {
		s.metrics.dedupeError(kindInteraction)
		s.log.Warn("form dedupe failed; answering anyway", "err", err)
	}
	type answer struct {
		r   reply.Reply
		err error
	}
	h := &handoffOf[answer]{waiting: true, ch: make(chan answer, 1)}
	if !s.goWork(workItem{kind: kindInteraction, channel: st.Channel, ref: "form"}, func(ctx context.Context) {
		var a answer
		cctx, err := s.lookUpModel(ctx, in.User.ID, query)
		if err != nil {
			a.err = err
		} else if err := s.computeAnswer(cctx, func(cctx context.Context) { a.r, a.err = s.deps.Commands.VRAM(cctx, query) }); err != nil && a.r.Kind == "" && a.err == nil {
			a.err = errs.New(errs.Unavailable, "%s", tooSlowText)
		}
		if h.give(a) {
			return
		}
		s.deliverForm(ctx, in, st, s.vramOutcome(query, true, a.r, a.err))
	}) {
		return outcomeUnavailable, slack.NewErrorsViewSubmissionResponse(map[string]string{formModel: restartingText})
	}
	timer := time.NewTimer(s.cfg.InlineBudget)
	defer timer.Stop()
	var a answer
	select {
	case a = <-h.ch:
	case <-timer.C:
		var ok bool
		if a, ok = h.abandon(); !ok {
			return outcomeDeferred, nil // the form closes; the answer follows
		}
	}
	if a.err != nil && errs.KindOf(a.err) == errs.Invalid {
		return outcomeInline, slack.NewErrorsViewSubmissionResponse(map[string]string{fieldOf(in, a.err): errs.UserMessage(a.err)})
	}
	r := s.vramOutcome(query, true, a.r, a.err)
	if !s.goWork(workItem{kind: kindInteraction, channel: st.Channel, ref: "form"}, func(ctx context.Context) { s.deliverForm(ctx, in, st, r) }) {
		return outcomeUnavailable, slack.NewErrorsViewSubmissionResponse(map[string]string{formModel: restartingText})
	}
	return outcomeAccepted, nil
}

// badToken is an error that names the token it is about (commands.QueryError).
type badToken interface{ BadToken() string }

// fieldOf is the form field an error is about: the one whose value holds
// the token the error names, else the model.
func fieldOf(in interaction, err error) string {
	var bt badToken
	if errors.As(err, &bt) && bt.BadToken() != "" {
		tok := strings.ToLower(bt.BadToken())
		for _, f := range vramFormFields {
			if v := strings.ToLower(in.formValue(f)); v != "" && strings.Contains(v, tok) {
				return f
			}
		}
	}
	return formModel
}

// submitOOMForm diagnoses the paste of the /oom form (a paste is parsed
// in milliseconds, so inline): no OOM in it is an error under the field.
func (s *Server) submitOOMForm(ctx context.Context, in interaction, st formState) (string, any) {
	text := in.formValue(formPaste)
	var r reply.Reply
	var facts OOMFacts
	if err := s.computeAnswer(ctx, func(cctx context.Context) { r, facts = s.deps.Commands.OOM(cctx, text) }); err != nil {
		return outcomeUnavailable, slack.NewErrorsViewSubmissionResponse(map[string]string{formPaste: tooSlowText})
	}
	if !facts.Detected {
		return outcomeInline, slack.NewErrorsViewSubmissionResponse(map[string]string{formPaste: "No out-of-memory error found in this text: paste the whole error, from the traceback to its last line."})
	}
	if err := s.claimOnce(ctx, dedupeKey(viewKeyPrefix, in.User.ID, in.View.ID, in.View.Hash, text)); errors.Is(err, errDuplicate) {
		return outcomeDuplicate, nil
	}
	s.metrics.oom(facts.Format)
	r.Ephemeral = true
	if !s.goWork(workItem{kind: kindInteraction, channel: st.Channel, ref: "form"}, func(ctx context.Context) { s.deliverForm(ctx, in, st, r) }) {
		return outcomeUnavailable, slack.NewErrorsViewSubmissionResponse(map[string]string{formPaste: restartingText})
	}
	return outcomeAccepted, nil
}

// deliverForm posts a form's answer where the form was opened: privately
// through the command's response_url, else in the channel, else (a form
// opened from the App Home) as a direct message.
func (s *Server) deliverForm(ctx context.Context, in interaction, st formState, r reply.Reply) {
	if st.ResponseURL != "" && s.mayRespond(st.ResponseURL) {
		s.respond(ctx, kindInteraction, st.ResponseURL, s.responseFor(ctx, r))
		return
	}
	channel := st.Channel
	if channel == "" {
		channel = in.User.ID // chat.postMessage to a user id is the App Home's messages tab
	}
	r.Ephemeral = false
	r.Actions = nil
	s.post(ctx, kindInteraction, channel, "", r)
}

// mayRespond reports whether u is a response_url the bot may post to: an
// https Slack host, or the configured Web API's origin (tests point it at
// a fake). A form's private_metadata comes back from Slack, but it is
// checked like any URL that is not ours.
func (s *Server) mayRespond(u string) bool {
	parsed, err := parseHTTPURL(u)
	return err == nil && s.mayReceiveToken(parsed)
}

// suggestModels answers the form's model typeahead: catalog names and
// recent Hub lookups that match what was typed.
func (s *Server) suggestModels(ctx context.Context, in interaction) *slack.OptionsResponse {
	resp := &slack.OptionsResponse{Options: []*slack.OptionBlockObject{}}
	if in.ActionID != formModel || s.deps.Models == nil {
		return resp
	}
	typed := truncateRunes(strings.TrimSpace(in.Value), maxOptionValue)
	for _, m := range s.deps.Models.ModelOptions(ctx, typed, maxOptions) {
		if m.Value == "" || runeLen(m.Value) > maxOptionValue {
			continue
		}
		label := truncateRunes(oneLine(m.Label), maxOptionText)
		if label == "" {
			label = truncateRunes(m.Value, maxOptionText)
		}
		resp.Options = append(resp.Options, slack.NewOptionBlockObject(m.Value, slack.NewTextBlockObject(slack.PlainTextType, label, false, false), nil))
	}
	// The name as typed is always an option: any Hub id works.
	if typed != "" && len(resp.Options) < maxOptions && !strings.ContainsAny(typed, " \t") {
		resp.Options = append(resp.Options, slack.NewOptionBlockObject(typed, slack.NewTextBlockObject(slack.PlainTextType, truncateRunes(typed, maxOptionText), false, false), nil))
	}
	return resp
}

// ModelOption is one entry of the model typeahead.
type ModelOption struct {
	Label string // what the menu shows
	Value string // what the query gets
}

// ModelOptions lists models for the form's typeahead whose names match
// what was typed: the catalog's and the Hub ids resolved lately.
type ModelOptions interface {
	ModelOptions(ctx context.Context, typed string, n int) []ModelOption
}
