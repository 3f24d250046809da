package gamma

import (
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/noisymax"
)

// GNMax returns the noise function of two-class GNMax with noise σ on each
// class count (Papernot et al. 2018, Section 4.1): the label is 1 iff
// n1 - n0 + Z > 0 with Z ~ N(0, 2σ²), which is the majority with
// probability Φ(|2l - K|/(σ√2)), so GNMax is DaRRM with
// gamma(l) = erf(|2l - K|/(2σ)) (Lemma 3.4.3).
func GNMax(k int, sigma float64) (Gamma, error) {
	if err := checkK(k); err != nil {
		return nil, fmt.Errorf("gamma_GNMax: %w", err)
	}
	if !(sigma > 0) || math.IsInf(sigma, 1) {
		return nil, fmt.Errorf("gamma_GNMax: sigma = %v: must be finite and > 0", sigma)
	}
	g := make(Gamma, k+1)
	for l := range g {
		g[l] = math.Erf(math.Abs(float64(2*l-k)) / (2 * sigma))
	}
	return g, nil
}

// GNMaxSigmaSampled returns the noise σ of two-class GNMax over k votes
// calibrated on the exact privacy curve of the released bit
// (noisymax.GNMaxSigmaTight) at the target's delta less
// 4e-15·(1 + e^eps): room for the label probabilities as sampled (erf
// rounded down to 2^-53) and for a check of them in float64 (the one-vote
// certificate, or ensemble's). With delta = 0 there is no room to leave:
// the sampled probabilities of the tails fall to 0 where erf rounds to 1,
// and the label is then (eps, 2^-54)-DP at best, which a certificate
// reports as tight.
func GNMaxSigmaSampled(target accountant.Guarantee, k int) (float64, error) {
	room := target
	room.Delta = max(0, target.Delta-4e-15*(1+math.Exp(target.Eps)))
	return noisymax.GNMaxSigmaTight(room, k)
}

// gnmaxBaseline returns two-class GNMax at the per-query guarantee of the
// one-vote problem p, σ calibrated on the exact privacy curve of the
// released bit for p.K votes (GNMaxSigmaSampled, darrm's --gnmax-search
// tight), and its noise function as a sampler of 53-bit uniforms realises
// it (Gamma.Realised), which is what is certified.
func gnmaxBaseline(p constraints.Problem) (Baseline, error) {
	if err := checkOneVote(p); err != nil {
		return Baseline{}, err
	}
	sigma, err := GNMaxSigmaSampled(accountant.Guarantee{Eps: p.Eps, Delta: p.TargetDelta}, p.K)
	if err != nil {
		return Baseline{}, err
	}
	g, err := GNMax(p.K, sigma)
	if err != nil {
		return Baseline{}, err
	}
	label := fmt.Sprintf("GNMax: Gaussian noise with sigma = %.6g on the two class counts, calibrated on the exact privacy curve of the released bit for K = %d votes (tight search; Lemma 3.4.3)", sigma, p.K)
	return Baseline{Name: "gnmax", Label: label, Gamma: g.Realised()}, nil
}

// oneVoteRRBaseline returns randomized response on the majority for the
// one-vote problem p (RRBaseline): the constant gamma = (e^eps - 1 + 2·delta)/(e^eps + 1),
// the largest constant that is private in the one-vote relation (the
// vote counts on either side of K/2 bound it; every other pair of
// neighbouring counts allows gamma = 1), less twice the certificate's
// rounding bound so that the certificate can prove it, on the 2^-53 grid.
func oneVoteRRBaseline(p constraints.Problem) (Baseline, error) {
	if err := checkOneVote(p); err != nil {
		return Baseline{}, err
	}
	c := (p.Budget() - 2*p.ErrBound()) / (1 + p.E())
	g, err := Const(p.K, math.Min(math.Max(c, 0), 1))
	if err != nil {
		return Baseline{}, fmt.Errorf("RR: %w", err)
	}
	g = g.Realised()
	label := fmt.Sprintf("RR: gamma = (e^eps - 1 + 2·delta)/(e^eps + 1) = %.6g, the largest constant gamma in the one-vote relation (randomized response on the majority)", g[0])
	return Baseline{Name: "rr", Label: label, Gamma: g}, nil
}

// checkOneVote checks that p is a valid problem in the one-vote relation.
func checkOneVote(p constraints.Problem) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if p.Relation != accountant.OneVote {
		return fmt.Errorf("relation %v: this baseline is for the %v relation", p.Relation, accountant.OneVote)
	}
	return nil
}

// OneVoteOpt returns the greatest noise function that is private in the
// one-vote relation for p, value by value:
//
//	gamma(H) = min(1, B/(1 + E)),
//	gamma(l+1) = min(1, E·gamma(l) + B, (gamma(l) + B)/E),
//
// with E = e^eps and B = E - 1 + 2·delta. Each of the one-vote inequalities
// bounds one value of gamma by an increasing function of a neighbour's
// (or, across K/2, by a constant), so the private gammas are closed under
// pointwise maxima and have a greatest element; the recursion takes each
// value as large as its lower neighbour allows and meets the inequalities
// towards the upper one, so it is that element. Every utility with
// nonnegative coefficients, which every prior of Prior.Coefficients has,
// is largest there, and so is the tie-break of optimal.Solve: it is
// gamma_opt for every such prior, and the canonical one. It ramps up from
// K/2 as the truncated geometric mechanism does (docs/solve.md, "DaRRM
// under the one-vote relation"). Rounding may leave it above the budget
// by a few ulps: Certify it.
func OneVoteOpt(p constraints.Problem) (Gamma, error) {
	if err := checkOneVote(p); err != nil {
		return nil, err
	}
	e, b := p.E(), p.Budget()
	upper := make([]float64, p.K-p.H()+1)
	upper[0] = math.Min(1, b/(1+e))
	for i := 1; i < len(upper); i++ {
		upper[i] = math.Min(1, math.Min(e*upper[i-1]+b, (upper[i-1]+b)/e))
	}
	return FromUpper(p.K, upper), nil
}
