package main

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/experiments/datasets"
	"github.com/darrm/darrm/experiments/patemnist"
	"github.com/darrm/darrm/pate"
)

func init() { subcommands = append(subcommands, subcommand{"pate", newPATECmd}) }

func newPATECmd() *cobra.Command {
	f := struct {
		Dataset  string        `flag:"dataset" help:"ten-class image set: mnist (PATE's) or fashion-mnist"`
		Teachers int           `flag:"teachers" help:"number of teachers K (>= 1), each on its keyed-hash share"`
		Answered int           `flag:"answered" help:"ask queries in order until this many are answered" default:"every query"`
		Student  bool          `flag:"student" help:"also train and test a student on the answered labels"`
		Seed     uint64        `flag:"seed"`
		Format   cliout.Format `flag:"format"`
		Cache    setup.CacheFlags
		analysisFlags
	}{Dataset: "mnist", Teachers: patemnist.Teachers, analysisFlags: analysisFlags{SSParams: ssDataFree}}
	return newCmd("pate", &cobra.Command{
		Use:   "pate [--dataset mnist] [--teachers 250] [--student] [flags]",
		Short: "PATE's MNIST experiment: Confident-GNMax and GNMax labels, their accuracy and eps",
		Args:  cli.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			p := patemnist.Params{K: f.Teachers, Mechanisms: patemnist.Mechanisms(), Seed: cli.Given(cmd.Flags(), "seed", f.Seed), Note: cliout.Note(cmd.ErrOrStderr())}
			if err := p.Check(); err != nil {
				return setup.Flagged(err, map[string]string{"K": "--teachers"})
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
				return setup.Flagged(err, map[string]string{"K": "--teachers"})
			}
			d := report.NewPATEExperiment(m.Name, out, p, time.Since(start))
			return d.Write(cmd.OutOrStdout(), f.Format)
		},
	}, &f)
}
