package ledger

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/provenance"
)

// oneVote is a PATE ensemble: one-vote relation, no teachers' guarantee,
// so a version-4 ledger of it had the zCDP filter by default
// (newOneVoteLedger).
var oneVote = provenance.Binding{Ensemble: "pate", Teachers: provenance.Teachers{K: 250, Relation: accountant.OneVote, Kind: provenance.Fixed, Partition: provenance.KeyedHash}}

// confident is one query of Confident-GNMax, σ1 = 150, σ2 = 40, discrete
// noise (its per-query guarantee at δ = 1e-5 by the paper's conversion).
var confident = accountant.Spend{Kind: accountant.GaussianSpend, Guarantee: accountant.Guarantee{Eps: 0.1732904520775151, Delta: 1e-5}, Discrete: true,
	Gaussian: []accountant.GaussianPart{{Sigma: 40, Coords: 2}, {Sigma: 150, Coords: 1}}}

// gnmax1e9 is one query of GNMax with σ2 = 1e9 (issue 55): more queries
// than the accountant counts fit any budget by the zCDP filter.
var gnmax1e9 = accountant.Spend{Kind: accountant.GaussianSpend, Guarantee: accountant.Guarantee{Eps: 6.78615e-09, Delta: 1e-5}, Discrete: true,
	Gaussian: []accountant.GaussianPart{{Sigma: 1e9, Coords: 2}}}

// zcdpEps is ε of ρ-zCDP at δ by the improved conversion, minimised by a
// scan over the order on a fine grid (independent of RhoToDP's root); it
// is at most 1e-6 above the exact minimum.
func zcdpEps(rho, delta float64) float64 {
	best := math.Inf(1)
	for a := 1.0001; a < 1000; a *= 1.00001 {
		e := rho*a + math.Log((a-1)/a) - (math.Log(delta)+math.Log(a))/(a-1)
		best = math.Min(best, e)
	}
	return best
}

func newOneVoteLedger(t *testing.T, budget accountant.Budget) (string, provenance.Binding) {
	t.Helper()
	b := unique(oneVote)
	path := filepath.Join(t.TempDir(), "pate.ledger")
	h := NewHeader(b, budget, 1e-5, accountant.Filter{})
	h.Filter = accountant.Simple
	if budget.Delta > 0 {
		h.Filter = accountant.ZCDPFilter
	}
	initVersion4(t, path, h)
	return path, b
}

// initVersion4 writes at path a ledger of version 4 with header h, as the
// darrm that wrote version 4 made it: its rule is kept.
func initVersion4(t *testing.T, path string, h Header) {
	t.Helper()
	h.Version, h.ID, h.Created, h.FirstRunFilter = version4, strings.Repeat("4", 32), time.Now().UTC().Truncate(time.Second), false
	if err := checkHeader(h); err != nil {
		t.Fatal(err)
	}
	b, _, err := encodeLine(version4, "", h)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestZCDPFilterTargets: the cases of issue 35. Confident-GNMax charged
// to a ledger with budget (2, 1e-5): 167 queries (zCDP with the improved
// conversion; the exact composition of one run would allow 194, but the
// ledger's runs may be chosen adaptively), the total within the budget,
// one more refused. Pure labels 20 x 0.05 then 20 x 0.1 at budget δ 1e-5:
// ρ = 0.125, total 2.17 (simple composition: 3).
func TestZCDPFilterTargets(t *testing.T) {
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-5}}
	path, b := newOneVoteLedger(t, budget)
	l, allowed, err := openRun(ctx, book, path, "confident-gnmax", b, confident, -1)
	if err != nil || allowed != 167 {
		t.Fatalf("allowance %d (%v), want 167", allowed, err)
	}
	if err := l.Reserve(ctx, allowed+1); !errors.Is(err, errBudget) {
		t.Errorf("%d queries: %v", allowed+1, err)
	}
	if err := l.Reserve(ctx, allowed); err != nil {
		t.Fatal(err)
	}
	l.Settle(ctx, allowed)
	bal, err := l.Balance()
	l.Close()
	rho := 167 * (1.0/(40*40) + 1.0/(2*150*150)) // 1/σ2² + 1/(2σ1²) per query
	if err != nil || bal.Composition != accountant.ZCDPFilter || !bal.Total.Within(budget.Guarantee) || math.Abs(bal.Total.Eps-zcdpEps(rho, 1e-5)) > 1e-5 {
		t.Errorf("balance %+v (%v), want eps %g", bal, err, zcdpEps(rho, 1e-5))
	}

	path, b = newOneVoteLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 3, Delta: 1e-5}})
	for _, eps := range []float64{0.05, 0.1} {
		l, _, err := openRun(ctx, book, path, "darrm-one-vote", b, accountant.ApproxStep(accountant.Guarantee{Eps: eps}), -1)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Reserve(ctx, 20); err != nil {
			t.Fatal(err)
		}
		l.Settle(ctx, 20)
		l.Close()
	}
	r, err := book.readOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	bal, err = r.Balance()
	total, method := bal.Total, bal.Composition.String()
	if want := zcdpEps(0.125, 1e-5); err != nil || method != "zcdp-filter" || total.Eps > 2.2 || math.Abs(total.Eps-want) > 1e-5 || total.Eps < want-1e-6 {
		t.Errorf("mixed pure labels: %v by %s (%v), want %g", total, method, err, want)
	}
}

// TestFilterRefuses: a zCDP ledger refuses labels without a zCDP curve
// ((ε, δ) with δ > 0 alone) and says which filter would take them, by the
// header's field (a command names its flag).
func TestFilterRefuses(t *testing.T) {
	path, b := newOneVoteLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-5}})
	_, _, err := openRun(ctx, book, path, "darrm-one-vote", b, accountant.ApproxStep(accountant.Guarantee{Eps: 0.3, Delta: 1e-6}), -1)
	var fe *FilterError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "a ledger whose Header.Filter is simple holds them") || strings.Contains(err.Error(), "--filter") {
		t.Errorf("approximate labels on a zcdp ledger: %v", err)
	}
}

// TestDescriptionReproducesTotals: a line whose description is changed
// (the whole chain re-signed, so that only the sums catch it) no longer
// gives the prior of the next line: the ledger is damaged there.
func TestDescriptionReproducesTotals(t *testing.T) {
	path, b := newOneVoteLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-5}})
	for range 2 {
		l, _, err := openRun(ctx, book, path, "confident-gnmax", b, confident, 10)
		if err != nil {
			t.Fatal(err)
		}
		l.Reserve(ctx, 10)
		l.Settle(ctx, 10)
		l.Close()
	}
	resign(t, path, func(n int, raw string) string {
		if n == 2 || n == 3 { // the first run's lines, which must agree
			return strings.Replace(raw, `"sigma":40`, `"sigma":80`, 1)
		}
		return raw
	})
	corruptAt(t, "description changed", readErr(path), 4, "prior")
}

// TestNamedFilterAsOffered: NamedFilter gives the filter that
// accountant.Budget.OpenFilters offers for the labels declared, for every
// method, relation and budget (it takes those that do not depend on the
// labels from the offer without them), and the same refusals.
func TestNamedFilterAsOffered(t *testing.T) {
	gaussian := accountant.Spend{Kind: accountant.GaussianSpend, Guarantee: accountant.Guarantee{Eps: 0.5, Delta: 1e-6}, Gaussian: []accountant.GaussianPart{{Sigma: 4, Coords: 1}}}
	pure := accountant.ApproxStep(accountant.Guarantee{Eps: 0.2})
	bad := accountant.ApproxStep(accountant.Guarantee{Eps: -1})
	methods := []accountant.Method{accountant.GDPFilter, accountant.ZCDPFilter, accountant.RenyiFilter, accountant.AdvancedFilter, accountant.Simple, accountant.General}
	for _, b := range []provenance.Binding{bound, oneVote} {
		for _, budget := range []accountant.Budget{{Guarantee: accountant.Guarantee{Eps: 3, Delta: 1e-5}}, {Guarantee: accountant.Guarantee{Eps: 3}}, {Guarantee: accountant.Guarantee{Eps: -3}}} {
			for _, step := range []*accountant.Spend{nil, &pure, &gaussian, &bad} {
				offered, _, offerErr := budget.OpenFilters(nil, b.Relation, step)
				for _, m := range methods {
					name := fmt.Sprintf("%v, budget %v, labels %v, %v", b.Relation, budget.Guarantee, step, m)
					got, err := NamedFilter(nil, b, budget, step, m)
					var want *accountant.Filter
					for _, c := range offered {
						if c.Filter.Parts[0].Method == m {
							want = &c.Filter
							break
						}
					}
					switch {
					case want != nil && (err != nil || !reflect.DeepEqual(got, *want)):
						t.Errorf("%s: %+v (%v), offered %+v", name, got, err, *want)
					case want == nil && (err == nil || offered == nil && !strings.Contains(err.Error(), offerErr.Error())):
						t.Errorf("%s: %+v (%v), want the offer's refusal %v", name, got, err, offerErr)
					}
				}
			}
		}
	}
}

// TestChooseFilter: what the filters of a ledger open to any use allow a
// declared use, against independent counts (simple composition: the
// largest k with k·ε within the budget, in exact arithmetic; the zCDP
// filter: k·ρ converts, by zcdpEps, within the budget and (k+1)·ρ does
// not), and the filter kept: the one that allows the most, the earlier of
// equals. Every filter but simple composition of δ_B has a part of simple
// composition of pure points beside it, so that it allows at least the
// basic-composition count of labels with a pure point. Issue 47's case:
// 4 pure labels at 0.2 total 0.8 by simple composition and 1.897 by the
// zCDP filter at δ 1e-6. Labels with δ > 0 and no curve are held by
// simple composition alone.
func TestChooseFilter(t *testing.T) {
	pure := func(eps float64) accountant.Spend { return accountant.ApproxStep(accountant.Guarantee{Eps: eps}) }
	simple := func(eps float64, budget accountant.Budget) int {
		k := new(big.Rat).Quo(new(big.Rat).SetFloat64(budget.Eps), new(big.Rat).SetFloat64(eps))
		return int(new(big.Int).Quo(k.Num(), k.Denom()).Int64())
	}
	// zcdp reports whether n labels of zCDP slope rho, and not n+1, fit.
	zcdp := func(n int, rho float64, budget accountant.Budget) bool {
		return zcdpEps(float64(n)*rho, budget.Delta) <= budget.Eps && zcdpEps(float64(n+1)*rho, budget.Delta) > budget.Eps+1e-6
	}
	b3 := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 3, Delta: 1e-5}}
	b8 := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 8, Delta: 1e-6}}
	for _, c := range []struct {
		name      string
		b         provenance.Binding
		budget    accountant.Budget
		step      accountant.Spend
		expected  int
		simple    int     // labels by simple composition
		zcdp      int     // labels by the zCDP filter alone (-1: refused)
		rho       float64 // their zCDP slope, to check zcdp (0: zcdp is exact)
		simpleEps float64 // the expected labels' totals (0: not checked)
		zcdpEps   float64
	}{
		{"4 pure labels at 0.2 (issue 47), budget (8, 1e-6)", oneVote, b8, pure(0.2), 4, simple(0.2, b8), 52, 0.02, 0.8, 1.8973764},
		{"4 pure labels at 0.2, budget (3, 1e-5)", oneVote, b3, pure(0.2), 4, simple(0.2, b3), 11, 0.02, 0.8, 1.6927338},
		{"pure labels at 0.05", oneVote, b3, pure(0.05), 100, simple(0.05, b3), 179, 0.00125, 0, 0},
		{"confident-gnmax", oneVote, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-5}}, confident, 300, 1, 167, 0, 0, 0},
		{"approximate labels", bound, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 10, Delta: 1e-3}}, accountant.ApproxStep(step), 0, 33, -1, 0, 0, 0},
		{"private teachers, pure labels", bound, b3, pure(0.05), 0, 59, 179, 0.00125, 0, 0},
		{"nothing fits", oneVote, b3, pure(10), 1, 0, 0, 0, 0, 0},
		// Issue 55: more steps than the accountant counts fit the zCDP
		// filter, which then allows more than simple composition, not
		// none.
		{"gnmax at sigma2 1e9", oneVote, b3, gnmax1e9, 0, 1, accountant.CountLimit, 0, 0, 0},
		{"pure labels at 1e-10", oneVote, b3, pure(1e-10), 100, simple(1e-10, b3), accountant.CountLimit, 0, 0, 0},
		{"pure labels at 1e-17, private teachers", bound, b3, pure(1e-17), 0, accountant.CountLimit, accountant.CountLimit, 0, 0, 0},
	} {
		ch, err := ChooseFilter(nil, c.b, c.budget, c.step, c.expected)
		if c.name == "nothing fits" {
			if err == nil {
				t.Errorf("%s: kept %v", c.name, ch.Filter)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		by := map[accountant.Method]filterAllowance{}
		most, kept := -1, -1
		for i, a := range ch.Allowances {
			by[a.Filter.Parts[0].Method] = a
			if a.Err == nil && a.Labels > most {
				most, kept = a.Labels, i
			}
			if a.Err == nil && c.expected > 0 && a.Fits != (c.expected <= a.Labels) {
				t.Errorf("%s: %v: %d expected labels fit %v, but it allows %d", c.name, a.Filter, c.expected, a.Fits, a.Labels)
			}
		}
		if kept < 0 || ch.Filter.String() != ch.Allowances[kept].Filter.String() {
			t.Errorf("%s: kept %v of %+v, want the first that allows the most", c.name, ch.Filter, ch.Allowances)
			continue
		}
		z, s := by[accountant.ZCDPFilter], by[accountant.Simple]
		if s.Err != nil || s.Labels != c.simple {
			t.Errorf("%s: simple allows %d labels (%v), want %d", c.name, s.Labels, s.Err, c.simple)
		}
		// The zCDP filter's candidate has simple composition of pure
		// points beside it: it allows the more of the two.
		basic := 0
		if c.step.Delta == 0 {
			basic = c.simple
		}
		switch {
		case c.zcdp < 0 && z.Err == nil:
			t.Errorf("%s: the zCDP filter allows %d labels, want it refused", c.name, z.Labels)
		case c.zcdp >= 0 && (z.Err != nil || z.Labels != max(c.zcdp, basic) || c.rho > 0 && c.zcdp >= basic && !zcdp(z.Labels, c.rho, c.budget)):
			t.Errorf("%s: the zCDP filter allows %d labels (%v), want %d", c.name, z.Labels, z.Err, max(c.zcdp, basic))
		}
		if most < max(c.simple, c.zcdp) {
			t.Errorf("%s: the filter kept allows %d, fewer than %d", c.name, most, max(c.simple, c.zcdp))
		}
		if c.simpleEps > 0 && (math.Abs(s.Total.Eps-c.simpleEps) > 1e-12 || s.Total.Delta != 0 || !s.Fits) {
			t.Errorf("%s: totals of %d labels: simple %v; want %g", c.name, c.expected, s.Total, c.simpleEps)
		}
	}
	if _, err := ChooseFilter(nil, oneVote, b3, accountant.Spend{}, 0); err == nil {
		t.Error("no labels declared: no error")
	}
	for _, c := range []struct {
		budget   accountant.Budget
		expected int
		param    string
	}{{b3, -1, "queries"}, {b3, 1 << 62, "queries"}, {accountant.Budget{Guarantee: accountant.Guarantee{Delta: 1e-5}}, 4, "budget eps"}, {accountant.Budget{Guarantee: accountant.Guarantee{Eps: 3, Delta: 1}}, 4, "budget delta"}, {accountant.Budget{Guarantee: accountant.Guarantee{Eps: 3, Delta: 0.9}}, 4, "budget delta"}} {
		var pe *param.Error
		if _, err := ChooseFilter(nil, oneVote, c.budget, pure(0.2), c.expected); !errors.As(err, &pe) || pe.Name != c.param {
			t.Errorf("budget %v, %d labels expected: %v, want a ParamError on %s", c.budget, c.expected, err, c.param)
		}
	}
}

// TestFilterBitOfGaussian: a bit computed from Gaussian noise (two-class
// GNMax, an accountant.OneBitSpend with its noise) is charged to a zCDP
// ledger by its noise: as many queries as the noise's own description,
// recorded as that noise.
func TestFilterBitOfGaussian(t *testing.T) {
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-5}}
	noise := accountant.Spend{Kind: accountant.GaussianSpend, Guarantee: accountant.Guarantee{Eps: 0.5, Delta: 1e-5}, Discrete: true,
		Gaussian: []accountant.GaussianPart{{Sigma: 40, Coords: 2}}}
	bit := noise
	bit.Kind, bit.Bits = accountant.OneBitSpend, []accountant.BitPair{{P: 0.52, Q: 0.48}}
	var counts []int
	for _, s := range []accountant.Spend{noise, bit} {
		path, b := newOneVoteLedger(t, budget)
		l, allowed, err := openRun(ctx, book, path, "gnmax", b, s, -1)
		if err != nil {
			t.Fatal(err)
		}
		counts = append(counts, allowed)
		if err := l.Reserve(ctx, 1); err != nil {
			t.Fatal(err)
		}
		l.Settle(ctx, 1)
		var kinds []accountant.SpendKind
		if err := l.Runs(ctx, func(r Spend) error { kinds = append(kinds, r.Kind); return nil }); err != nil {
			t.Fatal(err)
		}
		l.Close()
		if len(kinds) == 0 || kinds[len(kinds)-1] != accountant.GaussianSpend {
			t.Errorf("%v: recorded as %v", s.Kind, kinds)
		}
	}
	if counts[0] < 1 || counts[1] != counts[0] {
		t.Errorf("the zCDP ledger allows %d queries of the noise, %d of its bit", counts[0], counts[1])
	}
}

// TestAllowanceBeyondCount: a ledger whose budget fits more labels than
// the accountant counts (issue 55: GNMax at σ2 = 1e9 by the zCDP filter)
// releases and reports accountant.CountLimit left, before and after a
// run, where it failed at 2^50; a release asking for fewer gets them.
func TestAllowanceBeyondCount(t *testing.T) {
	path, b := newOneVoteLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 3, Delta: 1e-5}})
	for _, limit := range []int{-1, 100} {
		l, allowed, err := openRun(ctx, book, path, "gnmax", b, gnmax1e9, limit)
		want := limit
		if limit < 0 {
			want = accountant.CountLimit
		}
		if err != nil || allowed != want {
			t.Fatalf("limit %d: allowed %d, %v; want %d", limit, allowed, err, want)
		}
		if err := l.Reserve(ctx, 20); err != nil {
			t.Fatal(err)
		}
		l.Settle(ctx, 20)
		st, err := l.BalanceFor(gnmax1e9)
		if err != nil || st.QueriesLeft == nil || *st.QueriesLeft != accountant.CountLimit {
			t.Errorf("limit %d: status %+v, %v; want %d left", limit, st, err, accountant.CountLimit)
		}
		l.Close()
	}
}
