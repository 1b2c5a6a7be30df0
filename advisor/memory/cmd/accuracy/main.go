// Command accuracy prints the memory estimator's error on the public
// measured cases side by side with three baselines (two rules of thumb and
// gpu_poor's formula), one table per case file, then a summary over all of
// them with the per-method table that every estimate's error band quotes
// (advisor/memory/errorbands.json):
//
//	go run ./advisor/memory/cmd/accuracy [-skipped] [-bands advisor/memory/errorbands.json]
//
// The fourth file (-holdout) holds the cases gathered after the estimator
// was built, the fifth (-blind) the 2026 runs, the sixth (-holdout2026)
// the 2026 runs held out until the end; run one alone for its own figures:
//
//	go run ./advisor/memory/cmd/accuracy -cases advisor/memory/accuracy/testdata/holdout-cases.jsonl -extra "" -training "" -holdout "" -blind "" -holdout2026 ""
//	go run ./advisor/memory/cmd/accuracy -cases advisor/memory/accuracy/testdata/blind-2026-cases.jsonl -extra "" -training "" -holdout "" -blind "" -holdout2026 ""
//	go run ./advisor/memory/cmd/accuracy -cases advisor/memory/accuracy/testdata/holdout-2026-cases.jsonl -extra "" -training "" -holdout "" -blind "" -holdout2026 ""
//
// -bands rewrites the embedded band table from the combined cases (the
// accuracy tests fail while it is stale).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/vrambot/vrambot/advisor/memory/accuracy"
)

func main() { os.Exit(run()) }

func run() int {
	path := flag.String("cases", "advisor/memory/accuracy/testdata/cases.jsonl", "JSON Lines file of measured cases")
	extra := flag.String("extra", "advisor/memory/accuracy/testdata/extra-cases.jsonl", "second JSON Lines file of measured cases (empty: none)")
	training := flag.String("training", "advisor/memory/accuracy/testdata/training-cases.jsonl", "third JSON Lines file: training runs with the techniques of docs/memory-model.md §6 (empty: none)")
	holdout := flag.String("holdout", "advisor/memory/accuracy/testdata/holdout-cases.jsonl", "fourth JSON Lines file: the cases gathered after the estimator was built, judged blind first (testdata/SOURCES.md; empty: none)")
	blind := flag.String("blind", "advisor/memory/accuracy/testdata/blind-2026-cases.jsonl", "fifth JSON Lines file: the 2026 runs (FSDP2, offload, MoE fine-tuning, Unsloth, low-bit optimizers), scored blind first (testdata/SOURCES.md; empty: none)")
	holdout2026 := flag.String("holdout2026", "advisor/memory/accuracy/testdata/holdout-2026-cases.jsonl", "sixth JSON Lines file: the 2026 runs held out until the end and scored once (testdata/SOURCES.md; empty: none)")
	skipped := flag.Bool("skipped", false, "also list the cases not judged and why")
	bands := flag.String("bands", "", "write the per-method error bands of the combined cases to this JSON file")
	flag.Parse()
	var all []accuracy.Case
	files := []string{*path}
	for _, f := range []string{*extra, *training, *holdout, *blind, *holdout2026} {
		if f != "" {
			files = append(files, f)
		}
	}
	for _, p := range files {
		cases, err := load(p)
		if err != nil {
			fmt.Fprintf(os.Stderr, "accuracy: %v\n", err)
			return 2
		}
		fmt.Printf("== %s\n", p)
		if code := report(cases, *skipped); code != 0 {
			return code
		}
		all = append(all, cases...)
	}
	rep := accuracy.Evaluate(all)
	fmt.Printf("== combined\n")
	if err := rep.WriteSummary(os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "accuracy: %v\n", err)
		return 1
	}
	if *bands != "" {
		data, err := json.MarshalIndent(rep.Bands(), "", "  ")
		if err == nil {
			err = os.WriteFile(*bands, append(data, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "accuracy: write bands: %v\n", err)
			return 1
		}
		fmt.Printf("\nwrote %s\n", *bands)
	}
	return 0
}

func load(path string) ([]accuracy.Case, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cases, err := accuracy.ParseCases(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cases, nil
}

func report(cases []accuracy.Case, skipped bool) int {
	rep := accuracy.Evaluate(cases)
	if err := rep.WriteTable(os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "accuracy: %v\n", err)
		return 1
	}
	if skipped {
		fmt.Println()
		for _, s := range rep.Skipped {
			fmt.Printf("skipped %-42s %s\n", s.ID, s.Reason)
		}
	}
	fmt.Println()
	return 0
}
