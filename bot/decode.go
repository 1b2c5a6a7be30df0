package bot

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// The decoders below read only the fields the bot uses, so a payload with
// an unusual block or attachment (which slack-go's stricter decoders may
// reject since v0.34) is never lost. Their input is untrusted: each has a
// fuzz target.

// eventEnvelope is the outer Events API payload (HTTP body or Socket Mode
// envelope payload).
type eventEnvelope struct {
	Type           string          `json:"type"` // url_verification, event_callback, app_rate_limited
	Challenge      string          `json:"challenge"`
	EventID        string          `json:"event_id"`
	Event          innerEvent      `json:"event"`
	Authorizations []authorization `json:"authorizations"`
}

type authorization struct {
	UserID string `json:"user_id"`
	IsBot  bool   `json:"is_bot"`
}

// innerEvent is a message or app_mention event.
type innerEvent struct {
	Type     string      `json:"type"`
	Subtype  string      `json:"subtype"`
	Channel  string      `json:"channel"`
	User     string      `json:"user"`
	BotID    string      `json:"bot_id"`
	Text     string      `json:"text"`
	TS       string      `json:"ts"`
	ThreadTS string      `json:"thread_ts"`
	Files    []slackFile `json:"files"`
}

// slackFile is the part of a file object needed to fetch a pasted snippet.
type slackFile struct {
	ID                 string `json:"id"`
	Name               string `json:"name"`
	Mimetype           string `json:"mimetype"`
	Filetype           string `json:"filetype"`
	Mode               string `json:"mode"`
	Size               int64  `json:"size"`
	URLPrivateDownload string `json:"url_private_download"`
}

// Envelope types of the Events API.
const (
	envelopeURLVerification = "url_verification"
	envelopeCallback        = "event_callback"
	envelopeRateLimited     = "app_rate_limited"
)

var errEmptyPayload = errors.New("empty payload")

// decodeEvent parses an Events API payload.
func decodeEvent(body []byte) (eventEnvelope, error) {
	var env eventEnvelope
	if len(body) == 0 {
		return env, errEmptyPayload
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return eventEnvelope{}, fmt.Errorf("decode event: %w", err)
	}
	switch env.Type {
	case envelopeURLVerification, envelopeCallback, envelopeRateLimited:
		return env, nil
	default:
		return eventEnvelope{}, fmt.Errorf("decode event: unknown type %q", truncateRunes(env.Type, 40))
	}
}

// botUser returns the bot user id Slack names in the envelope's
// authorizations, or "".
func (e eventEnvelope) botUser() string {
	for _, a := range e.Authorizations {
		if a.IsBot {
			return a.UserID
		}
	}
	return ""
}

// slashCommand is a slash command invocation. The JSON tags match the
// Socket Mode payload; HTTP sends the same names form-encoded.
type slashCommand struct {
	Command     string `json:"command"`
	Text        string `json:"text"`
	UserID      string `json:"user_id"`
	ChannelID   string `json:"channel_id"`
	ResponseURL string `json:"response_url"`
}

// maxQueryRunes bounds the text of a command; Slack itself caps a message
// at 40,000 characters, a /vram query is a few words.
const maxQueryRunes = 1000

// decodeSlashCommand parses a form-encoded slash command body.
func decodeSlashCommand(body []byte) (slashCommand, error) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return slashCommand{}, fmt.Errorf("decode slash command: %w", err)
	}
	cmd := slashCommand{
		Command:     form.Get("command"),
		Text:        form.Get("text"),
		UserID:      form.Get("user_id"),
		ChannelID:   form.Get("channel_id"),
		ResponseURL: form.Get("response_url"),
	}
	return cmd, cmd.validate()
}

// decodeSlashCommandJSON parses the Socket Mode form of a slash command.
func decodeSlashCommandJSON(payload []byte) (slashCommand, error) {
	var cmd slashCommand
	if err := json.Unmarshal(payload, &cmd); err != nil {
		return slashCommand{}, fmt.Errorf("decode slash command: %w", err)
	}
	return cmd, cmd.validate()
}

func (c slashCommand) validate() error {
	if !strings.HasPrefix(c.Command, "/") {
		return errors.New("decode slash command: missing command")
	}
	return nil
}

// interaction is a block_actions payload (a button press).
type interaction struct {
	Type        string `json:"type"`
	ResponseURL string `json:"response_url"`
	User        struct {
		ID string `json:"id"`
	} `json:"user"`
	Channel struct {
		ID string `json:"id"`
	} `json:"channel"`
	Container struct {
		ChannelID string `json:"channel_id"`
	} `json:"container"`
	Actions []struct {
		ActionID string `json:"action_id"`
		Value    string `json:"value"`
	} `json:"actions"`
}

// decodeInteraction parses a form-encoded interactivity body (payload=JSON).
// Only the POST body is read: slack-go v0.35 dropped the query fallback
// because the signature does not cover the URL.
func decodeInteraction(body []byte) (interaction, error) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return interaction{}, fmt.Errorf("decode interaction: %w", err)
	}
	return decodeInteractionJSON([]byte(form.Get("payload")))
}

// decodeInteractionJSON parses the JSON payload of an interaction.
func decodeInteractionJSON(payload []byte) (interaction, error) {
	var in interaction
	if len(payload) == 0 {
		return in, fmt.Errorf("decode interaction: %w", errEmptyPayload)
	}
	if err := json.Unmarshal(payload, &in); err != nil {
		return interaction{}, fmt.Errorf("decode interaction: %w", err)
	}
	if in.Type == "" {
		return interaction{}, errors.New("decode interaction: missing type")
	}
	return in, nil
}
