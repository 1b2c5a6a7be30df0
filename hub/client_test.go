package hub_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vrambot/vrambot/hub"
	"github.com/vrambot/vrambot/hub/hubtest"
	"github.com/vrambot/vrambot/internal/errs"
)

func newClient(t *testing.T, endpoint, token string, timeout time.Duration) *hub.Client {
	t.Helper()
	c, err := hub.New(hub.Options{Endpoint: endpoint, Token: token, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func fakeHub(t *testing.T) *hubtest.Server {
	fake := hubtest.New(t)
	fake.Add(hubtest.Model{ID: "acme/Open-8B", Config: []byte(hubtest.Qwen3Config),
		Safetensors: &hub.Safetensors{Parameters: map[string]int64{"BF16": 8_190_735_360}, Total: 8_190_735_360}})
	fake.Add(hubtest.Model{ID: "acme/Gated-8B", Config: []byte(hubtest.Qwen3Config), Gated: true})
	fake.Add(hubtest.Model{ID: "acme/Ungranted-8B", Config: []byte(hubtest.Qwen3Config), Gated: true, Ungranted: true})
	fake.Add(hubtest.Model{ID: "acme/Private-8B", Config: []byte(hubtest.Qwen3Config), Private: true})
	fake.Add(hubtest.Model{ID: "acme/Weights-GGUF"})
	fake.Rename("acme/Old-8B", "acme/Open-8B")
	return fake
}

// TestConfigAnswers runs the Hub's answers for config.json through the
// client: each success or failure reason, its kind for the edges, and a
// message that names HF_TOKEN exactly where a token would help.
func TestConfigAnswers(t *testing.T) {
	fake := fakeHub(t)
	tests := []struct {
		name, repo, token string
		reason            hub.Reason // "" = success
		kind              errs.Kind
		message           string // substring
	}{
		{"found", "acme/Open-8B", "", "", 0, ""},
		{"found with token", "acme/Open-8B", hubtest.Token, "", 0, ""},
		{"renamed repo: relative redirect", "acme/Old-8B", hubtest.Token, "", 0, ""},
		{"case differs", "ACME/open-8b", "", "", 0, ""},
		{"missing, no token: 401", "acme/Nope-8B", "", hub.ReasonNoRepo, errs.NotFound, "no model acme/Nope-8B on the Hub (or it is private: set HF_TOKEN"},
		{"missing, token: 404", "acme/Nope-8B", hubtest.Token, hub.ReasonNoRepo, errs.NotFound, "no model acme/Nope-8B on the Hub"},
		{"private, no token", "acme/Private-8B", "", hub.ReasonNoRepo, errs.NotFound, "HF_TOKEN"},
		{"private, token", "acme/Private-8B", hubtest.Token, "", 0, ""},
		{"gated, no token: 401", "acme/Gated-8B", "", hub.ReasonGated, errs.NotFound, "acme/Gated-8B is gated: set HF_TOKEN"},
		{"gated, token", "acme/Gated-8B", hubtest.Token, "", 0, ""},
		{"gated, not granted: 403", "acme/Ungranted-8B", hubtest.Token, hub.ReasonGated, errs.NotFound, "the account of HF_TOKEN has not been granted access"},
		{"bad token", "acme/Open-8B", "hf_wrong_token_value", hub.ReasonBadToken, errs.Invalid, "refused the token in HF_TOKEN"},
		{"no config.json", "acme/Weights-GGUF", "", hub.ReasonNoFile, errs.NotFound, "has no config.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, fake.URL, tt.token, 5*time.Second)
			data, err := c.Config(t.Context(), tt.repo)
			checkOutcome(t, err, tt.reason, tt.kind, tt.message)
			if tt.reason == "" && !strings.Contains(string(data), `"qwen3"`) {
				t.Errorf("config = %.80s", data)
			}
			if err != nil && strings.Contains(err.Error(), "hf_") {
				t.Errorf("error shows a token: %v", err)
			}
		})
	}
}

func checkOutcome(t *testing.T, err error, reason hub.Reason, kind errs.Kind, message string) {
	t.Helper()
	if reason == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if got := hub.ReasonOf(err); got != reason {
		t.Fatalf("reason %q (%v), want %q", got, err, reason)
	}
	if errs.KindOf(err) != kind {
		t.Errorf("kind %s, want %s", errs.KindOf(err), kind)
	}
	if !strings.Contains(errs.UserMessage(err), message) {
		t.Errorf("message %q does not contain %q", errs.UserMessage(err), message)
	}
	if strings.ContainsAny(errs.UserMessage(err), "\n\r") {
		t.Errorf("message is not one line: %q", errs.UserMessage(err))
	}
}

// TestConfigFaults injects what a Hub, a mirror or the network can do
// wrong: every one ends in a classified error, quickly, with the body
// never echoed.
func TestConfigFaults(t *testing.T) {
	const repo = "acme/Faulty-8B"
	path := hubtest.ConfigPath(repo)
	stall := func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
	tests := []struct {
		name    string
		handler http.HandlerFunc
		reason  hub.Reason
		kind    errs.Kind
		message string
	}{
		{"500", status(500, "secret-body-text"), hub.ReasonServer, errs.Unavailable, "the Hub answered HTTP 500 for acme/Faulty-8B"},
		{"503", status(503, ""), hub.ReasonServer, errs.Unavailable, "HTTP 503"},
		{"429 with Retry-After", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "42")
			w.WriteHeader(http.StatusTooManyRequests)
		}, hub.ReasonRateLimited, errs.Unavailable, "rate-limiting these requests (HTTP 429); retry in 42 s; an HF_TOKEN raises the limit"},
		{"headers never come", stall, hub.ReasonTimeout, errs.Unavailable, "did not answer in time"},
		{"body stalls", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `{"hidden_size": 40`)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, hub.ReasonTimeout, errs.Unavailable, "did not answer in time"},
		{"garbage", body("\x00\xffnot json at all"), hub.ReasonNotJSON, errs.Invalid, "is not a JSON object"},
		{"HTML page from a captive portal", body("<!doctype html><html>login</html>"), hub.ReasonNotJSON, errs.Invalid, "is HF_ENDPOINT a Hugging Face Hub?"},
		{"JSON array", body("[1,2,3]"), hub.ReasonNotJSON, errs.Invalid, "not a JSON object"},
		{"huge body, declared", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(hub.MaxConfigBytes+1))
			_, _ = w.Write(make([]byte, hub.MaxConfigBytes+1))
		}, hub.ReasonTooLarge, errs.Invalid, fmt.Sprintf("larger than %d KiB", hub.MaxConfigBytes>>10)},
		{"huge body, streamed without end", func(w http.ResponseWriter, r *http.Request) {
			chunk := []byte(strings.Repeat(" ", 64<<10))
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}, hub.ReasonTooLarge, errs.Invalid, "larger than"},
		{"redirect loop", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, path, http.StatusFound)
		}, hub.ReasonServer, errs.Unavailable, "redirected acme/Faulty-8B more than 5 times"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := hubtest.New(t)
			fake.Override(path, tt.handler)
			c := newClient(t, fake.URL, "", 300*time.Millisecond)
			start := time.Now()
			_, err := c.Config(t.Context(), repo)
			checkOutcome(t, err, tt.reason, tt.kind, tt.message)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %s", took)
			}
			if strings.Contains(errs.UserMessage(err), "secret-body-text") {
				t.Errorf("the answer's body reached the message: %v", err)
			}
		})
	}
}

func status(code int, text string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { http.Error(w, text, code) }
}

func body(s string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, s) }
}

func TestUnreachable(t *testing.T) {
	fake := hubtest.New(t)
	url := fake.URL
	fake.Close()
	c := newClient(t, url, hubtest.Token, time.Second)
	_, err := c.Config(t.Context(), "acme/Open-8B")
	checkOutcome(t, err, hub.ReasonUnreachable, errs.Unavailable, "cannot be reached (the connection was refused)")
}

// TestTokenStaysOnTheHub: a redirect to another origin (host or port) is
// followed without the token, and a relative one keeps it.
func TestTokenStaysOnTheHub(t *testing.T) {
	var elsewhereAuth []string
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhereAuth = append(elsewhereAuth, r.Header.Get("Authorization"))
		_, _ = io.WriteString(w, hubtest.Qwen3Config)
	}))
	defer elsewhere.Close()
	fake := fakeHub(t)
	fake.Override(hubtest.ConfigPath("acme/Moved-8B"), func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/cdn/config.json", http.StatusFound)
	})
	c := newClient(t, fake.URL, hubtest.Token, 5*time.Second)
	if _, err := c.Config(t.Context(), "acme/Moved-8B"); err != nil {
		t.Fatal(err)
	}
	if len(elsewhereAuth) != 1 || elsewhereAuth[0] != "" {
		t.Errorf("the other origin saw Authorization %q", elsewhereAuth)
	}
	if _, err := c.Config(t.Context(), "acme/Old-8B"); err != nil {
		t.Fatal(err)
	}
	var relayed int
	for _, r := range fake.Requests() {
		if r.Path == hubtest.ConfigPath("acme/Open-8B") {
			relayed++
			if r.Authorization != "Bearer "+hubtest.Token {
				t.Errorf("the relative redirect lost the token: %q", r.Authorization)
			}
		}
	}
	if relayed != 1 {
		t.Errorf("the renamed repo's redirect was followed %d times", relayed)
	}
}

// TestInvalidRepoIDsNeverReachTheHub: ids that could climb out of their
// path, or are not ids, are refused before any request.
func TestInvalidRepoIDsNeverReachTheHub(t *testing.T) {
	fake := fakeHub(t)
	c := newClient(t, fake.URL, hubtest.Token, time.Second)
	for _, id := range []string{"", "../etc/passwd", "acme/../../x", "acme/x/y", "acme/x?y=1", "acme/x#y", "acme/%2e%2e", `acme\x`, "acme/-x", "acme/x.", "a--b/c", "acme/x.git", "/x", "x/", "acme/x y", strings.Repeat("a", 97), "acme/ünï"} {
		if hub.ValidRepoID(id) {
			t.Errorf("ValidRepoID(%q) = true", id)
		}
		if _, err := c.Config(t.Context(), id); err == nil {
			t.Errorf("Config(%q) succeeded", id)
		}
		if _, _, err := c.Info(t.Context(), id); err == nil {
			t.Errorf("Info(%q) succeeded", id)
		}
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("%d requests reached the Hub: %+v", n, fake.Requests())
	}
	for _, id := range []string{"gpt2", "Qwen/Qwen3-8B", "01-ai/Yi-1.5-34B", "meta-llama/Llama-3.1-8B-Instruct", "a_b/c.d-e"} {
		if !hub.ValidRepoID(id) {
			t.Errorf("ValidRepoID(%q) = false", id)
		}
	}
}

func TestInfo(t *testing.T) {
	fake := fakeHub(t)
	c := newClient(t, fake.URL, "", time.Second)
	st, ok, err := c.Info(t.Context(), "acme/Open-8B")
	if err != nil || !ok || st.Total != 8_190_735_360 || st.Parameters["BF16"] != 8_190_735_360 {
		t.Fatalf("Info = %+v, %v, %v", st, ok, err)
	}
	// Gated repos' metadata is readable; this one has no safetensors field.
	if _, ok, err := c.Info(t.Context(), "acme/Gated-8B"); err != nil || ok {
		t.Errorf("gated Info: ok %v, err %v; want no count and no error", ok, err)
	}
	if _, _, err := c.Info(t.Context(), "acme/Nope"); hub.ReasonOf(err) != hub.ReasonNoRepo {
		t.Errorf("missing Info: %v", err)
	}
	var sawExpand bool
	for _, r := range fake.Requests() {
		sawExpand = sawExpand || r.Path == "/api/models/acme/Open-8B" && r.RawQuery == "expand=safetensors"
	}
	if !sawExpand {
		t.Errorf("no GET /api/models/acme/Open-8B?expand=safetensors in %+v", fake.Requests())
	}
}

func TestParseInfo(t *testing.T) {
	tests := []struct {
		body  string
		total int64
		ok    bool
		err   bool
	}{
		{`{"safetensors": {"parameters": {"BF16": 10, "F32": 5}, "total": 15}}`, 15, true, false},
		{`{"safetensors": {"parameters": {"BF16": 10, "F32": 5}}}`, 15, true, false},
		{`{"id": "x/y"}`, 0, false, false},
		{`{"safetensors": {"parameters": {"BF16": -1}}}`, 0, false, false},
		{`{"safetensors": {"parameters": {"BF16": 1.5}}}`, 0, false, false},
		{`{"safetensors": {"parameters": {"BF16": 1e300}}}`, 0, false, false},
		{`{"safetensors": {"parameters": {}, "total": 0}}`, 0, false, false},
		{`{"safetensors": "many"}`, 0, false, true},
		{`[]`, 0, false, true},
		{`nope`, 0, false, true},
	}
	for _, tt := range tests {
		st, ok, err := hub.ParseInfo([]byte(tt.body))
		if (err != nil) != tt.err || ok != tt.ok || st.Total != tt.total {
			t.Errorf("ParseInfo(%s) = %+v, %v, %v", tt.body, st, ok, err)
		}
	}
}

func TestSearch(t *testing.T) {
	fake := fakeHub(t)
	fake.Add(hubtest.Model{ID: "unsloth/Open-8B", Config: []byte(hubtest.Qwen3Config), Downloads: 10})
	fake.Add(hubtest.Model{ID: "acme/Open-8B-Extra", Config: []byte(hubtest.Qwen3Config), Downloads: 5000})
	c := newClient(t, fake.URL, "", time.Second)
	hits, err := c.Search(t.Context(), "open-8b")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.ID)
	}
	if got := strings.Join(ids, ","); got != "acme/Open-8B-Extra,unsloth/Open-8B,acme/Open-8B" {
		t.Errorf("hits %s, want the most downloaded first", got)
	}
	if _, err := c.Search(t.Context(), "../x"); err == nil {
		t.Error("searched for a path")
	}
	hits, err = hub.ParseSearch([]byte(`[{"id": "../x", "downloads": 9}, {"modelId": "old/style", "downloads": "many"}, {"id": "a/b", "downloads": 3}]`))
	if err != nil || len(hits) != 2 || hits[0].ID != "old/style" || hits[1].Downloads != 3 {
		t.Errorf("ParseSearch = %+v, %v", hits, err)
	}
}

func TestNewRefusesBadEndpoints(t *testing.T) {
	for _, e := range []string{"ftp://x", "huggingface.co", "https://user:pw@x", "http://"} {
		if _, err := hub.New(hub.Options{Endpoint: e}); err == nil || strings.Contains(err.Error(), "pw") {
			t.Errorf("New(%q) err = %v", e, err)
		}
	}
	c, err := hub.New(hub.Options{Endpoint: "https://hf-mirror.com/"})
	if err != nil || c.Endpoint() != "https://hf-mirror.com" {
		t.Errorf("trailing slash: %v %v", c, err)
	}
}

// TestCancelledContext: a caller that gives up stops the request at once.
func TestCancelledContext(t *testing.T) {
	fake := hubtest.New(t)
	fake.SetDelay(time.Minute)
	c := newClient(t, fake.URL, "", time.Minute)
	ctx, cancel := context.WithCancel(t.Context())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	start := time.Now()
	_, err := c.Config(ctx, "acme/Open-8B")
	if err == nil || !errors.Is(err, context.Canceled) && hub.ReasonOf(err) != hub.ReasonTimeout {
		t.Errorf("err = %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %s after cancel", time.Since(start))
	}
}

func FuzzParseInfo(f *testing.F) {
	f.Add([]byte(`{"safetensors": {"parameters": {"BF16": 10, "F32": 5}, "total": 15}}`))
	f.Add([]byte(`{"safetensors": {"parameters": {"U8": 99999999999999999999}}}`))
	f.Add([]byte(`{"safetensors": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, ok, err := hub.ParseInfo(data)
		if err != nil && ok {
			t.Fatal("ok with an error")
		}
		if ok && (st.Total <= 0 || st.Total > 1e14) {
			t.Fatalf("accepted total %d", st.Total)
		}
		for _, n := range st.Parameters {
			if n < 0 {
				t.Fatalf("negative count %d", n)
			}
		}
	})
}

func FuzzParseSearch(f *testing.F) {
	f.Add([]byte(`[{"id": "a/b", "downloads": 3}]`))
	f.Add([]byte(`[{"id": "../../etc", "downloads": -3}, {"modelId": "x"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		hits, err := hub.ParseSearch(data)
		if err != nil {
			return
		}
		if len(hits) > 20 {
			t.Fatalf("%d hits", len(hits))
		}
		for _, h := range hits {
			if !hub.ValidRepoID(h.ID) || h.Downloads < 0 {
				t.Fatalf("bad hit %+v", h)
			}
		}
	})
}

func FuzzValidRepoID(f *testing.F) {
	for _, s := range []string{"Qwen/Qwen3-8B", "../x", "a/b/c", "a..b", "gpt2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if !hub.ValidRepoID(id) {
			return
		}
		if strings.Count(id, "/") > 1 || strings.ContainsAny(id, "?#%\\ :@") || strings.Contains(id, "..") || strings.HasPrefix(id, "/") || strings.HasSuffix(id, "/") {
			t.Fatalf("accepted %q", id)
		}
	})
}
