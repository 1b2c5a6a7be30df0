package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	digestcmd "github.com/vrambot/vrambot/command/digest"
	modelscmd "github.com/vrambot/vrambot/command/models"
	oomcmd "github.com/vrambot/vrambot/command/oom"
	pricescmd "github.com/vrambot/vrambot/command/prices"
	vramcmd "github.com/vrambot/vrambot/command/vram"
	"github.com/vrambot/vrambot/config"
	"github.com/vrambot/vrambot/internal/cli"
	"github.com/vrambot/vrambot/suggest"
)

const usage = `vrambot — GPU memory answers for ML teams

usage:
  vrambot vram    [--json] [--config PATH | --job PATH] QUERY...
                                             estimate, staged fixes, best-priced GPUs
                                             (--config: a local config.json is the model;
                                             --job: a training config or launch command as written)
  vrambot oom     [--json] [FILE|-]          parse and diagnose an OOM paste (stdin by default)
  vrambot prices  [--json] [--refresh] [--gpu NAME] [--min-memory 24GiB]
  vrambot digest  [--json|--blocks] [--dry-run] [--window 24h|7d] [--at RFC3339] [--chart FILE]
                  [--demo]                   the digest of a simulated day: see it before wiring Prometheus
  vrambot serve                              the Slack bot (+ cron jobs)
  vrambot manifest                           print the Slack app manifest for this config
  vrambot models  [--json] [WORD]            the model catalog (name, id, params, active params, context, source)

models: a catalog name (llama-3.1-8b), a size (8b), or any Hugging Face id
(Qwen/Qwen3-8B), read from its config.json on the Hub (HF_ENDPOINT,
HF_TOKEN for gated repos, HF_HUB_OFFLINE=1 to stay off it).

examples:
  vrambot vram 7b lora a100
  vrambot vram llama-3-8b qlora bs=4 seq=4096 4090
  vrambot vram Qwen/Qwen3-8B lora 4090
  vrambot vram --json --config ./config.json inference h100
  vrambot vram --job axolotl.yml 4090
  pbpaste | vrambot oom
  vrambot digest --demo --chart demo.png
`

// subcommand is one of vrambot's commands: its name and how it runs,
// given the program's shared services (built on first use).
type subcommand struct {
	name string
	run  func(ctx context.Context, e cli.Env, args []string, a *lazyApp) error
}

// subcommands are the CLI of docs/contracts.md §1, in the order usage
// lists them. Each lives in its own package under command/ (serve and
// manifest are the program's own: they wire the bot).
var subcommands = []subcommand{
	{"vram", func(ctx context.Context, e cli.Env, args []string, a *lazyApp) error {
		return vramcmd.Run(ctx, e, args, a.vramDeps)
	}},
	{"oom", func(ctx context.Context, e cli.Env, args []string, a *lazyApp) error {
		return oomcmd.Run(ctx, e, args, a.oomDeps)
	}},
	{"prices", func(ctx context.Context, e cli.Env, args []string, a *lazyApp) error {
		return pricescmd.Run(ctx, e, args, a.pricesDeps)
	}},
	{"digest", func(ctx context.Context, e cli.Env, args []string, a *lazyApp) error {
		return digestcmd.Run(ctx, e, args, a.digestDeps)
	}},
	{"serve", func(ctx context.Context, e cli.Env, args []string, _ *lazyApp) error { return runServe(ctx, e, args) }},
	{"manifest", func(ctx context.Context, e cli.Env, args []string, _ *lazyApp) error {
		return runManifest(ctx, e, args)
	}},
	{"models", func(ctx context.Context, e cli.Env, args []string, _ *lazyApp) error {
		return modelscmd.Run(ctx, e, args)
	}},
}

// run executes one CLI invocation and returns the process exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, lookup config.Lookup) int {
	e := cli.Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Lookup: lookup}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	for _, c := range subcommands {
		if c.name == name {
			a := &lazyApp{env: e}
			err := c.run(ctx, e, rest, a)
			a.Close()
			return cli.ExitStatus(err, stderr)
		}
	}
	names := []string{"help"}
	for _, c := range subcommands {
		names = append(names, c.name)
	}
	hint := "run 'vrambot help' for the commands"
	if s := closest(name, names); s != "" {
		hint = fmt.Sprintf("did you mean 'vrambot %s'?", s)
	}
	return cli.ExitStatus(cli.Usagef(hint, "unknown command %q", name), stderr)
}

// closest returns the candidate within edit distance 2 of s, or "".
func closest(s string, candidates []string) string {
	best, d := suggest.Closest(strings.ToLower(s), candidates)
	if d > 2 {
		return ""
	}
	return best
}
