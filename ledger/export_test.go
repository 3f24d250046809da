package ledger

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/pgtest"
)

// TestPGExportLineBreak: a line of a PostgreSQL ledger that holds a line
// break (between its tokens, so that it keeps its hash: a database of
// schema version 3 took such a line from an analyst) cannot be written to
// a ledger file, where it would read as two lines: export refuses it,
// naming its line, and leaves no file (the second audit of issue 87 found
// a file of 5,304 bytes that did not verify).
func TestPGExportLineBreak(t *testing.T) {
	if testing.Short() {
		t.Skip("a database of its own: without -short")
	}
	db := pgtest.DB(t)
	u := newPG(t, db, "breaks", accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	spendOn(t, Options{StateDir: t.TempDir()}, u, 2, 1)
	clean := filepath.Join(t.TempDir(), "clean.ledger")
	if err := (Options{StateDir: t.TempDir()}).Export(ctx, u, clean); err != nil {
		t.Fatalf("export of the ledger as darrm wrote it: %v", err)
	}
	// Line 3, the settlement, with a line feed before its spend's JSON
	// (its hash taken again over it, as the database's trigger takes
	// it), its row and the head moved by a byte, as a superuser would
	// with the triggers off.
	s := sessionOn(t, db)
	defer s.close()
	var line []byte
	if err := s.conn.QueryRow(ctx, "SELECT line FROM darrm.lines WHERE n = 3 AND ledger = (SELECT key FROM darrm.ledgers WHERE name = 'breaks')").Scan(&line); err != nil {
		t.Fatal(err)
	}
	prev, raw, _, ok := splitSpendLine(line)
	if !ok {
		t.Fatalf("line 3 is no spend line: %s", line)
	}
	raw = append([]byte("\n"), raw...)
	hash := chainHash(Version, prev, "spend", raw)
	broken := []byte(`{"prev":"` + prev + `","spend":` + string(raw) + `,"sha256":"` + hash + `"}`)
	err := s.exec(`ALTER TABLE darrm.lines DISABLE TRIGGER append_only;
		ALTER TABLE darrm.ledgers DISABLE TRIGGER guard_ledger, DISABLE TRIGGER check_head`)
	if err == nil {
		err = s.exec(`UPDATE darrm.lines SET line = $1, stop = stop + 1 WHERE n = 3 AND ledger = (SELECT key FROM darrm.ledgers WHERE name = 'breaks')`, broken)
	}
	if err == nil {
		err = s.exec(`UPDATE darrm.ledgers SET size = size + 1, head = $1 WHERE name = 'breaks'`, hash)
	}
	if err == nil {
		err = s.exec(`ALTER TABLE darrm.lines ENABLE TRIGGER append_only;
			ALTER TABLE darrm.ledgers ENABLE TRIGGER guard_ledger, ENABLE TRIGGER check_head`)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, _, n := readAll(t, u); n != 3 {
		t.Fatalf("the ledger with the line break reads as %d lines, want 3", n)
	}
	file := filepath.Join(t.TempDir(), "broken.ledger")
	err = (Options{StateDir: t.TempDir()}).Export(ctx, u, file)
	if err == nil || !strings.Contains(err.Error(), "line 3 holds a line break") {
		t.Errorf("export of a line with a line break: %v", err)
	}
	if _, err := os.Lstat(file); !os.IsNotExist(err) {
		t.Errorf("export left %s: %v", file, err)
	}
}
