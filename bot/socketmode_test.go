package bot

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/vrambot/vrambot/internal/slacktest"
	"github.com/vrambot/vrambot/internal/testutil"
	"github.com/vrambot/vrambot/reply"
	"github.com/vrambot/vrambot/store"
)

// runSocket starts Run and returns a stop function that checks its result.
func runSocket(t *testing.T, ts *testServer) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- ts.Run(ctx) }()
	return func() {
		cancel()
		select {
		case err := <-runErr:
			if err != nil {
				t.Errorf("Run = %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return after cancel")
		}
	}
}

func socketOnly(c *Config, _ *Deps) { c.AppToken = slacktest.AppToken; c.SigningSecret = "" }

// TestSocketMode runs the bot against a fake apps.connections.open and
// WebSocket: every envelope is acked, a slash command is answered in its
// ack, an OOM event is answered in its thread, and an event slack-go itself
// cannot parse is still acked and served.
func TestSocketMode(t *testing.T) {
	fs := slacktest.New(t)
	sock := fs.Socket()
	ts := newTestServer(t, fs, nil, socketOnly)
	stop := runSocket(t, ts)

	waitAck := acker(t, sock)

	// A slash command: the answer travels in the ack.
	cmd, _ := json.Marshal(map[string]any{"command": "/vram", "text": "7b lora a100", "user_id": "U1", "channel_id": "C1", "trigger_id": "1.2.3", "response_url": fs.ResponseURL("sm")})
	sock.Send(slacktest.Envelope{EnvelopeID: "env-cmd", Type: "slash_commands", Payload: cmd})
	a := waitAck("env-cmd")
	got := decodeResponse(t, a.Payload)
	if got.ResponseType != slack.ResponseTypeEphemeral || countButtons(got.Blocks, shareActionID) != 1 {
		t.Errorf("slash ack payload = %s", a.Payload)
	}

	// An OOM paste, delivered twice (Socket Mode retry): one reply.
	for i, id := range []string{"env-ev1", "env-ev1-retry"} {
		sock.Send(slacktest.Envelope{EnvelopeID: id, Type: "events_api", Payload: slacktest.EventBody("EvSock1", message(oomPaste)), RetryAttempt: i})
		waitAck(id)
		ts.idle(t)
	}
	// An event whose block slack-go's strict decoder rejects.
	odd := message(oomPaste, "ts", "1700000500.000100", "blocks", []any{map[string]any{"type": "section", "text": 42}})
	sock.Send(slacktest.Envelope{EnvelopeID: "env-odd", Type: "events_api", Payload: slacktest.EventBody("EvSock2", odd)})
	waitAck("env-odd")

	// A button press, delivered twice: shared once.
	for _, id := range []string{"env-btn", "env-btn-again"} {
		press, _ := json.Marshal(map[string]any{"type": "block_actions", "user": map[string]any{"id": "U1"}, "channel": map[string]any{"id": "C1"},
			"response_url": fs.ResponseURL("smshare"), "actions": []map[string]any{{"action_id": shareActionID, "block_id": "b", "value": "7b", "action_ts": "1700000600.1"}}})
		sock.Send(slacktest.Envelope{EnvelopeID: id, Type: "interactive", Payload: press})
		waitAck(id)
	}

	testutil.Eventually(t, 5*time.Second, "two replies and one share", func() bool {
		return len(fs.Answered("chat.postMessage")) >= 2 && len(responses(fs, "smshare")) >= 1
	})
	ts.idle(t)
	posts := fs.Answered("chat.postMessage")
	if len(posts) != 2 {
		t.Fatalf("%d replies, want 2 (one per distinct event)", len(posts))
	}
	threads := posts[0].Args.Get("thread_ts") + " " + posts[1].Args.Get("thread_ts")
	if !strings.Contains(threads, "1700000100.000200") || !strings.Contains(threads, "1700000500.000100") {
		t.Errorf("threads %s", threads)
	}
	if n := len(responses(fs, "smshare")); n != 1 {
		t.Errorf("share posts: %d, want 1", n)
	}
	if n := len(fs.Answered("apps.connections.open")); n < 1 {
		t.Error("apps.connections.open not called")
	}

	stop()
	// HTTP request URLs are off without a signing secret.
	resp := ts.event(t, "EvHTTP", message(oomPaste))
	if readAll(t, resp); resp.StatusCode != http.StatusNotFound {
		t.Errorf("HTTP event in socket-only mode: %d", resp.StatusCode)
	}
}

// TestSocketModeStoreDown: an event that cannot be claimed is not acked, so
// Slack redelivers it, while commands are still answered.
func TestSocketModeStoreDown(t *testing.T) {
	fs := slacktest.New(t)
	sock := fs.Socket()
	ts := newTestServer(t, fs, failingStore{store.NewMemory()}, socketOnly)
	stop := runSocket(t, ts)
	defer stop()
	sock.Send(slacktest.Envelope{EnvelopeID: "env-ev", Type: "events_api", Payload: slacktest.EventBody("EvDown", message(oomPaste))})
	cmd, _ := json.Marshal(map[string]any{"command": "/vram", "text": "7b", "response_url": fs.ResponseURL("x")})
	sock.Send(slacktest.Envelope{EnvelopeID: "env-cmd", Type: "slash_commands", Payload: cmd})
	select {
	case a := <-sock.Acks():
		if a.EnvelopeID != "env-cmd" {
			t.Errorf("acked %s while the store is down", a.EnvelopeID)
		}
	case <-time.After(slackDeadline):
		t.Fatal("command not acked")
	}
	select {
	case a := <-sock.Acks():
		t.Errorf("unexpected ack %s", a.EnvelopeID)
	case <-time.After(200 * time.Millisecond):
	}
}

// TestSocketModeInteractivity: over Socket Mode the typeahead's options
// and a form's errors travel in the envelope's ack, /vram alone opens its
// form, and the App Home is published.
func TestSocketModeInteractivity(t *testing.T) {
	fs := slacktest.New(t)
	sock := fs.Socket()
	ts := newTestServer(t, fs, nil, socketOnly, func(_ *Config, d *Deps) {
		d.Commands = realCommands{}
		d.Models = fixedOptions{{Label: "Llama-3.1-8B", Value: "llama-3.1-8b"}}
	})
	stop := runSocket(t, ts)
	defer stop()
	waitAck := acker(t, sock)
	suggestion := []byte(slacktest.BlockSuggestion("U1", formModel, "llama").Get("payload"))
	sock.Send(slacktest.Envelope{EnvelopeID: "env-sug", Type: "interactive", Payload: suggestion})
	if a := waitAck("env-sug"); !strings.Contains(string(a.Payload), `"value":"llama-3.1-8b"`) {
		t.Errorf("typeahead ack %s", a.Payload)
	}
	view, _ := json.Marshal(vramForm(formState{}))
	bad := []byte(slacktest.ViewSubmission("U1", "V1", view, map[string]string{formMethod: "lora"}).Get("payload"))
	sock.Send(slacktest.Envelope{EnvelopeID: "env-form", Type: "interactive", Payload: bad})
	if a := waitAck("env-form"); !strings.Contains(string(a.Payload), `"response_action":"errors"`) {
		t.Errorf("form ack %s", a.Payload)
	}
	cmd, _ := json.Marshal(map[string]any{"command": "/vram", "text": "", "user_id": "U1", "channel_id": "C1", "trigger_id": "9.8.7", "response_url": fs.ResponseURL("sm")})
	sock.Send(slacktest.Envelope{EnvelopeID: "env-cmd", Type: "slash_commands", Payload: cmd})
	waitAck("env-cmd")
	sock.Send(slacktest.Envelope{EnvelopeID: "env-home", Type: "events_api", Payload: slacktest.EventBody("EvSockHome", slacktest.AppHomeOpened("U1", "home"))})
	waitAck("env-home")
	testutil.Eventually(t, 5*time.Second, "the form opened and the home published", func() bool {
		return len(fs.Answered("views.open")) == 1 && len(fs.Answered("views.publish")) == 1
	})
}

// TestEstimateThisWorkload: an OOM reply whose paste names its model
// carries "Estimate this workload", which answers with the /vram estimate
// in the OOM's thread.
func TestEstimateThisWorkload(t *testing.T) {
	ts := realServer(t)
	paste := goldenPaste(t, "zero2")
	readAll(t, ts.event(t, "EvZero2", message(slackEscape(paste), "ts", "1700005000.000100")))
	ts.idle(t)
	posts := ts.slack.Answered("chat.postMessage")
	if len(posts) != 1 {
		t.Fatalf("%d posts", len(posts))
	}
	value := buttonsOf(postedBlocks(t, posts[0]))[reply.ActionEstimate]
	if !strings.Contains(value, "bs=4") {
		t.Fatalf("estimate button %q", value)
	}
	payload, _ := json.Marshal(map[string]any{
		"type": "block_actions", "user": map[string]any{"id": "U1"}, "channel": map[string]any{"id": "C1"},
		"container": map[string]any{"type": "message", "message_ts": ts.slack.Messages()[0].TS, "channel_id": "C1", "thread_ts": "1700005000.000100"},
		"message":   map[string]any{"ts": "1700000000.000001", "thread_ts": "1700005000.000100"},
		"actions":   []map[string]any{{"action_id": reply.ActionEstimate, "value": value, "action_ts": "1700005001.1"}},
	})
	ts.click(t, url.Values{"payload": {string(payload)}})
	ts.idle(t)
	posts = ts.slack.Answered("chat.postMessage")
	if len(posts) != 2 || posts[1].Args.Get("thread_ts") != "1700005000.000100" || !strings.Contains(posts[1].Args.Get("text"), "full fine-tuning") {
		t.Errorf("estimate posts %v: %.200s", channelsOf(posts), posts[len(posts)-1].Args.Get("text"))
	}
}

// acker returns a function that waits for an envelope's ack within Slack's
// deadline.
func acker(t *testing.T, sock *slacktest.Socket) func(id string) slacktest.Ack {
	return func(id string) slacktest.Ack {
		t.Helper()
		a, ok := sock.WaitAck(id, slackDeadline)
		if !ok {
			t.Fatalf("no ack for %s within 3 s", id)
		}
		return a
	}
}
