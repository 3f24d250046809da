package pate

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
)

// TestDataFreeSmooth: withDataFree sets the order 1 + 2(λ_I - 1) where
// conditions C5 and C6 hold, else the first of the orders below it that
// the rule tries where they do; β = 0.4/λ and σ_ss from the
// data-independent slope; and a parameter the caller fixed stays, the
// others following it (β from a fixed order, σ_ss from a fixed β).
func TestDataFreeSmooth(t *testing.T) {
	m := noisymax.Steps{Threshold: 200, Sigma1: 150, Sigma2: 40, Noise: noisymax.DiscreteNoise}
	slope := 640 * (1/(2*150.0*150) + 1/(40.0*40))
	for _, tc := range []struct {
		classes           int
		independent, want float64
	}{
		{10, 6.5, 12},
		{10, 3, 5},
		// C6 fails at 134 for C = 4: 1 + 133·2^{-k/2}, rounded down to a
		// quarter, first holds at k = 2.
		{4, 67.5, 34.25},
	} {
		p, err := SmoothParams{}.withDataFree(testMemo, orderEps{Order: tc.independent, RDP: slope * tc.independent}, m.Sigma2, m.Noise, tc.classes)
		if err != nil {
			t.Fatal(err)
		}
		beta := 0.4 / tc.want
		if p.Order != tc.want || p.Beta != beta || math.Abs(p.Sigma-math.Cbrt(128*math.Exp(2*beta)/slope)) > 1e-12*p.Sigma || p.FromVotes || !p.publishable() {
			t.Errorf("C = %d, lambda_I = %v: %+v, want order %v", tc.classes, tc.independent, p, tc.want)
		}
		if c5, c6 := smoothConditions(testMemo, m.Sigma2, tc.classes, p.Order, m.Noise); !c5 || !c6 {
			t.Errorf("C = %d: conditions fail at the rule's order %v", tc.classes, p.Order)
		}
	}
	indep := orderEps{Order: 6.5, RDP: slope * 6.5}
	for _, fixed := range []SmoothParams{{Order: 7}, {Beta: 0.1}, {Sigma: 30}, {Order: 7, Beta: 0.1, Sigma: 30}} {
		p, err := fixed.withDataFree(testMemo, indep, m.Sigma2, m.Noise, 10)
		if err != nil {
			t.Fatal(err)
		}
		want := SmoothParams{Order: 12, Beta: fixed.Beta, Sigma: fixed.Sigma}
		if fixed.Order != 0 {
			want.Order = fixed.Order
		}
		if want.Beta == 0 {
			want.Beta = 0.4 / want.Order
		}
		if want.Sigma == 0 {
			want.Sigma = math.Cbrt(128 * math.Exp(2*want.Beta) / slope)
		}
		if p.Order != want.Order || p.Beta != want.Beta || math.Abs(p.Sigma-want.Sigma) > 1e-12*want.Sigma {
			t.Errorf("fixed %+v: %+v, want %+v", fixed, p, want)
		}
	}
	if _, err := (SmoothParams{}).withDataFree(testMemo, orderEps{Order: 2}, m.Sigma2, m.Noise, 10); err == nil {
		t.Error("a rule without a data-independent cost")
	}
}

// TestSmoothConditionsHoldThenBoth: smoothConditionsHold, which leaves
// C5 unchecked where C6's first points fail, says whether both hold, and
// smoothConditions asked after it at the same arguments still reports
// C5 (checked then), not the false the rule's check left; at settings
// where C6 fails with C5 holding (the first two: the order 1 + 2(λ_I - 1)
// of TestDataFreeSmooth's C = 4 case, and one of λ_I = 28.5 at C = 10)
// and where both hold (the last).
func TestSmoothConditionsHoldThenBoth(t *testing.T) {
	for _, tc := range []struct {
		classes int
		order   float64
		c5, c6  bool
	}{
		{4, 134, true, false},
		{10, 56, true, false},
		{4, 34.25, true, true},
	} {
		mo := memoIn(nil)
		if got := smoothConditionsHold(mo, 40, tc.classes, tc.order, noisymax.DiscreteNoise); got != (tc.c5 && tc.c6) {
			t.Errorf("C = %d, order %v: both hold %v, want %v", tc.classes, tc.order, got, tc.c5 && tc.c6)
		}
		if c5, c6 := smoothConditions(mo, 40, tc.classes, tc.order, noisymax.DiscreteNoise); c5 != tc.c5 || c6 != tc.c6 {
			t.Errorf("C = %d, order %v: C5 %v, C6 %v after the rule's check, want %v, %v", tc.classes, tc.order, c5, c6, tc.c5, tc.c6)
		}
	}
}

// TestSmoothConditionsNearUnderflow: conditions C5 and C6 hold at orders
// between ones where they hold (σ = 40, C = 10: 4.1, 4.2, 4.3; σ = 20:
// 3.5, 3.6), where the computed β(B_u(q)) - β(q) falls only below
// q = e^-708, by the widening of values under the smallest normal number
// (underflowSlack).
func TestSmoothConditionsNearUnderflow(t *testing.T) {
	for _, tc := range []struct{ sigma, order float64 }{{40, 4.15}, {40, 4.25}, {20, 3.55}} {
		if c5, c6 := smoothConditions(memoIn(nil), tc.sigma, 10, tc.order, noisymax.DiscreteNoise); !c5 || !c6 {
			t.Errorf("sigma %v, C = 10, order %v: C5 %v, C6 %v, want both", tc.sigma, tc.order, c5, c6)
		}
	}
}

func TestSmoothParamsPublishable(t *testing.T) {
	for _, tc := range []struct {
		p    SmoothParams
		want bool
	}{
		{SmoothParams{}, true},
		{SmoothParams{Beta: 0.01}, true},
		{SmoothParams{FromVotes: true}, false},
		{SmoothParams{FromVotes: true, Order: 20}, false},
		{SmoothParams{FromVotes: true, Beta: 0.01, Sigma: 10}, false},
		{SmoothParams{FromVotes: true, Order: 20, Beta: 0.01, Sigma: 10}, true},
	} {
		if got := tc.p.publishable(); got != tc.want {
			t.Errorf("%+v: publishable %v, want %v", tc.p, got, tc.want)
		}
	}
}

// The data-free release's parameters, margin and own cost are the same for
// any votes with as many queries (and, for a release, as many answered):
// only the released value and what the account marks as the votes' differ.
func TestReleaseSmoothDataFree(t *testing.T) {
	m := paperMechanisms()[0].GNMax
	var first smooth
	// Under -short 50 queries: the property holds at any number, and each
	// account scores every query.
	n := 200
	if testing.Short() {
		n = 50
	}
	for i, seed := range []uint64{1, 2, 3} {
		counts, _ := syntheticCounts(n, seed)
		if i == 2 {
			for q := range counts {
				counts[q] = make([]int, 10)
				counts[q][q%10] = 250
			}
		}
		acct, res := rdpAccountOf(t, m, counts, rdpOptions{memo: testMemo})
		ss, err := releaseSmooth(t.Context(), acct, res, SmoothParams{}, paperDelta, accountant.PaperConversion, noise.NewSeededSource(1))
		if err != nil || ss.Error != "" {
			t.Fatal(err, ss.Error)
		}
		if i == 0 {
			first = ss
			if ss.FromVotes || ss.Order == res.Dependent.Order && res.Dependent.Order != 1+2*(res.Independent.Order-1) {
				t.Errorf("data-free release %+v, dependent order %v", ss, res.Dependent.Order)
			}
			continue
		}
		if ss.Order != first.Order || ss.Beta != first.Beta || ss.Sigma != first.Sigma || ss.Margin != first.Margin || ss.GNSS != first.GNSS {
			t.Errorf("votes %d: %+v, the first votes' %+v", i, ss, first)
		}
	}
}

// TestPrepareSmoothOutOfDomain: parameters a rule chose that the analysis
// does not cover (an order beyond 1/(2β) at 10^300) are said in Error, the
// rest of the account standing; the same from the caller is the caller's
// error, named; and a deviation of 2^62 lattice steps or more, which the
// sampler does not draw, is said in Error too and leaves nothing to draw.
func TestPrepareSmoothOutOfDomain(t *testing.T) {
	m := paperMechanisms()[0].GNMax
	counts, _ := syntheticCounts(20, 1)
	acct, res := rdpAccountOf(t, m, counts, rdpOptions{memo: testMemo, Orders: []float64{1e300}})
	s, err := prepareSmooth(t.Context(), acct, res, SmoothParams{}, paperDelta, accountant.PaperConversion)
	if err != nil || !strings.Contains(s.Error, "order") {
		t.Errorf("the rule's order at 1e300: error %v, Error %q; want the analysis said not to apply", err, s.Error)
	}
	acct, res = rdpAccountOf(t, m, counts, rdpOptions{memo: testMemo})
	_, err = prepareSmooth(t.Context(), acct, res, SmoothParams{Order: 20, Beta: 0.1}, paperDelta, accountant.PaperConversion)
	var pe *param.Error
	if !errors.As(err, &pe) || pe.Name != "ss order" {
		t.Errorf("the caller's order 20 at beta 0.1: %v, want a ParamError on ss order", err)
	}
	s, err = prepareSmooth(t.Context(), acct, res, SmoothParams{Order: 1e6, Beta: 1e-7, Sigma: 1e15}, paperDelta, accountant.PaperConversion)
	if err != nil || !strings.Contains(s.Error, "2^62 or more steps of the lattice") {
		t.Fatalf("sigma ss 1e15: error %v, Error %q; want the deviation said too large", err, s.Error)
	}
	if err := s.Draw(noise.NewSeededSource(1)); !errors.Is(err, errNotPrepared) {
		t.Errorf("a draw of it: %v, want errNotPrepared", err)
	}
}

// rdpAccountOf returns the account of counts by m, 250 teachers over 10
// classes, with opts, and its result at PATE's delta by the paper's
// conversion.
func rdpAccountOf(t *testing.T, m noisymax.Steps, counts [][]int, opts rdpOptions) (*rdpAccount, bounds) {
	t.Helper()
	acct, err := newRDPAccount(m, 250, 10, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range counts {
		if err := acct.add(c, answerUnknown); err != nil {
			t.Fatal(err)
		}
	}
	res, err := acct.result(paperDelta, accountant.PaperConversion)
	if err != nil {
		t.Fatal(err)
	}
	return acct, res
}
