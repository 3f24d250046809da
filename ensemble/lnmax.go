package ensemble

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/discrete"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/tally"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// LNMax is PATE's Laplace NoisyMax on vote counts of C classes: discrete
// Laplace noise of the Scale on each count.
type LNMax struct {
	Scale float64 `json:"laplace_scale" flag:"laplace-scale" round:"up" help:"scale b of the Laplace noise on each count (> 0)"`
}

// Name returns "lnmax".
func (LNMax) Name() provenance.MechanismName { return "lnmax" }

// Validate checks the scale (noisymax.LNMaxSpend).
func (m LNMax) Validate() error {
	_, err := noisymax.LNMaxSpend(m.Scale)
	return err
}

// Votes returns the multi-class votes.
func (LNMax) Votes() []votefile.Input { return onManyClasses() }

// Relation returns the one-vote relation.
func (LNMax) Relation() accountant.Relation { return accountant.OneVote }

// Needs nothing beside its scale.
func (LNMax) Needs(votefile.Input) Needs { return Needs{} }

// Words: its scale.
func (m LNMax) Words() Words {
	return Words{Settings: fmt.Sprintf("b = %g", m.Scale), Noise: laplaceWords}
}

// Missing: its scale.
func (m LNMax) Missing(votefile.Input) error {
	if m.Scale == 0 {
		return unset("Mechanism.Scale", "%s needs the scale b > 0 of its Laplace noise", m.Name())
	}
	return nil
}

// lnmaxSettings are LNMax's settings as a label file's header states
// them: with its noise, which releases draw discrete.
type lnmaxSettings struct {
	Scale float64        `json:"laplace_scale"`
	Noise noisymax.Noise `json:"noise,omitempty"`
}

// MarshalJSON returns its settings as a label file's header states them:
// its scale and its noise, the discrete Laplace releases draw.
func (m LNMax) MarshalJSON() ([]byte, error) {
	return json.Marshal(lnmaxSettings{m.Scale, noisymax.DiscreteNoise})
}

// FromHeader: its scale.
func (LNMax) FromHeader(meta *votefile.LabelMeta) (Mechanism, error) {
	if meta == nil {
		return nil, errNoLabelHeader
	}
	var s lnmaxSettings
	err := decode(meta, LNMax{}.Name(), &s)
	return LNMax{Scale: s.Scale}, err
}

// Plan: its scale, scored as continuous Laplace noise of that scale on
// each count.
func (m LNMax) Plan(votefile.Input) Planned {
	return Planned{Setting: "Laplace scale", Flag: "laplace-scale", With: func(v float64) Mechanism { m.Scale = v; return m },
		Expect: func(counts []int, class int) float64 { return argmaxLaplace(counts, class, m.Scale) }}
}

// Labeler builds LNMax of its scale on the counts.
func (m LNMax) Labeler(_ context.Context, _ votefile.Input, k, classes int, _ accountant.Guarantee, _ Options) (Labeler, string, error) {
	agg, err := newLNMax(m.Scale, k, classes)
	if err != nil {
		return nil, "", err
	}
	return agg, fmt.Sprintf("LNMax: discrete Laplace noise of scale b = %g on the %d class counts", m.Scale, classes), nil
}

// lnmaxAggregator is PATE's Laplace noisy max (LNMax; Papernot et al.
// 2017): the class whose count plus discrete Laplace noise of scale b is
// largest, ties broken uniformly at random. Every query is answered.
//
// What the sampler guarantees: the noise is drawn exactly
// (discrete.Laplace) and added to the integer counts, so the labels have
// exactly the distribution of the mechanism and no real number is formed.
// The discrete Laplace mechanism on an integer vector of L1 sensitivity 2
// is (2/b, 0)-DP, as the continuous one is (the ratio of the two
// probabilities of any noisy vector is at most e^{2/b}).
type lnmaxAggregator struct {
	scale    float64
	teachers int
	classes  int
	noise    *discrete.Laplace
	privacy  Privacy
	ties     []int
}

// newLNMax returns LNMax of scale b for K teachers and C classes.
func newLNMax(b float64, teachers, classes int) (*lnmaxAggregator, error) {
	curve, err := noisymax.LNMaxSpend(b)
	if err != nil {
		return nil, fmt.Errorf("lnmax: %w", err)
	}
	if err := checkClasses(teachers, classes); err != nil {
		return nil, fmt.Errorf("lnmax: %w", err)
	}
	noise, err := discrete.NewLaplace(b)
	if err != nil {
		return nil, fmt.Errorf("lnmax: %w", err)
	}
	return &lnmaxAggregator{scale: b, teachers: teachers, classes: classes, noise: noise, ties: make([]int, 0, classes),
		privacy: Privacy{
			Source: fmt.Sprintf("LNMax with discrete Laplace noise of scale b = %.6g on every count is (2/b, 0)-DP (one changed vote moves the counts by 2 in L1; Papernot et al. 2017 Sec. 2.1, the argmax is post-processing); assumes a record changes at most one teacher's vote",
				b),
			Relation: accountant.OneVote,
			Spend:    curve,
		}}, nil
}

// Name returns "lnmax".
func (g *lnmaxAggregator) Name() provenance.MechanismName { return LNMax{}.Name() }

// K returns the number of teachers.
func (g *lnmaxAggregator) K() int { return g.teachers }

// Classes returns C.
func (g *lnmaxAggregator) Classes() int { return g.classes }

// Privacy returns the per-query guarantee (2/b, 0).
func (g *lnmaxAggregator) Privacy() Privacy { return g.privacy }

// Mechanism returns LNMax of the scale b.
func (g *lnmaxAggregator) Mechanism() Mechanism { return LNMax{Scale: g.scale} }

// Answer returns the label of query q from its counts; it is always
// answered.
func (g *lnmaxAggregator) Answer(q *votefile.Query, src *noise.Source) (int, bool, error) {
	counts := q.Counts
	if _, err := tally.Counts(counts, g.teachers, g.classes); err != nil {
		return -1, false, err
	}
	return noisyArgmax(counts, g.noise.Sample, src, &g.ties), true, nil
}

// checkClasses checks the K teachers and C classes of a multi-class
// aggregator, before it allocates anything per class.
func checkClasses(teachers, classes int) error {
	if err := param.Count("K", teachers, 1); err != nil {
		return err
	}
	return param.CountIn("classes", classes, 2, votefile.MaxClasses)
}

// noisyArgmax returns the class whose count plus a draw of noise is
// largest, ties broken uniformly at random; ties is scratch space.
func noisyArgmax(counts []int, noise func(*noise.Source) int64, src *noise.Source, ties *[]int) int {
	var best int64
	t := (*ties)[:0]
	for i, n := range counts {
		v := int64(n) + noise(src)
		switch {
		case i == 0 || v > best:
			best = v
			t = append(t[:0], i)
		case v == best:
			t = append(t, i)
		}
	}
	*ties = t
	if len(t) == 1 {
		return t[0]
	}
	return t[src.IntN(len(t))]
}
