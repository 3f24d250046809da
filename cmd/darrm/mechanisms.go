package main

// This file is the command's side of the mechanisms of release: which
// flags each takes, and the one place that maps the flags to a mechanism
// (mechanismSettings.mechanism).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// mechanismInfo is a mechanism of release as the command knows it: its
// name and the votes it labels, the relation it releases in
// (ensemble.RelationOf), whether it needs pure-DP teachers or samples a
// gamma, the flags it needs and those it takes besides, and the flags of
// an example release (the rest comes from the votes and their header).
type mechanismInfo struct {
	Name         provenance.MechanismName
	Input        votefile.Input
	Relation     accountant.Relation
	PureTeachers bool
	Gamma        bool
	Needs, Takes []string
	Example      map[string]string
}

// twoClassFlags are the flags of every two-class mechanism whose per-query
// target is (m·eps, delta) for teachers (eps, Delta)-DP.
func twoClassFlags(more ...string) []string {
	return append([]string{"m", "eps", "Delta", "delta"}, more...)
}

// gammaFlags are the flags of a mechanism that samples a gamma.
var gammaFlags = []string{"prior", "gamma", "no-solve"}

// exampleM is the example of a two-class mechanism for private teachers.
var exampleM = map[string]string{"m": "3"}

// mechanismTable is every mechanism of release, in the library's order
// (ensemble.Mechanisms): the two-class ones first.
var mechanismTable = withRelations([]mechanismInfo{
	{Name: ensemble.DaRRM{}.Name(), Gamma: true, Takes: twoClassFlags(gammaFlags...), Example: exampleM},
	{Name: ensemble.Subsample{}.Name(), Takes: twoClassFlags(), Example: exampleM},
	{Name: ensemble.DSub{}.Name(), PureTeachers: true, Takes: twoClassFlags(), Example: exampleM},
	{Name: ensemble.RR{}.Name(), Takes: twoClassFlags("rr-composition", "rr-delta-prime"), Example: exampleM},
	{Name: ensemble.GNMax{}.Name(), Takes: twoClassFlags("gnmax-search"), Example: exampleM},
	{Name: ensemble.OneVoteDaRRM{}.Name(), Gamma: true, Takes: append([]string{"target-eps", "delta"}, gammaFlags...),
		Example: map[string]string{"target-eps": "0.3", "delta": "1e-5"}},
	{Name: ensemble.GNMax{}.Name(), Input: votefile.ManyClasses, Needs: []string{"sigma2", "delta"},
		Example: map[string]string{"sigma2": "40", "delta": "1e-5"}},
	{Name: ensemble.ConfidentGNMax{}.Name(), Input: votefile.ManyClasses, Needs: []string{"threshold", "sigma1", "sigma2", "delta"},
		Example: map[string]string{"threshold": "200", "sigma1": "150", "sigma2": "40", "delta": "1e-5"}},
	{Name: ensemble.LNMax{}.Name(), Input: votefile.ManyClasses, Needs: []string{"laplace-scale"}, Example: map[string]string{"laplace-scale": "20"}},
})

// withRelations sets each mechanism's relation, the library's.
func withRelations(infos []mechanismInfo) []mechanismInfo {
	for i := range infos {
		infos[i].Relation = ensemble.RelationOf(mechanismSettings{Sigma2: countsSigma(infos[i].Input)}.mechanism(infos[i].Name, infos[i].Input))
	}
	return infos
}

// countsSigma is a sigma2 that marks GNMax on counts (ensemble.GNMax).
func countsSigma(in votefile.Input) float64 {
	if in == votefile.ManyClasses {
		return 1
	}
	return 0
}

// mechanisms returns the mechanisms that keep keeps, every one for a nil
// keep, in the table's order.
func mechanisms(keep func(mechanismInfo) bool) []mechanismInfo {
	var out []mechanismInfo
	for _, m := range mechanismTable {
		if keep == nil || keep(m) {
			out = append(out, m)
		}
	}
	return out
}

// lookupInfo returns the mechanism name for votes of kind in. A name known
// only for the other kind of votes is refused saying so.
func lookupInfo(name provenance.MechanismName, in votefile.Input) (mechanismInfo, error) {
	var other []votefile.Input
	for _, m := range mechanismTable {
		switch {
		case m.Name == name && m.Input == in:
			return m, nil
		case m.Name == name:
			other = append(other, m.Input)
		}
	}
	if len(other) > 0 {
		return mechanismInfo{}, fmt.Errorf("mechanism %s labels %v, not %v: for these votes use one of %s", name, other[0], in, mechanismNames(in))
	}
	return mechanismInfo{}, fmt.Errorf("mechanism %q: must be one of %s (two-class votes) or %s (multi-class votes)", name,
		mechanismNames(votefile.TwoClass), mechanismNames(votefile.ManyClasses))
}

// OwnTarget reports whether the mechanism's per-query target is the
// release's own (eps, delta) in the one-vote relation (--target-eps),
// rather than m·eps of its teachers' guarantee.
func (m mechanismInfo) OwnTarget() bool { return slices.Contains(m.Takes, "target-eps") }

// flags returns the flags the mechanism takes, those it needs first.
func (m mechanismInfo) flags() []string { return append(slices.Clone(m.Needs), m.Takes...) }

// mechanismNames lists the mechanisms for votes of kind in, as flags' help
// and errors name them: separated by commas.
func mechanismNames(in votefile.Input) string {
	return provenance.JoinMechanisms(ensemble.Mechanisms(in), ", ")
}

// join lists the mechanisms that keep keeps, separated by commas.
func join(keep func(mechanismInfo) bool) string {
	var names []provenance.MechanismName
	for _, m := range mechanisms(keep) {
		names = append(names, m.Name)
	}
	return provenance.JoinMechanisms(names, ", ")
}

// checkSettings refuses the flag of a setting (a flag that a mechanism
// needs or takes) that mechanism m does not take, naming the mechanisms
// that do (each once) and their kind of votes, and asks for each flag it
// needs that neither is given nor stated (the settings a label file's
// header states, by their flags); a flag the command does not have is
// never asked for.
func checkSettings(cmd *cobra.Command, m mechanismInfo, stated []string) error {
	given := func(name string) (set, known bool) {
		fl := cmd.Flags().Lookup(name)
		return fl != nil && fl.Changed, fl != nil && fl.Name == name
	}
	takes := m.flags()
	for _, r := range mechanismTable {
		for _, s := range r.flags() {
			if set, _ := given(s); !set || slices.Contains(takes, s) {
				continue
			}
			var by []provenance.MechanismName
			for _, o := range mechanismTable {
				if slices.Contains(o.flags(), s) && !slices.Contains(by, o.Name) {
					by = append(by, o.Name)
				}
			}
			msg := fmt.Sprintf("--%s is not a setting of %s on %v, which takes --%s", s, m.Name, m.Input, strings.Join(takes, ", --"))
			if others := provenance.JoinMechanisms(by, ", "); r.Input != m.Input {
				msg += fmt.Sprintf(" (--%s is a setting of %s on %v: --input-format counts, --classes C, or a metadata header that states them)", s, others, r.Input)
			} else {
				msg += fmt.Sprintf(" (--%s is a setting of %s)", s, others)
			}
			return cli.Usagef("%s", msg)
		}
	}
	for _, s := range m.Needs {
		if set, known := given(s); known && !set && !slices.Contains(stated, s) {
			return cli.Usagef("--%s is required by %s", s, m.Name)
		}
	}
	return nil
}

// mechanismSettings are what a command's flags give a mechanism: a
// two-class one's per-query target (M, and Delta, nil for the thesis'
// default), darrm-one-vote's eps (TargetEps) and delta, the gamma source,
// randomized response's composition, two-class GNMax's search, and the
// settings of the multi-class ones with their per-query delta.
type mechanismSettings struct {
	M, TargetEps                     float64
	Delta                            *float64
	Gamma                            optimal.Source
	RR                               accountant.Composition
	Search                           noisymax.GNMaxSearch
	Threshold, Sigma1, Sigma2, Scale float64
	Noise                            noisymax.Noise
}

// mechanism returns the mechanism name for votes of kind in with the
// settings s: the one place where the flags become a mechanism.
func (s mechanismSettings) mechanism(name provenance.MechanismName, in votefile.Input) ensemble.Mechanism {
	t := ensemble.Target{M: s.M, Delta: ensemble.DefaultTargetDelta}
	delta := 0.0
	if s.Delta != nil {
		t.Delta, delta = *s.Delta, *s.Delta
	}
	switch name {
	case ensemble.DaRRM{}.Name():
		return ensemble.DaRRM{Target: t, Gamma: s.Gamma}
	case ensemble.OneVoteDaRRM{}.Name():
		return ensemble.OneVoteDaRRM{Eps: s.TargetEps, Delta: delta, Gamma: s.Gamma}
	case ensemble.Subsample{}.Name():
		return ensemble.Subsample{Target: t}
	case ensemble.DSub{}.Name():
		return ensemble.DSub{Target: t}
	case ensemble.RR{}.Name():
		return ensemble.RR{Target: t, Composition: s.RR}
	case ensemble.GNMax{}.Name():
		if in == votefile.TwoClass {
			return ensemble.GNMax{Target: t, Search: s.Search}
		}
		return ensemble.GNMax{Target: ensemble.Target{Delta: t.Delta}, Sigma2: s.Sigma2, Noise: s.Noise}
	case ensemble.ConfidentGNMax{}.Name():
		return ensemble.ConfidentGNMax{Threshold: s.Threshold, Sigma1: s.Sigma1, Sigma2: s.Sigma2, Noise: s.Noise, Delta: delta}
	}
	return ensemble.LNMax{Scale: s.Scale}
}

// settingFlags returns the settings of a mechanism's JSON object raw (its
// label header's settings: ensemble.Mechanism) by their flags, in the
// object's order: laplace_scale is --laplace-scale; a number as a flag
// takes it, the noise by its name.
func settingFlags(raw []byte) [][2]string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil
	}
	var out [][2]string
	for dec.More() {
		k, err := dec.Token()
		var v any
		if err != nil || dec.Decode(&v) != nil {
			return out
		}
		s := fmt.Sprint(v)
		if x, ok := v.(float64); ok {
			s = num(x)
		}
		out = append(out, [2]string{strings.ReplaceAll(fmt.Sprint(k), "_", "-"), s})
	}
	return out
}

// num formats a setting's value as a flag takes it.
func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
