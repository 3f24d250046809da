package setup

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// Mechanisms are the mechanisms of release of a run of darrm, as its
// commands know them: a registry (ensemble.Registry) that the command
// tree holds, each mechanism on each kind of votes it labels, in the
// registry's order, the two-class ones first, with the flags of its
// settings as its fields' tags name them. A test builds the tree on a
// registry of its own; nothing here is a package variable.
type Mechanisms struct {
	reg   ensemble.Registry
	infos []MechanismInfo
}

// MechanismInfo is a mechanism of release as the command knows it, for
// votes of one kind: its name and the votes it labels, the relation it
// releases in, what the command resolves for it (Uses: its teachers'
// guarantee, its own target eps, a gamma source, a filter's budget), and
// the flags of its settings that it needs (on vote counts every one but
// those its field's tag says are optional: no other has a default) or
// takes (FlagsOf); the mechanism itself at its defaults, which the flags
// set (With).
type MechanismInfo struct {
	Name               provenance.MechanismName
	Input              votefile.Input
	Relation           accountant.Relation
	Uses               ensemble.Needs
	Required, Optional []string
	mech               ensemble.Mechanism
}

// NewMechanisms returns the mechanisms of reg as the command knows them.
// A setting that could not take the value a command gives it panics
// (checkSettings).
func NewMechanisms(reg ensemble.Registry) *Mechanisms {
	checkSettings(reg)
	ms := &Mechanisms{reg: reg}
	for _, in := range []votefile.Input{votefile.TwoClass, votefile.ManyClasses} {
		for _, m := range reg.On(in) {
			info := MechanismInfo{Name: m.Name(), Input: in, Relation: m.Relation(), Uses: m.Needs(in), mech: m}
			for _, fl := range FlagsOf(m, in) {
				// The teachers' guarantee comes from the votes' header.
				if in == votefile.ManyClasses && !slices.Contains(optional(m, in), fl) && fl != "eps" && fl != "Delta" {
					info.Required = append(info.Required, fl)
				} else {
					info.Optional = append(info.Optional, fl)
				}
			}
			ms.infos = append(ms.infos, info)
		}
	}
	return ms
}

// Registry returns the registry of the mechanisms.
func (ms *Mechanisms) Registry() ensemble.Registry { return ms.reg }

// All returns every mechanism on every kind of votes it labels, the
// two-class ones first.
func (ms *Mechanisms) All() []MechanismInfo { return ms.infos }

// Default returns the mechanism a release uses when none is named: the
// registry's first.
func (ms *Mechanisms) Default() MechanismInfo { return ms.infos[0] }

// optional returns the flags of m's settings on votes of kind in whose
// tag says that they may be left at zero (`optional:""`).
func optional(m ensemble.Mechanism, in votefile.Input) []string {
	return cli.FieldFlags(m, func(tag reflect.StructTag) bool {
		_, opt := tag.Lookup("optional")
		return opt && OnVotes(in)(tag)
	})
}

// drawn is the flag of the setting that the command sets itself, never
// from a flag of a release: the noise releases draw (an account's --noise
// says which noise labels were drawn with).
const drawn = "noise"

// FlagsOf returns the flags of the settings of m on votes of kind in, as
// its fields' tags name them (OnVotes): first its own settings (a field
// with a help tag: the command defines its flag from it, BindSettings),
// in the order of its fields, then the others, the flags of its target,
// its gamma source or its composition that the command defines itself,
// in the order of its fields; with m, the teachers' --eps and --Delta
// after it, of which m·eps is its target, and last for another
// mechanism calibrated to them (ensemble.Needs.Teachers).
func FlagsOf(m ensemble.Mechanism, in votefile.Input) []string {
	own := cli.FieldFlags(m, ownSettings(in))
	out := slices.Clone(own)
	for _, fl := range cli.FieldFlags(m, OnVotes(in)) {
		if !slices.Contains(own, fl) && fl != drawn {
			out = append(out, fl)
		}
		if fl == "m" {
			out = append(out, "eps", "Delta")
		}
	}
	if m.Needs(in).Teachers && !slices.Contains(out, "eps") {
		out = append(out, "eps", "Delta")
	}
	return out
}

// ownSettings keeps the fields of a mechanism that are its own settings
// on votes of kind in: those with a help tag (FlagsOf, BindSettings).
func ownSettings(in votefile.Input) func(reflect.StructTag) bool {
	return func(tag reflect.StructTag) bool {
		_, help := tag.Lookup("help")
		return help && OnVotes(in)(tag)
	}
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

// SettingFlags returns the flags of the settings of every mechanism,
// each once, in the registry's order: those a command that takes a
// mechanism's settings has, but the teachers' --eps and --Delta, which
// are the ensemble's.
func (ms *Mechanisms) SettingFlags() []string {
	var out []string
	for _, m := range ms.infos {
		for _, fl := range m.Flags() {
			if fl != "eps" && fl != "Delta" && !slices.Contains(out, fl) {
				out = append(out, fl)
			}
		}
	}
	return out
}

// Chosen returns the flags of the settings that a plan of parameters
// chooses for one mechanism or another (ensemble.Planned: its setting,
// and a threshold step it chooses on proxy votes), each once, in the
// registry's order; with m, the teachers' --eps and --Delta, of which
// m·eps is the target.
func (ms *Mechanisms) Chosen() []string {
	var out []string
	add := func(flags ...string) {
		for _, fl := range flags {
			if !slices.Contains(out, fl) {
				out = append(out, fl)
			}
		}
	}
	for _, m := range ms.infos {
		p := m.mech.Plan(m.Input)
		if p.Threshold != nil {
			add("threshold", "sigma1")
		}
		if p.Flag != "" {
			add(p.Flag)
		}
		if p.Flag == "m" {
			add("eps", "Delta")
		}
	}
	return out
}

// Flags returns the flags the mechanism takes, those it needs first.
func (m MechanismInfo) Flags() []string { return append(slices.Clone(m.Required), m.Optional...) }

// Defaults returns the mechanism at its defaults, as the registry holds
// it.
func (m MechanismInfo) Defaults() ensemble.Mechanism { return m.mech }

// Lookup returns the mechanism name for votes of kind in. A name known
// only for the other kind of votes is refused saying so.
func (ms *Mechanisms) Lookup(name provenance.MechanismName, in votefile.Input) (MechanismInfo, error) {
	if _, err := ms.reg.Lookup(name, in); err != nil {
		return MechanismInfo{}, err
	}
	for _, m := range ms.infos {
		if m.Name == name && m.Input == in {
			return m, nil
		}
	}
	panic("setup: a mechanism of the registry without its info") // NewMechanisms made one of each
}

// LookupFlag resolves --mechanism name for a command that has
// --classes: a multi-class mechanism when --classes is given or the name
// is of no two-class one, else the two-class one.
func (ms *Mechanisms) LookupFlag(cmd *cobra.Command, name provenance.MechanismName) (MechanismInfo, error) {
	in := votefile.TwoClass
	if _, err := ms.Lookup(name, in); err != nil || cmd.Flags().Changed("classes") {
		in = votefile.ManyClasses
	}
	info, err := ms.Lookup(name, in)
	if err != nil {
		return info, cli.Usagef("--%v", err)
	}
	return info, nil
}

// Names lists the names of the mechanisms that keep keeps, each once, in
// the registry's order, separated by sep.
func (ms *Mechanisms) Names(keep func(MechanismInfo) bool, sep string) string {
	return provenance.JoinMechanisms(ms.names(keep), sep)
}

// names returns the names of the mechanisms that keep keeps, each once, in
// the registry's order.
func (ms *Mechanisms) names(keep func(MechanismInfo) bool) []provenance.MechanismName {
	var names []provenance.MechanismName
	for _, m := range ms.infos {
		if keep(m) && !slices.Contains(names, m.Name) {
			names = append(names, m.Name)
		}
	}
	return names
}

// ofKind keeps the mechanisms for votes of kind in (Names).
func ofKind(in votefile.Input) func(MechanismInfo) bool {
	return func(m MechanismInfo) bool { return m.Input == in }
}

// CheckSettings refuses the flag of a setting (a flag that a mechanism
// needs or takes) that mechanism m does not take, naming the mechanisms
// that do (each once) and their kind of votes, and asks for each flag it
// needs that neither is given nor stated (the settings a label file's
// header states, by their flags); a flag the command does not have is
// never asked for, nor named among those m takes.
func (ms *Mechanisms) CheckSettings(cmd *cobra.Command, m MechanismInfo, stated []string) error {
	fs := cmd.Flags()
	given := func(name string) (set, known bool) {
		fl := fs.Lookup(name)
		return fl != nil && fl.Changed, fl != nil && fl.Name == name
	}
	takes := slices.DeleteFunc(m.Flags(), func(s string) bool { _, known := given(s); return !known })
	for _, r := range ms.infos {
		for _, s := range r.Flags() {
			if set, _ := given(s); !set || slices.Contains(m.Flags(), s) {
				continue
			}
			takers := func(in votefile.Input) string {
				return ms.Names(func(o MechanismInfo) bool { return o.Input == in && slices.Contains(o.Flags(), s) }, ", ")
			}
			msg := fmt.Sprintf("--%s is not a setting of %s on %v, which takes --%s", s, m.Name, m.Input, strings.Join(takes, ", --"))
			// The mechanisms on the same votes first: those on the other
			// kind need the votes read otherwise.
			if same := takers(m.Input); same != "" {
				msg += fmt.Sprintf(" (--%s is a setting of %s)", s, same)
			} else {
				msg += fmt.Sprintf(" (--%s is a setting of %s on %v: %s)", s, takers(r.Input), r.Input, readAs(r.Input))
			}
			return cli.Usagef("%s", msg)
		}
	}
	for _, s := range m.Required {
		if set, known := given(s); known && !set && !slices.Contains(stated, s) {
			return cli.Usagef("--%s is required by %s", s, m.Name)
		}
	}
	return nil
}

// readAs says how votes are read as votes of kind in.
func readAs(in votefile.Input) string {
	if in == votefile.ManyClasses {
		return "--input-format counts, --classes C, or a metadata header that states them"
	}
	return "votes of 0 and 1, read without --classes"
}

// CheckInUse refuses a setting given that none of the mechanisms in use
// takes, naming those that do, where a command runs without a release's
// check of its one mechanism (CheckSettings): it would be dropped unread.
// flag is the flag that chose them (--mechanisms, --mechanism). The
// problem's own flags (ProblemFlags: K, m, the teachers' eps and Delta,
// delta) are every mechanism's, and say the teachers' guarantee too.
func (ms *Mechanisms) CheckInUse(cmd *cobra.Command, flag string, infos ...MechanismInfo) error {
	var problem []string
	cli.EachFlagField(reflect.ValueOf(ProblemFlags{}), func(reflect.StructTag) bool { return true }, func(names []string, _ reflect.StructTag, _ reflect.Value) {
		problem = append(problem, names...)
	})
	takes := func(s string) func(MechanismInfo) bool {
		return func(m MechanismInfo) bool { return slices.Contains(m.Flags(), s) }
	}
	for _, m := range ms.infos {
		for _, s := range m.Flags() {
			if fl := cmd.Flags().Lookup(s); fl == nil || !fl.Changed || slices.Contains(problem, s) || slices.ContainsFunc(infos, takes(s)) {
				continue
			}
			// The same mechanism on the other kind of votes says so first.
			for _, o := range ms.infos {
				for _, in := range infos {
					if o.Name == in.Name && takes(s)(o) {
						return cli.Usagef("--%s is a setting of %s on %v, not on %v (the kind of votes that --classes, --input-format or a metadata header says)", s, o.Name, o.Input, in.Input)
					}
				}
			}
			return cli.Usagef("--%s is a setting of %s, which this run does not include (--%s)", s, ms.Names(takes(s), ", "), flag)
		}
	}
	return nil
}

// BindSettings defines in cmd the flag of each setting of the mechanisms
// on votes of the kinds given that is their own (its field has a help
// tag), once, from the first mechanism that has it: its type the field's,
// its help the tag's after the names of the mechanisms that take it
// ("confident-, progressive-gnmax: ..."); and names so the mechanisms
// that sample a gamma in the help of --gamma and --no-solve, when cmd
// has them. A mechanism's settings are then read from cmd's flags
// (MechanismInfo.With). A setting whose flag cmd defines itself panics:
// the command's flag would take the value given for it, of another type
// or meaning (--workers, --queries), and the mechanism would never see
// it; a registry is its program's own, so this is a programming error,
// found as the command is built.
func (ms *Mechanisms) BindSettings(cmd *cobra.Command, kinds ...votefile.Input) {
	fs := cmd.Flags()
	on := func(m MechanismInfo) bool { return slices.Contains(kinds, m.Input) }
	bound := map[string]bool{}
	for _, info := range ms.infos {
		if !on(info) {
			continue
		}
		cli.EachFlagField(reflect.ValueOf(info.mech), ownSettings(info.Input), func(names []string, tag reflect.StructTag, v reflect.Value) {
			name, t := names[0], v.Type()
			if bound[name] {
				return
			}
			if fs.Lookup(name) != nil {
				panic(fmt.Sprintf("mechanism %s: setting --%s: %s defines --%s itself, which would take the setting's value", info.Name, name, cmd.CommandPath(), name))
			}
			bound[name] = true
			by := ms.Names(func(o MechanismInfo) bool { return on(o) && slices.Contains(o.Flags(), name) }, ", ")
			cli.Flag{Name: name, Default: reflect.Zero(t).Interface(), Usage: abbreviate(by) + ": " + tag.Get("help")}.Add(fs, reflect.New(t).Interface())
		})
	}
	// The γ source's flags name the mechanisms that take them, as
	// CheckSettings finds them.
	for _, name := range []string{"gamma", "no-solve"} {
		if fl := fs.Lookup(name); fl != nil {
			if by := ms.Names(func(m MechanismInfo) bool { return on(m) && slices.Contains(m.Flags(), name) }, ", "); by != "" {
				fl.Usage = abbreviate(by) + ": " + fl.Usage
			}
		}
	}
}

// abbreviate shortens a list of names that all end alike after a hyphen,
// "fast-max, slow-max", to "fast-, slow-max".
func abbreviate(list string) string {
	names := strings.Split(list, ", ")
	_, suffix, ok := strings.Cut(names[0], "-")
	for _, n := range names {
		if _, s, dash := strings.Cut(n, "-"); !dash || s != suffix {
			ok = false
		}
	}
	if !ok || len(names) < 2 {
		return list
	}
	for i := range names[:len(names)-1] {
		names[i] = strings.TrimSuffix(names[i], suffix)
	}
	return strings.Join(names, ", ")
}
