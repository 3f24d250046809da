package ledger

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
)

// rrDelta is the exact δ at eps of k-fold randomized response of ε0 (a pure
// step's dominating pair), by the binomial sum of Kairouz, Oh and
// Viswanath 2015, Thm 3.3, in 256-bit arithmetic: Σ over i with
// (k-2i)ε0 > eps of C(k,i)(e^((k-i)ε0) - e^eps·e^(iε0)) / (1+e^ε0)^k. It
// shares no code with the accountant.
func rrDelta(k int, e0, eps float64) float64 {
	exp := func(x float64) *big.Float { return new(big.Float).SetPrec(256).SetFloat64(math.Exp(x)) }
	sum := new(big.Float).SetPrec(256)
	c := new(big.Int).SetInt64(1)
	for i := 0; i <= k; i++ {
		if i > 0 {
			c.Mul(c, big.NewInt(int64(k-i+1)))
			c.Div(c, big.NewInt(int64(i)))
		}
		if float64(k-2*i)*e0 <= eps {
			break
		}
		term := new(big.Float).SetPrec(256).Sub(exp(float64(k-i)*e0), new(big.Float).Mul(exp(eps), exp(float64(i)*e0)))
		sum.Add(sum, term.Mul(term, new(big.Float).SetInt(c)))
	}
	den := new(big.Float).SetPrec(256).SetFloat64(1)
	for range k {
		den.Mul(den, new(big.Float).SetPrec(256).SetFloat64(1+math.Exp(e0)))
	}
	d, _ := sum.Quo(sum, den).Float64()
	return d
}

// rrCount is the most steps of randomized response of e0 whose exact
// composition meets budget (rrDelta).
func rrCount(e0 float64, budget accountant.Budget) int {
	k := 0
	for rrDelta(k+1, e0, budget.Eps) <= budget.Delta {
		k++
	}
	return k
}

// TestDeclaredUse: a ledger whose use is declared (pure labels of ε0: a
// step whose dominating pair is randomized response's) allows, released
// in batches, as many labels as their exact composition fits, at least
// 99% of the independent count and never more; a release with other
// settings is refused naming the use, as is one out of a schedule's
// order; the total to publish is that of the whole use, at the ledger's δ.
func TestDeclaredUse(t *testing.T) {
	pure := func(e float64) accountant.Spend { return accountant.ApproxStep(accountant.Guarantee{Eps: e}) }
	for _, c := range []struct {
		name   string
		eps    float64
		budget accountant.Budget
	}{
		{"0.2 at (4, 1e-6)", 0.2, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 4, Delta: 1e-6}}},
		{"0.1 at (1, 1e-12)", 0.1, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1, Delta: 1e-12}}},
		{"0.5 at (8, 1e-8)", 0.5, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 8, Delta: 1e-8}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := rrCount(c.eps, c.budget)
			b := unique(oneVote)
			h, err := NewUseHeader(ctx, nil, b, c.budget, 1e-5, []UseRun{{Mechanism: "darrm-one-vote", Step: pure(c.eps)}})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "use.ledger")
			if _, err := book.create(ctx, path, h, false); err != nil {
				t.Fatal(err)
			}
			released := 0
			for batch := 0; ; batch++ {
				l, allowed, err := openRun(ctx, book, path, "darrm-one-vote", b, pure(c.eps), 7)
				if err != nil {
					t.Fatal(err)
				}
				if allowed == 0 {
					if err := l.Reserve(ctx, 1); !errors.Is(err, errBudget) {
						t.Errorf("a label past the use: %v, want the budget's refusal", err)
					}
					l.Close()
					break
				}
				if err := l.Reserve(ctx, allowed); err != nil {
					t.Fatal(err)
				}
				l.Settle(ctx, allowed)
				l.Close()
				released += allowed
			}
			t.Logf("released %d in batches, the exact composition fits %d", released, want)
			if released > want || float64(released) < 0.99*float64(want) {
				t.Errorf("released %d in batches, the exact composition fits %d", released, want)
			}
			l, err := book.readOnly(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			bal, err := l.Balance()
			l.Close()
			if err != nil || !bal.Publish.Guarantee.Within(c.budget.Guarantee) || bal.Publish.DeltaFrom != accountant.LedgerDelta ||
				rrDelta(released, c.eps, bal.Publish.Guarantee.Eps) > c.budget.Delta*(1+1e-9) {
				t.Errorf("to publish %+v (%v): want within %v, the exact composition's of %d labels at the ledger's delta", bal.Publish, err, c.budget, released)
			}
		})
	}

	// Other settings, and a schedule's runs out of order, are refused.
	b := unique(oneVote)
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 4, Delta: 1e-6}}
	h, err := NewUseHeader(ctx, nil, b, budget, 1e-5, []UseRun{{Mechanism: "darrm-one-vote", Step: pure(0.3), Labels: 5}, {Mechanism: "darrm-one-vote", Step: pure(0.5)}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "schedule.ledger")
	if _, err := book.create(ctx, path, h, false); err != nil {
		t.Fatal(err)
	}
	var ue *useError
	for _, s := range []accountant.Spend{pure(0.5), pure(0.31)} {
		if _, _, err := openRun(ctx, book, path, "darrm-one-vote", b, s, -1); !errors.As(err, &ue) || ue.Index != 0 {
			t.Errorf("labels of %v before the first run's: %v, want a *useError naming run 1", s.Guarantee, err)
		}
	}
	l, allowed, err := openRun(ctx, book, path, "darrm-one-vote", b, pure(0.3), -1)
	if err != nil || allowed != 5 {
		t.Fatalf("the first run: %d allowed (%v), want 5", allowed, err)
	}
	if err := l.Reserve(ctx, 6); !errors.Is(err, errBudget) {
		t.Errorf("6 labels of a run of 5: %v", err)
	}
	l.Reserve(ctx, 5)
	l.Settle(ctx, 5)
	l.Close()
	if _, _, err := openRun(ctx, book, path, "darrm-one-vote", b, pure(0.3), -1); !errors.As(err, &ue) || ue.Index != 1 {
		t.Errorf("the first run's labels after it: %v, want a *useError naming run 2", err)
	}
	l, allowed, err = openRun(ctx, book, path, "darrm-one-vote", b, pure(0.5), -1)
	if err != nil || allowed != h.Use[1].Labels || allowed < 1 {
		t.Fatalf("the second run: %d allowed (%v), want %d", allowed, err, h.Use[1].Labels)
	}
	l.Close()
}

// TestDeclaredUseShares: a declared use of N labels gives each analyst
// floor(f·N) of them (Header.ShareAllows), released in batches and not
// one more (a refusal naming the share); an analyst without a share is
// refused; each analyst's spend is the exact composition of their labels
// at the budget's δ, within their share's; the total to publish stays the
// whole use's.
func TestDeclaredUseShares(t *testing.T) {
	pure := func(e float64) accountant.Spend { return accountant.ApproxStep(accountant.Guarantee{Eps: e}) }
	for _, c := range []struct {
		name   string
		eps    float64
		budget accountant.Budget
		shares map[string]float64
	}{
		{"0.2 at (4, 1e-6)", 0.2, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 4, Delta: 1e-6}}, map[string]float64{"alice": 0.4, "bob": 0.6}},
		{"0.1 at (1, 1e-12)", 0.1, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1, Delta: 1e-12}}, map[string]float64{"alice": 0.29, "bob": 0.71}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := unique(oneVote)
			h, err := NewUseHeader(ctx, nil, b, c.budget, 1e-5, []UseRun{{Mechanism: "darrm-one-vote", Step: pure(c.eps)}})
			if err != nil {
				t.Fatal(err)
			}
			n := h.Use[0].Labels
			h.Shares = c.shares
			path := filepath.Join(t.TempDir(), "use.ledger")
			if _, err := book.create(ctx, path, h, false); err != nil {
				t.Fatal(err)
			}
			// f·N's floor, computed apart: the shares are decimals of
			// two digits.
			want := map[string]int{}
			for name, f := range c.shares {
				want[name] = int(math.Round(f*100)) * n / 100
				if got, err := h.ShareAllows(nil, pure(c.eps), f); err != nil || got != want[name] {
					t.Errorf("ShareAllows(%v) of %d labels: %d, %v; want %d", f, n, got, err, want[name])
				}
			}
			for _, name := range []string{"alice", "bob"} {
				bk := book
				bk.Analyst = name
				released := 0
				for {
					l, allowed, err := openRun(ctx, bk, path, "darrm-one-vote", b, pure(c.eps), 7)
					if err != nil {
						t.Fatal(err)
					}
					if allowed == 0 {
						err := l.Reserve(ctx, 1)
						if !errors.Is(err, errBudget) || !strings.Contains(err.Error(), fmt.Sprintf("%q's share %v of the %d labels", name, c.shares[name], n)) {
							t.Errorf("%s: a label past her share: %v, want a refusal naming the share", name, err)
						}
						st, err := l.BalanceFor(pure(c.eps))
						if err != nil || !st.ShareBound || st.ShareLabels != want[name] || st.AnalystSpent == nil || *st.AnalystSpent != *st.Share {
							t.Errorf("%s's status at her share's end: %+v, %v; want her share of %d labels bound her, spent whole", name, st, err, want[name])
						}
						l.Close()
						break
					}
					if err := l.Reserve(ctx, allowed); err != nil {
						t.Fatal(err)
					}
					l.Settle(ctx, allowed)
					l.Close()
					released += allowed
				}
				if released != want[name] {
					t.Errorf("%s released %d of a use of %d with a share %v, want %d", name, released, n, c.shares[name], want[name])
				}
			}
			bk := book
			bk.Analyst = "carol"
			var se *shareError
			if _, _, err := openRun(ctx, bk, path, "darrm-one-vote", b, pure(c.eps), -1); !errors.As(err, &se) {
				t.Errorf("carol, without a share: %v, want a *shareError", err)
			}
			l, err := book.readOnly(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			sums, err := l.Analysts(ctx)
			if err != nil || len(sums) != 2 {
				t.Fatalf("Analysts: %+v, %v", sums, err)
			}
			for _, a := range sums {
				k := want[a.Analyst]
				if a.Labels != k || a.ShareLabels != k || a.ShareBudget == nil || *a.ShareBudget != a.Spent || a.Spent.Delta != c.budget.Delta ||
					rrDelta(k, c.eps, a.Spent.Eps) > c.budget.Delta*(1+1e-9) || rrDelta(k, c.eps, a.Spent.Eps*(1-1e-6)) <= c.budget.Delta {
					t.Errorf("%s: %+v; want %d labels, their exact composition at delta %v, her whole share", a.Analyst, a, k, c.budget.Delta)
				}
			}
			bal, err := l.Balance()
			if whole, _ := h.Publish(nil); err != nil || bal.Publish.Guarantee != whole.Guarantee {
				t.Errorf("to publish: %+v, %v; want the whole use's %v", bal.Publish, err, whole.Guarantee)
			}
		})
	}
}

// TestScheduleShares: on a declared schedule, with shares or without, an
// analyst's spend is the exact composition of the labels they released,
// of whichever run: bob's labels of the cheaper first run, alice's of
// the second, each composed as the pure steps they are (rrDelta), not as
// the schedule's first labels.
func TestScheduleShares(t *testing.T) {
	for _, shares := range []map[string]float64{{"alice": 0.5, "bob": 0.5}, nil} {
		t.Run(fmt.Sprint("shares ", shares), func(t *testing.T) { testScheduleShares(t, shares) })
	}
}

// testScheduleShares is TestScheduleShares on a ledger that gives shares
// (nil: none).
func testScheduleShares(t *testing.T, shares map[string]float64) {
	pure := func(e float64) accountant.Spend { return accountant.ApproxStep(accountant.Guarantee{Eps: e}) }
	b := unique(oneVote)
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 8, Delta: 1e-6}}
	h, err := NewUseHeader(ctx, nil, b, budget, 1e-5, []UseRun{{Mechanism: "darrm-one-vote", Step: pure(0.2), Labels: 6}, {Mechanism: "darrm-one-vote", Step: pure(0.5)}})
	if err != nil {
		t.Fatal(err)
	}
	h.Shares = shares
	if n := useSteps(h.Use); n < 12 {
		t.Fatalf("the schedule declares %d labels: the test needs 12, so that bob's half holds the first run's 6", n)
	}
	path := filepath.Join(t.TempDir(), "schedule.ledger")
	if _, err := book.create(ctx, path, h, false); err != nil {
		t.Fatal(err)
	}
	release := func(name string, step accountant.Spend, n int) {
		t.Helper()
		bk := book
		bk.Analyst = name
		l, allowed, err := openRun(ctx, bk, path, "darrm-one-vote", b, step, n)
		if err != nil || allowed != n {
			t.Fatalf("%s: %d allowed (%v), want %d", name, allowed, err, n)
		}
		defer l.Close()
		if err := l.Reserve(ctx, n); err != nil {
			t.Fatal(err)
		}
		if err := l.Settle(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	release("bob", pure(0.2), 6)
	alice := min(4, h.Use[1].Labels)
	release("alice", pure(0.5), alice)
	l, err := book.readOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	sums, err := l.Analysts(ctx)
	if err != nil || len(sums) != 2 {
		t.Fatalf("Analysts: %+v, %v", sums, err)
	}
	for i, c := range []struct {
		name   string
		labels int
		eps    float64
	}{{"bob", 6, 0.2}, {"alice", alice, 0.5}} {
		a := sums[i]
		if a.Analyst != c.name || a.Labels != c.labels || rrDelta(c.labels, c.eps, a.Spent.Eps) > budget.Delta*(1+1e-9) || rrDelta(c.labels, c.eps, a.Spent.Eps*(1-1e-6)) <= budget.Delta {
			t.Errorf("%s: %+v; want %d labels of %v composed exactly at delta %v", c.name, a, c.labels, c.eps, budget.Delta)
		}
	}
}

// TestShareLabels: a share of a declared use's labels is the floor of
// the share written in decimal times the labels, though the double
// nearest the share times them falls below it.
func TestShareLabels(t *testing.T) {
	for _, c := range []struct {
		f         float64
		n, labels int
	}{{0.29, 100, 29}, {0.4, 2500, 1000}, {0.4, 2502, 1000}, {0.57, 100, 57}, {1, 79, 79}, {0.3, 3, 0}, {0.01, 99, 0}} {
		if got := shareLabels(c.f, c.n); got != c.labels {
			t.Errorf("a share %v of %d labels: %d, want %d", c.f, c.n, got, c.labels)
		}
	}
}

// TestDeclaredOneBitUseDominating: a declared use of one-bit labels is
// kept in the header by its dominating pairs, as a spend line keeps them:
// a step of 40,000 pairs (randomized response at ε = 0.4 and pairs it
// dominates, some 2.4 MB listed whole) makes a ledger that opens, where
// its header was longer than a ledger's line may be and the ledger
// written was refused; its runs match the step given with every pair;
// and a header written before, with every pair, still matches them.
func TestDeclaredOneBitUseDominating(t *testing.T) {
	const e0 = 0.4
	hi := math.Exp(e0) / (1 + math.Exp(e0))
	rng := rand.New(rand.NewPCG(13, 40000))
	bits := []accountant.BitPair{{P: hi, Q: 1 - hi}}
	for len(bits) < 40000 {
		p := 0.5 + (hi-0.5)*rng.Float64()
		q := 1 - p + (2*p-1)*rng.Float64() // q in [1-p, p]: dominated by RR's pair
		bits = append(bits, accountant.BitPair{P: p, Q: q})
	}
	step := accountant.Spend{Kind: accountant.OneBitSpend, Guarantee: accountant.Guarantee{Eps: e0}, Bits: bits}
	if err := step.Check(); err != nil {
		t.Fatal(err)
	}
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 4, Delta: 1e-6}}
	for _, c := range []struct {
		name  string
		whole bool // the header as written before: every pair
	}{{"dominating", false}, {"every pair", true}} {
		t.Run(c.name, func(t *testing.T) {
			b := unique(oneVote)
			h, err := NewUseHeader(ctx, nil, b, budget, 1e-5, []UseRun{{Mechanism: "darrm-one-vote", Step: step, Labels: 9}})
			if err != nil {
				t.Fatal(err)
			}
			if n := len(h.Use[0].Step.Bits); n > 100 {
				t.Fatalf("the header keeps %d pairs of the step's %d, want its dominating few", n, len(bits))
			}
			if c.whole {
				h.Use[0].Step.Bits = bits[:5000] // within a line, with the pair that dominates
			}
			path := filepath.Join(t.TempDir(), "use.ledger")
			if _, err := book.create(ctx, path, h, false); err != nil {
				t.Fatal(err)
			}
			// Randomized response at ε = 0.3 with the same guarantee: other
			// dominating pairs, another mechanism.
			lo := math.Exp(0.3) / (1 + math.Exp(0.3))
			other := step
			other.Bits = []accountant.BitPair{{P: lo, Q: 1 - lo}}
			// Its message says what tells the two apart, which no digit
			// of their guarantees shows.
			if _, _, err := openRun(ctx, book, path, "darrm-one-vote", b, other, -1); !errors.As(err, new(*useError)) || !strings.Contains(err.Error(), "what the digits shown do not say") {
				t.Errorf("a run of another step: %v, want a *useError", err)
			}
			shuffled := step
			shuffled.Bits = slices.Clone(bits)
			rng.Shuffle(len(shuffled.Bits), func(i, j int) { shuffled.Bits[i], shuffled.Bits[j] = shuffled.Bits[j], shuffled.Bits[i] })
			l, allowed, err := openRun(ctx, book, path, "darrm-one-vote", b, shuffled, -1)
			if err != nil || allowed != 9 {
				t.Fatalf("a run of the step given with every pair: %d allowed (%v), want 9", allowed, err)
			}
			if err := l.Reserve(ctx, 9); err != nil {
				t.Fatal(err)
			}
			l.Settle(ctx, 9)
			l.Close()
			r, err := book.readOnly(ctx, path)
			if err != nil {
				t.Fatalf("the ledger after its run: %v", err)
			}
			r.Close()
		})
	}
}

// TestDeclaredUseAnotherBuild: a ledger whose use is declared holds a
// release whose step another build of darrm computed, its pairs a few
// units in the last place away and those near the diagonal further (two
// builds' DaRRM at K = 11 differed by 5e-12 relative there, and one kept
// a pair the other dropped): the header declares it with the margin
// (UseRun.Margin), composes it widened, and the release runs. A header
// written before the margin holds the same build's step, and refuses
// another build's that is less private by a unit in the last place.
func TestDeclaredUseAnotherBuild(t *testing.T) {
	step := accountant.Spend{Kind: accountant.OneBitSpend, Guarantee: accountant.Guarantee{Eps: 0.6, Delta: 6e-5},
		Bits: []accountant.BitPair{{P: 0.4397637001073, Q: 0.3172019002753}, {P: 0.17980960374268606, Q: 0.15782599447285142}, {P: 4.022338018277364e-12, Q: 4.0223380180558285e-12}}}
	other := step
	other.Bits = []accountant.BitPair{
		{P: math.Nextafter(0.4397637001073, 1), Q: math.Nextafter(0.3172019002753, 0)},
		{P: 0.17980960374268606, Q: 0.15782599447285142},
		{P: 4.022338018257226e-12, Q: 4.02233801803569e-12},
		{P: 4.022338018237088e-12, Q: 4.022338018015552e-12},
	}
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 8, Delta: 1e-3}}
	for _, c := range []struct {
		name   string
		margin bool
		ok     bool
	}{{"declared with the margin", true, true}, {"declared before the margin", false, false}} {
		t.Run(c.name, func(t *testing.T) {
			b := unique(oneVote)
			h, err := NewUseHeader(ctx, nil, b, budget, 1e-5, []UseRun{{Mechanism: "darrm-one-vote", Step: step, Labels: 9}})
			if err != nil {
				t.Fatal(err)
			}
			if !h.Use[0].Margin {
				t.Fatal("a new header's run is declared without the margin")
			}
			h.Use[0].Margin = c.margin
			path := filepath.Join(t.TempDir(), "use.ledger")
			if _, err := book.create(ctx, path, h, false); err != nil {
				t.Fatal(err)
			}
			l, allowed, err := openRun(ctx, book, path, "darrm-one-vote", b, step, -1)
			if err != nil || allowed != 9 {
				t.Fatalf("the step declared: %d allowed (%v), want 9", allowed, err)
			}
			l.Close()
			l, allowed, err = openRun(ctx, book, path, "darrm-one-vote", b, other, -1)
			if c.ok && (err != nil || allowed != 9) {
				t.Errorf("another build's step: %d allowed (%v), want 9", allowed, err)
			}
			if !c.ok && !errors.As(err, new(*useError)) {
				t.Errorf("another build's step, less private by an ulp: %d allowed (%v), want a *useError", allowed, err)
			}
			if l != nil {
				l.Close()
			}
		})
	}
}

// TestDeclaredUseForgedLines: on a ledger whose use is declared, whose
// total to publish composes the use's steps and counts alone, a
// well-formed line with its own hash that no release writes is damage
// for verify and for a release: labels of other settings (0.9 where 0.3
// is declared), of a later run of the schedule before its turn, of a run
// after its count (where lines of the same settings were found of that
// run: checkUse holds them to the run whose turn it was), or more than
// the run whose turn it is holds. Read as the steps of the use,
// each published less than its lines spent (the labels past the use's
// end showed a spend of 0).
func TestDeclaredUseForgedLines(t *testing.T) {
	pure := func(e float64) accountant.Spend { return accountant.ApproxStep(accountant.Guarantee{Eps: e}) }
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 4, Delta: 1e-6}}
	for _, c := range []struct {
		name     string
		released int
		eps      float64
		labels   int
		reason   string
	}{
		{"other settings", 2, 0.9, 2, "are not of its run 1"},
		{"the next run before its turn", 2, 0.5, 2, "are not of its run 1"},
		{"a run after its count", 5, 0.3, 2, "are not of its run 2"},
		{"past the run's count", 2, 0.3, 4, "go past the end of its run 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := unique(oneVote)
			h, err := NewUseHeader(ctx, nil, b, budget, 1e-5, []UseRun{{Mechanism: "darrm-one-vote", Step: pure(0.3), Labels: 5}, {Mechanism: "darrm-one-vote", Step: pure(0.5)}})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "use.ledger")
			if _, err := book.create(ctx, path, h, false); err != nil {
				t.Fatal(err)
			}
			l, _, err := openRun(ctx, book, path, "darrm-one-vote", b, pure(0.3), c.released)
			if err != nil {
				t.Fatal(err)
			}
			l.Reserve(ctx, c.released)
			l.Settle(ctx, c.released)
			l.Close()
			spends, spent := spendLines(t, path)
			forged := spends[len(spends)-1]
			forged.Run, forged.Eps, forged.Queries, forged.Prior = "0123456789abcdef", c.eps, c.labels, &spent
			appendSpend(t, path, forged)
			n := len(spends) + 2
			corruptAt(t, "verify", readErr(path), n, c.reason)
			_, _, err = openRun(ctx, book, path, "darrm-one-vote", b, pure(0.3), -1)
			corruptAt(t, "release", err, n, c.reason)
		})
	}

	// A one-bit line without its pairs, as a darrm wrote before the lists
	// were kept, first on the ledger: its guarantee must be within the
	// declared step's.
	hi := math.Exp(0.4) / (1 + math.Exp(0.4))
	rr := accountant.Spend{Kind: accountant.OneBitSpend, Guarantee: accountant.Guarantee{Eps: 0.4}, Bits: []accountant.BitPair{{P: hi, Q: 1 - hi}}}
	h, err := NewUseHeader(ctx, nil, unique(oneVote), budget, 1e-5, []UseRun{{Mechanism: "darrm-one-vote", Step: rr, Labels: 9}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "unlisted.ledger")
	if _, err := book.create(ctx, path, h, false); err != nil {
		t.Fatal(err)
	}
	appendSpend(t, path, Spend{Run: "0123456789abcdef", Mechanism: "darrm-one-vote", Eps: 2, BitsSHA256: bitsDigest(rr.Bits), Queries: 2, Final: true, Prior: &accountant.Sequence{}})
	corruptAt(t, "verify, a line without its pairs", readErr(path), 2, "are not of its run 1")
}
