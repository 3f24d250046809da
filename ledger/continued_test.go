package ledger

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/provenance"
)

// lineStates returns the state after each line of the ledger file at
// path, as a witness of it would state it: its number, end and hash.
func lineStates(t *testing.T, path string) []Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []Record
	off := int64(0)
	for i, ln := range strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n") {
		off += int64(len(strings.TrimSuffix(ln, "\n"))) + 1
		h := ln[strings.LastIndex(ln, `"sha256":"`)+10:]
		out = append(out, Record{Lines: i + 1, Size: off, Head: h[:64]})
	}
	return out
}

// witnessOf returns a witness of the ledger of header h in the state s.
func witnessOf(h Header, s Record, file string) Witness {
	s.Ensemble, s.LedgerID = h.Ensemble, h.ID
	return Witness{File: file, Record: s}
}

// v3Runs are the spends of the version-3 ledgers the tests upgrade: three
// runs, each of a reservation and a settlement.
func v3Runs() []Spend {
	now := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	return []Spend{
		{Run: "a1", Time: now, Mechanism: "darrm", Eps: 0.3, Delta: 3e-5, Queries: 10},
		{Run: "a1", Time: now, Mechanism: "darrm", Eps: 0.3, Delta: 3e-5, Queries: 7, Final: true},
		{Run: "b2", Time: now, Mechanism: "rr", Eps: 0.1, Delta: 0, Queries: 4},
		{Run: "b2", Time: now, Mechanism: "rr", Eps: 0.1, Delta: 0, Queries: 4, Final: true},
		{Run: "c3", Time: now, Mechanism: "darrm", Eps: 0.3, Delta: 3e-5, Queries: 2},
		{Run: "c3", Time: now, Mechanism: "darrm", Eps: 0.3, Delta: 3e-5, Queries: 2, Final: true},
	}
}

// TestUpgradeCarriesPast: an upgraded ledger carries the old ledger's
// lines, so that a witness of the old ledger at any of its lines is
// checked against that very line: a witness of the old ledger as it was
// passes, for a run and a reader; one of a line it never had, or of a
// line after those carried (the old ledger went on after the copy that
// was upgraded: a rollback), is refused. Every line carried is checked
// as the old ledger's: one changed, a run carried with fewer labels or
// a past cut short is damage. ledger show notes what it continues.
func TestUpgradeCarriesPast(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "v3.ledger")
	h := writeV3(t, path, unique(bound), v3Runs())
	states := lineStates(t, path)
	// A copy of the old ledger as of its 5th line (its third run not yet
	// settled), upgraded: the rollback a witness of line 7 catches.
	early := filepath.Join(dir, "early.ledger")
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(early, b[:states[4].Size], 0o644); err != nil {
		t.Fatal(err)
	}
	bk := Options{StateDir: t.TempDir()}
	if _, err := bk.Upgrade(ctx, path, provenance.Binding{}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := (Options{StateDir: t.TempDir()}).Upgrade(ctx, early, provenance.Binding{}, false); err != nil {
		t.Fatal(err)
	}
	l := mustRead(t, path)
	if u := l.Header().Upgraded; u == nil || u.Past != len(states) || l.Lines() != 1+len(states)+3 || l.Spent().Steps != 7+4+2 {
		t.Fatalf("the upgraded ledger: %+v, %d lines, %d labels", u, l.Lines(), l.Spent().Steps)
	}
	if notes := strings.Join(l.Notes(), "; "); !strings.Contains(notes, "continues ledger 01234567") {
		t.Errorf("its notes do not say what it continues: %s", notes)
	}
	l.Close()

	for _, c := range []struct {
		name, ledger string
		state        Record
		kind         recordKind // -1: accepted
	}{
		{"its header", path, states[0], -1},
		{"its line 3", path, states[2], -1},
		{"its last line", path, states[6], -1},
		{"a line it never had", path, Record{Lines: 3, Size: states[2].Size, Head: strings.Repeat("0", 64)}, pastDiffers},
		{"a line of it at another number", path, Record{Lines: 4, Size: states[2].Size, Head: states[2].Head}, pastDiffers},
		{"its line 5, in the rollback", early, states[4], -1},
		{"its line 7, in the rollback", early, states[6], pastDiffers},
	} {
		for name, ro := range map[string]bool{"a run": false, "a reader": true} {
			w := witnessOf(h, c.state, c.name)
			l, err := Open(ctx, c.ledger, Options{StateDir: t.TempDir(), ReadOnly: ro, Witnesses: []Witness{w}})
			if err == nil {
				l.Close()
			}
			var re *RecordError
			switch {
			case c.kind < 0 && err != nil:
				t.Errorf("%s, a witness of %s: %v", name, c.name, err)
			case c.kind >= 0 && (!errors.As(err, &re) || re.kind != c.kind):
				t.Errorf("%s, a witness of %s: %v, want a *RecordError of kind %d", name, c.name, err, c.kind)
			}
		}
	}

	// The past checked as it is read: a line changed (and its line
	// re-signed), a run carried with fewer labels, a past cut short.
	good, _ := os.ReadFile(path)
	for _, c := range []struct{ name, reason string }{
		{"a past line changed", "sha256 does not match"},
		{"a run carried with fewer labels", "not as that ledger's lines count it"},
		{"a past cut short", "but carries 6 of them"},
	} {
		bad := filepath.Join(t.TempDir(), "bad.ledger")
		var lines [][]byte
		sc := bufio.NewScanner(bytes.NewReader(good))
		sc.Buffer(nil, maxLineBytes+1)
		for sc.Scan() {
			lines = append(lines, append([]byte(nil), sc.Bytes()...))
		}
		switch c.name {
		case "a past line changed":
			lines[3] = bytes.Replace(lines[3], []byte(`"queries":7`), []byte(`"queries":1`), 1)
		case "a run carried with fewer labels":
			_, s, _, err := parseSpendLine(version4, lines[8])
			if err != nil {
				t.Fatal(err)
			}
			s.Queries = 1
			lines = append(lines[:8], resignAfter(t, lines[7], s))
		case "a past cut short":
			lines = append(lines[:7], lines[8:]...)
		}
		if err := os.WriteFile(bad, append(bytes.Join(lines, []byte("\n")), '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Options{StateDir: t.TempDir(), ReadOnly: true}.readOnly(ctx, bad)
		var ce *CorruptError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%s: %v, want damage (%q)", c.name, err, c.reason)
		}
	}
}

// resignAfter returns the spend s as the line after prev, a line of a
// version-4 ledger, with its hash redone: what anyone who knows the
// format writes.
func resignAfter(t *testing.T, prev []byte, s Spend) []byte {
	t.Helper()
	h := string(prev[bytes.LastIndex(prev, []byte(`"sha256":"`))+10:])[:64]
	b, _, err := encodeLine(version4, h, s)
	if err != nil {
		t.Fatal(err)
	}
	return b[:len(b)-1]
}

// forgedContinuation writes, at path, a ledger that claims to continue
// the ledger l with claim, carrying the lines past (its own lines, or
// none) and no spend: what the tables' owner of issue 87 imported in
// place of l.
func forgedContinuation(t *testing.T, path string, l *Ledger, claim upgraded, past [][]byte) {
	t.Helper()
	forgedWith(t, path, Version, l.Header(), claim, past)
}

// forgedWith writes at path a ledger of the given version (version 4 is
// what Upgrade makes of one of version 3) of header h that claims to
// continue another (claim) and carries the lines past.
func forgedWith(t *testing.T, path string, version int, h Header, claim upgraded, past [][]byte) {
	t.Helper()
	h.Version, h.ID, h.Upgraded = version, strings.Repeat("f", 32), &claim
	if version == version4 {
		h.Filter = version3Filter
	}
	line, head, err := encodeLine(version, "", h)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte(nil), line...)
	for _, b := range past {
		line, head = encodePast(version, head, b)
		out = append(out, line...)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestForgedContinuation: issue 87's owner wrote a ledger whose header
// claims to continue ledger X, of a million lines, and put it in X's
// place: every witness and record of X accepted it. Now a claim that
// carries none of X's lines satisfies no witness or record of X, one that
// carries fewer lines than it claims is damage, and one that carries X's
// lines, all of them, must carry X's runs too. A continuation is of a
// ledger of version 3 alone, whose header it keeps: the fourth audit's
// maker carried a current ledger's lines and a line more, which settled
// a killed run at 0, and a continuation could raise the budget.
func TestForgedContinuation(t *testing.T) {
	x := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	for range 5 {
		spend(t, x, 3)
	}
	witness := checkpointOf(t, book, x)
	l := mustRead(t, x)
	defer l.Close()
	states := lineStates(t, x)
	last := states[len(states)-1]
	xb, _ := os.ReadFile(x)
	sum := sha256.Sum256(xb)
	var xlines [][]byte
	for _, ln := range strings.Split(strings.TrimSuffix(string(xb), "\n"), "\n") {
		xlines = append(xlines, []byte(ln))
	}
	million := upgraded{Version: Version, Lines: 1_000_000, SHA256: hex.EncodeToString(sum[:]), ID: l.ID(), Head: last.Head}

	dir := t.TempDir()
	none := filepath.Join(dir, "none.ledger")
	forgedContinuation(t, none, l, million, nil)
	fresh := witnessed(t, witness)
	var re *RecordError
	if err := witnessErr(t, fresh, none); !errors.As(err, &re) || re.kind != unchecked || !strings.Contains(err.Error(), "carries none of its lines") {
		t.Errorf("a continuation that carries no line of X, a witness of X: %v", err)
	}
	if _, err := book.Checkpoint(ctx, none, witness); !errors.As(err, &re) || re.kind != unchecked {
		t.Errorf("a checkpoint of it over X's: %v", err)
	}
	if w, err := ReadWitness(witness); err != nil || w.Record.LedgerID != l.ID() {
		t.Errorf("X's checkpoint after: %+v, %v", w, err)
	}

	// X is of the current version, which darrm never upgrades: a ledger
	// that claims to continue it, carrying its lines (and, as the fourth
	// audit's maker did, a line more that settles a killed run of X at
	// 0), is damage.
	all := filepath.Join(dir, "all.ledger")
	claim := million
	claim.Lines, claim.Past = len(xlines), len(xlines)
	forgedContinuation(t, all, l, claim, xlines)
	if err := witnessErr(t, witnessed(t, witness), all); err == nil || !strings.Contains(err.Error(), "darrm continues (upgrades) only ledgers of version 3") {
		t.Errorf("a continuation of X, of the current version, a witness of X: %v", err)
	}

	// Y is of version 3: a continuation must carry all its lines, and its
	// runs, under Y's own header (its budget kept).
	y := filepath.Join(dir, "y.ledger")
	yh := writeV3(t, y, unique(bound), v3Runs())
	yb, _ := os.ReadFile(y)
	ysum := sha256.Sum256(yb)
	var ylines [][]byte
	for _, ln := range strings.Split(strings.TrimSuffix(string(yb), "\n"), "\n") {
		ylines = append(ylines, []byte(ln))
	}
	ly := mustRead(t, y)
	defer ly.Close()
	yclaim := upgraded{Version: version3, Lines: len(ylines), Past: len(ylines), SHA256: hex.EncodeToString(ysum[:]), ID: yh.ID, Head: ly.Head()}
	short := filepath.Join(dir, "short.ledger")
	shortClaim := yclaim
	shortClaim.Lines, shortClaim.Past = 1_000_000, 1_000_000
	forgedWith(t, short, version4, ly.Header(), shortClaim, ylines[:1])
	if _, err := (Options{StateDir: t.TempDir()}).readOnly(ctx, short); err == nil || !strings.Contains(err.Error(), "but ends after carrying 1 of them") {
		t.Errorf("a continuation of Y that carries 1 of its million lines: %v", err)
	}
	noRuns := filepath.Join(dir, "noruns.ledger")
	forgedWith(t, noRuns, version4, ly.Header(), yclaim, ylines)
	if _, err := (Options{StateDir: t.TempDir()}).readOnly(ctx, noRuns); err == nil || !strings.Contains(err.Error(), "carries 0 of the 3 runs") {
		t.Errorf("a continuation that carries Y's lines but none of its runs: %v", err)
	}
	richer := filepath.Join(dir, "richer.ledger")
	rich := ly.Header()
	rich.Budget.Eps *= 10
	forgedWith(t, richer, version4, rich, yclaim, ylines)
	if _, err := (Options{StateDir: t.TempDir()}).readOnly(ctx, richer); err == nil || !strings.Contains(err.Error(), "its header is not that of ledger") {
		t.Errorf("a continuation of Y with ten times its budget: %v", err)
	}
}

// testPGContinued: an upgraded ledger, imported into PostgreSQL with the
// lines it carries, is charged there as any ledger, and a witness of the
// ledger it continues is checked against the rows of the lines it
// carries: one of a line of that ledger passes, one of a line it never
// had is refused.
func testPGContinued(t *testing.T, db string) {
	path := filepath.Join(t.TempDir(), "v3.ledger")
	h := writeV3(t, path, unique(bound), v3Runs())
	states := lineStates(t, path)
	if _, err := (Options{StateDir: t.TempDir()}).Upgrade(ctx, path, provenance.Binding{}, false); err != nil {
		t.Fatal(err)
	}
	u := pgURL(db, "continued")
	if err := (Options{StateDir: t.TempDir()}).Import(ctx, path, u); err != nil {
		t.Fatal(err)
	}
	fresh := Options{StateDir: t.TempDir(), Witnesses: []Witness{witnessOf(h, states[2], "line 3")}}
	spendOn(t, fresh, u, 2, 2)
	if spent, _, lines := readAll(t, u); spent.Steps != 7+4+2+2 || lines != 1+len(states)+3+2 {
		t.Errorf("the continued ledger in PostgreSQL: %d labels, %d lines", spent.Steps, lines)
	}
	forged := Options{StateDir: t.TempDir(), Witnesses: []Witness{witnessOf(h, Record{Lines: 3, Size: states[2].Size, Head: strings.Repeat("0", 64)}, "forged")}}
	var re *RecordError
	if err := openErr(u, forged); !errors.As(err, &re) || re.kind != pastDiffers {
		t.Errorf("a witness of a line the old ledger never had: %v", err)
	}
}
