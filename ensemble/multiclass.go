package ensemble

import (
	"context"
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/discrete"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/tally"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// ConfidentGNMax is Confident-GNMax on vote counts of C classes
// (Papernot et al. 2018, Algorithm 1): GNMax (the one it embeds, with its
// σ2, noise and per-query δ) after a threshold step, which answers a query
// only if its largest count plus noise of deviation Sigma1 > 0 reaches
// Threshold; its guarantee is at the per-query Delta > 0. A label file's
// header states its settings but Delta (the header's own) by their JSON
// keys.
type ConfidentGNMax struct {
	Threshold float64 `json:"threshold" flag:"threshold" help:"answer when the noisy top count hits it"`
	Sigma1    float64 `json:"sigma1" flag:"sigma1" round:"up" help:"noise of the threshold step (> 0)"`
	GNMax
}

// Name returns "confident-gnmax".
func (ConfidentGNMax) Name() provenance.MechanismName { return "confident-gnmax" }

// Validate checks the threshold step's σ1 > 0, the steps' own rules
// (noisymax.Steps.Check: their noise, as a release draws it, and σ, a
// finite threshold) and δ.
func (m ConfidentGNMax) Validate() error {
	if !(m.Sigma1 > 0) {
		return &param.Error{Name: "sigma1", Value: m.Sigma1, Rule: "must be > 0"}
	}
	if err := m.Steps().Drawn().Check(); err != nil {
		return err
	}
	return param.ConversionDelta("delta", m.Delta)
}

// Steps returns the settings of m's steps as PATE's analyses take them,
// its noise as set.
func (m ConfidentGNMax) Steps() noisymax.Steps {
	s := m.GNMax.Steps()
	s.Threshold, s.Sigma1 = m.Threshold, m.Sigma1
	return s
}

// Votes returns the multi-class votes.
func (ConfidentGNMax) Votes() []votefile.Input { return onManyClasses() }

// Needs nothing beside its settings.
func (ConfidentGNMax) Needs(votefile.Input) Needs { return Needs{} }

// Words: its threshold step and σ2, and what withholds a label.
func (m ConfidentGNMax) Words() Words {
	return Words{Settings: fmt.Sprintf("T = %g, sigma1 = %g, sigma2 = %g", m.Threshold, m.Sigma1, m.Sigma2), Noise: gaussianWords,
		Withheld: "by the threshold step (an empty label, answered 0)"}
}

// Missing: σ2, δ and σ1.
func (m ConfidentGNMax) Missing(votefile.Input) error {
	switch {
	case m.Sigma2 == 0:
		return unset("Mechanism.Sigma2", "%s needs the noise of its answer, sigma2 > 0", m.Name())
	case m.Delta == 0:
		return unset("Mechanism.Delta", "%s needs the per-query delta > 0 of its guarantee: Gaussian noise is not pure DP", m.Name())
	case m.Sigma1 == 0:
		return unset("Mechanism.Sigma1", "%s needs the noise of its threshold step, sigma1 > 0 (without one it is gnmax)", m.Name())
	}
	return nil
}

// FromHeader: its settings, at the header's per-query δ.
func (ConfidentGNMax) FromHeader(meta *votefile.LabelMeta) (Mechanism, error) {
	if meta == nil {
		return nil, errNoLabelHeader
	}
	var m ConfidentGNMax
	err := decode(meta, m.Name(), &m)
	m.Delta = meta.Delta
	return m, err
}

// Plan: σ2, scored as GNMax's on the answered queries, and the threshold
// step, which a plan chooses on proxy votes (σ1 at a ratio to σ2).
func (m ConfidentGNMax) Plan(in votefile.Input) Planned {
	p := m.GNMax.Plan(in)
	p.With = func(v float64) Mechanism { m.Sigma2 = v; return m }
	p.Threshold = func(t, sigma1 float64) Mechanism { m.Threshold, m.Sigma1 = t, sigma1; return m }
	return p
}

// chargedPerDraw: Confident-GNMax charged when drawn, its GNMax step
// drawn and charged only when its threshold step answered.
func (m ConfidentGNMax) chargedPerDraw() (Mechanism, bool) {
	return ProgressiveGNMax{Levels: []float64{m.Sigma2}, Threshold: m.Threshold, Sigma1: m.Sigma1}, true
}

// Labeler builds Confident-GNMax on the counts.
func (m ConfidentGNMax) Labeler(_ context.Context, _ votefile.Input, k, classes int, _ accountant.Guarantee, _ Options) (Labeler, string, error) {
	g := m.Steps().Drawn()
	m.Noise = g.Noise
	return classLabeler(m, g, k, classes, m.Delta)
}

// Steps returns the steps of m as PATE's analyses take them (its noise as
// set) when m is of the GNMax family on the class counts of votes of
// classes classes, and whether it is: ConfidentGNMax, and GNMax given its
// Sigma2 or on classes other than 2 (0 for counts of any classes).
func Steps(m Mechanism, classes int) (noisymax.Steps, bool) {
	f, ok := m.(interface{ Steps() noisymax.Steps })
	if !ok || VotesOf(m, classes) != votefile.ManyClasses {
		return noisymax.Steps{}, false
	}
	return f.Steps(), true
}

// classLabeler returns the labeler of m (GNMax or Confident-GNMax) of
// the steps g, as drawn, for K teachers and C classes, its guarantee at
// delta, and says what it is.
func classLabeler(m Mechanism, g noisymax.Steps, teachers, classes int, delta float64) (Labeler, string, error) {
	if err := param.GuaranteeDelta("delta", delta); err != nil {
		return nil, "", err
	}
	agg, err := newClassGNMax(m, g, teachers, classes, delta)
	if err != nil {
		return nil, "", err
	}
	label := fmt.Sprintf("GNMax: discrete Gaussian noise with sigma2 = %g on the %d class counts", g.Sigma2, classes)
	if g.Confident() {
		label = fmt.Sprintf("Confident-GNMax: answered when the largest count plus discrete Gaussian noise (sigma1 = %g) reaches T = %g, then GNMax with sigma2 = %g on the %d class counts", g.Sigma1, g.Threshold, g.Sigma2, classes)
	}
	return agg, label, nil
}

// classGNMax is GNMax on the counts of C classes (PATE paper, Section
// 4.1; GNMax is its two-class form in the thesis), and with a
// threshold step Confident-GNMax (Algorithm 1): a query is answered only
// if its largest count plus N_Z(0, σ1²) reaches the threshold T, and then
// labelled with the class whose count plus N_Z(0, σ2²) is largest, ties
// broken uniformly at random. The noise is the discrete Gaussian, sampled
// exactly (discrete.Gaussian).
//
// What the sampler guarantees: the labels and the answered/withheld
// marks have exactly the distribution of that mechanism; no real number
// is formed. Its Rényi DP is at most that of the continuous Gaussian
// mechanism on the counts (CKS 2020: N_Z(0, σ²) added to an integer query
// of L2 sensitivity Δ is (λ, λΔ²/(2σ²))-RDP for every λ > 1), i.e.
// λ/σ2² for the label (one changed vote moves the counts by √2 in L2) plus
// λ/(2σ1²) for the threshold step (the largest count moves by at most 1).
// PATE's data-dependent analysis applies with noisymax.DiscreteNoise.
// With two classes and no threshold step the label is one bit, and its
// privacy is that bit's: Privacy.Curve lists its pairs of output
// probabilities (noisymax.GNMaxBitPairs), whose exact composition a run
// uses, with the noise's zCDP slope beside them.
type classGNMax struct {
	mech      Mechanism
	steps     noisymax.Steps
	teachers  int
	classes   int
	s1, s2    *discrete.Gaussian
	privacy   Privacy
	ties      []int
	threshold float64
}

// newClassGNMax returns the aggregator of m, of the steps g (g.Noise
// must be noisymax.DiscreteNoise), for K teachers and C classes, with the
// per-query guarantee at delta of stepsPrivacy.
func newClassGNMax(m Mechanism, g noisymax.Steps, teachers, classes int, delta float64) (*classGNMax, error) {
	if g.Noise != noisymax.DiscreteNoise {
		return nil, fmt.Errorf("%s: releases draw discrete Gaussian noise (noisymax.DiscreteNoise), not %v", m.Name(), g.Noise)
	}
	if err := g.CheckFor(teachers); err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name(), err)
	}
	if err := checkClasses(teachers, classes); err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name(), err)
	}
	priv, err := stepsPrivacy(m.Name(), g, delta)
	if err != nil {
		return nil, err
	}
	c := &classGNMax{mech: m, steps: g, teachers: teachers, classes: classes, ties: make([]int, 0, classes), threshold: math.Ceil(g.Threshold), privacy: priv}
	if c.s2, err = discrete.NewGaussian(g.Sigma2); err != nil {
		return nil, err
	}
	if g.Confident() {
		if c.s1, err = discrete.NewGaussian(g.Sigma1); err != nil {
			return nil, err
		}
	}
	if classes == 2 && !g.Confident() {
		// The label is one bit: its exact composition is that of its
		// pairs of output probabilities, tighter than the noise's.
		bits, err := noisymax.GNMaxBitPairs(g.Sigma2, teachers, g.Noise)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name(), err)
		}
		c.privacy.Kind, c.privacy.Bits = accountant.OneBitSpend, bits
		c.privacy.Source += fmt.Sprintf("; with two classes the label is one bit, 1 with probability Pr[D < 2l - K] + Pr[D = 2l - K]/2 at l votes for class 1 (D the difference of two N_Z(0, %.6g^2)), and a run composes its pairs of output probabilities exactly", g.Sigma2)
	}
	return c, nil
}

// stepsPrivacy returns the per-query privacy of the mechanism name of the
// steps g on C-class vote counts, at delta: the guarantee its
// data-independent Rényi curve gives under the paper's conversion, every
// query charged as if answered, and its Gaussian noise as the curve
// (continuous noise too, for the account of a release darrm did not
// draw: pate.Account).
func stepsPrivacy(name provenance.MechanismName, g noisymax.Steps, delta float64) (Privacy, error) {
	if _, err := g.RunSlope(1, 1); err != nil {
		return Privacy{}, err
	}
	spend, order, err := g.Spend(delta)
	if err != nil {
		return Privacy{}, fmt.Errorf("%s: %w", name, err)
	}
	steps := fmt.Sprintf("lambda/sigma2^2 = lambda/%.6g^2", g.Sigma2)
	if g.Confident() {
		steps += fmt.Sprintf(" plus the threshold step's lambda/(2 sigma1^2), sigma1 = %.6g", g.Sigma1)
	}
	kind, ref := "discrete", "; Canonne, Kamath and Steinke 2020"
	if !spend.Discrete {
		kind, ref = "continuous", ""
	}
	return Privacy{
		Source: fmt.Sprintf("%s with %s Gaussian noise is (lambda, %s)-RDP for every lambda (Papernot et al. 2018 Sec. 4%s), (eps, delta)-DP at lambda = %.6g (Theorem B.4.1); every query charged as answered, independently of the votes; assumes a record changes at most one teacher's vote",
			name, kind, steps, ref, order),
		Relation: accountant.OneVote,
		Spend:    spend,
	}, nil
}

// Name returns "gnmax" or "confident-gnmax".
func (g *classGNMax) Name() provenance.MechanismName { return g.mech.Name() }

// K returns the number of teachers.
func (g *classGNMax) K() int { return g.teachers }

// Classes returns C.
func (g *classGNMax) Classes() int { return g.classes }

// Privacy returns the data-independent per-query guarantee.
func (g *classGNMax) Privacy() Privacy { return g.privacy }

// Mechanism returns GNMax, or Confident-GNMax, with its settings and the
// per-query δ.
func (g *classGNMax) Mechanism() Mechanism { return g.mech }

// Answer returns the private label of query q from its C vote counts,
// which sum to K, and whether it was answered (the label is -1 when
// not). Counts of the wrong length or sum are an error that says why.
func (g *classGNMax) Answer(q *votefile.Query, src *noise.Source) (label int, answered bool, err error) {
	counts := q.Counts
	top, err := tally.Counts(counts, g.teachers, g.classes)
	if err != nil {
		return -1, false, err
	}
	if g.s1 != nil {
		// v + Z >= T with v and Z integers is v + Z >= ceil(T).
		if float64(int64(counts[top])+g.s1.Sample(src)) < g.threshold {
			return -1, false, nil
		}
	}
	return noisyArgmax(counts, g.s2.Sample, src, &g.ties), true, nil
}
