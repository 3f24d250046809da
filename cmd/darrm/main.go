// Command darrm computes certified optimal DaRRM noise functions, releases
// private majority votes of private teachers, accounts for their privacy
// cost, and runs the DP-ShuffleG experiments.
//
// Run "darrm help" for the list of commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/optimal"
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

// usageError is bad input from the user: a flag, an argument or a file
// they gave. It exits with exitUsage.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usageErrorf reports bad user input.
func usageErrorf(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// asUsage makes err, if not nil, bad input (exit status 2).
func asUsage(err error) error {
	var ue *usageError
	if err == nil || errors.As(err, &ue) {
		return err
	}
	return &usageError{err}
}

var (
	// errNotCertified marks a noise function that failed its certificate.
	errNotCertified = errors.New("not certified")
	// errBudget marks a release stopped by a privacy budget.
	errBudget = errors.New("privacy budget reached")
)

// exitCode is the one place where errors become exit codes.
func exitCode(err error) int {
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.Is(err, errBudget):
		return exitBudget
	case errors.Is(err, errNotCertified), errors.Is(err, ensemble.ErrNotCertified):
		return exitNotCertified
	case errors.As(err, &ue), errors.Is(err, optimal.ErrTooLarge):
		return exitUsage
	}
	return exitFailure
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// checkedWriter remembers the first write error, so that output that could
// not be written (a full disk, a closed pipe) fails the command even where
// a formatter does not check every write.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = err
	}
	return n, err
}

// run executes darrm with args and returns the process exit code. A
// cancelled ctx (SIGINT, SIGTERM) stops long work at its next check.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out := &checkedWriter{w: stdout}
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(out)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil && out.err != nil {
		err = fmt.Errorf("write standard output: %w", out.err)
	}
	if err == nil {
		return exitOK
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "darrm: interrupted: %v\n", err)
		return exitInterrupted
	}
	fmt.Fprintf(stderr, "darrm: %v\n", err)
	return exitCode(err)
}
