package main

import (
	"slices"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/cli"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/figure"
	"github.com/darrm/darrm/shuffleg"
)

func init() { subcommands = append(subcommands, newAccountCmd) }

func newAccountCmd() *cobra.Command {
	return newGroupCmd("account", "Privacy accounting: composition, RDP conversion, DP-SGD, GNMax, DP-ShuffleG, RR",
		newAccountComposeCmd(), newAccountQueriesCmd(), newAccountStepEpsCmd(), newAccountGaussianCmd(),
		newAccountDPSGDCmd(), newAccountGNMaxCmd(), newAccountShuffleGCmd(), newAccountRRCmd(),
	)
}

// newAccount builds the account subcommand use, with the flags of the
// tagged fields of *flags, --format, and the earlier spellings old. run
// gets the parsed format; an accountant parameter error it returns becomes
// a usage error naming the flag (names maps the accountant's names of
// parameters to the flags that differ from them).
func newAccount(use, short string, flags any, names, old map[string]string, run func(cmd *cobra.Command, f cliout.Format) error) *cobra.Command {
	var format struct {
		Format cliout.Format `flag:"format"`
	}
	cmd := newCmd("account-"+use, &cobra.Command{
		Use: use, Short: short, Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			err := run(cmd, format.Format)
			if msg, ok := paramMessage(err, names); ok {
				return cli.Usagef("account %s: %s", use, msg)
			}
			return err
		},
	}, flags, old)
	bind(cmd, &format)
	return cmd
}

// stepFlags maps the accountant's names of a composed step to the flags.
var stepFlags = map[string]string{"eps": "--step-eps", "delta": "--step-delta", "k": "--steps", "delta'": "--delta-prime",
	"budget eps": "--budget-eps", "budget delta": "--budget-delta", "eps total": "--budget-eps"}

// stepAliases are the earlier spellings of the composition commands' flags.
var stepAliases = map[string]string{"eps": "step-eps", "delta": "step-delta", "k": "steps", "method": "composition", "eps-total": "budget-eps"}

// composed starts the output of a composition: the method and its
// reference, fields, and delta' for the methods that use it.
func composed(m accountant.Method, deltaPrime float64, fields ...cliout.Field) cliout.Record {
	r := append(cliout.Record{{Key: "method", Val: m.String()}, {Key: "reference", Val: m.Reference()}}, fields...)
	if m != accountant.Simple {
		r = append(r, cliout.Field{Key: "delta_prime", Val: deltaPrime})
	}
	return r
}

func newAccountComposeCmd() *cobra.Command {
	var f struct {
		Step  float64 `flag:"step-eps" required:""`
		Delta float64 `flag:"step-delta"`
		Steps int     `flag:"steps" required:""`
		compositionFlags
	}
	return newAccount("compose", "Total privacy of k composed (eps, delta)-DP steps (e.g. Q queries)", &f, stepFlags, stepAliases, func(cmd *cobra.Command, format cliout.Format) error {
		if err := f.checkDeltaPrime(); err != nil {
			return err
		}
		m, dp := f.Method, f.DeltaPrime
		total, err := accountant.Compose(accountant.Guarantee{Eps: f.Step, Delta: f.Delta}, f.Steps, m, dp)
		if err != nil {
			return err
		}
		r := composed(m, dp, cliout.Field{Key: "k", Val: f.Steps}, cliout.Field{Key: "step_eps", Val: f.Step}, cliout.Field{Key: "step_delta", Val: f.Delta})
		return cliout.WriteRecord(cmd.OutOrStdout(), format, append(r, cliout.Field{Key: "eps", Val: total.Eps}, cliout.Field{Key: "delta", Val: total.Delta}))
	})
}

func newAccountQueriesCmd() *cobra.Command {
	var f struct {
		Step        float64 `flag:"step-eps" required:""`
		Delta       float64 `flag:"step-delta"`
		BudgetEps   float64 `flag:"budget-eps" required:""`
		BudgetDelta float64 `flag:"budget-delta"`
		compositionFlags
	}
	return newAccount("queries", "Largest number of (eps, delta)-DP queries within a total budget", &f, stepFlags, stepAliases, func(cmd *cobra.Command, format cliout.Format) error {
		if err := f.checkDeltaPrime(); err != nil {
			return err
		}
		m, dp := f.Method, f.DeltaPrime
		step := accountant.Guarantee{Eps: f.Step, Delta: f.Delta}
		q, err := accountant.MaxSteps(step, accountant.Guarantee{Eps: f.BudgetEps, Delta: f.BudgetDelta}, m, dp)
		if err != nil {
			return err
		}
		r := composed(m, dp, cliout.Field{Key: "step_eps", Val: f.Step}, cliout.Field{Key: "step_delta", Val: f.Delta},
			cliout.Field{Key: "budget_eps", Val: f.BudgetEps}, cliout.Field{Key: "budget_delta", Val: f.BudgetDelta})
		r = append(r, cliout.Field{Key: "queries", Val: q})
		if q > 0 {
			total, err := accountant.Compose(step, q, m, dp)
			if err != nil {
				return err
			}
			r = append(r, cliout.Field{Key: "eps", Val: total.Eps}, cliout.Field{Key: "delta", Val: total.Delta})
		}
		return cliout.WriteRecord(cmd.OutOrStdout(), format, r)
	})
}

func newAccountStepEpsCmd() *cobra.Command {
	var f struct {
		BudgetEps float64 `flag:"budget-eps" required:""`
		Delta     float64 `flag:"step-delta"`
		Steps     int     `flag:"steps" required:""`
		compositionFlags
	}
	return newAccount("step-eps", "Largest per-step eps whose k-fold composition meets a total eps", &f, stepFlags, stepAliases, func(cmd *cobra.Command, format cliout.Format) error {
		if err := f.checkDeltaPrime(); err != nil {
			return err
		}
		m, dp := f.Method, f.DeltaPrime
		eps, err := accountant.StepEps(f.BudgetEps, f.Delta, f.Steps, m, dp)
		if err != nil {
			return err
		}
		total, err := accountant.Compose(accountant.Guarantee{Eps: eps, Delta: f.Delta}, f.Steps, m, dp)
		if err != nil {
			return err
		}
		r := composed(m, dp, cliout.Field{Key: "k", Val: f.Steps}, cliout.Field{Key: "eps_total_target", Val: f.BudgetEps}, cliout.Field{Key: "step_delta", Val: f.Delta})
		return cliout.WriteRecord(cmd.OutOrStdout(), format, append(r, cliout.Field{Key: "step_eps", Val: eps},
			cliout.Field{Key: "eps", Val: total.Eps}, cliout.Field{Key: "delta", Val: total.Delta}))
	})
}

// targetAliases are the earlier spellings of the calibration commands'
// flags.
var targetAliases = map[string]string{"eps": "target-eps", "delta": "target-delta", "k": "steps", "method": "gnmax-search"}

// targetFlags maps the accountant's names of a calibration's parameters to
// the flags.
var targetFlags = map[string]string{"eps": "--target-eps", "delta": "--target-delta", "k": "--steps", "search": "--gnmax-search"}

func newAccountGaussianCmd() *cobra.Command {
	f := struct {
		Sigma       float64               `flag:"sigma" required:""`
		Steps       int                   `flag:"steps" required:""`
		Delta       float64               `flag:"target-delta" required:""`
		Conversion  accountant.Conversion `flag:"conversion"`
		Sensitivity float64               `flag:"sensitivity" help:"L2 sensitivity (> 0)"`
		Alpha       float64               `flag:"alpha" help:"Renyi order (> 1); default: the order that minimises eps"`
	}{Sensitivity: 1}
	return newAccount("gaussian", "RDP of k composed Gaussian mechanisms and their (eps, delta)-DP", &f, targetFlags, targetAliases, func(cmd *cobra.Command, format cliout.Format) error {
		c := f.Conversion
		g := accountant.Gaussian{Sensitivity: f.Sensitivity, Sigma: f.Sigma, Steps: f.Steps}
		rho, err := g.Rho()
		if err != nil {
			return err
		}
		eps, alpha, err := g.Eps(f.Delta, f.Alpha, c)
		if err != nil {
			return err
		}
		return cliout.WriteRecord(cmd.OutOrStdout(), format, cliout.Record{
			{Key: "sensitivity", Val: f.Sensitivity}, {Key: "sigma", Val: f.Sigma}, {Key: "k", Val: f.Steps}, {Key: "rho", Val: rho},
			{Key: "conversion", Val: c.String()}, {Key: "reference", Val: c.Reference()},
			{Key: "alpha", Val: alpha}, {Key: "rdp", Val: rho * alpha}, {Key: "eps", Val: eps}, {Key: "delta", Val: f.Delta},
		})
	})
}

func newAccountGNMaxCmd() *cobra.Command {
	var f struct {
		Eps        []float64              `flag:"target-eps" required:""`
		Delta      float64                `flag:"target-delta" required:""`
		Search     accountant.GNMaxSearch `flag:"gnmax-search"`
		Conversion accountant.Conversion  `flag:"conversion"`
		Plot       string                 `flag:"plot"`
		Marks      []float64              `flag:"mark-lambda" help:"with --plot: orders lambda to mark on the curves (e.g. published values to compare)"`
	}
	return newAccount("gnmax", "Noise sigma of GNMax for a per-query (eps, delta) target", &f, targetFlags, targetAliases, func(cmd *cobra.Command, format cliout.Format) error {
		c, s := f.Conversion, f.Search
		if err := checkPlot(f.Plot); err != nil {
			return err
		}
		var rows []cliout.Record
		var targets []accountant.Guarantee
		for _, e := range f.Eps {
			target := accountant.Guarantee{Eps: e, Delta: f.Delta}
			sigma, lambda, err := accountant.CalibrateGNMax(target, s, c)
			if err != nil {
				return err
			}
			rows = append(rows, cliout.Record{{Key: "eps", Val: e}, {Key: "sigma", Val: sigma}, {Key: "lambda", Val: lambda}, {Key: "rdp", Val: lambda / (sigma * sigma)}})
			targets = append(targets, target)
		}
		if f.Plot != "" {
			if err := figure.WriteGNMax(f.Plot, "", targets, f.Marks); err != nil {
				return err
			}
		}
		common := cliout.Record{{Key: "search", Val: s.String()}, {Key: "conversion", Val: c.String()}, {Key: "delta", Val: f.Delta}}
		if len(rows) == 1 {
			return cliout.WriteRecord(cmd.OutOrStdout(), format, append(slices.Insert(common, 2, cliout.Field{Key: "reference", Val: c.Reference()}), rows[0]...))
		}
		for i := range rows {
			rows[i] = append(rows[i], cliout.Field{Key: "reference", Val: c.Reference()})
		}
		return cliout.WriteRecords(cmd.OutOrStdout(), format, common, rows)
	})
}

func newAccountShuffleGCmd() *cobra.Command {
	f := struct {
		Eps        []float64 `flag:"target-eps"`
		Delta      float64   `flag:"target-delta" required:""`
		Sigma      float64   `flag:"sigma"`
		Algorithms []string  `flag:"algorithm" help:"algorithms, comma-separated: dp-shuffleg, priv-pub, pub-priv, interleaved, all"`
		G          float64   `flag:"G" help:"Lipschitz constant / gradient clipping norm (> 0)" required:""`
		Epochs     int       `flag:"epochs" help:"number of epochs K (>= 1)" required:""`
		S          int       `flag:"S" help:"priv-pub, pub-priv: epochs before the switch, in [1, K-1]"`
		N          int       `flag:"n" help:"interleaved: steps per epoch n"`
		ND         int       `flag:"nd" help:"interleaved: private steps per epoch n_d, in [1, n]"`
	}{Algorithms: []string{"dp-shuffleg"}}
	names := map[string]string{"eps": "--target-eps", "delta": "--target-delta", "n_d": "--nd"}
	return newAccount("shuffleg", "Noise calibration of DP-ShuffleG, Priv-Pub, Pub-Priv and Interleaved", &f, names, map[string]string{"eps": "target-eps", "delta": "target-delta"}, func(cmd *cobra.Command, format cliout.Format) error {
		fs := cmd.Flags()
		if fs.Changed("target-eps") == fs.Changed("sigma") {
			return cli.Usagef("account shuffleg: give exactly one of --target-eps (calibrate sigma) and --sigma (compute eps)")
		}
		algs, err := shuffleg.ParsePrivateAlgorithms(f.Algorithms)
		if err != nil {
			return cli.Usagef("--algorithm %v", err)
		}
		common := cliout.Record{{Key: "delta", Val: f.Delta}, {Key: "G", Val: f.G}, {Key: "epochs", Val: f.Epochs}}
		if fs.Changed("S") {
			common = append(common, cliout.Field{Key: "S", Val: f.S})
		}
		if fs.Changed("n") || fs.Changed("nd") {
			common = append(common, cliout.Field{Key: "n", Val: f.N}, cliout.Field{Key: "n_d", Val: f.ND})
		}
		var rows []cliout.Record
		for _, alg := range algs {
			plan, err := shuffleg.AccountingPlan(alg, f.Epochs, f.S, f.N, f.ND)
			if err != nil {
				return err
			}
			row := func(c accountant.Conversion, fields ...cliout.Field) cliout.Record {
				r := cliout.Record{{Key: "algorithm", Val: alg.String()}, {Key: "private_epochs", Val: plan.PrivEpochs}}
				return append(append(r, fields...), cliout.Field{Key: "reference", Val: alg.Reference() + "; " + c.Reference()})
			}
			if fs.Changed("sigma") {
				for _, c := range []accountant.Conversion{accountant.PaperConversion, accountant.ImprovedConversion} {
					eps, alpha, err := plan.PABI(f.G).Eps(f.Sigma, f.Delta, c)
					if err != nil {
						return err
					}
					rows = append(rows, row(c, cliout.Field{Key: "sigma", Val: f.Sigma}, cliout.Field{Key: "conversion", Val: c.String()},
						cliout.Field{Key: "alpha", Val: alpha}, cliout.Field{Key: "eps", Val: eps}))
				}
			}
			for _, e := range f.Eps {
				cals, err := shuffleg.CalibrateVariants(plan, f.G, accountant.Guarantee{Eps: e, Delta: f.Delta})
				if err != nil {
					return err
				}
				for _, c := range cals {
					rows = append(rows, row(c.Conversion, cliout.Field{Key: "eps", Val: e}, cliout.Field{Key: "conversion", Val: c.Conversion.String()},
						cliout.Field{Key: "alpha_rule", Val: c.AlphaRule.String()}, cliout.Field{Key: "alpha", Val: c.Alpha},
						cliout.Field{Key: "sigma", Val: c.Sigma}, cliout.Field{Key: "ratio", Val: c.Sigma / cals[1].Sigma}))
				}
			}
		}
		return cliout.WriteRecords(cmd.OutOrStdout(), format, common, rows)
	})
}

func newAccountRRCmd() *cobra.Command {
	var f struct {
		problemFlags
		RRComp  accountant.RRMethod `flag:"rr-composition"`
		RRDelta float64             `flag:"rr-delta-prime"`
	}
	names := map[string]string{"k": "--K", "delta": "--Delta", "delta'": "--rr-delta-prime"}
	return newAccount("rr", "Randomized response's p_const for the majority of K private teachers", &f, names, map[string]string{"method": "rr-composition", "delta-prime": "rr-delta-prime"}, func(cmd *cobra.Command, format cliout.Format) error {
		p, err := f.params(cmd)
		if err != nil {
			return err
		}
		m := f.RRComp.For(p.Delta)
		rr, err := gamma.NewRRConst(p.Params, m, f.RRDelta)
		if err != nil {
			return cli.AsUsage(err)
		}
		r := cliout.Record{{Key: "K", Val: p.K}, {Key: "eps", Val: p.Eps}, {Key: "Delta", Val: p.Delta}, {Key: "m", Val: p.M},
			{Key: "delta", Val: p.TargetDelta}, {Key: "method", Val: m.String()}}
		if m != accountant.Simple {
			r = append(r, cliout.Field{Key: "delta_prime", Val: f.RRDelta})
		}
		return cliout.WriteRecord(cmd.OutOrStdout(), format, append(r, cliout.Field{Key: "reference", Val: "Lemma B.1.1; tau, lambda by " + m.Reference()},
			cliout.Field{Key: "tau", Val: rr.Tau}, cliout.Field{Key: "lambda", Val: rr.Lambda}, cliout.Field{Key: "p_const", Val: rr.PConst}))
	})
}
