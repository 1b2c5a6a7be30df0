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

// TestServeReadsJobs: `vrambot serve` reads jobs in Slack (issue 24): a
// mention with a code block and the words beside it, a direct message with
// an attached DeepSpeed JSON, and "Size this job" on someone's message are
// answered with the job's estimate; a config.json is still a config.
func TestServeReadsJobs(t *testing.T) {
	s := startServe(t, map[string]string{"HF_HUB_OFFLINE": "1"})
	const axolotl = "base_model: meta-llama/Llama-3.1-8B\nadapter: qlora\nload_in_4bit: true\nsequence_len: 2048\nmicro_batch_size: 2\n"
	const deepspeed = `{"zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}}, "bf16": {"enabled": true}}`
	const config = `{"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 1024, "intermediate_size": 3072, "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936, "torch_dtype": "bfloat16"}`
	file := func(id, name, content string) []map[string]any {
		link := s.slack.AddFile("/files/T1-"+id+"/"+name, content)
		return []map[string]any{{"id": id, "name": name, "filetype": "json", "size": len(content), "url_private_download": link}}
	}
	s.event(t, "EvJobMention", map[string]any{"type": "app_mention", "user": "U1", "channel": "C1", "ts": "1700001000.000100",
		"text": "<@" + slacktest.BotUserID + "> will this fit on a 4090? ```" + axolotl + "```"})
	s.event(t, "EvJobDM", map[string]any{"type": "message", "subtype": "file_share", "channel": "DU1", "channel_type": "im", "user": "U1",
		"ts": "1700001100.000100", "text": "llama-3.1-8b a100", "files": file("FDS", "ds_config.json", deepspeed)})
	s.event(t, "EvJobConfig", map[string]any{"type": "app_mention", "user": "U1", "channel": "C1", "ts": "1700001200.000100",
		"text": "<@" + slacktest.BotUserID + "> vram lora 4090", "files": file("FCFG", "config.json", config)})
	msg := map[string]any{"type": "message", "user": "U9", "ts": "1700001300.000100", "text": "vllm serve Qwen/Qwen3-8B --max-model-len 8192"}
	s.interact(t, slacktest.MessageAction("U1", "C1", "size_job", "1700001301.1", s.slack.ResponseURL("sj"), msg))

	want := map[string]string{ // thread or channel → in the answer
		"1700001000.000100": "meta-llama/Llama-3.1-8B · QLoRA · GeForce RTX 4090",
		"DU1":               "llama-3.1-8b · full fine-tuning · A100",
		"1700001200.000100": "config.json · LoRA · GeForce RTX 4090",
		"1700001300.000100": "Qwen/Qwen3-8B · inference",
	}
	got := map[string]string{}
	testutil.Eventually(t, 20*time.Second, "every job answered", func() bool {
		for _, c := range s.slack.Answered("chat.postMessage") {
			where := c.Args.Get("thread_ts")
			if c.Args.Get("channel") == "DU1" {
				where = "DU1"
			}
			if _, ok := want[where]; ok && !strings.HasPrefix(c.Args.Get("text"), "Details") {
				got[where] = c.Args.Get("text") + c.Args.Get("blocks")
			}
		}
		return len(got) == len(want)
	})
	for where, w := range want {
		if !strings.Contains(got[where], w) {
			t.Errorf("%s: answer %.400s, want %q", where, got[where], w)
		}
	}
	if !strings.Contains(got["1700001000.000100"], "From your axolotl config") || !strings.Contains(got["DU1"], "From your deepspeed config") {
		t.Errorf("the job answers do not say what was read: %v", got)
	}
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
// Diagnose OOM and Size this job shortcuts, both App Home tabs, /oom and the typeahead's URL.
func TestManifestDeclaresTheSlackFeatures(t *testing.T) {
	code, stdout, stderr := runCLI(t, map[string]string{"SLACK_BOT_TOKEN": "xoxb-x", "SLACK_SIGNING_SECRET": "s"}, "", "manifest", "--url", "https://vrambot.example.com")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{`"callback_id": "diagnose_oom"`, `"callback_id": "size_job"`, `"home_tab_enabled": true`, `"messages_tab_enabled": true`,
		`"command": "/oom"`, `"app_home_opened"`, `"message_menu_options_url": "https://vrambot.example.com/slack/interactivity"`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("manifest lacks %s", want)
		}
	}
}
