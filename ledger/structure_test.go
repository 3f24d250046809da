package ledger

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
)

// runOf hands out labels of step in one run on the ledger at path: each
// count of reserve reserved in turn, then settle settled, or no
// settlement when settle < 0 (a run whose process died).
func runOf(t *testing.T, path string, g accountant.Guarantee, settle int, reserve ...int) {
	t.Helper()
	l := open(t, path)
	defer l.Close()
	if err := l.begin(ctx, "darrm", binding(t, l), accountant.ApproxStep(g)); err != nil {
		t.Fatal(err)
	}
	for _, n := range reserve {
		if err := l.Reserve(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if settle >= 0 {
		if err := l.Settle(ctx, settle); err != nil {
			t.Fatal(err)
		}
	}
}

// spendLines returns the spend of every line of the ledger at path after
// its header, and its totals.
func spendLines(t *testing.T, path string) ([]Spend, accountant.Sequence) {
	t.Helper()
	l, err := book.readOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var out []Spend
	for _, b := range lines(t, path)[1:] {
		if b == "" {
			continue
		}
		_, s, _, err := parseSpendLine(Version, []byte(strings.TrimSuffix(b, "\n")))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out, l.Spent()
}

// appendSpend appends s to the ledger at path as its next line, chained
// to the last one with its own hash: a well-formed line, as anyone who
// knows the format can write one.
func appendSpend(t *testing.T, path string, s Spend) {
	t.Helper()
	l, err := book.readOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	head := l.Head()
	l.Close()
	b, _, err := encodeLine(Version, head, s)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

// TestStructure: what a line may say follows from the lines before it. A
// ledger of three runs (3 labels; 4, then 6 reserved and 5 settled; and,
// with crashed, a run whose process died after reserving 2) is given one
// more line, well-formed and chained with its own hash, that breaks a
// rule of how runs write: verify (ReadOnly, every line) and a release
// (Open, which reads the lines after the one its record vouches for)
// refuse it as damage at that line, and the release writes nothing. The
// issue's forgery is the first case: the last run repeated with 0 labels
// and final, which lowered the total by the last run's labels and was
// taken by the next release as a ledger ahead of its record. A line of a
// finished run copied to the end with the totals before it made to fit
// adds its labels: a release, which does not know the runs before its
// vouched line, counts them (the total never lowered); verify refuses it.
// A new run whose labels take the ledger past its budget by its filter,
// which holds every release to the budget it publishes, is refused too:
// verify passed it, publishing the budget below what the runs spent.
func TestStructure(t *testing.T) {
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}}
	type ledgerState struct {
		spends []Spend
		spent  accountant.Sequence
	}
	last := func(s ledgerState) Spend { return s.spends[len(s.spends)-1] }
	for _, c := range []struct {
		name    string
		crashed bool
		forge   func(ledgerState) Spend
		reason  string
		release bool // a release refuses it too
	}{
		{"the last run forgotten (issue 46)", false, func(s ledgerState) Spend {
			f := last(s)
			f.Queries, f.Final = 0, true
			return f
		}, "after its final line", true},
		{"a final line duplicated", false, last, "after its final line", true},
		{"a line of the last run after its final line, more labels", false, func(s ledgerState) Spend {
			f := last(s)
			f.Queries, f.Final = 9, false
			return f
		}, "after its final line", true},
		{"a reservation lowered", true, func(s ledgerState) Spend {
			f := last(s)
			f.Queries = 1
			return f
		}, "reservations only rise", true},
		{"a reservation repeated", true, last, "reservations only rise", true},
		{"a settlement above the reservation", true, func(s ledgerState) Spend {
			f := last(s)
			f.Queries, f.Final = 3, true
			return f
		}, "settles 3 labels, but reserved 2", true},
		{"the spend of a run lowered", true, func(s ledgerState) Spend {
			f := last(s)
			f.Eps, f.Queries = f.Eps/2, 3
			return f
		}, "spend changed", true},
		{"the mechanism of a run changed", true, func(s ledgerState) Spend {
			f := last(s)
			f.Mechanism, f.Queries = "rr", 3
			return f
		}, "spend changed", true},
		{"the totals of a run's line lowered", true, func(s ledgerState) Spend {
			f := last(s)
			f.Queries, f.Prior = 3, &accountant.Sequence{}
			return f
		}, "does not follow", true},
		{"the totals of a new run lowered", false, func(s ledgerState) Spend {
			f := last(s)
			f.Run, f.Queries, f.Prior = "0123456789abcdef", 1, &accountant.Sequence{}
			return f
		}, "does not follow", true},
		{"a new run past the budget", false, func(s ledgerState) Spend {
			f := last(s)
			f.Run, f.Queries, f.Prior = "0123456789abcdef", 1000, &s.spent
			return f
		}, "past its budget", true},
		{"a line of a finished run copied to the end", false, func(s ledgerState) Spend {
			f := s.spends[1] // the first run's final line
			f.Prior = &s.spent
			return f
		}, "which ended before line", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := newLedger(t, budget)
			runOf(t, path, step, 3, 3)
			runOf(t, path, step, 5, 4, 6)
			if c.crashed {
				runOf(t, path, step, -1, 2)
			}
			spends, spent := spendLines(t, path)
			o := open(t, path)
			b := binding(t, o)
			o.Close()
			n := len(spends) + 2 // the forged line's number
			appendSpend(t, path, c.forge(ledgerState{spends, spent}))
			before := mustReadFile(t, path)
			corruptAt(t, "verify", readErr(path), n, c.reason)
			l, allowed, err := openRun(ctx, book, path, "darrm", b, accountant.ApproxStep(step), 10)
			if !c.release {
				if err != nil || l.Spent().Steps < spent.Steps {
					t.Errorf("release: %v; %d labels counted, %d before the line", err, l.Spent().Steps, spent.Steps)
				}
				l.Close()
				return
			}
			corruptAt(t, "release", err, n, c.reason)
			if l != nil || allowed != 0 {
				t.Errorf("release: %d labels allowed", allowed)
			}
			if !bytes.Equal(mustReadFile(t, path), before) {
				t.Error("a release changed a damaged ledger")
			}
		})
	}
}

// TestStructureLineMoved: a line moved from the middle to the end, the
// chain re-signed from there: the record's line is no longer where it
// says, so a release reads every line too, and both it and verify find
// the moved line's run ended before it.
func TestStructureLineMoved(t *testing.T) {
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	runOf(t, path, step, 3, 3)
	runOf(t, path, step, 5, 4, 6)
	ls := lines(t, path)
	moved := append(append(append([]string{}, ls[:2]...), ls[3:len(ls)-1]...), ls[2]) // line 3, the first run's final line, to the end
	if err := os.WriteFile(path, []byte(strings.Join(moved, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	resign(t, path, func(_ int, raw string) string { return raw })
	corruptAt(t, "verify", readErr(path), 6, "which ended before line 6")
	corruptAt(t, "release", openErr(path, Options{}), 6, "which ended before line 6")
}

// TestSettleOnce: a run writes what the structure allows. A second
// settlement of no more labels (a release whose output failed after it
// settled) changes nothing, the count settled first standing; one of
// more labels, and a reservation after the settlement, are refused. The
// ledger stays sound.
func TestSettleOnce(t *testing.T) {
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	l := open(t, path)
	if err := l.begin(ctx, "darrm", binding(t, l), accountant.ApproxStep(step)); err != nil {
		t.Fatal(err)
	}
	if err := l.Reserve(ctx, 6); err != nil {
		t.Fatal(err)
	}
	if err := l.Settle(ctx, 5); err != nil {
		t.Fatal(err)
	}
	size := len(mustReadFile(t, path))
	if err := l.Settle(ctx, 0); err != nil {
		t.Errorf("a second settlement of fewer labels: %v", err)
	}
	if err := l.Settle(ctx, 6); err == nil {
		t.Error("a second settlement of more labels was taken")
	}
	if err := l.Reserve(ctx, 7); err == nil {
		t.Error("a reservation after the settlement was taken")
	}
	l.Close()
	if len(mustReadFile(t, path)) != size {
		t.Error("a line was written after the settlement")
	}
	if err := readErr(path); err != nil {
		t.Fatal(err)
	}
	if s, _ := spendLines(t, path); len(s) != 2 || s[1].Queries != 5 || !s[1].Final {
		t.Errorf("lines %+v", s)
	}
}
