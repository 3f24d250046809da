package setup

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/optimal"
)

// checkSettings panics, naming the mechanism, the flag and the types,
// when a setting of a mechanism of reg could not take the value a command
// gives it: a flag the command resolves (MechanismValues: m, delta, the
// noise, the gamma source, ...) on a field that its value does not fit, a
// flag of settings of two types (one flag sets both), or a plan's setting
// (ensemble.Planned.Flag) that is not a number, which a plan sets to one.
// A registry is its program's own, so these are programming errors, found
// when the program builds its commands, as package flag finds a flag
// defined twice; each would otherwise panic later, or drop a value given,
// in whichever command first met it.
func checkSettings(reg ensemble.Registry) {
	resolved := map[string]reflect.Type{}
	values := (&MechanismConfig{}).Settings(constraints.Problem{}, optimal.Source{})
	values["noise"] = noisymax.DiscreteNoise
	for flag, v := range values {
		resolved[flag] = reflect.TypeOf(v)
	}
	bound := map[string]reflect.Type{} // a flag's type, by the first setting of it
	for _, m := range reg {
		for _, in := range m.Votes() {
			planned := m.Plan(in).Flag
			cli.EachFlagField(reflect.ValueOf(m), OnVotes(in), func(names []string, _ reflect.StructTag, f reflect.Value) {
				bad := func(format string, a ...any) {
					panic(fmt.Sprintf("mechanism %s: setting --%s (%v): ", m.Name(), names[0], f.Type()) + fmt.Sprintf(format, a...))
				}
				for _, n := range names {
					if t, ok := resolved[n]; ok && !t.AssignableTo(f.Type()) {
						bad("the command sets --%s to a %v, which it cannot hold", n, t)
					}
				}
				if _, ok := resolved[names[0]]; !ok {
					if t, ok := bound[names[0]]; ok && t != f.Type() {
						bad("another mechanism's setting of that flag is a %v: one flag sets both", t)
					}
					bound[names[0]] = f.Type()
				}
				if slices.Contains(names, planned) && f.Kind() != reflect.Float64 {
					bad("a plan chooses it (ensemble.Planned.Flag) and sets it to a number (float64)")
				}
			})
		}
	}
}
