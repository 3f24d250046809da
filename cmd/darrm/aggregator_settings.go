package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
)

// classFlags are the settings of the multi-class mechanisms.
type classFlags struct {
	Sigma2       float64 `flag:"sigma2" help:"gnmax, confident-gnmax: noise on each class count (> 0)"`
	Threshold    float64 `flag:"threshold" help:"confident-gnmax: answer when the noisy top count reaches this"`
	Sigma1       float64 `flag:"sigma1" help:"confident-gnmax: noise of the threshold step (> 0)"`
	LaplaceScale float64 `flag:"laplace-scale" help:"lnmax: scale b of the Laplace noise on each count (> 0)"`
}

// Given returns the settings the flags give (nil: not given).
func (f *classFlags) Given(cmd *cobra.Command) provenance.Settings {
	fs := cmd.Flags()
	return provenance.Settings{Threshold: cli.Given(fs, "threshold", f.Threshold), Sigma1: cli.Given(fs, "sigma1", f.Sigma1),
		Sigma2: cli.Given(fs, "sigma2", f.Sigma2), LaplaceScale: cli.Given(fs, "laplace-scale", f.LaplaceScale)}
}

// gnmaxOf returns the GNMax-family parameters of settings s with noise
// (provenance.Settings.GNMax), a bad one named as its flag.
func gnmaxOf(s provenance.Settings, noise noisymax.Noise) (noisymax.ConfidentGNMax, error) {
	m, err := s.GNMax(noise)
	return m, flagErr(err, nil)
}

// checkSettings refuses the flag of a setting (a flag that a registered
// mechanism needs or takes) that mechanism info does not take, and asks
// for each it needs that neither a flag nor stated (a label file's
// header) gives (ensemble.MechanismInfo.CheckSettings).
func checkSettings(cmd *cobra.Command, info ensemble.MechanismInfo, stated provenance.Settings) error {
	u := info.CheckSettings(func(s ensemble.Setting) (set, known bool) {
		name := s.Flag()
		fl := cmd.Flags().Lookup(name)
		return fl != nil && fl.Changed, fl != nil && fl.Name == name
	}, stated)
	switch {
	case u == nil:
		return nil
	case u.Missing:
		return cli.Usagef("--%s is required by %s", u.Setting.Flag(), info.Name)
	}
	flag, takes := u.Setting.Flag(), make([]string, len(u.Takes))
	for i, s := range u.Takes {
		takes[i] = s.Flag()
	}
	msg := fmt.Sprintf("--%s is not a setting of %s on %v, which takes --%s", flag, info.Name, info.Input, strings.Join(takes, ", --"))
	if others := provenance.JoinMechanisms(u.TakenBy, ", "); u.Input != info.Input {
		msg += fmt.Sprintf(" (--%s is a setting of %s on %v: --input-format counts, --classes C, or a metadata header that states them)", flag, others, u.Input)
	} else {
		msg += fmt.Sprintf(" (--%s is a setting of %s)", flag, others)
	}
	return cli.Usagef("%s", msg)
}
