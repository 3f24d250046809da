package ensemble

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
)

// Mechanisms are the names of the aggregators Mechanism.New builds.
var Mechanisms = []string{"darrm", "subsample", "dsub", "rr", "gnmax"}

// Mechanism names an aggregator and holds the settings of the one it
// names; the others are ignored.
type Mechanism struct {
	// Name is one of Mechanisms.
	Name string
	// Gamma is darrm's noise function; GammaSource says where it came
	// from, for the description (e.g. "gamma_opt (prior uniform) from the
	// cache").
	Gamma       gamma.Gamma
	GammaSource string
	// RRComposition and RRDeltaPrime give rr's p_const (NewRR).
	RRComposition accountant.Method
	RRDeltaPrime  float64
	// GNMaxSearch picks gnmax's sigma (NewGNMax).
	GNMaxSearch accountant.GNMaxSearch
}

// New returns the aggregator m names for problem p, certified as its
// constructor certifies it, and says what it is in words.
func (m Mechanism) New(ctx context.Context, p constraints.Params, opts Options) (Aggregator, string, error) {
	switch m.Name {
	case "darrm":
		d, err := NewDaRRM(ctx, p, m.Gamma, opts)
		return d, "DaRRM with " + m.GammaSource, err
	case "rr":
		r, err := NewRR(ctx, p, m.RRComposition, m.RRDeltaPrime, opts)
		if err != nil {
			return nil, "", err
		}
		return r, fmt.Sprintf("randomized response with p_const = %.6g (Algorithm 7, Lemma B.1.1, %v composition)", r.PConst(), m.RRComposition), nil
	case "subsample", "dsub":
		newSub, what := NewSubsample, "Algorithm 8"
		if m.Name == "dsub" {
			newSub, what = NewDoubleSubsample, "2m-1 of Theorem 3.5.1"
		}
		s, err := newSub(ctx, p, opts)
		if err != nil {
			return nil, "", err
		}
		return s, fmt.Sprintf("subsampling: majority of %d of the %d teachers, drawn without replacement (%s)", s.Size(), p.K, what), nil
	case "gnmax":
		g, err := NewGNMax(p, m.GNMaxSearch)
		if err != nil {
			return nil, "", err
		}
		sigma, _ := g.Sigma()
		return g, fmt.Sprintf("GNMax: Gaussian noise with sigma = %.4g on the two class counts (%v search)", sigma, m.GNMaxSearch), nil
	}
	return nil, "", fmt.Errorf("mechanism %q: must be one of %s", m.Name, strings.Join(Mechanisms, ", "))
}

// DefaultMechanisms are the mechanisms that apply to problem p, in the
// order of Mechanisms: dsub only for Delta = 0 (Theorem 3.5.1), gnmax only
// for delta > 0 (a Gaussian mechanism is not pure DP).
func DefaultMechanisms(p constraints.Params) []string {
	names := []string{"darrm", "subsample"}
	if p.Delta == 0 {
		names = append(names, "dsub")
	}
	names = append(names, "rr")
	if p.TargetDelta > 0 {
		names = append(names, "gnmax")
	}
	return names
}

// Above returns the names of the results whose 95% interval lies wholly
// below that of the result named name (none if no result has that name).
func Above(res []SimResult, name string) []string {
	i := slices.IndexFunc(res, func(r SimResult) bool { return r.Name == name })
	if i < 0 {
		return nil
	}
	var below []string
	for j, r := range res {
		if j != i && res[i].Lo > r.Hi {
			below = append(below, r.Name)
		}
	}
	return below
}
