package ledger

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/provenance"
)

// writeV3 writes a ledger of version 3 as darrm wrote them, bound to b
// with budget (10, 1e-3): a hash chain, each spend with the (ε, δ) sums
// before its run, and returns its header.
func writeV3(t *testing.T, path string, b provenance.Binding, spends []Spend) Header {
	return writeV3Budget(t, path, b, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 10, Delta: 1e-3}}, spends)
}

func writeV3Budget(t *testing.T, path string, b provenance.Binding, budget accountant.Budget, spends []Spend) Header {
	t.Helper()
	h := NewHeader(b, budget, 1e-5, simpleFilter(budget))
	h.Version, h.ID, h.Created = 3, "0123456789abcdef0123456789abcdef", time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	// Version 3 headers have no filter.
	var fields map[string]any
	raw, _ := json.Marshal(h)
	json.Unmarshal(raw, &fields)
	delete(fields, "filter")
	delete(fields, "filter_parts")
	enc := func(prev, kind string, v any) (string, string) {
		raw, _ := json.Marshal(v)
		sum := chainHash(3, prev, kind, raw)
		b, _ := json.Marshal(line{Prev: &prev, Header: map[bool]*json.RawMessage{true: (*json.RawMessage)(&raw)}[kind == "header"],
			Spend: map[bool]*json.RawMessage{true: (*json.RawMessage)(&raw)}[kind == "spend"], SHA256: sum})
		return string(b) + "\n", sum
	}
	s, head := enc("", "header", fields)
	var spent, prior accountant.Sequence
	run := ""
	for _, sp := range spends {
		if sp.Run != run {
			prior, run = spent, sp.Run
		}
		p := prior
		sp.Prior = &p
		var l string
		l, head = enc(head, "spend", sp)
		s += l
		var err error
		if spent, err = prior.Add(accountant.Guarantee{Eps: sp.Eps, Delta: sp.Delta}, sp.Queries); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return h
}

// recordOld writes, in the state folder of opts, the record that an earlier darrm
// kept of the ledger of header h: its id, lines and last line,
// no byte count.
func recordOld(t *testing.T, opts Options, h Header, path string, lines int, head string) {
	t.Helper()
	st, err := openState(opts, h.Ensemble)
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	fi, _ := os.Stat(path)
	dev, ino := fileID(fi)
	r := newRecord(h, "", path, dev, ino, lines, 0, head)
	if err := st.write(ctx, r); err != nil {
		t.Fatal(err)
	}
}

// TestUpgrade: a ledger of version 3 (no descriptions, no filter) is
// read, refused for a run with the command that upgrades it, and upgraded
// without --replace when the record is its own, keeping its binding and
// its total by simple composition, the filter that holds its (ε, δ)
// spends; the record of another user, of the old ledger as it was or
// behind it, follows it to the new one; the old file is kept, marked,
// and read with a note, and neither upgraded nor released on; an
// interrupted upgrade completes; a version-3
// ledger that its record refuses (lines removed) is not upgraded, nor is
// a second ledger of an ensemble without --replace.
func TestUpgrade(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "v3.ledger")
	own := unique(bound)
	now := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	spends := []Spend{
		{Run: "a1", Time: now, Mechanism: "darrm", Eps: 0.3, Delta: 3e-5, Queries: 10},
		{Run: "a1", Time: now, Mechanism: "darrm", Eps: 0.3, Delta: 3e-5, Queries: 7, Final: true},
		{Run: "b2", Time: now, Mechanism: "rr", Eps: 0.1, Delta: 0, Queries: 4, Final: true},
	}
	h := writeV3(t, path, own, spends)
	old, err := book.readOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := old.Balance()
	head, lines := old.Head(), old.Lines()
	old.Close()
	recordOld(t, Options{}, h, path, lines, head)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var older struct{ SHA256 string }
	if err := json.Unmarshal([]byte(strings.Split(string(b), "\n")[lines-2]), &older); err != nil {
		t.Fatal(err)
	}
	other := Options{StateDir: t.TempDir()}
	recordOld(t, other, h, path, lines-1, older.SHA256)
	forged := Options{StateDir: t.TempDir()}
	recordOld(t, forged, h, path, lines-1, strings.Repeat("0", 64))
	var ve *versionError
	if err := openErr(path, Options{}); !errors.As(err, &ve) || ve.Version != 3 || !strings.Contains(err.Error(), "darrm ledger upgrade "+path) {
		t.Fatalf("a run on version 3: %v", err)
	}
	other3 := own
	other3.K = 9
	var be *bindingError
	if _, err := book.Upgrade(ctx, path, other3, false); !errors.As(err, &be) {
		t.Errorf("upgrade contradicting the binding: %v", err)
	}
	res, err := book.Upgrade(ctx, path, provenance.Binding{}, false)
	if err != nil || res.From != 3 || res.Runs != 2 || res.Backup != path+".v3" || res.Previous != nil {
		t.Fatalf("upgrade of version 3: %+v, %v", res, err)
	}
	l := open(t, path)
	after, _ := l.Balance()
	u := l.Header().Upgraded
	simple := accountant.Guarantee{Eps: 7*0.3 + 4*0.1, Delta: 7 * 3e-5}
	if b := binding(t, l); b != own || after.Composition != accountant.Simple || l.Header().Filter != accountant.Simple || u == nil || u.ID != h.ID || u.Head != head || u.Lines != lines ||
		!near(after.Total.Eps, simple.Eps) || !near(after.Total.Delta, simple.Delta) || before.Total != after.Total {
		t.Errorf("upgraded: binding %+v, balance %+v (was %+v), upgraded from %+v", b, after, before, u)
	}
	l.Close()
	spend(t, path, 1)

	// The kept file: version-3 readers refuse its last line; darrm reads
	// it and says what it is.
	kept, _ := os.ReadFile(res.Backup)
	last := strings.Split(strings.TrimSuffix(string(kept), "\n"), "\n")
	if !isMarker([]byte(last[len(last)-1])) {
		t.Errorf("the kept file does not end with the mark: %q", last[len(last)-1])
	}
	if k, err := book.readOnly(ctx, res.Backup); err != nil || !strings.Contains(strings.Join(k.Notes(), "; "), "marked as upgraded") {
		t.Errorf("the kept file: %v, %v", err, k)
	} else {
		k.Close()
	}

	// The kept copy is no ledger to upgrade or release on: an upgrade of
	// it made a second live ledger of the same spends, and darrm's own
	// message on a release suggested it (7 labels
	// released on each, where 7 fitted).
	other2 := Options{StateDir: t.TempDir()}
	for name, err := range map[string]error{
		"an upgrade of the kept copy": func() error { _, err := other2.Upgrade(ctx, res.Backup, provenance.Binding{}, false); return err }(),
		"a release on the kept copy":  openErr(res.Backup, other2),
	} {
		var ve *versionError
		if !errors.As(err, &ve) || !ve.Kept || !strings.Contains(err.Error(), "never upgrade this copy") || strings.Contains(err.Error(), "upgrade it once") {
			t.Errorf("%s: %v, want it refused as the kept copy", name, err)
		}
	}
	if _, err := os.Stat(backupName(res.Backup, version3)); err == nil {
		t.Errorf("the refused upgrade of the kept copy kept a copy of it")
	}

	// Interrupted after the mark, before the new ledger took the old one's
	// place (the old file linked to its backup name, then marked):
	// upgrading again completes it.
	again := filepath.Join(dir, "again.ledger")
	writeV3(t, again, unique(bound), spends)
	if err := os.Link(again, backupName(again, version3)); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(again, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"upgraded":{"to":4,"time":"2025-03-01T00:00:00Z"}}` + "\n")
	f.Close()
	if r, err := book.readOnly(ctx, again); err != nil || !strings.Contains(strings.Join(r.Notes(), "; "), "an upgrade that was interrupted") {
		t.Errorf("the file of an interrupted upgrade: %v, %v", err, r)
	} else {
		r.Close()
	}
	if _, err := book.Upgrade(ctx, again, provenance.Binding{}, false); err != nil {
		t.Fatalf("upgrade after an interrupted one: %v", err)
	}
	if res, err := book.Upgrade(ctx, again, provenance.Binding{}, false); err != nil || !res.Current || res.From != version4 {
		t.Errorf("upgrade of a ledger of the current version: %+v, %v", res, err)
	}
	if l, err := other.forRun(ctx, path); err != nil {
		t.Errorf("another user's record of the old ledger: %v", err)
	} else {
		l.Close()
	}
	recordError(t, "a record of a line the old ledger never had", openErr(path, forged), pastDiffers)
	stranger := Options{StateDir: t.TempDir()}
	recordOld(t, stranger, Header{Ensemble: h.Ensemble, ID: "fedcba9876543210fedcba9876543210"}, path, 2, "x")
	recordError(t, "a record of another ledger", openErr(path, stranger), secondLedger)

	// Behind its record: not upgraded.
	cut := filepath.Join(dir, "cut.ledger")
	own2 := unique(bound)
	h2 := writeV3(t, cut, own2, spends)
	r, _ := book.readOnly(ctx, cut)
	recordOld(t, Options{}, h2, cut, r.Lines(), r.Head())
	r.Close()
	writeV3(t, cut, own2, spends[:2])
	_, err = book.Upgrade(ctx, cut, provenance.Binding{}, false)
	recordError(t, "upgrade of a version 3 behind its record", err, behind)

	// A second ledger of an ensemble recorded with another.
	second := filepath.Join(dir, "second.ledger")
	writeV3(t, second, own, spends)
	_, err = book.Upgrade(ctx, second, provenance.Binding{}, false)
	recordError(t, "upgrade of a second ledger", err, secondLedger)
	if _, err := os.Stat(backupName(second, 3)); err == nil {
		t.Error("a refused upgrade kept a copy")
	}
	res, err = book.Upgrade(ctx, second, provenance.Binding{}, true)
	if err != nil || res.Previous == nil {
		t.Fatalf("upgrade --replace of a second ledger: %+v, %v", res, err)
	}
	// The ledger the record named is retired where it is, as by Create
	// with replace: refused to anyone.
	var ended *endedError
	if err := openErr(res.Previous.Path, Options{StateDir: t.TempDir()}); !errors.As(err, &ended) || ended.end.Reason != reasonRetired {
		t.Errorf("the ledger upgrade --replace replaced, %s: %v, want it retired", res.Previous.Path, err)
	}
}

func near(a, b float64) bool { return a >= b && a-b <= 1e-12*b }

// TestUpgradeFilter: an upgrade keeps the composition the version-3
// ledger was under, simple composition, whatever the spends: issue 46's
// one-vote ledger at budget (3, 1e-5) that had spent (2.95, 0) in pure
// labels keeps its total of 2.95 and allows at most one more label of
// 0.05, none of 0.2 (the zCDP filter, which the upgrade chose before for
// pure spends, made its total 1.6 and allowed more than a hundred). A
// pure budget, and the private-teachers relation, too.
func TestUpgradeFilter(t *testing.T) {
	now := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	spends := []Spend{
		{Run: "a1", Time: now, Mechanism: "darrm-one-vote", Eps: 0.05, Queries: 30, Final: true},
		{Run: "b2", Time: now, Mechanism: "darrm-one-vote", Eps: 0.05, Queries: 29, Final: true},
	}
	oneVote := provenance.Binding{Ensemble: "pate", Teachers: provenance.Teachers{K: 11, Relation: accountant.OneVote, Kind: provenance.Fixed, Partition: provenance.KeyedHash}}
	for _, tc := range []struct {
		b      provenance.Binding
		budget accountant.Budget
	}{
		{oneVote, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 3, Delta: 1e-5}}},
		{oneVote, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 3}}},
		{bound, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 3, Delta: 1e-5}}},
	} {
		path := filepath.Join(t.TempDir(), "v3.ledger")
		b := unique(tc.b)
		writeV3Budget(t, path, b, tc.budget, spends)
		res, err := book.Upgrade(ctx, path, provenance.Binding{}, false)
		if err != nil || res.Filter != accountant.Simple {
			t.Fatalf("budget %v: upgrade %+v, %v", tc.budget, res, err)
		}
		l, err := book.readOnly(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		bal, err := l.Balance()
		l.Close()
		if err != nil || l.Header().Filter != accountant.Simple || bal.Composition != accountant.Simple || math.Abs(bal.Total.Eps-2.95) > 1e-9 {
			t.Errorf("budget %v: %+v (%v), want simple composition, eps 2.95", tc.budget, bal, err)
		}
		for _, c := range []struct {
			eps float64
			max int
		}{{0.05, 1}, {0.2, 0}} {
			l, allowed, err := openRun(ctx, book, path, "darrm-one-vote", b, accountant.ApproxStep(accountant.Guarantee{Eps: c.eps}), -1)
			if err != nil || allowed > c.max {
				t.Errorf("budget %v: labels of %g allowed after the upgrade: %d (%v), want at most %d", tc.budget, c.eps, allowed, err, c.max)
			}
			if l != nil {
				l.Close()
			}
		}
	}
}

// TestOldVersionsRefused: the development formats before version 3 are
// refused with a version error, read only or for a run.
func TestOldVersionsRefused(t *testing.T) {
	for _, v := range []int{1, 2} {
		path := filepath.Join(t.TempDir(), "old.ledger")
		h := NewHeader(unique(bound), accountant.Budget{Guarantee: accountant.Guarantee{Eps: 10, Delta: 1e-3}}, 1e-5, simpleFilter(accountant.Budget{Guarantee: accountant.Guarantee{Eps: 10, Delta: 1e-3}}))
		h.Version = v
		raw, _ := json.Marshal(h)
		os.WriteFile(path, []byte(`{"header":`+string(raw)+`,"sha256":"x"}`+"\n"), 0o644)
		var ve *versionError
		// The darrm that wrote it has no upgrade, and a new ledger
		// forgets its spends unless the message says to count them.
		if _, err := book.readOnly(ctx, path); !errors.As(err, &ve) || !strings.Contains(err.Error(), "no longer reads") ||
			strings.Contains(err.Error(), "upgrade it with the darrm that wrote it") || !strings.Contains(err.Error(), "whose budget leaves out what this one spent") {
			t.Errorf("version %d read: %v", v, err)
		}
		if err := openErr(path, Options{}); !errors.As(err, &ve) {
			t.Errorf("version %d run: %v", v, err)
		}
	}
}

// TestUpgradeCurrentDamaged: Upgrade of a ledger of the current version
// checks it: a damaged one is a *CorruptError, not Current.
func TestUpgradeCurrentDamaged(t *testing.T) {
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	spend(t, path, 2)
	if res, err := book.Upgrade(ctx, path, provenance.Binding{}, false); err != nil || !res.Current {
		t.Fatalf("a sound current ledger: %+v, %v", res, err)
	}
	b := mustReadFile(t, path)
	os.WriteFile(path, []byte(strings.Replace(string(b), `"queries":2`, `"queries":1`, 1)), 0o644)
	res, err := book.Upgrade(ctx, path, provenance.Binding{}, false)
	corruptAt(t, "a damaged current ledger", err, 2, "sha256")
	if res.Current {
		t.Error("a damaged ledger was said to be current")
	}
}

// TestUpgradeBackupInTheWay: an upgrade that cannot keep the old file
// (another file has its backup name) says so and leaves the ledger as it
// was, unmarked, with nothing beside it; once that file is moved away,
// the upgrade puts the new ledger in place with the old file's
// permissions.
func TestUpgradeBackupInTheWay(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "v3.ledger")
	writeV3(t, path, unique(bound), []Spend{{Run: "a1", Time: time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC), Mechanism: "rr", Eps: 0.1, Queries: 4, Final: true}})
	os.Chmod(path, 0o640)
	before, _ := os.ReadFile(path)
	backup := backupName(path, 3)
	os.WriteFile(backup, []byte("someone else's"), 0o644)
	book := Options{StateDir: t.TempDir()}
	_, err := book.Upgrade(ctx, path, provenance.Binding{}, false)
	if want := "ledger upgrade: keep the version-3 file as " + backup + ": "; err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "(move that file away first)") {
		t.Errorf("a file in the backup's place: %v, want %q...", err, want)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the ledger changed")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("the folder holds %v", entries)
	}
	os.Remove(backup)
	if _, err := book.Upgrade(ctx, path, provenance.Binding{}, false); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("the upgraded ledger: %v, %v", st, err)
	}
	if kept, _ := os.ReadFile(backup); !strings.HasPrefix(string(kept), string(before)) || len(kept) == len(before) {
		t.Errorf("the kept file holds %q", kept)
	}
}
