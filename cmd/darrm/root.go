package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// subcommands holds the constructors of darrm's commands. Each command file
// registers its constructor in an init function, so that commands can be
// added without editing this file.
var subcommands []func() *cobra.Command

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "darrm",
		Short: "Certified optimal private majority ensembling (DaRRM)",
		Long: `darrm computes the optimal noise function gamma of DaRRM (Data-dependent
Randomized Response Majority) by linear programming, certifies that it is
(m·eps, delta)-differentially private by exhaustive separation, caches it, and
uses it to release private majority votes of K (eps, Delta)-DP teachers.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	for _, newCmd := range subcommands {
		root.AddCommand(newCmd())
	}
	return root
}

// isFlagError reports whether err came from cobra's or pflag's argument
// parsing, which is a usage error.
func isFlagError(err error) bool {
	msg := err.Error()
	for _, s := range []string{"unknown flag", "unknown shorthand flag", "invalid argument", "flag needs an argument", "unknown command", "accepts ", "requires at least", "required flag"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
