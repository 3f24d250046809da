// Package resolve resolves the DaRRM problem a command works on from what
// its sources state (the command line, then a gamma file): each parameter
// from the first source that states it, else the default.
package resolve

import (
	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
)

// The defaults of a problem's m, eps and Delta (darrm's flags): the
// thesis' main setting (Section 3.7.1), whose delta is then 1-(1-Delta)^m.
const (
	DefaultM     = 3.0
	DefaultEps   = 0.1
	DefaultDelta = 1e-5
)

// Stated is what a source states of the parameters of a DaRRM problem:
// m, eps, Delta, delta and the neighbouring relation, nil where it states
// nothing.
type Stated struct {
	M, Eps, Delta, TargetDelta *float64
	Relation                   *accountant.Relation
}

// FromTable returns what the gamma file t states of the problem.
func FromTable(t gamma.Table) Stated {
	return Stated{M: t.M, Eps: t.Eps, Delta: t.Delta, TargetDelta: t.TargetDelta, Relation: t.Relation}
}

// Resolved is a DaRRM problem resolved from what its sources state
// (Problem), with which of its values no source stated and so took their
// defaults; outputs say which.
type Resolved struct {
	constraints.Problem
	// MDefault: m is the default's. DeltaDefault: delta is the thesis'
	// default 1-(1-Delta)^m.
	MDefault, DeltaDefault bool
}

// Problem returns the problem of k teachers with each parameter from the
// first of ss that states it (a command line, then a gamma file, say);
// where none does, the relation, m, eps and Delta are def's and delta is
// the thesis' default 1-(1-Delta)^m (Section 3.7.1,
// constraints.DefaultTargetDelta). In the one-vote relation m and Delta
// default to 1 and 0 (constraints.NewOneVote), so delta defaults to 0. The
// problem is not validated.
func Problem(k int, def constraints.Problem, ss ...Stated) Resolved {
	first := func(get func(Stated) *float64) *float64 {
		for _, s := range ss {
			if v := get(s); v != nil {
				return v
			}
		}
		return nil
	}
	pick := func(get func(Stated) *float64, def float64) float64 {
		if v := first(get); v != nil {
			return *v
		}
		return def
	}
	rel := def.Relation
	for _, s := range ss {
		if s.Relation != nil {
			rel = *s.Relation
			break
		}
	}
	if rel == accountant.OneVote {
		def.M, def.Delta = 1, 0
	}
	p := Resolved{Problem: constraints.Problem{K: k, Relation: rel,
		M:     pick(func(s Stated) *float64 { return s.M }, def.M),
		Eps:   pick(func(s Stated) *float64 { return s.Eps }, def.Eps),
		Delta: pick(func(s Stated) *float64 { return s.Delta }, def.Delta)}}
	p.MDefault = first(func(s Stated) *float64 { return s.M }) == nil
	if d := first(func(s Stated) *float64 { return s.TargetDelta }); d != nil {
		p.TargetDelta = *d
	} else {
		p.TargetDelta, p.DeltaDefault = constraints.DefaultTargetDelta(p.Delta, p.M), true
	}
	return p
}
