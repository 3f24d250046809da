package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/resolve"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/optimal"
)

func init() { subcommands = append(subcommands, subcommand{"solve", plain(newSolveCmd)}) }

type solveFlags struct {
	setup.ProblemFlags
	setup.RelationFlags
	Cache    setup.CacheFlags
	Format   cliout.Format  `flag:"format"`
	Workers  int            `flag:"workers"`
	Prior    gamma.Prior    `flag:"prior"`
	Plot     string         `flag:"plot"`
	RRComp   setup.RRMethod `flag:"rr-composition"`
	RRDelta  float64        `flag:"rr-delta-prime"`
	Compare  bool           `flag:"compare" help:"also compute and certify the baselines"`
	Actual   []string       `flag:"actual" repeat:"" help:"--compare, repeat: U(a,b), p, p_1..p_K" default:"U(0,1), 0.5, U(0,0.1)"`
	HighsLog bool           `flag:"highs-log" help:"show HiGHS's solver log"`
	SubSize  int            `flag:"sub-size" help:"with --compare: teachers subsampled by gamma_Sub" default:"floor(m)"`
	Totals   totalFlags
	Queries  []int `flag:"queries" help:"with --compare and a budget: also compare at equal totals"`
}

func newSolveCmd() *cobra.Command {
	f := solveFlags{Actual: []string{"U(0,1)", "0.5", "U(0,0.1)"}}
	cmd := newCmd("solve", &cobra.Command{
		Use:   "solve --K K [--m m | --relation one-vote --target-eps eps] [flags]",
		Short: "Compute, certify and cache the optimal noise function gamma",
		Args:  cli.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runSolve(cmd, &f) },
	}, &f)
	setup.IgnoredComposition.Hide(cmd)
	ignoredDeltaPrime.Hide(cmd)
	return f.WithRelation(cmd, &f.RelationFlags)
}

func runSolve(cmd *cobra.Command, f *solveFlags) error {
	start := time.Now()
	ignoredDeltaPrime.Note(cmd)
	p, err := f.Params(cmd)
	if err != nil {
		return err
	}
	if err := setup.CheckWorkers(f.Workers); err != nil {
		return err
	}
	coeffs, err := f.Prior.Coefficients(p.K)
	if err != nil {
		return cli.Usagef("--prior: %v", err)
	}
	var actuals []gamma.Actual
	var bases []gamma.Baseline
	if !f.Compare {
		// The comparison's flags, without it, would be dropped unread.
		for _, name := range append([]string{"actual"}, baselineFlags...) {
			if cmd.Flags().Changed(name) {
				return cli.Usagef("--%s sets the comparison with the baselines: give --compare, or drop --%s", name, name)
			}
		}
	}
	if f.Compare {
		if actuals, bases, err = f.baselines(cmd, p); err != nil {
			return err
		}
	}
	equal, err := f.Totals.given(cmd, "queries", f.Queries)
	switch {
	case err != nil:
		return err
	case equal && !f.Compare:
		return cli.Usagef("--budget-eps compares the baselines at equal totals: give --compare")
	case equal && f.Format == cliout.CSV:
		return cli.Usagef("--budget-eps: the comparison at equal totals is in the table and JSON; solve's CSV is the gamma file alone")
	}
	if err := setup.CheckPlot(f.Plot); err != nil {
		return err
	}
	dir, err := f.Cache.Open(setup.Memo(cmd))
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	src := optimal.Source{Cache: dir, Prior: f.Prior, Options: optimal.Options{Workers: f.Workers, HiGHSLog: f.HighsLog}}
	l, err := setup.LoadGamma(ctx, cmd, src, p.Problem)
	if err != nil {
		return err
	}
	out := report.NewSolve(report.NewProblem(p), l.Entry, l.Cached)
	out.CacheFile = l.Path
	if f.Compare {
		var evs []report.Evaluation
		if out.Errors, evs, err = compare(ctx, p.Problem, l.Gamma, bases, coeffs, actuals, f.Workers); err != nil {
			return err
		}
		out.Compare = report.Compared(bases, evs)
		out.NotCompared = omittedBaselines(p.Problem)
	}
	if equal {
		if out.EqualTotals, err = f.equalTotals(cmd, p, src, coeffs, actuals); err != nil {
			return err
		}
	}
	out.Seconds = time.Since(start).Seconds()
	if f.Plot != "" {
		if err := out.WriteFigure(cmd.Context(), f.Plot); err != nil {
			return err
		}
	}
	return out.Write(cmd.OutOrStdout(), f.Format)
}

// baselineFlags set the baselines of --compare in the private-teachers
// relation.
var baselineFlags = []string{"sub-size", "rr-composition", "rr-delta-prime"}

// baselines parses the flags of --compare and builds the baselines
// (gamma.Baselines, then gamma.RRBaseline).
func (f *solveFlags) baselines(cmd *cobra.Command, p resolve.Resolved) ([]gamma.Actual, []gamma.Baseline, error) {
	actuals := make([]gamma.Actual, len(f.Actual))
	for i, s := range f.Actual {
		var err error
		if actuals[i], err = gamma.ParseActual(s); err != nil {
			return nil, nil, cli.Usagef("--actual: %v", err)
		}
	}
	if p.Relation == accountant.OneVote {
		for _, name := range baselineFlags {
			if cmd.Flags().Changed(name) {
				return nil, nil, cli.Usagef("--%s sets a baseline of the private-teachers relation; the one-vote relation compares GNMax and RR's largest constant gamma", name)
			}
		}
	}
	if cmd.Flags().Changed("sub-size") && (f.SubSize < 1 || f.SubSize > p.K) {
		return nil, nil, cli.Usagef("--sub-size = %d: must be in [1, K] = [1, %d]", f.SubSize, p.K)
	}
	bases, err := gamma.Baselines(p.Problem, f.SubSize)
	if err != nil {
		return nil, nil, cli.AsUsage(err)
	}
	rr, err := gamma.RRBaseline(p.Problem, f.RRComp.For(p.Delta), f.RRDelta)
	if err != nil {
		return nil, nil, cli.Usagef("RR with --rr-composition %v: %v", f.RRComp.For(p.Delta), err)
	}
	return actuals, append(bases, rr), nil
}

// compare evaluates the comparison of gamma_opt, opt, with its baselines
// at problem p: opt's true expected error under each actual distribution
// (gamma.Gamma.Measure), and each baseline certified (gamma.Verify) and measured,
// in the order of bases.
func compare(ctx context.Context, p constraints.Problem, opt gamma.Gamma, bases []gamma.Baseline, coeffs []float64, actuals []gamma.Actual, workers int) ([]gamma.ErrorEstimate, []report.Evaluation, error) {
	// Every gamma is measured under the same draws, made once.
	memo := new(accountant.Memo)
	m, err := opt.Measure(ctx, memo, coeffs, actuals)
	if err != nil {
		return nil, nil, err
	}
	evs := make([]report.Evaluation, len(bases))
	for i, b := range bases {
		cert, err := gamma.Verify(ctx, p, b.Gamma, gamma.VerifyOptions{Workers: workers})
		if err != nil {
			return nil, nil, fmt.Errorf("certify %s: %w", b.Name, err)
		}
		bm, err := b.Gamma.Measure(ctx, memo, coeffs, actuals)
		if err != nil {
			return nil, nil, fmt.Errorf("certify %s: %w", b.Name, err)
		}
		evs[i] = report.Evaluation{Certificate: cert, Utility: bm.Utility, SurrogateError: bm.SurrogateError, Errors: bm.Errors}
	}
	return m.Errors, evs, nil
}
