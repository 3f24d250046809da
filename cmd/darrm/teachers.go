package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/experiments/datasets"
	"github.com/darrm/darrm/experiments/patemnist"
	"github.com/darrm/darrm/experiments/teachers"
	"github.com/darrm/darrm/experiments/transfer"
	"github.com/darrm/darrm/votefile"
)

func init() { subcommands = append(subcommands, subcommand{"teachers", plain(newTeachersCmd)}) }

func newTeachersCmd() *cobra.Command {
	return newGroupCmd("teachers", "Train the transfer experiment's teachers, write their votes, tune them",
		newTeachersSub("train"), newTeachersSub("vote"), newTeachersTuneCmd())
}

// trainingFlags set the teachers' training, the thesis' when not given.
type trainingFlags struct {
	K      int     `flag:"K"`
	Sigma  float64 `flag:"sigma"`
	Epochs int     `flag:"epochs" help:"epochs of each teacher's training, >= 1"`
}

// training returns the thesis' training in setting with the values the
// command line gives.
func (f *trainingFlags) training(cmd *cobra.Command, setting accountant.Shares) (transfer.Training, error) {
	tr := transfer.Thesis(setting)
	fs := cmd.Flags()
	if fs.Changed("K") {
		tr.K = f.K
	}
	if fs.Changed("sigma") {
		tr.Sigma = f.Sigma
	}
	tr.Epochs = f.Epochs
	return tr, setup.Flagged(tr.Validate(), nil)
}

func newTeachersSub(use string) *cobra.Command {
	f := struct {
		Dataset    string            `flag:"dataset" help:"mnist58 or fashion58; with --classes, mnist or fashion-mnist" required:""`
		Classes    int               `flag:"classes" help:"vote among this many classes (PATE's teachers)"`
		NonPrivate bool              `flag:"nonprivate" help:"the non-private (SGD) teachers GNMax uses"`
		Setting    accountant.Shares `flag:"setting"`
		Training   trainingFlags
		Seed       uint64        `flag:"seed"`
		Format     cliout.Format `flag:"format"`
		Cache      setup.CacheFlags
		out        string
	}{Training: trainingFlags{Epochs: transfer.Epochs}}
	short := "Train (or load) the teachers and print their test accuracy"
	if use == "vote" {
		short = "Write the teachers' votes on the public set as a vote file"
	}
	cmd := newCmd("teachers-"+use, &cobra.Command{
		Use: use + " --dataset mnist58|fashion58 [flags]", Short: short, Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("classes") {
				return runTeachersClasses(cmd, use, f.Dataset, f.Classes, &f.Training, cli.Given(cmd.Flags(), "seed", f.Seed), &f.Cache, f.Format, f.out)
			}
			tr, err := f.Training.training(cmd, f.Setting)
			if err != nil {
				return err
			}
			if f.NonPrivate && f.Setting == accountant.Shared {
				return cli.Usagef("--nonprivate with --setting shared: the non-private teachers train on disjoint shares only (adding or removing one record must change one vote at most)")
			}
			b, err := loadBinary(f.Dataset)
			if err != nil {
				return err
			}
			dir, err := f.Cache.Open(setup.Memo(cmd))
			if err != nil {
				return err
			}
			cfg, pub := tr.Configs(f.Dataset, b.PublicTrainSize, cli.Given(cmd.Flags(), "seed", f.Seed))
			if f.NonPrivate {
				cfg = pub
			}
			prog := cliout.NewProgress(cmd.ErrOrStderr(), -1, fmt.Sprintf("training or loading the teachers of %s", f.Dataset))
			e, _, err := teachers.Cached(cmd.Context(), dir.Folder("teachers"), b, cfg, cliout.Note(cmd.ErrOrStderr()))
			prog.Done()
			if err != nil {
				return setup.Flagged(err, nil)
			}
			if use == "train" {
				return report.Teachers{Ensemble: e}.Write(cmd.OutOrStdout(), f.Format)
			}
			if strings.EqualFold(filepath.Ext(f.out), ".npy") {
				return cli.Usagef("--out %s: two-class 0/1 votes are written as CSV; NumPy vote files hold the counts of --classes C", f.out)
			}
			if err := cli.WriteOutput(cmd.Context(), f.out, cmd.OutOrStdout(), func(w io.Writer) error { return e.WriteVotes(w, b.Test) }); err != nil {
				return err
			}
			return writeVotes(cmd, f.out, votefile.LayoutVotes, e.Meta, b.Test.Len(), f.Format, votefile.FormatCSV)
		},
	}, &f)
	if use == "vote" {
		cmd.Flags().StringVar(&f.out, "out", "-", "vote file, written atomically (- for stdout; .npy: counts)")
	}
	return cmd
}

func newTeachersTuneCmd() *cobra.Command {
	f := struct {
		Dataset  string `flag:"dataset" help:"two-class task to tune: mnist58 or fashion58" required:""`
		Training trainingFlags
		Format   cliout.Format `flag:"format"`
	}{Training: trainingFlags{Epochs: transfer.Epochs}}
	return newCmd("teachers-tune", &cobra.Command{
		Use: "tune --dataset mnist58|fashion58 [flags]", Short: "Choose the teachers' filters and learning rates on a tuning task, without private data", Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tr, err := f.Training.training(cmd, accountant.Disjoint)
			if err != nil {
				return err
			}
			tasks, err := transfer.TuningTasks(f.Dataset)
			if err != nil {
				return cli.Usagef("--dataset: %v", err)
			}
			// The data set's public size, as its publisher states it: the
			// private data are not read.
			size, err := datasets.PublicTrainSize(f.Dataset)
			if err != nil {
				return cli.Usagef("--dataset: %v", err)
			}
			prog := cliout.NewProgress(cmd.ErrOrStderr(), -1, "tuning the teachers of "+f.Dataset)
			say := func(s string) {
				prog.Describe(s)
				cliout.Note(cmd.ErrOrStderr())(s)
			}
			h, trials, err := transfer.Tune(cmd.Context(), tasks, loadBinary, f.Dataset, size, tr, transfer.DefaultGrid, say)
			prog.Done()
			if err != nil {
				return err
			}
			return report.Tune{Dataset: f.Dataset, Tasks: tasks, Chosen: h, InUse: transfer.HyperFor(f.Dataset), Trials: trials}.Write(cmd.OutOrStdout(), f.Format)
		},
	}, &f)
}

// runTeachersClasses trains or loads PATE's C-class teachers of the
// ten-class set dataset (as darrm pate does, so the two share the cache)
// and prints them (train) or writes their vote counts on the queries, with
// their metadata header (vote).
func runTeachersClasses(cmd *cobra.Command, use, dataset string, classes int, tf *trainingFlags, seed *uint64, cf *setup.CacheFlags, format cliout.Format, out string) error {
	fs := cmd.Flags()
	for _, fl := range []string{"nonprivate", "setting", "sigma"} {
		if fs.Changed(fl) {
			return cli.Usagef("--%s: the teachers of --classes are PATE's, non-private on keyed-hash shares", fl)
		}
	}
	m, err := datasets.LoadMNIST("", dataset)
	if err != nil && !errors.Is(err, datasets.ErrNoDir) {
		return cli.Usagef("--dataset: %v", err)
	} else if err != nil {
		return err
	}
	if classes != m.Classes {
		return cli.Usagef("--classes %d: %s has %d classes", classes, dataset, m.Classes)
	}
	k := patemnist.Teachers
	if fs.Changed("K") {
		k = tf.K
	}
	cfg := patemnist.TeacherConfig(dataset, k, m.Classes, m.Test.Len()/2, seed)
	if fs.Changed("epochs") {
		cfg.Epochs = tf.Epochs
	}
	if err := setup.Flagged(cfg.Validate(), nil); err != nil {
		return err
	}
	dir, err := cf.Open(setup.Memo(cmd))
	if err != nil {
		return err
	}
	prog := cliout.NewTrainingProgress(cmd.ErrOrStderr(), fmt.Sprintf("loading the teachers of %s", dataset), "saving and writing")
	cfg.Progress = prog.Teachers
	e, _, err := teachers.CachedClasses(cmd.Context(), dir.Folder("teachers"), m, cfg, cliout.Note(cmd.ErrOrStderr()))
	prog.Done()
	if err != nil {
		return err
	}
	if use == "train" {
		return report.Teachers{Ensemble: e}.Write(cmd.OutOrStdout(), format)
	}
	write, vf := e.WriteCounts, votefile.FormatCSV
	if strings.EqualFold(filepath.Ext(out), ".npy") {
		// PATE users' format: the counts alone, without the header.
		write = func(w io.Writer) error { return votefile.WriteCountsNPY(w, e.Counts()) }
		vf = votefile.FormatNPY
	}
	if err := cli.WriteOutput(cmd.Context(), out, cmd.OutOrStdout(), write); err != nil {
		return err
	}
	return writeVotes(cmd, out, votefile.LayoutCounts, e.Meta, cfg.Queries, format, vf)
}

// writeVotes prints the summary of the vote file teachers vote wrote to
// out (report.Votes): on standard output, or on standard error when the
// votes went there.
func writeVotes(cmd *cobra.Command, out string, layout votefile.Layout, meta *votefile.Meta, queries int, format cliout.Format, vf votefile.Format) error {
	w := cmd.OutOrStdout()
	if cli.IsStdout(out) || cli.IsStdoutFile(out, w) {
		w = cmd.ErrOrStderr()
	}
	return report.Votes{Output: cli.OutputName(out), Format: vf, Layout: layout, Meta: meta, Queries: queries}.Write(w, format)
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
