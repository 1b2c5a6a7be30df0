// Command vrambot explains GPU out-of-memory errors, estimates GPU memory for
// a workload and posts cluster-memory digests, from Slack or the command
// line. See README.md; the CLI contract is docs/contracts.md §1.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.LookupEnv)
	stop()
	os.Exit(code)
}
