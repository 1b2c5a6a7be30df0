package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"time"

	"github.com/vrambot/vrambot/hub"
	"github.com/vrambot/vrambot/store"
)

// Anyone can publish a repo and any Slack user can name one, so who may
// make the resolver ask the Hub, and how often, is bounded twice: per user
// (so one user cannot spend HF_TOKEN's quota for everyone) and for all of
// vrambot (below the Hub's own limits, docs/hub-api.md §5). Both count in
// the store, so replicas share them; a store that does not answer falls
// back to a count in this process.

// The budgets.
const (
	// DefaultUserLookups is how many models not yet known (in neither the
	// catalog nor the cache) one user may have looked up on the Hub per
	// UserWindow: a person comparing models asks a handful a minute; a
	// script asking hundreds is refused, with when to try again.
	DefaultUserLookups = 20
	// UserWindow is the per-user budget's fixed window.
	UserWindow = time.Minute
	// DefaultAPIBudget is vrambot's own cap on Hub API requests (model
	// info, search) per hub.RateWindow: four fifths of the anonymous limit
	// (hub.AnonymousAPIRequests, 500), the smallest a deployment may have.
	DefaultAPIBudget = hub.AnonymousAPIRequests * 4 / 5
	// DefaultResolverBudget caps config.json downloads per hub.RateWindow:
	// four fifths of hub.AnonymousResolverRequests (3,000).
	DefaultResolverBudget = hub.AnonymousResolverRequests * 4 / 5
	// rateLimitedCooldown is how long every Hub request waits after the
	// Hub answered 429 without saying for how long.
	rateLimitedCooldown = time.Minute
)

// Counter counts in fixed windows (store.Store's Incr).
type Counter interface {
	Incr(ctx context.Context, key string, window time.Duration) (n int64, left time.Duration, err error)
}

// Store keys of the budgets, bounded in size and number: one per user id
// (long or odd ids hashed) and one per Hub bucket, each with its window as
// TTL.
const (
	askKeyPrefix    = "hub:asks:"   // + user key: new models asked this window
	budgetKeyPrefix = "hub:budget:" // + bucket: Hub requests this window
)

// askerKey is the askers context key.
type askerKey struct{}

// WithAsker returns ctx naming who asks (a Slack user id): lookups made
// under it count against that user's budget. Without one (the CLI) there
// is no per-user budget.
func WithAsker(ctx context.Context, user string) context.Context {
	if user == "" {
		return ctx
	}
	return context.WithValue(ctx, askerKey{}, user)
}

func askerOf(ctx context.Context) string {
	s, _ := ctx.Value(askerKey{}).(string)
	return s
}

// plainUserID is a user id short and plain enough to be a key as it is.
var plainUserID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// userKey bounds a user id for a store key: Slack's ids as they are,
// anything else hashed.
func userKey(user string) string {
	if plainUserID.MatchString(user) {
		return user
	}
	sum := sha256.Sum256([]byte(user))
	return "h" + hex.EncodeToString(sum[:12])
}

// counting counts in the shared store and, when it does not answer, in
// this process.
type counting struct {
	shared Counter // nil: local only
	local  *store.Memory
	log    *slog.Logger
}

func (c counting) incr(ctx context.Context, key string, window time.Duration) (int64, time.Duration) {
	if c.shared != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cacheTimeout)
		n, left, err := c.shared.Incr(cctx, key, window)
		cancel()
		if err == nil {
			return n, left
		}
		c.log.Warn("Hub budget not counted in the store; counting in this process", "key", key, "err", err)
	}
	n, left, _ := c.local.Incr(context.WithoutCancel(ctx), key, window)
	return n, left
}

// errBudget marks a request vrambot itself refused (its own budgets, or a
// cooldown after the Hub's 429): nothing about the repo, so never cached.
var errBudget = errors.New("hub budget spent")

// userBudgetError is a user past DefaultUserLookups.
func userBudgetError(n int64, left time.Duration) error {
	return &hub.Error{Reason: hub.ReasonRateLimited, Err: errBudget, RetryAfter: left,
		Message: fmt.Sprintf("you asked for %d new models in a minute; try again in %d s", n, seconds(left))}
}

func seconds(d time.Duration) int { return max(int((d+time.Second-1)/time.Second), 1) }

// takeUserBudget counts one new model for the asker of ctx, and refuses
// it past the budget. No asker, no budget.
func (r *Resolver) takeUserBudget(ctx context.Context) error {
	user := askerOf(ctx)
	if user == "" {
		return nil
	}
	n, left := r.count.incr(ctx, askKeyPrefix+userKey(user), UserWindow)
	if n > int64(r.opts.UserLookups) {
		return userBudgetError(n, left)
	}
	return nil
}

// budgetedHub is the Hub behind vrambot's own caps: every request counts
// in its Hub bucket and is refused past the cap, and after a 429 every
// request waits out the Hub's Retry-After.
type budgetedHub struct {
	next   Hub
	count  counting
	limits map[hub.Bucket]int
	now    func() time.Time

	mu       sync.Mutex
	coolDown time.Time // no request before this (the Hub said 429)
}

var _ Hub = (*budgetedHub)(nil)

// take counts one request in bucket, or refuses it.
func (b *budgetedHub) take(ctx context.Context, bucket hub.Bucket, repo string) error {
	b.mu.Lock()
	wait := b.coolDown.Sub(b.now())
	b.mu.Unlock()
	if wait > 0 {
		return &hub.Error{Reason: hub.ReasonRateLimited, Repo: repo, Err: errBudget, RetryAfter: wait,
			Message: fmt.Sprintf("the Hub is rate-limiting vrambot (HTTP 429); try again in %d s", seconds(wait))}
	}
	n, left := b.count.incr(ctx, budgetKeyPrefix+string(bucket), hub.RateWindow)
	if limit := b.limits[bucket]; n > int64(limit) {
		return &hub.Error{Reason: hub.ReasonRateLimited, Repo: repo, Err: errBudget, RetryAfter: left,
			Message: fmt.Sprintf("vrambot has used its %d Hub %s requests for these 5 minutes (kept below the Hub's own limit); try again in %d s", limit, bucket, seconds(left))}
	}
	return nil
}

// saw starts a cooldown when the Hub answered 429.
func (b *budgetedHub) saw(err error) {
	var he *hub.Error
	if !errors.As(err, &he) || he.Reason != hub.ReasonRateLimited || errors.Is(err, errBudget) {
		return
	}
	wait := he.RetryAfter
	if wait <= 0 {
		wait = rateLimitedCooldown
	}
	b.mu.Lock()
	if until := b.now().Add(wait); until.After(b.coolDown) {
		b.coolDown = until
	}
	b.mu.Unlock()
}

func (b *budgetedHub) Config(ctx context.Context, repo string) ([]byte, error) {
	if err := b.take(ctx, hub.BucketResolver, repo); err != nil {
		return nil, err
	}
	return b.config(ctx, repo)
}

// config fetches a config.json whose request take already counted.
func (b *budgetedHub) config(ctx context.Context, repo string) ([]byte, error) {
	data, err := b.next.Config(ctx, repo)
	b.saw(err)
	return data, err
}

func (b *budgetedHub) Info(ctx context.Context, repo string) (hub.Safetensors, bool, error) {
	if err := b.take(ctx, hub.BucketAPI, repo); err != nil {
		return hub.Safetensors{}, false, err
	}
	st, ok, err := b.next.Info(ctx, repo)
	b.saw(err)
	return st, ok, err
}

func (b *budgetedHub) Search(ctx context.Context, name string) ([]hub.Hit, error) {
	if err := b.take(ctx, hub.BucketAPI, name); err != nil {
		return nil, err
	}
	hits, err := b.next.Search(ctx, name)
	b.saw(err)
	return hits, err
}
