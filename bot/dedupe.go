package bot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/vrambot/vrambot/store"
)

// Dedupe across replicas and redeliveries (docs/slack.md §A.3: idempotency
// is mandatory). Every request that can make the bot post is claimed in the
// store before it is acked:
//
//   - events by event_id, with two keys. "event:<id>" records that the
//     event was answered (DedupeTTL; the key older bots wrote when they took
//     an event, so a rolling upgrade keeps deduping). "event:<id>:claim" is
//     the lease of the delivery answering it (ClaimTTL), renewed by its
//     holder while it works. A delivery that finds the event answered is
//     acked and dropped; one that finds a live lease is refused with 503
//     (Slack tries again later); otherwise it takes the lease. A claim whose
//     outcome is unknown (the store timed out, and may still apply the
//     write later) is not a claim: the event is refused with 503, and a
//     late-applied lease lapses within ClaimTTL, so Slack's retry after
//     about a minute is answered. The answered marker is written after the
//     reply is posted; a renewal that lands late only revives the lease,
//     never hides the marker, which is read first.
//   - button clicks by action_ts + user + action_id, shortcuts by action_ts
//   - trigger_id + user, submitted forms by view id + hash + user, and
//     slash commands by a hash of the signed request (timestamp and body):
//     set-if-absent with DedupeTTL. Slack does not retry these, so only
//     replays and double deliveries are stopped. A vote counts once per
//     person and message, and a message gets one diagnosis however many
//     people run the shortcut on it.
const (
	claimInProgress = "in-progress"
	claimAnswered   = "answered"
)

// Key prefixes in the store.
const (
	eventKeyPrefix     = "event:"
	leaseSuffix        = ":claim"
	actionKeyPrefix    = "dedupe:action:"
	commandKeyPrefix   = "dedupe:command:"
	viewKeyPrefix      = "dedupe:view:"      // a submitted form: user, view id, hash
	feedbackKeyPrefix  = "dedupe:feedback:"  // one vote per person and message
	diagnosedKeyPrefix = "dedupe:diagnosed:" // a message answered with a diagnosis
	sizedKeyPrefix     = "dedupe:sized:"     // a message whose job was answered
	publicKeyPrefix    = "dedupe:public:"    // a button's public post under a message: action, channel, ts
	askerKeyPrefix     = "dedupe:asker:"     // who asked the answer posted at channel, ts
)

// dedupeTimeout bounds the store calls made before acking a request.
const dedupeTimeout = time.Second

type claimOutcome int

const (
	claimTaken     claimOutcome = iota // ours: answer it
	claimDuplicate                     // answered already: ack and drop
	claimBusy                          // another delivery holds a live lease: refuse, Slack retries
	claimUnknown                       // the store did not answer: refuse, Slack retries
)

// claimEvent takes the lease of the event whose answered marker is key.
func (s *Server) claimEvent(ctx context.Context, key string) (claimOutcome, error) {
	ctx, cancel := context.WithTimeout(ctx, dedupeTimeout)
	defer cancel()
	_, err := s.deps.Store.Get(ctx, key)
	switch {
	case err == nil:
		return claimDuplicate, nil
	case !errors.Is(err, store.ErrNotFound):
		return claimUnknown, err
	}
	ok, err := s.deps.Store.SetNX(ctx, key+leaseSuffix, []byte(claimInProgress), s.cfg.ClaimTTL)
	switch {
	case err != nil:
		return claimUnknown, err
	case !ok:
		return claimBusy, nil
	}
	return claimTaken, nil
}

// lease is a held event claim, renewed in the background until answered.
type lease struct {
	s    *Server
	key  string // the answered marker; the lease is key+leaseSuffix
	stop chan struct{}
	wg   sync.WaitGroup
}

// holdLease renews key's lease every third of ClaimTTL until answered.
func (s *Server) holdLease(key string) *lease {
	l := &lease{s: s, key: key, stop: make(chan struct{})}
	l.wg.Go(func() {
		t := time.NewTicker(s.cfg.ClaimTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), dedupeTimeout)
				err := s.deps.Store.Set(ctx, key+leaseSuffix, []byte(claimInProgress), s.cfg.ClaimTTL)
				cancel()
				if err != nil {
					s.log.Warn("renewing an event claim failed", "key", key, "err", err)
				}
			}
		}
	})
	return l
}

// answered stops renewing and records that the event was dealt with (also
// when the answer finally failed: Slack has the ack and will not retry, and
// a second delivery must not post twice). The lease is left to lapse.
func (l *lease) answered() {
	close(l.stop)
	l.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), dedupeTimeout)
	defer cancel()
	if err := l.s.deps.Store.Set(ctx, l.key, []byte(claimAnswered), l.s.cfg.DedupeTTL); err != nil {
		l.s.log.Warn("recording an answered event failed; its lease lapses instead", "key", l.key, "err", err)
	}
}

// releaseClaim gives a taken lease back (the work was not admitted), so a
// retry reaches a replica that takes it.
func (s *Server) releaseClaim(ctx context.Context, key string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dedupeTimeout)
	defer cancel()
	if err := s.deps.Store.Delete(ctx, key+leaseSuffix); err != nil {
		s.log.Warn("releasing an event claim failed; it lapses instead", "key", key, "err", err)
	}
}

// errDuplicate marks a replayed click or command.
var errDuplicate = errors.New("duplicate request")

// claimOnce is set-if-absent for requests Slack does not retry. It returns
// errDuplicate for a request seen before, or the store's error.
func (s *Server) claimOnce(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(ctx, dedupeTimeout)
	defer cancel()
	ok, err := s.deps.Store.SetNX(ctx, key, []byte(claimAnswered), s.cfg.DedupeTTL)
	if err != nil {
		return err
	}
	if !ok {
		return errDuplicate
	}
	return nil
}

// dedupeKey joins parts under prefix. Parts that are plain Slack ids and
// timestamps are kept readable (operators can find an event's key); any
// other text is hashed, so no untrusted text of any length becomes a key.
func dedupeKey(prefix string, parts ...string) string {
	plain := true
	n := 0
	for _, p := range parts {
		n += len(p)
		plain = plain && keyPartRE.MatchString(p)
	}
	if plain && n <= maxPlainKey {
		return prefix + strings.Join(parts, ":")
	}
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return prefix + "h" + hex.EncodeToString(h.Sum(nil)[:16])
}

// keyPartRE matches what Slack ids (Ev0123ABCD, U0123, share) and
// timestamps (1700000000.000100) look like.
var keyPartRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

const maxPlainKey = 160

// eventKey is the dedupe key of an event: its event_id, or, for a payload
// without one, the message it is about.
func eventKey(env eventEnvelope) string {
	if env.EventID != "" {
		return dedupeKey(eventKeyPrefix, env.EventID)
	}
	return dedupeKey(eventKeyPrefix, "no-event-id", env.Event.Type, env.Event.Channel, env.Event.TS)
}

// actionKey is the dedupe key of a click: who clicked what, when.
func actionKey(user, actionID, actionTS string) string {
	return dedupeKey(actionKeyPrefix, user, actionID, actionTS)
}

// commandKey is the dedupe key of a slash command: the signed request
// (HTTP: the signature's timestamp and the body; Socket Mode: the payload,
// whose trigger_id is unique per invocation).
func commandKey(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
		h.Write([]byte{0})
	}
	return commandKeyPrefix + hex.EncodeToString(h.Sum(nil)[:16])
}
