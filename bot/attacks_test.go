package bot

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/vrambot/vrambot/internal/slacktest"
	"github.com/vrambot/vrambot/reply"
)

// Issue 26's untried attacks on the Slack edge, recorded.

// clickOn is a block_actions payload: user clicks action (value) on the
// public message at ts in C1, answered at /response/name.
func clickOn(ts *testServer, user, action, value, msgTS, threadTS, actionTS, name string) url.Values {
	payload, _ := json.Marshal(map[string]any{
		"type": "block_actions", "user": map[string]any{"id": user}, "channel": map[string]any{"id": "C1"},
		"container":    map[string]any{"type": "message", "message_ts": msgTS, "channel_id": "C1", "is_ephemeral": false},
		"message":      map[string]any{"ts": msgTS, "thread_ts": threadTS},
		"response_url": ts.slack.ResponseURL(name),
		"actions":      []map[string]any{{"action_id": action, "value": value, "action_ts": actionTS}},
	})
	return url.Values{"payload": {string(payload)}}
}

// TestClicksOnAnotherUsersAnswer: on an answer posted in a channel for
// U1, U2's "Apply" does not rewrite what everyone sees (U2 gets the
// variant privately) while U1's does; "Details" is posted in the thread
// once however many people click, and later clickers get it privately.
func TestClicksOnAnotherUsersAnswer(t *testing.T) {
	ts := realServer(t)
	readAll(t, ts.event(t, "EvMentionU1", map[string]any{"type": "app_mention", "channel": "C1", "user": "U1",
		"text": "<@" + testBotUser + "> vram llama-3.1-8b lora 4090", "ts": "1700002000.000100"}))
	ts.idle(t)
	answer := ts.slack.Messages()[0]
	var blocks slack.Blocks
	if err := json.Unmarshal([]byte(answer.Blocks), &blocks); err != nil {
		t.Fatal(err)
	}
	buttons := buttonsOf(blocks.BlockSet)
	apply := buttons[reply.ActionApplyPrefix+"1"]
	if apply == "" {
		t.Fatalf("no apply button: %v", buttons)
	}

	ts.click(t, clickOn(ts, "U2", reply.ActionApplyPrefix+"1", apply, answer.TS, answer.ThreadTS, "1700002001.1", "u2apply"))
	ts.idle(t)
	if n := len(ts.slack.Answered("chat.update")); n != 0 {
		t.Fatalf("another user's click rewrote the answer (%d chat.update)", n)
	}
	got := responses(ts.slack, "u2apply")
	if len(got) != 1 {
		t.Fatalf("U2 got %d answers", len(got))
	}
	if f := decodeResponse(t, got[0].Body); f.ReplaceOriginal || f.ResponseType != slack.ResponseTypeEphemeral {
		t.Errorf("U2's variant: replace_original %v, %s; want a private message beside the answer", f.ReplaceOriginal, f.ResponseType)
	}

	ts.click(t, clickOn(ts, "U1", reply.ActionApplyPrefix+"1", apply, answer.TS, answer.ThreadTS, "1700002002.1", "u1apply"))
	ts.idle(t)
	if updates := ts.slack.Answered("chat.update"); len(updates) != 1 || updates[0].Args.Get("ts") != answer.TS {
		t.Errorf("the asker's click: chat.update %v, want the answer changed in place", channelsOf(updates))
	}

	key := buttons[reply.ActionDetails]
	if key == "" {
		t.Fatalf("no Details button on an answer in a thread: %v", buttons)
	}
	{
		before := len(ts.slack.Answered("chat.postMessage"))
		for i, user := range []string{"U2", "U3", "U4"} {
			ts.click(t, clickOn(ts, user, reply.ActionDetails, key, answer.TS, answer.ThreadTS, "1700002010."+string(rune('1'+i)), "details"+user))
		}
		ts.idle(t)
		if n := len(ts.slack.Answered("chat.postMessage")) - before; n != 1 {
			t.Errorf("%d public details posts for three clicks, want 1", n)
		}
		private := 0
		for _, user := range []string{"U2", "U3", "U4"} {
			private += len(responses(ts.slack, "details"+user))
		}
		if private != 2 {
			t.Errorf("%d private details answers, want 2 (the clicks after the first)", private)
		}
	}
}

// TestShortcutOnA40kMessage runs the Diagnose OOM shortcut on messages of
// Slack's longest (40,000 characters): of emoji, whose payload with the
// message's blocks and attachment passes 1 MiB form-encoded, with an OOM
// at its end (answered once in the thread), and without one (a private
// note); and on 40,000 characters of channel mentions (no ping).
func TestShortcutOnA40kMessage(t *testing.T) {
	ts := realServer(t)
	message := func(msgTS, text string) map[string]any {
		return map[string]any{"type": "message", "user": "U9", "ts": msgTS, "text": text,
			"blocks":      []map[string]any{{"type": "rich_text", "elements": []map[string]any{{"type": "rich_text_section", "elements": []map[string]any{{"type": "text", "text": text}}}}}},
			"attachments": []map[string]any{{"fallback": text}}}
	}
	emoji := strings.Repeat("😀", 40000-len([]rune(oomPaste))-1) + "\n" + oomPaste
	form := slacktest.MessageAction("U1", "C1", callbackDiagnoseOOM, "1700003000.1", ts.slack.ResponseURL("emoji"), message("1700002900.000100", slackEscape(emoji)))
	if n := len(form.Encode()); n <= 1<<20 {
		t.Fatalf("the payload is %d bytes; the test wants it past 1 MiB", n)
	}
	code, _ := ts.interactForm(t, form)
	if code != http.StatusOK {
		t.Fatalf("a 40,000-character message's shortcut: HTTP %d", code)
	}
	plain := strings.Repeat("step 1234 loss 0.123 ", 2000)[:40000]
	ts.interactForm(t, slacktest.MessageAction("U1", "C1", callbackDiagnoseOOM, "1700003001.1", ts.slack.ResponseURL("plain"), message("1700002901.000100", plain)))
	pings := strings.Repeat("<!channel> ", 3636)
	ts.interactForm(t, slacktest.MessageAction("U1", "C1", callbackDiagnoseOOM, "1700003002.1", ts.slack.ResponseURL("pings"), message("1700002902.000100", pings)))
	ts.idle(t)
	posts := ts.slack.Answered("chat.postMessage")
	if len(posts) != 1 || posts[0].Args.Get("thread_ts") != "1700002900.000100" {
		t.Fatalf("posts %v, want one diagnosis in the emoji message's thread", channelsOf(posts))
	}
	for _, name := range []string{"plain", "pings"} {
		got := responses(ts.slack, name)
		if len(got) != 1 || !strings.Contains(string(got[0].Body), "No out-of-memory error") || strings.Contains(string(got[0].Body), "<!channel>") {
			t.Errorf("%s: %.300s", name, bodiesOf(got))
		}
	}
}
