package ledger

import (
	"strings"
	"testing"
)

// TestPGMessagesSayLedger: what a PostgreSQL ledger is refused for speaks
// of the ledger and its database, never of a file; a file's messages
// still speak of the file.
func TestPGMessagesSayLedger(t *testing.T) {
	const url = "postgres://alice@db.example/budgets?ledger=team"
	rec := Record{Path: url, LedgerID: "0123456789abcdef", Lines: 9}
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"behind", &RecordError{kind: behind, Path: url, Ensemble: "e", Record: rec, File: "/state/e.json", Lines: 5}, "go on from this ledger as it is"},
		{"diverged", &RecordError{kind: diverged, Path: url, Ensemble: "e", Record: rec, File: "/state/e.json", Lines: 9}, "the ledger's chain holds"},
		{"not a ledger", (&Ledger{path: url}).notHeader(), "name the ledger that darrm ledger init made"},
		{"lock timeout", &lockTimeoutError{what: "ledger " + url, timeout: DefaultLockTimeout, holder: "another darrm run"}, "gave up after waiting 30s"},
	} {
		msg := c.err.Error()
		if strings.Contains(msg, "file") || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %q\nwant it to say %q, and no file", c.name, msg, c.want)
		}
	}
	for kind, want := range map[recordKind]string{behind: "go on from this file as it is", diverged: "The file was replaced by another copy"} {
		e := &RecordError{kind: kind, Path: "/data/k11.ledger", Ensemble: "e", Record: rec, File: "/state/e.json", Lines: 5}
		if !strings.Contains(e.Error(), want) {
			t.Errorf("a file's record error %d: %q, want %q", kind, e.Error(), want)
		}
	}
}
