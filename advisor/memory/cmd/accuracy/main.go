// Command accuracy prints the memory estimator's error on the public
// measured cases side by side with two rules of thumb, then the same for
// the extra cases collected from public sources (testdata/extra-cases.jsonl)
// and a summary over both:
//
//	go run ./advisor/memory/cmd/accuracy [-cases advisor/memory/accuracy/testdata/cases.jsonl] [-extra advisor/memory/accuracy/testdata/extra-cases.jsonl] [-skipped]
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/vrambot/vrambot/advisor/memory/accuracy"
)

func main() { os.Exit(run()) }

func run() int {
	path := flag.String("cases", "advisor/memory/accuracy/testdata/cases.jsonl", "JSON Lines file of measured cases")
	extra := flag.String("extra", "advisor/memory/accuracy/testdata/extra-cases.jsonl", "second JSON Lines file of measured cases, reported separately and combined (empty: none)")
	skipped := flag.Bool("skipped", false, "also list the cases not judged and why")
	flag.Parse()
	var all []accuracy.Case
	files := []string{*path}
	if *extra != "" {
		files = append(files, *extra)
	}
	for _, p := range files {
		cases, err := load(p)
		if err != nil {
			fmt.Fprintf(os.Stderr, "accuracy: %v\n", err)
			return 2
		}
		if len(files) > 1 {
			fmt.Printf("== %s\n", p)
		}
		if code := report(cases, *skipped); code != 0 {
			return code
		}
		all = append(all, cases...)
	}
	if len(files) > 1 {
		fmt.Printf("\n== combined\n")
		if err := accuracy.Evaluate(all).WriteSummary(os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "accuracy: %v\n", err)
			return 1
		}
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
