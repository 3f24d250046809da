package setup

import (
	"errors"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/curveplot"
	"github.com/darrm/darrm/cmd/darrm/internal/figure"
	"github.com/darrm/darrm/cmd/darrm/internal/resolve"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/cachedir"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/noisymax"
)

// Registry holds the flags that name one concept in every command that
// has them: their names, defaults and help are defined here once (and
// listed, with what each means in full, in the README's table of
// defaults); TestSharedFlags checks that no command redefines them.
// Defaults that are numbers come from the library, where the concept is
// defined. A command whose default comes from its input says so
// (cli.SetDefaultText).
var Registry = cli.NewRegistry([]cli.Flag{
	{Name: "K", Default: 0, Usage: "number of teachers K, >= 1 (odd for two-class votes)"},
	{Name: "m", Default: resolve.DefaultM, Usage: "each release (m·eps, delta)-DP, 1 <= m <= K"},
	{Name: "eps", Default: resolve.DefaultEps, Usage: "teachers' eps: each (eps, Delta)-DP"},
	{Name: "Delta", Default: resolve.DefaultDelta, Usage: "teachers' Delta: each (eps, Delta)-DP"},
	{Name: "delta", Default: 0.0, Usage: "delta of each release's guarantee", DefaultText: "1-(1-Delta)^m"},

	{Name: "format", Default: cliout.Table, Usage: "output format: table, json or csv"},
	{Name: "workers", Default: 0, Usage: "goroutines for parallel work (0: all cores)"},
	{Name: "seed", Default: uint64(0), Usage: "reproducible run; private outputs NOT FOR RELEASE", DefaultText: "crypto/rand"},
	{Name: "cache-dir", Default: "", Usage: "cache folder", DefaultText: "$" + cachedir.Env + " or $XDG_CACHE_HOME/darrm"},
	{Name: "no-cache", Default: false, Usage: "neither read nor write the cache (gamma_opt, teachers, counts)"},
	{Name: "prior", Default: gamma.UniformPrior(), Usage: "gamma_opt's prior: uniform, tp, a mean, or K means"},
	{Name: "plot", Default: "", Usage: "also draw the figure to this .png or .svg file"},
	{Name: "plot-metric", Default: curveplot.LossMetric, Usage: "plot loss (linear axis) or excess (log axis)"},
	{Name: "setting", Default: accountant.Disjoint, Usage: "teachers' data: disjoint (keyed-hash shares) or shared"},

	{Name: "composition", Default: accountant.General, Usage: "composition theorem: simple, general or optimal"},
	{Name: "delta-prime", Default: accountant.DefaultDeltaPrime, Usage: "slack delta' in (0, 1) of general/optimal composition"},
	{Name: "rr-composition", Default: AutoRR, Usage: "RR's composition: simple, general, optimal or auto"},
	{Name: "rr-delta-prime", Default: accountant.DefaultDeltaPrime, Usage: "RR: slack delta' of that composition"},
	{Name: "gnmax-search", Default: noisymax.GNMaxGrid, Usage: "GNMax's calibration of sigma: grid, exact or tight"},
	{Name: "conversion", Default: accountant.PaperConversion, Usage: "RDP to (eps, delta) conversion: paper or improved"},

	{Name: "steps", Default: 0, Usage: "number of composed steps (>= 1)"},
	{Name: "step-eps", Default: 0.0, Usage: "eps of one composed step (> 0)"},
	{Name: "step-delta", Default: 0.0, Usage: "delta of one composed step, in [0, 0.5]"},
	{Name: "budget-eps", Default: 0.0, Usage: "total eps budget (> 0)"},
	{Name: "budget-delta", Default: 0.0, Usage: "total delta budget, in [0, 0.5]"},
	{Name: "target-eps", Default: []float64(nil), Usage: "eps of the guarantee to meet (> 0; where tabulated, several)"},
	{Name: "target-delta", Default: 0.0, Usage: "delta of the guarantee to meet or report, in [0, 0.5]"},
	{Name: "sigma", Default: 0.0, Usage: "Gaussian noise sigma (> 0), in the units this command's help gives"},
	{Name: "ledger", Default: "", Usage: "privacy ledger to charge: a file, or postgres://...?ledger=NAME"},
	{Name: "analyst", Default: "", Usage: "who charges --ledger (default: the database user); plan: whose --share"},
	{Name: "lock-timeout", Default: ledger.DefaultLockTimeout, Usage: "the longest `wait` for a lock on a ledger (e.g. 30s, 2m)"},
})

// flagRules are the rules of the privacy parameters that several
// commands take: each flag has one, checked by one function (the
// library's) wherever it is given, before any work, so that every command
// refuses the same values in the same words, naming the flag. A command
// adds after it the rules that relate a parameter to others, each named
// as its own: delta >= Delta in DaRRM's problem, m <= K, an odd K for
// two-class votes, m·eps <= 100, the range of a discrete noise, a
// threshold within K + 10·sigma1, a delta > 0 where Renyi DP is converted.
var flagRules = map[string]func(name string, x float64) error{
	// The eps of a guarantee, a budget or a step, and a noise's scale.
	"eps": param.Positive, "target-eps": param.Positive, "budget-eps": param.Positive, "step-eps": param.Positive, "release-eps": param.Positive,
	"sigma": param.Positive, "sigma1": param.Positive, "sigma2": param.Positive, "sigma-ss": param.Positive, "laplace-scale": param.Positive,
	// The delta of a guarantee, a budget, a step or a total.
	"Delta": param.GuaranteeDelta, "delta": param.GuaranteeDelta, "target-delta": param.GuaranteeDelta,
	"budget-delta": param.GuaranteeDelta, "step-delta": param.GuaranteeDelta, "total-delta": param.GuaranteeDelta, "release-delta": param.GuaranteeDelta,
	// The slack of a composition.
	"delta-prime": deltaPrime, "rr-delta-prime": deltaPrime,
}

// countRules are flagRules' counterpart for the counts: K, a number of
// teachers (param.Teachers), the numbers of queries or steps, which the
// accountant counts exactly up to accountant.CountLimit, and the workers
// (param.Workers), checked where no parallel work reads them too.
var countRules = map[string]func(n int) error{
	"K":       func(n int) error { return param.Teachers(n, false) },
	"queries": steps, "budget-queries": steps, "steps": steps,
	"workers": param.Workers,
}

// durationRules are flagRules' counterpart for the durations.
var durationRules = map[string]func(name string, d time.Duration) error{
	"lock-timeout": func(name string, d time.Duration) error {
		if d <= 0 {
			return &param.Error{Name: name, Value: d, Rule: "must be positive: the longest wait for a lock on a ledger"}
		}
		return nil
	},
}

func deltaPrime(_ string, x float64) error { return param.DeltaPrime(x) }

func steps(n int) error { return param.CountIn("steps", n, 1, accountant.CountLimit) }

// CheckFlagRules checks each flag of flagRules and countRules given to cmd
// by its rule, and names the flag and the value as given (every value of
// a list).
func CheckFlagRules(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if err != nil {
			return
		}
		// The values as parsed, read back from their text, which pflag
		// writes exactly (strconv's shortest form).
		values := []string{f.Value.String()}
		if list, ok := f.Value.(interface{ GetSlice() []string }); ok {
			values = list.GetSlice()
		}
		for _, v := range values {
			if rule, ok := flagRules[f.Name]; ok {
				x, _ := strconv.ParseFloat(v, 64)
				err = asFlag(f.Name, x, rule(f.Name, x))
			}
			if rule, ok := countRules[f.Name]; ok {
				n, _ := strconv.Atoi(v)
				err = asFlag(f.Name, n, rule(n))
			}
			if rule, ok := durationRules[f.Name]; ok {
				d, _ := time.ParseDuration(v)
				err = asFlag(f.Name, d, rule(f.Name, d))
			}
			if err != nil {
				return
			}
		}
	})
	return err
}

// asFlag says err, a parameter's rule broken by value, as the flag name's.
func asFlag(name string, value any, err error) error {
	var pe *param.Error
	if errors.As(err, &pe) {
		return &param.Error{Name: "--" + name, Value: value, Rule: pe.Rule}
	}
	return err
}

// BindFlags defines the flags of the tagged fields of the struct p points to
// (cli.Registry.BindFlags): a shared flag takes its default and help from
// Registry, any other from the field and its help tag.
func BindFlags(cmd *cobra.Command, p any) { Registry.Bind(cmd.Flags(), p) }

// CheckPlot refuses a --plot file that cannot be drawn, before any work;
// "" is no plot.
func CheckPlot(path string) error {
	if path == "" {
		return nil
	}
	return cli.AsUsage(figure.CheckPath(path))
}

// CheckWorkers checks --workers before any work (param.Workers,
// the rule of every library that takes a number of goroutines).
func CheckWorkers(n int) error { return Flagged(param.Workers(n), nil) }

// CompositionFlags are --composition and --delta-prime.
type CompositionFlags struct {
	Method     accountant.Method `flag:"composition"`
	DeltaPrime float64           `flag:"delta-prime"`
}

// Composition returns the composition the flags give.
func (c *CompositionFlags) Composition() accountant.Composition {
	return accountant.Composition{Method: c.Method, DeltaPrime: c.DeltaPrime}
}

// Ignored is a flag of the shared set that a command hides (Hide) because
// nothing it prints depends on it, for Why. It is still accepted, with a
// note on standard error when given (Note), so that scripts that give it
// still run.
type Ignored struct{ Flag, Why string }

// Hide hides the flag of cmd.
func (i Ignored) Hide(cmd *cobra.Command) { cmd.Flags().MarkHidden(i.Flag) }

// Note notes on standard error that the flag, if given, changes nothing.
func (i Ignored) Note(cmd *cobra.Command) {
	if cmd.Flags().Changed(i.Flag) {
		cliout.Note(cmd.ErrOrStderr())("--" + i.Flag + " changes nothing here: " + i.Why)
	}
}

// IgnoredComposition is --composition of a command whose budget and total
// to publish take, at the budget's delta, the least eps of every
// composition valid for the run, whatever the flag says; --delta-prime
// still gives the slack of the analysis totals, of the teachers' cap as
// shown and of the default total delta.
var IgnoredComposition = Ignored{Flag: "composition", Why: "a budget and the total to publish take, at the budget's delta, the least eps of every composition valid for the run"}
