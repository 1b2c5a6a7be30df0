package vram

import (
	"context"
	"errors"
	"flag"
	"strings"

	"github.com/vrambot/vrambot/advisor/hfconfig"
	"github.com/vrambot/vrambot/internal/cli"
	"github.com/vrambot/vrambot/internal/readfile"
	"github.com/vrambot/vrambot/models"
)

// Run is `vrambot vram [--json] [--config PATH] QUERY...` (docs/contracts.md
// §1): the answer to a query as text, or its Result as JSON. open gives
// the program's model resolver and price book; it is called once the
// flags are read.
func Run(ctx context.Context, e cli.Env, args []string, open func() (Deps, error)) error {
	fs := flag.NewFlagSet("vram", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	configPath := fs.String("config", "", "a Hugging Face config.json (- for stdin) instead of a model name")
	own, words := splitQueryFlags(fs, args)
	query, err := cli.ParseFlags(fs, own)
	if err != nil {
		return err
	}
	query = append(query, words...)
	if len(query) == 0 && *configPath == "" {
		return cli.Usagef("e.g. vrambot vram 7b lora a100", "vram: no query given")
	}
	var config []byte
	if *configPath != "" {
		if config, err = readConfig(ctx, e, *configPath); err != nil {
			return err
		}
	}
	deps, err := open()
	if err != nil {
		return err
	}
	text := strings.Join(query, " ")
	var a Answer
	if config != nil {
		a, err = EstimateConfig(ctx, text, config, models.ConfigName(*configPath, config), deps)
	} else {
		a, err = Estimate(ctx, text, deps)
	}
	if err != nil {
		return err
	}
	return cli.Print(e, a.Reply, a.Result, *asJSON)
}

// readConfig reads the --config file (or stdin for "-"): a regular file
// only (a FIFO, a device or a directory is refused before it is opened),
// refused past the largest real config.json, and given up on SIGTERM or
// SIGINT whatever the read waits on (internal/readfile).
func readConfig(ctx context.Context, e cli.Env, path string) ([]byte, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = readfile.Read(ctx, e.Stdin, hfconfig.MaxConfigBytes)
	} else {
		data, err = readfile.File(ctx, path, hfconfig.MaxConfigBytes)
	}
	if errors.Is(err, readfile.ErrTooLarge) {
		return nil, cli.Usagef("give the model's config.json, not its weights", "vram: --config: %s is larger than %d KiB, more than any config.json", path, hfconfig.MaxConfigBytes>>10)
	}
	return data, cli.InputError("vram: --config", "give the path of a config.json (or - for stdin)", err)
}

// splitQueryFlags separates vram's own flags from the query: a query may
// carry a serving engine's flags as written on its command line
// ("--max-model-len 8192", "--gpu-memory-utilization=0.95"), which belong
// to the query, not to vrambot.
func splitQueryFlags(fs *flag.FlagSet, args []string) (own, query []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := fs.Lookup(name)
		if !strings.HasPrefix(a, "-") || f == nil {
			query = append(query, a)
			continue
		}
		own = append(own, a)
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !hasValue && !(ok && b.IsBoolFlag()) && i+1 < len(args) {
			i++
			own = append(own, args[i])
		}
	}
	return own, query
}
