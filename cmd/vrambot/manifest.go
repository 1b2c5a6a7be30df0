package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/vrambot/vrambot/bot"
	"github.com/vrambot/vrambot/config"
	"github.com/vrambot/vrambot/internal/cli"
)

func runManifest(_ context.Context, e cli.Env, args []string) error {
	fs := flag.NewFlagSet("manifest", flag.ContinueOnError)
	publicURL := fs.String("url", "", "public https base URL Slack can reach (HTTP mode)")
	if rest, err := cli.ParseFlags(fs, args); err != nil {
		return err
	} else if len(rest) > 0 {
		return cli.Usagef("e.g. vrambot manifest --url https://vrambot.example.com", "manifest: unexpected argument %q", rest[0])
	}
	cfg, err := config.FromEnv(e.Lookup)
	if err != nil {
		return &cli.UsageError{Reason: "configuration: " + err.Error()}
	}
	socket := cfg.Mode() == config.ModeSocket
	if !socket && *publicURL == "" {
		*publicURL = "https://vrambot.example.com"
		fmt.Fprintln(e.Stderr, "vrambot: manifest: HTTP mode and no --url: using a placeholder base URL; set --url, or SLACK_APP_TOKEN for Socket Mode")
	}
	m, err := bot.Manifest(bot.ManifestConfig{SocketMode: socket, PublicURL: *publicURL})
	if err != nil {
		return cli.Usagef("give an https URL", "manifest: %v", err)
	}
	_, err = e.Stdout.Write(m)
	return err
}
