package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/vrambot/vrambot/internal/slacktest"
	"github.com/vrambot/vrambot/internal/testutil"
	"github.com/vrambot/vrambot/reply"
	"github.com/vrambot/vrambot/store"
)

// Issue 12's acceptance, played against the real HTTP handler with
// signed requests and the stand-in Slack: the form, its submission, the
// message shortcut, the App Home, a fix applied in place, a direct
// message, the typeahead, feedback and details.

// realServer is a test server on the real command set.
func realServer(t *testing.T, opts ...serverOption) *testServer {
	t.Helper()
	return newTestServer(t, nil, nil, append([]serverOption{func(_ *Config, d *Deps) { d.Commands = realCommands{} }}, opts...)...)
}

func (ts *testServer) slash(t *testing.T, command, text, responseURL string) (int, string) {
	t.Helper()
	form := slacktest.SlashCommand(command, text, responseURL)
	resp := ts.post(t, "/slack/commands", slacktest.FormContent, []byte(form.Encode()))
	return resp.StatusCode, readAll(t, resp)
}

func (ts *testServer) interactForm(t *testing.T, form url.Values) (int, string) {
	t.Helper()
	resp := ts.post(t, "/slack/interactivity", slacktest.FormContent, []byte(form.Encode()))
	return resp.StatusCode, readAll(t, resp)
}

// postedBlocks decodes a call's blocks (form or JSON arguments) and checks
// them against Block Kit's limits.
func postedBlocks(t *testing.T, c slacktest.Call) []slack.Block {
	t.Helper()
	raw := c.Args.Get("blocks")
	if raw == "" {
		var msg struct {
			Text   string       `json:"text"`
			Blocks slack.Blocks `json:"blocks"`
		}
		if err := json.Unmarshal(c.Body, &msg); err == nil && len(msg.Blocks.BlockSet) > 0 {
			checkLimits(t, msg.Blocks.BlockSet, msg.Text)
			return msg.Blocks.BlockSet
		}
		return nil
	}
	var b slack.Blocks
	if err := json.Unmarshal([]byte(raw), &b); err != nil {
		t.Fatalf("blocks of %s: %v", c.Method, err)
	}
	checkLimits(t, b.BlockSet, c.Args.Get("text"))
	return b.BlockSet
}

// buttonsOf lists the buttons (action id → value) in blocks, section
// accessories included.
func buttonsOf(blocks []slack.Block) map[string]string {
	out := map[string]string{}
	for _, b := range blocks {
		switch b := b.(type) {
		case *slack.ActionBlock:
			for _, e := range b.Elements.ElementSet {
				if btn, ok := e.(*slack.ButtonBlockElement); ok {
					out[btn.ActionID] = btn.Value
				}
			}
		case *slack.SectionBlock:
			if b.Accessory != nil && b.Accessory.ButtonElement != nil {
				out[b.Accessory.ButtonElement.ActionID] = b.Accessory.ButtonElement.Value
			}
		}
	}
	return out
}

func headerOf(blocks []slack.Block) string {
	for _, b := range blocks {
		if h, ok := b.(*slack.HeaderBlock); ok {
			return h.Text.Text
		}
	}
	return ""
}

// TestSlashWithoutTextOpensTheForm: /vram and /oom alone open their form
// with the command's trigger id, and the command gets an empty 200.
func TestSlashWithoutTextOpensTheForm(t *testing.T) {
	ts := realServer(t)
	for _, command := range []string{"/vram", "/oom"} {
		form := slacktest.SlashCommand(command, "", ts.slack.ResponseURL("form"))
		resp := ts.post(t, "/slack/commands", slacktest.FormContent, []byte(form.Encode()))
		if body := readAll(t, resp); resp.StatusCode != http.StatusOK || strings.TrimSpace(body) != "" {
			t.Errorf("%s: HTTP %d %q, want an empty 200", command, resp.StatusCode, body)
		}
		opened := ts.slack.Answered("views.open")
		if len(opened) == 0 || opened[len(opened)-1].Args.Get("trigger_id") != form.Get("trigger_id") {
			t.Fatalf("%s: %d views.open calls, want one with trigger %s", command, len(opened), form.Get("trigger_id"))
		}
	}
	if n := len(ts.slack.Answered("views.open")); n != 2 {
		t.Errorf("%d forms opened", n)
	}
	// Without a trigger id (or when Slack refuses it) the usage answers.
	ts.slack.SetFaults("views.open", slacktest.FailFirst(1, slacktest.Fault{Error: "expired_trigger_id"}))
	code, body := ts.slash(t, "/vram", "", ts.slack.ResponseURL("x"))
	if code != http.StatusOK || !strings.Contains(body, "Examples") {
		t.Errorf("refused form: HTTP %d %.200s", code, body)
	}
}

// openedView returns the view JSON of the last views.open.
func openedView(t *testing.T, fs *slacktest.Server) []byte {
	t.Helper()
	opened := fs.Answered("views.open")
	if len(opened) == 0 {
		t.Fatal("no views.open")
	}
	return []byte(opened[len(opened)-1].Args.Get("view"))
}

// TestFormSubmissionPostsTheAnswer: the form's submission closes it and
// posts the /vram answer where the command was typed (its response_url);
// a query the grammar refuses gets the error under the field instead.
func TestFormSubmissionPostsTheAnswer(t *testing.T) {
	ts := realServer(t)
	if code, _ := ts.slash(t, "/vram", "", ts.slack.ResponseURL("form")); code != http.StatusOK {
		t.Fatal(code)
	}
	view := openedView(t, ts.slack)
	values := map[string]string{formModel: "llama-3.1-8b", formMethod: "qlora", formGPU: "4090", formBatch: "2", formSeq: "4096"}
	code, body := ts.interactForm(t, slacktest.ViewSubmission("U1", "V1", view, values))
	if code != http.StatusOK || strings.Contains(body, "errors") {
		t.Fatalf("submission: HTTP %d %s", code, body)
	}
	ts.idle(t)
	posts := responses(ts.slack, "form")
	if len(posts) != 1 {
		t.Fatalf("%d answers posted", len(posts))
	}
	blocks := postedBlocks(t, posts[0])
	if h := headerOf(blocks); !strings.Contains(h, "llama-3.1-8b · QLoRA · GeForce RTX 4090") {
		t.Errorf("header %q", h)
	}
	// The same submission again (a replay) posts nothing more.
	ts.interactForm(t, slacktest.ViewSubmission("U1", "V1", view, values))
	ts.idle(t)
	if n := len(responses(ts.slack, "form")); n != 1 {
		t.Errorf("a replayed submission posted again: %d answers", n)
	}

	// Bad input stays in the form, under its field.
	code, body = ts.interactForm(t, slacktest.ViewSubmission("U1", "V2", view, map[string]string{formModel: "llama-3.1-8b", formMethod: "qlora", formGPU: "a1000"}))
	var resp struct {
		Action string            `json:"response_action"`
		Errors map[string]string `json:"errors"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || code != http.StatusOK || resp.Action != "errors" || !strings.Contains(resp.Errors[formGPU], "a1000") {
		t.Errorf("bad GPU: HTTP %d %s", code, body)
	}
	_, body = ts.interactForm(t, slacktest.ViewSubmission("U1", "V3", view, map[string]string{formMethod: "lora"}))
	if !strings.Contains(body, `"model"`) {
		t.Errorf("no model: %s", body)
	}
	ts.idle(t)
	if n := len(responses(ts.slack, "form")); n != 1 {
		t.Errorf("refused forms posted answers: %d", n)
	}
	// The refused form corrected (same view id and hash) is answered.
	code, body = ts.interactForm(t, slacktest.ViewSubmission("U1", "V2", view, map[string]string{formModel: "llama-3.1-8b", formMethod: "qlora", formGPU: "a100"}))
	ts.idle(t)
	if n := len(responses(ts.slack, "form")); code != http.StatusOK || n != 2 {
		t.Errorf("corrected form: HTTP %d %s, %d answers", code, body, n)
	}
}

// TestFormFromTheAppHome: a form without a command's response_url (the
// harness' own payload, or one opened elsewhere) is answered as a direct
// message.
func TestFormFromTheAppHome(t *testing.T) {
	ts := realServer(t)
	view, _ := json.Marshal(vramForm(formState{}))
	ts.interactForm(t, slacktest.ViewSubmission("U7", "V9", view, map[string]string{formModel: "7b", formMethod: "lora", formGPU: "a100"}))
	ts.idle(t)
	var top []slacktest.Call
	for _, p := range ts.slack.Answered("chat.postMessage") {
		if p.Args.Get("thread_ts") == "" {
			top = append(top, p)
		}
	}
	if len(top) != 1 || top[0].Args.Get("channel") != "U7" {
		t.Fatalf("%d answers (to %v), want one direct message to U7", len(top), channelsOf(top))
	}
	postedBlocks(t, top[0])
}

// TestOOMFormDiagnosesThePaste: /oom's form takes a paste and answers
// privately; text without an OOM gets an error in the form.
func TestOOMFormDiagnosesThePaste(t *testing.T) {
	ts := realServer(t)
	ts.slash(t, "/oom", "", ts.slack.ResponseURL("oom-form"))
	view := openedView(t, ts.slack)
	_, body := ts.interactForm(t, slacktest.ViewSubmission("U1", "V1", view, map[string]string{formPaste: "hello world"}))
	if !strings.Contains(body, `"errors"`) || !strings.Contains(body, formPaste) {
		t.Errorf("no OOM: %s", body)
	}
	code, body := ts.interactForm(t, slacktest.ViewSubmission("U1", "V2", view, map[string]string{formPaste: oomPaste}))
	if code != http.StatusOK || strings.Contains(body, "errors") {
		t.Fatalf("paste: HTTP %d %s", code, body)
	}
	ts.idle(t)
	posts := responses(ts.slack, "oom-form")
	if len(posts) != 1 || !strings.Contains(string(posts[0].Body), `"response_type":"ephemeral"`) {
		t.Fatalf("answers %.300s", bodiesOf(posts))
	}
	if h := headerOf(postedBlocks(t, posts[0])); !strings.Contains(h, "CUDA OOM") {
		t.Errorf("header %q", h)
	}
}

// TestSlashOOMWithText: /oom with a paste answers privately, inline.
func TestSlashOOMWithText(t *testing.T) {
	ts := realServer(t)
	_, body := ts.slash(t, "/oom", oomPaste, ts.slack.ResponseURL("x"))
	got := decodeResponse(t, []byte(body))
	if got.ResponseType != slack.ResponseTypeEphemeral || !strings.Contains(got.Text, "CUDA OOM") {
		t.Errorf("answer %+v", got)
	}
	_, body = ts.slash(t, "/oom", "it crashed", ts.slack.ResponseURL("x"))
	if !strings.Contains(body, "No out-of-memory error found") {
		t.Errorf("no OOM: %.200s", body)
	}
}

// TestDiagnoseOOMShortcut: the message shortcut on someone else's message
// holding an OOM posts one diagnosis in that message's thread, however
// often it is delivered or run; on a message in a thread it answers in
// that thread; on a message without an OOM it answers privately.
func TestDiagnoseOOMShortcut(t *testing.T) {
	ts := realServer(t)
	msg := map[string]any{"type": "message", "user": "U9", "ts": "1700000500.000100", "text": slackEscape(oomPaste)}
	form := slacktest.MessageAction("U1", "C1", callbackDiagnoseOOM, "1700000600.1", ts.slack.ResponseURL("sc"), msg)
	for range 2 {
		if code, _ := ts.interactForm(t, form); code != http.StatusOK {
			t.Fatal(code)
		}
	}
	// Someone else runs it on the same message, once the first answer is
	// out (run at the same moment, either of the two may be the one
	// answered in the thread).
	ts.idle(t)
	ts.interactForm(t, slacktest.MessageAction("U2", "C1", callbackDiagnoseOOM, "1700000601.1", ts.slack.ResponseURL("sc2"), msg))
	ts.idle(t)
	posts := ts.slack.Answered("chat.postMessage")
	if len(posts) != 1 || posts[0].Args.Get("thread_ts") != "1700000500.000100" || posts[0].Args.Get("channel") != "C1" {
		t.Fatalf("posts %v, want one in the message's thread", channelsOf(posts))
	}
	if h := headerOf(postedBlocks(t, posts[0])); !strings.Contains(h, "CUDA OOM") {
		t.Errorf("header %q", h)
	}
	if got := responses(ts.slack, "sc2"); len(got) != 1 || !strings.Contains(string(got[0].Body), alreadyDiagnosedText) {
		t.Errorf("second asker got %.300s", bodiesOf(got))
	}
	if n := len(ts.ooms.all()); n != 1 {
		t.Errorf("%d OOMs recorded for the digest", n)
	}

	// A bot's message inside a thread: answered in that thread.
	threaded := map[string]any{"type": "message", "bot_id": "BOTHER", "ts": "1700000700.000100", "thread_ts": "1700000650.000100", "text": slackEscape(oomPaste)}
	ts.interactForm(t, slacktest.MessageAction("U1", "C1", callbackDiagnoseOOM, "1700000701.1", ts.slack.ResponseURL("sc3"), threaded))
	// No OOM: a private note.
	plain := map[string]any{"type": "message", "user": "U9", "ts": "1700000800.000100", "text": "lunch?"}
	ts.interactForm(t, slacktest.MessageAction("U1", "C1", callbackDiagnoseOOM, "1700000801.1", ts.slack.ResponseURL("sc4"), plain))
	ts.idle(t)
	posts = ts.slack.Answered("chat.postMessage")
	if len(posts) != 2 || posts[1].Args.Get("thread_ts") != "1700000650.000100" {
		t.Errorf("threaded message: posts %v", channelsOf(posts))
	}
	if got := responses(ts.slack, "sc4"); len(got) != 1 || !strings.Contains(string(got[0].Body), "No out-of-memory error") {
		t.Errorf("no OOM: %.300s", bodiesOf(got))
	}
}

// TestDiagnoseOOMNotInChannel: where the bot cannot post, the person who
// asked gets the diagnosis privately.
func TestDiagnoseOOMNotInChannel(t *testing.T) {
	ts := realServer(t)
	ts.slack.SetFaults("chat.postMessage", func(int, *slacktest.Call) slacktest.Fault { return slacktest.Fault{Error: "not_in_channel"} })
	msg := map[string]any{"type": "message", "user": "U9", "ts": "1700000500.000100", "text": slackEscape(oomPaste)}
	ts.interactForm(t, slacktest.MessageAction("U1", "C1", callbackDiagnoseOOM, "1700000600.1", ts.slack.ResponseURL("sc"), msg))
	ts.idle(t)
	got := responses(ts.slack, "sc")
	if len(got) != 1 || !strings.Contains(string(got[0].Body), "CUDA OOM") {
		t.Errorf("private answer %.300s", bodiesOf(got))
	}
}

func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// homeFacts is a fixed home source.
type homeSource struct{}

func (homeSource) LastDigest(context.Context) (DigestHeadline, bool, error) {
	return DigestHeadline{Headline: "12 GPUs seen: 1 near OOM; 3 OOMs pasted in Slack.", At: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), Channel: "C0GPU"}, true, nil
}

func (homeSource) OOMsByCause(context.Context, time.Time) (map[string]int, error) {
	return map[string]int{"fragmentation": 2, "activations-in-backward": 1}, nil
}

// TestAppHomeOpened: opening the Home tab publishes it, once per event;
// opening the Messages tab publishes nothing.
func TestAppHomeOpened(t *testing.T) {
	ts := realServer(t, func(_ *Config, d *Deps) { d.LastDigest, d.OOMs = homeSource{}, homeSource{} })
	for range 2 {
		readAll(t, ts.event(t, "EvHome1", slacktest.AppHomeOpened("U5", "home")))
	}
	readAll(t, ts.event(t, "EvHome2", slacktest.AppHomeOpened("U5", "messages")))
	ts.idle(t)
	got := ts.slack.Answered("views.publish")
	if len(got) != 1 || got[0].Args.Get("user_id") != "U5" {
		t.Fatalf("views.publish %v", channelsOf(got))
	}
	view := got[0].Args.Get("view")
	for _, want := range []string{`"type":"home"`, "How to ask", "12 GPUs seen", "fragmentation: 2", "3 in all"} {
		if !strings.Contains(view, want) {
			t.Errorf("home tab lacks %q: %.600s", want, view)
		}
	}
}

// TestApplyFixUpdatesInPlace: a fix's button re-runs the query with the
// fix applied and replaces the message it is on: through response_url for
// the private answer, with chat.update for a message in a channel.
func TestApplyFixUpdatesInPlace(t *testing.T) {
	ts := realServer(t)
	_, body := ts.slash(t, "/vram", "llama-3.1-8b lora 4090", ts.slack.ResponseURL("cmd"))
	got := decodeResponse(t, []byte(body))
	// It does not fit as asked; it fits with checkpointing, and the
	// verdict says so first (issue 22).
	if h := headerOf(got.Blocks); !strings.HasPrefix(h, reply.BandFits.Mark()+" fits with gradient checkpointing") {
		t.Fatalf("header %q: want the verdict first", h)
	}
	apply := buttonsOf(got.Blocks)[reply.ActionApplyPrefix+"1"]
	if !strings.Contains(apply, "gc=on") {
		t.Fatalf("apply button %q (buttons %v)", apply, buttonsOf(got.Blocks))
	}
	ts.click(t, slacktest.BlockAction("U1", "C1", reply.ActionApplyPrefix+"1", apply, "1700000002.1", ts.slack.ResponseURL("apply")))
	ts.idle(t)
	posts := responses(ts.slack, "apply")
	if len(posts) != 1 || !strings.Contains(string(posts[0].Body), `"replace_original":true`) {
		t.Fatalf("apply: %.300s", bodiesOf(posts))
	}
	if h := headerOf(postedBlocks(t, posts[0])); !strings.HasPrefix(h, reply.BandFits.Mark()+" fits ") || strings.Contains(h, "fits with") {
		t.Errorf("applied answer's header %q: want it to fit as asked", h)
	}

	// On a message the bot posted in a channel: chat.update, then its new
	// details in the thread.
	readAll(t, ts.event(t, "EvMention1", map[string]any{"type": "app_mention", "channel": "C1", "user": "U1",
		"text": "<@" + testBotUser + "> vram llama-3.1-8b lora 4090", "ts": "1700000900.000100"}))
	ts.idle(t)
	posted := ts.slack.Messages()
	if len(posted) == 0 {
		t.Fatal("the mention was not answered")
	}
	answer := posted[0]
	var blocks slack.Blocks
	if err := json.Unmarshal([]byte(answer.Blocks), &blocks); err != nil {
		t.Fatal(err)
	}
	apply = buttonsOf(blocks.BlockSet)[reply.ActionApplyPrefix+"1"]
	payload, _ := json.Marshal(map[string]any{
		"type": "block_actions", "user": map[string]any{"id": "U1"}, "channel": map[string]any{"id": "C1"},
		"container": map[string]any{"type": "message", "message_ts": answer.TS, "channel_id": "C1", "is_ephemeral": false},
		"message":   map[string]any{"ts": answer.TS, "thread_ts": answer.ThreadTS},
		"actions":   []map[string]any{{"action_id": reply.ActionApplyPrefix + "1", "value": apply, "action_ts": "1700000950.1"}},
	})
	ts.click(t, url.Values{"payload": {string(payload)}})
	ts.idle(t)
	updates := ts.slack.Answered("chat.update")
	if len(updates) != 1 || updates[0].Args.Get("ts") != answer.TS {
		t.Fatalf("chat.update %v", channelsOf(updates))
	}
	if h := headerOf(postedBlocks(t, updates[0])); !strings.HasPrefix(h, reply.BandFits.Mark()) {
		t.Errorf("updated header %q", h)
	}
}

// TestDirectMessageIsAnswered: a question sent to the bot in its Messages
// tab is answered there, as a channel answer (its details in its thread);
// a greeting gets the usage.
func TestDirectMessageIsAnswered(t *testing.T) {
	ts := realServer(t)
	readAll(t, ts.event(t, "EvDM1", slacktest.DirectMessage("1700001000.000100", "can I finetune llama 3 8b on a 4090?")))
	readAll(t, ts.event(t, "EvDM2", slacktest.DirectMessage("1700001001.000100", "hi")))
	ts.idle(t)
	posts := ts.slack.Answered("chat.postMessage")
	var answers []slacktest.Call
	for _, p := range posts {
		if p.Args.Get("thread_ts") == "" {
			answers = append(answers, p)
		}
	}
	if len(answers) != 2 || answers[0].Args.Get("channel") != "DU1" {
		t.Fatalf("posts %v", channelsOf(posts))
	}
	var question, greeting slacktest.Call
	for _, a := range answers {
		if strings.Contains(a.Args.Get("text"), "llama-3-8b") {
			question = a
		} else {
			greeting = a
		}
	}
	blocks := postedBlocks(t, question)
	if h := headerOf(blocks); !strings.Contains(h, "llama-3-8b · LoRA · GeForce RTX 4090") {
		t.Errorf("header %q", h)
	}
	if !strings.Contains(question.Args.Get("blocks"), "Read as `llama-3-8b lora 4090`") {
		t.Errorf("the answer does not say how the question was read: %.400s", question.Args.Get("blocks"))
	}
	if !strings.Contains(greeting.Args.Get("blocks"), "Examples") {
		t.Errorf("greeting answered with %.300s", greeting.Args.Get("blocks"))
	}
	// The question's details follow in the answer's thread.
	details := 0
	for _, p := range posts {
		if p.Args.Get("thread_ts") != "" && strings.HasPrefix(p.Args.Get("text"), "Details") {
			details++
		}
	}
	if details != 1 {
		t.Errorf("%d details messages", details)
	}
}

// TestModelTypeahead: the form's external select is answered with
// options at once.
func TestModelTypeahead(t *testing.T) {
	ts := realServer(t, func(_ *Config, d *Deps) {
		d.Models = fixedOptions{{Label: "Llama-3.1-8B", Value: "llama-3.1-8b"}}
	})
	code, body := ts.interactForm(t, slacktest.BlockSuggestion("U1", formModel, "llam"))
	var resp slack.OptionsResponse
	if err := json.Unmarshal([]byte(body), &resp); err != nil || code != http.StatusOK || len(resp.Options) != 2 || resp.Options[0].Value != "llama-3.1-8b" {
		t.Errorf("typeahead: HTTP %d %s", code, body)
	}
}

// TestFeedbackIsCountedOncePerMessage: 👍 and 👎 are recorded for the
// digest and counted in /metrics, once per person and message.
func TestFeedbackIsCountedOncePerMessage(t *testing.T) {
	var mu sync.Mutex
	var votes []Feedback
	ts := realServer(t, func(_ *Config, d *Deps) {
		d.RecordFeedback = func(_ context.Context, f Feedback) error {
			mu.Lock()
			defer mu.Unlock()
			votes = append(votes, f)
			return nil
		}
	})
	vote := func(user, id, ts0 string) {
		payload, _ := json.Marshal(map[string]any{
			"type": "block_actions", "user": map[string]any{"id": user}, "channel": map[string]any{"id": "C1"},
			"container":    map[string]any{"type": "message", "message_ts": "1700003000.000100", "channel_id": "C1"},
			"response_url": ts.slack.ResponseURL("vote"),
			"actions":      []map[string]any{{"action_id": id, "value": "vram", "action_ts": ts0}},
		})
		ts.click(t, url.Values{"payload": {string(payload)}})
	}
	vote("U1", reply.ActionFeedbackUp, "1.1")
	vote("U1", reply.ActionFeedbackDown, "1.2") // a second vote on the same answer
	vote("U2", reply.ActionFeedbackDown, "1.3")
	ts.idle(t)
	mu.Lock()
	defer mu.Unlock()
	// Votes are recorded off the ack path, so two people's may land in
	// either order; what counts is one vote each, U1's first click kept.
	count := map[string]int{}
	for _, v := range votes {
		if v.Kind != "vram" || v.Channel != "C1" {
			t.Errorf("vote %+v", v)
		}
		count[v.Vote]++
	}
	if len(votes) != 2 || count[voteUp] != 1 || count[voteDown] != 1 {
		t.Errorf("votes %+v, want one up (U1's first) and one down (U2's)", votes)
	}
	m := scrape(t, ts)
	for _, want := range []string{`vrambot_feedback_total{kind="vram",vote="up"} 1`, `vrambot_feedback_total{kind="vram",vote="down"} 1`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestDetailsButton: a private answer's Details button posts its details
// privately; an answer posted in a thread keeps them behind the button
// and posts them in that thread.
func TestDetailsButton(t *testing.T) {
	ts := realServer(t)
	_, body := ts.slash(t, "/vram", "llama-3.1-8b lora 4090", ts.slack.ResponseURL("cmd"))
	key := buttonsOf(decodeResponse(t, []byte(body)).Blocks)[reply.ActionDetails]
	if key == "" {
		t.Fatal("no Details button")
	}
	ts.click(t, slacktest.BlockAction("U1", "C1", reply.ActionDetails, key, "1700000003.1", ts.slack.ResponseURL("details")))
	ts.idle(t)
	got := responses(ts.slack, "details")
	if len(got) != 1 || !strings.Contains(string(got[0].Body), "Details · llama-3.1-8b") || strings.Contains(string(got[0].Body), `"replace_original":true`) {
		t.Fatalf("%d details answers: %.300s", len(got), bodiesOf(got))
	}
	postedBlocks(t, got[0])
	// An expired key is said so.
	ts.click(t, slacktest.BlockAction("U1", "C1", reply.ActionDetails, "ffffffffffffffffffffffff", "1700000004.1", ts.slack.ResponseURL("gone")))
	ts.idle(t)
	if got := responses(ts.slack, "gone"); len(got) != 1 || !strings.Contains(string(got[0].Body), "no longer kept") {
		t.Errorf("expired details %.300s", bodiesOf(got))
	}
}

// lookupCommands is the real command set with a Hub lookup check that
// says every Hub id needs the Hub.
type lookupCommands struct{ realCommands }

func (lookupCommands) HubLookup(_ context.Context, query string) (string, bool) {
	word, _, _ := strings.Cut(query, " ")
	return word, strings.Contains(word, "/")
}

// TestSlashHubLookupIsDeferred: a query whose model must be looked up on
// the Hub is acked at once ("Looking up …") and answered through
// response_url, however fast the lookup.
func TestSlashHubLookupIsDeferred(t *testing.T) {
	ts := newTestServer(t, nil, store.NewMemory(), func(_ *Config, d *Deps) {
		d.Commands, d.Lookups = realCommands{}, lookupCommands{}
	})
	_, body := ts.slash(t, "/vram", "meta-llama/Llama-2-7b-hf lora 4090", ts.slack.ResponseURL("hub"))
	got := decodeResponse(t, []byte(body))
	if got.ResponseType != slack.ResponseTypeEphemeral || got.Text != "Looking up meta-llama/Llama-2-7b-hf on the Hugging Face Hub…" {
		t.Fatalf("ack %+v", got)
	}
	testutil.Eventually(t, 10*time.Second, "the answer reaches response_url", func() bool { return len(responses(ts.slack, "hub")) == 1 })
	f := decodeResponse(t, responses(ts.slack, "hub")[0].Body)
	if !f.ReplaceOriginal || !strings.Contains(f.Text, "meta-llama/Llama-2-7b-hf") {
		t.Errorf("follow-up %+v", f)
	}
}

// TestEveryReplyKindWithinLimits posts every real reply kind through the
// bot and checks each message Slack receives.
func TestEveryReplyKindWithinLimits(t *testing.T) {
	ts := realServer(t)
	for i, g := range goldenReplies(t) {
		ts.Server.post(t.Context(), kindEvent, "C1", "", g.r)
		ts.Server.post(t.Context(), kindEvent, "C1", fmt.Sprintf("1700004000.%06d", i), g.r)
	}
	ts.idle(t)
	for _, c := range ts.slack.Replies() {
		if c.Method == "chat.postMessage" {
			postedBlocks(t, c)
		}
	}
}

func channelsOf(calls []slacktest.Call) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.Args.Get("channel")+"/"+c.Args.Get("thread_ts"))
	}
	return out
}

func bodiesOf(calls []slacktest.Call) string {
	var out []string
	for _, c := range calls {
		out = append(out, string(c.Body))
	}
	return strings.Join(out, "\n")
}
