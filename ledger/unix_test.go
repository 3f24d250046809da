//go:build unix

package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/darrm/darrm/accountant"
)

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}

// fsizeHelper is the helper process of TestFailedAppend
// (GO_LEDGER_FSIZE=path): it limits the size of the files it writes to
// 50 bytes past the ledger's end (as ulimit -f does), so that its
// reservation is written in part and fails (EFBIG); it lifts the limit
// and settles the run at 0, as a release whose labels never left does.
func fsizeHelper(path string) int {
	l, err := book.forRun(ctx, path)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer l.Close()
	b, _ := l.Header().binding()
	if err := l.begin(ctx, "darrm", b, accountant.ApproxStep(step)); err != nil {
		fmt.Println(err)
		return 1
	}
	st, _ := os.Stat(path)
	var old syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old)
	syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: uint64(st.Size()) + 50, Max: old.Max})
	err = l.Reserve(ctx, 5)
	fmt.Printf("reserve: %v\n", err)
	after, _ := os.Stat(path)
	fmt.Printf("size: %d before, %d after\n", st.Size(), after.Size())
	syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
	if err == nil {
		return 1
	}
	if err := l.Settle(ctx, 0); err != nil {
		fmt.Printf("settle: %v\n", err)
		return 1
	}
	return 0
}

// TestFailedAppend: a reservation that a full disk (here a file size
// limit) cuts short is cut off again before anything else is written,
// so that the settlement that follows lands after the last whole line
// and the ledger stays readable.
func TestFailedAppend(t *testing.T) {
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 5, Delta: 1e-3}})
	spend(t, path, 3)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GO_LEDGER_FSIZE="+path)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "file too large") {
		t.Fatalf("helper: %v: %s", err, out)
	}
	var before, after int
	if i := strings.Index(string(out), "size: "); i < 0 {
		t.Fatalf("helper: %s", out)
	} else if fmt.Sscanf(string(out[i:]), "size: %d before, %d after", &before, &after); before != after {
		t.Errorf("the failed reservation left %d bytes after the last whole line", after-before)
	}
	l := open(t, path)
	defer l.Close()
	if l.Lines() != 4 {
		t.Errorf("%d lines, want the header, 2 of the first run and the second's settlement", l.Lines())
	}
	s := runs(t, l)
	if len(s) != 2 || s[0].Queries != 3 || s[1].Queries != 0 || !s[1].Final {
		t.Errorf("spends %+v", s)
	}
}

// TestLockWait: a run that finds the ledger held says so, on which file,
// and gives up when its context ends.
func TestLockWait(t *testing.T) {
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 5, Delta: 1e-3}})
	held := open(t, path)
	defer held.Close()
	c, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	var waited string
	_, err := Options{Waiting: func(p string) { waited = p }}.forRun(c, path)
	if !errors.Is(err, context.DeadlineExceeded) || waited != "ledger "+path {
		t.Errorf("open of a held ledger: %v, waiting called with %q", err, waited)
	}
	// ReadOnly does not wait, and says that a run holds the ledger.
	r, err := book.readOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if !strings.Contains(strings.Join(r.Notes(), "; "), "a run holds the ledger") {
		t.Errorf("notes %q", r.Notes())
	}
}

// holdRecordLock takes the lock of ensemble's record, as another run
// checking its ledger would, until the test ends.
func holdRecordLock(t *testing.T, ensemble string) string {
	t.Helper()
	st, err := openState(Options{}, ensemble)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.lock(ctx); err != nil {
		t.Fatal(err)
	}
	other, err := os.Open(st.lockf.Name()) // another open file: flock locks it apart
	if err != nil {
		t.Fatal(err)
	}
	st.close()
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	return st.path
}

// TestRecordLockWait: a wait for the lock of a ledger's record (held
// while another run checks its whole ledger) says so, naming the record,
// and ends with the context, in Open, Init and a run's later writes.
func TestRecordLockWait(t *testing.T) {
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 5, Delta: 1e-3}})
	c, cancel := context.WithCancel(ctx)
	run, err := book.forRun(c, path)
	if err != nil {
		t.Fatal(err)
	}
	h := run.Header()
	if err := run.begin(ctx, "darrm", binding(t, run), accountant.ApproxStep(step)); err != nil {
		t.Fatal(err)
	}
	record := holdRecordLock(t, h.Ensemble)
	cancel()
	if err := run.Reserve(c, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("a reservation while the record is held, interrupted: %v", err)
	}
	run.Close()

	for name, call := range map[string]func(context.Context, Options) error{
		"open": func(c context.Context, o Options) error { return openErr2(c, path, o) },
		"init": func(c context.Context, o Options) error {
			_, err := o.create(c, path+".new", h, true)
			return err
		},
	} {
		c, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		var waited string
		start := time.Now()
		err := call(c, Options{Waiting: func(w string) { waited = w }})
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(waited, "the record of ensemble "+h.Ensemble) || !strings.Contains(waited, record) {
			t.Errorf("%s while the record is held: %v, waiting called with %q", name, err, waited)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: the wait took %v after its context ended", name, d)
		}
	}
}

// openErr2 is openErr with a context.
func openErr2(c context.Context, path string, opts Options) error {
	l, err := opts.forRun(c, path)
	if err == nil {
		l.Close()
	}
	return err
}

// TestInitOverExisting: Init never writes over what is at its path (issue
// 55: an existing file failed with a raw "file exists", exit 1): a file
// that is no ledger, another ledger (named with its ensemble and id), a
// symbolic link (dangling too) and a FIFO (not read: it would block) are
// each a *takenError, the caller's input; nothing is written or
// recorded.
func TestInitOverExisting(t *testing.T) {
	dir := t.TempDir()
	other := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 5, Delta: 1e-3}})
	l := open(t, other)
	otherID := l.Header().ID
	l.Close()
	notLedger := filepath.Join(dir, "votes.csv")
	os.WriteFile(notLedger, []byte("1,0,1\n"), 0o644)
	link := filepath.Join(dir, "dangling")
	os.Symlink(filepath.Join(dir, "nowhere"), link)
	fifo := filepath.Join(dir, "fifo")
	mkfifo(t, fifo)
	for _, c := range []struct {
		path, what string
		ledger     bool
	}{{notLedger, "a file that is not a ledger", false}, {other, "", true}, {link, "a symbolic link", false}, {fifo, "a device, FIFO or socket", false}} {
		var before []byte
		if c.path != fifo {
			before, _ = os.ReadFile(c.path)
		}
		state := t.TempDir()
		b := unique(bound)
		_, err := Options{StateDir: state}.create(ctx, c.path, NewHeader(b, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1, Delta: 1e-5}}, 1e-5, simpleFilter(accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1, Delta: 1e-5}})), false)
		var ee *takenError
		var bi interface{ BadInput() bool }
		if !errors.As(err, &ee) || ee.What != c.what && !c.ledger || ee.Ledger != c.ledger || !errors.As(err, &bi) || !bi.BadInput() {
			t.Errorf("%s: %v (%+v), want a takenError for %q", c.path, err, ee, c.what)
			continue
		}
		if c.ledger && (!strings.HasPrefix(ee.Ensemble, bound.Ensemble) || ee.ID != otherID || !strings.Contains(err.Error(), "a ledger of ensemble")) {
			t.Errorf("%s: %v, want it named as a ledger of %s, id %s", c.path, err, bound.Ensemble, otherID)
		}
		if c.path != fifo {
			if after, _ := os.ReadFile(c.path); string(after) != string(before) {
				t.Errorf("%s: changed", c.path)
			}
		}
		if rec, _ := os.ReadDir(filepath.Join(state, "ledgers")); len(rec) > 0 {
			t.Errorf("%s: a record was written: %v", c.path, rec)
		}
	}
}

// TestWitnessFiles: a FIFO given as a witness is refused at once, not
// waited on; a checkpoint whose ensemble or path holds an escape
// sequence or a NUL is refused, printed escaped; a checkpoint whose line
// number is off by one, its bytes and hash those of a line the ledger
// holds, is refused, before or after the line a release resumes from.
func TestWitnessFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadWitness(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("a FIFO as a witness: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a FIFO as a witness: still waiting after 5 s")
	}

	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	for range 4 {
		spend(t, path, 1)
	}
	cp := checkpointOf(t, book, path)
	b, err := os.ReadFile(cp)
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"ensemble", "path"} {
		var c map[string]any
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		c[field] = "x\x1b[31m\x00"
		bad := filepath.Join(dir, field+".checkpoint")
		out, _ := json.Marshal(c)
		if err := os.WriteFile(bad, out, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadWitness(bad)
		if err == nil || !strings.Contains(err.Error(), field+` = "x\x1b[31m\x00": control characters are not allowed`) || strings.ContainsAny(err.Error(), "\x1b\x00") {
			t.Errorf("a checkpoint whose %s holds ESC and NUL: %v", field, err)
		}
	}

	// A checkpoint of line 3 said to be of line 2 or 4, its bytes and
	// hash line 3's, for a reader (which knows every line's number) and a
	// run that resumes from its record, before or after the line it
	// vouches for.
	l := mustRead(t, path)
	var lines []pos
	var heads []string
	if _, err := l.again(ctx, func(c *chain, _ Spend, _ []byte) error {
		lines, heads = append(lines, pos{n: c.n, off: c.end}), append(heads, c.head)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	l.Close() // a reader holds a file ledger's lock, shared
	for _, at := range []int{3, 7} {
		for _, off := range []int{-1, 1} {
			w := Witness{File: "off-by-one", Record: Record{Ensemble: l.Header().Ensemble, LedgerID: l.ID(), Lines: at + off, Size: lines[at-1].off, Head: heads[at-1]}}
			for name, bk := range map[string]Options{"a reader": {StateDir: t.TempDir(), ReadOnly: true}, "a run": book} {
				bk.Witnesses = []Witness{w}
				l, err := Open(ctx, path, bk)
				if err == nil {
					l.Close()
				}
				var re *RecordError
				if !errors.As(err, &re) || re.kind != diverged {
					t.Errorf("%s, a checkpoint of line %d said to be of line %d: %v", name, at, at+off, err)
				}
			}
		}
	}
}

// TestUnwritableLedger: a release on a ledger it may not open for writing
// says that a release appends to its ledger, whether the file is not the
// user's to write or lies on a file system mounted read-only (a share
// mounted so): the second was a bare "read-only file system".
func TestUnwritableLedger(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EACCES, syscall.EPERM, syscall.EROFS} {
		err := unwritable(fmt.Errorf("ledger l: %w", &os.PathError{Op: "open", Path: "l", Err: errno}))
		if !strings.Contains(err.Error(), "a release appends to its ledger, so it must be writable by you, on a file system mounted for writing") || !errors.Is(err, errno) {
			t.Errorf("%v: %v", errno, err)
		}
	}
	other := fmt.Errorf("ledger l: %w", &os.PathError{Op: "open", Path: "l", Err: syscall.EIO})
	if err := unwritable(other); err != other {
		t.Errorf("EIO: %v", err)
	}
}
