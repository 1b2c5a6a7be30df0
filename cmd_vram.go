package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/vrambot/vrambot/advisor/hfconfig"
	"github.com/vrambot/vrambot/commands"
	"github.com/vrambot/vrambot/internal/readfile"
	"github.com/vrambot/vrambot/models"
	"github.com/vrambot/vrambot/reply"
)

func runVRAM(ctx context.Context, e env, args []string) error {
	fs := flag.NewFlagSet("vram", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	configPath := fs.String("config", "", "a Hugging Face config.json (- for stdin) instead of a model name")
	own, words := splitQueryFlags(fs, args)
	query, err := parseFlags(fs, own)
	if err != nil {
		return err
	}
	query = append(query, words...)
	if len(query) == 0 && *configPath == "" {
		return usagef("e.g. vrambot vram 7b lora a100", "vram: no query given")
	}
	var config []byte
	if *configPath != "" {
		if config, err = readConfig(ctx, e, *configPath); err != nil {
			return err
		}
	}
	a, err := newApp(e, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	deps := commands.VRAMDeps{Models: a.models, Offers: a.book}
	text := strings.Join(query, " ")
	var r reply.Reply
	if config != nil {
		r, err = commands.VRAMWithConfig(ctx, text, config, models.ConfigName(*configPath, config), deps)
	} else {
		r, err = commands.VRAM(ctx, text, deps)
	}
	if err != nil {
		return err
	}
	return printReply(e, r, *asJSON)
}

// readConfig reads the --config file (or stdin for "-"): a regular file
// only (a FIFO, a device or a directory is refused before it is opened),
// refused past the largest real config.json, and given up on SIGTERM or
// SIGINT whatever the read waits on (internal/readfile).
func readConfig(ctx context.Context, e env, path string) ([]byte, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = readfile.Read(ctx, e.stdin, hfconfig.MaxConfigBytes)
	} else {
		data, err = readfile.File(ctx, path, hfconfig.MaxConfigBytes)
	}
	if errors.Is(err, readfile.ErrTooLarge) {
		return nil, usagef("give the model's config.json, not its weights", "vram: --config: %s is larger than %d KiB, more than any config.json", path, hfconfig.MaxConfigBytes>>10)
	}
	return data, inputError("vram: --config", "give the path of a config.json (or - for stdin)", err)
}

// inputError is what the CLI says when a file or stdin named on its
// command line could not be read: the user's to fix (exit 2), or, when a
// signal ended the wait, a runtime failure (exit 1).
func inputError(what, hint string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: interrupted before the input was read", what)
	}
	return usagef(hint, "%s: %v", what, err)
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
