package digest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	dt "github.com/vrambot/vrambot/digest/digesttest"
	"github.com/vrambot/vrambot/store"
)

func TestEventLog(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	log := NewEventLog(st)
	for _, e := range storyEvents() {
		if err := log.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	// An entry from another version, or corrupted, is skipped, not fatal.
	if err := st.Append(ctx, EventLogName, []byte("{not json"), MaxEvents); err != nil {
		t.Fatal(err)
	}
	got, err := log.Since(ctx, dt.StoryStart)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || !got[0].At.Equal(dt.StoryAt(3, 12)) || *got[0].TotalBytes != 80<<30 {
		t.Errorf("Since(start) = %+v, want the 3 events of the story day", got)
	}
	if err := log.Record(ctx, OOMEvent{Channel: "C1"}); err == nil {
		t.Error("an event without a time was recorded")
	}
}

func TestEventLogTrims(t *testing.T) {
	ctx := context.Background()
	log := NewEventLog(store.NewMemory())
	for i := range MaxEvents + 10 {
		if err := log.Record(ctx, OOMEvent{At: dt.StoryStart.Add(time.Duration(i) * time.Second), Channel: "C1"}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := log.Since(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != MaxEvents || !got[0].At.Equal(dt.StoryStart.Add(10*time.Second)) {
		t.Errorf("%d events from %s, want the newest %d", len(got), got[0].At, MaxEvents)
	}
}

func TestOOMEventHasNoTextField(t *testing.T) {
	// The log keeps parsed fields only; a pasted traceback must have nowhere to go.
	b, err := json.Marshal(OOMEvent{At: dt.StoryStart})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"text", "raw", "paste", "message", "body"} {
		if _, ok := m[k]; ok {
			t.Errorf("OOMEvent has a %q field", k)
		}
	}
}

// FuzzDecodeEvent: whatever is in the store, decoding never panics and a
// decoded event always has a time.
func FuzzDecodeEvent(f *testing.F) {
	b, _ := json.Marshal(storyEvents()[1])
	f.Add(b)
	f.Add([]byte(`{"at":"0001-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"at":"2024-01-01T00:00:00Z","tried_to_allocate_bytes":-1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeEvent(b)
		if err == nil && e.At.IsZero() {
			t.Error("decoded an event without a time")
		}
	})
}
