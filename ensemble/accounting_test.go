package ensemble

import (
	"context"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/provenance"
)

// accounting is the account of a release as Release makes it
// (Privacy.Account, Allowed), for tests that ask it for several numbers
// of labels.
type accounting struct {
	acc        accountant.Account
	Cap        *accountant.Cap
	CapNote    string
	Budget     *accountant.Budget
	MaxQueries int
	Allows     accountant.Total
}

// newAccounting returns the account of labels of privacy priv from the
// teachers b binds, with the slack of c, under budget (nil: none).
func newAccounting(ctx context.Context, priv Privacy, b provenance.Binding, c accountant.Composition, budget *accountant.Guarantee) (accounting, error) {
	acc, note, err := priv.Account(b, c.DeltaPrime)
	a := accounting{acc: acc, Cap: acc.Cap, CapNote: note}
	if err != nil || budget == nil {
		return a, err
	}
	a.Budget = &accountant.Budget{Guarantee: *budget}
	a.acc.Budget = a.Budget
	a.MaxQueries, a.Allows, err = a.acc.Allowed(ctx, nil)
	return a, err
}

// Limit returns the queries a release releases: the budget's, -1 for all.
func (a accounting) Limit() int {
	if a.Budget == nil || a.MaxQueries == accountant.Unlimited {
		return -1
	}
	return a.MaxQueries
}

// Totals returns the analysis totals of labels labels, none for none.
func (a accounting) Totals(labels int) []accountant.Total {
	if labels == 0 {
		return nil
	}
	a.acc.Steps = labels
	out, err := a.acc.Totals(testMemo)
	if err != nil {
		return nil
	}
	return out
}

// Publish returns the total to publish of labels labels.
func (a accounting) Publish(labels int) (accountant.Total, error) {
	a.acc.Steps = labels
	return a.acc.Publish(testMemo)
}

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }

// mechanismOf returns the mechanism name held to problem p, a two-class
// one's per-query target p's, one that samples a gamma taking it from src;
// a multi-class one's settings are those its tests use (sigma2 = 40 and a
// threshold step of 200 and 150, a Laplace scale of 20), its δ p's.
func mechanismOf(name provenance.MechanismName, p constraints.Problem, src optimal.Source) Mechanism {
	t := built(p)
	switch name {
	case DaRRM{}.Name():
		return DaRRM{Target: t, Gamma: src}
	case OneVoteDaRRM{}.Name():
		return OneVoteDaRRM{Eps: p.MEps(), Delta: p.TargetDelta, Gamma: src}
	case Subsample{}.Name():
		return Subsample{Target: t}
	case DSub{}.Name():
		return DSub{Target: t}
	case RR{}.Name():
		return RR{Target: t}
	case GNMax{}.Name():
		return GNMax{Target: t}
	case ConfidentGNMax{}.Name():
		return ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: GNMax{Target: Target{Delta: p.TargetDelta}, Sigma2: 40}}
	case LNMax{}.Name():
		return LNMax{Scale: 20}
	}
	return nil
}
