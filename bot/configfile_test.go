package bot

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/vrambot/vrambot/internal/errs"
	"github.com/vrambot/vrambot/reply"
)

// fakeConfigs records what an attached config.json answer was asked.
type fakeConfigs struct {
	mu      sync.Mutex
	query   string
	config  string
	name    string
	refuses bool
}

func (f *fakeConfigs) VRAMConfig(_ context.Context, query string, config []byte, name string) (reply.Reply, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.query, f.config, f.name = query, string(config), name
	if f.refuses {
		return reply.Reply{}, errs.Wrap(errs.Invalid, errors.New("internal detail"), `config.json has no "hidden_size"`)
	}
	r := vramFixture(query)
	r.Title = "Private-8B · LoRA · RTX 4090"
	return r, nil
}

// TestMentionWithConfigFile: a mention that attaches a config.json is
// answered for that config, in its thread, as vram --config would.
func TestMentionWithConfigFile(t *testing.T) {
	const config = `{"model_type": "qwen3", "hidden_size": 4096}`
	tests := []struct {
		name, text, file string
		size             int64
		refuses          bool
		wantQuery        string // "" when the config is not read
		wantText         string
	}{
		{"vram query", "<@UBOT> vram lora 4090", "config.json", 0, false, "lora 4090", "Private-8B"},
		{"no vram word", "<@UBOT> inference h100", "my-model.json", 0, false, "inference h100", "Private-8B"},
		{"config alone", "<@UBOT>", "config.json", 0, false, "", "Private-8B"},
		{"unreadable config", "<@UBOT> vram lora", "config.json", 0, true, "lora", "hidden_size"},
		{"weights, not a config", "<@UBOT> vram lora", "model.json", 5 << 20, false, "", "Attach config.json, not the weights"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfgs := &fakeConfigs{refuses: tt.refuses}
			ts := newTestServer(t, nil, nil, func(_ *Config, d *Deps) { d.Configs = cfgs })
			link := ts.slack.addFile("/files/T1-FC/"+tt.file, config)
			size := tt.size
			if size == 0 {
				size = int64(len(config))
			}
			files := []map[string]any{{"id": "FC", "name": tt.file, "mimetype": "application/json", "filetype": "json", "size": size, "url_private_download": link}}
			inner := map[string]any{"type": "app_mention", "user": "U1", "text": tt.text, "ts": "1700000300.000100", "channel": "C1", "files": files}
			readAll(t, ts.event(t, "EvCfg"+string(rune('a'+i)), inner))
			ts.idle(t)
			posts := ts.slack.seen("chat.postMessage")
			if len(posts) != 1 {
				t.Fatalf("%d replies, want 1", len(posts))
			}
			if got := posts[0].Form.Get("text") + posts[0].Form.Get("blocks"); !strings.Contains(got, tt.wantText) || strings.Contains(got, "internal detail") {
				t.Errorf("reply %.300s, want %q", got, tt.wantText)
			}
			if posts[0].Form.Get("thread_ts") != "1700000300.000100" {
				t.Errorf("not in the mention's thread: %v", posts[0].Form)
			}
			cfgs.mu.Lock()
			defer cfgs.mu.Unlock()
			if tt.size == 0 && (cfgs.query != tt.wantQuery || cfgs.config != config || cfgs.name != tt.file) {
				t.Errorf("asked %q for %q (%q)", cfgs.query, cfgs.name, cfgs.config)
			}
		})
	}
}

// TestMentionConfigNeedsConfigs: without Deps.Configs a mention with a
// .json file is an ordinary mention.
func TestMentionConfigNeedsConfigs(t *testing.T) {
	ts := newTestServer(t, nil, nil)
	link := ts.slack.addFile("/files/T1-FC/config.json", `{}`)
	files := []map[string]any{{"id": "FC", "name": "config.json", "filetype": "json", "size": 2, "url_private_download": link}}
	inner := map[string]any{"type": "app_mention", "user": "U1", "text": "<@UBOT> vram 7b lora", "ts": "1700000300.000100", "channel": "C1", "files": files}
	readAll(t, ts.event(t, "EvCfgNone", inner))
	ts.idle(t)
	posts := ts.slack.seen("chat.postMessage")
	if len(posts) != 1 || !strings.Contains(posts[0].Form.Get("blocks"), "7b lora") {
		t.Errorf("replies %v", posts)
	}
}
