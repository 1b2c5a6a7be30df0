package bot

import (
	"context"
	"sync"
	"time"
)

// Home tabs are published from a queue of their own, under Slack's rate
// tier for views.publish, instead of as admitted work: a burst of tab
// opens (every user of a workspace opening the App Home after an
// announcement) is acked at once, never refused with a 503, and published
// in the order the tabs were opened. A user waiting already is not queued
// twice, and a user whose Home was published within homeFresh is not
// published again (it shows what it showed a moment ago). Past
// DefaultHomeQueue users waiting, an open is acked and dropped: the user
// sees the Home last published for them.

const (
	// homePublishesPerMinute paces views.publish at its rate tier: Tier
	// 4, 100+ per minute per workspace (docs/slack.md §A.5).
	homePublishesPerMinute = 100
	// homeBurst is how many publishes may go out at once after a quiet
	// spell (Tier 4 allows bursts).
	homeBurst = 20
	// DefaultHomeQueue bounds the users waiting for their Home: the
	// burst of a workspace-wide announcement, published within 50
	// minutes at the tier's rate (a view published late still shows the
	// next time the tab is looked at); a waiting user costs a few dozen
	// bytes.
	DefaultHomeQueue = 50 * homePublishesPerMinute
	// homeFresh is how long a published Home is not published again for
	// the same user.
	homeFresh = time.Minute
	// homeFactsTTL is how long the digest headline and OOM counts read
	// for one Home are reused for the next ones.
	homeFactsTTL = 30 * time.Second
)

// Outcomes of a Home tab open (metric labels).
const (
	homePublished = "published"
	homeFreshOut  = "fresh"
	homeCoalesced = "coalesced"
	homeDropped   = "dropped"
	homeFailed    = "failed"
)

// homeQueue is the users waiting for their Home tab, oldest first.
type homeQueue struct {
	mu      sync.Mutex
	waiting []string
	queued  map[string]bool
	fresh   map[string]time.Time // user → last published
	running bool
	// tokens and last pace the publishes (a token bucket of homeBurst,
	// refilled at homePublishesPerMinute), kept across publisher runs.
	tokens float64
	last   time.Time
	// facts are the last ones read, reused for homeFactsTTL.
	facts   homeFacts
	factsAt time.Time
}

// queueHome puts user's Home tab in the queue and starts the publisher if
// it is not running. It never blocks.
func (s *Server) queueHome(user string) {
	q := &s.home
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	switch {
	case now.Sub(q.fresh[user]) < homeFresh:
		s.metrics.homeView(homeFreshOut)
		return
	case q.queued[user]:
		s.metrics.homeView(homeCoalesced)
		return
	case len(q.waiting) >= s.cfg.HomeQueue:
		s.metrics.homeView(homeDropped)
		s.log.Warn("home tab not published: the queue is full", "waiting", len(q.waiting))
		return
	}
	if q.queued == nil {
		q.queued, q.fresh = map[string]bool{}, map[string]time.Time{}
	}
	q.queued[user] = true
	q.waiting = append(q.waiting, user)
	if q.running {
		return
	}
	// The publisher is admitted work while it runs, so a drain waits for
	// it (and it stops at once when the drain starts).
	id, ok := s.admitAlways(workItem{kind: kindHome})
	if !ok {
		s.dropHomes(q)
		return
	}
	q.running = true
	go s.publishHomes(id)
}

// dropHomes empties the queue (shutting down); q.mu must be held.
func (s *Server) dropHomes(q *homeQueue) {
	for range q.waiting {
		s.metrics.homeView(homeDropped)
	}
	q.waiting, q.queued = nil, map[string]bool{}
}

// publishHomes publishes the queued Home tabs, paced, until the queue is
// empty or the server shuts down.
func (s *Server) publishHomes(id uint64) {
	defer s.release(id)
	q := &s.home
	interval := time.Minute / homePublishesPerMinute
	for {
		q.mu.Lock()
		if len(q.waiting) == 0 || s.isClosing() {
			s.dropHomes(q)
			q.running = false
			q.mu.Unlock()
			return
		}
		user := q.waiting[0]
		q.waiting = q.waiting[1:]
		delete(q.queued, user)
		s.markFreshLocked(user) // an open while this publish runs is fresh too
		now := time.Now()
		if q.last.IsZero() {
			q.tokens = homeBurst
		} else {
			q.tokens = min(homeBurst, q.tokens+float64(now.Sub(q.last))/float64(interval))
		}
		q.last = now
		wait := time.Duration(0)
		if q.tokens < 1 {
			wait = time.Duration((1 - q.tokens) * float64(interval))
		}
		q.tokens--
		q.mu.Unlock()

		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-s.closed:
				t.Stop()
				continue // the loop's top drops the queue
			}
		}
		s.publishHome(s.baseCtx, user)
	}
}

// homeFactsFor returns the facts for a Home tab, read at most once per
// homeFactsTTL (only the publisher calls it).
func (s *Server) homeFactsFor(ctx context.Context) homeFacts {
	q := &s.home
	q.mu.Lock()
	f, at := q.facts, q.factsAt
	q.mu.Unlock()
	if time.Since(at) < homeFactsTTL {
		f.now = time.Now()
		return f
	}
	f = s.readHomeFacts(ctx)
	q.mu.Lock()
	q.facts, q.factsAt = f, time.Now()
	q.mu.Unlock()
	return f
}

// markFreshLocked marks user's Home fresh, and forgets users whose Home is
// no longer fresh once the map has grown (it stays about as large as a
// minute of publishes); q.mu must be held.
func (s *Server) markFreshLocked(user string) {
	q := &s.home
	now := time.Now()
	if len(q.fresh) >= 2*homeBurst+homePublishesPerMinute {
		for u, at := range q.fresh {
			if now.Sub(at) >= homeFresh {
				delete(q.fresh, u)
			}
		}
	}
	q.fresh[user] = now
}

// homeNotPublished forgets that user's Home is fresh: its publish failed,
// so the next open tries again.
func (s *Server) homeNotPublished(user string) {
	q := &s.home
	q.mu.Lock()
	delete(q.fresh, user)
	q.mu.Unlock()
}
