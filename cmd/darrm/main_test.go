package main

import (
	"os"
	"testing"

	"github.com/darrm/darrm/ledger"
)

// TestMain lets a test run darrm as a child process (GO_DARRM_MAIN=1), to
// send it real signals; and points the ledgers' records of every test,
// and of its children, at a temporary folder, never the user's.
func TestMain(m *testing.M) {
	if os.Getenv("GO_DARRM_MAIN") == "1" {
		main()
	}
	dir, err := os.MkdirTemp("", "darrm-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv(ledger.EnvStateDir, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
