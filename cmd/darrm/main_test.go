package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/ledger"
)

// TestMain lets a test run darrm as a child process (GO_DARRM_MAIN=1), to
// send it real signals; and points the ledgers' records and the gamma
// cache of every test, and of its children, at a temporary folder, never
// the user's (a test that forgets --cache-dir still solves into it).
func TestMain(m *testing.M) {
	if os.Getenv("GO_DARRM_MAIN") == "1" {
		if g, err := time.ParseDuration(os.Getenv("GO_DARRM_GRACE")); err == nil {
			interruptGrace = g
		}
		main()
	}
	if os.Getenv("GO_DARRM_STOP_AFTER") == "1" {
		// Work that never checks its context, interrupted: stopAfter
		// ends the process (TestStopAfter).
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		go stopAfter(ctx, 10*time.Millisecond)
		select {}
	}
	dir, err := os.MkdirTemp("", "darrm-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv(ledger.EnvStateDir, filepath.Join(dir, "state"))
	os.Setenv(cache.EnvDir, filepath.Join(dir, "cache"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
