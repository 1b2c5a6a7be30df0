// Package hubtest is a fake Hugging Face Hub for tests: an httptest server
// that answers the three endpoints vrambot uses the way the Hub does
// (docs/hub-api.md): resolve/main/config.json with X-Error-Code on
// failures (RepoNotFound as 401 without a token, GatedRepo as 401 or 403,
// EntryNotFound, invalid credentials), relative redirects for renamed
// repos, /api/models/{repo} with the safetensors field, and the search
// listing. Tests add models, override single paths to inject faults, turn
// hostile (huge configs, slow, 5xx or 429 answers for whole namespaces or
// for every search), and read back every request the fake saw (with its
// Authorization header) or how many of each kind.
package hubtest

import (
	"cmp"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vrambot/vrambot/hub"
)

// Qwen3Config is the shape keys of Qwen/Qwen3-8B's config.json (as
// vendored by ai-dynamo/aiconfigurator, model_configs/Qwen--Qwen3-8B_config.json),
// whose Hub safetensors total is Qwen3Params (docs/architectures.md).
// Tests serve it under repo names no catalog holds.
const Qwen3Config = `{"architectures": ["Qwen3ForCausalLM"], "head_dim": 128, "hidden_size": 4096,
 "intermediate_size": 12288, "max_position_embeddings": 40960, "model_type": "qwen3",
 "num_attention_heads": 32, "num_hidden_layers": 36, "num_key_value_heads": 8,
 "tie_word_embeddings": false, "vocab_size": 151936}`

// Qwen3Params is Qwen/Qwen3-8B's Hub safetensors total.
const Qwen3Params = 8_190_735_360

// Token is the token the fake accepts; gated models grant it access
// unless Model.Ungranted is set.
const Token = "hf_test_token_accepted_by_the_fake"

// Model is one repo on the fake Hub.
type Model struct {
	ID string
	// Config is the config.json text; nil answers EntryNotFound.
	Config []byte
	// Safetensors is the model info's safetensors field; nil omits it.
	Safetensors *hub.Safetensors
	Downloads   int64
	// Gated repos need Token for their files (not for their model info).
	Gated bool
	// Ungranted: Token is valid but has not been granted this gated repo.
	Ungranted bool
	// Private repos are invisible without Token.
	Private bool
}

// Request is one request the fake received.
type Request struct {
	Method, Path, RawQuery, Authorization string
	At                                    time.Time
}

// Server is the fake Hub.
type Server struct {
	*httptest.Server

	mu        sync.Mutex
	models    map[string]Model  // by lower-case id
	renamed   map[string]string // lower-case old id -> new id
	overrides map[string]http.HandlerFunc
	requests  []Request
	delay     time.Duration
	// faults by lower-case repo-id prefix; searchFault for every search.
	faults      map[string]Fault
	searchFault *Fault
}

// Fault is a hostile answer (FailRepos, FailSearch): wait Delay (or until
// the client gives up), then answer Status with Retry-After when set; a
// zero Status answers as the fake would have after the wait.
type Fault struct {
	Status     int
	Delay      time.Duration
	RetryAfter int // seconds
}

// FailRepos answers every config.json and model-info request of a repo
// whose id starts with prefix (ignoring case) with f.
func (s *Server) FailRepos(prefix string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[strings.ToLower(prefix)] = f
}

// FailSearch answers every search with f.
func (s *Server) FailSearch(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.searchFault = &f
}

// Counts is how many requests of each endpoint the fake received.
type Counts struct{ Configs, Infos, Searches, Other int }

// Total is every request.
func (c Counts) Total() int { return c.Configs + c.Infos + c.Searches + c.Other }

// Counts returns how many requests of each endpoint the fake received.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	var c Counts
	for _, r := range s.requests {
		switch endpointOf(r.Path) {
		case endpointConfig:
			c.Configs++
		case endpointInfo:
			c.Infos++
		case endpointSearch:
			c.Searches++
		default:
			c.Other++
		}
	}
	return c
}

// HugeConfig is Qwen3Config with a "padding" key of empty arrays, in lists
// of a thousand, making the file about size bytes: valid JSON, a valid
// config, and the hostile shape of issue 26 (an 8 MiB file of 2.7 million
// empty arrays).
func HugeConfig(size int) []byte {
	head := strings.TrimSuffix(Qwen3Config, "}") + `, "padding": [`
	list := "[" + strings.Repeat("[],", 999) + "[]]"
	n := max((size-len(head)-3)/(len(list)+1), 1)
	return []byte(head + strings.Repeat(list+",", n-1) + list + "]}")
}

type endpoint int

const (
	endpointOther endpoint = iota
	endpointConfig
	endpointInfo
	endpointSearch
)

// endpointOf classifies a request path, and names its repo.
func endpointOf(path string) endpoint {
	switch {
	case path == "/api/models":
		return endpointSearch
	case strings.HasPrefix(path, "/api/models/"):
		return endpointInfo
	case strings.HasSuffix(path, "/resolve/main/config.json"):
		return endpointConfig
	}
	return endpointOther
}

// repoOf is the repo id in a config.json or model-info path.
func repoOf(path string) string {
	if r, ok := strings.CutPrefix(path, "/api/models/"); ok {
		return r
	}
	return strings.TrimSuffix(strings.TrimPrefix(path, "/"), "/resolve/main/config.json")
}

// faultFor is the fault that applies to a request, if any.
func (s *Server) faultFor(path string) *Fault {
	switch endpointOf(path) {
	case endpointSearch:
		return s.searchFault
	case endpointConfig, endpointInfo:
		repo := strings.ToLower(repoOf(path))
		for prefix, f := range s.faults {
			if strings.HasPrefix(repo, prefix) {
				return &f
			}
		}
	}
	return nil
}

// New starts a fake Hub, closed when the test ends.
func New(tb testing.TB) *Server {
	tb.Helper()
	s := &Server{models: map[string]Model{}, renamed: map[string]string{}, overrides: map[string]http.HandlerFunc{}, faults: map[string]Fault{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.Close)
	return s
}

// Add puts a model on the fake Hub.
func (s *Server) Add(m Model) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models[strings.ToLower(m.ID)] = m
}

// Rename makes old answer with a relative redirect to newID, as the Hub
// does for renamed repos.
func (s *Server) Rename(old, newID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.renamed[strings.ToLower(old)] = newID
}

// Override answers requests for exactly path (without the query) with h.
func (s *Server) Override(path string, h http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.overrides[path] = h
}

// SetDelay makes every answer wait d first (or until the client gives up).
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// Requests returns what the fake has seen, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// ConfigPath is the path of repo's config.json.
func ConfigPath(repo string) string { return "/" + repo + "/resolve/main/config.json" }

// InfoPath is the path of repo's model info.
func InfoPath(repo string) string { return "/api/models/" + repo }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Authorization: r.Header.Get("Authorization"), At: time.Now()})
	override := s.overrides[r.URL.Path]
	delay := s.delay
	fault := s.faultFor(r.URL.Path)
	s.mu.Unlock()
	if fault != nil {
		delay += fault.Delay
	}
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if fault != nil && fault.Status != 0 {
		if fault.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(fault.RetryAfter))
		}
		hubError(w, fault.Status, "", http.StatusText(fault.Status))
		return
	}
	if override != nil {
		override(w, r)
		return
	}
	auth := r.Header.Get("Authorization")
	if auth != "" && auth != "Bearer "+Token {
		hubError(w, http.StatusUnauthorized, "", "Invalid credentials in Authorization header")
		return
	}
	authed := auth != ""
	switch endpointOf(r.URL.Path) {
	case endpointSearch:
		s.search(w, r.URL.Query().Get("search"), authed)
	case endpointInfo:
		s.info(w, repoOf(r.URL.Path), authed)
	case endpointConfig:
		s.config(w, r, repoOf(r.URL.Path), authed)
	default:
		http.NotFound(w, r)
	}
}

// lookup finds a visible model; the Hub hides private repos without a token.
func (s *Server) lookup(id string, authed bool) (Model, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.models[strings.ToLower(id)]
	if !ok || m.Private && !authed {
		return Model{}, false
	}
	return m, true
}

func (s *Server) renamedTo(id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.renamed[strings.ToLower(id)]
	return n, ok
}

// repoNotFound is the Hub's answer for a missing repo: 401 without a
// token (the same as for private and gated ones), 404 with one.
func repoNotFound(w http.ResponseWriter, authed bool) {
	status := http.StatusUnauthorized
	if authed {
		status = http.StatusNotFound
	}
	hubError(w, status, "RepoNotFound", "Repository not found")
}

func hubError(w http.ResponseWriter, status int, code, msg string) {
	if code != "" {
		w.Header().Set("X-Error-Code", code)
	}
	w.Header().Set("X-Error-Message", msg)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

func (s *Server) config(w http.ResponseWriter, r *http.Request, id string, authed bool) {
	if to, ok := s.renamedTo(id); ok {
		w.Header().Set("Location", ConfigPath(to)) // relative, as the Hub sends it
		w.WriteHeader(http.StatusTemporaryRedirect)
		return
	}
	m, ok := s.lookup(id, authed)
	switch {
	case !ok:
		repoNotFound(w, authed)
	case m.Gated && !authed:
		hubError(w, http.StatusUnauthorized, "GatedRepo", "Access to model "+m.ID+" is restricted. You must have access to it and be authenticated to access it. Please log in.")
	case m.Gated && m.Ungranted:
		hubError(w, http.StatusForbidden, "GatedRepo", "Access to model "+m.ID+" is restricted and you are not in the authorized list.")
	case m.Config == nil:
		hubError(w, http.StatusNotFound, "EntryNotFound", "Entry not found")
	default:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Repo-Commit", "0123456789abcdef0123456789abcdef01234567")
		_, _ = w.Write(m.Config)
	}
}

func (s *Server) info(w http.ResponseWriter, id string, authed bool) {
	m, ok := s.lookup(id, authed)
	if !ok {
		repoNotFound(w, authed)
		return
	}
	doc := map[string]any{"_id": "0123456789abcdef01234567", "id": m.ID}
	if m.Safetensors != nil {
		doc["safetensors"] = m.Safetensors
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(doc)
}

func (s *Server) search(w http.ResponseWriter, term string, authed bool) {
	s.mu.Lock()
	var hits []Model
	for _, m := range s.models {
		if strings.Contains(strings.ToLower(m.ID), strings.ToLower(term)) && (!m.Private || authed) {
			hits = append(hits, m)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(hits, func(a, b Model) int {
		return cmp.Or(cmp.Compare(b.Downloads, a.Downloads), strings.Compare(a.ID, b.ID))
	})
	out := []map[string]any{}
	for _, m := range hits {
		out = append(out, map[string]any{"_id": "x", "id": m.ID, "modelId": m.ID, "downloads": m.Downloads, "likes": 1})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}
