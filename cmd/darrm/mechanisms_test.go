package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// TestCheckSettings: a setting given to a mechanism that does not take it
// is named with the mechanisms that do (each once) and their kind of
// votes; a setting needed and not given is asked for unless stated (a
// label file's header) or not one the command has.
func TestCheckSettings(t *testing.T) {
	lookup := func(name provenance.MechanismName, in votefile.Input) setup.MechanismInfo {
		info, err := testMechanisms().Lookup(name, in)
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	rr, conf := lookup(ensemble.RR{}.Name(), votefile.TwoClass), lookup(ensemble.ConfidentGNMax{}.Name(), votefile.ManyClasses)
	for _, tc := range []struct {
		name   string
		info   setup.MechanismInfo
		flags  []string
		stated []string
		want   string // "" for no error
	}{
		{"all taken", rr, []string{"m", "rr-composition"}, nil, ""},
		{"another kind's", rr, []string{"sigma2"}, nil, "--sigma2 is not a setting of rr on two-class votes, which takes --m, --eps, --Delta, --delta, --rr-composition, --rr-delta-prime (--sigma2 is a setting of gnmax, confident-gnmax on multi-class votes"},
		{"needed", conf, []string{"sigma2", "sigma1"}, nil, "--threshold is required by confident-gnmax"},
		{"needed, stated", conf, []string{"sigma1", "threshold", "delta"}, []string{"sigma2"}, ""},
	} {
		cmd := newAggregateCmd(testMechanisms())
		for _, n := range tc.flags {
			v := "1"
			if n == "rr-composition" {
				v = "general"
			}
			if err := cmd.Flags().Set(n, v); err != nil {
				t.Fatal(err)
			}
		}
		err := testMechanisms().CheckSettings(cmd, tc.info, tc.stated)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// A command without the flags of a mechanism's needs asks for none.
	bare := &cobra.Command{Use: "bare"}
	if err := testMechanisms().CheckSettings(bare, conf, nil); err != nil {
		t.Errorf("needed, not the command's: %v", err)
	}
}

// TestMechanismWith: the flags given and the values the command resolves
// bind into the mechanism; a setting of the other kind of votes is not
// read, nor a flag not given.
func TestMechanismWith(t *testing.T) {
	src := optimal.Source{Name: "a gamma"}
	comp := accountant.Composition{Method: accountant.Optimal, DeltaPrime: 1e-7}
	for _, tc := range []struct {
		name   provenance.MechanismName
		in     votefile.Input
		flags  []string
		values setup.MechanismValues
		want   ensemble.Mechanism
	}{
		{"darrm", votefile.TwoClass, []string{"--sigma2", "40"}, setup.MechanismValues{"m": 3.0, "gamma": src},
			ensemble.DaRRM{Target: ensemble.Target{M: 3}, Gamma: src}},
		{"rr", votefile.TwoClass, nil, setup.MechanismValues{"m": 2.0, "delta": 1e-6, "rr-composition": comp},
			ensemble.RR{Target: ensemble.Target{M: 2, Delta: 1e-6}, Composition: comp}},
		{"gnmax", votefile.TwoClass, []string{"--gnmax-search", "tight", "--sigma2", "40"}, setup.MechanismValues{"m": 2.0, "noise": noisymax.DiscreteNoise},
			ensemble.GNMax{Target: ensemble.Target{M: 2}, Search: noisymax.GNMaxTight}},
		{"gnmax", votefile.ManyClasses, []string{"--gnmax-search", "tight", "--sigma2", "40", "--m", "5"}, setup.MechanismValues{"delta": 1e-5, "noise": noisymax.DiscreteNoise},
			ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 40, Noise: noisymax.DiscreteNoise}},
		{"darrm-one-vote", votefile.TwoClass, nil, setup.MechanismValues{"target-eps": 0.3, "gamma": src},
			ensemble.OneVoteDaRRM{Eps: 0.3, Gamma: src}},
		{"confident-gnmax", votefile.ManyClasses, []string{"--threshold", "200", "--sigma1", "150", "--sigma2", "40"}, setup.MechanismValues{"delta": 1e-5},
			ensemble.ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 40}}},
		{"lnmax", votefile.ManyClasses, []string{"--laplace-scale", "20", "--delta", "1e-5"}, setup.MechanismValues{"noise": noisymax.DiscreteNoise},
			ensemble.LNMax{Scale: 20}},
	} {
		cmd := newAggregateCmd(testMechanisms())
		if err := cmd.Flags().Parse(tc.flags); err != nil {
			t.Fatal(err)
		}
		info, err := testMechanisms().Lookup(tc.name, tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.With(cmd.Flags(), tc.values); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s on %v: %#v, want %#v", tc.name, tc.in, got, tc.want)
		}
	}
}

// testMechanisms returns darrm's mechanisms as the command knows them.
func testMechanisms() *setup.Mechanisms { return setup.NewMechanisms(ensemble.Mechanisms()) }

// newRootCmd builds darrm's command tree for a run on args with darrm's
// mechanisms (ensemble.Mechanisms): newRootCmdOf.
func newRootCmd(args ...string) *cobra.Command { return newRootCmdOf(testMechanisms(), args...) }
