package main

import (
	"slices"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/experiments/shuffleexp"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/shuffleg"
)

func init() { subcommands = append(subcommands, subcommand{"account", newAccountCmd}) }

// accountExtra holds the constructors of account subcommands defined in
// other files.
var accountExtra []func(*setup.Mechanisms) *cobra.Command

func newAccountCmd(ms *setup.Mechanisms) *cobra.Command {
	subs := []*cobra.Command{newAccountComposeCmd(), newAccountQueriesCmd(), newAccountStepEpsCmd(), newAccountGaussianCmd(),
		newAccountDPSGDCmd(), newAccountGNMaxCmd(), newAccountShuffleGCmd(), newAccountRRCmd()}
	for _, c := range accountExtra {
		subs = append(subs, c(ms))
	}
	return newGroupCmd("account", "Privacy accounting: composition, RDP conversion, DP-SGD, GNMax, PATE, DP-ShuffleG, RR", subs...)
}

// newAccount builds the account subcommand use, with the flags of the
// tagged fields of *flags and --format. run
// computes the document that the command prints in the format of
// --format; an accountant parameter or setting error it returns becomes
// a usage error naming the flag (names maps the accountant's names of
// parameters to the flags that differ from them).
func newAccount(use, short string, flags any, names map[string]string, run func(cmd *cobra.Command) (report.Document, error)) *cobra.Command {
	var format struct {
		Format cliout.Format `flag:"format"`
	}
	cmd := newCmd("account-"+use, &cobra.Command{
		Use: use, Short: short, Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			doc, err := run(cmd)
			if err != nil {
				return setup.FlaggedIn("account "+use+": ", err, names)
			}
			return doc.Write(cmd.OutOrStdout(), format.Format)
		},
	}, flags)
	setup.BindFlags(cmd, &format)
	return cmd
}

// stepFlags maps the accountant's names of a composed step to the flags.
var stepFlags = setup.WithFlags(setup.BudgetFlags, map[string]string{"eps": "--step-eps", "delta": "--step-delta", "k": "--steps", "eps total": "--budget-eps"})

func newAccountComposeCmd() *cobra.Command {
	var f struct {
		Step  float64 `flag:"step-eps" required:""`
		Delta float64 `flag:"step-delta"`
		Steps int     `flag:"steps" required:""`
		setup.CompositionFlags
	}
	return newAccount("compose", "Total privacy of k composed (eps, delta)-DP steps (e.g. Q queries)", &f, stepFlags, func(*cobra.Command) (report.Document, error) {
		step := accountant.Guarantee{Eps: f.Step, Delta: f.Delta}
		total, err := f.Composition().Compose(step, f.Steps)
		return report.AccountCompose{Method: f.Method, DeltaPrime: f.DeltaPrime, Steps: f.Steps, Step: step, Total: total}, err
	})
}

func newAccountQueriesCmd() *cobra.Command {
	var f struct {
		Step        float64 `flag:"step-eps" required:""`
		Delta       float64 `flag:"step-delta"`
		BudgetEps   float64 `flag:"budget-eps" required:""`
		BudgetDelta float64 `flag:"budget-delta"`
		setup.CompositionFlags
	}
	return newAccount("queries", "Largest number of (eps, delta)-DP queries within a total budget", &f, stepFlags, func(*cobra.Command) (report.Document, error) {
		d := report.AccountQueries{Method: f.Method, DeltaPrime: f.DeltaPrime, Step: accountant.Guarantee{Eps: f.Step, Delta: f.Delta},
			Budget: accountant.Guarantee{Eps: f.BudgetEps, Delta: f.BudgetDelta}}
		var err error
		if d.Queries, err = f.Composition().MaxSteps(d.Step, accountant.Budget{Guarantee: d.Budget}); err != nil || d.Queries == 0 {
			return d, err
		}
		if d.Total, err = f.Composition().Compose(d.Step, d.Queries); err == nil && !d.Total.Within(d.Budget) {
			// The count fits by simple composition alone (MaxSteps takes
			// either): its total, within the budget, is the one printed.
			d.Method = accountant.Simple
			d.Total, err = accountant.Composition{Method: accountant.Simple}.Compose(d.Step, d.Queries)
		}
		return d, err
	})
}

func newAccountStepEpsCmd() *cobra.Command {
	var f struct {
		BudgetEps float64 `flag:"budget-eps" required:""`
		Delta     float64 `flag:"step-delta"`
		Steps     int     `flag:"steps" required:""`
		setup.CompositionFlags
	}
	return newAccount("step-eps", "Largest per-step eps whose k-fold composition meets a total eps", &f, stepFlags, func(*cobra.Command) (report.Document, error) {
		d := report.AccountStepEps{Method: f.Method, DeltaPrime: f.DeltaPrime, Steps: f.Steps, BudgetEps: f.BudgetEps, StepDelta: f.Delta}
		var err error
		if d.Step, err = f.Composition().StepEps(f.BudgetEps, f.Delta, f.Steps); err != nil {
			return nil, err
		}
		d.Total, err = f.Composition().Compose(accountant.Guarantee{Eps: d.Step, Delta: f.Delta}, f.Steps)
		return d, err
	})
}

// targetFlags maps the accountant's names of a calibration's parameters to
// the flags.
var targetFlags = map[string]string{"eps": "--target-eps", "delta": "--target-delta", "k": "--steps", "search": "--gnmax-search", "K": "--K"}

func newAccountGaussianCmd() *cobra.Command {
	f := struct {
		Sigma       float64               `flag:"sigma" required:""`
		Steps       int                   `flag:"steps" required:""`
		Delta       float64               `flag:"target-delta" required:""`
		Conversion  accountant.Conversion `flag:"conversion"`
		Sensitivity float64               `flag:"sensitivity" help:"L2 sensitivity (> 0)"`
		Alpha       float64               `flag:"alpha" help:"Renyi order (> 1)" default:"the order that minimises eps"`
	}{Sensitivity: 1}
	return newAccount("gaussian", "RDP of k composed Gaussian mechanisms and their (eps, delta)-DP", &f, targetFlags, func(cmd *cobra.Command) (report.Document, error) {
		// The library reads an order of 0 as "choose it": a given 0 is
		// an order, and not one.
		if cmd.Flags().Changed("alpha") && f.Alpha == 0 {
			return nil, cli.Usagef("account gaussian: --alpha = 0: must be a finite number > 1 (without --alpha: the order that minimises eps)")
		}
		d := report.AccountGaussian{Run: accountant.Gaussian{Sensitivity: f.Sensitivity, Sigma: f.Sigma, Steps: f.Steps}, Conversion: f.Conversion, Delta: f.Delta}
		var err error
		if d.Rho, err = d.Run.Rho(); err != nil {
			return nil, err
		}
		d.Eps, d.Alpha, err = d.Run.Eps(f.Delta, f.Alpha, f.Conversion)
		return d, err
	})
}

func newAccountGNMaxCmd() *cobra.Command {
	var f struct {
		Eps        []float64             `flag:"target-eps" required:""`
		Delta      float64               `flag:"target-delta" required:""`
		Search     noisymax.GNMaxSearch  `flag:"gnmax-search"`
		Conversion accountant.Conversion `flag:"conversion"`
		K          int                   `flag:"K"`
		Plot       string                `flag:"plot"`
		Marks      []float64             `flag:"mark-lambda" help:"with --plot: orders lambda to mark (one per target, or each in all)"`
		MarkLabel  string                `flag:"mark-label" help:"with --mark-lambda: what the marked orders are, for the legend"`
		Title      string                `flag:"title" help:"with --plot: title above the figure" default:"what it shows"`
	}
	return newAccount("gnmax", "Noise sigma of GNMax for a per-query (eps, delta) target", &f, targetFlags, func(cmd *cobra.Command) (report.Document, error) {
		if err := setup.CheckPlot(f.Plot); err != nil {
			return nil, err
		}
		tight := f.Search == noisymax.GNMaxTight
		fs := cmd.Flags()
		switch {
		case tight && !fs.Changed("K"):
			return nil, cli.Usagef("account gnmax: --gnmax-search tight needs --K, the number of teachers whose votes the bit is computed from")
		case tight && fs.Changed("conversion"):
			return nil, cli.Usagef("account gnmax: --gnmax-search tight uses no RDP conversion: drop --conversion")
		case tight && f.Plot != "":
			return nil, cli.Usagef("account gnmax: --plot draws the RDP search over lambda (grid or exact), which --gnmax-search tight does not use")
		case !tight && fs.Changed("K"):
			return nil, cli.Usagef("account gnmax: --K is used by --gnmax-search tight only")
		}
		d := report.AccountGNMax{Search: f.Search, Conversion: f.Conversion, K: f.K, Delta: f.Delta}
		for _, e := range f.Eps {
			// Each target is a search of its own, which does not see the
			// context: a long list of them stops between two (SIGTERM).
			if err := cmd.Context().Err(); err != nil {
				return nil, err
			}
			target := accountant.Guarantee{Eps: e, Delta: f.Delta}
			var sigma, lambda float64
			var err error
			if tight {
				sigma, err = noisymax.GNMaxSigmaTight(target, f.K)
			} else {
				sigma, lambda, err = noisymax.CalibrateGNMax(target, f.Search, f.Conversion)
			}
			if err != nil {
				return nil, err
			}
			d.Rows = append(d.Rows, report.GNMaxNoise{Eps: e, Sigma: sigma, Lambda: lambda})
		}
		if f.Plot != "" {
			return d, d.WriteFigure(cmd.Context(), f.Plot, f.Title, f.Marks, f.MarkLabel)
		}
		return d, nil
	})
}

func newAccountShuffleGCmd() *cobra.Command {
	f := struct {
		Eps        []float64 `flag:"target-eps"`
		Delta      float64   `flag:"target-delta" required:""`
		Sigma      float64   `flag:"sigma"`
		Algorithms []string  `flag:"algorithm" help:"dp-shuffleg, priv-pub, pub-priv, interleaved or all"`
		G          float64   `flag:"G" help:"Lipschitz constant / gradient clipping norm (> 0)" required:""`
		Epochs     int       `flag:"epochs" help:"number of epochs (the K of Chapter 4), >= 1" required:""`
		S          int       `flag:"S" help:"priv-pub, pub-priv: epochs before the switch, in [1, epochs-1]"`
		N          int       `flag:"n" help:"interleaved: steps per epoch n"`
		ND         int       `flag:"nd" help:"interleaved: private steps per epoch n_d, in [1, n]"`
	}{Algorithms: []string{"dp-shuffleg"}}
	names := map[string]string{"eps": "--target-eps", "delta": "--target-delta", "n_d": "--nd", "clip": "--G"}
	return newAccount("shuffleg", "Noise calibration of DP-ShuffleG, Priv-Pub, Pub-Priv and Interleaved", &f, names, func(cmd *cobra.Command) (report.Document, error) {
		fs := cmd.Flags()
		if fs.Changed("target-eps") == fs.Changed("sigma") {
			return nil, cli.Usagef("account shuffleg: give exactly one of --target-eps (calibrate sigma) and --sigma (compute eps)")
		}
		algs, err := shuffleexp.ParsePrivateAlgorithms(f.Algorithms)
		if err != nil {
			return nil, cli.Usagef("--algorithm %v", err)
		}
		// A flag that no algorithm asked for reads would be accounted as
		// if it held.
		uses := func(a ...shuffleg.Algorithm) bool {
			return slices.ContainsFunc(algs, func(b shuffleg.Algorithm) bool { return slices.Contains(a, b) })
		}
		switch {
		case fs.Changed("S") && !uses(shuffleg.PrivPub, shuffleg.PubPriv):
			return nil, cli.Usagef("account shuffleg: --S is the switch epoch of priv-pub and pub-priv, which --algorithm does not name")
		case (fs.Changed("n") || fs.Changed("nd")) && !uses(shuffleg.Interleaved):
			return nil, cli.Usagef("account shuffleg: --n and --nd are interleaved's steps, which --algorithm does not name")
		}
		d := report.AccountShuffleg{Delta: f.Delta, G: f.G, Epochs: f.Epochs, S: cli.Given(fs, "S", f.S), N: cli.Given(fs, "n", f.N), ND: cli.Given(fs, "nd", f.ND)}
		d.Rows, err = shuffleexp.NoiseRequest{Algorithms: algs, Epochs: f.Epochs, S: f.S, N: f.N, ND: f.ND, G: f.G, Delta: f.Delta,
			Sigma: cli.Given(fs, "sigma", f.Sigma), Targets: f.Eps}.Run()
		return d, err
	})
}

func newAccountRRCmd() *cobra.Command {
	var f struct {
		setup.ProblemFlags
		RRComp  setup.RRMethod `flag:"rr-composition"`
		RRDelta float64        `flag:"rr-delta-prime"`
	}
	names := map[string]string{"k": "--K", "delta": "--Delta", "delta'": "--rr-delta-prime"}
	return newAccount("rr", "Randomized response's p_const for the majority of K private teachers", &f, names, func(cmd *cobra.Command) (report.Document, error) {
		p, err := f.Params(cmd)
		if err != nil {
			return nil, err
		}
		d := report.AccountRR{Problem: p.Problem, Method: f.RRComp.For(p.Delta), DeltaPrime: f.RRDelta}
		if d.RR, err = gamma.NewRRConst(p.Problem, d.Method, f.RRDelta); err != nil {
			return nil, cli.AsUsage(err)
		}
		return d, nil
	})
}
