package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/datasets"
	"github.com/darrm/darrm/internal/cli"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/report"
	"github.com/darrm/darrm/teachers"
	"github.com/darrm/darrm/transfer"
)

func init() { subcommands = append(subcommands, newTeachersCmd) }

func newTeachersCmd() *cobra.Command {
	return newGroupCmd("teachers", "Train the transfer experiment's teachers and write their votes",
		newTeachersSub("train"), newTeachersSub("vote"))
}

func newTeachersSub(use string) *cobra.Command {
	var f struct {
		Dataset    string        `flag:"dataset" help:"two-class task: mnist58 or fashion58" required:""`
		NonPrivate bool          `flag:"nonprivate" help:"the non-private (SGD) teachers GNMax uses, instead of the DP-SGD ones"`
		Seed       uint64        `flag:"seed"`
		Format     cliout.Format `flag:"format"`
		Cache      cacheFlags
		out        string
	}
	short := "Train (or load) the teachers and print their test accuracy"
	if use == "vote" {
		short = "Write the teachers' votes on the public set as a vote file"
	}
	cmd := newCmd("teachers-"+use, &cobra.Command{
		Use: use + " --dataset mnist58|fashion58 [flags]", Short: short, Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cli.CheckOutPath("out", f.out); err != nil {
				return err
			}
			b, err := loadBinary(f.Dataset)
			if err != nil {
				return err
			}
			dir, err := f.Cache.open()
			if err != nil {
				return err
			}
			cfg, pub := transfer.TeacherConfigs(f.Dataset, b.Train.Len()/transfer.K, cli.Given(cmd.Flags(), "seed", f.Seed))
			if f.NonPrivate {
				cfg = pub
			}
			prog := cliout.NewProgress(cmd.ErrOrStderr(), -1, fmt.Sprintf("training or loading the teachers of %s", f.Dataset))
			e, _, err := teachers.Cached(cmd.Context(), teachersDir(dir), b, cfg, note(cmd))
			prog.Done()
			if err != nil {
				return err
			}
			if use == "train" {
				return report.Teachers{Ensemble: e}.Write(cmd.OutOrStdout(), f.Format)
			}
			return cli.WriteOutput(f.out, cmd.OutOrStdout(), func(w io.Writer) error { return e.WriteVotes(w, b.Test) })
		},
	}, &f, nil)
	if use == "vote" {
		cmd.Flags().StringVar(&f.out, "out", "-", "vote file, written atomically (- for standard output)")
	}
	return cmd
}

// loadBinary reads a two-class task from the data folder; missing data
// name the script.
func loadBinary(name string) (*datasets.Binary, error) {
	b, err := datasets.LoadBinary("", name)
	if err != nil && !errors.Is(err, datasets.ErrNoDir) {
		return nil, cli.Usagef("--dataset: %v", err)
	}
	return b, err
}
