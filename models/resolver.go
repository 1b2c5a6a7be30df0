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
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/vrambot/vrambot/advisor/arch"
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
	// RecentLen bounds the log of Hub-resolved ids.
	RecentLen = 100
)

// How long each failure is remembered (in the store and in process), so a
// name repeated in a channel, or asked by a script, is not a request each
// time, yet what the Hub may soon answer differently is asked again soon.
const (
	// MissingTTL: a repo the Hub does not have (it may be published in a
	// moment), and a name no repo has exactly.
	MissingTTL = 10 * time.Minute
	// UnreadableTTL: a config.json the reader refuses (not JSON, too
	// large, keys missing); entries name the reader's version, so a
	// better reader asks again at once.
	UnreadableTTL = 10 * time.Minute
	// DeniedTTL: gated, private, disabled, or a token refused: settled by
	// a person, not in seconds.
	DeniedTTL = 5 * time.Minute
	// TransientTTL: a 5xx, a timeout, an unreachable Hub: long enough that
	// a burst of askers costs one request, short enough to recover soon.
	TransientTTL = 30 * time.Second
	// RateLimitedTTL: a 429 without a Retry-After (with one, its time).
	RateLimitedTTL = time.Minute
)

// Bounds of what the resolver keeps in process: the architectures it read
// (a few KiB each) and what it knows of repos and names, by count and by
// an estimate of their bytes.
const (
	maxKnownEntries = 4096
	maxKnownBytes   = 32 << 20
	// maxCachedText is the largest config.json kept as text in the store:
	// all but 3 of 223 real ones (docs/hub-api.md §3). A larger one is
	// read from the Hub again by another replica, once a day.
	maxCachedText = 512 << 10
	// maxParses bounds config.json decodes at once: the largest real one
	// allocates 13 MB while it is read.
	maxParses = 4
	// parseTimeout bounds reading one config.json (tens of milliseconds
	// for the largest real one).
	parseTimeout = 5 * time.Second
	// maxRemembered bounds the ids whose last recent-log write is tracked.
	maxRemembered = 4096
)

// Store keys (the Redis store prefixes them with "vrambot:").
const (
	configKeyPrefix = "hub:config:" // + lower-case repo id: a cachedConfig
	nameKeyPrefix   = "hub:name:"   // + lower-case bare name: the repo id a search chose, or none
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
	// Counter counts the Hub budgets; nil uses Cache when it counts too
	// (store.Store does), else a count in this process.
	Counter Counter
	// UserLookups, APIBudget and ResolverBudget replace the budgets'
	// defaults (DefaultUserLookups, DefaultAPIBudget, DefaultResolverBudget).
	UserLookups, APIBudget, ResolverBudget int
}

// Resolver finds architectures. It is safe for concurrent use. Lookups of
// one repo or name that overlap share one store read and one Hub request;
// what it read is kept in process (bounded), so an answer never reads or
// decodes a config.json again.
type Resolver struct {
	opts   Options
	hub    *budgetedHub // opts.Hub behind the budgets; nil offline
	flight singleflight.Group
	known  *lru[known]
	count  counting
	parses chan struct{}

	// remembered is when this process last logged each repo as recent
	// (lower-case id → time.Time), so a busy model costs one log write per
	// rememberEvery, not one per answer.
	remembered  sync.Map
	rememberedN atomic.Int64
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
	if opts.UserLookups <= 0 {
		opts.UserLookups = DefaultUserLookups
	}
	if opts.APIBudget <= 0 {
		opts.APIBudget = DefaultAPIBudget
	}
	if opts.ResolverBudget <= 0 {
		opts.ResolverBudget = DefaultResolverBudget
	}
	if opts.Counter == nil {
		opts.Counter, _ = opts.Cache.(Counter)
	}
	r := &Resolver{
		opts:   opts,
		known:  newLRU[known](maxKnownEntries, maxKnownBytes, opts.Now),
		count:  counting{shared: opts.Counter, local: store.NewMemory(store.WithClock(opts.Now)), log: opts.Logger},
		parses: make(chan struct{}, maxParses),
	}
	if opts.Hub != nil {
		r.hub = &budgetedHub{next: opts.Hub, count: r.count, now: opts.Now,
			limits: map[hub.Bucket]int{hub.BucketAPI: opts.APIBudget, hub.BucketResolver: opts.ResolverBudget}}
	}
	return r
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
// and the Hub said. Under a context from Prefetched.Attach, the outcome of
// that lookup is returned for its ref without any I/O.
func (r *Resolver) Resolve(ctx context.Context, ref string) (Resolution, error) {
	ref = RepoRef(ref)
	if p, ok := prefetched(ctx, ref); ok {
		res := p.res
		res.Notes = slices.Clone(res.Notes)
		return res, p.err
	}
	if m, ok := catalog.LookupModel(ref); ok {
		return Resolution{Model: m, Source: SourceCatalog}, nil
	}
	switch {
	case strings.Contains(ref, "/") && hub.ValidRepoID(ref):
		return r.resolveRepo(ctx, ref, ref, false)
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
// entries better too; this process keeps what it read (known). A failure
// is kept too, for its own TTL.
type cachedConfig struct {
	V           int              `json:"v"`
	Repo        string           `json:"repo"`
	Config      json.RawMessage  `json:"config,omitempty"`
	Safetensors *hub.Safetensors `json:"safetensors,omitempty"`
	FetchedAt   time.Time        `json:"fetched_at"`
	// Missing is the Hub's "no such repo" message (written beside Failure
	// for replicas that read only this).
	Missing string `json:"missing,omitempty"`
	// Failure is what the Hub (or the reader) said instead of a config;
	// Until is when the entry lapses.
	Failure *failure  `json:"failure,omitempty"`
	Until   time.Time `json:"until,omitzero"`
}

// failure is a lookup that did not give an architecture, kept so that the
// same lookup is answered the same way without asking again.
type failure struct {
	Reason hub.Reason `json:"reason"`
	Kind   errs.Kind  `json:"kind"`
	// Outcome is the message after "not in the catalog — ".
	Outcome string `json:"outcome"`
	// Hint is what to give instead ("" for sizeHint).
	Hint string `json:"hint,omitempty"`
	// Reader is hfconfig.ReaderVersion for a config it could not read: a
	// better reader ignores the entry.
	Reader int `json:"reader,omitempty"`
	// cause is the error behind a fresh failure, for the log; not kept.
	cause error
}

// Failure reasons beyond the Hub's own.
const (
	reasonUnreadable hub.Reason = "unreadable" // the reader refused the config.json
	reasonNoMatch    hub.Reason = "no-match"   // a search found no repo of exactly that name
)

// known is what this process knows of a repo or a name: an architecture
// read (model, notes, and the store entry's metadata), a failure, or the
// repo a name search chose.
type known struct {
	meta  cachedConfig // without the text
	model arch.Model
	notes []string
	fail  *failure
	repo  string // a name's repo
	fresh bool   // fetched from the Hub by this lookup
}

// cost estimates an entry's bytes for the in-process bound.
func (k known) cost() int {
	n := 512 + len(k.meta.Repo) + len(k.repo)
	for _, note := range k.notes {
		n += len(note)
	}
	if k.fail != nil {
		n += len(k.fail.Outcome) + len(k.fail.Hint)
	}
	if k.model.HiddenSize > 0 {
		raw, _ := json.Marshal(k.model)
		n += len(raw)
	}
	return n
}

// Keys of the in-process cache: a repo's entry is also keyed by the
// reader's version, so a process never mixes two readers' results.
func repoMemo(repo string) string {
	return fmt.Sprintf("repo\x00%s\x00v%d", strings.ToLower(repo), hfconfig.ReaderVersion)
}
func nameMemo(name string) string { return "name\x00" + strings.ToLower(name) }

// textMemo keys an architecture by repo, text and reader: a re-read of the
// same text (its repo entry expired, another replica refreshed it) is not
// decoded again.
func textMemo(repo string, text []byte) string {
	sum := sha256.Sum256(text)
	return fmt.Sprintf("text\x00%s\x00%s\x00v%d", strings.ToLower(repo), hex.EncodeToString(sum[:16]), hfconfig.ReaderVersion)
}

// ttlFor is how long a failure of reason is remembered.
func ttlFor(f *failure, retryAfter time.Duration) time.Duration {
	switch f.Reason {
	case hub.ReasonNoRepo, hub.ReasonNoFile, reasonNoMatch:
		return MissingTTL
	case reasonUnreadable, hub.ReasonTooLarge, hub.ReasonNotJSON:
		return UnreadableTTL
	case hub.ReasonGated, hub.ReasonForbidden, hub.ReasonDisabled, hub.ReasonBadToken:
		return DeniedTTL
	case hub.ReasonRateLimited:
		if retryAfter > 0 {
			return retryAfter
		}
		return RateLimitedTTL
	}
	return TransientTTL
}

// resolveRepo resolves a repo id; asked is what the user typed (the same
// id, or the bare name a search mapped to it); charged says the asker's
// budget already counted this question (a name's search did).
func (r *Resolver) resolveRepo(ctx context.Context, repo, asked string, charged bool) (Resolution, error) {
	k, err := r.lookRepo(ctx, repo, charged)
	if err != nil {
		return r.notLookedUp(asked, err)
	}
	return r.answer(ctx, k, asked, SourceCache)
}

// lookRepo finds what is known of repo: in process, else in the store,
// else on the Hub. Concurrent lookups of one repo share each step.
func (r *Resolver) lookRepo(ctx context.Context, repo string, charged bool) (known, error) {
	if k, ok := r.known.get(repoMemo(repo)); ok {
		return k, nil
	}
	if k, ok, err := r.shared(ctx, "read\x00"+repoMemo(repo), func(fctx context.Context) (known, bool) { return r.readRepo(fctx, repo) }); err != nil || ok {
		return k, err
	}
	if r.hub == nil {
		return known{}, errOffline
	}
	if k, ok := r.known.get(repoMemo(repo)); ok { // a fetch ended meanwhile
		return k, nil
	}
	if !charged {
		if err := r.takeUserBudget(ctx); err != nil {
			return known{}, err
		}
	}
	k, _, err := r.shared(ctx, "hub\x00"+repoMemo(repo), func(fctx context.Context) (known, bool) {
		if k, ok := r.known.get(repoMemo(repo)); ok {
			return k, true
		}
		fctx, cancel := context.WithTimeout(fctx, r.opts.Timeout)
		defer cancel()
		return r.fetchRepo(fctx, repo), true
	})
	return k, err
}

// errOffline: the store does not know the repo or name and the Hub may not be asked.
var errOffline = errors.New("offline")

// shared runs fn once for every caller of key that overlaps: detached from
// any one caller (one that gives up does not fail the others), while each
// caller waits only as long as its own context allows.
func (r *Resolver) shared(ctx context.Context, key string, fn func(ctx context.Context) (known, bool)) (known, bool, error) {
	type result struct {
		k  known
		ok bool
	}
	ch := r.flight.DoChan(key, func() (any, error) {
		k, ok := fn(context.WithoutCancel(ctx))
		return result{k, ok}, nil
	})
	select {
	case res := <-ch:
		v := res.Val.(result)
		return v.k, v.ok, nil
	case <-ctx.Done():
		return known{}, false, &hub.Error{Reason: hub.ReasonTimeout, Err: ctx.Err(), Message: "the Hub lookup was given up before the Hub answered"}
	}
}

// readRepo reads repo's store entry and what it holds: an architecture
// (decoded once per text and reader), or a failure still remembered.
func (r *Resolver) readRepo(ctx context.Context, repo string) (known, bool) {
	c, ok := r.cached(ctx, configKey(repo))
	if !ok {
		return known{}, false
	}
	if f := c.failed(); f != nil {
		if f.Reader != 0 && f.Reader != hfconfig.ReaderVersion {
			return known{}, false // an older reader's refusal: read it again
		}
		k := known{meta: c, fail: f}
		r.known.put(repoMemo(repo), k, k.cost(), c.until(MissingTTL))
		return k, true
	}
	k, err := r.read(ctx, c)
	if err != nil {
		r.opts.Logger.Warn("cached config.json no longer reads; fetching it again", "repo", repo, "err", err)
		return known{}, false
	}
	r.known.put(repoMemo(repo), k, k.cost(), c.until(r.opts.TTL))
	return k, true
}

// failed is the failure an entry records (entries of older versions say
// only Missing).
func (c cachedConfig) failed() *failure {
	switch {
	case c.Failure != nil:
		return c.Failure
	case c.Missing != "":
		return &failure{Reason: hub.ReasonNoRepo, Kind: errs.NotFound, Outcome: "looked up on the Hub: " + c.Missing}
	}
	return nil
}

// until is when an entry read from the store lapses: its own Until, else
// its fetch time plus ttl.
func (c cachedConfig) until(ttl time.Duration) time.Time {
	if !c.Until.IsZero() {
		return c.Until
	}
	return c.FetchedAt.Add(ttl)
}

// read decodes c's config.json with advisor/hfconfig, at most maxParses at
// once and each within parseTimeout, reusing what this process decoded of
// the same text before.
func (r *Resolver) read(ctx context.Context, c cachedConfig) (known, error) {
	memo := textMemo(c.Repo, c.Config)
	meta := c
	meta.Config = nil
	if k, ok := r.known.get(memo); ok {
		k.meta = meta
		return k, nil
	}
	ctx, cancel := context.WithTimeout(ctx, parseTimeout)
	defer cancel()
	select {
	case r.parses <- struct{}{}:
		defer func() { <-r.parses }()
	case <-ctx.Done():
		return known{}, errs.Wrap(errs.Unavailable, ctx.Err(), "reading config.json was given up")
	}
	m, notes, err := hfconfig.ReadContext(ctx, c.Config, c.Repo)
	if err != nil {
		return known{}, err
	}
	k := known{meta: meta, model: m, notes: notes}
	r.known.put(memo, k, k.cost(), r.opts.Now().Add(r.opts.TTL))
	return k, nil
}

// fetchRepo gets repo's config.json and parameter count from the Hub,
// reads it, and keeps the outcome (an architecture or a failure) in the
// store and in process.
func (r *Resolver) fetchRepo(ctx context.Context, repo string) known {
	c, err := r.fetch(ctx, repo)
	if err != nil {
		r.opts.Logger.Info("Hub lookup failed", "repo", repo, "reason", string(hub.ReasonOf(err)), "err", err)
		return r.rememberFailure(ctx, configKey(repo), repoMemo(repo), repo, hubFailure(err), err)
	}
	k, err := r.read(ctx, c)
	if err != nil {
		if errs.KindOf(err) == errs.Unavailable { // given up: says nothing of the config
			return known{fail: &failure{Reason: hub.ReasonTimeout, Kind: errs.Unavailable, Outcome: "looked up on the Hub: reading its config.json took too long", cause: err}}
		}
		// err's message is in the outcome; it is not wrapped, so that
		// errs.UserMessage shows this message and not only the inner one.
		f := &failure{Reason: reasonUnreadable, Kind: errs.Invalid, Reader: hfconfig.ReaderVersion,
			Outcome: fmt.Sprintf("looked up on the Hub: found %s, but its config.json cannot be read: %s", repo, errs.UserMessage(err))}
		return r.rememberFailure(ctx, configKey(repo), repoMemo(repo), repo, f, err)
	}
	if len(c.Config) <= maxCachedText {
		r.store(ctx, configKey(repo), c, r.opts.TTL)
	}
	k.meta.Until = c.FetchedAt.Add(r.opts.TTL)
	r.known.put(repoMemo(repo), k, k.cost(), k.meta.Until)
	k.fresh = true // the callers of this fetch answer with SourceHub
	return k
}

// hubFailure turns a Hub error into what is remembered of it.
func hubFailure(err error) *failure {
	kind := errs.KindOf(err)
	if kind == errs.Internal {
		kind = errs.Unavailable
	}
	outcome := "looked up on the Hub: " + hubMessage(err)
	if errors.Is(err, errBudget) {
		outcome = "not looked up on the Hub: " + hubMessage(err)
	}
	return &failure{Reason: hub.ReasonOf(err), Kind: kind, Outcome: outcome, cause: err}
}

// rememberFailure keeps f for its TTL in the store (storeKey) and in
// process (memo), unless it is one vrambot made itself (a budget), which
// says nothing about the repo or name.
func (r *Resolver) rememberFailure(ctx context.Context, storeKey, memo, repo string, f *failure, err error) known {
	k := known{fail: f}
	if errors.Is(err, errBudget) || errors.Is(err, context.Canceled) {
		return k
	}
	var retry time.Duration
	if he, ok := errors.AsType[*hub.Error](err); ok {
		retry = he.RetryAfter
	}
	now := r.opts.Now().UTC()
	ttl := ttlFor(f, retry)
	c := cachedConfig{V: cacheVersion, Repo: repo, FetchedAt: now, Failure: f, Until: now.Add(ttl)}
	if f.Reason == hub.ReasonNoRepo {
		c.Missing = strings.TrimPrefix(f.Outcome, "looked up on the Hub: ")
	}
	r.store(ctx, storeKey, c, ttl)
	k.meta = c
	r.known.put(memo, k, k.cost(), c.Until)
	return k
}

// answer turns what is known of a repo into the answer to asked: SourceHub
// for the lookups that fetched it, SourceCache for any later one.
func (r *Resolver) answer(ctx context.Context, k known, asked string, src Source) (Resolution, error) {
	if k.fail != nil {
		return r.failed(asked, k.fail)
	}
	if k.fresh {
		src = SourceHub
	}
	r.remember(ctx, k.meta.Repo)
	var head string
	switch src {
	case SourceHub:
		head = fmt.Sprintf("%s: not in the catalog — looked up on the Hub (%s): architecture read from its config.json", k.meta.Repo, r.opts.Endpoint)
	default:
		head = fmt.Sprintf("%s: not in the catalog — architecture read from its config.json on the Hub (%s), fetched %s and cached", k.meta.Repo, r.opts.Endpoint, k.meta.FetchedAt.Format("2006-01-02 15:04 MST"))
	}
	m := k.model
	m.Aliases = slices.Clone(m.Aliases)
	out := Resolution{Model: m, Source: src, RepoID: k.meta.Repo, Notes: append([]string{head}, k.notes...)}
	if st := k.meta.Safetensors; st != nil {
		var note string
		out.Model.Params, note = ParamsFromHub(m, *st)
		out.Notes = append(out.Notes, note)
	}
	return out, nil
}

// failed answers asked for a failure: a refusal that says what the Hub
// said, or, when the Hub could not tell the shape (it did not answer, the
// repo has no config.json, a budget), the typical shape of the size in the
// name.
func (r *Resolver) failed(asked string, f *failure) (Resolution, error) {
	hint := cmp.Or(f.Hint, sizeHint)
	switch f.Reason {
	case hub.ReasonNoFile, hub.ReasonTimeout, hub.ReasonUnreachable, hub.ReasonServer, hub.ReasonRateLimited, reasonNoMatch:
		// The Hub could not tell us the shape: a size in the name still
		// says more than a refusal. A repo without config.json (GGUF)
		// is answered the same way.
		return r.fallback(asked, f.Outcome, f.Kind, f.cause, hint)
	}
	return Resolution{}, lookupError(asked, f.Kind, f.Outcome, f.cause)
}

// notLookedUp answers a lookup that did not reach the Hub: offline, a
// budget spent, or given up.
func (r *Resolver) notLookedUp(asked string, err error) (Resolution, error) {
	if errors.Is(err, errOffline) {
		return r.fallback(asked, offlineOutcome, errs.NotFound, nil, sizeHint)
	}
	if errors.Is(err, errBudget) {
		return r.fallback(asked, "not looked up on the Hub: "+hubMessage(err), errs.Unavailable, err, sizeHint)
	}
	return Resolution{}, lookupError(asked, errs.Unavailable, "looked up on the Hub: "+hubMessage(err), err)
}

// offlineOutcome is what a lookup says under HF_HUB_OFFLINE=1.
const offlineOutcome = "not looked up on the Hub (HF_HUB_OFFLINE=1) and not in the cache"

// sizeHint is what a user can give instead when the Hub cannot be asked.
const sizeHint = "give its size (e.g. 8b) or its config.json"

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

// fetch gets repo's config.json and parameter count from the Hub (the
// count beside it, for the time of one request).
func (r *Resolver) fetch(ctx context.Context, repo string) (cachedConfig, error) {
	// The config.json's request is counted before the count's starts, so
	// a 429 the count brings back first cannot refuse it.
	if err := r.hub.take(ctx, hub.BucketResolver, repo); err != nil {
		return cachedConfig{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type info struct {
		st  hub.Safetensors
		ok  bool
		err error
	}
	infoc := make(chan info, 1)
	go func() {
		st, ok, err := r.hub.Info(ctx, repo)
		infoc <- info{st, ok, err}
	}()
	data, err := r.hub.config(ctx, repo)
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
}

// resolveName maps a bare name to a repo through the Hub's search: the
// most downloaded repo whose name (after the namespace) is exactly it,
// ignoring case. The choice, or that there is none, is cached and stated
// in the reply.
func (r *Resolver) resolveName(ctx context.Context, name string) (Resolution, error) {
	k, err := r.lookName(ctx, name)
	if err != nil {
		return r.notLookedUp(name, err)
	}
	if k.fail != nil {
		return r.failed(name, k.fail)
	}
	return r.named(ctx, name, k.repo)
}

// lookName finds what is known of a name, as lookRepo does for a repo;
// the search counts against the asker's budget.
func (r *Resolver) lookName(ctx context.Context, name string) (known, error) {
	memo := nameMemo(name)
	if k, ok := r.known.get(memo); ok {
		return k, nil
	}
	if k, ok, err := r.shared(ctx, "read\x00"+memo, func(fctx context.Context) (known, bool) { return r.readName(fctx, name) }); err != nil || ok {
		return k, err
	}
	if r.hub == nil {
		return known{}, errOffline
	}
	if k, ok := r.known.get(memo); ok {
		return k, nil
	}
	if err := r.takeUserBudget(ctx); err != nil {
		return known{}, err
	}
	k, _, err := r.shared(ctx, "hub\x00"+memo, func(fctx context.Context) (known, bool) {
		if k, ok := r.known.get(memo); ok {
			return k, true
		}
		fctx, cancel := context.WithTimeout(fctx, r.opts.Timeout)
		defer cancel()
		return r.search(fctx, name), true
	})
	return k, err
}

// readName reads a name's store entry: the repo a search chose, or a
// failure still remembered.
func (r *Resolver) readName(ctx context.Context, name string) (known, bool) {
	c, ok := r.cached(ctx, nameKey(name))
	if !ok {
		return known{}, false
	}
	var k known
	switch f := c.failed(); {
	case f != nil:
		k = known{meta: c, fail: f}
	case hub.ValidRepoID(c.Repo):
		k = known{meta: c, repo: c.Repo}
	default:
		return known{}, false
	}
	r.known.put(nameMemo(name), k, k.cost(), c.until(MissingTTL))
	return k, true
}

// search asks the Hub for name and keeps what it found, or that it found
// nothing of exactly that name.
func (r *Resolver) search(ctx context.Context, name string) known {
	hits, err := r.hub.Search(ctx, name)
	if err != nil {
		if hub.ReasonOf(err) == hub.ReasonNoRepo {
			// A mirror without the listing endpoint answers 404.
			err = &hub.Error{Reason: hub.ReasonServer, Repo: name, Err: err, Message: "the Hub at " + r.opts.Endpoint + " does not answer name searches"}
		}
		r.opts.Logger.Info("Hub search failed", "name", name, "reason", string(hub.ReasonOf(err)), "err", err)
		return r.rememberFailure(ctx, nameKey(name), nameMemo(name), "", hubFailure(err), err)
	}
	var similar []string
	for _, h := range hits {
		_, n, _ := strings.Cut(h.ID, "/")
		if n == "" {
			n = h.ID
		}
		if strings.EqualFold(n, name) {
			now := r.opts.Now().UTC()
			c := cachedConfig{V: cacheVersion, Repo: h.ID, FetchedAt: now, Until: now.Add(r.opts.TTL)}
			r.store(ctx, nameKey(name), c, r.opts.TTL)
			k := known{meta: c, repo: h.ID}
			r.known.put(nameMemo(name), k, k.cost(), c.Until)
			return k
		}
		if len(similar) < 3 {
			similar = append(similar, h.ID)
		}
	}
	f := &failure{Reason: reasonNoMatch, Kind: errs.NotFound, Outcome: fmt.Sprintf("looked up on the Hub: no model named exactly %s there", name), Hint: "give its Hub id (namespace/name)"}
	if len(similar) > 0 {
		f.Outcome += " (it has " + strings.Join(similar, ", ") + ")"
		f.Hint = "give the full id"
	}
	return r.rememberFailure(ctx, nameKey(name), nameMemo(name), "", f, nil)
}

// named resolves the repo a search chose for name and says so. The search
// already counted against the asker's budget.
func (r *Resolver) named(ctx context.Context, name, repo string) (Resolution, error) {
	res, err := r.resolveRepo(ctx, repo, name, true)
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
	if r.rememberedN.Add(1) > maxRemembered {
		r.remembered.Clear()
		r.rememberedN.Store(0)
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
// Hub: it is in the catalog, what the Hub said of it (its config.json, a
// failure still remembered, the repo a name search chose and that repo's
// config) is known in process or in the store, it is no Hub name at all,
// or the Hub is off. It reads the store only (sharing the read with any
// lookup of the same ref), so a caller that must answer within a deadline
// (a slash command's 3 s) can tell at once whether to acknowledge first.
func (r *Resolver) ResolvesWithoutHub(ctx context.Context, ref string) bool {
	ref = RepoRef(ref)
	if _, ok := catalog.LookupModel(ref); ok || r.hub == nil {
		return true
	}
	repoKnown := func(repo string) bool {
		if _, ok := r.known.get(repoMemo(repo)); ok {
			return true
		}
		_, ok, _ := r.shared(ctx, "read\x00"+repoMemo(repo), func(fctx context.Context) (known, bool) { return r.readRepo(fctx, repo) })
		return ok
	}
	switch {
	case strings.Contains(ref, "/") && hub.ValidRepoID(ref):
		return repoKnown(ref)
	case hub.ValidName(ref):
		k, ok := r.known.get(nameMemo(ref))
		if !ok {
			k, ok, _ = r.shared(ctx, "read\x00"+nameMemo(ref), func(fctx context.Context) (known, bool) { return r.readName(fctx, ref) })
		}
		if !ok {
			return false
		}
		return k.fail != nil || repoKnown(k.repo)
	}
	return true // refused without asking anyone
}
