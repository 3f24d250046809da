package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/statedir"
)

// resign rewrites the ledger at path with edit applied to the content of
// each line (the header or spend JSON, by line number from 1) and the
// chain hashed again, as someone who knows the format could: the lines
// then check, and only the record can tell.
func resign(t *testing.T, path string, edit func(n int, raw string) string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := resignLines(t, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"), edit)
	if err := os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// resignLines returns the lines of a ledger, without their line ends,
// with edit applied as resign applies it, and the end of a line that holds
// pairs named where it now ends.
func resignLines(t *testing.T, lines []string, edit func(n int, raw string) string) []string {
	t.Helper()
	var out []string
	ends := []int64{0}
	prev, version := "", Version
	for i, s := range lines {
		var ln line
		if err := json.Unmarshal([]byte(s), &ln); err != nil {
			t.Fatal(err)
		}
		kind, raw := "spend", ln.Spend
		if ln.Header != nil {
			kind, raw = "header", ln.Header
		}
		msg := json.RawMessage(edit(i+1, string(*raw)))
		var named Spend
		if kind == "spend" && json.Unmarshal(msg, &named) == nil && named.BitsAt != nil && named.BitsAt.Line < len(ends) && named.BitsAt.End != ends[named.BitsAt.Line] {
			named.BitsAt.End = ends[named.BitsAt.Line]
			msg, _ = json.Marshal(named)
		}
		if kind == "header" {
			var v struct{ Version int }
			json.Unmarshal(msg, &v)
			version = v.Version
		}
		p := prev
		ln.Prev = &p
		if kind == "header" {
			ln.Header = &msg
		} else {
			ln.Spend = &msg
		}
		ln.SHA256 = chainHash(version, prev, kind, msg)
		prev = ln.SHA256
		enc, _ := json.Marshal(ln)
		out = append(out, string(enc))
		ends = append(ends, ends[len(ends)-1]+int64(len(enc))+1)
	}
	return out
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.SplitAfter(string(b), "\n")
}

// openErr opens the ledger at path for a run and closes it: the error.
func openErr(path string, opts Options) error {
	l, err := opts.forRun(ctx, path)
	if err == nil {
		l.Close()
	}
	return err
}

// readErr reads the ledger at path and closes it: the error, or what its
// record says against it.
func readErr(path string) error {
	l, err := book.readOnly(ctx, path)
	if err == nil {
		err = l.RecordErr()
		l.Close()
	}
	return err
}

func corruptAt(t *testing.T, name string, err error, line int, reason string) {
	t.Helper()
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Line != line || !strings.Contains(ce.Reason, reason) {
		t.Errorf("%s: %v, want a CorruptError at line %d saying %q", name, err, line, reason)
	}
}

func recordError(t *testing.T, name string, err error, kind recordKind) {
	t.Helper()
	var re *RecordError
	if !errors.As(err, &re) || re.kind != kind {
		t.Errorf("%s: %v, want a RecordError of kind %d", name, err, kind)
		return
	}
	if msg := err.Error(); !strings.Contains(msg, "darrm ledger adopt") && !strings.Contains(msg, "with replace true") && !strings.Contains(msg, "with Options.Replace true") {
		t.Errorf("%s: the message gives no way to resolve it: %v", name, err)
	}
}

// TestChain: a line removed, moved, or changed with its own hash redone
// breaks the chain at that line, which reading the ledger reports. A
// release reads the lines from the one its record vouches for: it reports
// an edit that moves that line (a line removed), and goes on past one in
// place before it (two lines swapped, one rewritten to the same length)
// with every spend counted, since the totals it reads are carried by the
// last line.
func TestChain(t *testing.T) {
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	for name, c := range map[string]struct {
		edit    func([]string) []string
		line    int
		release bool // a release sees it
	}{
		"middle spend removed": {func(l []string) []string { return append(l[:2:2], l[3:]...) }, 3, true},
		"two spends swapped":   {func(l []string) []string { l[2], l[3] = l[3], l[2]; return l }, 3, false},
		"spend rehashed alone": {func(l []string) []string {
			var ln line
			json.Unmarshal([]byte(l[3]), &ln)
			raw := json.RawMessage(strings.Replace(string(*ln.Spend), `"queries":2`, `"queries":0`, 1))
			ln.Spend = &raw
			ln.SHA256 = chainHash(Version, *ln.Prev, "spend", raw)
			b, _ := json.Marshal(ln)
			l[3] = string(b) + "\n"
			return l
		}, 5, false},
	} {
		path := newLedger(t, budget)
		spend(t, path, 1)
		spend(t, path, 2)
		spend(t, path, 3)
		os.WriteFile(path, []byte(strings.Join(c.edit(lines(t, path)), "")), 0o644)
		err := readErr(path)
		corruptAt(t, name+" (read)", err, c.line, "chain")
		if c.release {
			err := openErr(path, Options{})
			corruptAt(t, name, err, c.line, "chain")
			continue
		}
		l := open(t, path)
		if n := l.Spent().Steps; n != 6 {
			t.Errorf("%s: a release counts %d labels, want 6", name, n)
		}
		l.Close()
	}
	// A spend of eps 0 (re-signed, so that only the rule catches it)
	// names its line.
	path := newLedger(t, budget)
	spend(t, path, 1)
	resign(t, path, func(n int, raw string) string { return strings.Replace(raw, `"eps":0.3`, `"eps":0`, 1) })
	err := readErr(path)
	corruptAt(t, "spend of eps 0", err, 2, "eps = 0")
}

// TestRecord: everything the record is there to catch (lines removed at
// the end, an old copy restored, a line cut after its fsync returned, a
// ledger re-signed after an edit, a second ledger for the ensemble) is
// refused with a message that gives the command to resolve it, and
// darrm ledger adopt (Adopt) resolves it on purpose. A ledger moved, or
// ahead of the record (another user's runs), is fine.
func TestRecord(t *testing.T) {
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	path := newLedger(t, budget)
	spend(t, path, 1)
	old, _ := os.ReadFile(path)
	spend(t, path, 2)
	whole, _ := os.ReadFile(path)
	restore := func(b []byte) { os.WriteFile(path, b, 0o644) }

	ls := lines(t, path)
	restore([]byte(strings.Join(ls[:len(ls)-2], "")))
	err := openErr(path, Options{})
	recordError(t, "last spend removed", err, behind)
	err = readErr(path)
	recordError(t, "last spend removed (read)", err, behind)

	restore(old)
	err = openErr(path, Options{})
	recordError(t, "old copy restored", err, behind)

	restore(whole[:len(whole)-20])
	err = openErr(path, Options{})
	recordError(t, "last line cut after its fsync", err, tornAfterSync)
	if b, _ := os.ReadFile(path); string(b) != string(whole[:len(whole)-20]) {
		t.Error("a refused ledger was changed")
	}

	restore(whole)
	resign(t, path, func(n int, raw string) string {
		return strings.Replace(raw, `"budget":{"eps":50`, `"budget":{"eps":500`, 1)
	})
	if l, err := book.forRun(ctx, path); err == nil {
		l.Close()
		t.Fatal("budget raised and re-signed: opened")
	} else {
		recordError(t, "budget raised and re-signed", err, diverged)
	}

	restore(whole)
	l := open(t, path) // the right ledger again
	l.Close()

	// A second ledger for the ensemble: init refuses, --replace makes it
	// the recorded one and retires the first, which is then refused, by
	// the record and, for anyone, by its end line.
	h := l.Header()
	second := filepath.Join(t.TempDir(), "second.ledger")
	_, err = book.create(ctx, second, h, false)
	recordError(t, "second ledger at init", err, secondLedger)
	if msg := err.Error(); !strings.Contains(msg, "call Create again with Options.Replace true") || strings.Contains(msg, "--replace") {
		t.Errorf("second ledger at init: the library's message does not name the argument: %v", err)
	}
	if _, serr := os.Stat(second); serr == nil {
		t.Error("a refused init left a file")
	}
	if _, err := book.create(ctx, second, h, true); err != nil {
		t.Fatal(err)
	}
	sl := open(t, second)
	secondID := sl.Header().ID
	sl.Close()

	// Retired, the first is never the ensemble's ledger again: not by
	// Adopt, not for an analyst without a record.
	var ended *endedError
	if _, _, err := book.Adopt(ctx, path); !errors.As(err, &ended) || ended.end.Successor != secondID || ended.line != 6 {
		t.Fatalf("adopt of a retired ledger: %v", err)
	}
	if err := openErr(path, Options{StateDir: t.TempDir()}); !errors.As(err, &ended) || !strings.Contains(err.Error(), "was retired") {
		t.Errorf("a fresh analyst on a retired ledger: %v", err)
	}
	if r, err := book.readOnly(ctx, path); err != nil || r.chain.closedBy == nil || r.chain.closedBy.Reason != reasonRetired || r.Lines() != 6 {
		t.Errorf("the retired ledger read: %v", err)
	} else {
		r.Close()
	}
	spend(t, second, 1)

	// Moved: the same ledger under another name.
	moved := filepath.Join(t.TempDir(), "moved.ledger")
	if err := os.Rename(second, moved); err != nil {
		t.Fatal(err)
	}
	spend(t, moved, 1)

	// Ahead of the record: another user (another state folder) spent.
	other := Options{StateDir: t.TempDir()}
	lo, err := other.forRun(ctx, moved)
	if err != nil {
		t.Fatal(err)
	}
	lo.begin(ctx, "darrm", binding(t, lo), accountant.ApproxStep(step))
	lo.Reserve(ctx, 1)
	lo.Settle(ctx, 1)
	lo.Close()
	spend(t, moved, 1)
}

// TestAdoptRetires: Adopt of another ledger of the ensemble over the one
// the record names retires that one where it is, as Create with replace
// does, so that an analyst whose record still names it is refused by its
// end line. Adopt of an older copy of the recorded ledger retires nothing,
// nor does Adopt of a ledger put where the recorded one was.
func TestAdoptRetires(t *testing.T) {
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	h := NewHeader(unique(bound), budget, 1e-5, simpleFilter(budget))
	mine, theirs := Options{StateDir: t.TempDir()}, Options{StateDir: t.TempDir()}
	first, second := filepath.Join(t.TempDir(), "first.ledger"), filepath.Join(t.TempDir(), "second.ledger")
	if _, err := mine.create(ctx, first, h, false); err != nil {
		t.Fatal(err)
	}
	if _, err := theirs.create(ctx, second, h, false); err != nil {
		t.Fatal(err)
	}
	adopt := func(o Options, path string) (*Record, string) {
		t.Helper()
		prev, l, err := o.Adopt(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return prev, l.Header().ID
	}
	prev, secondID := adopt(mine, second)
	if prev == nil || prev.LedgerID == secondID {
		t.Fatalf("adopt of a second ledger: the record it replaced %+v", prev)
	}
	var ended *endedError
	if err := openErr(first, Options{StateDir: t.TempDir()}); !errors.As(err, &ended) || ended.end.Successor != secondID || ended.end.Reason != reasonRetired {
		t.Errorf("a release on the ledger adopt replaced: %v, want it retired for %.8s", err, secondID)
	}

	// An older copy of the recorded ledger, adopted: the same ledger,
	// which goes on.
	old, _ := os.ReadFile(second)
	l, err := mine.forRun(ctx, second)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.begin(ctx, "darrm", binding(t, l), accountant.ApproxStep(step)); err != nil {
		t.Fatal(err)
	}
	l.Reserve(ctx, 1)
	l.Settle(ctx, 1)
	l.Close()
	os.WriteFile(second, old, 0o644)
	if prev, id := adopt(mine, second); prev == nil || prev.LedgerID != id || prev.Lines <= 1 {
		t.Errorf("adopt of an older copy: the record it replaced %+v", prev)
	}
	if err := openErr(second, mine); err != nil {
		t.Errorf("the older copy adopted: %v", err)
	}

	// Another ledger put where the recorded one was: nothing there to
	// retire.
	third := filepath.Join(t.TempDir(), "third.ledger")
	if _, err := (Options{StateDir: t.TempDir()}).create(ctx, third, h, false); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(third, second); err != nil {
		t.Fatal(err)
	}
	if prev, id := adopt(mine, second); prev == nil || prev.LedgerID != secondID || id == secondID {
		t.Errorf("adopt of a ledger in the recorded one's place: the record it replaced %+v", prev)
	}
	if err := openErr(second, mine); err != nil {
		t.Errorf("the ledger adopted in the recorded one's place: %v", err)
	}
}

// TestReadNeverWrites: reading a file as a ledger (ReadOnly, as darrm
// ledger show does, or Open, as a release does) writes nothing to a file
// that is no ledger, even one without a final line end; and ReadOnly
// writes no record.
func TestReadNeverWrites(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"config.json": `{"a":1}`,
		"votes.csv":   "id,t1,t2,t3\nq1,0,1,1\nq2,1,1,0",
		"empty":       "",
		"header only": `{"prev":"","header":{"version":2}`,
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		os.WriteFile(path, []byte(content), 0o644)
		if err := readErr(path); err == nil {
			t.Errorf("%s: read as a ledger", name)
		}
		if err := openErr(path, Options{}); err == nil {
			t.Errorf("%s: opened as a ledger", name)
		}
		if b, _ := os.ReadFile(path); string(b) != content {
			t.Errorf("%s: changed to %q", name, b)
		}
	}
	state := t.TempDir()
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 5, Delta: 1e-3}})
	l, err := Options{StateDir: state}.readOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(l.Notes(), "; "), "no record") {
		t.Errorf("notes %q", l.Notes())
	}
	l.Close()
	if entries, _ := os.ReadDir(state); len(entries) != 0 {
		t.Errorf("ReadOnly wrote %v", entries)
	}
}

// TestNotLedgerFiles: a directory, a FIFO, a device or a missing file is
// refused at once, without waiting on the FIFO or reading the device; a
// regular file of any size is read one bounded line at a time.
func TestNotLedgerFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	mkfifo(t, fifo)
	big := filepath.Join(dir, "zeros")
	f, _ := os.Create(big)
	f.Truncate(1 << 30) // a sparse GiB of zero bytes, no line end
	f.Close()
	for _, p := range []string{dir, fifo, "/dev/zero", "/dev/full", filepath.Join(dir, "missing")} {
		for _, open := range []func() error{
			func() error { return openErr(p, Options{}) },
			func() error { return readErr(p) },
		} {
			var ne *NotLedgerError
			if err := open(); !errors.As(err, &ne) {
				t.Errorf("%s: %v, want a NotLedgerError", p, err)
			}
		}
	}
	err := readErr(big)
	var ne *NotLedgerError
	if !errors.As(err, &ne) || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("a GiB of zeros: %v, want a NotLedgerError saying its first line is too long", err)
	}
}

// TestRecordNeverFallsBack: while a run holds a ledger, a copy of it is
// spent from. The run's later writes are refused, and the record keeps
// vouching for the copy, with its id, lines and head: the spends on the
// copy stay counted, the run's ledger is refused, and a record never
// mixes two ledgers. A settlement that the record refused is the run's
// last write: a second one is refused.
func TestRecordNeverFallsBack(t *testing.T) {
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	path := newLedger(t, budget)
	spend(t, path, 1)
	run := open(t, path)
	if err := run.begin(ctx, "darrm", binding(t, run), accountant.ApproxStep(step)); err != nil {
		t.Fatal(err)
	}
	if err := run.Reserve(ctx, 5); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other.ledger")
	b, _ := os.ReadFile(path)
	os.WriteFile(other, b, 0o644)
	spend(t, other, 7)
	if err := run.Settle(ctx, 5); err == nil || !strings.Contains(err.Error(), "changed during this run") {
		t.Errorf("settle after another ledger was used: %v", err)
	}
	if err := run.Settle(ctx, 0); err == nil {
		t.Errorf("a second settle was taken")
	}
	run.Close()
	if err := openErr(other, Options{}); err != nil {
		t.Errorf("the ledger used meanwhile is refused: %v", err)
	}
	// Its settlement is its last line, as the copy's run, which has one
	// line more, is the record's.
	recordError(t, "the ledger left behind by its copy", openErr(path, Options{}), behind)
}

// TestReplaceWaitsForRun: init --replace while a run holds the ledger it
// replaces waits for the run to end (the lock), lets it settle, and then
// retires the ledger with an end line after the run's last: the run's
// labels stay charged to it, and no release charges it again.
func TestReplaceWaitsForRun(t *testing.T) {
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	path := newLedger(t, budget)
	run := open(t, path)
	if err := run.begin(ctx, "darrm", binding(t, run), accountant.ApproxStep(step)); err != nil {
		t.Fatal(err)
	}
	if err := run.Reserve(ctx, 5); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "other.ledger")
	waiting := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		bk := book
		bk.Waiting = func(what string) { waiting <- what }
		_, err := bk.create(ctx, other, run.Header(), true)
		done <- err
	}()
	select {
	case what := <-waiting:
		if !strings.Contains(what, path) {
			t.Errorf("init --replace waits for %q", what)
		}
	case err := <-done:
		t.Fatalf("init --replace did not wait for the run: %v", err)
	}
	if err := run.Settle(ctx, 4); err != nil {
		t.Fatalf("the run's settlement while a replacement waits: %v", err)
	}
	run.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	l, err := Options{StateDir: t.TempDir()}.readOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if l.Spent().Steps != 4 || l.chain.closedBy == nil || l.chain.closedBy.Reason != reasonRetired || l.Lines() != 4 {
		t.Errorf("the replaced ledger: %d labels, end %+v, %d lines; want 4 labels and its line 4 retiring it", l.Spent().Steps, l.chain.closedBy, l.Lines())
	}
	l.Close()
	var ended *endedError
	if err := openErr(path, Options{StateDir: t.TempDir()}); !errors.As(err, &ended) {
		t.Errorf("a release on the replaced ledger: %v", err)
	}
	if err := openErr(other, Options{}); err != nil {
		t.Errorf("the new ledger: %v", err)
	}
}

// TestTotalsCarried: each spend line carries the totals of the runs
// before its own; a line whose totals do not follow from the line before
// (re-signed, so that only this rule catches it) is damage, for a release
// and for a reader.
func TestTotalsCarried(t *testing.T) {
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	spend(t, path, 1)
	spend(t, path, 2)
	l := open(t, path)
	s := runs(t, l)
	if len(s) != 2 || s[0].Prior.Steps != 0 || s[1].Prior.Steps != 1 || l.Spent().Steps != 3 {
		t.Errorf("priors %+v, %+v; spent %+v", s[0].Prior, s[1].Prior, l.Spent())
	}
	l.Close()
	resign(t, path, func(n int, raw string) string {
		if n != 4 { // the first line of the second run: as if the first had spent nothing
			return raw
		}
		var sp Spend
		json.Unmarshal([]byte(raw), &sp)
		sp.Prior = &accountant.Sequence{}
		b, _ := json.Marshal(sp)
		return string(b)
	})
	corruptAt(t, "prior edited (read)", readErr(path), 4, "does not follow")
	corruptAt(t, "prior edited", openErr(path, Options{}), 4, "does not follow")
}

// resignFirst re-signs the first k lines of the ledger at path with edit
// applied to the header's content and the lines after them left as they
// are: only the lines re-signed check on their own.
func resignFirst(t *testing.T, path string, k int, edit func(raw string) string) {
	t.Helper()
	ls := lines(t, path)
	head := filepath.Join(t.TempDir(), "head.ledger")
	if err := os.WriteFile(head, []byte(strings.Join(ls[:k], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	resign(t, head, func(n int, raw string) string {
		if n == 1 {
			return edit(raw)
		}
		return raw
	})
	if err := os.WriteFile(path, append(mustReadFile(t, head), strings.Join(ls[k:], "")...), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHeaderResigned: a header edited (the budget raised, the partition
// made one of parallel composition, the teachers' binding changed) and
// re-signed, alone or with the spend lines after it up to some line, is
// refused by a release, with a record (which knows the header's hash and
// checks that the first spend follows it) and without one (which reads
// the whole chain): by the chain at the first line that does not follow,
// or by the record. The whole ledger re-signed is refused by the record.
// A record of an earlier darrm, which kept no hash of the header, still
// has the first spend line follow the header.
func TestHeaderResigned(t *testing.T) {
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-4}}
	// Each edit keeps the header's length, so that a release's record
	// still finds the line it vouches for where it says: the partition's
	// four bytes more are made up by writing three numbers shorter.
	edits := map[string]func(string) string{
		"budget": func(raw string) string { return strings.Replace(raw, `"budget":{"eps":2,`, `"budget":{"eps":9,`, 1) },
		"partition": func(raw string) string {
			// The budget's δ is written twice: the budget's and its
			// filter's part's share.
			return strings.NewReplacer(`"partition":"shared"`, `"partition":"keyed-hash"`, `"delta":0.0001`, `"delta":1e-04`,
				`"delta_prime":0.00001`, `"delta_prime":1e-05`).Replace(raw)
		},
		"teachers": func(raw string) string { return strings.Replace(raw, `"K":11,`, `"K":99,`, 1) },
	}
	for e, name := range slices.Sorted(maps.Keys(edits)) {
		edit := edits[name]
		// c numbers the cases of lines re-signed and record, in order.
		c := 0
		for _, k := range []int{1, 2, 3, 7} { // lines re-signed: the header, and the spends after it
			for _, record := range []string{"current", "earlier", "none"} {
				recorded := record != "none"
				if k == 7 && !recorded || k > 1 && record == "earlier" {
					// The whole chain re-signed: only a record can tell; a
					// record of an earlier darrm knows no header's hash.
					continue
				}
				c++
				if testing.Short() && c%len(edits) != e {
					// Under -short at a smaller size: each of the 8 cases
					// once, with the edits in turn, not with each edit.
					continue
				}
				label := fmt.Sprintf("%s edited, %d lines re-signed, record %s", name, k, record)
				path := newLedger(t, budget)
				spend(t, path, 1)
				spend(t, path, 1)
				spend(t, path, 1)
				if record == "earlier" {
					forgetHeader(t, path)
				}
				before := mustReadFile(t, path)
				if e := edit(string(before)); e == string(before) || len(e) != len(before) {
					t.Fatalf("%s: the edit changes nothing, or the length", label)
				}
				resignFirst(t, path, k, edit)
				opts := Options{}
				if !recorded {
					opts.StateDir = t.TempDir()
				}
				err := openErr(path, opts)
				var ce *CorruptError
				var re *RecordError
				switch {
				case err == nil:
					t.Errorf("%s: a release opened it", label)
				case errors.As(err, &ce) && ce.Line == k+1 && strings.Contains(ce.Reason, "chain"):
				case recorded && errors.As(err, &re):
				default:
					t.Errorf("%s: %v, want the chain broken at line %d or a record error", label, err, k+1)
				}
				if err := readErr(path); err == nil {
					t.Errorf("%s: ledger verify reads it", label)
				}
			}
		}
	}
}

// forgetHeader makes the record of the ledger at path one of an earlier
// darrm, which kept no hash of the header.
func forgetHeader(t *testing.T, path string) {
	t.Helper()
	l := open(t, path)
	st, err := openState(Options{}, l.Header().Ensemble)
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	r, err := st.read()
	if err != nil || r == nil || r.Header == "" {
		t.Fatalf("record %+v: %v", r, err)
	}
	r.Header = ""
	if err := st.write(ctx, *r); err != nil {
		t.Fatal(err)
	}
}

// TestStateDirRelative: a relative folder for the records, which would
// name another folder (and so another record of the ledger) from each
// working directory, is refused as the caller's input, by StateDir and by
// Open, whether it comes from statedir.Env, XDG_STATE_HOME, HOME or
// Options.StateDir; an absolute one is taken.
func TestStateDirRelative(t *testing.T) {
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 5, Delta: 1e-3}})
	abs := t.TempDir()
	t.Chdir(t.TempDir()) // where a darrm that took the folder would make it
	for _, c := range []struct {
		state, xdg, home, opt string
		want                  string // the variable named; "" for none
	}{
		{state: "state", home: abs, want: statedir.Env},
		{xdg: "xdg", home: abs, want: "XDG_STATE_HOME"},
		{home: "relhome", want: "HOME"},
		{home: "./", want: "HOME"},
		{home: abs, opt: "state", want: "Options.StateDir"},
		{state: abs, xdg: "xdg", home: "relhome"},
		{xdg: abs, home: "relhome"},
		{home: abs},
	} {
		t.Setenv(statedir.Env, c.state)
		t.Setenv("XDG_STATE_HOME", c.xdg)
		t.Setenv("HOME", c.home)
		d, err := Options{StateDir: c.opt}.stateDir()
		var se *statedir.Error
		if c.want == "" {
			if err != nil || !filepath.IsAbs(d) {
				t.Errorf("%+v: %q, %v", c, d, err)
			}
			continue
		}
		if !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %q, %v, want a statedir.Error naming %s", c, d, err, c.want)
		}
		err = openErr(path, Options{StateDir: c.opt})
		var bi interface{ BadInput() bool }
		if !errors.As(err, &se) || !errors.As(err, &bi) || !bi.BadInput() {
			t.Errorf("%+v: Open: %v, want a statedir.Error, bad input", c, err)
		}
	}
}

// TestIsLedger: a ledger's first line is a header with its hash.
func TestIsLedger(t *testing.T) {
	if !IsLedger([]byte(`{"prev":"","header":{"version":4},"sha256":"ab"}`)) || IsLedger([]byte(`{"header":{}}`)) || IsLedger([]byte(`{"gamma":[1]}`)) {
		t.Error("a ledger's first line not told")
	}
}
