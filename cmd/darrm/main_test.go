package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/internal/cachedir"
	"github.com/darrm/darrm/internal/pgtest"
	"github.com/darrm/darrm/internal/statedir"
)

// The exit statuses the tests expect of the command (package setup).
const (
	exitOK           = setup.ExitOK
	exitFailure      = setup.ExitFailure
	exitUsage        = setup.ExitUsage
	exitNotCertified = setup.ExitNotCertified
	exitBudget       = setup.ExitBudget
	exitInterrupted  = setup.ExitInterrupted
)

// sharedCache is the cache folder that TestMain gives the package's tests:
// a test that passes it as --cache-dir reads the gammas and the
// accountant's answers another test's identical runs made, instead of
// composing them again (an exact one-bit composition is about 0.1 s of
// CPU), and needs no empty cache to check what it checks.
var sharedCache string

// TestMain lets a test run darrm as a child process (GO_DARRM_MAIN=1), to
// send it real signals; and points the ledgers' records and the gamma
// cache of every test, and of its children, at a temporary folder, never
// the user's (a test that forgets --cache-dir still solves into it).
func TestMain(m *testing.M) {
	if os.Getenv("GO_DARRM_MAIN") == "1" {
		if g, err := time.ParseDuration(os.Getenv("GO_DARRM_GRACE")); err == nil {
			interruptGrace = g
		}
		if frame := os.Getenv("GO_DARRM_AT"); frame != "" {
			go sayWhenAt(frame)
		}
		main()
	}
	switch os.Getenv("GO_DARRM_STOP_AFTER") {
	case "1":
		// Work that never checks its context, interrupted: stopAfter
		// ends the process (TestStopAfter).
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		go stopAfter(ctx, nil, 10*time.Millisecond)
		select {}
	case "finished":
		// A command that finished, its context then cancelled as main's
		// stop does, and an exit slower than the grace: its status
		// stands (TestStopAfter).
		ctx, cancel := context.WithCancel(context.Background())
		finished := make(chan struct{})
		go stopAfter(ctx, finished, 10*time.Millisecond)
		close(finished)
		cancel()
		time.Sleep(200 * time.Millisecond)
		os.Exit(0)
	}
	// The tests' files (vote files, labels, ledgers synced at every
	// line, caches), and those of the processes they start, go to memory
	// where TMPDIR is unset: none rests on reaching the disk.
	removeTemp := pgtest.TempInMemory()
	dir, err := os.MkdirTemp("", "darrm-state-")
	if err != nil {
		panic(err)
	}
	processState = filepath.Join(dir, "state")
	os.Setenv(statedir.Env, processState)
	sharedCache = filepath.Join(dir, "cache")
	os.Setenv(cachedir.Env, sharedCache)
	code := pgtest.Run(m)
	os.RemoveAll(dir)
	removeTemp()
	os.Exit(code)
}

// processState is the state folder (statedir) of the test binary, which
// a test that runs darrm replaces with one of its own (ownState).
var processState string

// ownState gives t a state folder of its own, for its records of ledgers
// and ensembles, unless it has one: a record that one test leaves would
// otherwise meet another's ledger of the same ensemble, and the tests
// would pass or fail by their order (-count, -run, -shuffle).
func ownState(t *testing.T) {
	t.Helper()
	if os.Getenv(statedir.Env) == processState {
		t.Setenv(statedir.Env, t.TempDir())
	}
}

// sayWhenAt writes "darrm-test: at frame" on standard error, once, when a
// goroutine's stack holds frame while main's holds run: a test that then
// signals the process knows that main has set up its handler (it does so
// before it calls run) and that the work is in the function frame names
// (TestSignalEndsLongWork). It looks every few milliseconds.
func sayWhenAt(frame string) {
	buf := make([]byte, 1<<22)
	for {
		n := runtime.Stack(buf, true)
		if bytes.Contains(buf[:n], []byte("cmd/darrm.run(")) && bytes.Contains(buf[:n], []byte(frame)) {
			fmt.Fprintf(os.Stderr, "darrm-test: at %s\n", frame)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
