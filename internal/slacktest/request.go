package slacktest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// Sign sets Slack's v0 request signature on h for body sent at time at:
// X-Slack-Request-Timestamp and X-Slack-Signature = "v0=" +
// hex(HMAC-SHA256(secret, "v0:" + timestamp + ":" + body)).
func Sign(h http.Header, secret string, at time.Time, body []byte) {
	stamp := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%s:%s", stamp, body)
	h.Set("X-Slack-Request-Timestamp", stamp)
	h.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
}

// SignedRequest is a POST of body to target, signed with SigningSecret now,
// as Slack sends it to an app's request URL.
func SignedRequest(tb testing.TB, target, contentType string, body []byte) *http.Request {
	tb.Helper()
	req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	Sign(req.Header, SigningSecret, time.Now(), body)
	return req
}

// Content types of Slack's requests.
const (
	FormContent = "application/x-www-form-urlencoded"
	JSONContent = "application/json"
)

// EventBody is an Events API event_callback envelope around inner
// (https://api.slack.com/apis/events-api#callback-field), authorised for
// the bot user.
func EventBody(eventID string, inner map[string]any) []byte {
	body, _ := json.Marshal(map[string]any{
		"token": "deprecated", "team_id": TeamID, "api_app_id": "A1", "type": "event_callback",
		"event_id": eventID, "event_time": time.Now().Unix(), "event": inner,
		"authorizations": []map[string]any{{"team_id": TeamID, "user_id": BotUserID, "is_bot": true}},
	})
	return body
}

// Message is a message event from user U1 in channel at ts.
func Message(channel, ts, text string) map[string]any {
	return map[string]any{"type": "message", "channel": channel, "channel_type": "channel", "user": "U1",
		"text": text, "ts": ts, "event_ts": ts}
}

// SlashCommand is the form Slack posts for a slash command
// (https://api.slack.com/interactivity/slash-commands#app_command_handling).
func SlashCommand(command, text, responseURL string) url.Values {
	return url.Values{
		"token": {"deprecated"}, "team_id": {TeamID}, "team_domain": {"acme"},
		"channel_id": {"C1"}, "channel_name": {"ml"}, "user_id": {"U1"}, "user_name": {"ada"},
		"command": {command}, "text": {text}, "api_app_id": {"A1"},
		"trigger_id":   {strconv.FormatInt(time.Now().UnixNano(), 10) + ".738474920.8088930838d88f008e0"},
		"response_url": {responseURL},
	}
}

// BlockAction is the interactivity form for a click on a button
// (https://api.slack.com/reference/interaction-payloads/block-actions).
func BlockAction(user, channel, actionID, value, actionTS, responseURL string) url.Values {
	payload, _ := json.Marshal(map[string]any{
		"type":         "block_actions",
		"user":         map[string]any{"id": user, "username": "ada", "team_id": TeamID},
		"team":         map[string]any{"id": TeamID},
		"channel":      map[string]any{"id": channel, "name": "ml"},
		"container":    map[string]any{"type": "message", "message_ts": "1700000000.000100", "is_ephemeral": true},
		"trigger_id":   "13345224609.738474920.8088930838d88f008e0",
		"response_url": responseURL,
		"actions":      []map[string]any{{"action_id": actionID, "block_id": "b1", "type": "button", "value": value, "action_ts": actionTS}},
	})
	return url.Values{"payload": {string(payload)}}
}

// PartialRequest is the raw HTTP/1.1 text of a signed POST of body to path
// that stops after sent bytes of the body: a client that never finishes.
func PartialRequest(path string, body []byte, sent int) string {
	h := http.Header{}
	Sign(h, SigningSecret, time.Now(), body)
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: slack\r\nContent-Type: %s\r\nContent-Length: %d\r\nX-Slack-Signature: %s\r\nX-Slack-Request-Timestamp: %s\r\n\r\n%s",
		path, JSONContent, len(body), h.Get("X-Slack-Signature"), h.Get("X-Slack-Request-Timestamp"), body[:min(sent, len(body))])
}

// Trap is a server that is not Slack: it answers every request with its
// body and counts those that carried an Authorization header, so a test
// can show a token never went there.
type Trap struct {
	URL   string
	leaks atomic.Int32
}

// NewTrap starts a Trap, closed when the test ends.
func NewTrap(tb testing.TB, body string) *Trap {
	tb.Helper()
	t := &Trap{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.leaks.Add(1)
		}
		_, _ = io.WriteString(w, body)
	}))
	tb.Cleanup(srv.Close)
	t.URL = srv.URL
	return t
}

// Leaks is how many requests reached the trap with a token.
func (t *Trap) Leaks() int { return int(t.leaks.Load()) }
