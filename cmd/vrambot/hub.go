package main

import (
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/vrambot/vrambot/config"
	"github.com/vrambot/vrambot/hub"
	"github.com/vrambot/vrambot/internal/cli"
	"github.com/vrambot/vrambot/models"
)

// Hub lookup budgets. The CLI waits 3 s (issue 10) and then answers from
// the size in the name or says the Hub is unreachable; serve fetches after
// Slack's ack, so it can wait as long as huggingface_hub's own default
// (docs/hub-api.md §1), well inside the bot's 30 s work timeout.
const (
	cliHubTimeout   = 3 * time.Second
	serveHubTimeout = hub.DefaultTimeout
)

// newModelResolver builds the resolver: the catalog, the store's cache,
// then the Hub at HF_ENDPOINT with HF_TOKEN, or no Hub at all under
// HF_HUB_OFFLINE=1.
func newModelResolver(cfg config.Config, cache models.Cache, log *slog.Logger, timeout time.Duration) (*models.Resolver, error) {
	opts := models.Options{Cache: cache, Timeout: timeout, Logger: log, Endpoint: hubHost(cfg.HFEndpoint)}
	if !cfg.HFHubOffline {
		c, err := hub.New(hub.Options{Endpoint: cfg.HFEndpoint, Token: cfg.HFToken.Value(), Timeout: timeout})
		if err != nil {
			return nil, &cli.UsageError{Reason: "HF_ENDPOINT: " + err.Error(), Hint: "e.g. https://huggingface.co"}
		}
		opts.Hub = c
	}
	return models.New(opts), nil
}

// hubHost names the Hub in replies: the endpoint's host (and path, for a
// mirror under a path).
func hubHost(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "the Hub"
	}
	return fmt.Sprintf("%s%s", u.Host, u.EscapedPath())
}
