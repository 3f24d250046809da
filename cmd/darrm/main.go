// Command darrm computes certified optimal DaRRM noise functions, releases
// private majority votes of private teachers, accounts for their privacy
// cost, and runs the DP-ShuffleG experiments.
//
// Run "darrm help" for the list of commands.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/ensemble"
)

func main() {
	// A reader of standard output that goes away (darrm aggregate | head)
	// must not kill darrm silently: the write then fails with EPIPE, and a
	// release says how many labels may have left and settles its ledger
	// on them, as for any stream that fails.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	finished := make(chan struct{})
	go stopAfter(ctx, finished, interruptGrace)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	close(finished)
	stop()
	os.Exit(code)
}

// interruptGrace is how long a command may take to stop after SIGINT or
// SIGTERM: every long loop checks its context far more often. It is below
// a second so that the process, exit included, ends within one even when
// this last resort ends it. (A var for TestMain, whose children on a
// loaded machine may take longer.)
var interruptGrace = 900 * time.Millisecond

// stopAfter ends the process, as interrupted, grace after ctx is done
// (SIGINT, SIGTERM), unless the command has finished by then (finished
// is closed): the last resort for work that does not stop in time.
// Every long loop checks ctx, and an LP solve stops at HiGHS's next
// iteration, but HiGHS's presolve and crossover run to their end inside C,
// which no check reaches. Nothing is lost
// that a crash would keep: outputs are written to temporary files renamed
// at the end, and a ledger charges labels before they leave, so a run
// stopped here over-counts, never under-counts. A command that finished
// keeps its own exit status however long the process then takes to exit
// (main's stop cancels ctx too: the race detector's exit took more than
// a second on a loaded machine, and a finished release exited 130).
func stopAfter(ctx context.Context, finished <-chan struct{}, grace time.Duration) {
	select {
	case <-ctx.Done():
	case <-finished:
		return
	}
	select {
	case <-time.After(grace):
	case <-finished:
		return
	}
	fmt.Fprintf(os.Stderr, "darrm: interrupted: still working %v after the signal: stopped\n", grace)
	os.Exit(setup.ExitInterrupted)
}

// run executes darrm with args and returns the process exit code. A
// cancelled ctx (SIGINT, SIGTERM) stops long work at its next check.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runWith(new(accountant.Memo), ctx, args, stdin, stdout, stderr)
}

// runWith is run with memo, the run's (setup.WithMemo), whose cache
// folder, when the command opens one (setup.CacheFlags.Open), keeps the
// answers of the one-bit compositions it made: once the command ends it
// saves them there, and memo keeps no folder for a later run.
func runWith(memo *accountant.Memo, ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runOf(setup.NewMechanisms(ensemble.Mechanisms()), memo, ctx, args, stdin, stdout, stderr)
}

// runOf is runWith with the mechanisms of release ms: darrm's, or a
// test's that registers one of its own.
func runOf(ms *setup.Mechanisms, memo *accountant.Memo, ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	code := cli.Execute(setup.WithMemo(ctx, memo), newRootCmdOf(ms, args...), args, stdin, stdout, stderr, setup.Explain)
	if err := memo.Save(); err != nil {
		fmt.Fprintf(stderr, "darrm: note: the accountant's answers were not kept in the cache: %v\n", err)
	}
	memo.Dir, memo.Secret = "", nil
	return code
}
