package ledger

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/param"
)

// testPGLockTimeout: a run that waits for a lock gives up after
// Options.LockTimeout, whoever holds it: another run on a ledger file or a
// PostgreSQL ledger (its advisory lock), or a session that locked the
// ledgers' table (LOCK TABLE ... IN ACCESS EXCLUSIVE MODE, as an
// administrator might); the error names the holder and the wait, and no
// line was appended. A negative timeout is refused, naming the field.
func testPGLockTimeout(t *testing.T, db string) {
	const timeout = 300 * time.Millisecond
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	file := newLedger(t, budget)
	pg := newPG(t, db, "timed", budget)
	// holdRun holds the ledger at location as a run does.
	holdRun := func(location string) func() {
		l, err := book.forRun(ctx, location)
		if err != nil {
			t.Fatal(err)
		}
		return func() { l.Close() }
	}
	// holdTable locks the table of the ledgers as an administrator's
	// session.
	holdTable := func(string) func() {
		conn, err := pgConnect(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, "SET application_name = 'dba-maintenance'; BEGIN; LOCK TABLE darrm.ledgers IN ACCESS EXCLUSIVE MODE"); err != nil {
			t.Fatal(err)
		}
		return func() { conn.Close(ctx) }
	}
	for _, c := range []struct {
		name, location string
		hold           func(string) func()
		want           []string
	}{
		{"file held by a run", file, holdRun, []string{"ledger " + file + ": gave up after waiting 300ms for a lock held by another darrm run"}},
		{"database ledger held by a run", pg, holdRun, []string{"ledger " + Redact(pg) + ": gave up after waiting 300ms for a lock held by another darrm run, session ", `(application "darrm")`}},
		{"database table locked", pg, holdTable, []string{"gave up after waiting 300ms for a lock held by session ", `(application "dba-maintenance"), which holds AccessExclusiveLock on darrm.ledgers`}},
	} {
		before := lineCount(t, c.location)
		release := c.hold(c.location)
		var (
			mu     sync.Mutex // Waiting may be called from another goroutine
			waited []string
		)
		bk := Options{StateDir: book.StateDir, LockTimeout: timeout, Waiting: func(what string) {
			mu.Lock()
			defer mu.Unlock()
			waited = append(waited, what)
		}}
		start := time.Now()
		l, err := bk.forRun(ctx, c.location)
		took := time.Since(start)
		closeIf(l)
		var le *lockTimeoutError
		switch {
		case !errors.As(err, &le):
			t.Errorf("%s: %v, want a lock timeout", c.name, err)
		case took < timeout:
			// That it gives up at all is the lock timeout error above; how
			// soon after the timeout depends on the machine's load.
			t.Errorf("%s: gave up after %v, before its timeout %v", c.name, took, timeout)
		case isBad(err), strings.Contains(err.Error(), password(t, db)):
			t.Errorf("%s: bad input %v, or the password shown: %v", c.name, isBad(err), err)
		}
		for _, w := range c.want {
			if err != nil && !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v\nwant it to say %q", c.name, err, w)
			}
		}
		want := "ledger " + Redact(c.location)
		if strings.Contains(c.name, "table") {
			want = "the tables of " + want
		}
		// A statement on the tables that takes longer than half the
		// timeout (150 ms here, on a loaded machine) is told as a wait
		// for the tables before the wait for the lock: what is told
		// last is the lock the run gave up on.
		tables := "the tables of ledger " + Redact(c.location)
		mu.Lock()
		if len(waited) == 0 || waited[len(waited)-1] != want || slices.ContainsFunc(waited, func(w string) bool { return w != want && w != tables }) {
			t.Errorf("%s: waiting told %q, want %q last and nothing but %q before it", c.name, waited, want, tables)
		}
		mu.Unlock()
		release()
		if after := lineCount(t, c.location); after != before {
			t.Errorf("%s: %d lines after the wait, %d before", c.name, after, before)
		}
	}
	// A run that waits for the lock of its ensemble's record (another run
	// checking a ledger of the ensemble) gives up too.
	r, err := book.readOnly(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	st, err := openState(book, r.Header().Ensemble)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.lock(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = (Options{StateDir: book.StateDir, LockTimeout: timeout}).forRun(ctx, file)
	st.close()
	if le := (*lockTimeoutError)(nil); !errors.As(err, &le) || !strings.Contains(err.Error(), "ledger record "+st.path+": gave up after waiting 300ms") {
		t.Errorf("a run while the record is locked: %v", err)
	}
	// A ledger made while the table is locked gives up too.
	release := holdTable(pg)
	h := NewHeader(unique(bound), budget, 1e-5, simpleFilter(budget))
	var le *lockTimeoutError
	if _, err := (Options{StateDir: book.StateDir, LockTimeout: timeout}).create(ctx, pgURL(db, "made-while-locked"), h, false); !errors.As(err, &le) || !strings.Contains(err.Error(), "AccessExclusiveLock on darrm.ledgers") {
		t.Errorf("init while the table is locked: %v", err)
	}
	release()
	var pe *param.Error
	for _, bad := range []time.Duration{-time.Second, 600 * time.Hour} {
		for _, location := range []string{file, pg} {
			if _, err := (Options{StateDir: book.StateDir, LockTimeout: bad}).forRun(ctx, location); !errors.As(err, &pe) || pe.Name != "LockTimeout" {
				t.Errorf("LockTimeout %v on %s: %v", bad, location, err)
			}
		}
	}
	if l, err := (Options{StateDir: book.StateDir, LockTimeout: maxLockTimeout}).forRun(ctx, pg); err != nil {
		t.Errorf("LockTimeout %v, the longest: %v", maxLockTimeout, err)
	} else {
		l.Close()
	}

	// A run that gives up a wait after its first labels left does not say
	// that none did.
	run, err := (Options{StateDir: book.StateDir, LockTimeout: timeout}).forRun(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	if err := run.begin(ctx, "darrm", binding(t, run), accountant.ApproxStep(step)); err != nil {
		t.Fatal(err)
	}
	if err := run.Reserve(ctx, 88); err != nil {
		t.Fatal(err)
	}
	release = holdTable(pg)
	err = run.Reserve(ctx, 100)
	release()
	if err == nil || strings.Contains(err.Error(), "no label released") || !strings.Contains(err.Error(), "in the middle of a run that had reserved 88 labels before: they stay charged") {
		t.Errorf("a wait given up after 88 labels were reserved: %v", err)
	}
}

// lineCount returns the number of lines of the ledger at location.
func lineCount(t *testing.T, location string) int {
	t.Helper()
	l, err := book.readOnly(ctx, location)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Lines()
}

// TestToldBeforeReturn: a wait for the tables whose notice begins as the
// statement returns is said before told returns, not while the run goes
// on (its next message, its end).
func TestToldBeforeReturn(t *testing.T) {
	p := &pgLocation{redacted: "postgres://host/db?ledger=l", lockTimeout: 2 * time.Millisecond}
	started, release := make(chan struct{}), make(chan struct{})
	var said atomic.Bool
	returned := make(chan bool)
	go func() {
		p.told(func(string) { close(started); <-release; said.Store(true) }, func() error { <-started; return nil })
		returned <- said.Load()
	}()
	<-started
	select {
	case <-returned:
		close(release)
		t.Fatal("told returned while its notice was being said")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if !<-returned {
		t.Error("told returned before its notice was said")
	}
}

// TestCheckRunTakesNoLock: the check before a run neither waits for a run
// that holds the ledger nor writes your record; it refuses another
// ensemble's release, and passes this one's.
func TestCheckRunTakesNoLock(t *testing.T) {
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	var waited []string
	bk := Options{StateDir: t.TempDir(), Waiting: func(what string) { waited = append(waited, what) }}
	path := filepath.Join(t.TempDir(), "teachers.ledger")
	b := unique(bound)
	if _, err := bk.create(ctx, path, NewHeader(b, budget, 1e-5, simpleFilter(budget)), false); err != nil {
		t.Fatal(err)
	}
	held, err := bk.forRun(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	records, _ := filepath.Glob(filepath.Join(bk.StateDir, "ledgers", "*.json"))
	if len(records) != 1 {
		t.Fatalf("records %q, want the ensemble's", records)
	}
	before := string(mustReadFile(t, records[0]))
	if err := bk.CheckRun(ctx, path, b); err != nil || len(waited) > 0 {
		t.Errorf("this ensemble's check while a run holds the ledger: %v, waited for %q", err, waited)
	}
	other := b
	other.Ensemble += "-other"
	var be *bindingError
	if err := bk.CheckRun(ctx, path, other); !errors.As(err, &be) {
		t.Errorf("another ensemble's check: %v, want a *bindingError", err)
	}
	if string(mustReadFile(t, records[0])) != before {
		t.Error("the check wrote the record")
	}
}
