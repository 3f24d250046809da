package ledger

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/provenance"
)

// newFirstRunLedger makes a ledger bound to b, open to any use, whose
// first run chooses its filter.
func newFirstRunLedger(t *testing.T, b provenance.Binding, budget accountant.Budget) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "first.ledger")
	h := NewHeader(b, budget, 1e-5, accountant.Filter{})
	if !h.FirstRunFilter {
		t.Fatal("NewHeader of an empty filter: the first run does not choose the filter")
	}
	if _, err := book.create(ctx, path, h, false); err != nil {
		t.Fatal(err)
	}
	return path
}

// release hands out n labels of step in one run on the ledger at path and
// returns the spend of its last line.
func release(t *testing.T, path string, mechanism provenance.MechanismName, step accountant.Spend, n int) (Spend, error) {
	t.Helper()
	l := open(t, path)
	defer l.Close()
	if err := l.begin(ctx, mechanism, binding(t, l), step); err != nil {
		return Spend{}, err
	}
	if err := l.Reserve(ctx, n); err != nil {
		return Spend{}, err
	}
	if err := l.Settle(ctx, n); err != nil {
		return Spend{}, err
	}
	return l.chain.last, nil
}

// TestFirstRunFilter: a ledger open to any use whose first run chooses
// its filter holds, from then on, the filter ChooseFilter keeps for that
// run's labels: the first run and the allowance after it add up to what
// that filter allows from an empty ledger, every line states the filter,
// a later run of other labels is charged by it, and a fresh reader agrees.
func TestFirstRunFilter(t *testing.T) {
	pure := func(eps float64) accountant.Spend { return accountant.ApproxStep(accountant.Guarantee{Eps: eps}) }
	for _, c := range []struct {
		name   string
		b      provenance.Binding
		budget accountant.Budget
		first  accountant.Spend
		then   accountant.Spend
		// labels is what the kept filter allows of first from an empty
		// ledger, counted independently where given (0: not given).
		labels int
	}{
		// Pure labels at 0.2 and eps 8: basic composition allows 40, the
		// Rényi filter at order 6 47 (ε-DP is (α, ε_α)-RDP with ε_α the
		// Rényi divergence of randomized response's pair, e^ε/(1+e^ε)
		// against 1/(1+e^ε): 47·ε_6 converts to 7.909 at δ 1e-8 and
		// 48·ε_6 to 8.010 by Canonne-Kamath-Steinke 2020 Prop. 12,
		// computed apart).
		{"pure labels at 0.2, one-vote", oneVote, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 8, Delta: 1e-8}}, pure(0.2), confident, 47},
		{"confident-gnmax", oneVote, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-5}}, confident, pure(0.05), 0},
		{"approximate labels, private teachers", bound, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 10, Delta: 1e-3}}, accountant.ApproxStep(step), pure(0.1), 33},
	} {
		b := unique(c.b)
		choice, err := ChooseFilter(nil, b, c.budget, c.first, 0)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := -1
		for _, a := range choice.Allowances {
			if a.Filter.String() == choice.Filter.String() {
				want = a.Labels
			}
		}
		if c.labels > 0 && want != c.labels {
			t.Errorf("%s: the filter kept, %v, allows %d labels, want %d", c.name, choice.Filter, want, c.labels)
		}
		path := newFirstRunLedger(t, b, c.budget)
		l := open(t, path)
		left, err := l.allowance(c.first, -1)
		l.Close()
		if err != nil || left != want {
			t.Errorf("%s: a new ledger allows %d labels (%v), want %d, the filter kept's", c.name, left, err, want)
		}
		const batch = 3
		s, err := release(t, path, "first", c.first, batch)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := (accountant.Filter{Parts: s.Filter}); got.String() != choice.Filter.String() {
			t.Errorf("%s: the first run's line states the filter %v, want %v", c.name, got, choice.Filter)
		}
		l = open(t, path)
		left, err = l.allowance(c.first, -1)
		bal, berr := l.Balance()
		l.Close()
		if err != nil || left != want-batch {
			t.Errorf("%s: after %d labels the ledger allows %d (%v), want %d", c.name, batch, left, err, want-batch)
		}
		if berr != nil || bal.Composition != choice.Filter.Parts[0].Method {
			t.Errorf("%s: composition %v (%v), want %v", c.name, bal.Composition, berr, choice.Filter.Parts[0].Method)
		}
		s, err = release(t, path, "then", c.then, 1)
		if err != nil {
			t.Fatalf("%s: a run of other labels: %v", c.name, err)
		}
		if got := (accountant.Filter{Parts: s.Filter}); got.String() != choice.Filter.String() {
			t.Errorf("%s: a later run states the filter %v, want the first run's %v", c.name, got, choice.Filter)
		}
		ro, err := book.readOnly(ctx, path)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if ro.chain.rule.filter == nil || ro.chain.rule.filter.String() != choice.Filter.String() {
			t.Errorf("%s: read again, the ledger's filter is %v, want %v", c.name, ro.chain.rule.filter, choice.Filter)
		}
		ro.Close()
	}
}

// TestFirstRunFilterLines: a line of a ledger whose first run chose its
// filter must state that filter, the one every line before it stated, and
// a valid one; no other ledger's line states one.
func TestFirstRunFilterLines(t *testing.T) {
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 8, Delta: 1e-6}}
	gdp := accountant.Filter{Parts: []accountant.FilterPart{{Method: accountant.GDPFilter, Delta: 1e-6}, {Method: accountant.Simple}}}
	simple := accountant.Filter{Parts: []accountant.FilterPart{{Method: accountant.Simple, Delta: 1e-6}}}
	over := accountant.Filter{Parts: []accountant.FilterPart{{Method: accountant.Simple, Delta: 1e-5}}}
	first := rule{version: Version, budget: budget.Guarantee, firstRun: true}
	chosen := first
	chosen.filter = &gdp
	fixed := rule{version: Version, budget: budget.Guarantee, filter: &gdp}
	for _, c := range []struct {
		name   string
		r      rule
		filter accountant.Filter
		err    string // "" for none
	}{
		{"the first line chooses", first, gdp, ""},
		{"the same filter again", chosen, gdp, ""},
		{"another filter", chosen, simple, "not the one the lines before it state"},
		{"no filter", chosen, accountant.Filter{}, "no filter"},
		{"no filter on the first line", first, accountant.Filter{}, "no filter"},
		{"a filter over the budget", first, over, "its filter"},
		{"a filter where the header fixes one", fixed, gdp, "header fixes"},
		{"none where the header fixes one", fixed, accountant.Filter{}, ""},
	} {
		r, err := c.r.withLine(Spend{Filter: c.filter.Parts})
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.err)
		case c.err == "" && (r.filter == nil || r.filter.String() != gdp.String()):
			t.Errorf("%s: the rule holds %v, want %v", c.name, r.filter, gdp)
		}
	}
	h := NewHeader(unique(oneVote), budget, 1e-5, accountant.Filter{})
	h.Version, h.Parts = Version, gdp.Parts
	var pe interface{ Param() (string, any, string) }
	if err := checkHeader(h); !errors.As(err, &pe) {
		t.Errorf("a header whose first run chooses its filter, with the filter's parts: %v, want a parameter error", err)
	}
}
