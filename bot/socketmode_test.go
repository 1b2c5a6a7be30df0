package bot

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/vrambot/vrambot/internal/slacktest"
	"github.com/vrambot/vrambot/internal/testutil"
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

	waitAck := func(id string) slacktest.Ack {
		t.Helper()
		a, ok := sock.WaitAck(id, slackDeadline)
		if !ok {
			t.Fatalf("no ack for %s within 3 s", id)
		}
		return a
	}

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
