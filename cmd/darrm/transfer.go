package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/datasets"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/curveplot"
	"github.com/darrm/darrm/internal/figure"
	"github.com/darrm/darrm/internal/report"
	"github.com/darrm/darrm/teachers"
	"github.com/darrm/darrm/transfer"
)

func init() { subcommands = append(subcommands, newTransferCmd) }

func newTransferCmd() *cobra.Command {
	var (
		dataset string
		m       float64
		queries []int
		redraws int
		seed    uint64
		format  formatFlag
		plot    string
		cf      cacheFlags
		workers workersFlag
	)
	cmd := &cobra.Command{
		Use:   "transfer --dataset mnist58|fashion58 [flags]",
		Short: "Private knowledge transfer end to end: DP-SGD teachers, private labels, accuracy (thesis Table 3.1)",
		Long: `transfer runs the thesis' private knowledge transfer experiment (Section
3.7.2; Tables 3.1, B.4, B.6, B.8): K = 11 teachers trained with DP-SGD on
disjoint shares of the training images of classes 5 and 8 label queries drawn
from the test set with GNMax (on non-private teachers), DaRRM with gamma_Sub,
DaRRM with gamma_opt (certified, from the cache) and RR; each label is
(m·eps, m·Delta)-DP for the teachers' (eps, Delta). It prints each
mechanism's accuracy (mean ± std over --redraws draws of Q queries) and the
total privacy over Q queries by general composition with delta' = 1e-4.

Teachers are trained once and cached (beside the gamma cache), keyed by the
dataset, their training parameters and --seed; without --seed they are
trained from crypto/rand. The query draws and the mechanisms' noise are an
experiment: seeded by --seed, or by a seed drawn and printed. The data come
from scripts/fetch-data.sh; nothing is downloaded. See docs/transfer.md.`,
		Example: `  darrm transfer --dataset mnist58
  darrm transfer --dataset fashion58 --m 5 --seed 1 --format json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			f, err := format.parse()
			if err != nil {
				return err
			}
			if err := requireFlags(cmd, "dataset"); err != nil {
				return err
			}
			w, err := workers.get()
			if err != nil {
				return err
			}
			if !(m >= 1 && m <= transfer.K) {
				return usageErrorf("--m = %v: must be in [1, K] = [1, %d]", m, transfer.K)
			}
			if redraws < 1 {
				return usageErrorf("--redraws = %d: must be >= 1", redraws)
			}
			if plot != "" {
				if err := figure.CheckPath(plot); err != nil {
					return &usageError{err}
				}
			}
			b, err := loadBinary(dataset)
			if err != nil {
				return err
			}
			for _, q := range queries {
				if q < 1 || q > b.Test.Len() {
					return usageErrorf("--queries %d: must be in [1, %d], the size of %s's public set", q, b.Test.Len(), dataset)
				}
			}
			gdir, err := cf.open()
			if err != nil {
				return err
			}
			var teacherSeed *uint64
			if cmd.Flags().Changed("seed") {
				teacherSeed = &seed
			} else {
				seed = ensemble.NewSource().Uint64()
			}
			share := b.Train.Len() / transfer.K
			privCfg, pubCfg := transfer.TeacherConfigs(dataset, share, teacherSeed)
			ctx := cmd.Context()
			priv, privCached, err := loadOrTrain(ctx, cmd, gdir, b, privCfg)
			if err != nil {
				return err
			}
			pub, pubCached, err := loadOrTrain(ctx, cmd, gdir, b, pubCfg)
			if err != nil {
				return err
			}
			guarantee, alpha, err := transfer.TeacherGuarantee(privCfg.DP)
			if err != nil {
				return err
			}
			opt := func(ctx context.Context, p constraints.Params) (gamma.Gamma, error) {
				e, _, err := solveGamma(ctx, cmd, p, gamma.UniformPrior(), gdir, w, false)
				if err != nil {
					return nil, err
				}
				return e.Gamma, nil
			}
			res, err := transfer.Run(ctx, b.Test, priv, pub, guarantee, transfer.Params{M: m, Queries: queries, Redraws: redraws, Seed: seed}, opt)
			if err != nil {
				return err
			}
			out := report.Transfer{
				Dataset: dataset, K: transfer.K, Results: res, Seed: seed,
				Note: "an experiment: accuracy of labels against the true labels; the query draws and the noise are seeded",
				Teachers: report.TransferTeachers{
					Private: report.PrivateTeachers{Eps: guarantee.Eps, Delta: guarantee.Delta, Alpha: alpha, Sigma: privCfg.DP.Sigma, Clip: privCfg.DP.Clip,
						Epochs: privCfg.DP.Epochs, SamplingRate: privCfg.DP.Rate, Steps: privCfg.DP.Steps(), ShareSize: share,
						Accuracy: priv.Accuracy, AccuracyMean: transfer.Mean(priv.Accuracy), Agreement: transfer.Agree(priv.Votes(b.Test)), Cached: privCached},
					NonPrivate: report.NonPrivateTeachers{Accuracy: pub.Accuracy, AccuracyMean: transfer.Mean(pub.Accuracy), Agreement: transfer.Agree(pub.Votes(b.Test)), Cached: pubCached},
				},
				Seconds: time.Since(start).Seconds(),
			}
			if plot != "" {
				title := fmt.Sprintf("%s, K = %d, m = %g: each label (%.4g, %.2g)-DP", dataset, transfer.K, m, res[0].QueryEps, res[0].QueryDelta)
				if err := curveplot.Write(plot, "", []curveplot.Panel{curveplot.TransferPanel(title, res)}, 1); err != nil {
					return err
				}
			}
			return out.Write(cmd.OutOrStdout(), f)
		},
	}
	fs := cmd.Flags()
	flagM.add(fs, &m)
	flagSeed.add(fs, &seed)
	flagPlot.add(fs, &plot)
	format.add(cmd)
	cf.add(cmd)
	workers.add(cmd)
	fs.StringVar(&dataset, "dataset", "", "two-class task: mnist58 or fashion58")
	fs.IntSliceVar(&queries, "queries", []int{20, 50, 100}, "numbers of queries Q")
	fs.IntVar(&redraws, "redraws", 10, "query sets drawn per Q")
	return cmd
}

// loadOrTrain returns the ensemble cfg describes from the teachers cache
// (beside the gamma cache), or trains and stores it; a corrupt file is
// reported and replaced.
func loadOrTrain(ctx context.Context, cmd *cobra.Command, dir *cache.Dir, b *datasets.Binary, cfg teachers.Config) (*teachers.Ensemble, bool, error) {
	var path string
	if dir != nil {
		path = filepath.Join(dir.Root(), "teachers", cfg.Key()+".json")
		e, err := teachers.Load(path, cfg)
		if err == nil {
			return e, true, nil
		}
		var ce *teachers.CorruptError
		if !errors.Is(err, teachers.ErrNotFound) && !errors.As(err, &ce) {
			return nil, false, err
		}
		if ce != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "darrm: %v; retraining\n", err)
		}
	}
	kind := "non-private"
	if cfg.Private {
		kind = "private"
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "darrm: training %d %s teachers on %s\n", cfg.K, kind, cfg.Dataset)
	e, err := teachers.Train(ctx, b, cfg)
	if err != nil {
		return nil, false, err
	}
	if path != "" {
		err := os.MkdirAll(filepath.Dir(path), 0o755)
		if err == nil {
			err = e.Save(path)
		}
		if err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "darrm: warning: teachers not cached: %v\n", err)
		}
	}
	return e, false, nil
}
