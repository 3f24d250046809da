package ensemble

import (
	"context"
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/tally"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// GNMax is PATE's Gaussian NoisyMax (Papernot et al. 2018), in the
// one-vote relation. On the teachers' 0/1 votes its σ is calibrated to
// the per-query target (M·ε, δ) by Search (Sigma2 zero; the label is
// one bit, of continuous Gaussian noise's distribution); on vote counts
// of C classes it adds discrete Gaussian noise of deviation Sigma2 (> 0)
// to each count (Noise zero: noisymax.DiscreteNoise, which releases draw)
// and its guarantee is at Target.Delta, which it needs (> 0); M is not
// used. ConfidentGNMax embeds it: GNMax after a threshold step.
//
// A label file's header states Sigma2 and Noise, by their JSON keys.
type GNMax struct {
	Target
	Search noisymax.GNMaxSearch `json:"-" flag:"gnmax-search" votes:"two-class"`
	Sigma2 float64              `json:"sigma2" flag:"sigma2" votes:"multi-class" round:"up" help:"noise on each class count (> 0)"`
	Noise  noisymax.Noise       `json:"noise,omitempty" flag:"noise" votes:"multi-class"`
}

// Name returns "gnmax".
func (GNMax) Name() provenance.MechanismName { return "gnmax" }

// Validate checks m and δ, or σ and δ with Sigma2.
func (m GNMax) Validate() error {
	if m.Sigma2 == 0 {
		return m.Target.Validate()
	}
	if err := m.Steps().Drawn().Check(); err != nil {
		return err
	}
	if m.Delta == 0 {
		return &param.Error{Name: "delta", Value: 0.0, Rule: "must be given: Gaussian noise is not pure DP"}
	}
	return param.ConversionDelta("delta", m.Delta)
}

// Steps returns its label step on class counts as PATE's analyses take
// it (no threshold step), its noise as set.
func (m GNMax) Steps() noisymax.Steps { return noisymax.Steps{Sigma2: m.Sigma2, Noise: m.Noise} }

// Votes: given its Sigma2, GNMax labels counts alone.
func (m GNMax) Votes() []votefile.Input {
	if m.Sigma2 != 0 {
		return onManyClasses()
	}
	return []votefile.Input{votefile.TwoClass, votefile.ManyClasses}
}

// Relation returns the one-vote relation.
func (GNMax) Relation() accountant.Relation { return accountant.OneVote }

// Needs: on 0/1 votes, the teachers' guarantee of its target m·ε.
func (GNMax) Needs(in votefile.Input) Needs { return Needs{Teachers: in == votefile.TwoClass} }

// Words: its σ2 on counts.
func (m GNMax) Words() Words {
	return Words{Settings: fmt.Sprintf("sigma2 = %g", m.Sigma2), Noise: gaussianWords}
}

// Missing: on 0/1 votes m, on counts σ2 and δ; a σ2 on 0/1 votes is
// refused.
func (m GNMax) Missing(in votefile.Input) error {
	switch {
	case in == votefile.TwoClass && m.Sigma2 != 0:
		return fmt.Errorf("ReleaseSpec.Mechanism.Sigma2 = %g: on two-class votes GNMax's sigma is calibrated to its target (m·eps, delta): leave it 0", m.Sigma2)
	case in == votefile.TwoClass:
		return m.needM()
	case m.Sigma2 == 0:
		return unset("Mechanism.Sigma2", "%s needs the noise of its answer, sigma2 > 0", m.Name())
	case m.Delta == 0:
		return unset("Mechanism.Delta", "%s needs the per-query delta > 0 of its guarantee: Gaussian noise is not pure DP", m.Name())
	}
	return nil
}

// FromHeader: its σ2 and noise, at the header's per-query δ.
func (m GNMax) FromHeader(meta *votefile.LabelMeta) (Mechanism, error) {
	if meta == nil {
		return nil, errNoLabelHeader
	}
	err := decode(meta, m.Name(), &m)
	m.Target = Target{Delta: meta.Delta}
	return m, err
}

// Plan: on two-class votes its allowance m, on counts its σ, scored as
// continuous Gaussian noise of that σ on each count.
func (m GNMax) Plan(in votefile.Input) Planned {
	if in == votefile.TwoClass {
		return planM(func(v float64) Mechanism { m.M = v; return m })
	}
	return Planned{Setting: "sigma2", Flag: "sigma2", With: func(v float64) Mechanism { m.Sigma2 = v; return m },
		Expect: func(counts []int, class int) float64 { return argmaxGaussian(counts, class, m.Sigma2) }}
}

// chargedPerDraw: GNMax on class counts, each label's draw charged to a
// Gaussian-DP filter (a GNMax on 0/1 votes has none: its σ is calibrated
// to a per-query target).
func (m GNMax) chargedPerDraw() (Mechanism, bool) {
	if m.Sigma2 == 0 {
		return nil, false
	}
	return ProgressiveGNMax{Levels: []float64{m.Sigma2}}, true
}

// Labeler builds GNMax on counts of its σ2, or on 0/1 votes its σ
// calibrated to its target.
func (m GNMax) Labeler(_ context.Context, in votefile.Input, k, classes int, teachers accountant.Guarantee, _ Options) (Labeler, string, error) {
	if in == votefile.ManyClasses {
		g := m.Steps().Drawn()
		delta := max(m.Delta, 0)
		return classLabeler(GNMax{Target: Target{Delta: delta}, Sigma2: m.Sigma2, Noise: g.Noise}, g, k, classes, delta)
	}
	p, err := m.problem(k, teachers)
	if err != nil {
		return nil, "", err
	}
	g, err := newGNMax(p, m.Search)
	if err != nil {
		return nil, "", err
	}
	sigma, _ := g.Sigma()
	return g, fmt.Sprintf("GNMax: Gaussian noise with sigma = %.4g on the two class counts (%v search)", sigma, m.Search), nil
}

// gnmaxAggregator is the Gaussian NoisyMax aggregator of PATE (Papernot et al. 2018,
// Section 4.1; the thesis' baseline of Section 3.7.2): the class whose
// count plus N(0, σ²) noise is largest. With two classes the label is 1 iff
// n_1 - n_0 + Z > 0, Z ~ N(0, 2σ²), so it equals the majority with
// probability Φ(|2L-K|/(σ√2)): gnmaxAggregator is DaRRM with
// gamma(l) = erf(|2l-K|/(2σ)).
//
// The label is drawn from that exact distribution (erf rounded to 2^-53,
// then the same 53-bit Bernoulli as DaRRM); no noisy count is ever formed.
// The floating-point attacks on Gaussian samplers (Mironov 2012) read the
// input from the low-order bits of a released noisy real number; here only
// the bit is released and its probabilities are fixed numbers, which
// newGNMax checks directly against the target.
type gnmaxAggregator struct {
	table
	g             gamma.Gamma
	sigma, lambda float64
	search        noisymax.GNMaxSearch
	bitEps        float64
	privacy       Privacy
	target        Target
}

// newGNMax returns GNMax for the per-query target (m·eps, delta) of p, σ
// calibrated by search: with the paper's conversion of GNMax's
// (λ, λ/σ²)-RDP (Theorem B.4.1), or, for noisymax.GNMaxTight, on the
// exact privacy curve of the released bit for p.K votes
// (noisymax.GNMaxSigmaTight). Like PATE it assumes that a record changes at most one
// teacher's vote, i.e. that adjacent datasets give vote counts L and L±1 (the
// teachers' own eps and Delta do not enter). newGNMax also checks the
// sampled label probabilities against the target exactly for every such
// pair, and refuses them otherwise. delta must be > 0. Like
// newOneVoteDaRRM's, its Privacy describes the label by its pairs of
// output probabilities (Curve, an accountant.OneBitSpend), whose exact
// composition bounds a run's totals, and holds points of its exact
// privacy profile (Profile): a comparison with darrm-one-vote offers the
// two the same families of totals.
func newGNMax(p constraints.Problem, search noisymax.GNMaxSearch) (*gnmaxAggregator, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("GNMax: %w", err)
	}
	t := target(p)
	var sigma, lambda float64
	var err error
	var calibration string
	if search == noisymax.GNMaxTight {
		// The check below allows 1e-15·(1+e^eps) for its own rounding, and
		// the sampled probabilities are erf's, rounded to 2^-53: the
		// calibration leaves room for both.
		sigma, err = gamma.GNMaxSigmaSampled(t, p.K)
		calibration = fmt.Sprintf("sigma = %.6g calibrated on the exact privacy curve of the released bit for K = %d votes (tight search)", sigma, p.K)
	} else {
		sigma, lambda, err = noisymax.CalibrateGNMax(t, search, accountant.PaperConversion)
		calibration = fmt.Sprintf("GNMax is (lambda, lambda/sigma^2)-RDP (Papernot et al. 2018 Sec. 4.1), (eps, delta)-DP by Theorem B.4.1 at sigma = %.6g, lambda = %.6g (%v search)", sigma, lambda, search)
	}
	if err != nil {
		return nil, fmt.Errorf("GNMax at (m·eps, delta) = %v: %w", t, err)
	}
	ideal, err := gamma.GNMax(p.K, sigma)
	if err != nil {
		return nil, fmt.Errorf("GNMax: %w", err)
	}
	tb, real := newTable(ideal)
	bitEps, hs := bitPrivacy(real, t.Eps)
	// The hockey-stick sums are computed in float64 from exact dyadic
	// probabilities; 1e-15·(1+e^eps) bounds their rounding.
	if hs+1e-15*(1+math.Exp(t.Eps)) > t.Delta {
		return nil, fmt.Errorf("GNMax: sigma = %g: the label probabilities are not %v for vote counts that differ by one (hockey-stick divergence %g)", sigma, t, hs)
	}
	g := &gnmaxAggregator{
		table: tb, g: real, sigma: sigma, lambda: lambda, search: search, bitEps: bitEps, target: built(p),
		privacy: Privacy{
			Teachers: teachers(p),
			Source:   calibration + "; assumes a record changes at most one teacher's vote; the sampled label probabilities were checked against the target for every pair of vote counts L, L+1; a run composes their pairs exactly",
			Relation: accountant.OneVote,
			// The label is one bit, sampled as darrm-one-vote's is: its
			// privacy is that of its pairs of output probabilities (not
			// the Gaussian noise's: the sampled probabilities are erf's
			// rounded, not the Gaussian's exactly).
			Spend: accountant.Spend{Kind: accountant.OneBitSpend, Guarantee: t, Bits: tb.oneVoteBits()},
		},
	}
	g.privacy.Profile = tb.oneVoteProfile(t)
	return g, nil
}

// bitPrivacy returns, for a label released with Pr[1 | L = l] = probOne(g, l)
// and vote counts that differ by one between adjacent datasets, the exact
// pure-DP privacy loss max |log(P(o)/Q(o))| and the largest hockey-stick
// divergence sum_o max(0, P(o) - e^eps·Q(o)), both directions.
func bitPrivacy(g gamma.Gamma, eps float64) (loss, hs float64) {
	e := math.Exp(eps)
	div := func(a, b float64) float64 { // P = Bernoulli(a), Q = Bernoulli(b)
		return math.Max(0, a-e*b) + math.Max(0, (1-a)-e*(1-b))
	}
	for l := 0; l < g.K(); l++ {
		a, b := probOne(g, l), probOne(g, l+1)
		loss = math.Max(loss, math.Max(math.Abs(outward.Ln(a/b)), math.Abs(outward.Ln((1-a)/(1-b)))))
		hs = math.Max(hs, math.Max(div(a, b), div(b, a)))
	}
	return loss, hs
}

// Name returns "gnmax".
func (g *gnmaxAggregator) Name() provenance.MechanismName { return GNMax{}.Name() }

// K returns the number of teachers.
func (g *gnmaxAggregator) K() int { return g.k }

// Privacy returns the per-query guarantee and its justification.
func (g *gnmaxAggregator) Privacy() Privacy { return g.privacy }

// Gamma returns erf(|2l-K|/(2σ)) as sampled.
func (g *gnmaxAggregator) Gamma() gamma.Gamma { return g.g }

// Mechanism returns GNMax with σ, the deviation of the Gaussian noise on
// each class count, and the noise, continuous: the label has exactly the
// distribution of the continuous Gaussian mechanism's.
func (g *gnmaxAggregator) Mechanism() Mechanism {
	return GNMax{Target: g.target, Search: g.search, Sigma2: g.sigma, Noise: noisymax.ContinuousNoise}
}

// Sigma returns the noise σ on each class count and the Rényi order λ of
// its calibration (0 for the tight calibration, which uses none).
func (g *gnmaxAggregator) Sigma() (sigma, lambda float64) { return g.sigma, g.lambda }

// BitEpsilon returns the exact privacy loss of the released bit when
// adjacent datasets change one teacher's vote: the label is
// (BitEpsilon, 0)-DP in that model. For two classes and small K it is far
// below the RDP bound that calibrates σ (about 0.067 against 0.2676 at
// K = 11, σ = 21.46).
func (g *gnmaxAggregator) BitEpsilon() float64 { return g.bitEps }

// Aggregate releases the label of one query.
func (g *gnmaxAggregator) Aggregate(votes []byte, src *noise.Source) (byte, error) {
	l, err := tally.Votes(g.k, votes)
	if err != nil {
		return 0, err
	}
	return g.release(l, src), nil
}
