package ledger

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/darrm/darrm/accountant"
)

var step = accountant.Guarantee{Eps: 0.3, Delta: 3e-5}

var ctx = context.Background()

// ensembles counts the ledgers newLedger made, to name their ensembles
// apart: one ensemble has one ledger.
var ensembles int

func newLedger(t *testing.T, budget accountant.Guarantee) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "teachers.ledger")
	ensembles++
	h := Header{Ensemble: fmt.Sprintf("mnist58-k11-%d", ensembles), Relation: "private-teachers", Budget: budget, DeltaPrime: 1e-5}
	if err := Init(path, h, InitOptions{}); err != nil {
		t.Fatal(err)
	}
	return path
}

// open opens the ledger at path for a run.
func open(t *testing.T, path string) *Ledger {
	t.Helper()
	l, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// spend opens the ledger and hands out n labels of step in one run.
func spend(t *testing.T, path string, n int) {
	t.Helper()
	l, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Begin("darrm", "private-teachers", step); err != nil {
		t.Fatal(err)
	}
	if err := l.Reserve(n); err != nil {
		t.Fatal(err)
	}
	if err := l.Settle(n); err != nil {
		t.Fatal(err)
	}
}

// TestBudgetAcrossRuns spends a budget in several runs: the allowance
// shrinks by what each run spent, equals the accountant's MaxSteps under
// optimal composition for identical steps, and reaches 0.
func TestBudgetAcrossRuns(t *testing.T) {
	budget := accountant.Guarantee{Eps: 5, Delta: 1e-3}
	path := newLedger(t, budget)
	want, err := accountant.MaxSteps(step, budget, accountant.Optimal, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	spent := 0
	for _, n := range []int{want / 2, want / 4} {
		l, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := l.Allowance(step, -1)
		l.Close()
		if err != nil || got != want-spent {
			t.Fatalf("after %d labels: allowance %d (%v), want %d", spent, got, err, want-spent)
		}
		spend(t, path, n)
		spent += n
	}
	spend(t, path, want-spent)
	l, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Begin("darrm", "private-teachers", step); err != nil {
		t.Fatal(err)
	}
	if err := l.Reserve(1); !errors.Is(err, ErrBudget) {
		t.Errorf("a label beyond the budget: %v", err)
	}
	l.Close()
	l, err = Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got, _ := l.Allowance(step, -1); got != 0 {
		t.Errorf("spent budget: allowance %d", got)
	}
	total, method, err := l.Total()
	if err != nil || method != "optimal" || total.Eps > budget.Eps || total.Delta > budget.Delta || len(l.Spends()) != 3 {
		t.Errorf("total %v by %s (%v), %d spends", total, method, err, len(l.Spends()))
	}
	// A spend at another guarantee makes the sequence heterogeneous.
	path = newLedger(t, budget)
	spend(t, path, 3)
	l2, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if err := l2.Begin("rr", "private-teachers", accountant.Guarantee{Eps: 0.01, Delta: 0}); err != nil {
		t.Fatal(err)
	}
	if err := l2.Reserve(1); err != nil {
		t.Fatal(err)
	}
	if _, method, err := l2.Total(); err != nil || method == "optimal" {
		t.Errorf("heterogeneous spends composed by %s (%v)", method, err)
	}
}

func TestRelationAndInitChecks(t *testing.T) {
	path := newLedger(t, accountant.Guarantee{Eps: 1, Delta: 1e-5})
	l, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Begin("gnmax", "one-vote", step); err == nil || !strings.Contains(err.Error(), "cannot share a budget") {
		t.Errorf("a one-vote spend on a private-teachers ledger: %v", err)
	}
	if err := Init(path, Header{Ensemble: "x", Relation: "private-teachers", Budget: accountant.Guarantee{Eps: 1}, DeltaPrime: 1e-5}, InitOptions{}); err == nil {
		t.Error("Init overwrote an existing ledger")
	}
	for name, h := range map[string]Header{
		"no name":  {Relation: "r", Budget: accountant.Guarantee{Eps: 1}, DeltaPrime: 1e-5},
		"eps 0":    {Ensemble: "x", Relation: "r", DeltaPrime: 1e-5},
		"delta' 0": {Ensemble: "x", Relation: "r", Budget: accountant.Guarantee{Eps: 1}},
		"delta 1":  {Ensemble: "x", Relation: "r", Budget: accountant.Guarantee{Eps: 1, Delta: 1}, DeltaPrime: 1e-5},
	} {
		p := filepath.Join(t.TempDir(), "l")
		if err := Init(p, h, InitOptions{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s: left a file", name)
		}
	}
}

// TestCorruption changes a spend, cuts the header and appends garbage:
// each is a CorruptError naming the line. A torn last line (a crash in
// the middle of a write, before its fsync) is cut off instead.
func TestCorruption(t *testing.T) {
	budget := accountant.Guarantee{Eps: 5, Delta: 1e-3}
	for name, c := range map[string]struct {
		edit func(string) string
		line int
	}{
		"spend edited": {func(s string) string { return strings.Replace(s, `"queries":4`, `"queries":1`, 1) }, 2},
		"no header":    {func(s string) string { return s[strings.IndexByte(s, '\n')+1:] }, 1},
		"garbage line": {func(s string) string { return s + "hello\n" }, 4},
		"empty":        {func(string) string { return "" }, 1},
		"spend eps 0":  {func(s string) string { return strings.Replace(s, `"eps":0.3,`, `"eps":0,`, 1) }, 2},
	} {
		path := newLedger(t, budget)
		spend(t, path, 4)
		b, _ := os.ReadFile(path)
		os.WriteFile(path, []byte(c.edit(string(b))), 0o644)
		err := openErr(path, Options{})
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Line != c.line {
			t.Errorf("%s: %v, want a CorruptError at line %d", name, err, c.line)
		}
	}
	for name, edit := range map[string]func(string) string{
		"version 9": func(s string) string { return strings.Replace(s, `"version":2`, `"version":9`, 1) },
	} {
		path := newLedger(t, budget)
		b, _ := os.ReadFile(path)
		os.WriteFile(path, []byte(edit(string(b))), 0o644)
		var ve *VersionError
		if err := openErr(path, Options{}); !errors.As(err, &ve) {
			t.Errorf("%s: %v, want a VersionError", name, err)
		}
	}
}

// TestTornLastLine: a last line without its line end, which a crash
// interrupted before its fsync returned (the record does not cover it),
// is cut off by the next run, under the lock, and reported; ReadOnly
// reports it and leaves it.
func TestTornLastLine(t *testing.T) {
	path := newLedger(t, accountant.Guarantee{Eps: 5, Delta: 1e-3})
	spend(t, path, 4)
	l := open(t, path)
	torn := string(linePrefix(l.Head())) + `"spend":{"run":"x","queries":10`
	l.Close()
	before, _ := os.ReadFile(path)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(torn)
	f.Close()
	r, err := ReadOnly(ctx, path, Options{})
	if err != nil {
		t.Fatalf("read a torn ledger: %v", err)
	}
	if notes := strings.Join(r.Notes(), "; "); !strings.Contains(notes, "torn") {
		t.Errorf("read a torn ledger: notes %q", notes)
	}
	r.Close()
	if b, _ := os.ReadFile(path); string(b) != string(before)+torn {
		t.Error("ReadOnly changed the file")
	}
	l = open(t, path)
	if s := l.Spends(); len(s) != 1 || s[0].Queries != 4 {
		t.Errorf("torn last line: spends %+v", s)
	}
	if notes := strings.Join(l.Notes(), "; "); !strings.Contains(notes, "cut off a torn last line") {
		t.Errorf("open a torn ledger: notes %q", notes)
	}
	l.Close()
	if b, _ := os.ReadFile(path); string(b) != string(before) {
		t.Error("the torn line was not cut off")
	}
	spend(t, path, 2) // appends after the last whole line
}

// The helper process of the tests below: GO_LEDGER_HELPER=path,n,kill
// opens the ledger, reserves and "releases" n labels one at a time
// (printing the count released to stdout), and with kill = i dies
// (exit 9, like SIGKILL) at step i: odd steps just after a reservation
// is on disk, even steps just after labels were released.
func TestMain(m *testing.M) {
	if spec := os.Getenv("GO_LEDGER_HELPER"); spec != "" {
		os.Exit(helper(spec))
	}
	if path := os.Getenv("GO_LEDGER_FSIZE"); path != "" {
		os.Exit(fsizeHelper(path))
	}
	// The records of every test, and of the helper processes, which
	// inherit it, go to a temporary folder, never the user's.
	dir, err := os.MkdirTemp("", "darrm-ledger-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv(EnvStateDir, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func helper(spec string) int {
	parts := strings.Split(spec, ",")
	n, _ := strconv.Atoi(parts[1])
	kill, _ := strconv.Atoi(parts[2])
	l, err := Open(ctx, parts[0], Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := l.Begin("darrm", "private-teachers", step); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	allowed, err := l.Allowance(step, n)
	if err != nil {
		return 1
	}
	w := bufio.NewWriter(os.Stdout)
	stepNo := 0
	for i := 1; i <= allowed; i++ {
		if err := l.Reserve(i); err != nil {
			return 1
		}
		if stepNo++; stepNo == kill {
			os.Exit(9)
		}
		fmt.Fprintf(w, "released %d\n", i)
		w.Flush()
		if stepNo++; stepNo == kill {
			os.Exit(9)
		}
	}
	if err := l.Settle(allowed); err != nil {
		return 1
	}
	return 0
}

func runHelper(t *testing.T, path string, n, kill int) (released int, err error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("GO_LEDGER_HELPER=%s,%d,%d", path, n, kill))
	out, err := cmd.Output()
	for _, line := range strings.Fields(string(out)) {
		if v, e := strconv.Atoi(line); e == nil {
			released = v
		}
	}
	return released, err
}

// TestKillAtEveryStep kills a releasing process at every step of a run
// and checks that the ledger, reopened, has recorded at least every label
// the process handed out.
func TestKillAtEveryStep(t *testing.T) {
	path := newLedger(t, accountant.Guarantee{Eps: 50, Delta: 1e-2})
	const n = 4
	total := 0
	for kill := 1; kill <= 2*n; kill++ {
		released, err := runHelper(t, path, n, kill)
		if err == nil {
			t.Fatalf("kill at step %d: the helper was not killed", kill)
		}
		total += released
		l, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatalf("kill at step %d: %v", kill, err)
		}
		recorded := 0
		for _, s := range l.Spends() {
			recorded += s.Queries
		}
		l.Close()
		if recorded < total {
			t.Errorf("kill at step %d: %d labels released in all, %d recorded", kill, total, recorded)
		}
	}
}

// TestConcurrentRuns starts processes that each spend as much of one
// budget as they are allowed, at the same time: together they stay
// within it, and the ledger records every label.
func TestConcurrentRuns(t *testing.T) {
	budget := accountant.Guarantee{Eps: 3, Delta: 1e-3}
	path := newLedger(t, budget)
	maxQ, err := accountant.MaxSteps(step, budget, accountant.Optimal, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	released := 0
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := runHelper(t, path, maxQ/2, 0)
			if err != nil {
				t.Errorf("helper: %v", err)
			}
			mu.Lock()
			released += r
			mu.Unlock()
		}()
	}
	wg.Wait()
	l, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	total, _, err := l.Total()
	if err != nil || total.Eps > budget.Eps || total.Delta > budget.Delta {
		t.Errorf("concurrent runs spent %v (%v), budget %v", total, err, budget)
	}
	if released != maxQ {
		t.Errorf("concurrent runs released %d labels, the budget allows %d", released, maxQ)
	}
}

// TestStatus: a ledger's status is its header, its total and the
// allowance, before and after a spend.
func TestStatus(t *testing.T) {
	budget := accountant.Guarantee{Eps: 5, Delta: 1e-3}
	path := newLedger(t, budget)
	for _, tc := range []struct {
		spent int
		comp  string
	}{{0, "none"}, {7, "optimal"}} {
		if tc.spent > 0 {
			spend(t, path, tc.spent)
		}
		l, err := Open(ctx, path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		st, err := l.Status(step)
		total, _, _ := l.Total()
		left, _ := l.Allowance(step, -1)
		l.Close()
		want := Status{Ensemble: st.Ensemble, Relation: "private-teachers", Budget: budget, Total: total, Composition: tc.comp, QueriesLeft: left}
		if err != nil || st != want {
			t.Errorf("after %d labels: status %+v (%v), want %+v", tc.spent, st, err, want)
		}
	}
}

// TestOpenRun: a run opened on a ledger has begun its spend and is told
// its allowance; a run of another relation is refused and leaves the
// ledger unlocked.
func TestOpenRun(t *testing.T) {
	budget := accountant.Guarantee{Eps: 5, Delta: 1e-3}
	path := newLedger(t, budget)
	want, _ := accountant.MaxSteps(step, budget, accountant.Optimal, 1e-5)
	for _, limit := range []int{-1, 10} {
		l, allowed, err := OpenRun(ctx, path, "darrm", "private-teachers", step, limit, Options{})
		if err != nil {
			t.Fatal(err)
		}
		w := want
		if limit >= 0 {
			w = min(want, limit)
		}
		if allowed != w {
			t.Errorf("limit %d: allowance %d, want %d", limit, allowed, w)
		}
		if err := l.Reserve(3); err != nil {
			t.Errorf("reserve after OpenRun: %v", err)
		}
		l.Settle(0)
		l.Close()
	}
	if _, _, err := OpenRun(ctx, path, "gnmax", "one-vote", step, -1, Options{}); err == nil || !strings.Contains(err.Error(), "relation") {
		t.Errorf("another relation: %v", err)
	}
	l, err := Open(ctx, path, Options{}) // the refused run released the lock
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, _, err := OpenRun(ctx, filepath.Join(t.TempDir(), "none"), "darrm", "private-teachers", step, -1, Options{}); err == nil {
		t.Error("a missing ledger opened")
	}
}
