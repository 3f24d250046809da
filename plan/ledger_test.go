package plan

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// TestPlanForLedger: Confident-GNMax planned for 300 queries on a new
// ledger of (2, 1e-5) (ForLedger) is allowed them by the ledger that
// ledger init makes for that use, and a ledger created so releases all
// 300 private queries. On a ledger open to any use, held by the
// zcdp-filter, the parameters planned for one run are allowed fewer and a
// release of 300 with them stops short; on a ledger whose use is declared
// (the default of ledger init --mechanism), composed exactly as one run,
// the run's parameters release all 300 too. Under -short 100 queries,
// where each of these still holds, at a third of the CPU.
func TestPlanForLedger(t *testing.T) {
	ctx := context.Background()
	queries := shortOr(100, 300)
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-5}}
	zcdp := accountant.ZCDPFilter
	for _, filter := range []*accountant.Method{&zcdp, nil} {
		name := "declared use"
		if filter != nil {
			name = filter.String()
		}
		t.Run(name, func(t *testing.T) {
			r := request(ensemble.ConfidentGNMax{}.Name(), votefile.ManyClasses, constraints.Problem{K: 250, TargetDelta: 1e-5}, 10, budget.Eps, budget.Delta)
			r.Filter = filter
			proxy := pateVotes(200, 250, 10, 0.05, 1)
			r.ratios = []float64{1.5, 4}
			r.For = ForLedger
			forLedger, err := confidentGNMax(ctx, r, queries, proxy)
			if err != nil {
				t.Fatal(err)
			}
			r.For = ForRun
			forRun, err := confidentGNMax(ctx, r, queries, proxy)
			if err != nil {
				t.Fatal(err)
			}
			if c := forLedger.Count; c.Ledger < queries || forLedger.NeighbourRun >= queries {
				t.Errorf("planned for a ledger: it allows %d by %v, the neighbour %d: want >= %d, and < %d", c.Ledger, c.Filter, forLedger.NeighbourRun, queries, queries)
			}
			runFits := filter == nil
			if c := forRun.Count; c.Run < queries || (c.Ledger >= queries) != runFits {
				t.Errorf("planned for a run: %d in a run, %d on a ledger: want >= %d, and on the ledger >= %d: %v", c.Run, c.Ledger, queries, queries, runFits)
			}
			private := pateVotes(queries, 250, 10, 0, 2)
			for _, tc := range []struct {
				name string
				pl   Plan
				all  bool
			}{{"for a ledger", forLedger, true}, {"for a run", forRun, runFits}} {
				t.Run(tc.name, func(t *testing.T) {
					res, err := releaseOnLedger(ctx, t.TempDir(), tc.pl, private, budget, "")
					if tc.all && (err != nil || res.Released != queries) {
						t.Errorf("released %d of %d (%v): want all", res.Released, queries, err)
					}
					if !tc.all && (err != nil || res.StoppedByBudget == 0 || res.Released >= queries) {
						t.Errorf("released %d of %d (%v): want the ledger to stop it short", res.Released, queries, err)
					}
				})
			}
		})
	}
}

// releaseOnLedger creates a ledger with budget, bound to the votes'
// ensemble, as darrm ledger init makes it for the plan's labels declared
// (their use, or the plan's filter when it names one), and releases the
// votes with the plan's mechanism on it; with an analyst, the ledger
// gives that analyst the plan's share, and the analyst releases.
func releaseOnLedger(ctx context.Context, dir string, pl Plan, votes Proxy, budget accountant.Budget, analyst string) (ensemble.ReleaseResult, error) {
	var b strings.Builder
	fmt.Fprintf(&b, `# {"darrm-votes":1,"ensemble":"plan-ledger","K":%d,"classes":%d,"layout":"counts","relation":"one-vote","kind":"fixed","partition":"keyed-hash","teachers":[{"count":%d,"source":{"method":"none"}}]}`+"\n", votes.K, votes.Classes, votes.K)
	for _, c := range votes.Counts {
		b.WriteString(strings.Trim(strings.Join(strings.Fields(fmt.Sprint(c)), ","), "[]") + "\n")
	}
	in, err := votefile.Open("votes.csv", votefile.Options{In: strings.NewReader(b.String())})
	if err != nil {
		return ensemble.ReleaseResult{}, err
	}
	bind, err := provenance.Check(in.Meta(), provenance.Stated{})
	if err != nil {
		return ensemble.ReleaseResult{}, err
	}
	agg, _, err := pl.Request.Aggregator(ctx)
	if err != nil {
		return ensemble.ReleaseResult{}, err
	}
	priv := agg.Privacy()
	h := ledger.NewHeader(bind, budget, accountant.DefaultDeltaPrime, accountant.Filter{})
	if pl.Request.Filter != nil {
		f, err := ledger.NamedFilter(nil, bind, budget, &priv.Spend, *pl.Request.Filter)
		if err != nil {
			return ensemble.ReleaseResult{}, err
		}
		h = ledger.NewHeader(bind, budget, accountant.DefaultDeltaPrime, f)
	} else {
		run := ledger.UseRun{Mechanism: pl.Request.Mechanism.Name(), Step: priv.Spend, Profile: priv.Profile}
		if h, err = ledger.NewUseHeader(ctx, nil, bind, budget, accountant.DefaultDeltaPrime, []ledger.UseRun{run}); err != nil {
			return ensemble.ReleaseResult{}, err
		}
	}
	state := ledger.Options{StateDir: filepath.Join(dir, "state"), Analyst: analyst}
	if analyst != "" {
		h.Shares = map[string]float64{analyst: pl.Request.Share}
	}
	led := filepath.Join(dir, "votes.ledger")
	if _, err := ledger.Create(ctx, led, h, state); err != nil {
		return ensemble.ReleaseResult{}, err
	}
	l, err := ledger.Open(ctx, led, state)
	if err != nil {
		return ensemble.ReleaseResult{}, err
	}
	defer l.Close()
	out, err := ensemble.Release(ctx, ensemble.ReleaseSpec{
		Votes:      in,
		Mechanism:  pl.Request.Mechanism,
		Teachers:   pl.Request.Teachers,
		DeltaPrime: pl.Request.DeltaPrime,
		Ledger:     l,
		Sink:       ensemble.LabelSink{Path: filepath.Join(dir, "labels.csv"), Format: votefile.FormatCSV},
		Random:     noise.NewSeededSource(1),
		Options:    ensemble.ReleaseOptions{Experiment: true},
	})
	if _, serr := os.Stat(filepath.Join(dir, "labels.csv")); err == nil && serr != nil {
		return out.Result, serr
	}
	return out.Result, err
}

// TestPlanForShare: GNMax planned for 120 queries in a share 0.4 of a new
// ledger of (2, 1e-5), on a declared use and on a ledger open to any use,
// is allowed a count of 120 or more in the share (on the declared use,
// floor(0.4 N) of the N labels the use declares), and an analyst with
// that share releases exactly that count on the ledger made for it, the
// next label refused; the planned labels' spend is stated against the
// share's δ on the open ledger.
func TestPlanForShare(t *testing.T) {
	ctx := context.Background()
	const queries, share = 120, 0.4
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-5}}
	zcdp := accountant.ZCDPFilter
	for _, filter := range []*accountant.Method{nil, &zcdp} {
		name := "declared use"
		if filter != nil {
			name = filter.String()
		}
		t.Run(name, func(t *testing.T) {
			r := request(ensemble.GNMax{}.Name(), votefile.ManyClasses, constraints.Problem{K: 250, TargetDelta: 1e-5}, 10, budget.Eps, budget.Delta)
			r.For, r.Filter, r.Share = ForLedger, filter, share
			pl, err := parameters(ctx, r, queries)
			if err != nil {
				t.Fatal(err)
			}
			c := pl.Count
			t.Logf("sigma2 %v: %d in the share, %d in the ledger, the neighbour %d", pl.Value, c.Ledger, c.LedgerAll, pl.NeighbourRun)
			if c.Ledger < queries || c.LedgerAll <= c.Ledger || pl.NeighbourRun >= queries {
				t.Errorf("planned: %d in the share, %d in the ledger, the neighbour %d: want >= %d in the share, fewer than the ledger's, and fewer for the neighbour", c.Ledger, c.LedgerAll, pl.NeighbourRun, queries)
			}
			if want := int(share*10) * c.LedgerAll / 10; filter == nil && c.Ledger != want {
				t.Errorf("a share %v of a declared use of %d labels: %d, want %d", share, c.LedgerAll, c.Ledger, want)
			}
			if filter != nil && c.LedgerTotal.Delta > share*budget.Delta {
				t.Errorf("the planned labels spend %v: want it stated within the share's delta %v", c.LedgerTotal, share*budget.Delta)
			}
			res, err := releaseOnLedger(ctx, t.TempDir(), pl, pateVotes(c.Ledger+1, 250, 10, 0, 3), budget, "alice")
			if err != nil || res.StoppedByBudget != 1 || res.Released != c.Ledger {
				t.Errorf("alice released %d of %d (%v): want the %d of her share, and the next refused", res.Released, c.Ledger+1, err, c.Ledger)
			}
		})
	}
	r := request(ensemble.GNMax{}.Name(), votefile.ManyClasses, constraints.Problem{K: 250, TargetDelta: 1e-5}, 10, budget.Eps, budget.Delta)
	for _, c := range []struct {
		share float64
		to    Target
	}{{1.5, ForLedger}, {-0.1, ForLedger}, {0.4, ForRun}} {
		r.For, r.Share = c.to, c.share
		var pe *param.Error
		if _, err := parameters(ctx, r, queries); !errors.As(err, &pe) || pe.Name != "share" {
			t.Errorf("a share %v for a %v: %v, want a ParamError naming the share", c.share, c.to, err)
		}
	}
	// A share that is no fraction is refused by a count of no ledger too.
	for _, f := range []float64{math.NaN(), -1, 0, math.Inf(1), 1.5} {
		var pe *param.Error
		if _, err := (Count{}).ShareAllows(nil, f); !errors.As(err, &pe) || pe.Name != "share" {
			t.Errorf("ShareAllows(%v) of no ledger: %v, want a ParamError naming the share", f, err)
		}
	}
	// A target of no name was planned for.
	r.For, r.Share = Target(99), 0
	var se *param.SettingError
	if _, err := parameters(ctx, r, queries); !errors.As(err, &se) || se.Name != "For" {
		t.Errorf("For = Target(99): %v, want a SettingError naming For", err)
	}
}

// TestPlanForLedgerGDP: Confident-GNMax planned for 2,000 queries on a
// new ledger held by the gdp-filter finds a sigma2 at budgets where it
// once said that not even 2,000 fit: the ratio sigma1/sigma2 = 10 needs a
// sigma1 beyond what the filter certifies of discrete Gaussian noise
// (2048), which ended the plan where it should leave that ratio out. The
// plan is verified (its count on the ledger reaches 2,000, its neighbour's
// does not), and the Gaussian-DP filter, which composes Gaussian noise
// more tightly than the zCDP filter, allows a sigma2 at most the
// zcdp-filter's.
func TestPlanForLedgerGDP(t *testing.T) {
	if testing.Short() {
		t.Skip("six plans of 2,000 queries (about 6 s); -short runs TestPlanForLedgerGDPRatio")
	}
	const queries = 2000
	proxy := pateVotes(200, 250, 10, 0.05, 1)
	for _, eps := range []float64{0.8, 1.2, 1.5} {
		t.Run(fmt.Sprint(eps), func(t *testing.T) {
			sigma2 := map[accountant.Method]float64{}
			for _, filter := range []accountant.Method{accountant.GDPFilter, accountant.ZCDPFilter} {
				pl := planGDPCase(t, eps, filter, queries, proxy, []float64{1, 10})
				if pl.Count.Filter != filter || pl.Count.Ledger < queries {
					t.Fatalf("%v: the ledger allows %d by %v, want >= %d by %v", filter, pl.Count.Ledger, pl.Count.Filter, queries, filter)
				}
				g, _ := stepsOf(pl.Request)
				sigma2[filter] = g.Sigma2
			}
			t.Logf("(%v, 1e-5), %d queries: sigma2 %v by the gdp-filter, %v by the zcdp-filter", eps, queries, sigma2[accountant.GDPFilter], sigma2[accountant.ZCDPFilter])
			if sigma2[accountant.GDPFilter] > sigma2[accountant.ZCDPFilter] {
				t.Errorf("gdp-filter's sigma2 %v above the zcdp-filter's %v", sigma2[accountant.GDPFilter], sigma2[accountant.ZCDPFilter])
			}
		})
	}
}

// TestPlanForLedgerGDPRatio: under the gdp-filter a ratio whose sigma1
// the filter cannot certify is left out of a Confident-GNMax plan, not the
// end of it; with that ratio alone, the plan says why nothing fits.
func TestPlanForLedgerGDPRatio(t *testing.T) {
	proxy := pateVotes(200, 250, 10, 0.05, 1)
	pl := planGDPCase(t, 0.8, accountant.GDPFilter, 300, proxy, []float64{1, 30})
	if g, _ := stepsOf(pl.Request); g.Sigma1 != g.Sigma2 || pl.Count.Ledger < 300 {
		t.Errorf("sigma1 %v, sigma2 %v, %d allowed: want the ratio 1, >= 300", g.Sigma1, g.Sigma2, pl.Count.Ledger)
	}
	r := request(ensemble.ConfidentGNMax{}.Name(), votefile.ManyClasses, constraints.Problem{K: 250, TargetDelta: 1e-5}, 10, 0.8, 1e-5)
	gdp := accountant.GDPFilter
	r.For, r.Filter, r.ratios = ForLedger, &gdp, []float64{30}
	_, err := confidentGNMax(context.Background(), r, 300, proxy)
	var pe *param.Error
	if !errors.As(err, &pe) || pe.Name != "budget-eps" || !strings.Contains(pe.Rule, "on a new ledger") {
		t.Errorf("err %v, want a ParamError on budget-eps that names the ledger", err)
	}
}

// planGDPCase plans Confident-GNMax for queries on a new ledger of
// (eps, 1e-5) held by filter, at the given ratios.
func planGDPCase(t *testing.T, eps float64, filter accountant.Method, queries int, proxy Proxy, ratios []float64) Plan {
	t.Helper()
	r := request(ensemble.ConfidentGNMax{}.Name(), votefile.ManyClasses, constraints.Problem{K: 250, TargetDelta: 1e-5}, 10, eps, 1e-5)
	r.For, r.Filter, r.ratios = ForLedger, &filter, ratios
	pl, err := confidentGNMax(context.Background(), r, queries, proxy)
	if err != nil {
		t.Fatalf("(%v, 1e-5), %v: %v", eps, filter, err)
	}
	return pl
}

// TestPlanForLedgerNoFit: a plan for a ledger whose filter holds none of
// the queries at any value is a parameter error that names the ledger, on
// the flag that binds. Simple composition sums the per-query δ: 20 queries
// of GNMax, each (ε, 1e-5), exceed a budget δ of 1e-5 whatever σ2 and
// whatever budget ε, on budget-delta (it named budget-eps). RR's labels
// have a pure point, which a larger budget ε fits any number of: on
// budget-eps.
func TestPlanForLedgerNoFit(t *testing.T) {
	simple := accountant.Simple
	gnmax := request(ensemble.GNMax{}.Name(), votefile.ManyClasses, constraints.Problem{K: 250, TargetDelta: 1e-5}, 10, 2, 1e-5)
	rr := twoClass(Request{ReleaseSpec: ensemble.ReleaseSpec{Certificate: ensemble.Options{Memo: testMemo},
		Budget: &accountant.Budget{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-2}}}},
		ensemble.RR{}.Name(), constraints.Problem{K: 11, M: 3, Eps: 0.1, Delta: 1e-5}, false)
	for _, c := range []struct {
		name    string
		r       Request
		queries int
		flag    string
	}{
		{"gnmax", gnmax, 20, "budget-delta"},
		{"rr", rr, 2000, "budget-eps"},
	} {
		c.r.For, c.r.Filter = ForLedger, &simple
		_, err := parameters(context.Background(), c.r, c.queries)
		var pe *param.Error
		// Each query's δ, which --delta sets, is the other way to fit.
		if !errors.As(err, &pe) || pe.Name != c.flag || !strings.Contains(pe.Rule, "on a new ledger") || (c.flag == "budget-delta") != strings.Contains(pe.Rule, "--delta") {
			t.Errorf("%s: err %v, want a ParamError on %s that names the ledger", c.name, err, c.flag)
		}
	}
}

// TestTargetText: a target reads back from its text, run or ledger, and
// another name says which there are.
func TestTargetText(t *testing.T) {
	for _, want := range []Target{ForRun, ForLedger} {
		b, _ := want.MarshalText()
		var got Target
		if err := got.UnmarshalText(b); err != nil || got != want {
			t.Errorf("%v: %q reads back as %v (%v)", want, b, got, err)
		}
	}
	var got Target
	if err := got.UnmarshalText([]byte("Ledger")); err == nil || err.Error() != `"Ledger": must be run or ledger` {
		t.Errorf("Ledger: %v", err)
	}
}

// TestZCDPBudgetSubnormalDelta: the zCDP slope a budget starts a plan's
// search from is a finite number > 0 at a subnormal δ, where 1/δ
// overflowed and the slope was NaN, said as "--sigma2 = NaN".
func TestZCDPBudgetSubnormalDelta(t *testing.T) {
	for _, d := range []float64{1e-300, 1e-310, 1e-320, 5e-324} {
		if rho := zcdpBudget(accountant.Guarantee{Eps: 2, Delta: d}); !(rho > 0) || math.IsInf(rho, 1) {
			t.Errorf("delta %v: rho %v", d, rho)
		}
	}
}
