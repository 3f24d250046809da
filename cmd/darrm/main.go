// Command darrm computes certified optimal DaRRM noise functions, releases
// private majority votes of private teachers, accounts for their privacy
// cost, and runs the DP-ShuffleG experiments.
//
// Run "darrm help" for the list of commands.
package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/votefile"
)

// Exit codes. Scripts depend on them, so they are part of the CLI contract
// (README, "Exit status"); exitCode maps errors onto them.
const (
	exitOK           = 0
	exitFailure      = 1   // an operation failed (I/O, solver, internal error)
	exitUsage        = 2   // bad flags or bad input, or parameters to change: nothing was written
	exitNotCertified = 3   // a noise function is not certified (m·eps, delta)-DP
	exitBudget       = 4   // a privacy budget stopped the release
	exitInterrupted  = 130 // SIGINT or SIGTERM
)

var (
	// errNotCertified marks a noise function that failed its certificate.
	errNotCertified = errors.New("not certified")
	// errBudget marks a release stopped by a privacy budget.
	errBudget = errors.New("privacy budget reached")
)

// exitCode is the one place where errors become exit codes.
func exitCode(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.Is(err, errBudget):
		return exitBudget
	case errors.Is(err, errNotCertified), errors.Is(err, ensemble.ErrNotCertified):
		return exitNotCertified
	case cli.IsUsage(err), errors.Is(err, optimal.ErrTooLarge), errors.As(err, new(*votefile.TeachersError)),
		errors.As(err, new(*ledger.BindingError)), errors.As(err, new(*ledger.VersionError)):
		return exitUsage
	}
	return exitFailure
}

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
	return cli.Execute(ctx, newRootCmd(), args, stdin, stdout, stderr, exitCode)
}
