package digest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Event-log limits.
const (
	// EventLogName is the store log the OOM events go to.
	EventLogName = "digest:oom-events"
	// MaxEvents bounds the log: a busy workspace pastes tens of OOMs a day,
	// so 5000 covers weeks of digests.
	MaxEvents = 5000
)

// OOMEvent is one OOM the bot parsed in Slack. It holds parsed fields only,
// never the pasted text: that may carry paths, hostnames or secrets.
type OOMEvent struct {
	At        time.Time `json:"at"`
	Channel   string    `json:"channel"`
	ThreadTS  string    `json:"thread_ts,omitempty"`
	Permalink string    `json:"permalink,omitempty"`
	Framework string    `json:"framework,omitempty"` // "pytorch", "jax", ... (corpus/oom vocabulary)
	Format    string    `json:"format,omitempty"`    // "pytorch-new", ... (corpus/oom vocabulary)
	Cause     string    `json:"cause,omitempty"`     // id of the first diagnosis cause
	Device    string    `json:"device,omitempty"`    // "cuda:0", ...
	Phase     string    `json:"phase,omitempty"`
	// TriedBytes is the allocation that failed; TotalBytes the GPU's capacity;
	// nil where the paste does not say.
	TriedBytes *int64 `json:"tried_to_allocate_bytes"`
	TotalBytes *int64 `json:"total_capacity_bytes"`
}

// LogStore is the part of the store the event log uses (store.Store has it).
type LogStore interface {
	// Append adds entry to the end of the named log and trims it to the
	// newest maxLen entries.
	Append(ctx context.Context, log string, entry []byte, maxLen int) error
	// Entries returns the newest n entries of the log, oldest first (n <= 0: all).
	Entries(ctx context.Context, log string, n int) ([][]byte, error)
}

// EventLog is the OOM event log in the store.
type EventLog struct {
	st  LogStore
	log *slog.Logger
}

// NewEventLog returns the event log kept in st.
func NewEventLog(st LogStore) *EventLog {
	return &EventLog{st: st, log: slog.Default()}
}

// Record appends e to the log, dropping the oldest beyond MaxEvents.
func (l *EventLog) Record(ctx context.Context, e OOMEvent) error {
	if e.At.IsZero() {
		return errors.New("record oom event: time is not set")
	}
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("record oom event: %w", err)
	}
	if err := l.st.Append(ctx, EventLogName, b, MaxEvents); err != nil {
		return fmt.Errorf("record oom event: %w", err)
	}
	return nil
}

// Since returns the events at or after t, oldest first. Entries that do not
// decode (written by a different version) are skipped and logged.
func (l *EventLog) Since(ctx context.Context, t time.Time) ([]OOMEvent, error) {
	raw, err := l.st.Entries(ctx, EventLogName, 0)
	if err != nil {
		return nil, fmt.Errorf("read oom events: %w", err)
	}
	var out []OOMEvent
	bad := 0
	for _, b := range raw {
		e, err := decodeEvent(b)
		if err != nil {
			bad++
			continue
		}
		if !e.At.Before(t) {
			out = append(out, e)
		}
	}
	if bad > 0 {
		l.log.Warn("skipped undecodable oom events", "log", EventLogName, "count", bad)
	}
	return out, nil
}

func decodeEvent(b []byte) (OOMEvent, error) {
	var e OOMEvent
	if err := json.Unmarshal(b, &e); err != nil {
		return OOMEvent{}, fmt.Errorf("decode oom event: %w", err)
	}
	if e.At.IsZero() {
		return OOMEvent{}, errors.New("decode oom event: no time")
	}
	return e, nil
}
