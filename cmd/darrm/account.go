package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/figure"
	"github.com/darrm/darrm/shuffleg"
)

func init() { subcommands = append(subcommands, newAccountCmd) }

func newAccountCmd() *cobra.Command {
	return newGroupCmd("account",
		"Privacy accounting: composition, RDP conversion, DP-SGD, GNMax, DP-ShuffleG, RR",
		`account computes privacy guarantees with the accountant package. Every
result names the theorem or conversion that produced it. The paper's formulas
are the defaults; tighter ones (optimal composition, the improved RDP
conversion, the exact GNMax search) are used only when asked for.`,
		newAccountComposeCmd(), newAccountQueriesCmd(), newAccountStepEpsCmd(), newAccountGaussianCmd(),
		newAccountDPSGDCmd(), newAccountGNMaxCmd(), newAccountShuffleGCmd(), newAccountRRCmd(),
	)
}

// accountCmd is what every account subcommand shares: its output format
// and how the accountant's parameter names map to its flags.
type accountCmd struct {
	name   string
	format formatFlag
	flags  map[string]string // accountant parameter name -> flag, where they differ
}

// newAccount builds an account subcommand: run gets the parsed format.
func newAccount(a *accountCmd, use, short, long, example string, old map[string]string, run func(cmd *cobra.Command, f cliout.Format) error) *cobra.Command {
	a.name = use
	cmd := &cobra.Command{
		Use: use, Short: short, Long: long, Example: example, Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := a.format.parse()
			if err != nil {
				return err
			}
			return a.wrap(run(cmd, f))
		},
	}
	a.format.add(cmd)
	if old != nil {
		aliases(cmd, old)
	}
	return cmd
}

// wrap turns an accountant error into darrm's: a parameter outside its
// domain is a usage error (exit 2) naming the flag, the value and the rule.
func (a *accountCmd) wrap(err error) error {
	var pe *accountant.ParamError
	if err == nil || !errors.As(err, &pe) {
		return err
	}
	flag, ok := a.flags[pe.Name]
	if !ok {
		flag = "--" + pe.Name
	}
	return usageErrorf("account %s: %s = %v: %s", a.name, flag, pe.Value, pe.Rule)
}

// slackField lists delta' for the methods that use it.
func slackField(m accountant.Method, deltaPrime float64) cliout.Record {
	if m == accountant.Simple {
		return nil
	}
	return cliout.Record{{Key: "delta_prime", Val: deltaPrime}}
}

// stepFlags maps the accountant's names of a composed step to the flags.
var stepFlags = map[string]string{"eps": "--step-eps", "delta": "--step-delta", "k": "--steps", "delta'": "--delta-prime",
	"budget eps": "--budget-eps", "budget delta": "--budget-delta", "eps total": "--budget-eps"}

// stepAliases are the earlier spellings of the composition commands' flags.
var stepAliases = map[string]string{"eps": "step-eps", "delta": "step-delta", "k": "steps", "method": "composition", "eps-total": "budget-eps"}

const aliasNote = "\n\nEarlier spellings --eps, --delta, --k, --method and --eps-total are still accepted."

func newAccountComposeCmd() *cobra.Command {
	var (
		a     = accountCmd{flags: stepFlags}
		step  accountant.Guarantee
		steps int
		comp  compositionFlags
	)
	cmd := newAccount(&a, "compose", "Total privacy of k composed (eps, delta)-DP steps (e.g. Q queries)",
		`compose prints the total (eps, delta) of --steps adaptively composed
(--step-eps, --step-delta)-DP steps: simple (Theorem 3.3.2), general with slack
delta' (Theorem 3.3.3) or the exact optimal composition of Kairouz, Oh and
Viswanath (Thm 3.3) with the same slack. JSON fields "eps" and "delta" are the
totals.`+aliasNote,
		`  darrm account compose --step-eps 0.1 --step-delta 1e-5 --steps 10 --delta-prime 0.1
  darrm account compose --step-eps 0.2676 --step-delta 3e-4 --steps 100 --delta-prime 1e-4 --composition optimal --format json`,
		stepAliases, func(cmd *cobra.Command, f cliout.Format) error {
			if err := requireFlags(cmd, "step-eps", "steps"); err != nil {
				return err
			}
			m, dp, err := comp.parse()
			if err != nil {
				return err
			}
			total, err := accountant.Compose(step, steps, m, dp)
			if err != nil {
				return err
			}
			r := cliout.Record{{Key: "method", Val: m.String()}, {Key: "reference", Val: m.Reference()}, {Key: "k", Val: steps},
				{Key: "step_eps", Val: step.Eps}, {Key: "step_delta", Val: step.Delta}}
			r = append(r, slackField(m, dp)...)
			return cliout.WriteRecord(cmd.OutOrStdout(), f, append(r, cliout.Field{Key: "eps", Val: total.Eps}, cliout.Field{Key: "delta", Val: total.Delta}))
		})
	fs := cmd.Flags()
	flagStepEps.add(fs, &step.Eps)
	flagStepDelta.add(fs, &step.Delta)
	flagSteps.add(fs, &steps)
	comp.add(cmd)
	return cmd
}

func newAccountQueriesCmd() *cobra.Command {
	var (
		a            = accountCmd{flags: stepFlags}
		step, budget accountant.Guarantee
		comp         compositionFlags
	)
	cmd := newAccount(&a, "queries", "Largest number of (eps, delta)-DP queries within a total budget",
		`queries prints the largest Q such that Q composed (--step-eps, --step-delta)-DP
queries stay within the budget (--budget-eps, --budget-delta) under the chosen
composition, and the total privacy of those Q queries.`+aliasNote,
		`  darrm account queries --step-eps 0.2676 --step-delta 3e-4 --budget-eps 10 --budget-delta 0.02 --delta-prime 1e-4 --composition optimal`,
		stepAliases, func(cmd *cobra.Command, f cliout.Format) error {
			if err := requireFlags(cmd, "step-eps", "budget-eps"); err != nil {
				return err
			}
			m, dp, err := comp.parse()
			if err != nil {
				return err
			}
			q, err := accountant.MaxSteps(step, budget, m, dp)
			if err != nil {
				return err
			}
			r := cliout.Record{{Key: "method", Val: m.String()}, {Key: "reference", Val: m.Reference()},
				{Key: "step_eps", Val: step.Eps}, {Key: "step_delta", Val: step.Delta}, {Key: "budget_eps", Val: budget.Eps}, {Key: "budget_delta", Val: budget.Delta}}
			r = append(append(r, slackField(m, dp)...), cliout.Field{Key: "queries", Val: q})
			if q > 0 {
				total, err := accountant.Compose(step, q, m, dp)
				if err != nil {
					return err
				}
				r = append(r, cliout.Field{Key: "eps", Val: total.Eps}, cliout.Field{Key: "delta", Val: total.Delta})
			}
			return cliout.WriteRecord(cmd.OutOrStdout(), f, r)
		})
	fs := cmd.Flags()
	flagStepEps.add(fs, &step.Eps)
	flagStepDelta.add(fs, &step.Delta)
	flagBudgetEps.add(fs, &budget.Eps)
	flagBudgetDelta.add(fs, &budget.Delta)
	comp.add(cmd)
	return cmd
}

func newAccountStepEpsCmd() *cobra.Command {
	var (
		a                   = accountCmd{flags: stepFlags}
		budgetEps, stepDelt float64
		steps               int
		comp                compositionFlags
	)
	cmd := newAccount(&a, "step-eps", "Largest per-step eps whose k-fold composition meets a total eps",
		`step-eps prints the largest eps such that --steps composed (eps, --step-delta)-DP
steps have total eps at most --budget-eps under the chosen composition, and the
totals.`+aliasNote,
		`  darrm account step-eps --budget-eps 1 --step-delta 1e-6 --steps 100 --composition optimal`,
		stepAliases, func(cmd *cobra.Command, f cliout.Format) error {
			if err := requireFlags(cmd, "budget-eps", "steps"); err != nil {
				return err
			}
			m, dp, err := comp.parse()
			if err != nil {
				return err
			}
			eps, err := accountant.StepEps(budgetEps, stepDelt, steps, m, dp)
			if err != nil {
				return err
			}
			total, err := accountant.Compose(accountant.Guarantee{Eps: eps, Delta: stepDelt}, steps, m, dp)
			if err != nil {
				return err
			}
			r := cliout.Record{{Key: "method", Val: m.String()}, {Key: "reference", Val: m.Reference()}, {Key: "k", Val: steps},
				{Key: "eps_total_target", Val: budgetEps}, {Key: "step_delta", Val: stepDelt}}
			r = append(r, slackField(m, dp)...)
			return cliout.WriteRecord(cmd.OutOrStdout(), f, append(r, cliout.Field{Key: "step_eps", Val: eps},
				cliout.Field{Key: "eps", Val: total.Eps}, cliout.Field{Key: "delta", Val: total.Delta}))
		})
	fs := cmd.Flags()
	flagBudgetEps.add(fs, &budgetEps)
	flagStepDelta.add(fs, &stepDelt)
	flagSteps.add(fs, &steps)
	comp.add(cmd)
	return cmd
}

// targetAliases are the earlier spellings of the calibration commands'
// flags.
var targetAliases = map[string]string{"eps": "target-eps", "delta": "target-delta", "k": "steps", "method": "gnmax-search"}

var targetFlags = map[string]string{"eps": "--target-eps", "delta": "--target-delta", "k": "--steps"}

const targetAliasNote = "\n\nEarlier spellings --eps, --delta, --k and --method are still accepted."

func newAccountGaussianCmd() *cobra.Command {
	var (
		a                         = accountCmd{flags: targetFlags}
		sensitivity, sigma, delta float64
		alpha                     float64
		steps                     int
		conversion                string
	)
	cmd := newAccount(&a, "gaussian", "RDP of k composed Gaussian mechanisms and their (eps, delta)-DP",
		`gaussian prints the Renyi DP of --steps composed Gaussian mechanisms with L2
sensitivity --sensitivity and noise --sigma (in units of the sensitivity),
rdp(alpha) = k·alpha/(2·sigma²) (Mironov 2017 Prop. 7, composition Prop. 1),
and the (eps, --target-delta)-DP it implies under --conversion: at --alpha if
given, else at the exactly optimal alpha.`+targetAliasNote,
		`  darrm account gaussian --sigma 5 --steps 100 --target-delta 1e-5 --conversion improved`,
		targetAliases, func(cmd *cobra.Command, f cliout.Format) error {
			if err := requireFlags(cmd, "sigma", "steps", "target-delta"); err != nil {
				return err
			}
			c, err := parseConversion(conversion)
			if err != nil {
				return err
			}
			if steps < 1 {
				return usageErrorf("account gaussian: --steps = %d: must be an integer >= 1", steps)
			}
			one, err := accountant.GaussianRho(sensitivity, sigma*sensitivity)
			if err != nil {
				return err
			}
			rho := float64(steps) * one
			var eps float64
			if cmd.Flags().Changed("alpha") {
				eps, err = accountant.ConvertRDP(rho*alpha, alpha, delta, c)
			} else {
				eps, alpha, err = accountant.RhoToDP(rho, delta, c)
			}
			if err != nil {
				return err
			}
			return cliout.WriteRecord(cmd.OutOrStdout(), f, cliout.Record{
				{Key: "sensitivity", Val: sensitivity}, {Key: "sigma", Val: sigma}, {Key: "k", Val: steps}, {Key: "rho", Val: rho},
				{Key: "conversion", Val: c.String()}, {Key: "reference", Val: c.Reference()},
				{Key: "alpha", Val: alpha}, {Key: "rdp", Val: rho * alpha}, {Key: "eps", Val: eps}, {Key: "delta", Val: delta},
			})
		})
	fs := cmd.Flags()
	flagSigma.add(fs, &sigma)
	flagSteps.add(fs, &steps)
	flagTargetDelta.add(fs, &delta)
	flagConversion.add(fs, &conversion)
	fs.Float64Var(&sensitivity, "sensitivity", 1, "L2 sensitivity (> 0)")
	fs.Float64Var(&alpha, "alpha", 0, "Renyi order (> 1); default: the order that minimises eps")
	return cmd
}

func newAccountGNMaxCmd() *cobra.Command {
	var (
		a                  = accountCmd{flags: targetFlags}
		eps                []float64
		delta              float64
		search, conversion string
		plotPath           string
		marks              []float64
	)
	cmd := newAccount(&a, "gnmax", "Noise sigma of GNMax for a per-query (eps, delta) target",
		`gnmax prints the noise sigma with which GNMax, which is (lambda, lambda/sigma²)-RDP,
is (eps, delta)-DP per query, and the lambda used, for each --target-eps.
--gnmax-search grid is the paper's search (App. B.4.1: lambda from
log(1/delta)/eps + 1 to 500 in steps of 0.5, with Theorem B.4.1's conversion);
exact minimises over lambda exactly, with --conversion paper (the same
objective) or improved. --plot draws sigma² against lambda over the grid for
each target, with both minima marked (thesis Figure B.8), and a dashed line
at each --mark-lambda.`+targetAliasNote,
		`  darrm account gnmax --target-eps 0.2676,0.2556 --target-delta 3e-4 --format json
  darrm account gnmax --target-eps 0.2676,0.2556 --target-delta 3e-4 --plot b8.png --mark-lambda 34.31,35.74
  darrm account gnmax --target-eps 0.2676 --target-delta 3e-4 --gnmax-search exact --conversion improved`,
		targetAliases, func(cmd *cobra.Command, f cliout.Format) error {
			if err := requireFlags(cmd, "target-eps", "target-delta"); err != nil {
				return err
			}
			c, err := parseConversion(conversion)
			if err != nil {
				return err
			}
			s, err := accountant.ParseGNMaxSearch(search)
			if err != nil {
				return usageErrorf("--gnmax-search: %v", err)
			}
			if s == accountant.GNMaxGrid && c != accountant.PaperConversion {
				return usageErrorf("account gnmax: --gnmax-search grid is the paper's search and uses --conversion paper only")
			}
			if plotPath != "" {
				if err := figure.CheckPath(plotPath); err != nil {
					return &usageError{err}
				}
			}
			var rows []cliout.Record
			var targets []accountant.Guarantee
			for _, e := range eps {
				sigma, lambda, err := accountant.CalibrateGNMax(accountant.Guarantee{Eps: e, Delta: delta}, s, c)
				if err != nil {
					return err
				}
				rows = append(rows, cliout.Record{{Key: "eps", Val: e}, {Key: "sigma", Val: sigma}, {Key: "lambda", Val: lambda}, {Key: "rdp", Val: lambda / (sigma * sigma)}})
				targets = append(targets, accountant.Guarantee{Eps: e, Delta: delta})
			}
			if plotPath != "" {
				if err := figure.WriteGNMax(plotPath, "", targets, marks); err != nil {
					return err
				}
			}
			if len(rows) == 1 {
				return cliout.WriteRecord(cmd.OutOrStdout(), f, append(cliout.Record{{Key: "search", Val: s.String()}, {Key: "conversion", Val: c.String()},
					{Key: "reference", Val: c.Reference()}, {Key: "delta", Val: delta}}, rows[0]...))
			}
			for i := range rows {
				rows[i] = append(rows[i], cliout.Field{Key: "reference", Val: c.Reference()})
			}
			return cliout.WriteRecords(cmd.OutOrStdout(), f, cliout.Record{{Key: "search", Val: s.String()}, {Key: "conversion", Val: c.String()}, {Key: "delta", Val: delta}}, rows)
		})
	fs := cmd.Flags()
	flagTargetEps.add(fs, &eps)
	flagTargetDelta.add(fs, &delta)
	flagGNMaxSearch.add(fs, &search)
	flagConversion.add(fs, &conversion)
	flagPlot.add(fs, &plotPath)
	fs.Float64SliceVar(&marks, "mark-lambda", nil, "with --plot: orders lambda to mark on the curves (e.g. published values to compare)")
	return cmd
}

func newAccountShuffleGCmd() *cobra.Command {
	var (
		a              = accountCmd{flags: map[string]string{"eps": "--target-eps", "delta": "--target-delta", "n_d": "--nd"}}
		algorithms     []string
		eps            []float64
		sigma, delta   float64
		g              float64
		epochs, s, n   int
		nd             int
		algorithmNames = []string{"dp-shuffleg", "priv-pub", "pub-priv", "interleaved", "all"}
	)
	cmd := newAccount(&a, "shuffleg", "Noise calibration of DP-ShuffleG, Priv-Pub, Pub-Priv and Interleaved",
		`shuffleg calibrates the noise of the DP-ShuffleG algorithms (Lemma 4.5.2,
Lemma 4.6.2). With --target-eps it prints, for each algorithm and eps, the
smallest sigma meeting (eps, delta): with the paper's conversion at Table
4.3's alpha, at the exactly optimal alpha, and with the improved conversion;
"ratio" is sigma over the paper conversion's at the optimal alpha. With
--sigma it prints the eps that noise gives under each conversion.

Each private epoch is (alpha, 2·alpha·G²/sigma²)-RDP (divided by n + 1 - n_d for
Interleaved); the private epochs are K (dp-shuffleg, interleaved), S (priv-pub)
and K - S (pub-priv).`+targetAliasNote,
		`  darrm account shuffleg --algorithm all --target-eps 1,5,10 --target-delta 1e-6 --G 10 --epochs 50 --S 25 --n 1000 --nd 500
  darrm account shuffleg --algorithm interleaved --sigma 7 --target-delta 1e-6 --G 10 --epochs 50 --n 1000 --nd 500`,
		map[string]string{"eps": "target-eps", "delta": "target-delta"}, func(cmd *cobra.Command, f cliout.Format) error {
			if cmd.Flags().Changed("target-eps") == cmd.Flags().Changed("sigma") {
				return usageErrorf("account shuffleg: give exactly one of --target-eps (calibrate sigma) and --sigma (compute eps)")
			}
			if err := requireFlags(cmd, "target-delta", "G", "epochs"); err != nil {
				return err
			}
			var algs []shuffleg.Algorithm
			for _, name := range algorithms {
				if name == "all" {
					algs = append(algs, shuffleg.DPShuffleG, shuffleg.PrivPub, shuffleg.PubPriv, shuffleg.Interleaved)
					continue
				}
				alg, err := shuffleg.ParseAlgorithm(name)
				if err != nil || !alg.Private() {
					return usageErrorf("--algorithm %q: must be one of %s", name, listNames(algorithmNames))
				}
				algs = append(algs, alg)
			}
			common := cliout.Record{{Key: "delta", Val: delta}, {Key: "G", Val: g}, {Key: "epochs", Val: epochs}}
			if cmd.Flags().Changed("S") {
				common = append(common, cliout.Field{Key: "S", Val: s})
			}
			if cmd.Flags().Changed("n") || cmd.Flags().Changed("nd") {
				common = append(common, cliout.Field{Key: "n", Val: n}, cliout.Field{Key: "n_d", Val: nd})
			}
			var rows []cliout.Record
			for _, alg := range algs {
				plan, err := shuffleg.AccountingPlan(alg, epochs, s, n, nd)
				if err != nil {
					return err
				}
				r, err := shufflegRows(plan, g, eps, sigma, delta, cmd.Flags().Changed("sigma"))
				if err != nil {
					return err
				}
				rows = append(rows, r...)
			}
			return cliout.WriteRecords(cmd.OutOrStdout(), f, common, rows)
		})
	fs := cmd.Flags()
	flagTargetEps.add(fs, &eps)
	flagTargetDelta.add(fs, &delta)
	flagSigma.add(fs, &sigma)
	fs.StringSliceVar(&algorithms, "algorithm", []string{"dp-shuffleg"}, "algorithms, comma-separated: "+listNames(algorithmNames))
	fs.Float64Var(&g, "G", 0, "Lipschitz constant / gradient clipping norm (> 0)")
	fs.IntVar(&epochs, "epochs", 0, "number of epochs K (>= 1)")
	fs.IntVar(&s, "S", 0, "priv-pub, pub-priv: epochs before the switch, in [1, K-1]")
	fs.IntVar(&n, "n", 0, "interleaved: steps per epoch n")
	fs.IntVar(&nd, "nd", 0, "interleaved: private steps per epoch n_d, in [1, n]")
	return cmd
}

// shufflegRows are account shuffleg's rows for one algorithm: the eps that
// sigma gives under each conversion, or the sigma each target eps needs.
func shufflegRows(plan shuffleg.Plan, g float64, eps []float64, sigma, delta float64, given bool) ([]cliout.Record, error) {
	var rows []cliout.Record
	alg, run := plan.Algorithm, plan.PABI(g)
	ref := func(c accountant.Conversion) string { return alg.Reference() + "; " + c.Reference() }
	if given {
		for _, c := range []accountant.Conversion{accountant.PaperConversion, accountant.ImprovedConversion} {
			e, alpha, err := run.Eps(sigma, delta, c)
			if err != nil {
				return nil, err
			}
			rows = append(rows, cliout.Record{{Key: "algorithm", Val: alg.String()}, {Key: "private_epochs", Val: run.Epochs}, {Key: "sigma", Val: sigma},
				{Key: "conversion", Val: c.String()}, {Key: "alpha", Val: alpha}, {Key: "eps", Val: e}, {Key: "reference", Val: ref(c)}})
		}
		return rows, nil
	}
	type variant struct {
		conv accountant.Conversion
		rule accountant.AlphaRule
	}
	variants := []variant{{accountant.PaperConversion, accountant.AlphaTable43}, {accountant.PaperConversion, accountant.AlphaExact}, {accountant.ImprovedConversion, accountant.AlphaExact}}
	for _, e := range eps {
		cals := make([]shuffleg.Calibration, len(variants))
		for i, v := range variants {
			var err error
			if cals[i], err = shuffleg.Calibrate(plan, g, accountant.Guarantee{Eps: e, Delta: delta}, v.conv, v.rule); err != nil {
				return nil, err
			}
		}
		for _, c := range cals {
			rows = append(rows, cliout.Record{{Key: "algorithm", Val: alg.String()}, {Key: "private_epochs", Val: run.Epochs}, {Key: "eps", Val: e},
				{Key: "conversion", Val: c.Conversion.String()}, {Key: "alpha_rule", Val: c.AlphaRule.String()}, {Key: "alpha", Val: c.Alpha},
				{Key: "sigma", Val: c.Sigma}, {Key: "ratio", Val: c.Sigma / cals[1].Sigma}, {Key: "reference", Val: ref(c.Conversion)}})
		}
	}
	return rows, nil
}

func newAccountRRCmd() *cobra.Command {
	var (
		a       = accountCmd{flags: map[string]string{"k": "--K", "delta": "--Delta", "delta'": "--rr-delta-prime"}}
		problem problemFlags
		rrComp  string
		rrDelta float64
	)
	cmd := newAccount(&a, "rr", "Randomized response's p_const for the majority of K private teachers",
		`rr prints tau and lambda (the majority of K (eps, Delta)-DP teachers is
(tau·eps, lambda)-DP by --rr-composition, App. B.4) and the largest p_const with
which randomized response on it is (m·eps, delta)-DP (Lemma B.1.1), rounded
down to a multiple of 2^-53 as darrm samples it.

Earlier spellings --method and --delta-prime are still accepted.`,
		`  darrm account rr --K 35 --m 6.4521 --delta 0.1001 --rr-composition general --rr-delta-prime 0.1`,
		map[string]string{"method": "rr-composition", "delta-prime": "rr-delta-prime"}, func(cmd *cobra.Command, f cliout.Format) error {
			p, err := problem.params(cmd)
			if err != nil {
				return err
			}
			m, err := rrComposition(rrComp, p.Delta)
			if err != nil {
				return err
			}
			tau, lambda, err := accountant.RRParams(accountant.Guarantee{Eps: p.Eps, Delta: p.Delta}, p.K, m, rrDelta)
			if err != nil {
				return err
			}
			b, err := gamma.RRBaseline(p.Params, m, rrDelta)
			if err != nil {
				return &usageError{err}
			}
			r := cliout.Record{{Key: "K", Val: p.K}, {Key: "eps", Val: p.Eps}, {Key: "Delta", Val: p.Delta}, {Key: "m", Val: p.M},
				{Key: "delta", Val: p.TargetDelta}, {Key: "method", Val: m.String()}}
			r = append(r, slackField(m, rrDelta)...)
			return cliout.WriteRecord(cmd.OutOrStdout(), f, append(r, cliout.Field{Key: "reference", Val: "Lemma B.1.1; tau, lambda by " + m.Reference()},
				cliout.Field{Key: "tau", Val: tau}, cliout.Field{Key: "lambda", Val: lambda}, cliout.Field{Key: "p_const", Val: b.Gamma[0]}))
		})
	problem.add(cmd)
	flagRRComposition.add(cmd.Flags(), &rrComp)
	flagRRDeltaPrime.add(cmd.Flags(), &rrDelta)
	return cmd
}
