package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/experiments/transfer"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/optimal"
)

func init() { subcommands = append(subcommands, subcommand{"transfer", plain(newTransferCmd)}) }

func newTransferCmd() *cobra.Command {
	f := struct {
		Dataset string            `flag:"dataset" help:"two-class task: mnist58 or fashion58" required:""`
		Setting accountant.Shares `flag:"setting"`
		M       float64           `flag:"m"`
		Queries []int             `flag:"queries" help:"numbers of queries Q"`
		Redraws int               `flag:"redraws" help:"query sets drawn per Q"`
		Seed    uint64            `flag:"seed"`
		Format  cliout.Format     `flag:"format"`
		Plot    string            `flag:"plot"`
		Workers int               `flag:"workers"`
		Cache   setup.CacheFlags
		Totals  totalFlags
	}{Queries: []int{20, 50, 100}, Redraws: 10}
	cmd := newCmd("transfer", &cobra.Command{
		Use:   "transfer --dataset mnist58|fashion58 [--setting disjoint|shared] [flags]",
		Short: "Private knowledge transfer: DP-SGD teachers, private labels, accuracy (Table 3.1)",
		Args:  cli.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			params := transfer.Params{M: f.M, Queries: f.Queries, Redraws: f.Redraws, Seed: f.Seed, Memo: setup.Memo(cmd)}
			if cmd.Flags().Changed("delta-prime") {
				// The slack of the table's compositions; not given, Table
				// 3.2's (transfer.DeltaPrime), as the help says.
				params.DeltaPrime = f.Totals.DeltaPrime
			}
			if err := setup.CheckWorkers(f.Workers); err != nil {
				return err
			}
			if err := setup.CheckPlot(f.Plot); err != nil {
				return err
			}
			equal, err := f.Totals.given(cmd, "queries", f.Queries)
			if err != nil {
				return err
			}
			if equal && f.Format == cliout.CSV {
				return cli.Usagef("--budget-eps: the comparison at equal totals is in the table and JSON (--format csv holds one comparison)")
			}
			b, err := loadBinary(f.Dataset)
			if err != nil {
				return err
			}
			if err := setup.Flagged(params.Validate(b.Test.Len()), nil); err != nil {
				return err
			}
			gdir, err := f.Cache.Open(setup.Memo(cmd))
			if err != nil {
				return err
			}
			teacherSeed := cli.Given(cmd.Flags(), "seed", f.Seed)
			if teacherSeed == nil {
				// 53 bits, as simulate's drawn seed: exact in every JSON
				// reader.
				params.Seed = noise.NewSource().Uint64() >> 11
			}
			prog := cliout.NewProgress(cmd.ErrOrStderr(), -1, fmt.Sprintf("transfer %s: training or loading the teachers", f.Dataset))
			defer prog.Done()
			t, err := transfer.TrainTeachers(cmd.Context(), gdir.Folder("teachers"), b, transfer.Thesis(f.Setting), teacherSeed, cliout.Note(cmd.ErrOrStderr()))
			if err != nil {
				return err
			}
			prog.Describe(fmt.Sprintf("transfer %s: labelling the queries", f.Dataset))
			src := optimal.Source{Cache: gdir, Prior: gamma.UniformPrior(), Options: optimal.Options{Workers: f.Workers}}
			lines := cliout.NewStages(cmd.ErrOrStderr())
			defer lines.Done()
			setup.PlanGamma(cmd, &src, lines)
			res, err := transfer.Run(cmd.Context(), b.Test, t, params, src)
			if err != nil {
				prog.Done()
				return err
			}
			out := report.NewTransfer(f.Dataset, t, b.Test, res, params.Seed)
			if equal {
				prog.Describe(fmt.Sprintf("transfer %s: planning for the total and labelling at equal totals", f.Dataset))
				// GNMax's per-query delta is the budget's, as darrm plan's
				// without --delta; the slack the table's (res.DeltaPrime).
				ep := transfer.EqualParams{Budget: f.Totals.budget(), DeltaPrime: res.DeltaPrime, Delta: f.Totals.BudgetDelta,
					Queries: f.Queries, Redraws: f.Redraws, Seed: params.Seed, Memo: params.Memo}
				eq, err := transfer.RunEqual(cmd.Context(), b.Test, t, ep, src)
				if err != nil {
					prog.Done()
					return cli.AsUsage(setup.Flagged(err, nil))
				}
				out.EqualTotals = report.NewTransferEqual(ep.Budget.Guarantee, eq)
			}
			prog.Done()
			lines.Done()
			out.Seconds = time.Since(start).Seconds()
			if f.Plot != "" {
				if err := out.WriteFigure(cmd.Context(), f.Plot); err != nil {
					return err
				}
			}
			return out.Write(cmd.OutOrStdout(), f.Format)
		},
	}, &f)
	setup.IgnoredComposition.Hide(cmd)
	cli.SetDefaultText(cmd.Flags(), cliout.Float(transfer.DeltaPrime), "delta-prime") // Table 3.2's
	return cmd
}
