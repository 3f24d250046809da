package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/experiments/transfer"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

func init() { subcommands = append(subcommands, subcommand{"simulate", newSimulateCmd}) }

type simulateFlags struct {
	setup.ProblemFlags
	setup.MechanismConfig
	Format     cliout.Format `flag:"format"`
	Seed       uint64        `flag:"seed"`
	Mechanisms []string      `flag:"mechanisms" help:"mechanisms to compare, comma-separated" default:"all that apply"`
	Teachers   string        `flag:"teachers" help:"teachers' p of voting 1: U(a,b), p, or K values"`
	Queries    int           `flag:"queries" help:"number of queries simulated"`
	Totals     totalFlags
	// BudgetQueries are the numbers of queries Q of a comparison at equal
	// totals: --queries is the size of the simulation.
	BudgetQueries []int `flag:"budget-queries" help:"also compare at equal totals over these numbers of queries"`
	ms            *setup.Mechanisms
}

func newSimulateCmd(ms *setup.Mechanisms) *cobra.Command {
	f := simulateFlags{Teachers: "U(0.5,1)", Queries: 100000, ms: ms}
	cmd := newCmd("simulate", &cobra.Command{
		Use:   "simulate --K K [--m m] [flags]",
		Short: "Compare the aggregators on synthetic teachers at the same privacy target",
		Args:  cli.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runSimulate(cmd, &f) },
	}, &f)
	ms.BindSettings(cmd, votefile.TwoClass)
	setup.IgnoredComposition.Hide(cmd)
	ignoredDeltaPrime.Hide(cmd)
	return cmd
}

func runSimulate(cmd *cobra.Command, f *simulateFlags) error {
	ignoredDeltaPrime.Note(cmd)
	p, err := f.Params(cmd)
	if err != nil {
		return err
	}
	if f.Queries < 1 {
		return cli.Usagef("--queries = %d: must be >= 1", f.Queries)
	}
	equal, err := f.Totals.given(cmd, "budget-queries", f.BudgetQueries)
	if err != nil {
		return err
	}
	if equal && f.Format == cliout.CSV {
		return cli.Usagef("--budget-eps: the comparison at equal totals is in the table and JSON (--format csv holds one comparison)")
	}
	names := make([]provenance.MechanismName, len(f.Mechanisms))
	for i, n := range f.Mechanisms {
		names[i] = provenance.MechanismName(n)
	}
	if len(names) == 0 {
		if cmd.Flags().Changed("mechanisms") {
			// Given empty, it would run every mechanism, as if left out.
			return cli.Usagef("--mechanisms is empty: name the mechanisms to compare, or leave the flag out for all that apply")
		}
		names = transfer.Simulated(p.Problem)
	}
	infos, err := f.MechanismConfig.Parse(cmd, f.ms, "mechanisms", names)
	if err != nil {
		return err
	}
	if !cmd.Flags().Changed("seed") {
		// 53 bits, so that every JSON reader (jq, JavaScript) holds the
		// seed printed exactly and a rerun with it reproduces the run.
		f.Seed = noise.NewSource().Uint64() >> 11
	}
	teachers, err := teachersOf(f.Teachers, p.K, noise.NewSeededSource(f.Seed))
	if err != nil {
		return cli.Usagef("--teachers: %v", err)
	}
	var aggs []ensemble.Aggregator
	var labels []string
	for _, info := range infos {
		agg, label, err := f.NewAggregator(cmd, info, p.Problem)
		if err != nil {
			return err
		}
		aggs, labels = append(aggs, agg), append(labels, label)
	}
	prog := cliout.NewProgress(cmd.ErrOrStderr(), -1, fmt.Sprintf("simulating %d queries", f.Queries))
	res, err := ensemble.Simulate(cmd.Context(), aggs, teachers, f.Queries, f.Seed)
	prog.Done()
	if err != nil {
		return err
	}
	out := report.NewSimulate(p, f.Teachers, teachers, f.Seed, res, labels, f.ms.Default().Name)
	if equal {
		if out.EqualTotals, err = f.equalTotals(cmd, p, infos, teachers); err != nil {
			return err
		}
	}
	return out.Write(cmd.OutOrStdout(), f.Format)
}

// teachersOf returns the probabilities p_i with which K synthetic teachers
// vote 1, from spec in gamma.ParseActual's form: "U(a,b)" draws each p_i
// once, i.i.d. uniform on [a, b], from src; a single probability gives
// every teacher that value; K comma-separated probabilities give one each.
func teachersOf(spec string, k int, src *noise.Source) ([]float64, error) {
	a, err := gamma.ParseActual(spec)
	if err != nil {
		return nil, fmt.Errorf("teachers: %w", err)
	}
	p, err := a.Sample(k, src.Float64)
	if err != nil {
		return nil, fmt.Errorf("teachers: %w", err)
	}
	return p, nil
}
