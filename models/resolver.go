// Package models resolves what a user names as a model to an
// architecture, in the order of issue 10: the embedded catalog, then
// config.json files fetched from the Hugging Face Hub earlier and cached in
// the store, then the Hub itself (docs/hub-api.md). Translating config.json
// into an architecture is advisor/hfconfig's job; this package fetches,
// caches and routes. It also reads a local config.json (vram --config, a
// file attached in Slack) and keeps the ids most recently resolved from the
// Hub, for the Slack form's model typeahead.
package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/vrambot/vrambot/advisor/catalog"
	"github.com/vrambot/vrambot/advisor/hfconfig"
	"github.com/vrambot/vrambot/hub"
	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/store"
)

// Hub is what the resolver needs from the Hugging Face Hub (hub.Client).
type Hub interface {
	Config(ctx context.Context, repo string) ([]byte, error)
	Info(ctx context.Context, repo string) (hub.Safetensors, bool, error)
	Search(ctx context.Context, name string) ([]hub.Hit, error)
}

// Cache is what the resolver needs from the store: values with a TTL and
// one bounded log (store.Store, Redis in serve, memory in the CLI).
type Cache interface {
	Get(ctx context.Context, key string) ([]byte, error)
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	Append(ctx context.Context, log string, entry []byte, maxLen int) error
	Entries(ctx context.Context, log string, n int) ([][]byte, error)
}

// Defaults for Options' zero values.
const (
	// DefaultTimeout bounds one whole Hub lookup (search, config.json and
	// the parameter count): the CLI's 3 s of issue 10. serve passes more.
	DefaultTimeout = 3 * time.Second
	// DefaultTTL keeps a fetched config.json a day: configs of published
	// models rarely change, and a daily re-read picks up corrections at one
	// request per model per day (the Hub's resolver quota is thousands per
	// 5 minutes, docs/hub-api.md §5).
	DefaultTTL = 24 * time.Hour
	// MissingTTL remembers a repo the Hub does not have for a short while,
	// so a typo repeated in a channel is not a request each time, yet a
	// repo published a moment ago is found soon.
	MissingTTL = 10 * time.Minute
	// RecentLen bounds the log of Hub-resolved ids.
	RecentLen = 100
)

// Store keys (the Redis store prefixes them with "vrambot:").
const (
	configKeyPrefix = "hub:config:" // + lower-case repo id: a cachedConfig
	nameKeyPrefix   = "hub:name:"   // + lower-case bare name: the repo id a search chose
	recentLog       = "hub:recent"  // repo ids, oldest first
	cacheVersion    = 1
)

// cacheTimeout bounds each store call, so a slow Redis costs a lookup at
// most this before the resolver goes on without it.
const cacheTimeout = 500 * time.Millisecond

// Options configure a Resolver.
type Options struct {
	// Hub is nil when HF_HUB_OFFLINE=1: the resolver then never calls it
	// and uses the catalog and the cache only.
	Hub Hub
	// Endpoint names the Hub in messages (HF_ENDPOINT's host).
	Endpoint string
	// Cache is the store; nil caches nothing.
	Cache   Cache
	Timeout time.Duration
	TTL     time.Duration
	Logger  *slog.Logger
	// Now is the clock for fetched_at stamps (time.Now when nil).
	Now func() time.Time
}

// Resolver finds architectures. It is safe for concurrent use; lookups of
// one repo that overlap share one Hub request.
type Resolver struct {
	opts   Options
	flight singleflight.Group

	// remembered is when this process last logged each repo as recent
	// (lower-case id → time.Time), so a busy model costs one log write per
	// rememberEvery, not one per answer.
	remembered sync.Map
}

// rememberEvery is how stale the recent-models log may be per repo.
const rememberEvery = time.Minute

// New returns a Resolver.
func New(opts Options) *Resolver {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Endpoint == "" {
		opts.Endpoint = "huggingface.co"
	}
	return &Resolver{opts: opts}
}

// Source says where an architecture came from.
type Source string

// Sources.
const (
	SourceCatalog Source = "catalog" // the embedded catalog
	SourceCache   Source = "cache"   // a config.json fetched from the Hub earlier
	SourceHub     Source = "hub"     // a config.json fetched now
	SourceFile    Source = "file"    // a local config.json (--config, a Slack attachment)
	SourceSize    Source = "size"    // the Hub could not be asked: a typical shape for the size in the name
)

// Resolution is a resolved model.
type Resolution struct {
	Model  catalog.Model
	Source Source
	// RepoID is the Hub repo the architecture was read from ("" for the
	// catalog and for local files).
	RepoID string
	// Notes are the assumptions made, for the reply.
	Notes []string
}

// Name is how the reply names the model: the Hub id for a Hub model.
func (r Resolution) Name() string {
	if r.RepoID != "" {
		return r.RepoID
	}
	if len(r.Model.Aliases) > 0 {
		return r.Model.Aliases[0]
	}
	return r.Model.Name
}

// Resolve finds the architecture of ref: a catalog name or alias, a Hub
// repo id ("Qwen/Qwen3-8B", also as a huggingface.co URL), or a bare model
// name ("Qwen3-8B"), which the Hub's search maps to the most downloaded repo
// of exactly that name. A failure is a *LookupError saying what the catalog
// and the Hub said.
func (r *Resolver) Resolve(ctx context.Context, ref string) (Resolution, error) {
	ref = RepoRef(ref)
	if m, ok := catalog.LookupModel(ref); ok {
		return Resolution{Model: m, Source: SourceCatalog}, nil
	}
	switch {
	case strings.Contains(ref, "/") && hub.ValidRepoID(ref):
		return r.resolveRepo(ctx, ref, ref)
	case hub.ValidName(ref):
		return r.resolveName(ctx, ref)
	}
	return Resolution{}, lookupError(ref, errs.NotFound, "not a Hugging Face model id (namespace/name) or name either", nil)
}

// RepoRef turns a pasted Hub URL (https://huggingface.co/Qwen/Qwen3-8B,
// hf.co/Qwen/Qwen3-8B/tree/main) into its repo id; other text is returned
// trimmed.
func RepoRef(ref string) string {
	ref = strings.TrimSpace(ref)
	l := strings.ToLower(ref)
	for _, p := range []string{"https://huggingface.co/", "http://huggingface.co/", "huggingface.co/", "https://hf.co/", "hf.co/"} {
		if strings.HasPrefix(l, p) {
			parts := strings.SplitN(ref[len(p):], "/", 3)
			if len(parts) >= 2 {
				return parts[0] + "/" + parts[1]
			}
			return parts[0]
		}
	}
	return ref
}

// cachedConfig is a Hub answer kept in the store. The config is kept as
// text, not as its translation, so a better advisor/hfconfig reads cached
// entries better too (translation takes microseconds).
type cachedConfig struct {
	V           int              `json:"v"`
	Repo        string           `json:"repo"`
	Config      json.RawMessage  `json:"config,omitempty"`
	Safetensors *hub.Safetensors `json:"safetensors,omitempty"`
	FetchedAt   time.Time        `json:"fetched_at"`
	// Missing is the Hub's "no such repo" message, cached for MissingTTL.
	Missing string `json:"missing,omitempty"`
}

// resolveRepo resolves a repo id; asked is what the user typed (the same
// id, or the bare name a search mapped to it).
func (r *Resolver) resolveRepo(ctx context.Context, repo, asked string) (Resolution, error) {
	if c, ok := r.cached(ctx, configKey(repo)); ok {
		if c.Missing != "" {
			return Resolution{}, lookupError(asked, errs.NotFound, "looked up on the Hub: "+c.Missing, nil)
		}
		res, err := r.translate(c, SourceCache)
		if err == nil {
			r.remember(ctx, c.Repo)
			return res, nil
		}
		r.opts.Logger.Warn("cached config.json no longer reads; fetching it again", "repo", repo, "err", err)
	}
	if r.opts.Hub == nil {
		return r.fallback(asked, offlineOutcome, errs.NotFound, nil, sizeHint)
	}
	c, err := r.fetch(ctx, repo)
	if err != nil {
		return r.hubFailure(ctx, repo, asked, err)
	}
	res, err := r.translate(c, SourceHub)
	if err != nil {
		// err's message is in the outcome; it is not wrapped, so that
		// errs.UserMessage shows this message and not only the inner one.
		return Resolution{}, &LookupError{Ref: asked, Kind: errs.Invalid,
			Outcome: fmt.Sprintf("looked up on the Hub: found %s, but its config.json cannot be read: %s", repo, errs.UserMessage(err))}
	}
	r.store(ctx, configKey(repo), c, r.opts.TTL)
	r.remember(ctx, c.Repo)
	return res, nil
}

// offlineOutcome is what a lookup says under HF_HUB_OFFLINE=1.
const offlineOutcome = "not looked up on the Hub (HF_HUB_OFFLINE=1) and not in the cache"

// sizeHint is what a user can give instead when the Hub cannot be asked.
const sizeHint = "give its size (e.g. 8b) or its config.json"

// hubFailure turns a failed fetch into the answer: a refusal that says
// what the Hub said, or, when the Hub could not be asked at all, the
// typical shape of the size in the name.
func (r *Resolver) hubFailure(ctx context.Context, repo, asked string, err error) (Resolution, error) {
	outcome := "looked up on the Hub: " + hubMessage(err)
	kind := errs.KindOf(err)
	switch hub.ReasonOf(err) {
	case hub.ReasonNoRepo:
		r.store(ctx, configKey(repo), cachedConfig{V: cacheVersion, Repo: repo, Missing: hubMessage(err), FetchedAt: r.opts.Now().UTC()}, MissingTTL)
	case hub.ReasonNoFile, hub.ReasonTimeout, hub.ReasonUnreachable, hub.ReasonServer, hub.ReasonRateLimited:
		// The Hub could not tell us the shape: a size in the name still
		// says more than a refusal. A repo without config.json (GGUF)
		// is answered the same way.
		return r.fallback(asked, outcome, kind, err, sizeHint)
	}
	if kind == errs.Internal {
		kind = errs.Unavailable
	}
	return Resolution{}, lookupError(asked, kind, outcome, err)
}

// hubMessage is the user's part of a Hub error (hub.Error.Error also
// carries the cause, for the log).
func hubMessage(err error) string {
	if e, ok := errors.AsType[*hub.Error](err); ok {
		return e.Message
	}
	return errs.UserMessage(err)
}

// fallback answers with the typical architecture of the size in the name
// (issue 10: "answering with the bare-size shape and saying so beats
// refusing"), or refuses with outcome and hint (what the user can give
// instead) when the name carries no size.
func (r *Resolver) fallback(asked, outcome string, kind errs.Kind, cause error, hint string) (Resolution, error) {
	n, ok := SizeInName(asked)
	if !ok {
		return Resolution{}, lookupError(asked, kind, outcome+"; "+hint, cause)
	}
	sug := catalog.SuggestModel(asked)
	m := catalog.ModelForSize(n)
	m.Name = asked
	note := fmt.Sprintf("%s: not in the catalog — %s: estimated as a typical %s model from the size in its name", asked, outcome, catalog.FormatSize(n))
	if sug != "" {
		note += fmt.Sprintf(" (did you mean '%s'?)", sug)
	}
	return Resolution{Model: m, Source: SourceSize, Notes: []string{note}}, nil
}

// fetch gets repo's config.json and parameter count, one request per
// repo however many lookups wait for it. The fetch runs detached from any
// one caller (so a caller that gives up does not fail the others) but
// under the resolver's timeout.
func (r *Resolver) fetch(ctx context.Context, repo string) (cachedConfig, error) {
	ch := r.flight.DoChan(strings.ToLower(repo), func() (any, error) {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.opts.Timeout)
		defer cancel()
		type info struct {
			st  hub.Safetensors
			ok  bool
			err error
		}
		infoc := make(chan info, 1)
		go func() {
			st, ok, err := r.opts.Hub.Info(fctx, repo)
			infoc <- info{st, ok, err}
		}()
		data, err := r.opts.Hub.Config(fctx, repo)
		if err != nil {
			cancel() // the count is of no use without the config
			<-infoc
			return cachedConfig{}, err
		}
		c := cachedConfig{V: cacheVersion, Repo: repo, Config: data, FetchedAt: r.opts.Now().UTC()}
		if in := <-infoc; in.err != nil {
			r.opts.Logger.Info("Hub parameter count not read; using config.json alone", "repo", repo, "err", in.err)
		} else if in.ok {
			c.Safetensors = &in.st
		}
		return c, nil
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			r.opts.Logger.Info("Hub lookup failed", "repo", repo, "reason", string(hub.ReasonOf(res.Err)), "err", res.Err)
			return cachedConfig{}, res.Err
		}
		return res.Val.(cachedConfig), nil
	case <-ctx.Done():
		return cachedConfig{}, &hub.Error{Reason: hub.ReasonTimeout, Repo: repo, Err: ctx.Err(), Message: "the Hub lookup was given up before the Hub answered"}
	}
}

// translate reads a cached or fetched config with advisor/hfconfig and
// decides its parameter count.
func (r *Resolver) translate(c cachedConfig, src Source) (Resolution, error) {
	m, notes, err := hfconfig.Read(c.Config, c.Repo)
	if err != nil {
		return Resolution{}, err
	}
	var head string
	switch src {
	case SourceHub:
		head = fmt.Sprintf("%s: not in the catalog — looked up on the Hub (%s): architecture read from its config.json", c.Repo, r.opts.Endpoint)
	default:
		head = fmt.Sprintf("%s: not in the catalog — architecture read from its config.json on the Hub (%s), fetched %s and cached", c.Repo, r.opts.Endpoint, c.FetchedAt.Format("2006-01-02 15:04 MST"))
	}
	out := Resolution{Model: m, Source: src, RepoID: c.Repo, Notes: append([]string{head}, notes...)}
	if c.Safetensors != nil {
		var note string
		out.Model.Params, note = ParamsFromHub(m, *c.Safetensors)
		out.Notes = append(out.Notes, note)
	}
	return out, nil
}

// resolveName maps a bare name to a repo through the Hub's search: the
// most downloaded repo whose name (after the namespace) is exactly it,
// ignoring case. The choice is cached and stated in the reply.
func (r *Resolver) resolveName(ctx context.Context, name string) (Resolution, error) {
	key := nameKey(name)
	if c, ok := r.cached(ctx, key); ok && hub.ValidRepoID(c.Repo) {
		return r.named(ctx, name, c.Repo)
	}
	if r.opts.Hub == nil {
		return r.fallback(name, offlineOutcome, errs.NotFound, nil, sizeHint)
	}
	sctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	hits, err := r.opts.Hub.Search(sctx, name)
	cancel()
	if err != nil {
		if hub.ReasonOf(err) == hub.ReasonNoRepo {
			// A mirror without the listing endpoint answers 404.
			err = &hub.Error{Reason: hub.ReasonServer, Repo: name, Err: err, Message: "the Hub at " + r.opts.Endpoint + " does not answer name searches"}
		}
		return r.hubFailure(ctx, name, name, err)
	}
	var similar []string
	for _, h := range hits {
		_, n, _ := strings.Cut(h.ID, "/")
		if n == "" {
			n = h.ID
		}
		if strings.EqualFold(n, name) {
			r.store(ctx, key, cachedConfig{V: cacheVersion, Repo: h.ID, FetchedAt: r.opts.Now().UTC()}, r.opts.TTL)
			return r.named(ctx, name, h.ID)
		}
		if len(similar) < 3 {
			similar = append(similar, h.ID)
		}
	}
	outcome := fmt.Sprintf("looked up on the Hub: no model named exactly %s there", name)
	hint := "give its Hub id (namespace/name)"
	if len(similar) > 0 {
		outcome += " (it has " + strings.Join(similar, ", ") + ")"
		hint = "give the full id"
	}
	return r.fallback(name, outcome, errs.NotFound, nil, hint)
}

// named resolves the repo a search chose for name and says so.
func (r *Resolver) named(ctx context.Context, name, repo string) (Resolution, error) {
	res, err := r.resolveRepo(ctx, repo, name)
	if err != nil {
		return res, err
	}
	if res.RepoID != "" {
		res.Notes = append([]string{fmt.Sprintf("'%s' read as %s, the most downloaded Hub model of that name", name, res.RepoID)}, res.Notes...)
	}
	return res, nil
}

func configKey(repo string) string { return configKeyPrefix + strings.ToLower(repo) }
func nameKey(name string) string   { return nameKeyPrefix + strings.ToLower(name) }

// cached reads one cache entry; a miss, a store failure or an entry of
// another format version is "not cached".
func (r *Resolver) cached(ctx context.Context, key string) (cachedConfig, bool) {
	if r.opts.Cache == nil {
		return cachedConfig{}, false
	}
	cctx, cancel := context.WithTimeout(ctx, cacheTimeout)
	defer cancel()
	raw, err := r.opts.Cache.Get(cctx, key)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			r.opts.Logger.Warn("model cache unreadable; asking the Hub", "key", key, "err", err)
		}
		return cachedConfig{}, false
	}
	var c cachedConfig
	if err := json.Unmarshal(raw, &c); err != nil || c.V != cacheVersion {
		return cachedConfig{}, false
	}
	return c, true
}

func (r *Resolver) store(ctx context.Context, key string, c cachedConfig, ttl time.Duration) {
	if r.opts.Cache == nil {
		return
	}
	raw, err := json.Marshal(c)
	if err != nil {
		r.opts.Logger.Error("model cache entry not encoded", "key", key, "err", err)
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cacheTimeout)
	defer cancel()
	if err := r.opts.Cache.Set(cctx, key, raw, ttl); err != nil {
		r.opts.Logger.Warn("model cache not written", "key", key, "err", err)
	}
}

// remember appends repo to the log of recently resolved Hub ids.
func (r *Resolver) remember(ctx context.Context, repo string) {
	if r.opts.Cache == nil {
		return
	}
	now := r.opts.Now()
	if last, ok := r.remembered.Load(strings.ToLower(repo)); ok && now.Sub(last.(time.Time)) < rememberEvery {
		return
	}
	r.remembered.Store(strings.ToLower(repo), now)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cacheTimeout)
	defer cancel()
	if err := r.opts.Cache.Append(cctx, recentLog, []byte(repo), RecentLen); err != nil {
		r.opts.Logger.Warn("recent models not recorded", "repo", repo, "err", err)
	}
}

// Recent returns up to n Hub ids resolved lately, newest first, each once
// (for the model typeahead of the Slack form).
func (r *Resolver) Recent(ctx context.Context, n int) ([]string, error) {
	if r.opts.Cache == nil || n <= 0 {
		return nil, nil
	}
	entries, err := r.opts.Cache.Entries(ctx, recentLog, 0)
	if err != nil {
		return nil, fmt.Errorf("recent models: %w", err)
	}
	var out []string
	seen := map[string]bool{}
	for _, e := range slices.Backward(entries) {
		id := string(e)
		if k := strings.ToLower(id); hub.ValidRepoID(id) && !seen[k] {
			seen[k] = true
			out = append(out, id)
			if len(out) == n {
				break
			}
		}
	}
	return out, nil
}

// ResolvesWithoutHub reports whether ref resolves without a call to the
// Hub: it is in the catalog, its config.json (or the Hub's "no such
// repo", or the repo a name search chose and that repo's config) is in
// the cache, it is no Hub name at all, or the Hub is off. It reads the
// store only, so a caller that must answer within a deadline (a slash
// command's 3 s) can tell at once whether to acknowledge first.
func (r *Resolver) ResolvesWithoutHub(ctx context.Context, ref string) bool {
	ref = RepoRef(ref)
	if _, ok := catalog.LookupModel(ref); ok || r.opts.Hub == nil {
		return true
	}
	switch {
	case strings.Contains(ref, "/") && hub.ValidRepoID(ref):
		_, ok := r.cached(ctx, configKey(ref))
		return ok
	case hub.ValidName(ref):
		c, ok := r.cached(ctx, nameKey(ref))
		if !ok || !hub.ValidRepoID(c.Repo) {
			return false
		}
		_, ok = r.cached(ctx, configKey(c.Repo))
		return ok
	}
	return true // refused without asking anyone
}
