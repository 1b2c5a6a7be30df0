package bot

import (
	"context"
	"time"

	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/internal/safetext"
	"github.com/vrambot/vrambot/reply"
)

// vramAfterLookup runs a /vram query: its Hub lookup first (lookUpModel),
// then the answer under the compute bound; share marks a private answer.
func (s *Server) vramAfterLookup(ctx context.Context, user, query string, share bool) reply.Reply {
	cctx, err := s.lookUpModel(ctx, user, query)
	if err != nil {
		return s.vramOutcome(query, share, reply.Reply{}, err)
	}
	r := reply.Reply{}
	if err := s.computeAnswer(cctx, func(cctx context.Context) { r = s.vramReply(cctx, query, share) }); err != nil && r.Kind == "" {
		s.log.Warn("vram query not computed in time", "err", err)
		r = errorReply(tooSlowText)
	}
	return r
}

// Hub lookups are waits, not compute: a query whose model must be looked
// up on the Hugging Face Hub waits for it in a pool of its own (bounded,
// with a queue and a deadline), and only then takes a compute slot, in
// which the answer finds the model looked up already. A slow or hung Hub
// therefore never holds a compute slot that another user's plain question
// is waiting for.

// HubPrefetcher, when Deps.Lookups also implements it, looks the model of
// a query up on the Hub ahead of its answer, as user (whose budget it
// counts against). attach puts the outcome on the context the answer is
// computed under, where the command finds it without any I/O.
type HubPrefetcher interface {
	PrefetchModel(ctx context.Context, user, ref string) (attach func(context.Context) context.Context)
}

// Defaults of the Hub pool.
const (
	// DefaultMaxHubLookups bounds Hub lookups at once: each is a wait on
	// the network of at most the resolver's timeout (10 s in serve), so a
	// slow Hub costs goroutines and connections, never CPU.
	DefaultMaxHubLookups = 64
	// DefaultMaxHubQueue bounds lookups waiting for a slot; past it a
	// lookup is refused at once with hubBusyText.
	DefaultMaxHubQueue = 512
	// DefaultHubWait bounds waiting for a slot; the lookup then takes at
	// most the resolver's Hub timeout (10 s in serve), so an answer, or
	// why there is none, comes within DefaultWorkTimeout of the ack.
	DefaultHubWait = 20 * time.Second
)

// Messages of the Hub pool.
const (
	hubBusyText = "Too many models are being looked up on the Hugging Face Hub right now; please try again in a minute."
	hubSlowText = "Looking up %s on the Hugging Face Hub took too long (the Hub is slow or many lookups are waiting); please try again in a minute, or give its size (e.g. 8b)."
)

// lookUpModel looks up, in the Hub pool, the model of query when it needs
// the Hub; it returns the context to compute the answer under, or an
// errs.Unavailable error saying why the lookup was not made.
func (s *Server) lookUpModel(ctx context.Context, user, query string) (context.Context, error) {
	if s.deps.Lookups == nil {
		return ctx, nil
	}
	if _, ok := s.deps.Lookups.(HubPrefetcher); !ok {
		return ctx, nil
	}
	ref, needed := s.deps.Lookups.HubLookup(ctx, query)
	if !needed {
		return ctx, nil
	}
	return s.lookUpRef(ctx, user, ref)
}

// lookUpRef looks ref up in the Hub pool (see lookUpModel).
func (s *Server) lookUpRef(ctx context.Context, user, ref string) (context.Context, error) {
	p, ok := s.deps.Lookups.(HubPrefetcher)
	if !ok {
		return ctx, nil
	}
	if n := s.hubWaiting.Add(1); n > int64(s.cfg.MaxHubQueue+s.cfg.MaxHubLookups) {
		s.hubWaiting.Add(-1)
		s.metrics.hubLookup(hubRefused)
		return ctx, errs.New(errs.Unavailable, "%s", hubBusyText)
	}
	defer s.hubWaiting.Add(-1)
	wait := time.NewTimer(s.cfg.HubWait)
	defer wait.Stop()
	select {
	case s.hubSlots <- struct{}{}:
		defer func() { <-s.hubSlots }()
	case <-wait.C:
		s.metrics.hubLookup(hubTimedOut)
		return ctx, errs.New(errs.Unavailable, hubSlowText, safetext.OneLine(ref, 100))
	case <-ctx.Done():
		return ctx, errs.Wrap(errs.Unavailable, ctx.Err(), hubSlowText, safetext.OneLine(ref, 100))
	}
	// The lookup itself is bounded by the resolver's Hub timeout.
	attach := p.PrefetchModel(ctx, user, ref)
	s.metrics.hubLookup(hubLookedUp)
	return attach(ctx), nil
}

// Outcomes of the Hub pool (metric labels).
const (
	hubLookedUp = "looked_up" // the lookup ran (whatever the Hub said)
	hubRefused  = "refused"   // the queue was full
	hubTimedOut = "timed_out" // no slot came free within HubWait
)
