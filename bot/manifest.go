package bot

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ManifestConfig selects the app manifest's transport. With SocketMode the
// manifest has no request URLs; otherwise PublicURL (the https base URL
// Slack can reach) prefixes /slack/commands, /slack/events and
// /slack/interactivity.
type ManifestConfig struct {
	Name       string // app and bot display name; default "vrambot"
	SocketMode bool
	PublicURL  string
}

// botScopes are the bot token scopes the app uses: commands (/vram),
// chat:write (replies), app_mentions:read and *:history (mentions and OOM
// pastes), files:read (snippets), files:write (long answers), reactions:write (👀).
var botScopes = []string{
	"commands", "chat:write", "app_mentions:read",
	"channels:history", "groups:history", "im:history",
	"files:read", "files:write", "reactions:write",
}

var botEvents = []string{"app_mention", "message.channels", "message.groups", "message.im"}

// Manifest returns the Slack app manifest (JSON, which Slack accepts beside
// YAML) for cfg. Schema: https://docs.slack.dev/reference/app-manifest
func Manifest(cfg ManifestConfig) ([]byte, error) {
	name := strings.TrimSpace(cfg.Name)
	if name == "" {
		name = "vrambot"
	}
	base := ""
	if !cfg.SocketMode {
		u, err := url.Parse(strings.TrimSpace(cfg.PublicURL))
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return nil, errors.New("manifest: HTTP mode needs the bot's public https base URL (for example https://vrambot.example.com)")
		}
		base = strings.TrimRight(u.String(), "/")
	}
	type obj = map[string]any
	command := obj{
		"command":       "/vram",
		"description":   "GPU memory plan, fixes until it fits, cheapest GPUs",
		"usage_hint":    "7b lora a100 bs=4 seq=4096",
		"should_escape": false,
	}
	events := obj{"bot_events": botEvents}
	interactivity := obj{"is_enabled": true}
	if base != "" {
		command["url"] = base + "/slack/commands"
		events["request_url"] = base + "/slack/events"
		interactivity["request_url"] = base + "/slack/interactivity"
	}
	m := obj{
		"_metadata": obj{"major_version": 1, "minor_version": 1},
		"display_information": obj{
			"name":        name,
			"description": "Explains GPU out-of-memory errors and sizes GPU memory",
		},
		"features": obj{
			"bot_user":       obj{"display_name": name, "always_online": true},
			"slash_commands": []obj{command},
		},
		"oauth_config": obj{"scopes": obj{"bot": botScopes}},
		"settings": obj{
			"event_subscriptions":    events,
			"interactivity":          interactivity,
			"socket_mode_enabled":    cfg.SocketMode,
			"org_deploy_enabled":     false,
			"token_rotation_enabled": false,
		},
	}
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	return append(out, '\n'), nil
}
