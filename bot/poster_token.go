package bot

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/slack-go/slack"
)

// NewTokenPoster is a Poster for one-off posts outside `serve` (the
// `vrambot digest` command): a bot token and the Web API base URL
// (VRAMBOT_SLACK_API_URL) are all it needs.
func NewTokenPoster(botToken, apiURL string, log *slog.Logger) *Poster {
	opts := slackOptions(&http.Client{Timeout: 30 * time.Second}, apiURL)
	return NewPoster(slack.New(botToken, opts...), 0, log)
}
