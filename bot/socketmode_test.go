package bot

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"

	"github.com/vrambot/vrambot/store"
)

// socketEnvelope is what Slack sends over the Socket Mode WebSocket.
type socketEnvelope struct {
	EnvelopeID string          `json:"envelope_id"`
	Type       string          `json:"type"`
	Payload    json.RawMessage `json:"payload"`
}

type socketAck struct {
	EnvelopeID string          `json:"envelope_id"`
	Payload    json.RawMessage `json:"payload"`
}

// TestSocketMode runs the bot against a fake apps.connections.open and
// WebSocket: every envelope is acked, a slash command is answered in its
// ack, an OOM event is answered in its thread, and an event slack-go itself
// cannot parse is still acked and served.
// fakeSocket serves the Socket Mode WebSocket on fs: it says hello, sends
// what arrives on send, and passes the client's acks to acks.
func fakeSocket(t *testing.T, fs *fakeSlack) (send chan<- socketEnvelope, acks <-chan socketAck) {
	ackc := make(chan socketAck, 16)
	sendc := make(chan socketEnvelope, 16)
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.ws = func(w http.ResponseWriter, r *http.Request) {
		up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }} // the client sends Origin: https://api.slack.com
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			t.Errorf("upgrade: %v", err)
			return
		}
		defer conn.Close()
		if err := conn.WriteJSON(map[string]any{"type": "hello", "num_connections": 1}); err != nil {
			return
		}
		go func() {
			for {
				var a socketAck
				if err := conn.ReadJSON(&a); err != nil {
					return
				}
				ackc <- a
			}
		}()
		for {
			select {
			case env := <-sendc:
				if err := conn.WriteJSON(env); err != nil {
					return
				}
			case <-r.Context().Done():
				return
			}
		}
	}
	return sendc, ackc
}

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

func socketOnly(c *Config, _ *Deps) { c.AppToken = "xapp-test"; c.SigningSecret = "" }

// TestSocketMode runs the bot against a fake apps.connections.open and
// WebSocket: every envelope is acked, a slash command is answered in its
// ack, an OOM event is answered in its thread, and an event slack-go itself
// cannot parse is still acked and served.
func TestSocketMode(t *testing.T) {
	fs := newFakeSlack(t)
	send, acks := fakeSocket(t, fs)
	ts := newTestServer(t, fs, nil, socketOnly)
	stop := runSocket(t, ts)

	waitAck := func(id string) socketAck {
		t.Helper()
		for {
			select {
			case a := <-acks:
				if a.EnvelopeID == id {
					return a
				}
			case <-time.After(slackDeadline):
				t.Fatalf("no ack for %s within 3 s", id)
			}
		}
	}

	// A slash command: the answer travels in the ack.
	cmd, _ := json.Marshal(map[string]any{"command": "/vram", "text": "7b lora a100", "user_id": "U1", "channel_id": "C1", "response_url": fs.srv.URL + "/response/sm"})
	send <- socketEnvelope{EnvelopeID: "env-cmd", Type: "slash_commands", Payload: cmd}
	a := waitAck("env-cmd")
	got := decodeResponse(t, a.Payload)
	if got.ResponseType != slack.ResponseTypeEphemeral || countButtons(got.Blocks, shareActionID) != 1 {
		t.Errorf("slash ack payload = %s", a.Payload)
	}

	// An OOM paste, delivered twice (Socket Mode retry): one reply.
	for _, id := range []string{"env-ev1", "env-ev1-retry"} {
		send <- socketEnvelope{EnvelopeID: id, Type: "events_api", Payload: eventBody("EvSock1", message(oomPaste))}
		waitAck(id)
	}
	// An event whose block slack-go's strict decoder rejects.
	odd := message(oomPaste, "ts", "1700000500.000100", "blocks", []any{map[string]any{"type": "section", "text": 42}})
	send <- socketEnvelope{EnvelopeID: "env-odd", Type: "events_api", Payload: eventBody("EvSock2", odd)}
	waitAck("env-odd")

	// A button press.
	press, _ := json.Marshal(map[string]any{"type": "block_actions", "user": map[string]any{"id": "U1"}, "channel": map[string]any{"id": "C1"},
		"response_url": fs.srv.URL + "/response/smshare", "actions": []map[string]any{{"action_id": shareActionID, "block_id": "b", "value": "7b"}}})
	send <- socketEnvelope{EnvelopeID: "env-btn", Type: "interactive", Payload: press}
	waitAck("env-btn")

	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && (len(fs.seen("chat.postMessage")) < 2 || len(fs.seen("response/smshare")) < 1) {
		time.Sleep(10 * time.Millisecond)
	}
	posts := fs.seen("chat.postMessage")
	if len(posts) != 2 {
		t.Fatalf("%d replies, want 2 (one per distinct event)", len(posts))
	}
	threads := posts[0].Form.Get("thread_ts") + " " + posts[1].Form.Get("thread_ts")
	if !strings.Contains(threads, "1700000100.000200") || !strings.Contains(threads, "1700000500.000100") {
		t.Errorf("threads %s", threads)
	}
	if n := len(fs.seen("response/smshare")); n != 1 {
		t.Errorf("share posts: %d", n)
	}
	if n := len(fs.seen("apps.connections.open")); n < 1 {
		t.Error("apps.connections.open not called")
	}

	stop()
	// HTTP request URLs are off without a signing secret.
	resp := ts.event(t, "EvHTTP", message(oomPaste))
	if readAll(t, resp); resp.StatusCode != http.StatusNotFound {
		t.Errorf("HTTP event in socket-only mode: %d", resp.StatusCode)
	}
}

// TestSocketModeStoreDown: an event that cannot be deduped is not acked, so
// Slack redelivers it, while commands are still answered.
func TestSocketModeStoreDown(t *testing.T) {
	fs := newFakeSlack(t)
	send, acks := fakeSocket(t, fs)
	ts := newTestServer(t, fs, failingStore{store.NewMemory()}, socketOnly)
	stop := runSocket(t, ts)
	defer stop()
	send <- socketEnvelope{EnvelopeID: "env-ev", Type: "events_api", Payload: eventBody("EvDown", message(oomPaste))}
	cmd, _ := json.Marshal(map[string]any{"command": "/vram", "text": "7b", "response_url": fs.srv.URL + "/response/x"})
	send <- socketEnvelope{EnvelopeID: "env-cmd", Type: "slash_commands", Payload: cmd}
	select {
	case a := <-acks:
		if a.EnvelopeID != "env-cmd" {
			t.Errorf("acked %s while the store is down", a.EnvelopeID)
		}
	case <-time.After(slackDeadline):
		t.Fatal("command not acked")
	}
	select {
	case a := <-acks:
		t.Errorf("unexpected ack %s", a.EnvelopeID)
	case <-time.After(200 * time.Millisecond):
	}
}
