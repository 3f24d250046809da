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

// RR is randomized response on the majority (Algorithm 7) with p_const of
// Lemma B.1.1 by Composition (zero: the thesis' composition for the
// teachers' Δ, accountant.RRComposition, with slack
// accountant.DefaultDeltaPrime; a zero DeltaPrime is that default).
type RR struct {
	Target
	Composition accountant.Composition `json:"-" flag:"rr-composition,rr-delta-prime"`
}

// Name returns "rr".
func (RR) Name() provenance.MechanismName { return "rr" }

// Validate checks m, δ and the composition's slack, when given.
func (m RR) Validate() error {
	if err := m.Target.Validate(); err != nil {
		return err
	}
	if m.Composition.DeltaPrime != 0 {
		return m.Composition.Validate()
	}
	return nil
}

// FromHeader: its per-query δ (m is not stated).
func (m RR) FromHeader(meta *votefile.LabelMeta) (Mechanism, error) {
	if meta == nil {
		return nil, errNoLabelHeader
	}
	return RR{Target: Target{Delta: meta.Delta}}, decode(meta, m.Name(), nil)
}

// Plan: its allowance m.
func (m RR) Plan(votefile.Input) Planned {
	return planM(func(v float64) Mechanism { m.M = v; return m })
}

// Labeler builds randomized response for its problem.
func (m RR) Labeler(ctx context.Context, _ votefile.Input, k, _ int, teachers accountant.Guarantee, opts Options) (Labeler, string, error) {
	p, err := m.problem(k, teachers)
	if err != nil {
		return nil, "", err
	}
	c := m.Composition
	if c.Method == 0 && c.DeltaPrime == 0 {
		c.Method = accountant.RRComposition(p.Delta)
	}
	if c.DeltaPrime == 0 {
		c.DeltaPrime = accountant.DefaultDeltaPrime
	}
	r, err := newRR(ctx, p, c.Method, c.DeltaPrime, opts)
	if err != nil {
		return nil, "", err
	}
	r.mech = RR{Target: built(p), Composition: c}
	return r, fmt.Sprintf("randomized response with p_const = %.6g (Algorithm 7, Lemma B.1.1, %v composition)", r.PConst(), c.Method), nil
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
	bits, ok := tb.privateTeacherBits(opts.Memo, p)
	if !ok {
		maj, err := accountant.Composition{Method: method, DeltaPrime: deltaPrime}.Compose(teachers(p), p.K)
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
