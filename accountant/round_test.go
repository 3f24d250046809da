package accountant

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/darrm/darrm/internal/bigmath"
	"github.com/darrm/darrm/internal/outward"
)

// Exact references in math/big, 256 bits: far below one float64 ulp.

const refPrec = 256

func bf(x float64) *big.Float { return new(big.Float).SetPrec(refPrec).SetFloat64(x) }

func bigExp(x *big.Float) *big.Float { return bigmath.Exp(x, refPrec) }

func bigLog(y *big.Float) *big.Float { return bigmath.Log(y, refPrec) }

func bigSqrt(x *big.Float) *big.Float { return new(big.Float).SetPrec(refPrec).Sqrt(x) }

// below reports whether the float64 got is strictly below the exact value.
func below(got float64, exact *big.Float) bool { return bf(got).Cmp(exact) < 0 }

// exactGeneral returns Kairouz et al.'s general composition (Thm 3.5) of
// steps with slack dp, in exact arithmetic.
func exactGeneral(steps []Guarantee, dp float64) (eps, delta *big.Float) {
	sum, a, sq := bf(0), bf(0), bf(0)
	keep := new(big.Float).SetPrec(uint(53 * (len(steps) + 2))).SetFloat64(1 - 0) // exact product
	keep.Mul(keep, new(big.Float).SetPrec(keep.Prec()).Sub(bf(1), bf(dp)))
	// A step's terms are those of the step before when its ε is the same
	// (a run of identical steps): the exponential once per run, the same
	// 256-bit values added.
	var th, e2 *big.Float
	for i, s := range steps {
		e := bf(s.Eps)
		sum.Add(sum, e)
		if i == 0 || s.Eps != steps[i-1].Eps {
			ex := bigExp(e)
			th = new(big.Float).SetPrec(refPrec).Sub(ex, bf(1))
			th.Quo(th, new(big.Float).SetPrec(refPrec).Add(ex, bf(1)))
			th.Mul(th, e)
			e2 = new(big.Float).SetPrec(refPrec).Mul(e, e)
		}
		a.Add(a, th)
		sq.Add(sq, e2)
		keep.Mul(keep, new(big.Float).SetPrec(keep.Prec()).Sub(bf(1), bf(s.Delta)))
	}
	logE := bigLog(new(big.Float).SetPrec(refPrec).Add(bigExp(bf(1)), new(big.Float).SetPrec(refPrec).Quo(bigSqrt(sq), bf(dp))))
	t2 := new(big.Float).SetPrec(refPrec).Mul(bf(2), sq)
	t2 = bigSqrt(t2.Mul(t2, logE))
	t2.Add(t2, a)
	t3 := new(big.Float).SetPrec(refPrec).Mul(bf(2), sq)
	t3 = bigSqrt(t3.Mul(t3, new(big.Float).SetPrec(refPrec).Neg(bigLog(bf(dp)))))
	t3.Add(t3, a)
	eps = sum
	for _, t := range []*big.Float{t2, t3} {
		if t.Cmp(eps) < 0 {
			eps = t
		}
	}
	return eps, new(big.Float).SetPrec(keep.Prec()).Sub(new(big.Float).SetPrec(keep.Prec()).SetInt64(1), keep)
}

// randomStep draws a step whose ε and δ span many orders of magnitude.
func randomStep(r *rand.Rand) Guarantee {
	return Guarantee{Eps: math.Exp(r.Float64()*12 - 10), Delta: math.Exp(r.Float64()*25 - 27)}
}

// TestOutwardRoundingAgainstBig composes thousands of random (ε, δ) steps
// simply and generally, identical and heterogeneous, and checks that no
// reported ε or δ is below the exact value of its formula at the float64
// inputs. It prints the largest overstatement, in ulps.
func TestOutwardRoundingAgainstBig(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 1500
	if testing.Short() {
		n = 300
	}
	var unsafe int
	worst := 0.0
	check := func(what string, got float64, exact *big.Float, args ...any) {
		if below(got, exact) {
			unsafe++
			if unsafe <= 5 {
				e, _ := exact.Float64()
				t.Errorf("%s %v: %v below the exact %v", what, args, got, e)
			}
			return
		}
		e, _ := exact.Float64()
		if e > 0 {
			worst = math.Max(worst, (got-e)/(e*outward.ULP))
		}
	}
	for range n {
		k := 1 + r.IntN(60)
		dp := math.Exp(r.Float64()*20 - 22)
		step := randomStep(r)
		steps := make([]Guarantee, k)
		for i := range steps {
			steps[i] = step
		}
		g, err := composeSimple(step, k)
		if err != nil {
			t.Fatal(err)
		}
		check("simple eps", g.Eps, new(big.Float).SetPrec(refPrec).Mul(bf(float64(k)), bf(step.Eps)), step, k)
		check("simple delta", g.Delta, new(big.Float).SetPrec(refPrec).Mul(bf(float64(k)), bf(step.Delta)), step, k)
		eps, delta := exactGeneral(steps, dp)
		if g, err = composeGeneral(step, k, dp); err != nil {
			t.Fatal(err)
		}
		check("general eps", g.Eps, eps, step, k, dp)
		check("general delta", g.Delta, delta, step, k, dp)
		for i := range steps {
			steps[i] = randomStep(r)
		}
		eps, delta = exactGeneral(steps, dp)
		if g, err = generalSeq(steps, dp); err != nil {
			t.Fatal(err)
		}
		check("general seq eps", g.Eps, eps, k, dp)
		check("general seq delta", g.Delta, delta, k, dp)
		sum, dsum := bf(0), bf(0)
		for _, s := range steps {
			sum.Add(sum, bf(s.Eps))
			dsum.Add(dsum, bf(s.Delta))
		}
		if g, err = simpleSeq(steps); err != nil {
			t.Fatal(err)
		}
		check("simple seq eps", g.Eps, sum, k)
		check("simple seq delta", g.Delta, dsum, k)
	}
	if unsafe > 0 {
		t.Errorf("%d results below the exact value", unsafe)
	}
	t.Logf("%d random compositions, none below the exact value; largest overstatement %.0f ulps", 6*n, worst)
}

// TestOutwardRoundingCases are the three cases of values 1-2 ulps
// on the unsafe side.
func TestOutwardRoundingCases(t *testing.T) {
	g, err := generalSeq([]Guarantee{{1, 0.1}, {2, 0.2}}, 1e-300)
	if err != nil {
		t.Fatal(err)
	}
	_, exact := exactGeneral([]Guarantee{{1, 0.1}, {2, 0.2}}, 1e-300)
	if below(g.Delta, exact) {
		t.Errorf("(1, 0.1) and (2, 0.2): delta %v below the exact %v", g.Delta, exact)
	}
	g, err = composeGeneral(Guarantee{0x1p-9, 0}, 700, 0x1p-25)
	if err != nil {
		t.Fatal(err)
	}
	if g.Delta < 0x1p-25 {
		t.Errorf("700 steps of (2^-9, 0), slack 2^-25: delta %v below 2^-25", g.Delta)
	}
	eps, err := (Composition{Method: Optimal, DeltaPrime: 0.01}).StepEps(5, 0, 50)
	if err != nil {
		t.Fatal(err)
	}
	if d := exactOptimalDelta(eps, 50, 5); d.Cmp(bf(0.01)) > 0 {
		t.Errorf("optimal composition, target (5, 0.01) over 50 steps: per-step eps %v gives delta %v > 0.01", eps, d)
	}
}

// exactOptimalDelta returns δ̃(u) of k composed ε-DP randomized responses
// (Kairouz, Oh and Viswanath 2015, Thm 3.3) in exact arithmetic:
// Σ_l C(k,l) p1^l p0^(k-l) (1 - e^{u-(k-2l)ε})_+.
func exactOptimalDelta(eps float64, k int, u float64) *big.Float {
	e := bigExp(bf(eps))
	den := new(big.Float).SetPrec(refPrec).Add(e, bf(1))
	p0 := new(big.Float).SetPrec(refPrec).Quo(e, den)
	p1 := new(big.Float).SetPrec(refPrec).Quo(bf(1), den)
	sum := bf(0)
	for l := 0; l <= k; l++ {
		loss := new(big.Float).SetPrec(refPrec).Mul(bf(float64(k-2*l)), bf(eps))
		if loss.Cmp(bf(u)) <= 0 {
			break
		}
		term := new(big.Float).SetPrec(refPrec).SetInt(new(big.Int).Binomial(int64(k), int64(l)))
		for range l {
			term.Mul(term, p1)
		}
		for range k - l {
			term.Mul(term, p0)
		}
		f := new(big.Float).SetPrec(refPrec).Sub(bf(1), bigExp(new(big.Float).SetPrec(refPrec).Sub(bf(u), loss)))
		sum.Add(sum, term.Mul(term, f))
	}
	return sum
}

// TestOptimalEpsAgainstBig checks optimal composition's ε on random small
// cases: δ̃ at the reported ε, computed exactly, is at most δ', so the
// reported ε is at or above the exact one; and a per-step ε that StepEps
// solves for a budget stays within it exactly.
func TestOptimalEpsAgainstBig(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n := 300
	if testing.Short() {
		n = 30
	}
	for range n {
		k := 1 + r.IntN(40)
		eps := math.Exp(r.Float64()*6 - 5)
		dp := math.Exp(r.Float64()*15 - 17)
		g, err := composeOptimal(Guarantee{Eps: eps}, k, dp)
		if err != nil {
			t.Fatal(err)
		}
		if d := exactOptimalDelta(eps, k, g.Eps); d.Cmp(bf(dp)) > 0 {
			t.Errorf("k=%d eps=%v delta'=%v: reported eps %v has exact delta %v > delta'", k, eps, dp, g.Eps, d)
		}
		if g.Eps == 0 {
			continue // δ' covers everything; nothing to check
		}
		target := g.Eps * (0.5 + r.Float64())
		step, err := (Composition{Method: Optimal, DeltaPrime: dp}).StepEps(target, 0, k)
		if err != nil {
			t.Fatal(err)
		}
		if d := exactOptimalDelta(step, k, target); d.Cmp(bf(dp)) > 0 {
			t.Errorf("k=%d target %v delta'=%v: StepEps %v has exact delta %v > delta' at the target", k, target, dp, step, d)
		}
	}
}

// seqOf returns the sequence of steps, each added as a run of one.
func seqOf(steps []Guarantee) (Sequence, error) {
	var s Sequence
	for _, st := range steps {
		var err error
		if s, err = s.Add(st, 1); err != nil {
			return Sequence{}, err
		}
	}
	return s, nil
}

// simpleSeq and generalSeq are the simple and the general composition
// (slack dp) of a heterogeneous sequence of steps.
func simpleSeq(steps []Guarantee) (Guarantee, error) {
	s, err := seqOf(steps)
	return s.simple(), err
}

func generalSeq(steps []Guarantee, dp float64) (Guarantee, error) {
	s, err := seqOf(steps)
	return s.general(dp), err
}
