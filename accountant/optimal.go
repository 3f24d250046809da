package accountant

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/roots"
)

// maxOptimalSteps is the largest k that composeOptimal accepts. Its cost
// grows like sqrt(k); at this size one call takes milliseconds.
const maxOptimalSteps = 1 << 26

// composeOptimal returns the exact optimal composition of k identical
// (ε, δ)-DP steps (Kairouz, Oh and Viswanath 2015, Thm 3.3): the smallest ε'
// such that the k-fold composition is (ε', 1 - (1-δ)^k·(1-δ'))-DP for every
// choice of the steps. It is never larger than composeGeneral's ε' for the
// same δ'.
//
// The hockey-stick divergence δ̃(u) of the k-fold composition of the
// canonical (ε, 0) randomized response is
//
//	δ̃(u) = Σ_{l: (k-2l)ε > u} C(k,l)·(e^{(k-l)ε} - e^u·e^{lε}) / (1+e^ε)^k,
//
// and ε' solves δ̃(ε') = δ' (ε' = 0 when δ̃(0) <= δ'). Between two grid
// points u = (k-2i)ε the equation has a closed form, so the result is exact
// up to floating-point rounding: the terms are summed in log space, each as a
// positive quantity, and binomial terms too small to change the sum (below
// e^-40·δ') are replaced by an upper bound on their total, which can only
// make ε' larger. The cost is O(sqrt(k·log(1/δ'))) evaluations.
//
// Optimal composition of heterogeneous steps is #P-hard (Murtagh and Vadhan
// 2016) and is not offered; use a Sequence.
func composeOptimal(step Guarantee, k int, deltaPrime float64) (Guarantee, error) {
	if err := checkSlack(step, k, deltaPrime); err != nil {
		return Guarantee{}, fmt.Errorf("optimal composition: %w", err)
	}
	if k > maxOptimalSteps {
		return Guarantee{}, fmt.Errorf("optimal composition: %w",
			&param.Error{Name: "k", Value: k, Rule: fmt.Sprintf("must be <= %d for optimal composition", maxOptimalSteps)})
	}
	c := newRRComp(step.Eps, k)
	// kε, simple composition's bound, holds too, with a larger δ: the
	// margin raised the optimum of steps of large ε, within 2^-40 of kε
	// (ε above about 10^7 at δ' = 1e-5), above it.
	return Guarantee{
		Eps:   math.Min(outward.Up(c.epsFor(deltaPrime), optimalMargin), outward.MulUp(float64(k), step.Eps)),
		Delta: totalDelta(outward.Down(float64(k)*logKeepDown(step.Delta), 1), deltaPrime),
	}, nil
}

// optimalMargin (in ulps, a relative 2^-40) raises the ε of composeOptimal
// above the rounding error of its sums of O(sqrt(k·log(1/δ'))) terms in log
// space and of the final log1p; the tests check it against exact
// arithmetic (math/big).
const optimalMargin = 1 << 12

// rrComp describes the k-fold composition of randomized response with
// parameter ε, the worst case of Kairouz et al. Outcome l (the number of
// steps that answered "against") has probability
// P_l = C(k,l)·p0^(k-l)·p1^l, p0 = e^ε/(1+e^ε), p1 = 1/(1+e^ε), under
// the first dataset, and privacy loss (k-2l)ε.
type rrComp struct {
	k          int
	eps        float64
	logP0      float64 // log p0
	logP1      float64 // log p1
	kp0, kp1   float64 // k·p0, k·p1
	stirlingK  float64 // stirlerr(k)
	increasing int     // P_l is nondecreasing for l <= increasing
}

func newRRComp(eps float64, k int) *rrComp {
	n := float64(k)
	logP0 := -math.Log1p(math.Exp(-eps))
	// P_{l+1}/P_l = (k-l)/(l+1)·e^-ε >= 1 while l <= (k·e^-ε - 1)/(1 + e^-ε).
	inc := int(math.Floor((n*math.Exp(-eps)-1)/(1+math.Exp(-eps)))) + 1
	inc = max(0, min(inc, k))
	return &rrComp{
		k:          k,
		eps:        eps,
		logP0:      logP0,
		logP1:      logP0 - eps,
		kp0:        n / (1 + math.Exp(-eps)),
		kp1:        n / (1 + math.Exp(eps)),
		stirlingK:  stirlerr(n),
		increasing: inc,
	}
}

// logP returns log P_l, accurate to a few ulps of |log P_l| + 1 for any k
// (Loader 2000, "Fast and accurate computation of binomial probabilities").
func (c *rrComp) logP(l int) float64 {
	switch l {
	case 0:
		return float64(c.k) * c.logP0
	case c.k:
		return float64(c.k) * c.logP1
	}
	x, n := float64(l), float64(c.k)
	lc := c.stirlingK - stirlerr(x) - stirlerr(n-x) - bd0(x, c.kp1) - bd0(n-x, c.kp0)
	return lc - 0.5*(outward.Ln(2*math.Pi)+outward.Ln(x)+math.Log1p(-x/n))
}

// head returns the largest l0 <= limit such that the total mass of the
// outcomes l < l0 is below e^threshold, and the log of an upper bound on
// that mass (-Inf when l0 = 0). Below the mode P_l is nondecreasing, so that
// mass is at most l0·P_{l0-1}, which is increasing in l0: bisect on it.
func (c *rrComp) head(limit int, threshold float64) (int, float64) {
	bound := func(l0 int) float64 { return outward.Ln(float64(l0)) + c.logP(l0-1) }
	hi := min(limit, c.increasing+1)
	if hi <= 0 || bound(1) >= threshold {
		return 0, math.Inf(-1)
	}
	l0, _ := roots.LastIn(1, hi, func(l0 int) (bool, error) { return bound(l0) < threshold, nil })
	return l0, bound(l0)
}

// anchorEvery is how often the running binomial term is recomputed from
// logP instead of by the ratio recurrence P_l = P_{l-1}·(k-l+1)/l·e^-ε, which
// loses up to an ulp per step.
const anchorEvery = 16

// terms returns a function yielding P_l·e^-ref for l = from, from+1, ...
// in turn.
func (c *rrComp) terms(from int, ref float64) func() float64 {
	l, p, shrink := from, 0.0, math.Exp(-c.eps)
	return func() float64 {
		if (l-from)%anchorEvery == 0 {
			p = math.Exp(c.logP(l) - ref)
		} else {
			p *= float64(c.k-l+1) / float64(l) * shrink
		}
		l++
		return p
	}
}

// epsFor returns the smallest u >= 0 with δ̃(u) <= target.
//
// With D_i = δ̃((k-2i)ε) = Σ_{l<i} P_l(1 - e^{-2(i-l)ε}) and
// E_i = Σ_{l<=i} P_l·e^{-2(i-l)ε}, both sums of positive terms,
// D_{i+1} = D_i + (1 - e^{-2ε})·E_i and E_i = P_i + e^{-2ε}·E_{i-1}. On the
// segment (k-2i-2)ε <= u <= (k-2i)ε, δ̃(u) = D_i + E_i·(1 - e^{u-(k-2i)ε}),
// so δ̃(u) = target at u = (k-2i)ε + log1p(-(target - D_i)/E_i).
// All quantities are carried scaled by e^-ref, ref ≈ log(target), which keeps
// every term that matters within range.
func (c *rrComp) epsFor(target float64) float64 {
	logTarget := outward.Ln(target)
	ref := math.Max(logTarget, -700)
	tgt := math.Exp(logTarget - ref)
	i, logHead := c.head(c.k, logTarget-40)
	d := math.Exp(logHead - ref) // bounds D_i and E_{i-1}: the dropped head
	e := d
	r, oneMinusR := math.Exp(-2*c.eps), -math.Expm1(-2*c.eps)
	next := c.terms(i, ref)
	for ; 2*i < c.k; i++ {
		e = next() + r*e
		dNext := d + oneMinusR*e
		if tgt < dNext || 2*(i+1) >= c.k {
			x := (tgt - d) / e
			if x >= 1 {
				return 0
			}
			return math.Max(0, float64(c.k-2*i)*c.eps+math.Log1p(-x))
		}
		d = dNext
	}
	return 0 // unreachable: the loop always returns for k >= 1
}

// stirlerr returns log(n!) - log(sqrt(2πn)·(n/e)^n), the error of
// Stirling's formula, for n >= 0 (Loader 2000). The series terms are exact
// to double precision for n > 15; below, lgamma is exact to ~1e-15.
func stirlerr(n float64) float64 {
	const (
		s0 = 1.0 / 12
		s1 = 1.0 / 360
		s2 = 1.0 / 1260
		s3 = 1.0 / 1680
		s4 = 1.0 / 1188
	)
	if n <= 15 {
		if n == 0 {
			return 0
		}
		lg, _ := math.Lgamma(n + 1)
		return lg - (n+0.5)*outward.Ln(n) + n - 0.5*outward.Ln(2*math.Pi)
	}
	nn := n * n
	switch {
	case n > 500:
		return (s0 - s1/nn) / n
	case n > 80:
		return (s0 - (s1-s2/nn)/nn) / n
	case n > 35:
		return (s0 - (s1-(s2-s3/nn)/nn)/nn) / n
	}
	return (s0 - (s1-(s2-(s3-s4/nn)/nn)/nn)/nn) / n
}

// bd0 returns x·log(x/np) + np - x >= 0 without cancellation when x is
// close to np (Loader 2000).
func bd0(x, np float64) float64 {
	if math.Abs(x-np) < 0.1*(x+np) {
		v := (x - np) / (x + np)
		s := (x - np) * v
		ej := 2 * x * v
		v *= v
		for j := 1; j < 1000; j++ {
			ej *= v
			s1 := s + ej/float64(2*j+1)
			if s1 == s {
				return s1
			}
			s = s1
		}
		return s
	}
	return x*outward.Ln(x/np) + np - x
}
