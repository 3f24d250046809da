package main

import (
	"slices"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/report"
)

func init() { subcommands = append(subcommands, newSimulateCmd) }

type simulateFlags struct {
	problem    problemFlags
	mech       mechanismFlags
	format     formatFlag
	mechanisms []string
	teachers   string
	queries    int
	seed       uint64
}

func newSimulateCmd() *cobra.Command {
	var f simulateFlags
	cmd := &cobra.Command{
		Use:   "simulate --K K [--m m] [flags]",
		Short: "Compare the aggregators on synthetic teachers at the same privacy target",
		Long: `simulate draws the votes of K synthetic teachers for many queries (teacher i
votes 1 with probability p_i), runs every mechanism on the same votes at the
same per-query (m·eps, delta), and prints how often each label agrees with the
majority of the votes, with a 95% Wilson interval, beside the exact expected
agreement and the exact error E of Definition 3.3.4 (|Pr[label = 1] -
Pr[majority = 1]|), both computed from the mechanism's gamma at the teachers'
p (the error of the thesis' Figure 3.2). It measures agreement with the
majority of synthetic teachers, not accuracy on real data: the thesis'
Table 3.1 is reproduced by darrm transfer.

--teachers is "U(a,b)" (each p_i drawn once, uniformly on [a, b]), a single
probability for all teachers, or K comma-separated probabilities.

This is an experiment, not a private release: the votes and all noise come from
a seeded generator; without --seed the seed is drawn from crypto/rand and
printed, so any run can be repeated. Earlier spellings --rr-method and
--gnmax-sigma are still accepted.`,
		Example: `  darrm simulate --K 11 --m 3
  darrm simulate --K 11 --m 3 --teachers 0.7 --queries 1000000 --format json
  darrm simulate --K 11 --m 3 --Delta 0 --delta 0 --mechanisms darrm,subsample,dsub`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSimulate(cmd, &f) },
	}
	f.problem.add(cmd)
	f.mech.add(cmd)
	f.format.add(cmd)
	fs := cmd.Flags()
	flagSeed.add(fs, &f.seed)
	fs.StringSliceVar(&f.mechanisms, "mechanisms", nil, "mechanisms to compare (default: darrm, subsample, rr, gnmax when delta > 0, dsub when Delta = 0)")
	fs.StringVar(&f.teachers, "teachers", "U(0.5,1)", "the teachers' probabilities of voting 1: U(a,b), p, or p_1,...,p_K")
	fs.IntVar(&f.queries, "queries", 100000, "number of queries")
	aliases(cmd, mechanismAliases)
	return cmd
}

const simulationNote = "a simulation with a seeded generator, not a private release: agreement with the majority of synthetic teachers"

func runSimulate(cmd *cobra.Command, f *simulateFlags) error {
	format, err := f.format.parse()
	if err != nil {
		return err
	}
	p, err := f.problem.params(cmd)
	if err != nil {
		return err
	}
	if f.queries < 1 {
		return usageErrorf("--queries = %d: must be >= 1", f.queries)
	}
	names := f.mechanisms
	if len(names) == 0 {
		names = []string{"darrm", "subsample"}
		if p.Delta == 0 {
			names = append(names, "dsub")
		}
		names = append(names, "rr")
		if p.TargetDelta > 0 {
			names = append(names, "gnmax")
		}
	}
	mech, err := f.mech.parse(cmd, "mechanisms", names)
	if err != nil {
		return err
	}
	if !cmd.Flags().Changed("seed") {
		f.seed = ensemble.NewSource().Uint64()
	}
	teachers, err := ensemble.Teachers(f.teachers, p.K, ensemble.NewSeededSource(f.seed))
	if err != nil {
		return usageErrorf("--teachers: %v", err)
	}
	var aggs []ensemble.Aggregator
	var labels []string
	for _, n := range names {
		agg, label, err := mech.newAggregator(cmd, n, p.Params)
		if err != nil {
			return err
		}
		aggs = append(aggs, agg)
		labels = append(labels, label)
	}
	res, err := ensemble.Simulate(cmd.Context(), aggs, teachers, f.queries, f.seed)
	if err != nil {
		return err
	}
	out := report.Simulate{
		Problem:  p.out(),
		Teachers: f.teachers, P: teachers, Queries: f.queries, Seed: f.seed, Note: simulationNote,
	}
	for i, r := range res {
		out.Results = append(out.Results, report.SimResult{
			Mechanism: r.Name, Label: labels[i], Eps: r.Privacy.Eps, Delta: r.Privacy.Delta, Source: r.Privacy.Source,
			Agree: r.Agree, Agreement: r.Rate, Lo: r.Lo, Hi: r.Hi, Exact: r.Exact, TVError: r.TVError,
		})
	}
	if i := slices.Index(names, "darrm"); i >= 0 {
		for j, r := range res {
			if j != i && res[i].Lo > r.Hi {
				out.Above = append(out.Above, r.Name)
			}
		}
	}
	return out.Write(cmd.OutOrStdout(), format)
}
