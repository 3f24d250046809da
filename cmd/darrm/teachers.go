package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/datasets"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/atomicfile"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/teachers"
	"github.com/darrm/darrm/transfer"
)

func init() { subcommands = append(subcommands, newTeachersCmd) }

func newTeachersCmd() *cobra.Command {
	return newGroupCmd("teachers", "Train the transfer experiment's teachers and write their votes",
		newTeachersSub("train"), newTeachersSub("vote"))
}

// teachersFlags select an ensemble of darrm transfer's teachers.
type teachersFlags struct {
	dataset    string
	nonPrivate bool
	seed       uint64
	cache      cacheFlags
}

func newTeachersSub(use string) *cobra.Command {
	var (
		f      teachersFlags
		format formatFlag
		out    string
	)
	short := "Train (or load) the teachers and print their test accuracy"
	if use == "vote" {
		short = "Write the teachers' votes on the public set as a vote file"
	}
	cmd := &cobra.Command{
		Use: use + " --dataset mnist58|fashion58 [flags]", Short: short, Args: noArgs,
		Example: "  darrm teachers vote --dataset mnist58 --seed 1 --out votes.csv && darrm aggregate votes.csv --out labels.csv",
		RunE: func(cmd *cobra.Command, _ []string) error {
			fm, err := format.parse()
			if err != nil {
				return err
			}
			if err := checkOutPath("out", out); err != nil {
				return err
			}
			b, e, err := f.ensemble(cmd)
			if err != nil {
				return err
			}
			if use == "train" {
				var rows []cliout.Record
				for i, a := range e.Accuracy {
					rows = append(rows, cliout.Record{{Key: "teacher", Val: i}, {Key: "test_accuracy", Val: a}})
				}
				return cliout.WriteRecords(cmd.OutOrStdout(), fm, cliout.Record{{Key: "dataset", Val: f.dataset},
					{Key: "private", Val: !f.nonPrivate}, {Key: "share_size", Val: e.ShareSize}}, rows)
			}
			return writeVotes(cmd, out, e.Votes(b.Test))
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.dataset, "dataset", "", "two-class task: mnist58 or fashion58")
	fs.BoolVar(&f.nonPrivate, "nonprivate", false, "the non-private (SGD) teachers GNMax uses, instead of the DP-SGD ones")
	flagSeed.add(fs, &f.seed)
	f.cache.add(cmd)
	format.add(cmd)
	if use == "vote" {
		fs.StringVar(&out, "out", "-", "vote file, written atomically (- for standard output)")
	}
	return cmd
}

// ensemble loads the data and trains or loads the selected teachers.
func (f *teachersFlags) ensemble(cmd *cobra.Command) (*datasets.Binary, *teachers.Ensemble, error) {
	if err := requireFlags(cmd, "dataset"); err != nil {
		return nil, nil, err
	}
	b, err := loadBinary(f.dataset)
	if err != nil {
		return nil, nil, err
	}
	dir, err := f.cache.open()
	if err != nil {
		return nil, nil, err
	}
	var seed *uint64
	if cmd.Flags().Changed("seed") {
		seed = &f.seed
	}
	priv, pub := transfer.TeacherConfigs(f.dataset, b.Train.Len()/transfer.K, seed)
	cfg := priv
	if f.nonPrivate {
		cfg = pub
	}
	e, _, err := loadOrTrain(cmd.Context(), cmd, dir, b, cfg)
	return b, e, err
}

// loadBinary reads a two-class task; missing data name the script.
func loadBinary(name string) (*datasets.Binary, error) {
	dir, err := datasets.DefaultDir()
	if err != nil {
		return nil, err
	}
	b, err := datasets.LoadBinary(dir, name)
	var me *datasets.MissingError
	if errors.As(err, &me) || err != nil {
		return nil, usageErrorf("--dataset: %v", err)
	}
	return b, nil
}

// writeVotes writes votes as a CSV vote file whose ids are the public
// images' indices in the test set.
func writeVotes(cmd *cobra.Command, out string, votes [][]byte) error {
	ids := make([]string, len(votes))
	for q := range ids {
		ids[q] = fmt.Sprint(q)
	}
	if out == "" || out == "-" {
		return ensemble.WriteVotes(cmd.OutOrStdout(), ids, votes)
	}
	return atomicfile.Write(out, 0o644, func(f *os.File) error { return ensemble.WriteVotes(f, ids, votes) })
}
