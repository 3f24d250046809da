package accountant

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"testing"
)

// rareBits are pairs whose dominating pair has a rare large loss (6.9,
// of mass 10^-9) beside common ones of ±0.1, as a private-teacher
// label's: the case lowerBitDelta is made for.
func rareBits() []BitPair {
	return []BitPair{{P: 0.525, Q: 0.475}, {P: 0.5125, Q: 0.4875}, {P: 0.52, Q: 0.47}, {P: 1e-9, Q: 1e-12}}
}

// enumeratedDelta returns δ(ε) of k steps of the pair whose loss is b by
// summing over every sequence of k atoms: the atoms' masses and ratios
// from their integers in 200-bit arithmetic, e^ε and each sequence's
// weight in float64 (within a relative 10^-15).
func enumeratedDelta(b bitLoss, k int, eps float64) float64 {
	const prec = 200
	mass := make([]*big.Float, len(b.atoms))
	ratio := make([]*big.Float, len(b.atoms)) // d/n: e^-loss
	for i, a := range b.atoms {
		m := new(big.Float).SetPrec(prec).SetInt(a.n)
		mass[i] = m.SetMantExp(m, -b.scale)
		ratio[i] = new(big.Float).SetPrec(prec).Quo(new(big.Float).SetPrec(prec).SetInt(a.d), new(big.Float).SetPrec(prec).SetInt(a.n))
	}
	// 1 - (1-ι)^k, ι's upper bound: the sum is then not below δ.
	one := new(big.Float).SetPrec(prec).SetInt64(1)
	keep1 := new(big.Float).SetPrec(prec).Sub(one, new(big.Float).SetFloat64(b.inf))
	keep := new(big.Float).SetPrec(prec).Set(keep1)
	for range k - 1 {
		keep.Mul(keep, keep1)
	}
	total := new(big.Float).SetPrec(prec).Sub(one, keep)
	ee := math.Exp(eps)
	idx := make([]int, k)
	for {
		p := new(big.Float).SetPrec(prec).SetInt64(1)
		r := new(big.Float).SetPrec(prec).SetInt64(1)
		for _, i := range idx {
			p.Mul(p, mass[i])
			r.Mul(r, ratio[i])
		}
		rf, _ := r.Float64()
		if w := 1 - ee*rf; w > 0 {
			pw := new(big.Float).SetPrec(prec).Mul(p, big.NewFloat(w))
			total.Add(total, pw)
		}
		j := 0
		for j < k {
			idx[j]++
			if idx[j] < len(b.atoms) {
				break
			}
			idx[j] = 0
			j++
		}
		if j == k {
			break
		}
	}
	f, _ := total.Float64()
	return f
}

// TestLowerBitDelta: lowerBitDelta is a lower bound of the profile, at
// every ε tested, of 1 to 3 steps of every set of pairs, against the sum
// over every sequence of atoms (where it keeps only the sequences with
// the largest loss once, or an infinite one, it is below them by the
// rest), and within a relative 0.5% of that sum for the rare pairs at 2
// and 3 steps at ε where their rare loss once decides, where those
// sequences are nearly all: a bound rounded the wrong way would be above
// the sum, one that drops too much below it.
// At 60 to 100 steps it is below the exact composition's upper bound and
// within 3% of it.
func TestLowerBitDelta(t *testing.T) {
	sets := testBits()
	sets["rare"] = rareBits()
	// Under -short six ε of the ten and 80 steps of 60 to 100, at a
	// smaller size: each ε sums over every sequence of atoms, each count
	// composes an exact transform of 2^19 points; the ε where the rare
	// loss once decides are all kept. The lower bound is composed once
	// for every ε (newLowerBitRun), as lowerBitDelta composes it for one.
	epsilons, counts := []float64{0, 0.05, 0.15, 0.3, 1, 3, 6.9, 6.95, 7, 7.1}, []int{60, 80, 100}
	if testing.Short() {
		epsilons, counts = []float64{0, 0.15, 1, 6.9, 6.95, 7}, []int{80}
	}
	for name, pairs := range sets {
		b := oneBitLoss(pairs)
		for k := 1; k <= 3; k++ {
			l := newLowerBitRun(b, k, lowerBitWindow)
			for _, eps := range epsilons {
				low := l.delta(eps)
				ref := enumeratedDelta(b, k, eps)
				if !(low >= 0) || low > ref*(1+1e-12) {
					t.Errorf("%s, %d steps, eps %v: lower bound %.17g, above the enumerated delta %.17g", name, k, eps, low, ref)
				}
				// Past the rare loss and short of it twice (6.9 + 0.1 a
				// step), the rare loss once decides.
				if name == "rare" && k > 1 && eps >= 6.9 && eps < 6.9+0.1*float64(k-1) && low < ref*(1-5e-3) {
					t.Errorf("%s, %d steps, eps %v: lower bound %.17g, more than 0.5%% below the enumerated delta %.17g", name, k, eps, low, ref)
				}
			}
		}
	}
	b := oneBitLoss(rareBits())
	for _, k := range counts {
		r, err := newBitRun(nil, []bitPart{{b, k}}, 1e-8)
		if err != nil {
			t.Fatal(err)
		}
		l := newLowerBitRun(b, k, lowerBitWindow)
		for _, eps := range []float64{6, 7, 8} {
			low, up := l.delta(eps), r.delta(eps)
			if low > up || low < 0.97*up {
				t.Errorf("%d steps, eps %v: lower bound %.6g, exact composition's upper bound %.6g: want within 3%% below", k, eps, low, up)
			}
		}
	}
}

// TestCountLowerBound: where the lower bound shows that the count after
// the one found does not fit (rare large losses decide it), a count's
// search makes the exact composition at the count alone, and the count
// is the predicate's, by the exact composition: it fits, the next does
// not, the next's exact δ at the budget's ε is above the budget's δ.
func TestCountLowerBound(t *testing.T) {
	budgets := []Guarantee{{Eps: 7, Delta: 1e-8}, {Eps: 5, Delta: 5e-8}}
	if testing.Short() {
		// Under -short one budget, at a smaller size: each budget's count
		// and its checks make exact compositions of 2^19 points, by the
		// same path.
		budgets = budgets[:1]
	}
	for _, budget := range budgets {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			m := new(Memo)
			pairs := rareBits()
			a := Account{Step: oneBitSpend(pairs), Budget: &Budget{budget}}
			n, _, err := a.MaxSteps(context.Background(), m)
			if err != nil {
				t.Fatal(err)
			}
			if made := exactMade(m, pairs); len(made) != 1 || made[0] != n {
				t.Errorf("%d steps fit; the exact composition was made at %v, want %v", n, made, []int{n})
			}
			b := m.curvesOf(pairs).loss
			if low := lowerBitDelta(b, n+1, budget.Eps, lowerBitWindow); !(low > budget.Delta) {
				t.Errorf("the lower bound at %d steps is %g, within the budget", n+1, low)
			}
			for k, want := range map[int]bool{n: true, n + 1: false} {
				a.Steps = k
				if ok, err := a.Fits(testMemo); err != nil || ok != want {
					t.Errorf("%d steps fit: %v (%v), want %v", k, ok, err, want)
				}
				r, err := newBitRun(nil, []bitPart{{b, k}}, budget.Delta)
				if err != nil {
					t.Fatal(err)
				}
				if d := r.delta(budget.Eps); (d <= budget.Delta) != want {
					t.Errorf("%d steps: the exact composition's delta at %v is %g, want it within %g: %v", k, budget.Eps, d, budget.Delta, want)
				}
			}
		})
	}
}
