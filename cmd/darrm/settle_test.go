package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// TestSettle: without a header the settings given choose the mechanism;
// with one, its mechanism is the labels', with its settings, and a setting
// given may repeat the header's but not contradict it nor be one its
// mechanism does not have, each refused naming both values; an unknown
// noise, relation or partition in the header is refused.
func TestSettle(t *testing.T) {
	confident := func(threshold string) *votefile.LabelMeta {
		return &votefile.LabelMeta{Mechanism: ensemble.ConfidentGNMax{}.Name().String(), Relation: "one-vote", Settings: []byte(`{"threshold":` + threshold + `,"sigma1":150,"sigma2":40,"noise":"discrete"}`)}
	}
	m, zero := confident("200"), confident("0")
	gnmax := &votefile.LabelMeta{Mechanism: ensemble.GNMax{}.Name().String(), Relation: "one-vote", Settings: []byte(`{"sigma2":40,"noise":"discrete"}`)}
	for _, c := range []struct {
		name  string
		flags []string
		meta  *votefile.LabelMeta
		mech  provenance.MechanismName
		want  string // the error, "" for none
	}{
		{"no labels, sigma2", []string{"--sigma2", "40"}, nil, ensemble.GNMax{}.Name(), ""},
		{"no labels, scale", []string{"--laplace-scale", "20"}, nil, ensemble.LNMax{}.Name(), ""},
		{"no labels, threshold", []string{"--threshold", "200", "--sigma1", "150", "--sigma2", "40"}, nil, ensemble.ConfidentGNMax{}.Name(), ""},
		{"header", nil, m, ensemble.ConfidentGNMax{}.Name(), ""},
		{"header, threshold 0", nil, zero, ensemble.ConfidentGNMax{}.Name(), ""},
		{"header, threshold 0 repeated", []string{"--threshold", "0"}, zero, ensemble.ConfidentGNMax{}.Name(), ""},
		{"header, threshold 0 contradicted", []string{"--threshold", "200"}, zero, "", "threshold = 200 given, but the label file's header states threshold = 0"},
		{"header, repeated", []string{"--sigma2", "40", "--noise", "discrete"}, m, ensemble.ConfidentGNMax{}.Name(), ""},
		{"header, contradicted", []string{"--sigma2", "5"}, m, "", "sigma2 = 5 given, but the label file's header states sigma2 = 40"},
		{"header, another noise", []string{"--noise", "continuous"}, gnmax, "", "noise = continuous given, but the label file's header states noise = discrete"},
		{"header, a setting it has not", []string{"--threshold", "200"}, gnmax, "", "threshold = 200 given, but the labels were made by gnmax, which has no threshold"},
		{"header, lnmax's setting", []string{"--laplace-scale", "20"}, gnmax, "", "which has no laplace-scale"},
	} {
		cmd, pf := pateCmd()
		for i := 0; i+1 < len(c.flags); i += 2 {
			if err := cmd.Flags().Set(strings.TrimPrefix(c.flags[i], "--"), c.flags[i+1]); err != nil {
				t.Fatal(err)
			}
		}
		mech, stated, err := pf.settle(cmd, c.meta)
		switch {
		case c.want == "" && err != nil, c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		case c.want == "" && mech.Name() != c.mech:
			t.Errorf("%s: mechanism %s, want %s", c.name, mech.Name(), c.mech)
		case c.want == "" && c.meta != nil && (cliout.Float(mech.(ensemble.ConfidentGNMax).Threshold) != headerSettings(c.meta, mech)["threshold"] || !slices.Equal(stated, []string{"sigma2", "threshold", "sigma1", "noise"})):
			t.Errorf("%s: mechanism %+v, stated %v", c.name, mech, stated)
		}
	}
	for _, edit := range []func(*votefile.LabelMeta){
		func(m *votefile.LabelMeta) {
			m.Settings = []byte(`{"threshold":200,"sigma1":150,"sigma2":40,"noise":"loud"}`)
		},
		func(m *votefile.LabelMeta) { m.Relation = "friends" },
		func(m *votefile.LabelMeta) { m.Partition = "random" },
	} {
		bad := *m
		edit(&bad)
		cmd, pf := pateCmd()
		if _, _, err := pf.settle(cmd, &bad); err == nil || !strings.Contains(err.Error(), "label file header") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// pateCmd returns darrm account pate's command and its flags.
func pateCmd() (*cobra.Command, *accountPATEFlags) {
	f := &accountPATEFlags{Noise: noisymax.DiscreteNoise, ms: testMechanisms()}
	cmd := newCmd("account-pate", &cobra.Command{Use: "pate"}, f)
	f.ms.BindSettings(cmd, votefile.ManyClasses)
	return cmd, f
}

// TestSettleList: a list given (--levels) is compared with the header's
// as a list of numbers, not in pflag's own words ([80.000000,...]): one
// that repeats the header's is taken, one that contradicts it is refused
// naming both lists as the flag takes them.
func TestSettleList(t *testing.T) {
	meta := &votefile.LabelMeta{Mechanism: "progressive-gnmax", Relation: "one-vote", Settings: []byte(`{"levels":[80,71.5,63],"kappa":1.45}`)}
	for _, c := range []struct{ levels, want string }{
		{"80,71.5,63", ""},
		{"80,71", "levels = 80,71 given, but the label file's header states levels = 80,71.5,63"},
	} {
		cmd, pf := pateCmd()
		if err := cmd.Flags().Set("levels", c.levels); err != nil {
			t.Fatal(err)
		}
		if _, _, err := pf.settle(cmd, meta); c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("--levels %s: %v, want %q", c.levels, err, c.want)
		}
	}
}
