package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/internal/enum"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/pate"
)

// analysisFlags are the choices of PATE's data-dependent analysis that
// account pate and darrm pate share: the directions it bounds and the
// parameters of the smooth-sensitivity release of its cost.
type analysisFlags struct {
	Directions pate.Directions `flag:"directions" help:"data-dependent bound: both directions or one-sided"`
	SSParams   ssChoice        `flag:"ss-parameters" help:"smooth-sensitivity draw: data-free or from-votes"`
	SSOrder    float64         `flag:"ss-order" help:"Renyi order of the smooth-sensitivity draw" default:"by --ss-parameters"`
	Beta       float64         `flag:"beta" help:"smoothness beta, in (0, 1/(2·order))" default:"by --ss-parameters"`
	SigmaSS    float64         `flag:"sigma-ss" help:"noise multiplier sigma_ss, > 0" default:"by --ss-parameters"`
}

// smooth returns the parameters of the smooth-sensitivity release the
// flags give (smoothParams checks them).
func (f *analysisFlags) smooth(cmd *cobra.Command) (pate.SmoothParams, error) {
	fs := cmd.Flags()
	p, err := smoothParams(cli.Given(fs, "ss-order", f.SSOrder), cli.Given(fs, "beta", f.Beta), cli.Given(fs, "sigma-ss", f.SigmaSS), f.SSParams == ssFromVotes)
	if err != nil {
		return p, setup.Flagged(err, map[string]string{"ss order": "--ss-order", "sigma ss": "--sigma-ss"})
	}
	if p.FromVotes && fs.Changed("beta") != fs.Changed("sigma-ss") {
		return p, cli.Usagef("--ss-parameters from-votes chooses --beta and --sigma-ss together: fix both, or neither")
	}
	return p, nil
}

// smoothParams returns the parameters of a smooth-sensitivity release of
// which the flags give those not nil, each checked: the order > 1, β > 0
// and σ_ss > 0 (else a parameter error naming "ss order", "beta"
// or "sigma ss"); the others are left open (0), to be chosen as
// fromVotes says (pate.SmoothParams).
func smoothParams(order, beta, sigma *float64, fromVotes bool) (pate.SmoothParams, error) {
	p := pate.SmoothParams{FromVotes: fromVotes}
	for _, v := range []struct {
		name  string
		given *float64
		min   float64
		dst   *float64
	}{{"ss order", order, 1, &p.Order}, {"beta", beta, 0, &p.Beta}, {"sigma ss", sigma, 0, &p.Sigma}} {
		if v.given == nil {
			continue
		}
		if !(*v.given > v.min) {
			return p, &param.Error{Name: v.name, Value: *v.given, Rule: fmt.Sprintf("must be > %g", v.min)}
		}
		*v.dst = *v.given
	}
	return p, nil
}

// ssChoice is --ss-parameters: how the smooth-sensitivity parameters that
// the flags leave open are chosen, ssDataFree by pate's data-free rule,
// which sees no vote, or ssFromVotes by the PATE authors' choice from the
// votes (pate.SmoothParams.FromVotes).
type ssChoice int

const (
	ssDataFree ssChoice = iota
	ssFromVotes
)

// String returns the name of s.
func (s ssChoice) String() string { return ssNames.String(s) }

// MarshalText returns the name of s.
func (s ssChoice) MarshalText() ([]byte, error) { return []byte(ssNames.String(s)), nil }

// UnmarshalText sets s from its name.
func (s *ssChoice) UnmarshalText(text []byte) error { return ssNames.Unmarshal(s, text) }

var ssNames = enum.Names[ssChoice]{List: []string{ssDataFree: "data-free", ssFromVotes: "from-votes"}, Or: true}
