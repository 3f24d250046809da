// Package statedir locates darrm's per-user state folder, where the
// ledgers' records are kept. Package ledger keeps its records there unless
// told another folder; the command keeps its other private state there.
package statedir

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Env is the environment variable that overrides the folder (tests point
// it at a temporary one).
const Env = "DARRM_STATE_DIR"

// Default returns the folder of darrm's per-user state: $DARRM_STATE_DIR
// if set, else $XDG_STATE_HOME/darrm if that is set, else
// $HOME/.local/state/darrm. The folder it comes from must be an absolute
// path (an *Error names the variable otherwise): resolved against each
// run's working directory, a relative one would give one ledger a record
// per directory, each vouching for less, so that an older copy of the
// ledger restored and released from another directory would pass.
func Default() (string, error) {
	for _, v := range [...]struct{ name, sub string }{{Env, ""}, {"XDG_STATE_HOME", "darrm"}} {
		if d := os.Getenv(v.name); d != "" {
			if !filepath.IsAbs(d) {
				return "", &Error{Var: v.name, Value: d}
			}
			return filepath.Join(d, v.sub), nil
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("ledger: no folder for the ledgers' records (set %s): %w", Env, err)
	}
	if !filepath.IsAbs(home) {
		return "", &Error{Var: "HOME", Value: home}
	}
	return filepath.Join(home, ".local", "state", "darrm"), nil
}

// Error is a state folder that is not an absolute path: the environment
// variable Var, or with Var "" a ledger's Options.StateDir.
type Error struct{ Var, Value string }

func (e *Error) Error() string {
	what := "environment variable " + e.Var
	if e.Var == "" {
		what = "ledger: Options.StateDir"
	}
	return fmt.Sprintf("%s = %s: must be an absolute path, or darrm would keep a record of each ledger per working directory; set %s to an absolute folder", what, strconv.Quote(e.Value), Env)
}

// BadInput reports that the error is the caller's input, not a failure.
func (e *Error) BadInput() bool { return true }
