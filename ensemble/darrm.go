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
	"github.com/darrm/darrm/votefile"
)

// DaRRM is DaRRM (thesis Algorithm 1) for private teachers: the majority
// with probability gamma(L), a fair coin otherwise, the gamma Gamma gives
// for its problem (K, m, the teachers' (ε, Δ), δ), certified
// exhaustively before anything is released. optimal.Source is the source
// of gamma_opt (from a cache or solved) or of a gamma given.
type DaRRM struct {
	Target
	Gamma GammaSource `json:"-" flag:"prior,gamma,no-solve"`
}

// Name returns "darrm".
func (DaRRM) Name() provenance.MechanismName { return "darrm" }

// Needs: the teachers' guarantee, and a γ source.
func (DaRRM) Needs(votefile.Input) Needs { return Needs{Teachers: true, Gamma: true} }

// Missing: m, and a γ source.
func (m DaRRM) Missing(votefile.Input) error { return needGamma(m.Name(), m.Gamma, m.needM()) }

// FromHeader: its per-query δ (m is not stated).
func (m DaRRM) FromHeader(meta *votefile.LabelMeta) (Mechanism, error) {
	if meta == nil {
		return nil, errNoLabelHeader
	}
	return DaRRM{Target: Target{Delta: meta.Delta}}, decode(meta, m.Name(), nil)
}

// Plan: its allowance m.
func (m DaRRM) Plan(votefile.Input) Planned {
	return planM(func(v float64) Mechanism { m.M = v; return m })
}

// Labeler builds DaRRM for its problem, its γ loaded from its source.
func (m DaRRM) Labeler(ctx context.Context, _ votefile.Input, k, _ int, teachers accountant.Guarantee, opts Options) (Labeler, string, error) {
	p, err := m.problem(k, teachers)
	if err != nil {
		return nil, "", err
	}
	g, words, err := loadGamma(ctx, m.Name(), m.Gamma, p, &opts)
	if err != nil {
		return nil, "", err
	}
	d, err := newPrivateDaRRM(ctx, p, g, opts)
	if err != nil {
		return nil, "", err
	}
	d.mech = DaRRM{Target: built(p)}
	return d, "DaRRM with " + words, nil
}

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
	if bits, ok := d.privateTeacherBits(opts.Memo, p); ok {
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
