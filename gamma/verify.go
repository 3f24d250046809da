package gamma

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/internal/enum"
	"github.com/darrm/darrm/internal/param"
)

// Status is the verdict of a certificate: Certified (private, the zero
// value), Tight (within the rounding bound of the budget, so not shown
// private in float64) or Violated (not private).
// A Status prints and reads as its name (its String, MarshalText and
// UnmarshalText).
type Status int

const (
	// Certified: max f + error bound <= budget. DaRRM_gamma is (m·eps, delta)-DP.
	Certified Status = iota
	// Tight: max f is within the floating-point error bound of the budget.
	// Exact arithmetic might show the gamma private (gamma_Sub at m = 1 is
	// exactly tight, for instance) but float64 cannot; Certify scales such
	// a gamma by 1 - O(1e-12) to make it certified.
	Tight
	// Violated: max f - error bound > budget. DaRRM_gamma is not (m·eps, delta)-DP.
	Violated
)

var statusNames = enum.Names[Status]{What: "certificate status", List: []string{Certified: "certified", Tight: "tight", Violated: "violated"}}

// String returns the name of s.
func (s Status) String() string { return statusNames.String(s) }

// MarshalText returns the name of s.
func (s Status) MarshalText() ([]byte, error) { return []byte(statusNames.String(s)), nil }

// UnmarshalText sets s from its name.
func (s *Status) UnmarshalText(text []byte) error { return statusNames.Unmarshal(s, text) }

// Certificate is the outcome of the exhaustive privacy check of a gamma
// (docs/solve.md, "Certification"): the maximum of the privacy cost f over all
// corner multisets against the budget e^{m·eps} - 1 + 2·delta of Lemma 3.4.4;
// in the one-vote relation, the largest of its 4K inequalities against the
// same budget at m = 1.
type Certificate struct {
	MaxF     float64              `json:"max_f"`
	Budget   float64              `json:"budget"`
	Ratio    float64              `json:"ratio"`     // MaxF / Budget
	ErrBound float64              `json:"err_bound"` // bound on |computed - exact| of MaxF
	Status   Status               `json:"status"`
	Worst    constraints.Config   `json:"worst_counts"` // teachers at each corner in the worst case
	Corners  []constraints.Corner `json:"corners"`
	Configs  *big.Int             `json:"configs_checked"` // corner multisets covered
	// Relation is the neighbouring relation checked, omitted for DaRRM's.
	// In the one-vote relation the corner multisets are the 2K pairs of
	// vote vectors that differ in one vote, each checked for both outputs.
	Relation accountant.Relation `json:"relation,omitempty"`
}

// ErrNotCertified is wrapped by Certificate.Err when a gamma fails its
// certificate, and by package ensemble's constructors when a mechanism's
// noise function fails it: DaRRM with it is not (m·eps, delta)-DP, or not
// provably so.
var ErrNotCertified = errors.New("not certified")

// Err returns nil for a certified gamma, and otherwise an error wrapping
// ErrNotCertified that gives the verdict and max f / budget.
func (c Certificate) Err() error {
	if c.Status == Certified {
		return nil
	}
	return fmt.Errorf("gamma is %w (m·eps, delta)-DP: %v, max f / budget = %.15g", ErrNotCertified, c.Status, c.Ratio)
}

// VerifyOptions tune the exhaustive check of Verify, Certify and
// Shard.Verify. The zero value is ready to use.
type VerifyOptions struct {
	// Workers is the number of goroutines of the exhaustive pass; 0 means
	// GOMAXPROCS. The certificate does not depend on it.
	Workers int
	// Progress, if set, receives the fraction of each exhaustive pass done,
	// in [0, 1]; calls are serialised.
	Progress func(fraction float64)
	// Separation, if set, is the exhaustive separation of the gamma given
	// to Certify, already run (constraints.Problem.Separate over every
	// corner multiset, as the last pass of a cutting-plane solve is):
	// Certify takes its first certificate from it in place of a pass of
	// its own, and refuses one that does not cover every multiset. Only
	// Certify reads it.
	Separation *constraints.Separation
}

// Verify computes the certificate of g for the problem p by exact
// separation over every corner multiset (constraints.Problem.Separate).
func Verify(ctx context.Context, p constraints.Problem, g Gamma, opts VerifyOptions) (Certificate, error) {
	if err := checkFor(p, g); err != nil {
		return Certificate{}, err
	}
	sep, err := p.Separate(ctx, g, constraints.SeparateOptions{Workers: opts.Workers, Progress: opts.Progress})
	if err != nil {
		return Certificate{}, fmt.Errorf("certifying gamma (K = %d): %w", p.K, err)
	}
	return newCertificate(p, sep), nil
}

// checkFor checks that p is a valid problem and g a noise function for it.
func checkFor(p constraints.Problem, g Gamma) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return g.CheckFor(p.K)
}

// newCertificate is the certificate of an exhaustive separation sep of p:
// the verdict compares sep's max f, with its rounding bound, to p's budget.
// sep must cover every corner multiset, as Problem.Separate does.
func newCertificate(p constraints.Problem, sep constraints.Separation) Certificate {
	b := p.Budget()
	c := Certificate{
		MaxF: sep.MaxF, Budget: b, Ratio: sep.MaxF / b, ErrBound: sep.ErrBound,
		Worst: sep.Worst, Corners: p.Corners(), Configs: sep.Configs, Relation: p.Relation,
	}
	switch {
	case sumAtMost(sep.MaxF, sep.ErrBound, b):
		c.Status = Certified
	case sep.MaxF-sep.ErrBound > b:
		c.Status = Violated
	default:
		c.Status = Tight
	}
	return c
}

// sumAtMost reports whether x + y <= z as real numbers. ErrBound covers
// the errors of max f and of the budget, not the rounding of their sum:
// fl(x + y) <= z passes a sum up to half an ulp above z. When the rounded
// sum equals z, its rounding error (TwoSum, exact) decides.
func sumAtMost(x, y, z float64) bool {
	s := x + y
	if s != z {
		return s < z
	}
	yy := s - x
	return (x-(s-yy))+(y-yy) <= 0
}

// Certify returns g scaled down just enough to be certified, and its
// certificate. Privacy costs are linear in gamma, so scaling by
// (budget - 2·error bound)/max f brings max f below the budget with a
// margin covering rounding; the returned certificate comes from a fresh
// exhaustive pass on the returned gamma. A gamma already certified is
// returned unchanged. The first certificate, of g itself, comes from
// opts.Separation when it is set, and otherwise from Verify.
//
// In the one-vote relation the gamma returned is also one that ensemble's
// samplers realise exactly (Gamma.Realised): there, rounding a value down can
// break an inequality (a lower gamma(l) above K/2 raises Pr[output 0 | l],
// which must stay within e^eps of its neighbours'), so the certificate is
// of the gamma as sampled. A gamma already certified and realised exactly
// is returned unchanged.
func Certify(ctx context.Context, p constraints.Problem, g Gamma, opts VerifyOptions) (Gamma, Certificate, error) {
	cert, err := firstCertificate(ctx, p, g, opts)
	if err != nil {
		return nil, Certificate{}, err
	}
	// Every pass below is of another gamma than the separation's.
	opts.Separation = nil
	// sampled is the gamma to certify in place of g.
	sampled := func(g Gamma) Gamma { return g }
	if p.Relation == accountant.OneVote {
		sampled = Gamma.Realised
		if r := g.Realised(); !slices.Equal(r, g) {
			g = r
			if cert, err = Verify(ctx, p, g, opts); err != nil {
				return nil, Certificate{}, err
			}
		}
	}
	for attempt := 0; attempt < 4 && cert.Status != Certified; attempt++ {
		c := (cert.Budget - float64(int(2)<<attempt)*cert.ErrBound) / cert.MaxF
		if !(c > 0) {
			// A parameter of the problem, not a failure: its budget is
			// below what floating point can certify.
			return nil, cert, fmt.Errorf("certify K=%d: %w", p.K, &param.Error{Name: "m·eps", Value: p.MEps(),
				Rule: fmt.Sprintf("its budget e^{m·eps} - 1 + 2·delta = %g is too small to certify against the rounding error %g", cert.Budget, cert.ErrBound)})
		}
		g = sampled(g.Scale(c))
		if cert, err = Verify(ctx, p, g, opts); err != nil {
			return nil, Certificate{}, err
		}
	}
	if cert.Status != Certified {
		return nil, cert, fmt.Errorf("certify K=%d: still %v after scaling (max f %.17g, budget %.17g)", p.K, cert.Status, cert.MaxF, cert.Budget)
	}
	return g, cert, nil
}

// firstCertificate is the certificate of g that Certify starts from: that
// of opts.Separation when it is set, which must cover every corner
// multiset of p in one part, and otherwise Verify's.
func firstCertificate(ctx context.Context, p constraints.Problem, g Gamma, opts VerifyOptions) (Certificate, error) {
	sep := opts.Separation
	if sep == nil {
		return Verify(ctx, p, g, opts)
	}
	if err := checkFor(p, g); err != nil {
		return Certificate{}, err
	}
	if want := p.NumConfigs(); sep.Shards > 1 || sep.Configs == nil || sep.Configs.Cmp(want) != 0 {
		return Certificate{}, fmt.Errorf("certify K=%d: the separation given covers %v of the %v corner multisets (shard %d of %d): a certificate needs all of them", p.K, sep.Configs, want, sep.Shard, sep.Shards)
	}
	return newCertificate(p, *sep), nil
}
