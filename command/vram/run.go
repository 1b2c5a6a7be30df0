package vram

import (
	"context"
	"errors"
	"flag"
	"strings"

	"github.com/vrambot/vrambot/advisor/hfconfig"
	"github.com/vrambot/vrambot/internal/cli"
	"github.com/vrambot/vrambot/internal/readfile"
	"github.com/vrambot/vrambot/job"
	"github.com/vrambot/vrambot/models"
)

// Run is `vrambot vram [--json] [--config PATH | --job PATH] QUERY...`
// (docs/contracts.md §1, docs/jobs.md): the answer to a query as text, or
// its Result as JSON. open gives the program's model resolver and price
// book; it is called once the flags are read.
func Run(ctx context.Context, e cli.Env, args []string, open func() (Deps, error)) error {
	fs := flag.NewFlagSet("vram", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON")
	configPath := fs.String("config", "", "a Hugging Face config.json (- for stdin) instead of a model name")
	jobPath := fs.String("job", "", "a training config or launch command as written (- for stdin); the query words add to it")
	own, words := splitQueryFlags(fs, args)
	query, err := cli.ParseFlags(fs, own)
	if err != nil {
		return err
	}
	query = append(query, words...)
	if len(query) == 0 && *configPath == "" && *jobPath == "" {
		return cli.Usagef("e.g. vrambot vram 7b lora a100", "vram: no query given")
	}
	if *configPath != "" && *jobPath != "" {
		return cli.Usagef("a job file names its model", "vram: --config and --job together")
	}
	var config, jobText []byte
	if *configPath != "" {
		if config, err = readInput(ctx, e, *configPath, configInput); err != nil {
			return err
		}
	}
	if *jobPath != "" {
		if jobText, err = readInput(ctx, e, *jobPath, jobInput); err != nil {
			return err
		}
	}
	deps, err := open()
	if err != nil {
		return err
	}
	text := strings.Join(query, " ")
	var a Answer
	switch {
	case jobText != nil:
		a, err = EstimateJob(ctx, string(jobText), text, deps)
	case config != nil:
		a, err = EstimateConfig(ctx, text, config, models.ConfigName(*configPath, config), deps)
	default:
		a, err = Estimate(ctx, text, deps)
	}
	if err != nil {
		return err
	}
	return cli.Print(e, a.Reply, a.Result, *asJSON)
}

// input is a file flag: its name, its size cap and what to say about it.
type input struct {
	flag     string
	max      int
	what     string // "a config.json"
	tooLarge string // the hint for a file over the cap
}

var (
	configInput = input{flag: "--config", max: hfconfig.MaxConfigBytes, what: "a config.json", tooLarge: "give the model's config.json, not its weights"}
	jobInput    = input{flag: "--job", max: job.MaxBytes, what: "a job file (a training config or a launch command)", tooLarge: "give the config or the command, not a log or a dataset"}
)

// readInput reads a file flag's file (or stdin for "-"): a regular file
// only (a FIFO, a device or a directory is refused before it is opened),
// refused past its cap, and given up on SIGTERM or SIGINT whatever the
// read waits on (internal/readfile). --config and --job share it.
func readInput(ctx context.Context, e cli.Env, path string, in input) ([]byte, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = readfile.Read(ctx, e.Stdin, int64(in.max))
	} else {
		data, err = readfile.File(ctx, path, int64(in.max))
	}
	if errors.Is(err, readfile.ErrTooLarge) {
		return nil, cli.Usagef(in.tooLarge, "vram: %s: %s is larger than %d KiB, more than %s has", in.flag, path, in.max>>10, in.what)
	}
	return data, cli.InputError("vram: "+in.flag, "give the path of "+in.what+" (or - for stdin)", err)
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
