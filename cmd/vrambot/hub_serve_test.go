package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vrambot/vrambot/hub/hubtest"
	"github.com/vrambot/vrambot/internal/slacktest"
	"github.com/vrambot/vrambot/internal/testutil"
)

// TestServeSlashHubModel runs `vrambot serve` with HF_ENDPOINT at a fake
// Hub that is slower than the bot's inline budget: the slash command is
// acked within Slack's 3 s, the model is fetched after the ack under the
// work's context, and the answer replaces the ack through response_url.
// The same model asked again comes from the cache, inline.
func TestServeSlashHubModel(t *testing.T) {
	fake := newFakeHub(t)
	fake.SetDelay(2500 * time.Millisecond) // past the 2 s inline budget
	s := startServe(t, map[string]string{"HF_ENDPOINT": fake.URL, "HF_TOKEN": hubtest.Token})
	responses := func() []string {
		var out []string
		for _, c := range s.slack.Answered(slacktest.MethodResponseURL) {
			out = append(out, string(c.Body))
		}
		return out
	}

	slash := func(name string) (string, time.Duration) {
		form := slacktest.SlashCommand("/vram", hubOnlyRepo+" lora 4090", s.slack.ResponseURL(name))
		start := time.Now()
		code, body := s.do(t, "/slack/commands", slacktest.FormContent, []byte(form.Encode()))
		if code != http.StatusOK {
			t.Fatalf("slash: HTTP %d: %s", code, body)
		}
		return body, time.Since(start)
	}

	ack, took := slash("first")
	if took > 3*time.Second || !strings.Contains(ack, "Looking up "+hubOnlyRepo+" on the Hugging Face Hub") {
		t.Fatalf("ack after %s: %.300s", took, ack)
	}
	testutil.Eventually(t, 15*time.Second, "the answer reaches response_url", func() bool { return len(responses()) > 0 })
	answer := responses()[0]
	for _, want := range []string{hubOnlyRepo + " · LoRA", `"replace_original":true`, "looked up on the Hub"} {
		if !strings.Contains(answer, want) {
			t.Errorf("deferred answer lacks %q: %.600s", want, answer)
		}
	}

	before := len(fake.Requests())
	inline, took := slash("second")
	if took > 2*time.Second || !strings.Contains(inline, hubOnlyRepo) {
		t.Errorf("cached model: answered after %s: %.300s", took, inline)
	}
	if n := len(fake.Requests()) - before; n != 0 {
		t.Errorf("%d Hub requests for a cached model", n)
	}

	if code := s.stop(); code != 0 {
		t.Errorf("serve exited %d: %s", code, s.stderr.String())
	}
	s.checkNoSecrets(t, hubtest.Token)
}
