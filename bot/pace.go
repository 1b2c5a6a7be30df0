package bot

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// lanes paces posts per channel: in arrival order, one at a time, each at
// least interval after the previous one ended, with at most capacity posts
// waiting in one channel. Slack allows about one message per second per
// channel (docs/slack.md §A.5), so a burst waits its turn here instead of
// running into 429s. A post whose wait is cancelled leaves the queue, and
// the posts behind it move up.
type lanes struct {
	interval time.Duration
	capacity int

	mu        sync.Mutex
	byChannel map[string]*lane
}

type lane struct {
	queue []*turn   // queue[0] holds the channel
	next  time.Time // earliest start of the next post
	// overflow counts posts refused as full since the last overflow notice;
	// noticeDue is set while one notice is queued.
	overflow  int
	noticeDue bool
}

type turn struct{ ready chan struct{} }

// maxIdleLanes bounds the map; lanes with nobody waiting whose pacing gap
// has passed are pruned past it.
const maxIdleLanes = 4096

var (
	// errQueueFull: the channel's queue is full, and an overflow notice is
	// already queued.
	errQueueFull = errors.New("channel queue full")
	// errNoticeDue: the channel's queue is full and the caller should post
	// the overflow notice (acquire with notice set).
	errNoticeDue = errors.New("channel queue full; overflow notice due")
)

func newLanes(interval time.Duration, capacity int) *lanes {
	return &lanes{interval: interval, capacity: capacity, byChannel: make(map[string]*lane)}
}

// acquire waits for channel's turn and returns the function that ends it
// (call it once the post is done, whatever its outcome). notice lets the
// one overflow notice in past the capacity.
func (l *lanes) acquire(ctx context.Context, channel string, notice bool) (done func(), err error) {
	l.mu.Lock()
	ln := l.byChannel[channel]
	if ln == nil {
		l.prune()
		ln = &lane{}
		l.byChannel[channel] = ln
	}
	if len(ln.queue) >= l.capacity && !notice {
		ln.overflow++
		due := !ln.noticeDue
		ln.noticeDue = true
		l.mu.Unlock()
		if due {
			return nil, errNoticeDue
		}
		return nil, errQueueFull
	}
	t := &turn{ready: make(chan struct{})}
	ln.queue = append(ln.queue, t)
	if len(ln.queue) == 1 {
		close(t.ready)
	}
	l.mu.Unlock()

	select {
	case <-t.ready:
	case <-ctx.Done():
		l.leave(ln, t)
		return nil, ctx.Err()
	}
	for {
		l.mu.Lock()
		wait := time.Until(ln.next)
		l.mu.Unlock()
		if wait <= 0 {
			break
		}
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			l.leave(ln, t)
			return nil, ctx.Err()
		}
	}
	var once sync.Once
	return func() { once.Do(func() { l.finish(ln, t) }) }, nil
}

// takeOverflow returns and resets the channel's overflow count; the notice
// that reports it is posted.
func (l *lanes) takeOverflow(channel string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.byChannel[channel]
	if ln == nil {
		return 0
	}
	n := ln.overflow
	ln.overflow, ln.noticeDue = 0, false
	return n
}

// depth is the number of posts waiting or posting in channel.
func (l *lanes) depth(channel string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ln := l.byChannel[channel]; ln != nil {
		return len(ln.queue)
	}
	return 0
}

// leave takes a cancelled waiter out; if it held the channel, the next
// waiter gets it (the pacing gap still applies: next is unchanged).
func (l *lanes) leave(ln *lane, t *turn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := slices.Index(ln.queue, t)
	if i < 0 {
		return
	}
	ln.queue = slices.Delete(ln.queue, i, i+1)
	if i == 0 && len(ln.queue) > 0 {
		close(ln.queue[0].ready)
	}
}

// finish ends the head's turn and starts the pacing gap.
func (l *lanes) finish(ln *lane, t *turn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln.next = time.Now().Add(l.interval)
	if i := slices.Index(ln.queue, t); i >= 0 {
		ln.queue = slices.Delete(ln.queue, i, i+1)
		if i == 0 && len(ln.queue) > 0 {
			close(ln.queue[0].ready)
		}
	}
}

// prune drops idle lanes once the map is large. l.mu must be held.
func (l *lanes) prune() {
	if len(l.byChannel) < maxIdleLanes {
		return
	}
	now := time.Now()
	for ch, ln := range l.byChannel {
		if len(ln.queue) == 0 && !ln.noticeDue && ln.next.Before(now) {
			delete(l.byChannel, ch)
		}
	}
}
