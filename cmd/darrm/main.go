// Command darrm computes certified optimal DaRRM noise functions, releases
// private majority votes of private teachers, accounts for their privacy
// cost, and runs the DP-ShuffleG experiments.
//
// Run "darrm help" for the list of commands.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/exitstatus"
)

func main() {
	// A reader of standard output that goes away (darrm aggregate | head)
	// must not kill darrm silently: the write then fails with EPIPE, and a
	// release says how many labels may have left and settles its ledger
	// on them, as for any stream that fails.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes darrm with args and returns the process exit code. A
// cancelled ctx (SIGINT, SIGTERM) stops long work at its next check.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Execute(ctx, newRootCmd(), args, stdin, stdout, stderr, exitstatus.Explain)
}
