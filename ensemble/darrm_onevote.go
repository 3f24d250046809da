package ensemble

import (
	"context"
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// OneVoteDaRRM is DaRRM in the one-vote relation: teachers that need not
// be private, on disjoint shares of the data, and a release held to its
// own (Eps, Delta) per query (PATE's relation, as GNMax's); its gamma
// from Gamma as DaRRM's.
type OneVoteDaRRM struct {
	Eps   float64     `json:"-" flag:"target-eps" round:"down"`
	Delta float64     `json:"-" flag:"delta"`
	Gamma GammaSource `json:"-" flag:"prior,gamma,no-solve"`
}

// Name returns "darrm-one-vote".
func (OneVoteDaRRM) Name() provenance.MechanismName { return "darrm-one-vote" }

// Validate checks the release's (ε, δ): ε > 0, δ in [0, 0.5].
func (m OneVoteDaRRM) Validate() error {
	if err := param.Positive("target eps", m.Eps); err != nil {
		return err
	}
	return param.GuaranteeDelta("delta", m.Delta)
}

// Votes returns the two-class votes.
func (OneVoteDaRRM) Votes() []votefile.Input { return onTwoClass() }

// Relation returns the one-vote relation.
func (OneVoteDaRRM) Relation() accountant.Relation { return accountant.OneVote }

// Needs: its own target eps, and a γ source.
func (OneVoteDaRRM) Needs(votefile.Input) Needs { return Needs{Eps: true, Gamma: true} }

// Words says nothing: the label of a two-class release says it.
func (OneVoteDaRRM) Words() Words { return Words{} }

// Missing: its eps, and a γ source.
func (m OneVoteDaRRM) Missing(votefile.Input) error {
	var err error
	if m.Eps == 0 {
		err = unset("Mechanism.Eps", "%s needs the release's eps > 0", m.Name())
	}
	return needGamma(m.Name(), m.Gamma, err)
}

// FromHeader: the per-query (ε, δ) the header states.
func (m OneVoteDaRRM) FromHeader(meta *votefile.LabelMeta) (Mechanism, error) {
	if meta == nil {
		return nil, errNoLabelHeader
	}
	return OneVoteDaRRM{Eps: meta.Eps, Delta: meta.Delta}, decode(meta, m.Name(), nil)
}

// Plan: its target eps.
func (m OneVoteDaRRM) Plan(votefile.Input) Planned {
	return Planned{Setting: "target eps", Flag: "target-eps", With: func(v float64) Mechanism { m.Eps = v; return m }}
}

// Labeler builds DaRRM in the one-vote relation for its target, its γ
// loaded from its source.
func (m OneVoteDaRRM) Labeler(ctx context.Context, _ votefile.Input, k, _ int, _ accountant.Guarantee, opts Options) (Labeler, string, error) {
	q := constraints.NewOneVote(k, m.Eps, m.Delta)
	if err := param.GuaranteeDelta("delta", q.TargetDelta); err != nil {
		return nil, "", err
	}
	g, words, err := loadGamma(ctx, m.Name(), m.Gamma, q, &opts)
	if err != nil {
		return nil, "", err
	}
	d, err := newOneVoteDaRRM(ctx, q, g, opts)
	if err != nil {
		return nil, "", err
	}
	d.mech = OneVoteDaRRM{Eps: q.Eps, Delta: q.TargetDelta}
	return d, "DaRRM in the one-vote relation with " + words, nil
}

// newOneVoteDaRRM returns DaRRM_g in the one-vote relation: the majority of
// K teachers' votes with probability gamma(L), a fair coin otherwise, for
// teachers that need not be private but whose training data are disjoint
// shares, so that a record changes at most one vote (PATE's relation, as
// for GNMax). p is the one-vote problem of the per-query target (eps,
// delta) (constraints.NewOneVote). It runs the one-vote certificate (the 4K
// inequalities of every pair of neighbouring vote counts, both outputs) on
// the noise function it will sample, floor(g(l)·2^53)/2^53, and refuses it
// unless Certified: in this relation rounding a value down can break an
// inequality, so a gamma from a file is trusted only through this
// certificate (gamma_opt from optimal.Solve is on that grid already). The
// guarantee is per query, in the one-vote relation, with no teacher
// guarantee behind it, and is charged like GNMax's. Its Privacy also holds
// points of the label's exact privacy profile (Privacy.Profile), and
// describes the label by its pairs of output probabilities (Curve, an
// accountant.OneBitSpend), whose exact composition bounds a run's totals
// more tightly than its guarantee alone allows.
func newOneVoteDaRRM(ctx context.Context, p constraints.Problem, g gamma.Gamma, opts Options) (*darrmAggregator, error) {
	if p.Relation != accountant.OneVote {
		return nil, fmt.Errorf("DaRRM: relation %v: darrm-one-vote is for the one-vote relation (constraints.NewOneVote)", p.Relation)
	}
	d, err := newDaRRM(ctx, p, g, opts, Privacy{
		Relation: accountant.OneVote,
		Source:   "exhaustive certificate of the sampled gamma in the one-vote relation (every pair of neighbouring vote counts, both outputs); assumes a record changes at most one teacher's vote",
	})
	if err != nil {
		return nil, err
	}
	d.privacy.Profile = d.oneVoteProfile(d.privacy.Guarantee)
	d.privacy.Kind, d.privacy.Bits = accountant.OneBitSpend, d.oneVoteBits()
	return d, nil
}
