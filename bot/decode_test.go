package bot

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/internal/slacktest"
)

func TestDecodeEvent(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantErr bool
		check   func(t *testing.T, e eventEnvelope)
	}{
		{"challenge", `{"type":"url_verification","challenge":"abc"}`, false, func(t *testing.T, e eventEnvelope) {
			if e.Challenge != "abc" {
				t.Errorf("challenge %q", e.Challenge)
			}
		}},
		{"message with file", `{"type":"event_callback","event_id":"Ev1","authorizations":[{"user_id":"UB","is_bot":true}],
			"event":{"type":"message","subtype":"file_share","channel":"C1","user":"U1","text":"t","ts":"1.2",
			"files":[{"id":"F1","mimetype":"text/plain","size":12,"url_private_download":"https://files.slack.com/x"}],
			"blocks":[{"type":"rich_text","elements":[{"type":"future_thing"}]}]}}`, false, func(t *testing.T, e eventEnvelope) {
			if e.EventID != "Ev1" || e.Event.Subtype != "file_share" || len(e.Event.Files) != 1 || e.Event.Files[0].Size != 12 || e.botUser() != "UB" {
				t.Errorf("decoded %+v", e)
			}
		}},
		{"rate limited", `{"type":"app_rate_limited","minute_rate_limited":1518467820}`, false, nil},
		{"unknown type", `{"type":"something"}`, true, nil},
		{"not json", `type=event`, true, nil},
		{"empty", ``, true, nil},
		{"wrong field type", `{"type":"event_callback","event":{"files":[{"size":"big"}]}}`, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := decodeEvent([]byte(tt.body))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.check != nil {
				tt.check(t, e)
			}
		})
	}
}

func TestDecodeSlashCommand(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		want    slashCommand
		wantErr bool
	}{
		{"full", url.Values{"command": {"/vram"}, "text": {"7b lora a100"}, "user_id": {"U1"}, "channel_id": {"C1"}, "response_url": {"https://hooks.slack.com/commands/1/2/3"}}.Encode(),
			slashCommand{Command: "/vram", Text: "7b lora a100", UserID: "U1", ChannelID: "C1", ResponseURL: "https://hooks.slack.com/commands/1/2/3"}, false},
		{"plus and percent", "command=%2Fvram&text=llama-3-8b+qlora+bs%3D4", slashCommand{Command: "/vram", Text: "llama-3-8b qlora bs=4"}, false},
		{"no command", "text=7b", slashCommand{}, true},
		{"bad escape", "command=%2Fvram&text=%zz", slashCommand{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeSlashCommand([]byte(tt.body))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeInteraction(t *testing.T) {
	payload := `{"type":"block_actions","user":{"id":"U1"},"channel":{"id":"C1"},"response_url":"https://hooks.slack.com/actions/1",
		"actions":[{"action_id":"share","block_id":"b","value":"7b"}],"message":{"blocks":[{"type":"mystery"}]}}`
	in, err := decodeInteraction([]byte(url.Values{"payload": {payload}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	if in.Type != "block_actions" || in.User.ID != "U1" || len(in.Actions) != 1 || in.Actions[0].Value != "7b" {
		t.Errorf("decoded %+v", in)
	}
	for _, bad := range []string{"", "payload=", "payload=%7B%7D", "payload=nope"} {
		if _, err := decodeInteraction([]byte(bad)); err == nil {
			t.Errorf("decodeInteraction(%q) accepted", bad)
		}
	}
}

func TestWanted(t *testing.T) {
	base := innerEvent{Type: "message", Channel: "C1", User: "U1", TS: "1.1", Text: "x"}
	with := func(f func(*innerEvent)) innerEvent { e := base; f(&e); return e }
	tests := []struct {
		name string
		ev   innerEvent
		want bool
	}{
		{"plain", base, true},
		{"file share", with(func(e *innerEvent) { e.Subtype = "file_share" }), true},
		{"mention", with(func(e *innerEvent) { e.Type = "app_mention" }), true},
		{"bot", with(func(e *innerEvent) { e.BotID = "B1" }), false},
		{"mention by bot", with(func(e *innerEvent) { e.Type = "app_mention"; e.BotID = "B1" }), false},
		{"edit", with(func(e *innerEvent) { e.Subtype = "message_changed" }), false},
		{"no user", with(func(e *innerEvent) { e.User = "" }), false},
		{"other type", with(func(e *innerEvent) { e.Type = "reaction_added" }), false},
		{"direct message", with(func(e *innerEvent) { e.Channel, e.ChannelType = "D1", "im" }), true},
		{"bot's own direct message", with(func(e *innerEvent) { e.Channel, e.ChannelType, e.BotID = "D1", "im", "B1" }), false},
		{"home tab opened", innerEvent{Type: "app_home_opened", User: "U1", Tab: "home"}, true},
		{"home tab opened, no tab named", innerEvent{Type: "app_home_opened", User: "U1"}, true},
		{"messages tab opened", innerEvent{Type: "app_home_opened", User: "U1", Tab: "messages"}, false},
		{"home opened by nobody", innerEvent{Type: "app_home_opened", Tab: "home"}, false},
	}
	for _, tt := range tests {
		if got := wanted(tt.ev); got != tt.want {
			t.Errorf("%s: wanted = %v", tt.name, got)
		}
	}
}

func FuzzDecodeEvent(f *testing.F) {
	f.Add([]byte(`{"type":"url_verification","challenge":"abc"}`))
	f.Add(slacktest.EventBody("Ev1", message(oomPaste)))
	f.Add(slacktest.EventBody("Ev2", message("x", "subtype", "file_share", "files", []any{map[string]any{"id": "F", "size": 3}})))
	f.Add([]byte(`{"type":"event_callback","event":{"type":"app_mention","text":"<@U1> vram 7b"}}`))
	f.Add([]byte(`{"type":"event_callback","event":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		e, err := decodeEvent(body)
		if err != nil {
			return
		}
		// Whatever decodes must be safe to filter and route.
		_ = wanted(e.Event)
		_ = e.botUser()
		_ = mentionRE.ReplaceAllString(slackUnescape(e.Event.Text), " ")
		_ = threadOf(e.Event)
	})
}

func FuzzDecodeSlashCommand(f *testing.F) {
	f.Add([]byte("command=%2Fvram&text=7b+lora+a100&response_url=https%3A%2F%2Fhooks.slack.com%2Fx"))
	f.Add([]byte("command=/vram&text=" + strings.Repeat("%F0%9F%98%80", 50)))
	f.Add([]byte("text=&&&=="))
	f.Fuzz(func(t *testing.T, body []byte) {
		cmd, err := decodeSlashCommand(body)
		if err != nil {
			return
		}
		if !strings.HasPrefix(cmd.Command, "/") {
			t.Fatalf("accepted command %q", cmd.Command)
		}
	})
}

func FuzzDecodeInteraction(f *testing.F) {
	f.Add([]byte(url.Values{"payload": {`{"type":"block_actions","actions":[{"action_id":"share","value":"7b"}]}`}}.Encode()))
	f.Add([]byte("payload=%7B%22type%22%3A1%7D"))
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := decodeInteraction(body)
		if err != nil {
			return
		}
		if in.Type == "" {
			t.Fatal("accepted an interaction without a type")
		}
	})
}

// FuzzFormSubmission reads any submitted form: the query built from it is
// bounded and not empty, or its errors name fields of the form.
func FuzzFormSubmission(f *testing.F) {
	f.Add(`{"type":"view_submission","view":{"callback_id":"vram_form","state":{"values":{"model":{"model":{"type":"external_select","selected_option":{"value":"llama-3.1-8b"}}},"batch":{"batch":{"value":"4"}}}}}}`)
	f.Add(`{"type":"view_submission","view":{"state":{"values":{"x":{"model":{"value":"a b"}},"seq":{"seq":{"value":"8k"}}}}}}`)
	f.Fuzz(func(t *testing.T, payload string) {
		in, err := decodeInteractionJSON([]byte(payload))
		if err != nil {
			return
		}
		query, errs := vramFormQuery(in)
		if len(errs) > 0 {
			for field := range errs {
				if !slices.Contains(vramFormFields, field) {
					t.Fatalf("error under %q, no field of the form", field)
				}
			}
			return
		}
		if runeLen(query) > maxQueryRunes || strings.TrimSpace(query) == "" {
			t.Fatalf("query %q", query)
		}
	})
}
