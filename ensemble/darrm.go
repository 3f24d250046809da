package ensemble

import (
	"context"
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/tally"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/provenance"
)

// darrmAggregator is Algorithm 1 with a certified noise function: the majority of
// the votes with probability gamma(L), a fair coin otherwise.
type darrmAggregator struct {
	table
	g       gamma.Gamma
	privacy Privacy
}

// newPrivateDaRRM returns DaRRM_g for problem p. It runs the exhaustive
// certificate (gamma.Verify) on the noise function it will sample,
// gamma~(l) = floor(g(l)·2^53)/2^53, and refuses it unless it is Certified
// for (K, m·eps, delta): a gamma from a cache or a file is trusted only
// through a fresh certificate. The cost is milliseconds at K = 11 and about
// two seconds at K = 101 with Delta > 0.
//
// p must be in DaRRM's relation (private teachers); newOneVoteDaRRM builds
// DaRRM in the one-vote relation.
func newPrivateDaRRM(ctx context.Context, p constraints.Problem, g gamma.Gamma, opts Options) (*darrmAggregator, error) {
	if p.Relation != accountant.PrivateTeachers {
		return nil, fmt.Errorf("DaRRM: relation %v: DaRRM is for private teachers (darrm-one-vote is for the one-vote relation)", p.Relation)
	}
	d, err := newDaRRM(ctx, p, g, opts, Privacy{
		Teachers: teachers(p),
		Source:   "exhaustive certificate of the sampled gamma (Lemma 3.4.4 over every corner multiset, Lemma 3.6.1)",
	})
	if err != nil {
		return nil, err
	}
	if bits, ok := d.privateTeacherBits(p); ok {
		d.privacy.Kind, d.privacy.Bits = accountant.OneBitSpend, bits
	} else {
		d.privacy.CurveMissing = tooManyConfigs(p)
	}
	return d, nil
}

// newDaRRM returns DaRRM_g for problem p, whose privacy is priv with the
// target of p and the certificate of the gamma sampled, which it refuses
// unless Certified.
func newDaRRM(ctx context.Context, p constraints.Problem, g gamma.Gamma, opts Options, priv Privacy) (*darrmAggregator, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("DaRRM: %w", err)
	}
	if err := g.CheckFor(p.K); err != nil {
		return nil, fmt.Errorf("DaRRM: %w", err)
	}
	tb, real := newTable(g)
	cert, ok, err := certify(ctx, p, real, 0, opts)
	if err != nil {
		return nil, fmt.Errorf("DaRRM: certificate: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("DaRRM: gamma for K=%d m=%g eps=%g Delta=%g delta=%g (%v relation) is %w (m·eps, delta)-DP: %v, max f / budget = %.15g", p.K, p.M, p.Eps, p.Delta, p.TargetDelta, p.Relation, gamma.ErrNotCertified, cert.Status, cert.Ratio)
	}
	priv.Spend, priv.Certificate = accountant.ApproxStep(target(p)), &cert
	return &darrmAggregator{table: tb, g: real, privacy: priv}, nil
}

// Name returns "darrm", or "darrm-one-vote" in the one-vote relation
// (newOneVoteDaRRM).
func (d *darrmAggregator) Name() provenance.MechanismName {
	if d.privacy.Relation == accountant.OneVote {
		return OneVoteDaRRM{}.Name()
	}
	return DaRRM{}.Name()
}

// K returns the number of teachers.
func (d *darrmAggregator) K() int { return d.k }

// Privacy returns the per-query guarantee and its certificate.
func (d *darrmAggregator) Privacy() Privacy { return d.privacy }

// Gamma returns the noise function sampled, floor(g·2^53)/2^53.
func (d *darrmAggregator) Gamma() gamma.Gamma { return d.g }

// Aggregate releases the label of one query.
func (d *darrmAggregator) Aggregate(votes []byte, src *noise.Source) (byte, error) {
	l, err := tally.Votes(d.k, votes)
	if err != nil {
		return 0, err
	}
	return d.release(l, src), nil
}

// rrAggregator is randomized response on the majority (Algorithm 7): the majority
// with the constant probability p_const of Lemma B.1.1, a fair coin
// otherwise. It is DaRRM with gamma = p_const.
type rrAggregator struct {
	table
	g       gamma.Gamma
	pconst  float64
	privacy Privacy
}

// newRR returns randomized response for problem p. p_const comes from
// Lemma B.1.1 with the majority of the K (eps, Delta)-DP teachers taken to
// be (tau·eps, lambda)-DP by composition method (slack deltaPrime for
// general and optimal; gamma.NewRRConst). The sampled constant
// floor(p_const·2^53)/2^53 must also pass the exhaustive certificate, so
// the guarantee does not rest on the lemma's arithmetic alone.
func newRR(ctx context.Context, p constraints.Problem, method accountant.Method, deltaPrime float64, opts Options) (*rrAggregator, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("RR: %w", err)
	}
	b, err := gamma.RRBaseline(p, method, deltaPrime)
	if err != nil {
		return nil, err
	}
	tb, real := newTable(b.Gamma)
	cert, ok, err := certify(ctx, p, real, 0, opts)
	if err != nil {
		return nil, fmt.Errorf("RR: certificate: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("%s is %w (m·eps, delta)-DP: %v, max f / budget = %.15g", b.Label, gamma.ErrNotCertified, cert.Status, cert.Ratio)
	}
	// The label's pairs of output probabilities: at every corner multiset
	// of the teachers when there are not too many, else from the
	// majority's guarantee that p_const was chosen for
	// (gamma.NewRRConst), a looser region.
	bits, ok := tb.privateTeacherBits(p)
	if !ok {
		maj, err := accountant.Compose(teachers(p), p.K, method, deltaPrime)
		if err != nil {
			return nil, fmt.Errorf("RR: %w", err)
		}
		if bits, err = accountant.RRBits(real[0], maj); err != nil {
			return nil, fmt.Errorf("RR: %w", err)
		}
	}
	return &rrAggregator{
		table:  tb,
		g:      real,
		pconst: real[0],
		privacy: Privacy{
			Spend:       accountant.Spend{Kind: accountant.OneBitSpend, Guarantee: target(p), Bits: bits},
			Teachers:    teachers(p),
			Source:      b.Label + ", confirmed by the exhaustive certificate of gamma = p_const",
			Certificate: &cert,
		},
	}, nil
}

// Name returns "rr".
func (r *rrAggregator) Name() provenance.MechanismName { return RR{}.Name() }

// K returns the number of teachers.
func (r *rrAggregator) K() int { return r.k }

// Privacy returns the per-query guarantee and its certificate.
func (r *rrAggregator) Privacy() Privacy { return r.privacy }

// Gamma returns the constant noise function sampled.
func (r *rrAggregator) Gamma() gamma.Gamma { return r.g }

// PConst returns the probability of releasing the majority, as sampled.
func (r *rrAggregator) PConst() float64 { return r.pconst }

// Aggregate releases the label of one query.
func (r *rrAggregator) Aggregate(votes []byte, src *noise.Source) (byte, error) {
	l, err := tally.Votes(r.k, votes)
	if err != nil {
		return 0, err
	}
	return r.release(l, src), nil
}
