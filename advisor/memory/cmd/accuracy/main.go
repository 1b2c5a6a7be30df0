// Command accuracy prints the memory estimator's error on the public
// measured cases side by side with two rules of thumb:
//
//	go run ./advisor/memory/cmd/accuracy [-cases ../shared/corpus/memory/cases.jsonl] [-skipped]
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/vrambot/vrambot/advisor/memory/accuracy"
)

func main() { os.Exit(run()) }

func run() int {
	path := flag.String("cases", "../shared/corpus/memory/cases.jsonl", "JSON Lines file of measured cases")
	skipped := flag.Bool("skipped", false, "also list the cases not judged and why")
	flag.Parse()
	data, err := os.ReadFile(*path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "accuracy: %v\n", err)
		return 2
	}
	cases, err := accuracy.ParseCases(data)
	if err != nil {
		fmt.Fprintf(os.Stderr, "accuracy: %s: %v\n", *path, err)
		return 2
	}
	rep := accuracy.Evaluate(cases)
	if err := rep.WriteTable(os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "accuracy: %v\n", err)
		return 1
	}
	if *skipped {
		fmt.Println()
		for _, s := range rep.Skipped {
			fmt.Printf("skipped %-42s %s\n", s.ID, s.Reason)
		}
	}
	return 0
}
