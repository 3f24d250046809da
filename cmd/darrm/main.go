// Command darrm computes certified optimal DaRRM noise functions, releases
// private majority votes of private teachers, accounts for their privacy
// cost, and runs the DP-ShuffleG experiments.
//
// Run "darrm help" for the list of commands.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Exit codes. Scripts depend on them, so they are part of the CLI contract.
const (
	exitOK           = 0
	exitFailure      = 1 // an operation failed (I/O, solver, internal error)
	exitUsage        = 2 // bad flags or bad input: nothing was written
	exitNotCertified = 3 // darrm verify: the gamma is not (m·eps, delta)-DP
	exitBudget       = 4 // darrm aggregate: stopped before exceeding the privacy budget
)

// exitError carries a specific exit code through cobra's error return.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErrorf reports bad user input: exit code 2.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// withCode wraps err so that darrm exits with code.
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes darrm with args and returns the process exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "darrm: %v\n", err)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if isFlagError(err) {
		return exitUsage
	}
	return exitFailure
}
