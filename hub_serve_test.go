package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vrambot/vrambot/hub/hubtest"
	"github.com/vrambot/vrambot/internal/testutil"
)

// responseURLs is a fake Slack that keeps the bodies posted to response_url.
type responseURLs struct {
	mu     sync.Mutex
	bodies []string
}

func (s *responseURLs) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if strings.HasPrefix(r.URL.Path, "/response/") {
		s.mu.Lock()
		s.bodies = append(s.bodies, string(body))
		s.mu.Unlock()
		_, _ = io.WriteString(w, "ok")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"ok":true,"user_id":"UBOT","bot_id":"BBOT","team_id":"T1","channel":"C1","ts":"1700000000.000200"}`)
}

func (s *responseURLs) posted() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}

// TestServeSlashHubModel runs `vrambot serve` with HF_ENDPOINT at a fake
// Hub that is slower than the bot's inline budget: the slash command is
// acked within Slack's 3 s, the model is fetched after the ack under the
// work's context, and the answer replaces the ack through response_url.
// The same model asked again comes from the cache, inline.
func TestServeSlashHubModel(t *testing.T) {
	slack := &responseURLs{}
	fakeSlack := httptest.NewServer(slack)
	defer fakeSlack.Close()
	fake := newFakeHub(t)
	fake.SetDelay(2500 * time.Millisecond) // past the 2 s inline budget
	const secret = "test-signing-secret"
	addr := freeAddr(t)
	envVars := map[string]string{
		"SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": secret, "VRAMBOT_ADDR": addr,
		"VRAMBOT_SLACK_API_URL": fakeSlack.URL + "/api/", "HF_ENDPOINT": fake.URL, "HF_TOKEN": hubtest.Token,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var stderr bytes.Buffer
	go func() {
		done <- run(ctx, []string{"serve"}, strings.NewReader(""), io.Discard, &stderr, func(k string) (string, bool) { v, ok := envVars[k]; return v, ok })
	}()
	base := "http://" + addr
	testutil.Eventually(t, 10*time.Second, "serve comes up", func() bool {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})

	slash := func(responsePath string) (string, time.Duration) {
		form := url.Values{"command": {"/vram"}, "text": {hubOnlyRepo + " lora 4090"}, "user_id": {"U1"}, "channel_id": {"C1"},
			"team_id": {"T1"}, "response_url": {fakeSlack.URL + responsePath}, "trigger_id": {"1.2.3"}}
		start := time.Now()
		resp, err := http.DefaultClient.Do(signedRequest(t, base+"/slack/commands", secret, "application/x-www-form-urlencoded", []byte(form.Encode())))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("slash: HTTP %d: %s", resp.StatusCode, body)
		}
		return string(body), time.Since(start)
	}

	ack, took := slash("/response/first")
	if took > 3*time.Second || !strings.Contains(ack, "Working on it") {
		t.Fatalf("ack after %s: %.300s", took, ack)
	}
	testutil.Eventually(t, 15*time.Second, "the answer reaches response_url", func() bool { return len(slack.posted()) > 0 })
	answer := slack.posted()[0]
	for _, want := range []string{hubOnlyRepo + " · LoRA", `"replace_original":true`, "looked up on the Hub"} {
		if !strings.Contains(answer, want) {
			t.Errorf("deferred answer lacks %q: %.600s", want, answer)
		}
	}

	before := len(fake.Requests())
	inline, took := slash("/response/second")
	if took > 2*time.Second || !strings.Contains(inline, hubOnlyRepo) {
		t.Errorf("cached model: answered after %s: %.300s", took, inline)
	}
	if n := len(fake.Requests()) - before; n != 0 {
		t.Errorf("%d Hub requests for a cached model", n)
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("serve exited %d: %s", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop")
	}
	if strings.Contains(stderr.String(), hubtest.Token) || strings.Contains(stderr.String(), "xoxb-test") {
		t.Error("a secret reached the log")
	}
}
