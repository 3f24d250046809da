package main

// This file settles the mechanism of darrm account pate: the header of
// the labels accounted, with which the flags must agree, or the flags.

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/votefile"
)

// pateSettings returns the flags of the settings of the mechanisms on
// vote counts that cmd has, each once, and the noise labels were drawn
// with, in the order their agreement with a label file's header is
// checked.
func (f *accountPATEFlags) pateSettings(cmd *cobra.Command) []string {
	var out []string
	for _, m := range f.ms.All() {
		for _, s := range m.Flags() {
			if m.Input == votefile.ManyClasses && cmd.Flags().Lookup(s) != nil && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return append(out, "noise")
}

// settle returns the mechanism of an account of labels whose label file's
// header is m (nil: no labels, or no header), and the settings that header
// states (their flags): the header's mechanism (ensemble.Registry.FromHeader),
// with which every setting given must agree (a flag may repeat the
// header's value, never contradict it, nor give a setting its mechanism
// does not have); without a header, the mechanism the settings given
// imply (implied) with those settings.
func (f *accountPATEFlags) settle(cmd *cobra.Command, m *votefile.LabelMeta) (ensemble.Mechanism, []string, error) {
	fs := cmd.Flags()
	given := map[string]string{} // as a header's settings read (num), as pflag prints them
	settings := f.pateSettings(cmd)
	for _, n := range settings {
		if fl := fs.Lookup(n); fl.Changed {
			given[n] = fl.Value.String()
			if l, ok := fl.Value.(interface{ GetSlice() []string }); ok {
				given[n] = strings.Join(l.GetSlice(), ",") // a list, as a header's reads
			}
		}
	}
	if m == nil {
		return f.implied(given).With(fs, nil), nil, nil
	}
	mech, err := f.ms.Registry().FromHeader(m)
	if err != nil {
		return nil, nil, err
	}
	header := headerSettings(m, mech)
	var stated []string
	for _, n := range settings {
		h := header[n]
		if h != "" {
			stated = append(stated, n)
		}
		switch g := given[n]; {
		case g == "" || g == h:
		case h == "":
			return nil, nil, fmt.Errorf("%s = %s given, but the labels were made by %s, which has no %s (its settings come from the label file's header)", n, g, m.Mechanism, n)
		default:
			return nil, nil, fmt.Errorf("%s = %s given, but the label file's header states %s = %s: the labels were made with %s = %s (leave it out to use it)", n, g, n, h, n, h)
		}
	}
	return mech, stated, nil
}

// implied returns the mechanism on class counts that the settings given
// imply: the first (gnmax) unless a setting given is not one of its, else
// the last, in the registry's order, that takes such a setting, of those not
// charged per draw alone (their account needs their labels); a setting
// that the mechanism does not take is refused by
// setup.Mechanisms.CheckSettings.
func (f *accountPATEFlags) implied(given map[string]string) setup.MechanismInfo {
	var counts []setup.MechanismInfo
	for _, m := range f.ms.All() {
		// A mechanism charged per draw alone is accounted from its labels'
		// header, never implied by settings.
		if _, only := setup.PerDraw(m); m.Input == votefile.ManyClasses && !only {
			counts = append(counts, m)
		}
	}
	first := counts[0]
	for _, m := range slices.Backward(counts) {
		for _, s := range m.Flags() {
			if _, ok := given[s]; ok && !slices.Contains(first.Flags(), s) {
				return m
			}
		}
	}
	return first
}

// headerSettings returns the settings a label file's header m states
// (votefile.LabelMeta.Settings, which ensemble.Registry.FromHeader has
// read as mech), by their flags: a key is the flag of mech's field whose
// JSON key it is (laplace_scale is --laplace-scale, a program's
// mechanism's "T" its --threshold), else itself with _ as - (noise). A
// number as a flag takes it, the noise by its name. A parameter is stated
// whatever its value (a threshold of 0 is a threshold); the noise is not
// when the header names none.
func headerSettings(m *votefile.LabelMeta, mech ensemble.Mechanism) map[string]string {
	var settings map[string]any
	_ = json.Unmarshal(m.Settings, &settings) // a JSON object, or none
	flags := map[string]string{}              // a JSON key's flag
	cli.EachFlagField(reflect.Indirect(reflect.ValueOf(mech)), nil, func(names []string, tag reflect.StructTag, v reflect.Value) {
		if key, _, _ := strings.Cut(tag.Get("json"), ","); key != "" && key != "-" {
			flags[key] = names[0]
		}
	})
	out := map[string]string{}
	for k, v := range settings {
		s := fmt.Sprint(v)
		switch x := v.(type) {
		case float64:
			s = cliout.Float(x)
		case []any: // a list of numbers, as its flag takes it
			var nums []float64
			for _, e := range x {
				if f, ok := e.(float64); ok {
					nums = append(nums, f)
				}
			}
			s = cliout.Floats(nums)
		}
		flag, ok := flags[k]
		if !ok {
			flag = strings.ReplaceAll(k, "_", "-")
		}
		out[flag] = s
	}
	return out
}

// checkGNMax checks the settings of mech, of the GNMax family: a
// threshold step when it takes --sigma1, which must be > 0, and the steps'
// own checks (ValidateFor of the settings ensemble.Steps returns),
// its noise, when unset, the discrete noise that releases draw
// (pate.AccountOptions). A bad value is a parameter error that
// names its setting.
func checkGNMax(mech ensemble.Mechanism) error {
	g, _ := ensemble.Steps(mech, 0) // counts, of any classes
	if slices.Contains(setup.FlagsOf(mech, votefile.ManyClasses), "sigma1") && !(g.Sigma1 > 0) {
		return &param.Error{Name: "sigma1", Value: g.Sigma1, Rule: "must be > 0"}
	}
	return g.Drawn().CheckFor(0) // K is not known yet
}
