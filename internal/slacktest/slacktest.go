// Package slacktest is a stand-in Slack for tests, speaking Slack's own
// protocol so that code under test runs its real client against it: the Web
// API methods vrambot uses (form or JSON arguments, the token checked,
// {"ok": ...} answers), response_url follow-ups, the external files upload
// flow, private file downloads, the Socket Mode WebSocket, and the v0 request
// signature Slack puts on the requests it sends to an app. Faults (5xx, 429
// with Retry-After, slow answers, Slack error codes) can be scripted per
// method. It is imported by tests only.
//
// Protocol references: docs/slack.md; https://api.slack.com/web (form and
// JSON arguments, ok/error answers), https://api.slack.com/authentication/verifying-requests-from-slack
// (signing), https://api.slack.com/messaging/files#uploading_files (upload).
package slacktest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Credentials the fake accepts. Code under test is configured with them.
const (
	BotToken      = "xoxb-slacktest-bot-token"
	AppToken      = "xapp-slacktest-app-token"
	SigningSecret = "8f742231b10e8888abcd99yyyzzz85a5"
	BotUserID     = "UBOT"
	BotID         = "BBOT"
	TeamID        = "T1"
)

// Names under which calls that are not Web API methods are recorded.
const (
	MethodResponseURL = "response_url"
	MethodUpload      = "upload"   // the POST to files.getUploadURLExternal's upload_url
	MethodDownload    = "download" // a GET of a private file URL
)

// Call is one request the fake received.
type Call struct {
	Method string // Web API method, or one of the Method* names above
	Path   string
	// Args are the call's arguments: form values, or a JSON body's top-level
	// fields (strings as they are, anything else as JSON text).
	Args url.Values
	Body []byte
	// Authorized reports whether the request carried the right token.
	Authorized bool
	// Status and Error are what the fake answered: the HTTP status and, for
	// an {"ok": false} answer, Slack's error code.
	Status int
	Error  string
	At     time.Time
}

// OK reports whether the fake answered the call with success.
func (c Call) OK() bool { return c.Status == http.StatusOK && c.Error == "" }

// Fault is what the fake does instead of (or before) answering a call.
type Fault struct {
	Delay      time.Duration // wait this long first (the client may give up)
	Status     int           // answer this HTTP status (500, 503, 429...) with no Slack body
	RetryAfter int           // with Status 429: the Retry-After header, in seconds
	Error      string        // answer {"ok": false, "error": Error}
}

// FaultFunc decides the fault for the n-th call (0-based) of a method; the
// zero Fault means answer normally.
type FaultFunc func(n int, c *Call) Fault

// FailFirst returns a FaultFunc that applies f to the first n calls.
func FailFirst(n int, f Fault) FaultFunc {
	return func(i int, _ *Call) Fault {
		if i < n {
			return f
		}
		return Fault{}
	}
}

// Posted is a message the fake holds (posted, updated or shared with a file).
type Posted struct {
	Channel  string
	TS       string
	ThreadTS string
	Text     string
	Blocks   string // JSON
}

// Server is the fake Slack.
type Server struct {
	URL string
	srv *httptest.Server

	mu       sync.Mutex
	calls    []Call
	counts   map[string]int
	faults   map[string]FaultFunc
	ts       int
	files    map[string]string // private download path -> content
	redirect map[string]string // private download path -> Location
	uploads  map[string][]byte // upload id -> content
	shares   map[string]Posted // file id -> the message sharing it
	messages []Posted
	views    int
	socket   *Socket
}

// New starts a fake Slack, closed when the test ends.
func New(tb testing.TB) *Server {
	tb.Helper()
	s := &Server{
		counts: map[string]int{}, faults: map[string]FaultFunc{},
		files: map[string]string{}, redirect: map[string]string{}, uploads: map[string][]byte{}, shares: map[string]Posted{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.serveAPI)
	mux.HandleFunc("/response/", s.serveResponseURL)
	mux.HandleFunc("/upload/", s.serveUpload)
	mux.HandleFunc("/files/", s.serveDownload)
	mux.HandleFunc("/socket", s.serveSocket)
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	tb.Cleanup(s.srv.Close)
	return s
}

// APIURL is the Web API base URL (VRAMBOT_SLACK_API_URL), with its slash.
func (s *Server) APIURL() string { return s.URL + "/api/" }

// ResponseURL is a response_url whose follow-ups are recorded under
// MethodResponseURL with the path /response/name.
func (s *Server) ResponseURL(name string) string { return s.URL + "/response/" + name }

// Client is an HTTP client for the fake's own server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// SetFaults makes f decide the fault of every later call of method (nil:
// none); f's n counts from the next call.
func (s *Server) SetFaults(method string, f FaultFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts[method] = 0
	if f == nil {
		delete(s.faults, method)
		return
	}
	s.faults[method] = f
}

// AddFile serves content as a private file at path (under /files/) that
// needs the bot token, and returns its url_private_download.
func (s *Server) AddFile(path, content string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = content
	return s.URL + path
}

// RedirectFile answers the private file at path (under /files/) with a
// 302 to location, and returns its URL.
func (s *Server) RedirectFile(path, location string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.redirect[path] = location
	return s.URL + path
}

// Calls returns the calls of method ("" for all), answered or not.
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Answered returns the calls of method that the fake answered with success.
func (s *Server) Answered(method string) []Call {
	var out []Call
	for _, c := range s.Calls(method) {
		if c.OK() {
			out = append(out, c)
		}
	}
	return out
}

// Replies returns the successful calls that put something in front of
// users: messages posted or updated, ephemeral messages, response_url
// follow-ups and shared files.
func (s *Server) Replies() []Call {
	var out []Call
	for _, c := range s.Calls("") {
		switch c.Method {
		case "chat.postMessage", "chat.update", "chat.postEphemeral", MethodResponseURL, "files.completeUploadExternal":
			if c.OK() {
				out = append(out, c)
			}
		}
	}
	return out
}

// Messages returns the messages the fake holds, oldest first.
func (s *Server) Messages() []Posted {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Posted(nil), s.messages...)
}

// Upload returns the content uploaded for a file id.
func (s *Server) Upload(id string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.uploads[id]
	return b, ok
}

// receive reads the request into a Call and picks its fault.
func (s *Server) receive(r *http.Request, method string, token string) (*Call, Fault) {
	body, _ := io.ReadAll(r.Body)
	c := &Call{Method: method, Path: r.URL.Path, Body: body, Args: url.Values{}, At: time.Now()}
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mediaType {
	case "application/x-www-form-urlencoded":
		c.Args, _ = url.ParseQuery(string(body))
	case "application/json":
		var fields map[string]json.RawMessage
		if json.Unmarshal(body, &fields) == nil {
			for k, v := range fields {
				var str string
				if json.Unmarshal(v, &str) == nil {
					c.Args.Set(k, str)
				} else {
					c.Args.Set(k, string(v))
				}
			}
		}
	}
	for k, vs := range r.URL.Query() {
		for _, v := range vs {
			c.Args.Add(k, v)
		}
	}
	bearer := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	c.Authorized = token == "" || bearer == token || c.Args.Get("token") == token
	c.Args.Del("token") // never kept: tests print calls
	s.mu.Lock()
	n := s.counts[method]
	s.counts[method]++
	f := s.faults[method]
	s.mu.Unlock()
	var fault Fault
	if f != nil {
		fault = f(n, c)
	}
	return c, fault
}

// finish records c with its answer.
func (s *Server) finish(c *Call, status int, slackErr string) {
	c.Status, c.Error = status, slackErr
	s.mu.Lock()
	s.calls = append(s.calls, *c)
	s.mu.Unlock()
}

// applyFault runs f and reports whether it answered the request.
func (s *Server) applyFault(w http.ResponseWriter, r *http.Request, c *Call, f Fault) bool {
	if f.Delay > 0 {
		select {
		case <-time.After(f.Delay):
		case <-r.Context().Done():
			s.finish(c, 0, "client gave up")
			return true
		}
	}
	switch {
	case f.Status != 0:
		if f.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(f.RetryAfter))
		}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(f.Status)
		_, _ = io.WriteString(w, "<html>fault</html>")
		s.finish(c, f.Status, "")
		return true
	case f.Error != "":
		writeSlack(w, map[string]any{"ok": false, "error": f.Error})
		s.finish(c, http.StatusOK, f.Error)
		return true
	}
	return false
}

func writeSlack(w http.ResponseWriter, v map[string]any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) nextTS() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ts++
	return fmt.Sprintf("1700000000.%06d", s.ts)
}

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	token := BotToken
	if method == "apps.connections.open" {
		token = AppToken
	}
	c, fault := s.receive(r, method, token)
	if s.applyFault(w, r, c, fault) {
		return
	}
	fail := func(code string) {
		writeSlack(w, map[string]any{"ok": false, "error": code})
		s.finish(c, http.StatusOK, code)
	}
	if !c.Authorized {
		fail("invalid_auth")
		return
	}
	handle, ok := apiMethods[method]
	if !ok {
		fail("unknown_method")
		return
	}
	resp, code := handle(s, c.Args)
	if code != "" {
		fail(code)
		return
	}
	resp["ok"] = true
	writeSlack(w, resp)
	s.finish(c, http.StatusOK, "")
}

// apiMethods are the Web API methods the fake answers: each returns its
// response, or the error code Slack would give.
var apiMethods = map[string]func(s *Server, a url.Values) (map[string]any, string){
	"auth.test": func(*Server, url.Values) (map[string]any, string) {
		return map[string]any{"url": "https://acme.slack.com/", "team": "acme", "user": "vrambot", "team_id": TeamID, "user_id": BotUserID, "bot_id": BotID}, ""
	},
	"chat.postMessage":             (*Server).postMessage,
	"chat.update":                  (*Server).updateMessage,
	"chat.postEphemeral":           (*Server).postEphemeral,
	"chat.getPermalink":            (*Server).permalink,
	"reactions.add":                func(*Server, url.Values) (map[string]any, string) { return map[string]any{}, "" },
	"views.open":                   viewMethod("views.open"),
	"views.push":                   viewMethod("views.push"),
	"views.publish":                viewMethod("views.publish"),
	"views.update":                 viewMethod("views.update"),
	"files.getUploadURLExternal":   (*Server).uploadURL,
	"files.completeUploadExternal": (*Server).completeUpload,
	"files.info":                   (*Server).fileInfo,
	"apps.connections.open": func(s *Server, _ url.Values) (map[string]any, string) {
		return map[string]any{"url": "ws" + strings.TrimPrefix(s.URL, "http") + "/socket"}, ""
	},
}

func (s *Server) postMessage(a url.Values) (map[string]any, string) {
	if a.Get("channel") == "" {
		return nil, "channel_not_found"
	}
	if a.Get("text") == "" && a.Get("blocks") == "" {
		return nil, "no_text"
	}
	ts := s.nextTS()
	s.mu.Lock()
	s.messages = append(s.messages, Posted{Channel: a.Get("channel"), TS: ts, ThreadTS: a.Get("thread_ts"), Text: a.Get("text"), Blocks: a.Get("blocks")})
	s.mu.Unlock()
	return map[string]any{"channel": a.Get("channel"), "ts": ts, "message": map[string]any{"text": a.Get("text"), "ts": ts}}, ""
}

func (s *Server) updateMessage(a url.Values) (map[string]any, string) {
	s.mu.Lock()
	found := false
	for i, m := range s.messages {
		if m.Channel == a.Get("channel") && m.TS == a.Get("ts") {
			s.messages[i].Text, s.messages[i].Blocks = a.Get("text"), a.Get("blocks")
			found = true
		}
	}
	s.mu.Unlock()
	if !found {
		return nil, "message_not_found"
	}
	return map[string]any{"channel": a.Get("channel"), "ts": a.Get("ts"), "text": a.Get("text")}, ""
}

func (s *Server) postEphemeral(a url.Values) (map[string]any, string) {
	if a.Get("user") == "" {
		return nil, "user_not_in_channel"
	}
	return map[string]any{"message_ts": s.nextTS()}, ""
}

func (s *Server) permalink(a url.Values) (map[string]any, string) {
	return map[string]any{"channel": a.Get("channel"), "permalink": "https://acme.slack.com/archives/" + a.Get("channel") + "/p" + strings.ReplaceAll(a.Get("message_ts"), ".", "")}, ""
}

// viewMethod answers a views.* method: open and push need a trigger id,
// publish a user.
func viewMethod(method string) func(s *Server, a url.Values) (map[string]any, string) {
	return func(s *Server, a url.Values) (map[string]any, string) {
		if (method == "views.open" || method == "views.push") && a.Get("trigger_id") == "" {
			return nil, "invalid_trigger_id"
		}
		if method == "views.publish" && a.Get("user_id") == "" {
			return nil, "invalid_arguments"
		}
		var view map[string]any
		if err := json.Unmarshal([]byte(a.Get("view")), &view); err != nil {
			return nil, "invalid_arguments"
		}
		s.mu.Lock()
		s.views++
		view["id"] = fmt.Sprintf("V%04d", s.views)
		s.mu.Unlock()
		return map[string]any{"view": view}, ""
	}
}

func (s *Server) uploadURL(a url.Values) (map[string]any, string) {
	if a.Get("filename") == "" || a.Get("length") == "" {
		return nil, "invalid_arguments"
	}
	s.mu.Lock()
	id := fmt.Sprintf("F%04d", len(s.uploads)+1)
	s.uploads[id] = nil
	s.mu.Unlock()
	return map[string]any{"upload_url": s.URL + "/upload/" + id, "file_id": id}, ""
}

func (s *Server) completeUpload(a url.Values) (map[string]any, string) {
	var files []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(a.Get("files")), &files); err != nil || len(files) == 0 {
		return nil, "invalid_arguments"
	}
	var out []map[string]any
	for _, f := range files {
		content, ok := s.Upload(f.ID)
		if !ok || content == nil {
			return nil, "file_not_found"
		}
		out = append(out, map[string]any{"id": f.ID, "title": f.Title})
	}
	if ch := a.Get("channel_id"); ch != "" {
		// Slack shares the file in a message of its own; files.info
		// lists that share (its ts) afterwards.
		m := Posted{Channel: ch, TS: s.nextTS(), ThreadTS: a.Get("thread_ts"), Text: a.Get("initial_comment"), Blocks: a.Get("blocks")}
		s.mu.Lock()
		s.messages = append(s.messages, m)
		for _, f := range files {
			s.shares[f.ID] = m
		}
		s.mu.Unlock()
	}
	return map[string]any{"files": out}, ""
}

func (s *Server) fileInfo(a url.Values) (map[string]any, string) {
	s.mu.Lock()
	m, shared := s.shares[a.Get("file")]
	_, uploaded := s.uploads[a.Get("file")]
	s.mu.Unlock()
	if !uploaded {
		return nil, "file_not_found"
	}
	file := map[string]any{"id": a.Get("file")}
	if shared {
		kind := "public"
		if strings.HasPrefix(m.Channel, "G") || strings.HasPrefix(m.Channel, "D") {
			kind = "private"
		}
		file["shares"] = map[string]any{kind: map[string]any{m.Channel: []map[string]any{{"ts": m.TS, "thread_ts": m.ThreadTS}}}}
	}
	return map[string]any{"file": file}, ""
}

// serveResponseURL takes a response_url follow-up: a JSON message.
func (s *Server) serveResponseURL(w http.ResponseWriter, r *http.Request) {
	c, fault := s.receive(r, MethodResponseURL, "")
	if s.applyFault(w, r, c, fault) {
		return
	}
	var msg map[string]any
	if json.Unmarshal(c.Body, &msg) != nil {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, "invalid_payload")
		s.finish(c, http.StatusBadRequest, "invalid_payload")
		return
	}
	writeSlack(w, map[string]any{"ok": true})
	s.finish(c, http.StatusOK, "")
}

// serveUpload takes the file of step 2 of the upload flow: a multipart form
// (field "file") or a raw body, to an upload_url handed out before.
func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/upload/")
	c, fault := s.receive(r, MethodUpload, "")
	if s.applyFault(w, r, c, fault) {
		return
	}
	content := c.Body
	if mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil && strings.HasPrefix(mt, "multipart/") {
		content = nil
		mr := multipart.NewReader(bytes.NewReader(c.Body), params["boundary"])
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			if p.FormName() == "file" {
				content, _ = io.ReadAll(p)
			}
		}
	}
	s.mu.Lock()
	_, known := s.uploads[id]
	if known && content != nil {
		s.uploads[id] = content
	}
	s.mu.Unlock()
	if !known || content == nil {
		w.WriteHeader(http.StatusBadRequest)
		s.finish(c, http.StatusBadRequest, "unknown upload")
		return
	}
	c.Body = content
	_, _ = fmt.Fprintf(w, "OK - %d", len(content))
	s.finish(c, http.StatusOK, "")
}

// serveDownload serves private files to the bot token only.
func (s *Server) serveDownload(w http.ResponseWriter, r *http.Request) {
	c, fault := s.receive(r, MethodDownload, BotToken)
	if s.applyFault(w, r, c, fault) {
		return
	}
	s.mu.Lock()
	content, ok := s.files[r.URL.Path]
	location, redirect := s.redirect[r.URL.Path]
	s.mu.Unlock()
	switch {
	case redirect:
		http.Redirect(w, r, location, http.StatusFound)
		s.finish(c, http.StatusFound, "")
	case !c.Authorized:
		http.Error(w, "no token", http.StatusForbidden)
		s.finish(c, http.StatusForbidden, "")
	case !ok:
		http.NotFound(w, r)
		s.finish(c, http.StatusNotFound, "")
	default:
		_, _ = io.WriteString(w, content)
		s.finish(c, http.StatusOK, "")
	}
}
