package ensemble

import (
	"context"
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/discrete"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/tally"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// Subsample is the majority of floor(m) teachers drawn without
// replacement (Algorithm 8).
type Subsample struct {
	Target
}

// DSub is the majority of 2·floor(m)-1 teachers drawn without replacement
// (Theorem 3.5.1), for pure-DP teachers (Δ = 0).
type DSub struct {
	Target
}

// Name returns "subsample".
func (Subsample) Name() provenance.MechanismName { return "subsample" }

// Name returns "dsub".
func (DSub) Name() provenance.MechanismName { return "dsub" }

// FromHeader: its per-query δ (m is not stated).
func (m Subsample) FromHeader(meta *votefile.LabelMeta) (Mechanism, error) {
	if meta == nil {
		return nil, errNoLabelHeader
	}
	return Subsample{Target{Delta: meta.Delta}}, decode(meta, m.Name(), nil)
}

// FromHeader: its per-query δ (m is not stated).
func (m DSub) FromHeader(meta *votefile.LabelMeta) (Mechanism, error) {
	if meta == nil {
		return nil, errNoLabelHeader
	}
	return DSub{Target{Delta: meta.Delta}}, decode(meta, m.Name(), nil)
}

// Plan: its allowance m.
func (m Subsample) Plan(votefile.Input) Planned {
	return planM(func(v float64) Mechanism { m.M = v; return m })
}

// Plan: its allowance m.
func (m DSub) Plan(votefile.Input) Planned {
	return planM(func(v float64) Mechanism { m.M = v; return m })
}

// Labeler builds the majority of floor(m) teachers for its problem.
func (m Subsample) Labeler(ctx context.Context, _ votefile.Input, k, _ int, teachers accountant.Guarantee, opts Options) (Labeler, string, error) {
	p, err := m.problem(k, teachers)
	if err != nil {
		return nil, "", err
	}
	s, err := newSubsample(ctx, p, opts)
	if err != nil {
		return nil, "", err
	}
	s.mech = Subsample{Target: built(p)}
	return s, s.words("Algorithm 8"), nil
}

// Labeler builds the majority of 2·floor(m)-1 teachers for its problem.
func (m DSub) Labeler(ctx context.Context, _ votefile.Input, k, _ int, teachers accountant.Guarantee, opts Options) (Labeler, string, error) {
	p, err := m.problem(k, teachers)
	if err != nil {
		return nil, "", err
	}
	s, err := newDoubleSubsample(ctx, p, opts)
	if err != nil {
		return nil, "", err
	}
	s.mech = DSub{Target: built(p)}
	return s, s.words("2m-1 of Theorem 3.5.1"), nil
}

// words says what s is, as the result of what.
func (s *subsampleAggregator) words(what string) string {
	return fmt.Sprintf("subsampling: majority of %d of the %d teachers, drawn without replacement (%s)", s.Size(), s.k, what)
}

// subsampleAggregator is the majority of s teachers drawn uniformly without
// replacement (Algorithm 8), a tie of an even s broken by a fair coin. By
// Lemma 3.4.1 it has the output distribution of DaRRM with gamma_Sub.
type subsampleAggregator struct {
	name provenance.MechanismName
	k, s int
	// keep is the threshold of a Bernoulli(c) drawn before subsampling; a
	// failure releases a fair coin. It is 2^53 (c = 1) unless the
	// certificate needed gamma scaled by c < 1 (newDoubleSubsample).
	keep    uint64
	g       gamma.Gamma
	privacy Privacy
	mech    Mechanism
}

// subSlack bounds the change of the privacy cost f between gamma_Sub in
// float64 and the exact rational gamma that subsampling realises: f is
// linear in gamma with coefficients summing in absolute value to at most
// 1 + e^{m·eps}, and gamma.Sub is accurate to 1e-14 (a few ulps; the tests
// check it against math/big).
func subSlack(p constraints.Problem) float64 { return 1e-14 * (1 + p.E()) }

// newSubsample returns the majority of s = floor(m) subsampled teachers,
// the subsampling baseline of Section 3.7.1. Its guarantee is the
// exhaustive certificate of gamma_Sub (Lemma 3.4.1) when that certifies
// (m·eps, delta) with room for gamma_Sub's rounding; otherwise (gamma_Sub
// is exactly tight at m = 1, and whenever Delta = 0) it is composition: the
// label is post-processing of s (eps, Delta)-DP teachers, which are
// (s·eps, 1-(1-Delta)^s)-DP together (Kairouz-Oh-Viswanath 2015, Thm 3.3,
// i = 0), when that is within (m·eps, delta), s·eps rounded up. m·eps is
// the product of the decimals (Problem.MEps): 3 × 0.1 is 0.3, below the
// 3·eps of the float64 eps, so where composition falls short of it by
// that rounding, gamma_Sub (then tight, not violated) is scaled as
// gamma_DSub is: the subsampled majority is kept with probability
// c = 1 - O(1e-13), a fair coin otherwise, with c·gamma_Sub certified.
func newSubsample(ctx context.Context, p constraints.Problem, opts Options) (*subsampleAggregator, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("subsample: %w", err)
	}
	s := gamma.SubSize(p.M)
	g, err := gamma.Sub(p.K, s)
	if err != nil {
		return nil, fmt.Errorf("subsample: %w", err)
	}
	cert, ok, err := certify(ctx, p, g, subSlack(p), opts)
	if err != nil {
		return nil, fmt.Errorf("subsample: certificate: %w", err)
	}
	sub := &subsampleAggregator{name: Subsample{}.Name(), k: p.K, s: s, keep: discrete.Unit53, g: g}
	if ok {
		sub.privacy = Privacy{
			Spend:       accountant.ApproxStep(target(p)),
			Teachers:    teachers(p),
			Source:      fmt.Sprintf("Lemma 3.4.1 (subsampling %d of %d is DaRRM with gamma_Sub) and the exhaustive certificate of gamma_Sub", s, p.K),
			Certificate: &cert,
		}
		return sub.describe(opts.Memo, p), nil
	}
	compEps, compDelta := outward.MulUp(float64(s), p.Eps), constraints.DefaultTargetDelta(p.Delta, float64(s))
	if compEps > p.MEps() || compDelta > p.TargetDelta {
		if cert.Status == gamma.Violated || !(cert.MaxF > 0) {
			return nil, fmt.Errorf("subsample: majority of %d teachers is %w (m·eps, delta)-DP: the certificate of gamma_Sub is %v (max f / budget = %.15g) and composition gives (%g, %g)-DP, which exceeds the target (m·eps, delta) = (%g, %g)",
				s, gamma.ErrNotCertified, cert.Status, cert.Ratio, compEps, compDelta, p.MEps(), p.TargetDelta)
		}
		if sub.keep, sub.g, cert, err = scaleToCertify(ctx, p, g, cert, subSlack(p), opts); err != nil {
			return nil, fmt.Errorf("subsample: %w", err)
		}
		sub.privacy = Privacy{
			Spend:    accountant.ApproxStep(target(p)),
			Teachers: teachers(p),
			Source: fmt.Sprintf("Lemma 3.4.1 (subsampling %d of %d is DaRRM with gamma_Sub) and the exhaustive certificate of c·gamma_Sub, c = %.15g (gamma_Sub itself is exactly tight)",
				s, p.K, discrete.Realised(sub.keep)),
			Certificate: &cert,
		}
		return sub.describe(opts.Memo, p), nil
	}
	sub.privacy = Privacy{
		Spend:    accountant.ApproxStep(target(p)),
		Teachers: teachers(p),
		Source: fmt.Sprintf("composition: the label is post-processing of %d (eps, Delta)-DP teachers, (%g, %.6g)-DP together (Kairouz-Oh-Viswanath 2015 Thm 3.3, i = 0); the certificate of gamma_Sub is %v (max f / budget = %.15g)",
			s, compEps, compDelta, cert.Status, cert.Ratio),
	}
	return sub.describe(opts.Memo, p), nil
}

// newDoubleSubsample returns the majority of 2·floor(m)-1 subsampled
// teachers, or of all K when 2·floor(m)-1 >= K: gamma_DSub of Theorem
// 3.5.1, which the theorem proves m·eps-DP for i.i.d. teachers with
// Delta = delta = 0. Teachers need not be i.i.d. here, so the guarantee is
// the exhaustive certificate of gamma_DSub, which also covers a delta > 0;
// Delta must be 0. That certificate is typically
// exactly tight in float64; then the mechanism first keeps the
// subsampled majority with probability c = 1 - O(1e-13) (a fair coin
// otherwise), with c chosen so that c·gamma_DSub is certified.
func newDoubleSubsample(ctx context.Context, p constraints.Problem, opts Options) (*subsampleAggregator, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("dsub: %w", err)
	}
	if p.Delta != 0 {
		return nil, fmt.Errorf("dsub: Delta = %g: Theorem 3.5.1 needs pure-DP teachers, Delta = 0", p.Delta)
	}
	s := min(2*gamma.SubSize(p.M)-1, p.K)
	g, err := gamma.DSub(p.K, p.M)
	if err != nil {
		return nil, fmt.Errorf("dsub: %w", err)
	}
	slack := subSlack(p)
	cert, ok, err := certify(ctx, p, g, slack, opts)
	if err != nil {
		return nil, fmt.Errorf("dsub: certificate: %w", err)
	}
	sub := &subsampleAggregator{name: DSub{}.Name(), k: p.K, s: s, keep: discrete.Unit53, g: g}
	source := fmt.Sprintf("Theorem 3.5.1 (majority of %d subsampled teachers) for arbitrary teachers by the exhaustive certificate of gamma_DSub", s)
	if !ok {
		if cert.Status == gamma.Violated || !(cert.MaxF > 0) {
			return nil, fmt.Errorf("dsub: gamma_DSub (majority of %d of %d) is %w (m·eps, delta)-DP for arbitrary teachers: %v at (m·eps, delta) = (%g, %g), max f / budget = %.15g; Theorem 3.5.1 covers i.i.d. teachers only",
				s, p.K, gamma.ErrNotCertified, cert.Status, p.MEps(), p.TargetDelta, cert.Ratio)
		}
		if sub.keep, sub.g, cert, err = scaleToCertify(ctx, p, g, cert, slack, opts); err != nil {
			return nil, fmt.Errorf("dsub: %w", err)
		}
		source += fmt.Sprintf(", scaled by c = %.15g (gamma_DSub itself is exactly tight)", discrete.Realised(sub.keep))
	}
	sub.privacy = Privacy{Spend: accountant.ApproxStep(target(p)), Teachers: teachers(p), Source: source, Certificate: &cert}
	return sub.describe(opts.Memo, p), nil
}

// scaleToCertify returns the keep threshold of c·g, with c = 1 - O(1e-13)
// below cert's budget by four times its rounding bound and twice slack,
// the gamma c·g as sampled (discrete.Realised) and its certificate: g is
// exactly tight (cert not violated), and c·g, certified, is the noise
// function the mechanism then samples (f is linear in gamma).
func scaleToCertify(ctx context.Context, p constraints.Problem, g gamma.Gamma, cert gamma.Certificate, slack float64, opts Options) (uint64, gamma.Gamma, gamma.Certificate, error) {
	keep := discrete.Threshold((cert.Budget - 4*cert.ErrBound - 2*slack) / cert.MaxF)
	scaled := g.Scale(discrete.Realised(keep))
	cert, ok, err := certify(ctx, p, scaled, slack, opts)
	if err != nil {
		return 0, nil, cert, fmt.Errorf("certificate: %w", err)
	}
	if !ok {
		return 0, nil, cert, fmt.Errorf("c·gamma with c = %.17g is %w (m·eps, delta)-DP: %v, max f / budget = %.15g", discrete.Realised(keep), gamma.ErrNotCertified, cert.Status, cert.Ratio)
	}
	return keep, scaled, cert, nil
}

// Name returns "subsample" (s = floor(m)) or "dsub" (s = 2·floor(m)-1).
func (s *subsampleAggregator) Name() provenance.MechanismName { return s.name }

// K returns the number of teachers.
func (s *subsampleAggregator) K() int { return s.k }

// Size returns the number of teachers subsampled.
func (s *subsampleAggregator) Size() int { return s.s }

// Privacy returns the per-query guarantee and its justification.
func (s *subsampleAggregator) Privacy() Privacy { return s.privacy }

// Gamma returns gamma_Sub (times c for a scaled dsub), the DaRRM noise
// function with the same output distribution.
func (s *subsampleAggregator) Gamma() gamma.Gamma { return s.g }

// Classes returns 2: the votes are 0 or 1.
func (s *subsampleAggregator) Classes() int { return 2 }

// Mechanism returns the mechanism as built.
func (s *subsampleAggregator) Mechanism() Mechanism { return s.mech }

// Answer releases the label of q from its votes (Aggregate).
func (s *subsampleAggregator) Answer(q *votefile.Query, src *noise.Source) (int, bool, error) {
	b, err := s.Aggregate(q.Votes, src)
	if err != nil {
		return -1, false, err
	}
	return int(b), true, nil
}

// Aggregate releases the label of one query. Every vote is checked,
// not only the sampled ones, so that bad input fails whatever the draw.
func (s *subsampleAggregator) Aggregate(votes []byte, src *noise.Source) (byte, error) {
	all, err := tally.Votes(s.k, votes)
	if err != nil {
		return 0, err
	}
	if s.keep < discrete.Unit53 {
		if w := src.Uint64(); w>>11 >= s.keep {
			return byte(w & 1), nil
		}
	}
	ones := all
	if s.s != s.k {
		ones = 0
		// Selection sampling (Knuth's Algorithm S): teacher i is taken with
		// probability need/(K-i), which draws a uniform s-subset.
		need := s.s
		for i := 0; need > 0; i++ {
			if src.IntN(s.k-i) < need {
				ones += int(votes[i])
				need--
			}
		}
	}
	switch {
	case 2*ones > s.s:
		return 1, nil
	case 2*ones < s.s:
		return 0, nil
	}
	return byte(src.Uint64() & 1), nil
}

// describe sets the label's pairs of output probabilities at every
// corner multiset of the teachers (privateTeacherBits), when there are
// not too many, and returns s: Pr[1 | L = l] is probOne of the gamma it
// realises, gamma_Sub accurate to 1e-14 (subSlack).
func (s *subsampleAggregator) describe(m *accountant.Memo, p constraints.Problem) *subsampleAggregator {
	// gamma_Sub is within 1e-14 of what subsampling realises; Pr[0] is
	// computed as 1 - Pr[1], one rounding more.
	f := labelProbs{one: make([]float64, s.k+1), zero: make([]float64, s.k+1), abs: 1e-14 + 0x1p-53}
	for l := range f.one {
		f.one[l] = probOne(s.g, l)
		f.zero[l] = 1 - f.one[l]
	}
	if bits, ok := privateTeacherBits(m, p, f); ok {
		s.privacy.Kind, s.privacy.Bits = accountant.OneBitSpend, bits
	} else {
		s.privacy.CurveMissing = tooManyConfigs(p)
	}
	return s
}
