package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/cli"
	"github.com/darrm/darrm/internal/figure"
	"github.com/darrm/darrm/internal/report"
)

func init() { subcommands = append(subcommands, newSolveCmd) }

type solveFlags struct {
	problem problemFlags
	cache   cacheFlags
	format  formatFlag
	workers workersFlag
	shared  struct {
		Prior   string  `flag:"prior"`
		Plot    string  `flag:"plot"`
		RRComp  string  `flag:"rr-composition"`
		RRDelta float64 `flag:"rr-delta-prime"`
	}
	compare  bool
	actual   []string
	highsLog bool
	subSize  int
}

func newSolveCmd() *cobra.Command {
	var f solveFlags
	cmd := &cobra.Command{
		Use:   "solve --K K [--m m] [flags]",
		Short: "Compute, certify and cache the optimal noise function gamma",
		Long: `solve computes gamma_opt, the DaRRM noise function that maximises utility
under a prior subject to (m·eps, delta)-DP (thesis Section 3.6), by linear
programming with cutting planes. The returned gamma is certified: the privacy
cost is maximised exactly over every corner multiset of the teachers'
feasible regions (Lemma 3.6.1) and is below the budget e^{m·eps} - 1 + 2·delta
with a margin covering floating-point error. Results are cached.

--compare adds the baselines at the same (m·eps, delta): gamma_Sub (majority of
--sub-size subsampled teachers, Lemma 3.4.1), gamma_DSub (2m-1 subsampled
teachers, Theorem 3.5.1, when Delta = delta = 0) and randomized response with
p_const of Lemma B.1.1, each with its own certificate, and true expected
errors under actual distributions of the teachers' probabilities.

Earlier spellings --rr-method is still accepted.`,
		Example: `  darrm solve --K 11 --m 3
  darrm solve --K 11 --m 3 --compare --plot gamma.png
  darrm solve --K 101 --m 10 --Delta 0 --format json`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSolve(cmd, &f) },
	}
	f.problem.add(cmd)
	f.cache.add(cmd)
	f.format.add(cmd)
	f.workers.add(cmd)
	fs := cmd.Flags()
	bind(cmd, &f.shared)
	fs.BoolVar(&f.compare, "compare", false, "also compute and certify the baselines gamma_Sub, gamma_DSub and RR")
	fs.StringSliceVar(&f.actual, "actual", []string{"U(0,1)", "0.5", "U(0,0.1)"}, "with --compare: actual distributions of the p_i for the true expected error: U(a,b), a probability, or K probabilities")
	fs.BoolVar(&f.highsLog, "highs-log", false, "show HiGHS's solver log")
	fs.IntVar(&f.subSize, "sub-size", 0, "with --compare: teachers subsampled by gamma_Sub (default floor(m); App. B.4 subsamples M with m from general composition)")
	cli.Aliases(cmd, map[string]string{"rr-method": "rr-composition"})
	return cmd
}

func runSolve(cmd *cobra.Command, f *solveFlags) error {
	start := time.Now()
	p, err := f.problem.params(cmd)
	if err != nil {
		return err
	}
	format, err := f.format.parse()
	if err != nil {
		return err
	}
	workers, err := f.workers.get()
	if err != nil {
		return err
	}
	prior, err := gamma.ParsePrior(f.shared.Prior)
	if err == nil {
		_, err = prior.Coefficients(p.K)
	}
	if err != nil {
		return cli.Usagef("--prior: %v", err)
	}
	var actuals []gamma.Actual
	var bases []gamma.Baseline
	if f.compare {
		if actuals, bases, err = f.baselines(cmd, p); err != nil {
			return err
		}
	}
	if f.shared.Plot != "" {
		if err := figure.CheckPath(f.shared.Plot); err != nil {
			return cli.AsUsage(err)
		}
	}
	dir, err := f.cache.open()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	e, cached, err := solveGamma(ctx, cmd, p.Params, prior, dir, workers, f.highsLog)
	if err != nil {
		return err
	}
	out := report.Solve{
		Problem: p.out(),
		Prior:   prior.String(), Gamma: e.Gamma, Objective: e.Utility, SurrogateError: e.SurrogateError,
		UpperBound: e.UpperBound, Gap: e.Gap, Scale: e.Scale,
		Certificate: e.Certificate, CertifiedNow: true, Cached: cached,
		Solve: report.SolveStats{Seconds: e.Seconds, LPSolves: e.LPSolves, Rows: e.Rows, Passes: e.Passes, TieBroken: e.TieBroken},
	}
	if dir != nil {
		out.CacheFile = dir.Path(cache.Key{Params: p.Params, Prior: prior.String()})
	}
	if f.compare {
		if out.Errors, err = gamma.ExpectedErrors(e.Gamma, actuals); err != nil {
			return err
		}
		coeffs, _ := prior.Coefficients(p.K)
		for _, b := range bases {
			ev, err := gamma.Evaluate(ctx, p.Params, b.Gamma, coeffs, actuals, workers)
			if err != nil {
				return fmt.Errorf("certify %s: %w", b.Name, err)
			}
			out.Compare = append(out.Compare, report.Mechanism{Name: b.Name, Label: b.Label, Gamma: b.Gamma, Evaluation: ev})
		}
	}
	out.Seconds = time.Since(start).Seconds()
	if f.shared.Plot != "" {
		if err := figure.WriteGammas(f.shared.Plot, "", []figure.Setting{figure.SolveSetting(out)}, 1, false); err != nil {
			return err
		}
	}
	return out.Write(cmd.OutOrStdout(), format)
}

// baselines parses the flags of --compare and builds the baselines.
func (f *solveFlags) baselines(cmd *cobra.Command, p problem) ([]gamma.Actual, []gamma.Baseline, error) {
	var actuals []gamma.Actual
	for _, s := range f.actual {
		a, err := gamma.ParseActual(s)
		if err != nil {
			return nil, nil, cli.Usagef("--actual: %v", err)
		}
		actuals = append(actuals, a)
	}
	s := gamma.SubSize(p.M)
	if cmd.Flags().Changed("sub-size") {
		if f.subSize < 1 || f.subSize > p.K {
			return nil, nil, cli.Usagef("--sub-size = %d: must be in [1, K] = [1, %d]", f.subSize, p.K)
		}
		s = f.subSize
	}
	sub, err := gamma.SubBaseline(p.K, s)
	if err != nil {
		return nil, nil, cli.AsUsage(err)
	}
	bases := []gamma.Baseline{sub}
	if p.Delta == 0 && p.TargetDelta == 0 {
		d, err := gamma.DSubBaseline(p.K, p.M)
		if err != nil {
			return nil, nil, cli.AsUsage(err)
		}
		bases = append(bases, d)
	}
	comp, err := rrComposition(f.shared.RRComp, p.Delta)
	if err != nil {
		return nil, nil, err
	}
	rr, err := gamma.RRBaseline(p.Params, comp, f.shared.RRDelta)
	if err != nil {
		return nil, nil, cli.Usagef("RR with --rr-composition %v: %v", comp, err)
	}
	return actuals, append(bases, rr), nil
}
