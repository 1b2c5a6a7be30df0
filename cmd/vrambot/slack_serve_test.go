package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/vrambot/vrambot/hub/hubtest"
	"github.com/vrambot/vrambot/internal/slacktest"
	"github.com/vrambot/vrambot/internal/testutil"
	"github.com/vrambot/vrambot/reply"
)

// Issue 12's acceptance against `vrambot serve` (environment variables
// only, signed requests, the stand-in Slack): the form and its answer, the
// Diagnose OOM shortcut, the App Home, a fix applied in place, a direct
// message, the typeahead, feedback in /metrics, and a Hub lookup acked at
// once.

func (s *served) interact(t *testing.T, form url.Values) (int, string) {
	t.Helper()
	return s.do(t, "/slack/interactivity", slacktest.FormContent, []byte(form.Encode()))
}

func (s *served) responses(name string) []slacktest.Call {
	var out []slacktest.Call
	for _, c := range s.slack.Answered(slacktest.MethodResponseURL) {
		if c.Path == "/response/"+name {
			out = append(out, c)
		}
	}
	return out
}

// buttonValue finds the value of the button actionID in a message's
// blocks (JSON), accessories included.
func buttonValue(t *testing.T, blocks []byte, actionID string) string {
	t.Helper()
	var bs []map[string]any
	if err := json.Unmarshal(blocks, &bs); err != nil {
		t.Fatalf("blocks: %v", err)
	}
	var find func(v any) string
	find = func(v any) string {
		switch v := v.(type) {
		case map[string]any:
			if v["type"] == "button" && v["action_id"] == actionID {
				s, _ := v["value"].(string)
				return s
			}
			for _, x := range v {
				if s := find(x); s != "" {
					return s
				}
			}
		case []any:
			for _, x := range v {
				if s := find(x); s != "" {
					return s
				}
			}
		}
		return ""
	}
	for _, b := range bs {
		if s := find(b); s != "" {
			return s
		}
	}
	return ""
}

func TestServeSlackFeatures(t *testing.T) {
	s := startServe(t, map[string]string{"HF_HUB_OFFLINE": "1"})

	// /vram alone opens the form with the command's trigger id.
	form := slacktest.SlashCommand("/vram", "", s.slack.ResponseURL("form"))
	if code, body := s.do(t, "/slack/commands", slacktest.FormContent, []byte(form.Encode())); code != http.StatusOK || strings.TrimSpace(body) != "" {
		t.Fatalf("/vram: HTTP %d %q", code, body)
	}
	opened := s.slack.Answered("views.open")
	if len(opened) != 1 || opened[0].Args.Get("trigger_id") != form.Get("trigger_id") {
		t.Fatalf("%d views.open", len(opened))
	}
	// Submitting it posts the answer where /vram was typed.
	sub := slacktest.ViewSubmission("U1", "V1", []byte(opened[0].Args.Get("view")), map[string]string{"model": "llama-3.1-8b", "method": "lora", "gpu": "4090"})
	if code, body := s.interact(t, sub); code != http.StatusOK || strings.Contains(body, "errors") {
		t.Fatalf("submission: HTTP %d %s", code, body)
	}
	testutil.Eventually(t, 10*time.Second, "the form's answer", func() bool { return len(s.responses("form")) == 1 })
	answer := s.responses("form")[0]
	if !strings.Contains(string(answer.Body), "llama-3.1-8b · LoRA · GeForce RTX 4090") {
		t.Errorf("answer %.300s", answer.Body)
	}

	// A fix's button replaces that answer in place.
	var msg struct {
		Blocks json.RawMessage `json:"blocks"`
	}
	if err := json.Unmarshal(answer.Body, &msg); err != nil {
		t.Fatal(err)
	}
	apply := buttonValue(t, msg.Blocks, reply.ActionApplyPrefix+"1")
	if !strings.Contains(apply, "gc=on") {
		t.Fatalf("apply button %q", apply)
	}
	s.interact(t, slacktest.BlockAction("U1", "C1", reply.ActionApplyPrefix+"1", apply, "1700000001.1", s.slack.ResponseURL("apply")))
	testutil.Eventually(t, 10*time.Second, "the fix applied", func() bool { return len(s.responses("apply")) == 1 })
	if body := string(s.responses("apply")[0].Body); !strings.Contains(body, `"replace_original":true`) || !strings.Contains(body, reply.BandFits.Mark()) {
		t.Errorf("applied: %.300s", body)
	}

	// Diagnose OOM on someone's message answers once in its thread.
	paste := map[string]any{"type": "message", "user": "U9", "ts": "1700000500.000100", "text": oomPaste}
	sc := slacktest.MessageAction("U1", "C1", "diagnose_oom", "1700000600.1", s.slack.ResponseURL("sc"), paste)
	for range 2 {
		s.interact(t, sc)
	}
	testutil.Eventually(t, 10*time.Second, "the diagnosis", func() bool { return len(s.threads()) >= 1 })
	time.Sleep(200 * time.Millisecond)
	if got := s.threads(); len(got) != 1 || got[0] != "1700000500.000100" {
		t.Errorf("diagnoses in threads %v", got)
	}

	// Opening the App Home publishes its Home tab.
	s.event(t, "EvHome", slacktest.AppHomeOpened("U1", "home"))
	testutil.Eventually(t, 10*time.Second, "views.publish", func() bool { return len(s.slack.Answered("views.publish")) == 1 })
	if view := s.slack.Answered("views.publish")[0].Args.Get("view"); !strings.Contains(view, "How to ask") || !strings.Contains(view, "1 in all") {
		t.Errorf("home tab %.500s", view)
	}

	// A direct message with a question is answered there.
	s.event(t, "EvDM", slacktest.DirectMessage("1700000700.000100", "how much vram for llama 3 70b inference?"))
	testutil.Eventually(t, 10*time.Second, "the DM answer", func() bool {
		for _, c := range s.slack.Answered("chat.postMessage") {
			if c.Args.Get("channel") == "DU1" && strings.Contains(c.Args.Get("text"), "llama-3-70b") {
				return true
			}
		}
		return false
	})

	// The form's model typeahead answers from the catalog.
	code, body := s.interact(t, slacktest.BlockSuggestion("U1", "model", "qwen3 8"))
	if code != http.StatusOK || !strings.Contains(body, `"value":"qwen3-8b"`) {
		t.Errorf("typeahead: HTTP %d %.300s", code, body)
	}

	// 👍 is counted in /metrics.
	vote := slacktest.BlockAction("U1", "C1", reply.ActionFeedbackUp, "vram", "1700000800.1", s.slack.ResponseURL("vote"))
	s.interact(t, vote)
	testutil.Eventually(t, 10*time.Second, "the vote is counted", func() bool {
		resp, err := http.Get(s.base + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(b), `vrambot_feedback_total{kind="vram",vote="up"} 1`)
	})

	if code := s.stop(); code != 0 {
		t.Errorf("serve exited %d: %s", code, s.stderr.String())
	}
	s.checkNoSecrets(t)
}

// TestServeHubLookupAckedAtOnce: a /vram query whose model must come from
// the Hub is acked at once and answered through response_url, even when
// the Hub answers instantly.
func TestServeHubLookupAckedAtOnce(t *testing.T) {
	fake := newFakeHub(t) // no delay
	s := startServe(t, map[string]string{"HF_ENDPOINT": fake.URL, "HF_TOKEN": hubtest.Token})
	form := slacktest.SlashCommand("/vram", hubOnlyRepo+" lora 4090", s.slack.ResponseURL("hub"))
	code, body := s.do(t, "/slack/commands", slacktest.FormContent, []byte(form.Encode()))
	if code != http.StatusOK || !strings.Contains(body, "Looking up "+hubOnlyRepo+" on the Hugging Face Hub") || !strings.Contains(body, `"ephemeral"`) {
		t.Fatalf("ack: HTTP %d %.300s", code, body)
	}
	testutil.Eventually(t, 10*time.Second, "the answer reaches response_url", func() bool { return len(s.responses("hub")) == 1 })
	answer := string(s.responses("hub")[0].Body)
	for _, want := range []string{hubOnlyRepo + " · LoRA", `"replace_original":true`, "looked up on the Hub"} {
		if !strings.Contains(answer, want) {
			t.Errorf("answer lacks %q: %.500s", want, answer)
		}
	}
	if code := s.stop(); code != 0 {
		t.Errorf("serve exited %d: %s", code, s.stderr.String())
	}
	s.checkNoSecrets(t, hubtest.Token)
}

// TestManifestDeclaresTheSlackFeatures: `vrambot manifest` declares the
// Diagnose OOM shortcut, both App Home tabs, /oom and the typeahead's URL.
func TestManifestDeclaresTheSlackFeatures(t *testing.T) {
	code, stdout, stderr := runCLI(t, map[string]string{"SLACK_BOT_TOKEN": "xoxb-x", "SLACK_SIGNING_SECRET": "s"}, "", "manifest", "--url", "https://vrambot.example.com")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{`"callback_id": "diagnose_oom"`, `"home_tab_enabled": true`, `"messages_tab_enabled": true`,
		`"command": "/oom"`, `"app_home_opened"`, `"message_menu_options_url": "https://vrambot.example.com/slack/interactivity"`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("manifest lacks %s", want)
		}
	}
}
