package ledger

import (
	"bufio"
	"context"
	"encoding/json"
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
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/pgtest"
	"github.com/darrm/darrm/internal/statedir"
	"github.com/darrm/darrm/provenance"
)

var step = accountant.Guarantee{Eps: 0.3, Delta: 3e-5}

var ctx = context.Background()

// bound is the ensemble of the tests' ledgers (each its own id, unique):
// a fresh mechanism per query, so that no teachers' cap applies and the
// totals are the composition of the spends.
var bound = provenance.Binding{Ensemble: "mnist58-k11", Teachers: provenance.Teachers{K: 11, Each: accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, Relation: accountant.PrivateTeachers, Kind: provenance.PerQuery, Partition: provenance.SharedData}}

// ensembles counts the ledgers made, to name their ensembles apart: one
// ensemble has one ledger.
var ensembles int

// unique returns b with an ensemble id of its own.
func unique(b provenance.Binding) provenance.Binding {
	ensembles++
	b.Ensemble = fmt.Sprintf("%s-%d", bound.Ensemble, ensembles)
	return b
}

// binding returns the ensemble the ledger l is bound to, as a release of
// its teachers states it.
func binding(t *testing.T, l *Ledger) provenance.Binding {
	t.Helper()
	b, err := l.Header().binding()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newLedger(t *testing.T, budget accountant.Budget) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "teachers.ledger")
	if _, err := book.create(ctx, path, NewHeader(unique(bound), budget, 1e-5, simpleFilter(budget)), false); err != nil {
		t.Fatal(err)
	}
	return path
}

// runs returns the spend of every run of l (Runs).
func runs(t *testing.T, l *Ledger) []Spend {
	t.Helper()
	var all []Spend
	if err := l.Runs(ctx, func(s Spend) error { all = append(all, s); return nil }); err != nil {
		t.Fatal(err)
	}
	return all
}

// open opens the ledger at path for a run.
func open(t testing.TB, path string) *Ledger {
	t.Helper()
	l, err := book.forRun(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// spend opens the ledger and hands out n labels of step in one run.
func spend(t *testing.T, path string, n int) {
	t.Helper()
	l, err := book.forRun(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.begin(ctx, "darrm", binding(t, l), accountant.ApproxStep(step)); err != nil {
		t.Fatal(err)
	}
	if err := l.Reserve(ctx, n); err != nil {
		t.Fatal(err)
	}
	if err := l.Settle(ctx, n); err != nil {
		t.Fatal(err)
	}
}

// TestBudgetAcrossRuns spends a budget in several runs: the allowance
// shrinks by what each run spent, equals the accountant's MaxSteps under
// simple composition, the ledger's filter, and reaches 0.
func TestBudgetAcrossRuns(t *testing.T) {
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 5, Delta: 1e-3}}
	path := newLedger(t, budget)
	want, err := (accountant.Composition{Method: accountant.Simple, DeltaPrime: 1e-5}).MaxSteps(step, budget)
	if err != nil {
		t.Fatal(err)
	}
	spent := 0
	for _, n := range []int{want / 2, want / 4} {
		l, err := book.forRun(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := l.allowance(accountant.ApproxStep(step), -1)
		l.Close()
		if err != nil || got != want-spent {
			t.Fatalf("after %d labels: allowance %d (%v), want %d", spent, got, err, want-spent)
		}
		spend(t, path, n)
		spent += n
	}
	spend(t, path, want-spent)
	l, err := book.forRun(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.begin(ctx, "darrm", binding(t, l), accountant.ApproxStep(step)); err != nil {
		t.Fatal(err)
	}
	if err := l.Reserve(ctx, 1); !errors.Is(err, errBudget) {
		t.Errorf("a label beyond the budget: %v", err)
	}
	l.Close()
	l, err = book.forRun(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got, _ := l.allowance(accountant.ApproxStep(step), -1); got != 0 {
		t.Errorf("spent budget: allowance %d", got)
	}
	bal, err := l.Balance()
	total, method := bal.Total, bal.Composition.String()
	if err != nil || method != "simple" || total.Eps > budget.Eps || total.Delta > budget.Delta || len(runs(t, l)) != 3 {
		t.Errorf("total %v by %s (%v), %d spends", total, method, err, len(runs(t, l)))
	}
}

func TestRelationAndInitChecks(t *testing.T) {
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1, Delta: 1e-5}})
	l, err := book.forRun(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	oneVote := binding(t, l)
	oneVote.Relation, oneVote.Partition = accountant.OneVote, provenance.KeyedHash
	if err := l.begin(ctx, "gnmax", oneVote, accountant.ApproxStep(step)); err == nil || !strings.Contains(err.Error(), "cannot share a budget") {
		t.Errorf("a one-vote spend on a private-teachers ledger: %v", err)
	}
	if _, err := book.create(ctx, path, NewHeader(bound, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1}}, 1e-5, simpleFilter(accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1}})), false); err == nil {
		t.Error("Init overwrote an existing ledger")
	}
	edit := func(f func(*provenance.Binding)) provenance.Binding {
		b := bound
		f(&b)
		return b
	}
	one := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1}}
	for name, h := range map[string]Header{
		"no name":           NewHeader(edit(func(b *provenance.Binding) { b.Ensemble = "" }), one, 1e-5, simpleFilter(one)),
		"eps 0":             NewHeader(bound, accountant.Budget{Guarantee: accountant.Guarantee{}}, 1e-5, simpleFilter(accountant.Budget{Guarantee: accountant.Guarantee{}})),
		"delta' 0":          NewHeader(bound, one, 0, simpleFilter(one)),
		"delta 1":           NewHeader(bound, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1, Delta: 1}}, 1e-5, simpleFilter(accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1, Delta: 1}})),
		"no parameters":     {Ensemble: "x", Relation: "private-teachers", Budget: one, DeltaPrime: 1e-5},
		"bad relation":      {Ensemble: "x", Relation: "r", Budget: one, DeltaPrime: 1e-5, Teachers: NewHeader(bound, one, 1e-5, simpleFilter(one)).Teachers},
		"K even":            NewHeader(edit(func(b *provenance.Binding) { b.K = 10 }), one, 1e-5, simpleFilter(one)),
		"K 0":               NewHeader(edit(func(b *provenance.Binding) { b.K = 0 }), one, 1e-5, simpleFilter(one)),
		"teachers' eps 0":   NewHeader(edit(func(b *provenance.Binding) { b.Each.Eps = 0 }), one, 1e-5, simpleFilter(one)),
		"teachers' Delta 1": NewHeader(edit(func(b *provenance.Binding) { b.Each.Delta = 1 }), one, 1e-5, simpleFilter(one)),
		"kind unstated":     NewHeader(edit(func(b *provenance.Binding) { b.Kind = provenance.KindUnstated }), one, 1e-5, simpleFilter(one)),
		"partition missing": NewHeader(edit(func(b *provenance.Binding) { b.Partition = provenance.PartitionUnstated }), one, 1e-5, simpleFilter(one)),
		"one-vote, shared":  NewHeader(edit(func(b *provenance.Binding) { b.Relation = accountant.OneVote }), one, 1e-5, simpleFilter(one)),
		"no teachers' guarantee, private-teachers": NewHeader(edit(func(b *provenance.Binding) { b.Each = accountant.Guarantee{} }), one, 1e-5, simpleFilter(one)),
	} {
		p := filepath.Join(t.TempDir(), "l")
		if _, err := book.create(ctx, p, h, false); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s: left a file", name)
		}
	}
}

// A PATE ensemble: 250 non-private teachers on keyed-hash shares, in the
// one-vote relation, binds no teachers' guarantee; an even K is allowed.
func TestInitNonPrivateOneVote(t *testing.T) {
	p := filepath.Join(t.TempDir(), "l")
	b := unique(provenance.Binding{Teachers: provenance.Teachers{K: 250, Relation: accountant.OneVote, Kind: provenance.Fixed, Partition: provenance.KeyedHash}})
	if _, err := book.create(ctx, p, NewHeader(b, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-5}}, 1e-5, simpleFilter(accountant.Budget{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-5}})), false); err != nil {
		t.Fatal(err)
	}
	l, err := book.forRun(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.begin(ctx, "gnmax", b, accountant.ApproxStep(accountant.Guarantee{Eps: 0.1, Delta: 1e-6})); err != nil {
		t.Errorf("a release from the same ensemble: %v", err)
	}
	other := b
	other.K = 251
	if err := l.begin(ctx, "gnmax", other, accountant.ApproxStep(accountant.Guarantee{Eps: 0.1, Delta: 1e-6})); err == nil {
		t.Error("a release from 251 teachers accepted by a ledger of 250")
	}
}

// TestCorruption changes a spend, cuts the header and appends garbage:
// each is a CorruptError naming the line. A torn last line (a crash in
// the middle of a write, before its fsync) is cut off instead.
func TestCorruption(t *testing.T) {
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 5, Delta: 1e-3}}
	for name, c := range map[string]struct {
		edit func(string) string
		line int
		open func(string, Options) error // openErr, or readErr: what reads that line
	}{
		"spend edited": {func(s string) string { return strings.Replace(s, `"queries":4`, `"queries":1`, 1) }, 2, func(p string, _ Options) error { return readErr(p) }},
		"last edited": {func(s string) string {
			return s[:strings.LastIndex(s, `"queries":4`)] + `"queries":1` + s[strings.LastIndex(s, `"queries":4`)+11:]
		}, 3, openErr},
		"garbage line":  {func(s string) string { return s + "hello\n" }, 4, openErr},
		"totals edited": {func(s string) string { return strings.Replace(s, `"steps":0`, `"steps":1`, 2) }, 2, openErr},
	} {
		path := newLedger(t, budget)
		spend(t, path, 4)
		b, _ := os.ReadFile(path)
		os.WriteFile(path, []byte(c.edit(string(b))), 0o644)
		err := c.open(path, Options{})
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Line != c.line {
			t.Errorf("%s: %v, want a CorruptError at line %d", name, err, c.line)
		}
	}
	for name, edit := range map[string]func(string) string{
		"no header": func(s string) string { return s[strings.IndexByte(s, '\n')+1:] },
		"empty":     func(string) string { return "" },
	} {
		path := newLedger(t, budget)
		spend(t, path, 4)
		b, _ := os.ReadFile(path)
		os.WriteFile(path, []byte(edit(string(b))), 0o644)
		var ne *NotLedgerError
		if err := openErr(path, Options{}); !errors.As(err, &ne) || !strings.Contains(err.Error(), "not a ledger") {
			t.Errorf("%s: %v, want a NotLedgerError", name, err)
		}
	}
	for name, edit := range map[string]func(string) string{
		"version 9": func(s string) string {
			return strings.Replace(s, fmt.Sprintf(`"version":%d`, Version), `"version":9`, 1)
		},
	} {
		path := newLedger(t, budget)
		b, _ := os.ReadFile(path)
		os.WriteFile(path, []byte(edit(string(b))), 0o644)
		var ve *versionError
		if err := openErr(path, Options{}); !errors.As(err, &ve) {
			t.Errorf("%s: %v, want a versionError", name, err)
		}
	}
}

// TestTornLastLine: a last line without its line end, which a crash
// interrupted before its fsync returned (the record does not cover it),
// is cut off by the next run, under the lock, and reported; ReadOnly
// reports it and leaves it.
func TestTornLastLine(t *testing.T) {
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 5, Delta: 1e-3}})
	spend(t, path, 4)
	l := open(t, path)
	torn := string(linePrefix(l.Head())) + `"spend":{"run":"x","queries":10`
	l.Close()
	before, _ := os.ReadFile(path)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(torn)
	f.Close()
	r, err := book.readOnly(ctx, path)
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
	if s := runs(t, l); len(s) != 1 || s[0].Queries != 4 {
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
	if spec := os.Getenv("GO_LEDGER_PG"); spec != "" {
		os.Exit(pgHelper(spec))
	}
	// The tests' folders, and their helper processes', go to memory where
	// TMPDIR is unset: the ledgers and records they make are synced at
	// every line, and a file made and synced on a disk costs several times
	// the CPU. No test here rests on what reaches the disk but those of a
	// server of their own, which keeps its folder on the disk.
	removeTemp := pgtest.TempInMemory()
	// The records of every test, and of the helper processes, which
	// inherit it, go to a temporary folder, never the user's.
	dir, err := os.MkdirTemp("", "darrm-ledger-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv(statedir.Env, dir)
	code := pgtest.Run(m)
	os.RemoveAll(dir)
	removeTemp()
	os.Exit(code)
}

func helper(spec string) int {
	parts := strings.Split(spec, ",")
	n, _ := strconv.Atoi(parts[1])
	kill, _ := strconv.Atoi(parts[2])
	l, err := book.forRun(ctx, parts[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	b, _ := l.Header().binding()
	if err := l.begin(ctx, "darrm", b, accountant.ApproxStep(step)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	allowed, err := l.allowance(accountant.ApproxStep(step), n)
	if err != nil {
		return 1
	}
	w := bufio.NewWriter(os.Stdout)
	stepNo := 0
	for i := 1; i <= allowed; i++ {
		if err := l.Reserve(ctx, i); err != nil {
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
	if err := l.Settle(ctx, allowed); err != nil {
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
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	const n = 4
	total := 0
	for kill := 1; kill <= 2*n; kill++ {
		released, err := runHelper(t, path, n, kill)
		if err == nil {
			t.Fatalf("kill at step %d: the helper was not killed", kill)
		}
		total += released
		l, err := book.forRun(ctx, path)
		if err != nil {
			t.Fatalf("kill at step %d: %v", kill, err)
		}
		recorded := l.Spent().Steps
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
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 3, Delta: 1e-3}}
	path := newLedger(t, budget)
	maxQ, err := (accountant.Composition{Method: accountant.Simple, DeltaPrime: 1e-5}).MaxSteps(step, budget)
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
	l, err := book.forRun(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	bal, err := l.Balance()
	total := bal.Total
	if err != nil || total.Eps > budget.Eps || total.Delta > budget.Delta {
		t.Errorf("concurrent runs spent %v (%v), budget %v", total, err, budget)
	}
	if released != maxQ {
		t.Errorf("concurrent runs released %d labels, the budget allows %d", released, maxQ)
	}
}

// TestStatus: a ledger's status is its header, its total, the
// allowance and the total to publish (without a cap, the budget its
// filter holds every release to), before and after a spend.
func TestStatus(t *testing.T) {
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 5, Delta: 1e-3}}
	path := newLedger(t, budget)
	for _, tc := range []struct {
		spent int
		comp  accountant.Method
	}{{0, accountant.Simple}, {7, accountant.Simple}} {
		if tc.spent > 0 {
			spend(t, path, tc.spent)
		}
		l, err := book.forRun(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		st, err := l.BalanceFor(accountant.ApproxStep(step))
		bal, _ := l.Balance()
		total := bal.Total
		left, _ := l.allowance(accountant.ApproxStep(step), -1)
		l.Close()
		want := Balance{Ensemble: st.Ensemble, Relation: "private-teachers", Budget: budget, Total: total, Composition: tc.comp, Queries: total,
			Publish: accountant.Total{Method: accountant.Simple, Guarantee: budget.Guarantee, Filter: true, DeltaFrom: accountant.LedgerDelta}}
		if err != nil || st.QueriesLeft == nil || *st.QueriesLeft != left {
			t.Errorf("after %d labels: %v queries left (%v), want %d", tc.spent, st.QueriesLeft, err, left)
		}
		if st.QueriesLeft = nil; st != want {
			t.Errorf("after %d labels: status %+v, want %+v", tc.spent, st, want)
		}
	}
}

// TestOpenRun: a run opened on a ledger has begun its spend and is told
// its allowance; a run of another relation is refused and leaves the
// ledger unlocked.
func TestOpenRun(t *testing.T) {
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 5, Delta: 1e-3}}
	path := newLedger(t, budget)
	want, _ := (accountant.Composition{Method: accountant.Simple, DeltaPrime: 1e-5}).MaxSteps(step, budget)
	l := open(t, path)
	b := binding(t, l)
	l.Close()
	for _, limit := range []int{-1, 10} {
		l, allowed, err := openRun(ctx, book, path, "darrm", b, accountant.ApproxStep(step), limit)
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
		if err := l.Reserve(ctx, 3); err != nil {
			t.Errorf("reserve after OpenRun: %v", err)
		}
		l.Settle(ctx, 0)
		l.Close()
	}
	oneVote := b
	oneVote.Relation, oneVote.Partition = accountant.OneVote, provenance.KeyedHash
	if _, _, err := openRun(ctx, book, path, "gnmax", oneVote, accountant.ApproxStep(step), -1); err == nil || !strings.Contains(err.Error(), "relation") {
		t.Errorf("another relation: %v", err)
	}
	l, err := book.forRun(ctx, path) // the refused run released the lock
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, _, err := openRun(ctx, book, filepath.Join(t.TempDir(), "none"), "darrm", b, accountant.ApproxStep(step), -1); err == nil {
		t.Error("a missing ledger opened")
	}
}

// TestBinding: a release that states another ensemble, K, teachers'
// guarantee, relation, kind or partition is refused, naming each
// difference; a release that does not state its ensemble (no header) is
// refused too, even on this ledger of per-query teachers without a cap:
// a header-less file asserts nothing of the teachers (issue 40, item 4).
func TestBinding(t *testing.T) {
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 5, Delta: 1e-3}})
	l := open(t, path)
	defer l.Close()
	own := binding(t, l)
	for _, tc := range []struct {
		edit func(*provenance.Binding)
		want []string
	}{
		{func(b *provenance.Binding) { b.Ensemble = "other" }, []string{"ensemble other (the ledger's: " + own.Ensemble + ")"}},
		{func(b *provenance.Binding) { b.K = 9 }, []string{"K 9 (the ledger's: 11)"}},
		{func(b *provenance.Binding) { b.Each.Eps = 1 }, []string{"eps 1 (the ledger's: 0.1)"}},
		{func(b *provenance.Binding) { b.Each.Delta = 1e-4; b.Kind = provenance.Fixed }, []string{"Delta 0.0001 (the ledger's: 1e-05)", "kind fixed (the ledger's: per-query)"}},
		{func(b *provenance.Binding) { b.Partition = provenance.KeyedHash }, []string{"partition keyed-hash (the ledger's: shared)"}},
		{func(b *provenance.Binding) { b.Relation = accountant.OneVote }, []string{"relation one-vote (the ledger's: private-teachers)"}},
	} {
		b := own
		tc.edit(&b)
		err := l.begin(ctx, "darrm", b, accountant.ApproxStep(step))
		var be *bindingError
		if !errors.As(err, &be) || len(be.Diffs) != len(tc.want) {
			t.Errorf("%+v: %v, want a *bindingError with %d differences", b, err, len(tc.want))
			continue
		}
		for _, w := range append(tc.want, "cannot share a budget") {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q lacks %q", err, w)
			}
		}
	}
	headerless := provenance.Binding{Teachers: provenance.Teachers{K: 11, Each: bound.Each, Relation: accountant.PrivateTeachers}}
	var be *bindingError
	if err := l.begin(ctx, "darrm", headerless, accountant.ApproxStep(step)); !errors.As(err, &be) || !be.Unstated {
		t.Errorf("a release without a header, of the ledger's K and teachers: %v, want a *bindingError with Unstated", err)
	}
}

// TestCap: for fixed teachers the ledger's total is the smaller of the
// composition of the spends and the teachers' cap; a cap within the
// budget makes every further release free.
func TestCap(t *testing.T) {
	fixed := bound
	fixed.Kind, fixed.Partition = provenance.Fixed, provenance.KeyedHash
	open := func(budget accountant.Budget, b provenance.Binding) *Ledger {
		path := filepath.Join(t.TempDir(), "l")
		b = unique(b)
		// Version 4's simple filter holds a step of any δ: with a cap
		// within the budget it is free (version 5 refuses a step no
		// part of its filter holds).
		h := NewHeader(b, budget, 1e-5, accountant.Filter{})
		h.Filter = accountant.Simple
		initVersion4(t, path, h)
		l, err := book.forRun(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.begin(ctx, "darrm", b, accountant.ApproxStep(step)); err != nil {
			t.Fatal(err)
		}
		return l
	}
	// Disjoint shares: the cap is (0.1, 1e-5), within (0.1, 1e-5): free.
	l := open(accountant.Budget{Guarantee: accountant.Guarantee{Eps: 0.1, Delta: 1e-5}}, fixed)
	if n, err := l.allowance(accountant.ApproxStep(step), -1); n != accountant.Unlimited || err != nil {
		t.Errorf("allowance %d (%v), want unlimited", n, err)
	}
	if n, _ := l.allowance(accountant.ApproxStep(step), 7); n != 7 {
		t.Errorf("allowance with a limit: %d", n)
	}
	if err := l.Reserve(ctx, 1000); err != nil {
		t.Fatalf("a free release was refused: %v", err)
	}
	l.Settle(ctx, 1000)
	st, err := l.BalanceFor(accountant.ApproxStep(step))
	q, _ := accountant.Composition{Method: accountant.Simple}.Compose(step, 1000)
	if err != nil || st.Total != fixed.Each || st.Bound != accountant.TeachersBound || st.Queries != q || !st.Free || st.QueriesLeft != nil || st.Cap.Rule() != "parallel" {
		t.Errorf("status after 1000 free labels: %+v (%v), queries want %v", st, err, q)
	}
	// Free is a state of its own, not a count: JSON has no number of
	// queries left.
	if b, err := json.Marshal(st); err != nil || !strings.Contains(string(b), `"queries_left":null,"free":true`) {
		t.Errorf("status of a free ledger in JSON: %s (%v)", b, err)
	}
	l.Close()
	// Shared data: the cap's delta, at least 1-(1-1e-5)^11, is over a
	// budget of delta 1e-4. The cap is the only bound of fixed teachers
	// (accountant.Cap): no label, where the spends' composition allowed 3
	// before; pure labels whose composition (1.5, 0) is within (5, 1e-4)
	// neither. A ledger made before Init refused such a budget (here of
	// version 4) refuses every label, and says why.
	shared := fixed
	shared.Partition = provenance.SharedData
	for _, tc := range []struct {
		budget, step accountant.Guarantee
	}{{accountant.Guarantee{Eps: 1, Delta: 1e-4}, step}, {accountant.Guarantee{Eps: 5, Delta: 1e-4}, accountant.Guarantee{Eps: 0.3}}} {
		l = open(accountant.Budget{Guarantee: tc.budget}, shared)
		l.step = accountant.ApproxStep(tc.step)
		if n, err := l.allowance(accountant.ApproxStep(tc.step), -1); n != 0 || err != nil {
			t.Errorf("shared, budget %v below the cap: allowance %d (%v), want 0", tc.budget, n, err)
		}
		if err := l.Reserve(ctx, 1); !errors.Is(err, errBudget) || !errors.As(err, new(*accountant.CapError)) {
			t.Errorf("budget %v: one label: %v", tc.budget, err)
		}
		if b, err := l.Balance(); err != nil || b.Free || b.Bound != accountant.QueriesBound || b.Total != (accountant.Guarantee{}) || !errors.As(b.Publish.Err, new(*accountant.CapError)) {
			t.Errorf("budget %v: balance %+v (%v)", tc.budget, b, err)
		}
		l.Close()
	}
}

// TestPureBudget: pure-DP spends against a pure-DP budget. Their simple
// composition is pure, the others carry the slack δ' > 0: the budget is
// spent by simple composition, and the balance reports that total.
func TestPureBudget(t *testing.T) {
	eps := 0.1
	pure := accountant.Guarantee{Eps: 3 * eps} // m·ε = 0.30000000000000004
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 3}}
	b := unique(bound)
	b.Each.Delta = 0
	path := filepath.Join(t.TempDir(), "pure.ledger")
	if _, err := book.create(ctx, path, NewHeader(b, budget, 1e-5, simpleFilter(budget)), false); err != nil {
		t.Fatal(err)
	}
	l, allowed, err := openRun(ctx, book, path, "darrm", b, accountant.ApproxStep(pure), -1)
	if err != nil || allowed != 9 {
		t.Fatalf("allowance of %v in %v: %d (%v), want 9", pure, budget, allowed, err)
	}
	defer l.Close()
	if err := l.Reserve(ctx, 10); !errors.Is(err, errBudget) {
		t.Errorf("10 labels: %v", err)
	}
	if err := l.Reserve(ctx, 9); err != nil {
		t.Fatal(err)
	}
	if err := l.Settle(ctx, 9); err != nil {
		t.Fatal(err)
	}
	bal, err := l.Balance()
	if err != nil || bal.Composition != accountant.Simple || bal.Total.Delta != 0 || !bal.Total.Within(budget.Guarantee) {
		t.Errorf("balance after 9 labels: %+v (%v)", bal, err)
	}
}

// TestFreeAtTheBudgetDelta: a ledger of teachers on shared data is free
// when their cap at the budget's delta is within it, whatever delta' (the
// slack of the cap shown): 11 teachers (0.1, 1e-5) are (0.814268, 1e-3)-DP
// together, so a budget (1, 1e-3) frees every release even with
// delta' = 1e-2, and a budget (1, 1e-4), below their composed delta,
// allows no label from these fixed teachers: Init refuses it, saying why.
func TestFreeAtTheBudgetDelta(t *testing.T) {
	fixed := bound
	fixed.Kind = provenance.Fixed // fixed models: the teachers' cap applies
	for _, tc := range []struct {
		delta, prime float64
		free         bool
	}{{1e-3, 1e-5, true}, {1e-3, 1e-2, true}, {1e-4, 1e-5, false}, {0, 1e-5, false}} {
		path := filepath.Join(t.TempDir(), "l.ledger")
		h := NewHeader(fixed, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1, Delta: tc.delta}}, tc.prime, simpleFilter(accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1, Delta: tc.delta}}))
		_, err := (Options{StateDir: t.TempDir()}).create(ctx, path, h, false)
		var bad interface{ BadInput() bool }
		if !tc.free {
			if !errors.As(err, new(*accountant.CapError)) || !errors.As(err, &bad) || !strings.Contains(err.Error(), "not proved for fixed teachers") {
				t.Errorf("budget delta %g: init %v, want refused", tc.delta, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		l, err := Options{StateDir: t.TempDir()}.forRun(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		bal, err := l.Balance()
		l.Close()
		if err != nil || bal.Free != tc.free || tc.free && (bal.Publish.Cap == nil || bal.Publish.Guarantee.Delta > tc.delta) {
			t.Errorf("budget delta %g, delta' %g: free %v, publish %+v (%v), want free %v", tc.delta, tc.prime, bal.Free, bal.Publish, err, tc.free)
		}
	}
}

// book keeps the tests' records in the folder TestMain names.
var book Options

// simpleFilter is the filter of simple composition of (ε, δ) steps at
// the budget's δ, one part: the rule of the tests' ledgers open to any
// use.
func simpleFilter(budget accountant.Budget) accountant.Filter {
	return accountant.Filter{Parts: []accountant.FilterPart{{Method: accountant.Simple, Delta: budget.Delta}}}
}

// openRun opens the ledger at location for a run (Open) and begins it
// (Ledger.Begin), closing it when it cannot begin.
func openRun(ctx context.Context, bk Options, location string, mechanism provenance.MechanismName, b provenance.Binding, step accountant.Spend, limit int) (*Ledger, int, error) {
	l, err := bk.forRun(ctx, location)
	if err != nil {
		return nil, 0, err
	}
	allowed, err := l.Begin(ctx, mechanism, b, step, limit)
	if err != nil {
		l.Close()
		return nil, 0, err
	}
	return l, allowed, nil
}

// TestBeginNamesMechanism: a run's lines say what released the labels they
// charge, so a run of no mechanism name, or of one with control
// characters, is refused, naming mechanism, where it was begun and
// charged.
func TestBeginNamesMechanism(t *testing.T) {
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 5, Delta: 1e-5}}
	path := newLedger(t, budget)
	for _, name := range []provenance.MechanismName{"", "dar\nrm"} {
		l, _, err := openRun(ctx, book, path, name, bound, accountant.ApproxStep(accountant.Guarantee{Eps: 0.3}), -1)
		var pe *param.Error
		if !errors.As(err, &pe) || pe.Name != "mechanism" {
			if l != nil {
				l.Close()
			}
			t.Errorf("mechanism %q: %v, want an error naming mechanism", name, err)
		}
	}
}
