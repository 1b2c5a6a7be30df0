package bot

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/vrambot/vrambot/internal/slacktest"
	"github.com/vrambot/vrambot/store"
)

func TestManifest(t *testing.T) {
	tests := []struct {
		name    string
		cfg     ManifestConfig
		wantErr bool
		wantURL string
	}{
		{"socket mode", ManifestConfig{SocketMode: true}, false, ""},
		{"http mode", ManifestConfig{PublicURL: "https://vrambot.example.com/"}, false, "https://vrambot.example.com/slack/events"},
		{"http mode without URL", ManifestConfig{}, true, ""},
		{"http mode with plain http", ManifestConfig{PublicURL: "http://vrambot.example.com"}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := Manifest(tt.cfg)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if tt.wantErr {
				return
			}
			var m struct {
				Features struct {
					AppHome struct {
						Home     bool `json:"home_tab_enabled"`
						Messages bool `json:"messages_tab_enabled"`
						ReadOnly bool `json:"messages_tab_read_only_enabled"`
					} `json:"app_home"`
					Shortcuts []struct {
						Name        string `json:"name"`
						Type        string `json:"type"`
						CallbackID  string `json:"callback_id"`
						Description string `json:"description"`
					} `json:"shortcuts"`
					SlashCommands []struct {
						Command string `json:"command"`
						URL     string `json:"url"`
					} `json:"slash_commands"`
				} `json:"features"`
				OAuth struct {
					Scopes struct {
						Bot []string `json:"bot"`
					} `json:"scopes"`
				} `json:"oauth_config"`
				Settings struct {
					Events struct {
						RequestURL string   `json:"request_url"`
						BotEvents  []string `json:"bot_events"`
					} `json:"event_subscriptions"`
					Interactivity struct {
						Enabled    bool   `json:"is_enabled"`
						RequestURL string `json:"request_url"`
						OptionsURL string `json:"message_menu_options_url"`
					} `json:"interactivity"`
					SocketMode bool `json:"socket_mode_enabled"`
				} `json:"settings"`
			}
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			// The scopes and events the features need, and no more.
			wantScopes := []string{"commands", "chat:write", "app_mentions:read", "channels:history", "groups:history", "im:history", "files:read", "files:write", "reactions:write"}
			if !sameSet(m.OAuth.Scopes.Bot, wantScopes) {
				t.Errorf("scopes %v, want %v", m.OAuth.Scopes.Bot, wantScopes)
			}
			wantEvents := []string{"message.channels", "message.groups", "message.im", "app_mention", "app_home_opened"}
			if !sameSet(m.Settings.Events.BotEvents, wantEvents) {
				t.Errorf("events %v, want %v", m.Settings.Events.BotEvents, wantEvents)
			}
			if len(m.Features.SlashCommands) != 2 || m.Features.SlashCommands[0].Command != "/vram" || m.Features.SlashCommands[1].Command != "/oom" {
				t.Errorf("slash commands %+v", m.Features.SlashCommands)
			}
			if h := m.Features.AppHome; !h.Home || !h.Messages || h.ReadOnly {
				t.Errorf("app home %+v: want the home tab and a writable messages tab", h)
			}
			wantShortcuts := []struct{ name, id string }{{"Diagnose OOM", "diagnose_oom"}, {"Size this job", "size_job"}}
			if sc := m.Features.Shortcuts; len(sc) != len(wantShortcuts) {
				t.Errorf("shortcuts %+v", sc)
			} else {
				for i, w := range wantShortcuts {
					if sc[i].Name != w.name || sc[i].CallbackID != w.id || sc[i].Type != "message" || sc[i].Description == "" {
						t.Errorf("shortcut %d = %+v, want %s (%s)", i, sc[i], w.name, w.id)
					}
				}
			}
			if m.Settings.SocketMode != tt.cfg.SocketMode || m.Settings.Events.RequestURL != tt.wantURL || !m.Settings.Interactivity.Enabled {
				t.Errorf("settings %+v", m.Settings)
			}
			if !tt.cfg.SocketMode && (m.Features.SlashCommands[0].URL != "https://vrambot.example.com/slack/commands" ||
				m.Features.SlashCommands[1].URL != "https://vrambot.example.com/slack/commands" ||
				m.Settings.Interactivity.RequestURL != "https://vrambot.example.com/slack/interactivity" ||
				m.Settings.Interactivity.OptionsURL != "https://vrambot.example.com/slack/interactivity") {
				t.Errorf("request URLs %+v %+v", m.Features, m.Settings)
			}
		})
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func TestNewValidates(t *testing.T) {
	deps := Deps{Commands: &fakeCommands{}, Store: store.NewMemory()}
	tests := []struct {
		name string
		cfg  Config
		deps Deps
		want string
	}{
		{"no bot token", Config{SigningSecret: "s"}, deps, "SLACK_BOT_TOKEN"},
		{"no transport", Config{BotToken: "xoxb-1"}, deps, "SLACK_SIGNING_SECRET"},
		{"no commands", Config{BotToken: "xoxb-1", AppToken: "xapp-1"}, Deps{Store: store.NewMemory()}, "Commands"},
	}
	for _, tt := range tests {
		_, err := New(tt.cfg, tt.deps)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v", tt.name, err)
		}
		if err != nil && strings.Contains(err.Error(), "xoxb-1") {
			t.Errorf("%s: token in error", tt.name)
		}
	}
	s, err := New(Config{BotToken: "xoxb-1", SigningSecret: "s"}, deps)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(context.Background()); err == nil {
		t.Error("Run without an app token succeeded")
	}
}

func TestPosterForDigest(t *testing.T) {
	fs := slacktest.New(t)
	ts := newTestServer(t, fs, nil)
	p := ts.Poster()
	ctx := context.Background()
	posted, err := p.PostReply(ctx, "CDIGEST", "", oomFixture())
	if err != nil || posted == "" {
		t.Fatalf("PostReply = %q, %v", posted, err)
	}
	if err := p.UploadFile(ctx, "CDIGEST", posted, "chart.png", "GPU memory", []byte("\x89PNG...")); err != nil {
		t.Fatal(err)
	}
	done := fs.Answered("files.completeUploadExternal")
	if len(done) != 1 || done[0].Args.Get("thread_ts") != posted || done[0].Args.Get("channel_id") != "CDIGEST" {
		t.Errorf("complete: %+v", done)
	}
	if up, ok := fs.Upload("F0001"); !ok || string(up) != "\x89PNG..." {
		t.Errorf("uploaded %q", up)
	}
	if err := p.UploadFile(ctx, "CDIGEST", posted, "empty.txt", "", nil); err == nil {
		t.Error("empty upload accepted")
	}
	// The poster of `vrambot digest`: a token and an API URL without the slash.
	tp := NewTokenPoster(testBotToken, strings.TrimSuffix(fs.APIURL(), "/"), nil)
	if _, err := tp.PostReply(ctx, "CDIGEST", posted, oomFixture()); err != nil {
		t.Fatalf("token poster: %v", err)
	}
	if got := fs.Answered("chat.postMessage"); len(got) != 2 || got[1].Args.Get("thread_ts") != posted {
		t.Errorf("token poster posts: %+v", got)
	}
	// A Slack that is not there surfaces as an error, not a panic.
	bad := NewTokenPoster(testBotToken, fs.URL+"/nowhere/", nil)
	if _, err := bad.PostReply(ctx, "C1", "", oomFixture()); err == nil {
		t.Error("PostReply to a broken API succeeded")
	}
}
