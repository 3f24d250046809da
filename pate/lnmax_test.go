package pate

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noisymax"
)

// LNMax's curve min(ε, λε²/2), ε = 2/b, is never below its exact value,
// and the account takes the better of it and Q·ε.
func TestLNMax(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for range 500 {
		b := math.Exp(r.Float64()*10 - 3)
		order := 1 + math.Exp(r.Float64()*8-4)
		got, err := lnmaxRDP(b, order)
		if err != nil {
			t.Fatal(err)
		}
		eps := new(big.Float).SetPrec(refPrec).Quo(bf(2), bf(b))
		z := new(big.Float).SetPrec(refPrec).Mul(bf(order), eps)
		z.Mul(z, eps).Quo(z, bf(2))
		want := eps
		if z.Cmp(eps) < 0 {
			want = z
		}
		if bf(got).Cmp(want) < 0 {
			t.Fatalf("b %v order %v: %v below %s", b, order, got, want.Text('g', 20))
		}
		if w, _ := want.Float64(); got > w*(1+1e-15) {
			t.Fatalf("b %v order %v: %v, exact %v", b, order, got, w)
		}
	}
	m := 20.0 // PATE 2017's MNIST: γ = 0.05
	few, err := lnmaxAccount(m, 3, 1e-5, nil, accountant.PaperConversion)
	if err != nil {
		t.Fatal(err)
	}
	// Three queries: the exact composition (6 randomized responses of
	// 0.05) just beats the pure 0.3 at δ = 1e-5.
	if few.Pure || !few.Exact || !(few.Eps < outward.MulUp(0.1, 3)) || few.Eps < 0.29 {
		t.Errorf("3 queries: %+v, want the exact composition just below the pure 0.3", few)
	}
	many, err := lnmaxAccount(m, 10000, 1e-5, nil, accountant.PaperConversion)
	if err != nil {
		t.Fatal(err)
	}
	rho := 2.0 / 400 * 10000 // Q·ε²/2 per unit of order
	if want, _, _ := accountant.PaperConversion.RhoToDP(rho, 1e-5); many.RDP.Eps < want || many.RDP.Eps > want*1.01 {
		t.Errorf("10,000 queries: %+v, want the Renyi bound near %v (the grid's best order)", many, want)
	}
	// The exact composition: 20,000 randomized responses of 0.05.
	if want, _ := (accountant.Composition{Method: accountant.Optimal, DeltaPrime: 1e-5}).Compose(accountant.Guarantee{Eps: 0.05}, 20000); !many.Exact || many.Eps != want.Eps {
		t.Errorf("10,000 queries: %+v, want the exact composition %v", many, want)
	}
	for _, bad := range []struct {
		m     float64
		q     int
		delta float64
	}{{0, 1, 1e-5}, {math.Inf(1), 1, 1e-5}, {math.NaN(), 1, 1e-5}, {m, -1, 1e-5}, {m, 1, 0}, {m, 1, 1}} {
		if _, err := lnmaxAccount(bad.m, bad.q, bad.delta, nil, accountant.PaperConversion); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// The evaluation behind a released data-dependent cost is within a
// thousandth of the margin a GNSS release adds for it: per query, the
// interval that holds β(q̃) is narrower than 1e-12 of the data-independent
// value, and moving log q̃ by a relative 1e-14 (its own rounding) moves β
// by less than that. Under -short 500 random cases of the 2,000.
func TestEvalMarginCoversRounding(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 13))
	worst := 0.0
	n := 2000
	if testing.Short() {
		n = 500
	}
	for range n {
		k, c := 1+r.IntN(400), 2+r.IntN(9)
		sigma := 1 + r.Float64()*80
		order := 1.25 + r.Float64()*100
		noise := []noisymax.Noise{noisymax.DiscreteNoise, noisymax.ContinuousNoise}[r.IntN(2)]
		counts := randomCounts(r, k, c)
		lq := gnmaxLogQ(testMemo, counts, argmax(counts), sigma, noise)
		for _, slope := range []outward.Interval{gnmaxSlope(sigma), thresholdSlope(sigma)} {
			cv := newCurve(testMemo, slope, order)
			ind := cv.ind.Hi
			b := cv.at(lq)
			w := (b.Hi - b.Lo) / ind
			for _, f := range []float64{1 - 1e-14, 1 + 1e-14} {
				w = math.Max(w, math.Abs(cv.at(lq*f).Hi-b.Hi)/ind)
			}
			worst = math.Max(worst, w)
		}
	}
	if worst > evalMargin/2/1000 {
		t.Errorf("evaluation error %v of the data-independent value, margin %v", worst, evalMargin)
	}
	t.Logf("largest evaluation error: %.3g of the data-independent value", worst)
}

// TestAccountTeachersBound: an account of more teachers than its tables
// may hold is refused by name before they are allocated, including when K
// is the sum of counts that would overflow an int.
func TestAccountTeachersBound(t *testing.T) {
	m := noisymax.Steps{Threshold: 200, Sigma1: 150, Sigma2: 40, Noise: noisymax.DiscreteNoise}
	var pe *param.Error
	if _, err := newRDPAccount(m, maxAccountTeachers+1, 10, rdpOptions{memo: testMemo}); !errors.As(err, &pe) || pe.Name != "teachers" {
		t.Errorf("K = maxAccountTeachers+1: %v", err)
	}
	if _, err := oneQuery([]int{math.MaxInt, math.MaxInt, 1}, 40, noisymax.DiscreteNoise, 1e-5); !errors.As(err, &pe) || pe.Name != "teachers" {
		t.Errorf("counts summing past an int: %v", err)
	}
}
