package main

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/vrambot/vrambot/bot"
	modelscmd "github.com/vrambot/vrambot/command/models"
	"github.com/vrambot/vrambot/digest"
	"github.com/vrambot/vrambot/feedback"
	"github.com/vrambot/vrambot/models"
	"github.com/vrambot/vrambot/query"
	"github.com/vrambot/vrambot/store"
)

// The Slack app's collaborators beyond the command set (bot.Deps): the
// /vram form's model typeahead, the Hub lookup check of slash commands,
// the App Home's facts and the feedback log.

// maxRecentModels is how many recent Hub ids the typeahead considers.
const maxRecentModels = 50

// slackDeps are the bot's Deps that serve wires for the Slack features.
type slackDeps struct {
	resolver *models.Resolver
	events   *digest.EventLog
	last     lastDigestStore
	votes    *feedback.Log
	log      interface {
		Warn(msg string, args ...any)
	}
}

// ModelOptions offers models for the form's typeahead: recent Hub ids
// and catalog models that match what was typed (bot.ModelOptions).
func (d slackDeps) ModelOptions(ctx context.Context, typed string, n int) []bot.ModelOption {
	var recent []string
	if d.resolver != nil {
		var err error
		if recent, err = d.resolver.Recent(ctx, maxRecentModels); err != nil {
			d.log.Warn("recent models not read for the typeahead", "err", err)
		}
	}
	var out []bot.ModelOption
	for _, c := range modelscmd.Choices(typed, recent, n) {
		out = append(out, bot.ModelOption{Label: c.Label, Value: c.Value})
	}
	return out
}

// HubLookup says whether a /vram query must ask the Hub first (bot.HubLookups).
func (d slackDeps) HubLookup(ctx context.Context, text string) (string, bool) {
	if d.resolver == nil {
		return "", false
	}
	return query.HubLookup(ctx, text, d.resolver)
}

// PrefetchModel looks a query's model up on the Hub for user, ahead of the
// answer and outside its compute slot (bot.HubPrefetcher); the lookup
// counts against user's Hub budget.
func (d slackDeps) PrefetchModel(ctx context.Context, user, ref string) func(context.Context) context.Context {
	if d.resolver == nil {
		return func(ctx context.Context) context.Context { return ctx }
	}
	return d.resolver.Prefetch(models.WithAsker(ctx, user), ref).Attach
}

// OOMsByCause counts the OOMs of the digest's event log (bot.OOMCounter).
func (d slackDeps) OOMsByCause(ctx context.Context, since time.Time) (map[string]int, error) {
	evs, err := d.events.Since(ctx, since)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, e := range evs {
		out[e.Cause]++
	}
	return out, nil
}

// LastDigest reads the last digest posted (bot.LastDigest).
func (d slackDeps) LastDigest(ctx context.Context) (bot.DigestHeadline, bool, error) {
	return d.last.read(ctx)
}

// recordVote keeps a vote for the digest (bot.FeedbackRecorder).
func (d slackDeps) recordVote(ctx context.Context, f bot.Feedback) error {
	return d.votes.Record(ctx, feedback.Vote{At: f.At, Kind: f.Kind, Vote: f.Vote, Channel: f.Channel})
}

// lastDigestKey holds the last digest posted, for the App Home.
const (
	lastDigestKey = "home:last-digest"
	lastDigestTTL = 60 * 24 * time.Hour
)

// lastDigestStore keeps the last digest's headline in the store, so that
// every replica's App Home shows it whichever replica posted.
type lastDigestStore struct{ st store.Store }

func (l lastDigestStore) record(ctx context.Context, headline, channel string) error {
	raw, err := json.Marshal(bot.DigestHeadline{Headline: headline, At: time.Now().UTC(), Channel: channel})
	if err != nil {
		return err
	}
	return l.st.Set(ctx, lastDigestKey, raw, lastDigestTTL)
}

func (l lastDigestStore) read(ctx context.Context) (bot.DigestHeadline, bool, error) {
	raw, err := l.st.Get(ctx, lastDigestKey)
	if errors.Is(err, store.ErrNotFound) {
		return bot.DigestHeadline{}, false, nil
	}
	if err != nil {
		return bot.DigestHeadline{}, false, err
	}
	var d bot.DigestHeadline
	if err := json.Unmarshal(raw, &d); err != nil {
		return bot.DigestHeadline{}, false, nil // another version's entry: none
	}
	return d, true, nil
}
