package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/figure"
	"github.com/darrm/darrm/cmd/darrm/internal/resolve"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// sharedFlags are the flags that name one concept in every command that
// has them: their names, defaults and help are defined here once (and
// listed in the README's table of defaults); TestSharedFlags checks that
// no command redefines them. Defaults that are numbers come from the
// library, where the concept is defined.
var sharedFlags = cli.NewRegistry([]cli.Flag{
	{Name: "K", Default: 0, Usage: "number of teachers K (odd)"},
	{Name: "m", Default: resolve.DefaultM, Usage: "privacy allowance: each release is (m·eps, delta)-DP, 1 <= m <= K; the default is the thesis' main setting"},
	{Name: "eps", Default: resolve.DefaultEps, Usage: "eps of each teacher's (eps, Delta)-DP guarantee; a release takes it from the votes' metadata header, or needs it given (the default is for exploring: solve, verify, simulate)"},
	{Name: "Delta", Default: resolve.DefaultDelta, Usage: "Delta of each teacher's (eps, Delta)-DP guarantee; a release takes it from the votes' metadata header, or needs it given (the default is for exploring: solve, verify, simulate)"},
	{Name: "delta", Default: 0.0, Usage: "delta of each release's (m·eps, delta)-DP guarantee (default 1-(1-Delta)^m)"},

	{Name: "format", Default: cliout.Table, Usage: "output format: table, json or csv"},
	{Name: "workers", Default: 0, Usage: "goroutines for parallel work (0: all cores)"},
	{Name: "seed", Default: uint64(0), Usage: "seed of a reproducible experiment: its outputs are marked NOT FOR RELEASE (default: randomness from crypto/rand)"},
	{Name: "cache-dir", Default: "", Usage: "cache directory: certified gamma_opt, and trained teachers in its teachers/ folder (default $" + cache.EnvDir + ", else $XDG_CACHE_HOME/darrm or ~/.cache/darrm)"},
	{Name: "no-cache", Default: false, Usage: "neither read nor write the cache (gamma_opt, trained teachers)"},
	{Name: "prior", Default: gamma.UniformPrior(), Usage: "prior on the teachers' accuracy for gamma_opt: uniform (mean 0.75), tp (mean 0.85), a mean in (0.5, 1], or K comma-separated means"},
	{Name: "plot", Default: "", Usage: "also draw the figure to this .png or .svg file"},
	{Name: "setting", Default: accountant.Disjoint, Usage: "the private teachers' training data: disjoint (each its own share, cut by a keyed hash of each record; the thesis') or shared (each the whole training set, with its own randomness)"},

	{Name: "composition", Default: accountant.General, Usage: "composition theorem: simple, general or optimal"},
	{Name: "delta-prime", Default: accountant.DefaultDeltaPrime, Usage: "slack delta' in (0, 1) of general and optimal composition"},
	{Name: "rr-composition", Default: accountant.AutoRR, Usage: "RR: composition by which the K teachers' majority is (tau·eps, lambda)-DP in Lemma B.1.1: simple, general, optimal, or auto (general when Delta > 0, else simple)"},
	{Name: "rr-delta-prime", Default: accountant.DefaultDeltaPrime, Usage: "RR: slack delta' of the composition giving tau and lambda"},
	{Name: "gnmax-search", Default: noisymax.GNMaxGrid, Usage: "GNMax's calibration of sigma: grid (the paper's search over the Renyi order, App. B.4.1), exact (the exact minimum over the order) or tight (the exact privacy curve of the released bit for K votes)"},
	{Name: "conversion", Default: accountant.PaperConversion, Usage: "RDP to (eps, delta) conversion: paper or improved"},

	{Name: "steps", Default: 0, Usage: "number of composed steps (>= 1)"},
	{Name: "step-eps", Default: 0.0, Usage: "eps of one composed step (> 0)"},
	{Name: "step-delta", Default: 0.0, Usage: "delta of one composed step, in [0, 1)"},
	{Name: "budget-eps", Default: 0.0, Usage: "total eps budget (> 0)"},
	{Name: "budget-delta", Default: 0.0, Usage: "total delta budget, in [0, 1)"},
	{Name: "target-eps", Default: []float64(nil), Usage: "eps of the (eps, delta)-DP guarantee to meet (> 0); commands that tabulate accept several, comma-separated"},
	{Name: "target-delta", Default: 0.0, Usage: "delta of the (eps, delta)-DP guarantee to meet or report, in (0, 1)"},
	{Name: "sigma", Default: 0.0, Usage: "Gaussian noise: standard deviation in units of the sensitivity (clipping norm), > 0"},
	{Name: "ledger", Default: "", Usage: "privacy ledger file (darrm ledger init): a release is charged to its budget, and recorded before the labels leave; account pate charges its smooth-sensitivity draws (--release-estimate) to it and, with --labels, takes the releases it recorded as the reference for the labels' header, its total then the one to publish"},
})

// bind defines the flags of the tagged fields of the struct p points to
// (cli.Registry.Bind): a shared flag takes its default and help from
// sharedFlags, any other from the field and its help tag.
func bind(cmd *cobra.Command, p any) { sharedFlags.Bind(cmd.Flags(), p) }

// checkPlot refuses a --plot file that cannot be drawn, before any work;
// "" is no plot.
func checkPlot(path string) error {
	if path == "" {
		return nil
	}
	return cli.AsUsage(figure.CheckPath(path))
}

// checkWorkers checks --workers before any work (param.Workers,
// the rule of every library that takes a number of goroutines).
func checkWorkers(n int) error { return flagErr(param.Workers(n), nil) }

// compositionFlags are --composition and --delta-prime.
type compositionFlags struct {
	Method     accountant.Method `flag:"composition"`
	DeltaPrime float64           `flag:"delta-prime"`
}

// composition returns the composition the flags give.
func (c *compositionFlags) composition() accountant.Composition {
	return accountant.Composition{Method: c.Method, DeltaPrime: c.DeltaPrime}
}

// lookupMechanism resolves --mechanism name for a command that has
// --classes: a multi-class mechanism when --classes is given or the name
// is of no two-class one, else the two-class one.
func lookupMechanism(cmd *cobra.Command, name provenance.MechanismName) (ensemble.MechanismInfo, error) {
	in := votefile.TwoClass
	if cmd.Flags().Changed("classes") || len(ensemble.Registry(func(info ensemble.MechanismInfo) bool { return info.Input == votefile.TwoClass && info.Name == name })) == 0 {
		in = votefile.ManyClasses
	}
	info, err := ensemble.LookupMechanism(name, in)
	if err != nil {
		return info, cli.Usagef("--mechanism %v", err)
	}
	return info, nil
}

// hideComposition hides --composition of cmd, whose budget and total to
// publish take, at the budget's delta, the least eps of every composition
// valid for the run, whatever the flag says; --delta-prime still gives
// the slack of the analysis totals, of the teachers' cap as shown and of
// the default total delta. It is still accepted, with a note on standard
// error (compositionIgnored), so that scripts that give it still run.
func hideComposition(cmd *cobra.Command) { cmd.Flags().MarkHidden("composition") }

// compositionIgnored notes on standard error that --composition, if
// given, changes nothing (hideComposition).
func compositionIgnored(cmd *cobra.Command) {
	if cmd.Flags().Changed("composition") {
		fmt.Fprintln(cmd.ErrOrStderr(), "darrm: --composition changes nothing here: a budget and the total to publish take, at the budget's delta, the least eps of every composition valid for the run")
	}
}

// budgetFlags maps the accountant's names of a budget's values
// (accountant.Budget.Validate) to the flags that give them.
var budgetFlags = map[string]string{"budget eps": "--budget-eps", "budget delta": "--budget-delta", "delta'": "--delta-prime"}

// checkDeltaPrime checks --delta-prime (accountant.Composition.Validate),
// in its own words whatever command runs it.
func (c *compositionFlags) checkDeltaPrime() error {
	err := c.composition().Validate()
	if said, ok := flagSaid(err, budgetFlags); ok {
		return cli.Usagef("%s", said)
	}
	return err
}
