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

// botScopes are the bot token scopes the app uses, and no more: commands
// (/vram, /oom and the message shortcuts), chat:write (replies, chat.update,
// the App Home's messages), app_mentions:read, channels:history,
// groups:history and im:history (mentions, OOM pastes and direct
// messages), files:read (snippets, job files and config.json files), files:write (long answers), and
// reactions:write (👀). views.open, views.publish and app_home_opened need
// no scope of their own (https://docs.slack.dev/reference/events/app_home_opened).
var botScopes = []string{
	"commands", "chat:write", "app_mentions:read",
	"channels:history", "groups:history", "im:history",
	"files:read", "files:write", "reactions:write",
}

// botEvents: mentions, messages in public and private channels (OOM
// pastes), direct messages (message.im, the App Home's messages tab) and
// app_home_opened (the Home tab).
var botEvents = []string{"app_mention", "message.channels", "message.groups", "message.im", "app_home_opened"}

// Callback ids of the message shortcuts (docs/contracts.md §8): "Diagnose
// OOM" and "Size this job".
const (
	ShortcutDiagnoseOOM = callbackDiagnoseOOM
	ShortcutSizeJob     = callbackSizeJob
)

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
	commands := []obj{
		{
			"command":       "/vram",
			"description":   "GPU memory plan, fixes until it fits, cheapest GPUs (no text: a form)",
			"usage_hint":    "7b lora a100 bs=4 seq=4096 — or a question",
			"should_escape": false,
		},
		{
			"command":       "/oom",
			"description":   "Diagnose a CUDA out-of-memory error (no text: a box to paste into)",
			"usage_hint":    "[paste the error]",
			"should_escape": false,
		},
	}
	events := obj{"bot_events": botEvents}
	interactivity := obj{"is_enabled": true}
	if base != "" {
		for _, c := range commands {
			c["url"] = base + "/slack/commands"
		}
		events["request_url"] = base + "/slack/events"
		interactivity["request_url"] = base + "/slack/interactivity"
		// The /vram form's model typeahead (an external select) asks here.
		interactivity["message_menu_options_url"] = base + "/slack/interactivity"
	}
	m := obj{
		"_metadata": obj{"major_version": 1, "minor_version": 1},
		"display_information": obj{
			"name":        name,
			"description": "Explains GPU out-of-memory errors and sizes GPU memory",
		},
		"features": obj{
			// The messages tab takes direct messages; the home tab is
			// published on app_home_opened.
			"app_home": obj{"home_tab_enabled": true, "messages_tab_enabled": true, "messages_tab_read_only_enabled": false},
			"bot_user": obj{"display_name": name, "always_online": true},
			"shortcuts": []obj{
				{
					"name": "Diagnose OOM", "type": "message", "callback_id": ShortcutDiagnoseOOM,
					"description": "Explain the out-of-memory error in this message, in its thread",
				},
				{
					"name": "Size this job", "type": "message", "callback_id": ShortcutSizeJob,
					"description": "Size the GPU memory of the job in this message, in its thread",
				},
			},
			"slash_commands": commands,
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
