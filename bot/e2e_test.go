package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/vrambot/vrambot/internal/slacktest"
	"github.com/vrambot/vrambot/internal/testutil"
	"github.com/vrambot/vrambot/reply"
	"github.com/vrambot/vrambot/store"
	"github.com/vrambot/vrambot/store/storetest"
)

// slackDeadline is Slack's acknowledgement window.
const slackDeadline = 3 * time.Second

// decodeResponse reads a command response and checks its blocks.
func decodeResponse(t *testing.T, raw []byte) commandResponse {
	t.Helper()
	var got struct {
		ResponseType    string       `json:"response_type"`
		Text            string       `json:"text"`
		Blocks          slack.Blocks `json:"blocks"`
		ReplaceOriginal bool         `json:"replace_original"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("response %q: %v", raw, err)
	}
	if len(got.Blocks.BlockSet) > 0 {
		checkLimits(t, got.Blocks.BlockSet, got.Text)
	}
	return commandResponse{ResponseType: got.ResponseType, Text: got.Text, Blocks: got.Blocks.BlockSet, ReplaceOriginal: got.ReplaceOriginal}
}

// countButtons counts the buttons actionID in blocks.
func countButtons(blocks []slack.Block, actionID string) int {
	n := 0
	for _, b := range blocks {
		if a, ok := b.(*slack.ActionBlock); ok {
			for _, e := range a.Elements.ElementSet {
				if btn, ok := e.(*slack.ButtonBlockElement); ok && btn.ActionID == actionID {
					n++
				}
			}
		}
	}
	return n
}

func TestSlashCommand(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		kindText string // expected in the fallback text
		share    bool
	}{
		{"query", "7b lora a100", "fits", true},
		{"help", "help", "vrambot", false},
		{"bad query", "bogus model", "did you mean", false},
		{"too long", strings.Repeat("7b ", 400), "a few words", false},
	}
	ts := newTestServer(t, nil, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			resp := ts.slashCommand(t, tt.text)
			body := readAll(t, resp)
			if elapsed := time.Since(start); elapsed > slackDeadline {
				t.Errorf("answered in %v", elapsed)
			}
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("status %d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			}
			got := decodeResponse(t, []byte(body))
			if got.ResponseType != slack.ResponseTypeEphemeral {
				t.Errorf("response_type %q", got.ResponseType)
			}
			if !strings.Contains(got.Text, tt.kindText) {
				t.Errorf("text %q lacks %q", got.Text, tt.kindText)
			}
			if want, n := map[bool]int{true: 1, false: 0}[tt.share], countButtons(got.Blocks, shareActionID); n != want {
				t.Errorf("%d share buttons, want %d", n, want)
			}
		})
	}
	ts.idle(t)
	if n := len(ts.slack.Replies()); n != 0 {
		t.Errorf("inline answers also posted %d messages", n)
	}
}

func TestSlashCommandSlowFollowsUp(t *testing.T) {
	ts := newTestServer(t, nil, nil, func(c *Config, _ *Deps) { c.InlineBudget = 20 * time.Millisecond })
	ts.cmds.delay = 200 * time.Millisecond
	resp := ts.slashCommand(t, "7b lora a100")
	got := decodeResponse(t, []byte(readAll(t, resp)))
	if got.Text != "Working on it…" || got.ResponseType != slack.ResponseTypeEphemeral {
		t.Fatalf("ack = %+v", got)
	}
	ts.idle(t)
	follow := responses(ts.slack, "cmd")
	if len(follow) != 1 {
		t.Fatalf("%d response_url posts", len(follow))
	}
	f := decodeResponse(t, follow[0].Body)
	if !f.ReplaceOriginal || f.ResponseType != slack.ResponseTypeEphemeral || countButtons(f.Blocks, shareActionID) != 1 {
		t.Errorf("follow-up = %+v", f)
	}
}

func TestShareInChannel(t *testing.T) {
	ts := newTestServer(t, nil, nil)
	payload, _ := json.Marshal(map[string]any{
		"type":         "block_actions",
		"user":         map[string]any{"id": "U1", "username": "ada"},
		"channel":      map[string]any{"id": "C1", "name": "ml"},
		"container":    map[string]any{"type": "message", "message_ts": "1700000000.000100", "is_ephemeral": true},
		"response_url": ts.slack.ResponseURL("share"),
		"actions":      []map[string]any{{"action_id": shareActionID, "block_id": "b1", "type": "button", "value": "7b lora a100", "action_ts": "1700000001.1"}},
		"message":      map[string]any{"blocks": []map[string]any{{"type": "unknown_future_block"}}},
	})
	body := url.Values{"payload": {string(payload)}}.Encode()
	resp := ts.post(t, "/slack/interactivity", "application/x-www-form-urlencoded", []byte(body))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	readAll(t, resp)
	ts.idle(t)
	posts := responses(ts.slack, "share")
	if len(posts) != 1 {
		t.Fatalf("%d response_url posts", len(posts))
	}
	got := decodeResponse(t, posts[0].Body)
	if got.ResponseType != slack.ResponseTypeInChannel || countButtons(got.Blocks, shareActionID) != 0 {
		t.Errorf("shared answer = %+v", got)
	}
	last, ok := got.Blocks[len(got.Blocks)-1].(*slack.ContextBlock)
	if !ok || last.ContextElements.Elements[0].(*slack.TextBlockObject).Text != "Shared by <@U1>" {
		t.Errorf("no attribution in %s", posts[0].Body)
	}
}

func TestOOMPasteGetsOneThreadedReply(t *testing.T) {
	ts := newTestServer(t, nil, nil)
	resp := ts.event(t, "Ev1", message(oomPaste))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	readAll(t, resp)
	ts.idle(t)
	// Slack retries the same event: nothing more may happen.
	for i := 1; i <= 3; i++ {
		resp := ts.event(t, "Ev1", message(oomPaste), "X-Slack-Retry-Num", fmt.Sprint(i), "X-Slack-Retry-Reason", "http_timeout")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("retry %d: status %d", i, resp.StatusCode)
		}
		readAll(t, resp)
	}
	ts.idle(t)
	posts := ts.slack.Answered("chat.postMessage")
	if len(posts) != 1 {
		t.Fatalf("%d replies, want 1", len(posts))
	}
	p := posts[0].Args
	if p.Get("channel") != "C1" || p.Get("thread_ts") != "1700000100.000200" {
		t.Errorf("reply to channel %q thread %q", p.Get("channel"), p.Get("thread_ts"))
	}
	var blocks slack.Blocks
	if err := json.Unmarshal([]byte(p.Get("blocks")), &blocks); err != nil {
		t.Fatal(err)
	}
	checkLimits(t, blocks.BlockSet, p.Get("text"))
	if r := ts.slack.Answered("reactions.add"); len(r) != 1 || r[0].Args.Get("name") != "eyes" || r[0].Args.Get("timestamp") != "1700000100.000200" {
		t.Errorf("reactions: %+v", r)
	}
	seen := ts.ooms.all()
	if len(seen) != 1 || seen[0].Channel != "C1" || seen[0].ThreadTS != "1700000100.000200" || seen[0].Permalink == "" || !seen[0].Facts.Detected {
		t.Errorf("recorded %+v", seen)
	}
	metrics := scrape(t, ts)
	for _, want := range []string{
		`vrambot_ooms_parsed_total{format="pytorch-new"} 1`,
		`vrambot_slack_requests_total{kind="event",outcome="accepted"} 1`,
		`vrambot_slack_requests_total{kind="event",outcome="duplicate"} 3`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestThreadReplyStaysInThread(t *testing.T) {
	ts := newTestServer(t, nil, nil)
	readAll(t, ts.event(t, "Ev2", message(oomPaste, "thread_ts", "1700000000.000001")))
	ts.idle(t)
	posts := ts.slack.Answered("chat.postMessage")
	if len(posts) != 1 || posts[0].Args.Get("thread_ts") != "1700000000.000001" {
		t.Fatalf("posts %+v", posts)
	}
}

func TestIgnoredEvents(t *testing.T) {
	tests := []struct {
		name  string
		inner map[string]any
	}{
		{"chatter", message("anyone up for lunch?")},
		{"bot_id", message(oomPaste, "bot_id", "B999")},
		{"bot_message subtype", message(oomPaste, "subtype", "bot_message", "user", "", "bot_id", "B999")},
		{"itself without bot_id", message(oomPaste, "user", testBotUser)},
		{"edit", message("", "subtype", "message_changed", "user", "", "message", map[string]any{"type": "message", "user": "U1", "text": oomPaste, "ts": "1.1"})},
		{"deletion", message("", "subtype", "message_deleted", "user", "")},
		{"thread broadcast", message(oomPaste, "subtype", "thread_broadcast")},
		{"message copy of a mention", message("<@" + testBotUser + "> " + oomPaste)},
		{"reaction event", map[string]any{"type": "reaction_added", "user": "U1", "reaction": "eyes"}},
		{"empty text", message("")},
	}
	ts := newTestServer(t, nil, nil)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := ts.event(t, fmt.Sprintf("EvIgnored%d", i), tt.inner)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			readAll(t, resp)
			ts.idle(t)
			if r := ts.slack.Replies(); len(r) != 0 {
				t.Fatalf("replied: %+v", r)
			}
			if r := ts.slack.Answered("reactions.add"); len(r) != 0 {
				t.Fatalf("reacted: %+v", r)
			}
		})
	}
}

func TestAppMention(t *testing.T) {
	tests := []struct {
		name string
		text string
		want string // in the posted fallback text
	}{
		{"vram query", "<@UBOT> vram 7b lora a100", "fits"},
		{"vram bad query", "<@UBOT|vrambot> VRAM bogus", "did you mean"},
		{"vram help", "<@UBOT> vram", "vrambot"},
		{"oom paste", "<@UBOT> why? " + oomPaste, "CUDA OOM"},
		{"anything else", "<@UBOT> hello", "How I can help"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t, nil, nil)
			inner := map[string]any{"type": "app_mention", "user": "U1", "text": tt.text, "ts": "1700000200.000100", "thread_ts": "1700000000.000009", "channel": "C1"}
			readAll(t, ts.event(t, fmt.Sprintf("EvM%d", i), inner))
			ts.idle(t)
			posts := ts.slack.Answered("chat.postMessage")
			if len(posts) != 1 {
				t.Fatalf("%d posts", len(posts))
			}
			if got := posts[0].Args.Get("text"); !strings.Contains(got, tt.want) {
				t.Errorf("text %q lacks %q", got, tt.want)
			}
			if posts[0].Args.Get("thread_ts") != "1700000000.000009" {
				t.Errorf("thread_ts %q", posts[0].Args.Get("thread_ts"))
			}
			var blocks slack.Blocks
			if err := json.Unmarshal([]byte(posts[0].Args.Get("blocks")), &blocks); err != nil {
				t.Fatal(err)
			}
			if countButtons(blocks.BlockSet, shareActionID) != 0 {
				t.Error("channel answer carries the share button")
			}
		})
	}
}

func TestFileShareSnippet(t *testing.T) {
	tests := []struct {
		name    string
		size    int64
		content string
		replies int
	}{
		{"oom in snippet", 0, "step 9000\n" + oomPaste, 1},
		{"no oom in snippet", 0, "all good", 0},
		{"snippet over the cap", 3 << 20, oomPaste, 0},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t, nil, nil)
			path := fmt.Sprintf("/files/T1-F%d/train.log", i)
			link := ts.slack.AddFile(path, tt.content)
			size := tt.size
			if size == 0 {
				size = int64(len(tt.content))
			}
			files := []map[string]any{
				{"id": "FIMG", "name": "loss.png", "mimetype": "image/png", "filetype": "png", "url_private_download": ts.slack.URL + "/files/img.png"},
				{"id": fmt.Sprintf("F%d", i), "name": "train.log", "mimetype": "text/plain", "filetype": "text", "mode": "snippet", "size": size, "url_private_download": link},
			}
			readAll(t, ts.event(t, fmt.Sprintf("EvF%d", i), message("see log", "subtype", "file_share", "files", files)))
			ts.idle(t)
			if got := len(ts.slack.Answered("chat.postMessage")); got != tt.replies {
				t.Errorf("%d replies, want %d", got, tt.replies)
			}
			if tt.size == 0 && len(ts.slack.Answered(slacktest.MethodDownload)) != 1 {
				t.Errorf("downloads: %d", len(ts.slack.Answered(slacktest.MethodDownload)))
			}
		})
	}
}

func TestLongReplyAttachesFile(t *testing.T) {
	ts := newTestServer(t, nil, nil)
	ts.cmds.oomReply = longFixture
	readAll(t, ts.event(t, "EvLong", message(oomPaste)))
	ts.idle(t)
	posts := ts.slack.Answered("chat.postMessage")
	if len(posts) != 1 || !strings.Contains(posts[0].Args.Get("blocks"), "Shortened") {
		t.Fatalf("posts: %d", len(posts))
	}
	if n := len(ts.slack.Answered("files.getUploadURLExternal")); n != 1 {
		t.Errorf("getUploadURLExternal calls: %d", n)
	}
	up := ts.slack.Answered(slacktest.MethodUpload)
	if len(up) != 1 || !strings.Contains(string(up[0].Body), "Section 59") {
		t.Errorf("uploaded file lacks the full text (%d uploads)", len(up))
	}
	done := ts.slack.Answered("files.completeUploadExternal")
	if len(done) != 1 || done[0].Args.Get("thread_ts") != "1700000100.000200" || done[0].Args.Get("channel_id") != "C1" {
		t.Errorf("complete: %+v", done)
	}
}

func TestRateLimitedPostIsRetried(t *testing.T) {
	fs := slacktest.New(t)
	fs.SetFaults("chat.postMessage", slacktest.FailFirst(1, slacktest.Fault{Status: http.StatusTooManyRequests, RetryAfter: 1}))
	ts := newTestServer(t, fs, nil)
	readAll(t, ts.event(t, "Ev429", message(oomPaste)))
	ts.idle(t)
	var limited []slacktest.Call
	for _, c := range fs.Calls("chat.postMessage") {
		if c.Status == http.StatusTooManyRequests {
			limited = append(limited, c)
		}
	}
	posts := fs.Answered("chat.postMessage")
	if len(limited) != 1 || len(posts) != 1 {
		t.Fatalf("429s %d, posts %d", len(limited), len(posts))
	}
	if wait := posts[0].At.Sub(limited[0].At); wait < 900*time.Millisecond {
		t.Errorf("retried after %v, Retry-After was 1s", wait)
	}
}

func TestURLVerification(t *testing.T) {
	ts := newTestServer(t, nil, nil)
	body := []byte(`{"token":"x","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`)
	resp := ts.post(t, "/slack/events", "application/json", body)
	if got := readAll(t, resp); resp.StatusCode != http.StatusOK || got != "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" {
		t.Errorf("status %d body %q", resp.StatusCode, got)
	}
}

func TestRefusedRequests(t *testing.T) {
	ts := newTestServer(t, nil, nil)
	body := slacktest.EventBody("EvForged", message(oomPaste))
	tests := []struct {
		name   string
		path   string
		header func(h http.Header)
	}{
		{"unsigned", "/slack/events", func(http.Header) {}},
		{"forged signature", "/slack/events", func(h http.Header) { slacktest.Sign(h, "not-the-secret-000000000000000000", time.Now(), body) }},
		{"stale timestamp", "/slack/events", func(h http.Header) { slacktest.Sign(h, testSecret, time.Now().Add(-6*time.Minute), body) }},
		{"future timestamp", "/slack/events", func(h http.Header) { slacktest.Sign(h, testSecret, time.Now().Add(6*time.Minute), body) }},
		{"signature of another body", "/slack/events", func(h http.Header) { slacktest.Sign(h, testSecret, time.Now(), []byte("{}")) }},
		{"short signature", "/slack/commands", func(h http.Header) {
			slacktest.Sign(h, testSecret, time.Now(), body)
			h.Set("X-Slack-Signature", h.Get("X-Slack-Signature")[:20])
		}},
		{"unsigned command", "/slack/commands", func(http.Header) {}},
		{"unsigned interaction", "/slack/interactivity", func(http.Header) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, ts.http.URL+tt.path, strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
			tt.header(req.Header)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			readAll(t, resp)
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("status %d, want 401", resp.StatusCode)
			}
		})
	}
	ts.idle(t)
	if calls := ts.slack.Calls(""); len(calls) != 0 {
		t.Errorf("refused requests reached Slack: %+v", calls)
	}
	if _, err := ts.deps.Store.Get(context.Background(), "event:EvForged"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused event was recorded: %v", err)
	}
}

func TestBodyTooLarge(t *testing.T) {
	ts := newTestServer(t, nil, nil)
	big := strings.Repeat("a", 3<<20)
	t.Run("content-length", func(t *testing.T) {
		start := time.Now()
		resp := ts.post(t, "/slack/events", "application/json", []byte(big))
		readAll(t, resp)
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("status %d", resp.StatusCode)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("took %v", d)
		}
	})
	t.Run("chunked", func(t *testing.T) {
		pr, pw := io.Pipe()
		go func() {
			chunk := []byte(strings.Repeat("a", 64<<10))
			for range 48 {
				if _, err := pw.Write(chunk); err != nil {
					return
				}
			}
			pw.Close()
		}()
		req, _ := http.NewRequest(http.MethodPost, ts.http.URL+"/slack/commands", pr)
		slacktest.Sign(req.Header, testSecret, time.Now(), []byte(big))
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		pr.Close()
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp)
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("status %d", resp.StatusCode)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("took %v", d)
		}
	})
}

func TestHealthReadyMetrics(t *testing.T) {
	ts := newTestServer(t, nil, nil)
	get := func(path string) (int, string) {
		resp, err := http.Get(ts.http.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, readAll(t, resp)
	}
	if code, _ := get("/healthz"); code != http.StatusOK {
		t.Errorf("healthz %d", code)
	}
	if code, _ := get("/readyz"); code != http.StatusOK {
		t.Errorf("readyz %d", code)
	}
	readAll(t, ts.slashCommand(t, "7b"))
	code, body := get("/metrics")
	if code != http.StatusOK || !strings.Contains(body, `vrambot_slack_requests_total{kind="command",outcome="inline"} 1`) ||
		!strings.Contains(body, "vrambot_slack_request_duration_seconds_bucket") {
		t.Errorf("metrics %d:\n%s", code, body)
	}
	if resp, _ := http.Get(ts.http.URL + "/slack/events"); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /slack/events: %d", resp.StatusCode)
	}

	down := newTestServer(t, nil, failingStore{store.NewMemory()})
	resp, err := http.Get(down.http.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	if readAll(t, resp); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("readyz with the store down: %d", resp.StatusCode)
	}
	// An event that cannot be deduped is refused so that Slack retries it.
	if resp := down.event(t, "EvDown", message(oomPaste)); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("event with the store down: %d", resp.StatusCode)
	}
}

// failingStore is a store whose server is unreachable.
type failingStore struct{ store.Store }

var errStoreDown = errors.New("dial tcp 127.0.0.1:1: connection refused")

func (failingStore) Ping(context.Context) error { return errStoreDown }
func (failingStore) SetNX(context.Context, string, []byte, time.Duration) (bool, error) {
	return false, errStoreDown
}

func scrape(t *testing.T, ts *testServer) string {
	t.Helper()
	resp, err := http.Get(ts.http.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	return readAll(t, resp)
}

func TestShutdownDrainsInFlight(t *testing.T) {
	ts := newTestServer(t, nil, nil)
	ts.cmds.oomReply = func() reply.Reply { time.Sleep(300 * time.Millisecond); return oomFixture() }
	readAll(t, ts.event(t, "EvDrain", message(oomPaste)))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ts.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(ts.slack.Answered("chat.postMessage")); n != 1 {
		t.Errorf("in-flight reply lost: %d posts", n)
	}
	// After shutdown new events are refused (Slack retries elsewhere).
	if resp := ts.event(t, "EvLate", message(oomPaste)); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("event after shutdown: %d", resp.StatusCode)
	}
}

func TestShutdownDeadline(t *testing.T) {
	ts := newTestServer(t, nil, nil, func(c *Config, _ *Deps) { c.InlineBudget = 10 * time.Millisecond })
	ts.cmds.delay = 5 * time.Second
	readAll(t, ts.slashCommand(t, "7b"))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := ts.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v", err)
	}
	ts.idle(t) // the cancelled work returns promptly
}

// TestTwoReplicasOneRedis delivers the same event to two Servers that share
// one Redis: exactly one answers.
func TestTwoReplicasOneRedis(t *testing.T) {
	rs := storetest.NewRedis(t)
	fs := slacktest.New(t)
	a := newTestServer(t, fs, rs)
	b := newTestServer(t, fs, rs)
	for i := range 20 {
		id := fmt.Sprintf("EvReplica%d", i)
		var wg sync.WaitGroup
		for _, ts := range []*testServer{a, b} {
			wg.Go(func() { readAll(t, ts.event(t, id, message(oomPaste, "ts", fmt.Sprintf("1700000300.%06d", i)))) })
		}
		wg.Wait()
	}
	a.idle(t)
	b.idle(t)
	posts := fs.Answered("chat.postMessage")
	if len(posts) != 20 {
		t.Fatalf("%d replies for 20 events", len(posts))
	}
	var threads []string
	for _, p := range posts {
		threads = append(threads, p.Args.Get("thread_ts"))
	}
	slices.Sort(threads)
	if len(slices.Compact(threads)) != 20 {
		t.Errorf("some event answered twice: %v", threads)
	}
}

// TestConcurrentSlashCommands sends 200 signed /vram commands from 8
// clients; every one must be answered within Slack's 3 seconds.
func TestConcurrentSlashCommands(t *testing.T) {
	ts := newTestServer(t, nil, nil)
	const total, clients = 200, 8
	latencies := make([]time.Duration, total)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for i := range jobs {
				start := time.Now()
				resp := ts.slashCommand(t, fmt.Sprintf("7b lora a100 bs=%d", i%16+1))
				body := readAll(t, resp)
				latencies[i] = time.Since(start)
				if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"blocks"`) {
					t.Errorf("command %d: %d %s", i, resp.StatusCode, body)
				}
			}
		})
	}
	for i := range total {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	slices.Sort(latencies)
	p50, p95, worst := latencies[total/2], latencies[total*95/100], latencies[total-1]
	t.Logf("200 signed /vram commands from 8 clients: p50 %v, p95 %v, max %v", p50, p95, worst)
	if worst > slackDeadline {
		t.Errorf("slowest answer %v", worst)
	}
}

func BenchmarkSlashCommand(b *testing.B) {
	ts := newTestServer(b, nil, nil)
	var mu sync.Mutex
	var latencies []time.Duration
	b.SetParallelism(1)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			start := time.Now()
			resp := ts.slashCommand(b, "7b lora a100")
			readAll(b, resp)
			d := time.Since(start)
			mu.Lock()
			latencies = append(latencies, d)
			mu.Unlock()
		}
	})
	b.StopTimer()
	slices.Sort(latencies)
	if n := len(latencies); n > 0 {
		b.ReportMetric(float64(latencies[n/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(latencies[n*95/100].Microseconds()), "p95-µs")
	}
}

// TestLogsHoldNoSecrets drives failing paths (Slack down, response_url
// unreachable, forged requests) and checks that no token, signing secret
// or response_url reaches the logs.
func TestLogsHoldNoSecrets(t *testing.T) {
	var logs testutil.Buffer
	fs := slacktest.New(t)
	ts := newTestServer(t, fs, nil, func(c *Config, d *Deps) {
		c.APIURL = fs.URL + "/down/"
		c.InlineBudget = 10 * time.Millisecond
		d.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	ts.cmds.delay = 50 * time.Millisecond
	deadURL := "http://127.0.0.1:1/response/T1/secret-hook-path"
	form := url.Values{"command": {"/vram"}, "text": {"7b"}, "response_url": {deadURL}}
	readAll(t, ts.post(t, "/slack/commands", "application/x-www-form-urlencoded", []byte(form.Encode())))
	readAll(t, ts.event(t, "EvSecret", message(oomPaste)))
	req, _ := http.NewRequest(http.MethodPost, ts.http.URL+"/slack/events", strings.NewReader("{}"))
	slacktest.Sign(req.Header, "wrong-secret", time.Now(), []byte("{}"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	ts.idle(t)
	out := logs.String()
	if !strings.Contains(out, "posting reply failed") || !strings.Contains(out, "response_url follow-up failed") {
		t.Fatalf("failures not logged:\n%s", out)
	}
	for _, secret := range []string{testBotToken, testSecret, "secret-hook-path", "wrong-secret"} {
		if strings.Contains(out, secret) {
			t.Errorf("log contains %q:\n%s", secret, out)
		}
	}
}

// TestServe runs the whole HTTP server on a port and stops it by context.
func TestServe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ts := newTestServer(t, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ts.Serve(ctx, addr) }()
	testutil.Eventually(t, 5*time.Second, "healthz answers", func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return false
		}
		readAll(t, resp)
		return resp.StatusCode == http.StatusOK
	})
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not stop")
	}
	if err := ts.Serve(context.Background(), "256.0.0.1:bad"); err == nil {
		t.Error("Serve on a bad address succeeded")
	}
}

// TestRefusedReplyGetsNotice: when Slack refuses the blocks, the user gets
// a short plain-text notice in the thread instead of silence.
func TestRefusedReplyGetsNotice(t *testing.T) {
	fs := slacktest.New(t)
	fs.SetFaults("chat.postMessage", func(_ int, c *slacktest.Call) slacktest.Fault {
		if c.Args.Get("blocks") != "" {
			return slacktest.Fault{Error: "invalid_blocks"}
		}
		return slacktest.Fault{}
	})
	ts := newTestServer(t, fs, nil)
	readAll(t, ts.event(t, "EvBadBlocks", message(oomPaste)))
	ts.idle(t)
	posts := fs.Calls("chat.postMessage")
	if len(posts) != 2 {
		t.Fatalf("%d posts, want the refused reply and a notice", len(posts))
	}
	notice := posts[1].Args
	if notice.Get("text") != postFailedText || notice.Get("thread_ts") != "1700000100.000200" || notice.Get("blocks") != "" {
		t.Errorf("notice %v", notice)
	}
	if len(ts.ooms.all()) != 1 {
		t.Error("the OOM was not recorded for the digest")
	}
}
