package bot

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/internal/slacktest"
	"github.com/vrambot/vrambot/internal/testutil"
	"github.com/vrambot/vrambot/reply"
	"github.com/vrambot/vrambot/store"
)

// Names of the stand-in Slack's credentials, as the tests use them.
const (
	testBotToken = slacktest.BotToken
	testSecret   = slacktest.SigningSecret
	testBotUser  = slacktest.BotUserID
)

// fakeCommands stands in for the commands package: queries mentioning
// "bogus" are bad input, "explode" an internal failure; text with "CUDA
// out of memory" is an OOM.
type fakeCommands struct {
	mu       sync.Mutex
	delay    time.Duration
	oomReply func() reply.Reply
	oomTexts []string // every text OOM was asked about
}

// oomAsked returns the texts OOM was asked about.
func (c *fakeCommands) oomAsked() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.oomTexts)
}

func (c *fakeCommands) setDelay(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.delay = d
}

func (c *fakeCommands) VRAM(ctx context.Context, query string) (reply.Reply, error) {
	c.mu.Lock()
	delay := c.delay
	c.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return reply.Reply{}, ctx.Err()
		}
	}
	if strings.Contains(query, "bogus") {
		return reply.Reply{}, errs.New(errs.Invalid, "unknown model %q; did you mean \"llama-2-7b\"?", "bogus")
	}
	if strings.Contains(query, "explode") {
		return reply.Reply{}, errs.Wrap(errs.Internal, errInternalDetail, "pricing the plan")
	}
	r := vramFixture(query)
	// Like commands.VRAM, the reply carries its own share button.
	r.Actions = []reply.Action{{ID: "share", Text: "Share in channel", Value: query}, {ID: "docs", Text: "Docs", Value: "d"}}
	return r, nil
}

// errInternalDetail is text that must never reach Slack.
var errInternalDetail = errors.New("dial tcp 10.0.0.7:6379: i/o timeout (redis://:hunter2@cache)")

// responses returns the response_url follow-ups the fake took at /response/name.
func responses(fs *slacktest.Server, name string) []slacktest.Call {
	var out []slacktest.Call
	for _, c := range fs.Answered(slacktest.MethodResponseURL) {
		if c.Path == "/response/"+name {
			out = append(out, c)
		}
	}
	return out
}

func (c *fakeCommands) OOM(_ context.Context, text string) (reply.Reply, OOMFacts) {
	c.mu.Lock()
	c.oomTexts = append(c.oomTexts, text)
	c.mu.Unlock()
	if !strings.Contains(text, "CUDA out of memory") {
		return reply.Reply{Kind: "oom"}, OOMFacts{}
	}
	facts := OOMFacts{Detected: true, Format: "pytorch-new"}
	c.mu.Lock()
	f := c.oomReply
	c.mu.Unlock()
	if f != nil {
		return f(), facts
	}
	return oomFixture(), facts
}

// testServer is a Server behind a loopback HTTP server, wired to a fake Slack.
type testServer struct {
	*Server
	http  *httptest.Server
	slack *slacktest.Server
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

// fastRetries keeps retried tests short.
var fastRetries = RetryPolicy{Deadline: 5 * time.Second, AttemptTimeout: 2 * time.Second, BaseDelay: 5 * time.Millisecond, MaxDelay: 20 * time.Millisecond, MaxAttempts: 6}

func newTestServer(t testing.TB, fs *slacktest.Server, st Store, opts ...serverOption) *testServer {
	t.Helper()
	if fs == nil {
		fs = slacktest.New(t)
	}
	if st == nil {
		st = store.NewMemory()
	}
	cmds := &fakeCommands{}
	ooms := &oomLog{}
	cfg := Config{BotToken: testBotToken, SigningSecret: testSecret, APIURL: fs.APIURL(), PostInterval: time.Millisecond, Retry: fastRetries}
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

// idle waits for all admitted work.
func (ts *testServer) idle(t testing.TB) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, "admitted work finished", func() bool {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		return len(ts.pending) == 0
	})
}

// post sends a correctly signed request, as Slack does.
func (ts *testServer) post(t testing.TB, path, contentType string, body []byte, headers ...string) *http.Response {
	t.Helper()
	req := slacktest.SignedRequest(t, ts.http.URL+path, contentType, body)
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
	form := slacktest.SlashCommand("/vram", text, ts.slack.ResponseURL("cmd"))
	return ts.post(t, "/slack/commands", slacktest.FormContent, []byte(form.Encode()))
}

func (ts *testServer) click(t testing.TB, form url.Values) *http.Response {
	t.Helper()
	return ts.post(t, "/slack/interactivity", slacktest.FormContent, []byte(form.Encode()))
}

func (ts *testServer) event(t testing.TB, eventID string, inner map[string]any, headers ...string) *http.Response {
	t.Helper()
	return ts.post(t, "/slack/events", slacktest.JSONContent, slacktest.EventBody(eventID, inner), headers...)
}

// message is a channel message event from a person in C1.
func message(text string, extra ...any) map[string]any {
	m := slacktest.Message("C1", "1700000100.000200", text)
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
