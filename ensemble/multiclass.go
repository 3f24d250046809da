package ensemble

import (
	"context"
	"fmt"
	"math"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/discrete"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/tally"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// ConfidentGNMax is Confident-GNMax on vote counts of C classes
// (Papernot et al. 2018, Algorithm 1): a query is answered only if its
// largest count plus noise of deviation Sigma1 > 0 reaches Threshold, and
// an answered query gets GNMax's label, the argmax of the counts plus
// noise of deviation Sigma2; its guarantee is at the per-query Delta > 0.
// A zero Noise is noisymax.DiscreteNoise, which releases draw. A label
// file's header states its settings but Delta (the header's own) by their
// JSON keys.
//
// With Sigma1 = 0 (and no Threshold) the value is GNMax on the counts,
// without the threshold step: the settings that GNMaxFamily returns for
// GNMax and that package pate accounts. Validate refuses it as a
// mechanism (it is GNMax); ValidateFor and RunSlope take it.
type ConfidentGNMax struct {
	Threshold float64        `json:"threshold" flag:"threshold"`
	Sigma1    float64        `json:"sigma1" flag:"sigma1"`
	Sigma2    float64        `json:"sigma2" flag:"sigma2"`
	Noise     noisymax.Noise `json:"noise,omitempty" flag:"noise"`
	Delta     float64        `json:"-" flag:"delta"`
}

// Name returns "confident-gnmax".
func (ConfidentGNMax) Name() provenance.MechanismName { return "confident-gnmax" }

// Validate checks the threshold step's σ1 > 0, the steps' own rules
// (their noise and σ, a finite threshold) and δ.
func (m ConfidentGNMax) Validate() error {
	if !(m.Sigma1 > 0) {
		return &param.Error{Name: "sigma1", Value: m.Sigma1, Rule: "must be > 0"}
	}
	if err := m.Drawn().checkSteps(); err != nil {
		return err
	}
	return param.ConversionDelta("delta", m.Delta)
}

// Confident reports whether m has the threshold step (Sigma1 != 0).
func (m ConfidentGNMax) Confident() bool { return m.Sigma1 != 0 }

// checkSteps checks the noise and σ of each step, and a finite
// threshold; Sigma1 = 0 is GNMax, whose threshold must be 0. Delta is not
// read.
func (m ConfidentGNMax) checkSteps() error {
	if err := m.Noise.Check("sigma2", m.Sigma2); err != nil {
		return err
	}
	if m.Sigma1 == 0 {
		if m.Threshold != 0 {
			return &param.Error{Name: "threshold", Value: m.Threshold, Rule: "needs sigma1 > 0 (the threshold step's noise)"}
		}
		return nil
	}
	if err := m.Noise.Check("sigma1", m.Sigma1); err != nil {
		return err
	}
	if math.IsNaN(m.Threshold) || math.IsInf(m.Threshold, 0) {
		return &param.Error{Name: "threshold", Value: m.Threshold, Rule: "must be a finite number"}
	}
	return nil
}

// thresholdReach is how many σ1 above K a threshold may lie: beyond it the
// step answers no query (Pr[N(0, 1) >= 10] < 10^-23), yet every query is
// charged for it.
const thresholdReach = 10

// ValidateFor checks the steps of m (their noise, as set, and σ; δ is not
// read) for K teachers: a threshold step must be able to both answer and
// withhold, so its threshold is in [0, K + 10·σ1]. Below 0 it is the
// threshold 0 (no count is negative); beyond, no query is ever answered.
// A setting that does nothing is refused rather than charged. Sigma1 = 0
// is GNMax's settings. Teachers = 0 (K not known yet) checks the steps
// alone.
func (m ConfidentGNMax) ValidateFor(teachers int) error {
	if err := m.checkSteps(); err != nil {
		return err
	}
	if hi := float64(teachers) + thresholdReach*m.Sigma1; teachers > 0 && m.Confident() && !(m.Threshold >= 0 && m.Threshold <= hi) {
		return &param.Error{Name: "threshold", Value: m.Threshold, Rule: fmt.Sprintf("must be in [0, K + %d·sigma1] = [0, %v]: below 0 it is the threshold 0, and beyond no query is ever answered (yet each is charged)", thresholdReach, hi)}
	}
	return nil
}

// RunSlope returns the slope ρ of the data-independent Rényi curve ρ·λ of
// queries threshold steps and labels label steps of m (for GNMax, which
// has no threshold step, labels steps), rounded up: the curve of a run
// that asks at most queries and labels at most labels of them, whichever
// they are. GNMax's label is λ/σ2²-RDP (a changed vote moves two counts by
// one), the threshold step λ/(2σ1²).
func (m ConfidentGNMax) RunSlope(queries, labels int) (float64, error) {
	if err := m.checkSteps(); err != nil {
		return 0, fmt.Errorf("PATE: %w", err)
	}
	if queries < 0 || labels < 0 {
		return 0, fmt.Errorf("PATE: %d queries, %d labels: must be >= 0", queries, labels)
	}
	one := outward.Exact(1)
	square := func(s float64) outward.Interval { return outward.Exact(s).Mul(outward.Exact(s)) }
	r := one.Div(square(m.Sigma2)).Mul(outward.Exact(float64(labels)))
	if m.Confident() {
		r = r.Add(one.Div(outward.Exact(2).Mul(square(m.Sigma1))).Mul(outward.Exact(float64(queries))))
	}
	return r.Hi, nil
}

// Drawn returns m as a release draws it: its noise, when unset, the
// discrete Gaussian. It is the one place of that default, which a label
// file's header, a PTR test and an account all state.
func (m ConfidentGNMax) Drawn() ConfidentGNMax {
	if m.Noise == noisymax.UnsetNoise {
		m.Noise = noisymax.DiscreteNoise
	}
	return m
}

func (ConfidentGNMax) inputs() []votefile.Input       { return manyClassVotes }
func (ConfidentGNMax) Relation() accountant.Relation  { return accountant.OneVote }
func (ConfidentGNMax) calibrated(votefile.Input) bool { return false }

func (m ConfidentGNMax) unsetSetting(votefile.Input) error {
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

func (m ConfidentGNMax) settings() any { return m }

func (ConfidentGNMax) fromHeader(h *labelHeader) (Mechanism, error) {
	var m ConfidentGNMax
	err := h.decode(m.Name(), &m)
	m.Delta = h.meta.Delta
	return m, err
}

// planned: σ2 (a plan sets σ1 at its ratio to it).
func (m ConfidentGNMax) planned(votefile.Input) (string, func(float64) Mechanism) {
	return "sigma2", func(v float64) Mechanism { m.Sigma2 = v; return m }
}

// WithThreshold returns m with the threshold step of threshold t and
// noise deviation sigma1: what a plan chooses on proxy votes, beside the
// σ2 it is planned by (Planned).
func (m ConfidentGNMax) WithThreshold(t, sigma1 float64) Mechanism {
	m.Threshold, m.Sigma1 = t, sigma1
	return m
}

// chargedPerDraw: Confident-GNMax charged when drawn, its GNMax step
// drawn and charged only when its threshold step answered.
func (m ConfidentGNMax) chargedPerDraw() (Mechanism, bool) {
	return ProgressiveGNMax{Levels: Levels{m.Sigma2}, Threshold: m.Threshold, Sigma1: m.Sigma1}, true
}

// family returns the settings of m's steps (Delta zero).
func (m ConfidentGNMax) family() ConfidentGNMax { m.Delta = 0; return m }

func (m ConfidentGNMax) labeler(ctx context.Context, b *build) (Labeler, string, error) {
	return classLabeler(m.Drawn(), b.k, b.classes, m.Delta)
}

// GNMaxFamily returns the settings of m's steps as they are set (a zero
// Noise unset, Delta zero; GNMax's without the threshold step) when m is
// of the GNMax family on the class counts of votes of classes classes,
// and whether it is: ConfidentGNMax, and GNMax given its Sigma2 or on
// classes other than 2 (0 for counts of any classes).
func GNMaxFamily(m Mechanism, classes int) (ConfidentGNMax, bool) {
	f, ok := m.(interface{ family() ConfidentGNMax })
	if !ok || votesOf(m, classes) != votefile.ManyClasses {
		return ConfidentGNMax{}, false
	}
	return f.family(), true
}

// classLabeler returns the labeler of g (GNMax or Confident-GNMax) for K
// teachers and C classes, its guarantee at delta, and says what it is.
func classLabeler(g ConfidentGNMax, teachers, classes int, delta float64) (Labeler, string, error) {
	if err := param.GuaranteeDelta("delta", delta); err != nil {
		return nil, "", err
	}
	agg, err := newClassGNMax(g, teachers, classes, delta)
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
	mech      ConfidentGNMax
	teachers  int
	classes   int
	s1, s2    *discrete.Gaussian
	privacy   Privacy
	ties      []int
	threshold float64
}

// newClassGNMax returns the aggregator m (m.Noise must be
// noisymax.DiscreteNoise) for K teachers and C classes, with the
// per-query guarantee at delta of ConfidentGNMax.Privacy.
func newClassGNMax(m ConfidentGNMax, teachers, classes int, delta float64) (*classGNMax, error) {
	if m.Noise != noisymax.DiscreteNoise {
		return nil, fmt.Errorf("%s: releases draw discrete Gaussian noise (noisymax.DiscreteNoise), not %v", gnmaxName(m), m.Noise)
	}
	if err := m.ValidateFor(teachers); err != nil {
		return nil, fmt.Errorf("%s: %w", gnmaxName(m), err)
	}
	if err := checkClasses(teachers, classes); err != nil {
		return nil, fmt.Errorf("%s: %w", gnmaxName(m), err)
	}
	m.Delta = delta
	priv, err := m.Privacy()
	if err != nil {
		return nil, err
	}
	g := &classGNMax{mech: m, teachers: teachers, classes: classes, ties: make([]int, 0, classes), threshold: math.Ceil(m.Threshold), privacy: priv}
	if g.s2, err = discrete.NewGaussian(m.Sigma2); err != nil {
		return nil, err
	}
	if m.Confident() {
		if g.s1, err = discrete.NewGaussian(m.Sigma1); err != nil {
			return nil, err
		}
	}
	if classes == 2 && !m.Confident() {
		// The label is one bit: its exact composition is that of its
		// pairs of output probabilities, tighter than the noise's.
		bits, err := noisymax.GNMaxBitPairs(m.Sigma2, teachers, m.Noise)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", gnmaxName(m), err)
		}
		g.privacy.Kind, g.privacy.Bits = accountant.OneBitSpend, bits
		g.privacy.Source += fmt.Sprintf("; with two classes the label is one bit, 1 with probability Pr[D < 2l - K] + Pr[D = 2l - K]/2 at l votes for class 1 (D the difference of two N_Z(0, %.6g^2)), and a run composes its pairs of output probabilities exactly", m.Sigma2)
	}
	return g, nil
}

// Privacy returns the per-query privacy of m, Confident-GNMax or (Sigma1
// = 0) GNMax on C-class vote counts, at m.Delta: the guarantee its
// data-independent Rényi curve gives under the paper's conversion, every
// query charged as if answered, and its Gaussian noise as the curve
// (continuous noise too, for the account of a release darrm did not
// draw: pate.Account).
func (m ConfidentGNMax) Privacy() (Privacy, error) {
	delta := m.Delta
	rho, err := m.RunSlope(1, 1)
	if err != nil {
		return Privacy{}, err
	}
	eps, order, err := accountant.PaperConversion.RhoToDP(rho, delta)
	if err != nil {
		return Privacy{}, fmt.Errorf("%s: %w", gnmaxName(m), err)
	}
	steps := fmt.Sprintf("lambda/sigma2^2 = lambda/%.6g^2", m.Sigma2)
	if m.Confident() {
		steps += fmt.Sprintf(" plus the threshold step's lambda/(2 sigma1^2), sigma1 = %.6g", m.Sigma1)
	}
	discrete := m.Noise == noisymax.DiscreteNoise
	kind, ref := "discrete", "; Canonne, Kamath and Steinke 2020"
	if !discrete {
		kind, ref = "continuous", ""
	}
	return Privacy{
		Source: fmt.Sprintf("%s with %s Gaussian noise is (lambda, %s)-RDP for every lambda (Papernot et al. 2018 Sec. 4%s), (eps, delta)-DP at lambda = %.6g (Theorem B.4.1); every query charged as answered, independently of the votes; assumes a record changes at most one teacher's vote",
			gnmaxName(m), kind, steps, ref, order),
		Relation: accountant.OneVote,
		Spend:    accountant.Spend{Kind: accountant.GaussianSpend, Guarantee: accountant.Guarantee{Eps: eps, Delta: delta}, Discrete: discrete, Gaussian: gnmaxParts(m)},
	}, nil
}

// gnmaxParts returns the Gaussian parts of one query of m: the label's
// two counts that a changed vote moves (σ2), and the threshold step's
// largest count (σ1).
func gnmaxParts(m ConfidentGNMax) []accountant.GaussianPart {
	parts := []accountant.GaussianPart{{Sigma: m.Sigma2, Coords: 2}}
	if m.Confident() {
		parts = append(parts, accountant.GaussianPart{Sigma: m.Sigma1, Coords: 1})
	}
	return parts
}

func gnmaxName(m ConfidentGNMax) provenance.MechanismName {
	if m.Confident() {
		return ConfidentGNMax{}.Name()
	}
	return GNMax{}.Name()
}

// Name returns "gnmax" or "confident-gnmax".
func (g *classGNMax) Name() provenance.MechanismName { return gnmaxName(g.mech) }

// K returns the number of teachers.
func (g *classGNMax) K() int { return g.teachers }

// Classes returns C.
func (g *classGNMax) Classes() int { return g.classes }

// Privacy returns the data-independent per-query guarantee.
func (g *classGNMax) Privacy() Privacy { return g.privacy }

// Mechanism returns GNMax of σ2, or Confident-GNMax of T, σ1 and σ2,
// with the noise and the per-query δ.
func (g *classGNMax) Mechanism() Mechanism {
	m, delta := g.mech, g.privacy.Delta
	if m.Confident() {
		m.Delta = delta
		return m
	}
	return GNMax{Target: Target{Delta: delta}, Sigma2: m.Sigma2, Noise: m.Noise}
}

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
