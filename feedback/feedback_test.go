package feedback

import (
	"context"
	"testing"
	"time"

	"github.com/vrambot/vrambot/store"
	"github.com/vrambot/vrambot/store/storetest"
)

func TestLogCountsAWindow(t *testing.T) {
	for name, st := range map[string]LogStore{"memory": store.NewMemory(), "redis": storetest.NewRedis(t)} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			l := NewLog(st)
			now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
			for _, v := range []Vote{
				{At: now.Add(-48 * time.Hour), Kind: "vram", Vote: Up}, // before the window
				{At: now.Add(-2 * time.Hour), Kind: "vram", Vote: Up},
				{At: now.Add(-time.Hour), Kind: "vram", Vote: Down},
				{At: now, Kind: "oom", Vote: Up},
			} {
				if err := l.Record(ctx, v); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.Record(ctx, Vote{At: now, Kind: "vram", Vote: "sideways"}); err == nil {
				t.Error("a vote that is neither up nor down was recorded")
			}
			c, err := l.Since(ctx, now.Add(-24*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if c.Up != 2 || c.Down != 1 || c.ByKind["vram"] != (Tally{Up: 1, Down: 1}) || c.ByKind["oom"] != (Tally{Up: 1}) {
				t.Errorf("counts %+v", c)
			}
		})
	}
}
