package setup

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// MechanismInfo is a mechanism of release as the command knows it, for
// votes of one kind: its name and the votes it labels, the relation it
// releases in (ensemble.Mechanism.Relation), whether it samples a gamma,
// and the flags it needs (on vote counts, every one but those its field's
// tag says are optional: no other setting has a default) or takes, as its fields' tags name them (FlagsOf); the
// mechanism itself at its defaults, which the flags set (with).
type MechanismInfo struct {
	Name         provenance.MechanismName
	Input        votefile.Input
	Relation     accountant.Relation
	Gamma        bool
	Needs, Takes []string
	mech         ensemble.Mechanism
}

// ClassFlags define the flags of the multi-class mechanisms' settings,
// which a mechanism reads from the command's flags (MechanismInfo.With).
type ClassFlags struct {
	Sigma2       float64         `flag:"sigma2" help:"gnmax, confident-gnmax: noise on each class count (> 0)"`
	Threshold    float64         `flag:"threshold" help:"confident-, progressive-gnmax: answer when the noisy top count hits it"`
	Sigma1       float64         `flag:"sigma1" help:"confident-, progressive-gnmax: noise of the threshold step (> 0)"`
	Levels       ensemble.Levels `flag:"levels" help:"progressive-gnmax: the noise of the average at each level, decreasing"`
	Kappa        float64         `flag:"kappa" help:"progressive-gnmax: a label leaves when its gap >= kappa·√2·level"`
	GiveUp       float64         `flag:"give-up" help:"progressive-gnmax: give up below this share of the last bar (0: never)"`
	LaplaceScale float64         `flag:"laplace-scale" help:"lnmax: scale b of the Laplace noise on each count (> 0)"`
}

// settingOrder is the order in which help and errors list the flags of a
// mechanism's settings: a field's flag not listed here (--noise, account
// pate's own) is not one.
var settingOrder = []string{"threshold", "sigma1", "sigma2", "levels", "kappa", "give-up", "laplace-scale", "target-eps", "m", "eps", "Delta", "delta",
	"prior", "gamma", "no-solve", "rr-composition", "rr-delta-prime", "gnmax-search"}

// MechanismTable is every mechanism of release for each kind of votes,
// in the library's order (ensemble.Mechanisms): the two-class ones first.
var MechanismTable = func() []MechanismInfo {
	var out []MechanismInfo
	for _, in := range []votefile.Input{votefile.TwoClass, votefile.ManyClasses} {
		for _, m := range ensemble.Mechanisms().On(in) {
			info := MechanismInfo{Name: m.Name(), Input: in, Relation: m.Relation(), mech: m}
			flags := FlagsOf(m, in)
			info.Gamma = slices.Contains(flags, "gamma")
			if in == votefile.ManyClasses {
				// Every setting on counts is needed but those its tag
				// says are optional (`optional:""`).
				optional := cli.FieldFlags(m, func(tag reflect.StructTag) bool {
					_, opt := tag.Lookup("optional")
					return opt && OnVotes(in)(tag)
				})
				for _, fl := range flags {
					if slices.Contains(optional, fl) {
						info.Takes = append(info.Takes, fl)
					} else {
						info.Needs = append(info.Needs, fl)
					}
				}
			} else {
				info.Takes = flags
			}
			out = append(out, info)
		}
	}
	return out
}()

// FlagsOf returns the flags of the settings of m on votes of
// kind in, in settingOrder: those its fields' tags name, and with m the
// teachers' --eps and --Delta, of which m·eps is its target.
func FlagsOf(m ensemble.Mechanism, in votefile.Input) []string {
	flags := cli.FieldFlags(m, OnVotes(in))
	if slices.Contains(flags, "m") {
		flags = append(flags, "eps", "Delta")
	}
	return slices.DeleteFunc(slices.Clone(settingOrder), func(s string) bool { return !slices.Contains(flags, s) })
}

// OnVotes keeps the fields of a mechanism that are settings on votes of
// kind in: those whose tag names no kind (`votes:"multi-class"`) or in.
func OnVotes(in votefile.Input) func(reflect.StructTag) bool {
	return func(tag reflect.StructTag) bool {
		kind, ok := tag.Lookup("votes")
		return !ok || strings.HasPrefix(in.String(), kind+" ")
	}
}

// MechanismValues are values of a mechanism's settings by their flags,
// those that the command resolves rather than reads: its problem's m and
// delta, darrm-one-vote's eps, the gamma source (by --gamma), RR's
// composition (by --rr-composition), the noise releases draw.
type MechanismValues map[string]any

// With returns the mechanism with the settings values gives, the others
// as the flags of fs give them, or at their defaults.
func (m MechanismInfo) With(fs *pflag.FlagSet, values MechanismValues) ensemble.Mechanism {
	v := reflect.New(reflect.TypeOf(m.mech))
	v.Elem().Set(reflect.ValueOf(m.mech))
	cli.SetFields(fs, v.Interface(), OnVotes(m.Input), values)
	return v.Elem().Interface().(ensemble.Mechanism)
}

// LookupMechanism returns the mechanism name for votes of kind in. A name known
// only for the other kind of votes is refused saying so.
func LookupMechanism(name provenance.MechanismName, in votefile.Input) (MechanismInfo, error) {
	var other []votefile.Input
	for _, m := range MechanismTable {
		switch {
		case m.Name == name && m.Input == in:
			return m, nil
		case m.Name == name:
			other = append(other, m.Input)
		}
	}
	if len(other) > 0 {
		return MechanismInfo{}, fmt.Errorf("mechanism %s labels %v, not %v: for these votes use one of %s", name, other[0], in, mechanismNames(in))
	}
	return MechanismInfo{}, fmt.Errorf("mechanism %q: must be one of %s (two-class votes) or %s (multi-class votes)", name,
		mechanismNames(votefile.TwoClass), mechanismNames(votefile.ManyClasses))
}

// OwnTarget reports whether the mechanism's per-query target is the
// release's own (eps, delta) in the one-vote relation (--target-eps),
// rather than m·eps of its teachers' guarantee.
func (m MechanismInfo) OwnTarget() bool { return slices.Contains(m.Takes, "target-eps") }

// Flags returns the flags the mechanism takes, those it needs first.
func (m MechanismInfo) Flags() []string { return append(slices.Clone(m.Needs), m.Takes...) }

// Defaults returns the mechanism at its defaults, as the library
// registers it (ensemble.Mechanisms).
func (m MechanismInfo) Defaults() ensemble.Mechanism { return m.mech }

// LookupFlag resolves --mechanism name for a command that has
// --classes: a multi-class mechanism when --classes is given or the name
// is of no two-class one, else the two-class one.
func LookupFlag(cmd *cobra.Command, name provenance.MechanismName) (MechanismInfo, error) {
	in := votefile.TwoClass
	if _, err := LookupMechanism(name, in); err != nil || cmd.Flags().Changed("classes") {
		in = votefile.ManyClasses
	}
	info, err := LookupMechanism(name, in)
	if err != nil {
		return info, cli.Usagef("--mechanism %v", err)
	}
	return info, nil
}

// mechanismNames lists the mechanisms for votes of kind in, as flags' help
// and errors name them: separated by commas.
func mechanismNames(in votefile.Input) string {
	return join(func(m MechanismInfo) bool { return m.Input == in })
}

// join lists the mechanisms that keep keeps, separated by commas.
func join(keep func(MechanismInfo) bool) string {
	var names []provenance.MechanismName
	for _, m := range MechanismTable {
		if keep(m) {
			names = append(names, m.Name)
		}
	}
	return provenance.JoinMechanisms(names, ", ")
}

// CheckMechanismSettings refuses the flag of a setting (a flag that a mechanism
// needs or takes) that mechanism m does not take, naming the mechanisms
// that do (each once) and their kind of votes, and asks for each flag it
// needs that neither is given nor stated (the settings a label file's
// header states, by their flags); a flag the command does not have is
// never asked for.
func CheckMechanismSettings(cmd *cobra.Command, m MechanismInfo, stated []string) error {
	given := func(name string) (set, known bool) {
		fl := cmd.Flags().Lookup(name)
		return fl != nil && fl.Changed, fl != nil && fl.Name == name
	}
	takes := m.Flags()
	for _, r := range MechanismTable {
		for _, s := range r.Flags() {
			if set, _ := given(s); !set || slices.Contains(takes, s) {
				continue
			}
			var by []provenance.MechanismName
			for _, o := range MechanismTable {
				if slices.Contains(o.Flags(), s) && !slices.Contains(by, o.Name) {
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

// Num formats a setting's value as a flag takes it.
func Num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
