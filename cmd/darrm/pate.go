package main

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/experiments/datasets"
	"github.com/darrm/darrm/experiments/patemnist"
	"github.com/darrm/darrm/pate"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

func init() { subcommands = append(subcommands, subcommand{"pate", newPATECmd}) }

func newPATECmd(ms *setup.Mechanisms) *cobra.Command {
	f := struct {
		Dataset  string        `flag:"dataset" help:"ten-class image set: mnist (PATE's) or fashion-mnist"`
		Teachers int           `flag:"teachers" help:"number of teachers K (>= 1), each on its keyed-hash share"`
		Answered int           `flag:"answered" help:"ask queries in order until this many are answered" default:"every query"`
		Student  bool          `flag:"student" help:"also train and test a student on the answered labels"`
		Seed     uint64        `flag:"seed"`
		Format   cliout.Format `flag:"format"`
		Cache    setup.CacheFlags
		analysisFlags
		// A mechanism charged per draw in place of PATE's two, its
		// settings and its filter's budget, on the first --queries.
		Mechanism   provenance.MechanismName
		BudgetEps   float64 `flag:"budget-eps"`
		BudgetDelta float64 `flag:"budget-delta"`
		Queries     int     `flag:"queries" help:"ask the first N queries only (the private votes)" default:"every query"`
	}{Dataset: "mnist", Teachers: patemnist.Teachers, analysisFlags: analysisFlags{SSParams: ssDataFree}}
	cmd := newCmd("pate", &cobra.Command{
		Use:   "pate [--dataset mnist] [--teachers 250] [--student] [flags]",
		Short: "PATE's MNIST experiment: Confident-GNMax and GNMax labels, their accuracy and eps",
		Args:  cli.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			p := patemnist.Params{K: f.Teachers, Mechanisms: patemnist.Mechanisms(), Queries: f.Queries, Seed: cli.Given(cmd.Flags(), "seed", f.Seed), Note: cliout.Note(cmd.ErrOrStderr())}
			if err := p.Check(); err != nil {
				return setup.Flagged(err, map[string]string{"K": "--teachers", "queries": "--queries"})
			}
			if cmd.Flags().Changed("mechanism") {
				m, err := perDrawMechanism(cmd, ms, f.Mechanism, f.BudgetEps, f.BudgetDelta)
				if err != nil {
					return err
				}
				p.Mechanisms = []ensemble.Mechanism{m}
			} else if err := withoutMechanism(cmd, ms); err != nil {
				return err
			}
			// 0, the default, asks every query.
			if cmd.Flags().Changed("answered") && f.Answered < 1 {
				return cli.Usagef("--answered = %d: must be >= 1", f.Answered)
			}
			smooth, err := f.smooth(cmd)
			if err != nil {
				return err
			}
			m, err := datasets.LoadMNIST("", f.Dataset)
			if err != nil && !errors.Is(err, datasets.ErrNoDir) {
				return cli.Usagef("--dataset: %v", err)
			} else if err != nil {
				return err
			}
			dir, err := f.Cache.Open(setup.Memo(cmd))
			if err != nil {
				return err
			}
			p.CacheDir = dir.Folder("teachers")
			p.Labelling = pate.Labelling{Delta: patemnist.Delta, Directions: f.Directions, Smooth: smooth, Answered: f.Answered}
			if f.Student {
				p.Student = &patemnist.Student{Filters: patemnist.Filters, Epochs: patemnist.StudentEpochs, Batch: patemnist.Batch, LR: patemnist.LR}
			}
			prog := cliout.NewTrainingProgress(cmd.ErrOrStderr(), "loading the teachers, labelling, accounting", "labelling, accounting")
			p.Progress = prog.Teachers
			out, err := patemnist.Run(cmd.Context(), m, p)
			prog.Done()
			if err != nil {
				return setup.Flagged(err, map[string]string{"K": "--teachers", "queries": "--queries"})
			}
			d := report.NewPATEExperiment(m.Name, out, p, time.Since(start))
			return d.Write(cmd.OutOrStdout(), f.Format)
		},
	}, &f)
	ms.BindSettings(cmd, votefile.ManyClasses)
	cmd.Flags().StringVar((*string)(&f.Mechanism), "mechanism", "", ms.PerDrawOnlyNames()+", to run in place of PATE's two")
	return cmd
}

// perDrawMechanism returns the mechanism --mechanism names, charged per
// draw alone, with the settings of the flags and the budget of its
// Gaussian-DP filter, checked: darrm pate runs it in place of PATE's two.
func perDrawMechanism(cmd *cobra.Command, ms *setup.Mechanisms, name provenance.MechanismName, eps, delta float64) (ensemble.Mechanism, error) {
	fs := cmd.Flags()
	info, err := ms.Lookup(name, votefile.ManyClasses)
	if _, only := setup.PerDraw(info); err != nil || !only {
		var paper []provenance.MechanismName
		for _, m := range patemnist.Mechanisms() {
			paper = append(paper, m.Name())
		}
		return nil, cli.Usagef("--mechanism %s: darrm pate runs PATE's %s, or in their place %s", name, provenance.JoinMechanisms(paper, " and "), ms.PerDrawOnlyNames())
	}
	if err := ms.CheckSettings(cmd, info, nil); err != nil {
		return nil, err
	}
	if !fs.Changed("budget-eps") || !fs.Changed("budget-delta") {
		return nil, cli.Usagef("--mechanism %s needs --budget-eps and --budget-delta: the budget of the Gaussian-DP filter each draw is charged to, the total to publish", name)
	}
	for _, n := range []string{"directions", "ss-parameters", "ss-order", "beta", "sigma-ss"} {
		if fs.Changed(n) {
			return nil, cli.Usagef("--%s: %s is accounted by its Gaussian-DP filter's budget alone: no data-dependent bound or smooth-sensitivity draw", n, name)
		}
	}
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: eps, Delta: delta}}
	if err := budget.Validate(); err != nil {
		return nil, cli.AsUsage(setup.Flagged(err, setup.BudgetFlags))
	}
	m, _ := ensemble.ChargedPerDraw(info.With(fs, nil), budget.Guarantee)
	if err := m.Validate(); err != nil {
		return nil, cli.AsUsage(setup.Flagged(err, setup.BudgetFlags))
	}
	return m, nil
}

// withoutMechanism refuses the flags of --mechanism without it: its
// filter's budget and the settings of the mechanisms of ms.
func withoutMechanism(cmd *cobra.Command, ms *setup.Mechanisms) error {
	flags := []string{"budget-eps", "budget-delta"}
	for _, m := range ms.All() {
		flags = append(flags, m.Flags()...)
	}
	for _, n := range flags {
		if f := cmd.Flags().Lookup(n); f != nil && f.Changed {
			return cli.Usagef("--%s goes with --mechanism: PATE's two mechanisms run with the paper's settings", n)
		}
	}
	return nil
}
