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
	"strings"
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

// MessageAction is the interactivity form for a message shortcut run on
// message in channel (https://api.slack.com/reference/interaction-payloads/shortcuts#message_actions).
func MessageAction(user, channel, callbackID, actionTS, responseURL string, message map[string]any) url.Values {
	payload, _ := json.Marshal(map[string]any{
		"type": "message_action", "callback_id": callbackID, "trigger_id": actionTS + ".738474920.8088930838d88f008e0",
		"action_ts": actionTS, "message_ts": message["ts"], "response_url": responseURL,
		"team": map[string]any{"id": TeamID}, "user": map[string]any{"id": user, "username": "ada", "team_id": TeamID},
		"channel": map[string]any{"id": channel, "name": "ml"}, "message": message,
	})
	return url.Values{"payload": {string(payload)}}
}

// ViewSubmission is the interactivity form for submitting view (as opened
// with views.open: its JSON, with callback_id, private_metadata and
// blocks) with the given values: for each input block's block_id, the
// element's value (a select gets it as its selected option). View id and
// hash are id (https://api.slack.com/reference/interaction-payloads/views#view_submission).
func ViewSubmission(user, id string, view []byte, values map[string]string) url.Values {
	var v struct {
		CallbackID      string `json:"callback_id"`
		PrivateMetadata string `json:"private_metadata"`
		Blocks          []struct {
			Type    string `json:"type"`
			BlockID string `json:"block_id"`
			Element struct {
				Type     string `json:"type"`
				ActionID string `json:"action_id"`
			} `json:"element"`
		} `json:"blocks"`
	}
	_ = json.Unmarshal(view, &v)
	state := map[string]any{}
	for _, b := range v.Blocks {
		if b.Type != "input" {
			continue
		}
		val, ok := values[b.BlockID]
		if !ok {
			continue
		}
		el := map[string]any{"type": b.Element.Type}
		if strings.HasSuffix(b.Element.Type, "_select") {
			el["selected_option"] = map[string]any{"value": val, "text": map[string]any{"type": "plain_text", "text": val}}
		} else {
			el["value"] = val
		}
		state[b.BlockID] = map[string]any{b.Element.ActionID: el}
	}
	payload, _ := json.Marshal(map[string]any{
		"type": "view_submission", "team": map[string]any{"id": TeamID},
		"user": map[string]any{"id": user, "username": "ada", "team_id": TeamID},
		"view": map[string]any{"id": id, "hash": id + ".hash", "type": "modal", "callback_id": v.CallbackID,
			"private_metadata": v.PrivateMetadata, "state": map[string]any{"values": state}},
	})
	return url.Values{"payload": {string(payload)}}
}

// BlockSuggestion is the form Slack posts to the options load URL when a
// user types typed into an external select (https://api.slack.com/reference/block-kit/block-elements#external_select).
func BlockSuggestion(user, actionID, typed string) url.Values {
	payload, _ := json.Marshal(map[string]any{
		"type": "block_suggestion", "action_id": actionID, "block_id": actionID, "value": typed,
		"team": map[string]any{"id": TeamID}, "user": map[string]any{"id": user, "team_id": TeamID},
		"view": map[string]any{"id": "V1", "type": "modal"},
	})
	return url.Values{"payload": {string(payload)}}
}

// AppHomeOpened is an app_home_opened event of user opening tab ("home" or "messages").
func AppHomeOpened(user, tab string) map[string]any {
	return map[string]any{"type": "app_home_opened", "user": user, "channel": "D" + user, "tab": tab,
		"event_ts": strconv.FormatInt(time.Now().Unix(), 10) + ".000100"}
}

// DirectMessage is a message event from user U1 to the bot in their DM.
func DirectMessage(ts, text string) map[string]any {
	return map[string]any{"type": "message", "channel": "DU1", "channel_type": "im", "user": "U1",
		"text": text, "ts": ts, "event_ts": ts}
}
