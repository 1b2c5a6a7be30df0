package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// slackAPI is a minimal fake Slack Web API: it answers the methods serve
// uses and records which were called with which form values.
type slackAPI struct {
	mu    sync.Mutex
	calls []url.Values
	names []string
}

func (s *slackAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	s.mu.Lock()
	s.names = append(s.names, method)
	s.calls = append(s.calls, r.Form)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch method {
	case "auth.test":
		io.WriteString(w, `{"ok":true,"user_id":"UBOT","bot_id":"BBOT","team_id":"T1"}`)
	case "chat.postMessage":
		io.WriteString(w, `{"ok":true,"channel":"C1","ts":"1700000000.000200"}`)
	case "chat.getPermalink":
		io.WriteString(w, `{"ok":true,"permalink":"https://example.slack.com/archives/C1/p1700000000000100"}`)
	default:
		io.WriteString(w, `{"ok":true}`)
	}
}

func (s *slackAPI) posted(method string) []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []url.Values
	for i, n := range s.names {
		if n == method {
			out = append(out, s.calls[i])
		}
	}
	return out
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func signedRequest(t *testing.T, target, secret, contentType string, body []byte) *http.Request {
	t.Helper()
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%s:%s", ts, body)
	req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("X-Slack-Request-Timestamp", ts)
	req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	return req
}

// TestServeEndToEnd runs `vrambot serve` as the harness would: environment
// variables only, a fake Slack Web API, signed requests to the real routes.
func TestServeEndToEnd(t *testing.T) {
	api := &slackAPI{}
	fake := httptest.NewServer(api)
	defer fake.Close()
	const secret = "test-signing-secret"
	addr := freeAddr(t)
	envVars := map[string]string{
		"SLACK_BOT_TOKEN":       "xoxb-test",
		"SLACK_SIGNING_SECRET":  secret,
		"VRAMBOT_ADDR":          addr,
		"VRAMBOT_SLACK_API_URL": fake.URL + "/api/",
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var stderr bytes.Buffer
	go func() {
		done <- run(ctx, []string{"serve"}, strings.NewReader(""), io.Discard, &stderr, func(k string) (string, bool) { v, ok := envVars[k]; return v, ok })
	}()
	base := "http://" + addr
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not come up: %v; stderr: %s", err, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, path := range []string{"/readyz", "/metrics"} {
		resp, err := http.Get(base + path)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %v %v", path, err, resp)
		}
		resp.Body.Close()
	}

	// A signed slash command is answered within Slack's 3 seconds with blocks.
	form := url.Values{"command": {"/vram"}, "text": {"llama-2-7b lora a100"}, "user_id": {"U1"}, "channel_id": {"C1"},
		"team_id": {"T1"}, "response_url": {fake.URL + "/response/1"}, "trigger_id": {"1.2.3"}}
	start := time.Now()
	resp, err := http.DefaultClient.Do(signedRequest(t, base+"/slack/commands", secret, "application/x-www-form-urlencoded", []byte(form.Encode())))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || time.Since(start) > 3*time.Second || !strings.Contains(string(body), `"blocks"`) {
		t.Fatalf("slash: %d after %s: %.300s", resp.StatusCode, time.Since(start), body)
	}

	// An unsigned request is refused.
	resp, err = http.Post(base+"/slack/commands", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("unsigned: %d, want 401", resp.StatusCode)
	}

	// A pasted OOM gets one threaded reply.
	paste := "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.23 GiB is free. Including non-PyTorch memory, this process has 77.90 GiB memory in use. Of the allocated memory 75.10 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated."
	event := fmt.Sprintf(`{"type":"event_callback","team_id":"T1","event_id":"Ev1","event_time":%d,"event":{"type":"message","channel":"C1","user":"U1","text":%q,"ts":"1700000000.000100","channel_type":"channel"}}`, time.Now().Unix(), paste)
	resp, err = http.DefaultClient.Do(signedRequest(t, base+"/slack/events", secret, "application/json", []byte(event)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("event: %d", resp.StatusCode)
	}
	for time.Now().Before(deadline) && len(api.posted("chat.postMessage")) == 0 {
		time.Sleep(20 * time.Millisecond)
	}
	posts := api.posted("chat.postMessage")
	if len(posts) != 1 || posts[0].Get("thread_ts") != "1700000000.000100" || posts[0].Get("channel") != "C1" {
		t.Fatalf("threaded replies: %v", posts)
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("serve exited %d: %s", code, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop after cancel")
	}
	if strings.Contains(stderr.String(), "xoxb-test") || strings.Contains(stderr.String(), secret) {
		t.Error("a secret reached the logs")
	}
}

// TestDigestPostsToSlack runs `vrambot digest` with Slack configured: the
// digest is posted to the channel through the Web API at VRAMBOT_SLACK_API_URL.
func TestDigestPostsToSlack(t *testing.T) {
	api := &slackAPI{}
	fake := httptest.NewServer(api)
	defer fake.Close()
	envVars := map[string]string{
		"SLACK_BOT_TOKEN":        "xoxb-test",
		"VRAMBOT_SLACK_API_URL":  fake.URL + "/api/",
		"VRAMBOT_DIGEST_CHANNEL": "C0DIGEST",
	}
	code, out, stderr := runCLI(t, envVars, "", "digest", "--json", "--at", "2026-11-27T09:00:00Z")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	posts := api.posted("chat.postMessage")
	if len(posts) == 0 || posts[0].Get("channel") != "C0DIGEST" || posts[0].Get("blocks") == "" {
		t.Fatalf("digest posts: %v", posts)
	}
	if !strings.Contains(out, `"data_quality"`) {
		t.Errorf("no digest JSON printed: %.200s", out)
	}
}
