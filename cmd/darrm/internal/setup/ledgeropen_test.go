package setup

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/internal/statedir"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/provenance"
)

// TestLedgerError: a ledger that is not there is named with the paths close to
// it, and a file of darrm's that is no ledger as what it is, both usage
// errors; a result of an upgrade of a current ledger says so.
func TestLedgerError(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(statedir.Env, filepath.Join(dir, "state"))
	near := filepath.Join(dir, "k.ledger")
	os.WriteFile(near, nil, 0o644)
	_, err := ledger.Open(context.Background(), filepath.Join(dir, "k.ledgr"), ledger.Options{ReadOnly: true})
	if err = LedgerError(err); !cli.IsUsage(err) || !strings.Contains(err.Error(), "did you mean "+near+"?") {
		t.Errorf("a mistyped ledger: %v", err)
	}
	votes := filepath.Join(dir, "votes.csv")
	os.WriteFile(votes, []byte(`# {"darrm-votes":1,"ensemble":"e","K":3,"classes":2}`+"\n0,1,1\n"), 0o644)
	_, err = ledger.Open(context.Background(), votes, ledger.Options{ReadOnly: true})
	if err = LedgerError(err); !cli.IsUsage(err) || !strings.Contains(err.Error(), "is a vote file") {
		t.Errorf("a vote file as a ledger: %v", err)
	}
	// A second ledger: the library names Options.Replace, the
	// command --replace.
	b := provenance.Binding{Ensemble: "e", Teachers: provenance.Teachers{K: 3, Each: accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, Relation: accountant.PrivateTeachers, Kind: provenance.PerQuery, Partition: provenance.SharedData}}
	h := ledger.NewHeader(b, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1, Delta: 1e-3}}, 1e-5, accountant.Filter{Parts: []accountant.FilterPart{{Method: accountant.Simple, Delta: 1e-3}}})
	if _, err := ledger.Create(context.Background(), filepath.Join(dir, "first.ledger"), h, ledger.Options{}); err != nil {
		t.Fatal(err)
	}
	_, err = ledger.Create(context.Background(), filepath.Join(dir, "second.ledger"), h, ledger.Options{})
	if !strings.Contains(err.Error(), "Create again with Options.Replace true") {
		t.Errorf("a second ledger, from the library: %v", err)
	}
	if err = LedgerError(err); !strings.Contains(err.Error(), "run the same darrm ledger init command with --replace") || strings.Contains(err.Error(), "Options.Replace") {
		t.Errorf("a second ledger, from the command: %v", err)
	}
	if status, _ := Explain(err); status != ExitUsage {
		t.Errorf("a second ledger: exit status %d", status)
	}
	var w bytes.Buffer
	if err := report.LedgerUpgraded(&w, "l", ledger.UpgradeResult{Current: true, From: ledger.Version, To: ledger.Version}); err != nil || !strings.Contains(w.String(), "ledger l is of version") || !strings.Contains(w.String(), "there is nothing to upgrade") {
		t.Errorf("Upgraded, current: %v, %q", err, w.String())
	}
	w.Reset()
	err = report.LedgerUpgraded(&w, "postgres://h/db?ledger=l", ledger.UpgradeResult{Current: true, From: ledger.Version, To: ledger.Version, SchemaFrom: 5, SchemaTo: 6, Guarded: true})
	if out := w.String(); err != nil || strings.Contains(out, "nothing to upgrade") || !strings.Contains(out, "its lines need no upgrade") || !strings.Contains(out, "upgraded from version 5 to version 6") {
		t.Errorf("Upgraded, the database's schema: %v, %q", err, out)
	}
}
