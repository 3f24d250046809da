package ledgernotes

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/ledger"
)

// TestError: a ledger that is not there is named with the paths close to
// it, and a file of darrm's that is no ledger as what it is, both usage
// errors; a result of an upgrade of a current ledger says so.
func TestError(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(ledger.EnvStateDir, filepath.Join(dir, "state"))
	near := filepath.Join(dir, "k.ledger")
	os.WriteFile(near, nil, 0o644)
	_, err := ledger.ReadOnly(context.Background(), filepath.Join(dir, "k.ledgr"), ledger.Options{})
	if err = Error(err); !cli.IsUsage(err) || !strings.Contains(err.Error(), "did you mean "+near+"?") {
		t.Errorf("a mistyped ledger: %v", err)
	}
	votes := filepath.Join(dir, "votes.csv")
	os.WriteFile(votes, []byte(`# {"darrm-votes":1,"ensemble":"e","K":3,"classes":2}`+"\n0,1,1\n"), 0o644)
	_, err = ledger.ReadOnly(context.Background(), votes, ledger.Options{})
	if err = Error(err); !cli.IsUsage(err) || !strings.Contains(err.Error(), "is a vote file") {
		t.Errorf("a vote file as a ledger: %v", err)
	}
	var w bytes.Buffer
	if err := Upgraded(&w, "l", ledger.UpgradeResult{Current: true}); err != nil || !strings.Contains(w.String(), "ledger l is of version") {
		t.Errorf("Upgraded, current: %v, %q", err, w.String())
	}
}
