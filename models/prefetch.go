package models

import (
	"context"
	"strings"
)

// Prefetched is the outcome of looking a model up ahead of the answer that
// needs it: the Slack bot looks a model up on the Hub in a pool of its own,
// outside the bounded compute pool, so a slow Hub never holds a slot that
// an answer needing no Hub is waiting for; the answer then finds the
// outcome on its context and does no I/O for the model.
type Prefetched struct {
	ref string
	res Resolution
	err error
}

// prefetchKey is Prefetched's context key.
type prefetchKey struct{}

// Prefetch resolves ref as Resolve does (under ctx's asker and deadline)
// and returns the outcome, for Attach.
func (r *Resolver) Prefetch(ctx context.Context, ref string) Prefetched {
	res, err := r.Resolve(ctx, ref)
	return Prefetched{ref: RepoRef(ref), res: res, err: err}
}

// Err is the lookup's error, nil when it resolved.
func (p Prefetched) Err() error { return p.err }

// Attach returns ctx carrying the outcome: Resolve of the same ref under
// it returns the outcome (a copy) at once.
func (p Prefetched) Attach(ctx context.Context) context.Context {
	if p.ref == "" {
		return ctx
	}
	return context.WithValue(ctx, prefetchKey{}, p)
}

// IsPrefetched reports whether ctx carries a lookup's outcome for ref.
func IsPrefetched(ctx context.Context, ref string) bool {
	_, ok := prefetched(ctx, RepoRef(ref))
	return ok
}

// prefetched is the outcome ctx carries for ref, if any.
func prefetched(ctx context.Context, ref string) (Prefetched, bool) {
	p, ok := ctx.Value(prefetchKey{}).(Prefetched)
	return p, ok && strings.EqualFold(p.ref, ref)
}
