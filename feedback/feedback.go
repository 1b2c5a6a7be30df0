// Package feedback keeps the 👍 and 👎 people give the bot's answers, for
// the digest: the kind of answer, the vote and when, never the answer's
// text or who voted. The bot records a vote once per person and answer
// (bot.Feedback); the digest reads the counts of a window (Log.Since).
package feedback

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Log limits.
const (
	// LogName is the store log of votes.
	LogName = "feedback:votes"
	// MaxVotes bounds the log: months of a busy workspace's votes.
	MaxVotes = 10000
)

// Vote values.
const (
	Up   = "up"
	Down = "down"
)

// Vote is one 👍 or 👎.
type Vote struct {
	At      time.Time `json:"at"`
	Kind    string    `json:"kind"` // "vram", "oom"
	Vote    string    `json:"vote"` // Up, Down
	Channel string    `json:"channel,omitempty"`
}

// LogStore is the part of the store the log uses (store.Store has it).
type LogStore interface {
	Append(ctx context.Context, log string, entry []byte, maxLen int) error
	Entries(ctx context.Context, log string, n int) ([][]byte, error)
}

// Log is the vote log in the store.
type Log struct{ st LogStore }

// NewLog returns the vote log kept in st.
func NewLog(st LogStore) *Log { return &Log{st: st} }

// Record appends v, dropping the oldest votes beyond MaxVotes.
func (l *Log) Record(ctx context.Context, v Vote) error {
	if v.At.IsZero() || (v.Vote != Up && v.Vote != Down) || v.Kind == "" {
		return errors.New("record vote: time, kind and an up or down vote are needed")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("record vote: %w", err)
	}
	if err := l.st.Append(ctx, LogName, b, MaxVotes); err != nil {
		return fmt.Errorf("record vote: %w", err)
	}
	return nil
}

// Tally is a number of 👍 and 👎.
type Tally struct {
	Up   int `json:"up"`
	Down int `json:"down"`
}

// Counts are the votes of a window: in all and by kind of answer.
type Counts struct {
	Tally
	ByKind map[string]Tally `json:"by_kind"`
}

// Since counts the votes at or after t. Entries that do not decode
// (another version's) are skipped.
func (l *Log) Since(ctx context.Context, t time.Time) (Counts, error) {
	raw, err := l.st.Entries(ctx, LogName, 0)
	if err != nil {
		return Counts{}, fmt.Errorf("read votes: %w", err)
	}
	c := Counts{ByKind: map[string]Tally{}}
	for _, b := range raw {
		var v Vote
		if json.Unmarshal(b, &v) != nil || v.At.Before(t) {
			continue
		}
		k := c.ByKind[v.Kind]
		switch v.Vote {
		case Up:
			c.Up++
			k.Up++
		case Down:
			c.Down++
			k.Down++
		default:
			continue
		}
		c.ByKind[v.Kind] = k
	}
	return c, nil
}
