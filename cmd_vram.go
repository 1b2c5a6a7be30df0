package main

import (
	"context"
	"flag"
	"strings"

	"github.com/vrambot/vrambot/commands"
)

func runVRAM(ctx context.Context, e env, args []string) error {
	fs := flag.NewFlagSet("vram", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	own, words := splitQueryFlags(fs, args)
	query, err := parseFlags(fs, own)
	if err != nil {
		return err
	}
	query = append(query, words...)
	if len(query) == 0 {
		return usagef("e.g. vrambot vram 7b lora a100", "vram: no query given")
	}
	a, err := newApp(e, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	r, err := commands.VRAM(ctx, strings.Join(query, " "), a.book)
	if err != nil {
		return err
	}
	return printReply(e, r, *asJSON)
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
