package bot

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/reply"
	"github.com/vrambot/vrambot/store"
)

// fakeSlack is a fake Slack Web API that records every call: the methods
// the bot uses, response_url follow-ups, file downloads and the upload URL.
type fakeSlack struct {
	srv *httptest.Server

	mu        sync.Mutex
	calls     []apiCall
	ts        int
	files     map[string]string    // download path -> content
	rateLimit int                  // answer this many chat.postMessage calls with 429 first
	badBlocks bool                 // refuse chat.postMessage with blocks (invalid_blocks)
	shares    map[string][2]string // file id -> channel and ts of the message sharing it
	ws        http.HandlerFunc     // Socket Mode WebSocket endpoint, when set
}

// apiCall is one request the fake saw. Form holds form-encoded Web API
// arguments; Body the raw body of response_url posts and uploads.
type apiCall struct {
	Method string
	Form   url.Values
	Body   []byte
	At     time.Time
}

const (
	testBotToken = "xoxb-test-token"
	testSecret   = "8f742231b10e8888abcd99yyyzzz85a5"
	testBotUser  = "UBOT"
)

func newFakeSlack(t testing.TB) *fakeSlack {
	t.Helper()
	f := &fakeSlack{files: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", f.serveAPI)
	mux.HandleFunc("/response/", func(w http.ResponseWriter, r *http.Request) {
		f.record(r, strings.TrimPrefix(r.URL.Path, "/"))
		_, _ = io.WriteString(w, "ok")
	})
	mux.HandleFunc("/upload/", func(w http.ResponseWriter, r *http.Request) {
		f.record(r, "upload")
		_, _ = io.WriteString(w, "OK - 1")
	})
	mux.HandleFunc("/files/", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testBotToken {
			http.Error(w, "no token", http.StatusForbidden)
			return
		}
		f.mu.Lock()
		content, ok := f.files[r.URL.Path]
		f.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		f.record(r, "download")
		_, _ = io.WriteString(w, content)
	})
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		ws := f.ws
		f.mu.Unlock()
		if ws == nil {
			http.NotFound(w, r)
			return
		}
		ws(w, r)
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// apiURL is what Config.APIURL gets.
func (f *fakeSlack) apiURL() string { return f.srv.URL + "/api/" }

func (f *fakeSlack) record(r *http.Request, method string) apiCall {
	body, _ := io.ReadAll(r.Body)
	c := apiCall{Method: method, Body: body, At: time.Now()}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		c.Form, _ = url.ParseQuery(string(body))
	}
	f.mu.Lock()
	f.calls = append(f.calls, c)
	f.mu.Unlock()
	return c
}

func (f *fakeSlack) serveAPI(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	if method == "chat.postMessage" {
		f.mu.Lock()
		limited := f.rateLimit > 0
		if limited {
			f.rateLimit--
		}
		f.mu.Unlock()
		if limited {
			f.record(r, "429:"+method)
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
	}
	c := f.record(r, method)
	var resp map[string]any
	switch method {
	case "auth.test":
		resp = map[string]any{"user_id": testBotUser, "bot_id": "BBOT", "user": "vrambot", "team_id": "T1"}
	case "chat.postMessage":
		f.mu.Lock()
		if f.badBlocks && c.Form.Get("blocks") != "" {
			f.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"ok":false,"error":"invalid_blocks"}`)
			return
		}
		f.ts++
		ts := fmt.Sprintf("1700000000.%06d", f.ts)
		f.mu.Unlock()
		resp = map[string]any{"channel": c.Form.Get("channel"), "ts": ts}
	case "chat.getPermalink":
		resp = map[string]any{"channel": c.Form.Get("channel"), "permalink": "https://example.slack.com/archives/" + c.Form.Get("channel") + "/p1"}
	case "reactions.add":
		resp = map[string]any{}
	case "files.getUploadURLExternal":
		resp = map[string]any{"upload_url": f.srv.URL + "/upload/F1", "file_id": "F1"}
	case "files.completeUploadExternal":
		if ch := c.Form.Get("channel_id"); ch != "" && c.Form.Get("thread_ts") == "" {
			f.mu.Lock()
			f.ts++
			if f.shares == nil {
				f.shares = map[string][2]string{}
			}
			f.shares["F1"] = [2]string{ch, fmt.Sprintf("1700000000.%06d", f.ts)}
			f.mu.Unlock()
		}
		resp = map[string]any{"files": []map[string]any{{"id": "F1", "title": "t"}}}
	case "files.info":
		f.mu.Lock()
		share, ok := f.shares[c.Form.Get("file")]
		f.mu.Unlock()
		file := map[string]any{"id": c.Form.Get("file")}
		if ok {
			file["shares"] = map[string]any{"public": map[string]any{share[0]: []map[string]any{{"ts": share[1]}}}}
		}
		resp = map[string]any{"file": file}
	case "apps.connections.open":
		resp = map[string]any{"url": "ws" + strings.TrimPrefix(f.srv.URL, "http") + "/ws"}
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":false,"error":"unknown_method"}`)
		return
	}
	resp["ok"] = true
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// seen returns the calls of one method (all calls when method is "").
func (f *fakeSlack) seen(method string) []apiCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []apiCall
	for _, c := range f.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// replies returns the calls that put something in front of users.
func (f *fakeSlack) replies() []apiCall {
	var out []apiCall
	for _, c := range f.seen("") {
		if c.Method == "chat.postMessage" || c.Method == "chat.postEphemeral" || strings.HasPrefix(c.Method, "response/") || c.Method == "files.completeUploadExternal" {
			out = append(out, c)
		}
	}
	return out
}

func (f *fakeSlack) addFile(path, content string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files[path] = content
	return f.srv.URL + path
}

// fakeCommands stands in for the commands package: queries mentioning
// "bogus" are bad input; text with "CUDA out of memory" is an OOM.
type fakeCommands struct {
	delay    time.Duration
	oomReply func() reply.Reply
}

func (c *fakeCommands) VRAM(ctx context.Context, query string) (reply.Reply, error) {
	if c.delay > 0 {
		select {
		case <-time.After(c.delay):
		case <-ctx.Done():
			return reply.Reply{}, ctx.Err()
		}
	}
	if strings.Contains(query, "bogus") {
		return reply.Reply{}, errs.New(errs.Invalid, "unknown model %q; did you mean \"llama-2-7b\"?", "bogus")
	}
	r := vramFixture(query)
	// Like commands.VRAM, the reply carries its own share button.
	r.Actions = []reply.Action{{ID: "share", Text: "Share in channel", Value: query}, {ID: "docs", Text: "Docs", Value: "d"}}
	return r, nil
}

func (c *fakeCommands) OOM(_ context.Context, text string) (reply.Reply, bool) {
	if !strings.Contains(text, "CUDA out of memory") {
		return reply.Reply{Kind: "oom", Result: map[string]any{"detected": false}}, false
	}
	if c.oomReply != nil {
		return c.oomReply(), true
	}
	return oomFixture(), true
}

// testServer is a Server behind a loopback HTTP server, wired to a fake Slack.
type testServer struct {
	*Server
	http  *httptest.Server
	slack *fakeSlack
	cmds  *fakeCommands
	ooms  *oomLog
}

type oomLog struct {
	mu   sync.Mutex
	seen []OOMSeen
}

func (l *oomLog) record(_ context.Context, ev OOMSeen) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, ev)
	return nil
}

func (l *oomLog) all() []OOMSeen {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]OOMSeen(nil), l.seen...)
}

type serverOption func(*Config, *Deps)

func newTestServer(t testing.TB, fs *fakeSlack, st store.Store, opts ...serverOption) *testServer {
	t.Helper()
	if fs == nil {
		fs = newFakeSlack(t)
	}
	if st == nil {
		st = store.NewMemory()
	}
	cmds := &fakeCommands{}
	ooms := &oomLog{}
	cfg := Config{BotToken: testBotToken, SigningSecret: testSecret, APIURL: fs.apiURL(), PostInterval: time.Millisecond}
	deps := Deps{Commands: cmds, Store: st, RecordOOM: ooms.record, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, o := range opts {
		o(&cfg, &deps)
	}
	s, err := New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return &testServer{Server: s, http: hs, slack: fs, cmds: cmds, ooms: ooms}
}

// idle waits for all deferred work.
func (ts *testServer) idle(t testing.TB) {
	t.Helper()
	done := make(chan struct{})
	go func() { ts.inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("deferred work did not finish")
	}
}

// sign sets Slack's v0 signature headers on r for body at time at.
func sign(h http.Header, secret string, at time.Time, body []byte) {
	stamp := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%s:%s", stamp, body)
	h.Set("X-Slack-Request-Timestamp", stamp)
	h.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
}

// post sends a correctly signed request, as Slack does.
func (ts *testServer) post(t testing.TB, path, contentType string, body []byte, headers ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, ts.http.URL+path, strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	sign(req.Header, testSecret, time.Now(), body)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := ts.http.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func (ts *testServer) slashCommand(t testing.TB, text string) *http.Response {
	t.Helper()
	form := url.Values{
		"token": {"deprecated"}, "team_id": {"T1"}, "team_domain": {"acme"},
		"channel_id": {"C1"}, "channel_name": {"ml"}, "user_id": {"U1"}, "user_name": {"ada"},
		"command": {"/vram"}, "text": {text}, "api_app_id": {"A1"}, "trigger_id": {"13345224609.738474920.8088930838d88f008e0"},
		"response_url": {ts.slack.srv.URL + "/response/cmd"},
	}
	return ts.post(t, "/slack/commands", "application/x-www-form-urlencoded", []byte(form.Encode()))
}

func (ts *testServer) event(t testing.TB, eventID string, inner map[string]any, headers ...string) *http.Response {
	t.Helper()
	return ts.post(t, "/slack/events", "application/json", eventBody(eventID, inner), headers...)
}

func eventBody(eventID string, inner map[string]any) []byte {
	body, _ := json.Marshal(map[string]any{
		"token": "deprecated", "team_id": "T1", "api_app_id": "A1", "type": "event_callback",
		"event_id": eventID, "event_time": 1700000000, "event": inner,
		"authorizations": []map[string]any{{"team_id": "T1", "user_id": testBotUser, "is_bot": true}},
	})
	return body
}

// message is a channel message event from a person.
func message(text string, extra ...any) map[string]any {
	m := map[string]any{"type": "message", "channel": "C1", "channel_type": "channel", "user": "U1", "text": text, "ts": "1700000100.000200", "event_ts": "1700000100.000200"}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i].(string)] = extra[i+1]
	}
	return m
}

func readAll(t testing.TB, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const oomPaste = "Traceback (most recent call last):\n  File \"train.py\", line 10\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.23 GiB is free. Including non-PyTorch memory, this process has 77.90 GiB memory in use. Of the allocated memory 75.1 GiB is allocated by PyTorch, and 1.2 GiB is reserved by PyTorch but unallocated."
