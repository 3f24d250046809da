package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/outputs"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/cmd/darrm/internal/shard"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/atomicfile"
)

func init() { subcommands = append(subcommands, subcommand{"separate", plain(newSeparateCmd)}) }

func newSeparateCmd() *cobra.Command {
	var f struct {
		setup.ProblemFlags
		Workers int    `flag:"workers"`
		Shard   string `flag:"shard" help:"which part: i/n, 0 <= i < n"`
		FromEnv string `flag:"shard-from-env" help:"take the part from an array job's environment: slurm or k8s"`
		Out     string `flag:"out" help:"file for the part (JSON); {i} and {n} become its index and count" required:""`
	}
	cmd := newCmd("separate", &cobra.Command{
		Use:   "separate [GAMMA] (--shard i/n | --shard-from-env SCHEDULER) --out PART.json",
		Short: "One shard of the exhaustive certificate, to certify a large K in independent jobs",
		Args:  cli.MaxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			shard, err := separateShard(cmd, f.Shard, f.FromEnv)
			if err != nil {
				return err
			}
			out := shard.Path(f.Out)
			if out != f.Out { // preRun checked --out as written
				if err := cli.CheckOutput("out", out, outputs.Protected(cmd, args)...); err != nil {
					return err
				}
			}
			if err := setup.CheckWorkers(f.Workers); err != nil {
				return err
			}
			tab, p, err := f.ReadGamma(cmd, args)
			if err != nil {
				return err
			}
			prog := cliout.NewProgress(cmd.ErrOrStderr(), -1, fmt.Sprintf("certifying shard %v for K=%d m=%g", shard, p.K, p.M))
			sep, err := shard.Verify(cmd.Context(), p.Problem, tab.Gamma, gamma.VerifyOptions{Workers: f.Workers})
			prog.Done()
			if err != nil {
				return cli.AsUsage(setup.Flagged(err, map[string]string{"Shards": "--shard's count"}))
			}
			doc := report.Shard{Problem: report.NewProblem(p), Gamma: tab.Gamma, Separation: sep, Seconds: time.Since(start).Seconds()}
			if err := atomicfile.WriteOutput(cmd.Context(), out, 0o644, func(w io.Writer) error { return cliout.WriteJSON(w, doc) }); err != nil {
				return err
			}
			return cliout.WriteWrapped(cmd.OutOrStdout(), doc.Written(out))
		},
	}, &f)
	// The problem is the gamma file's where it states one.
	cli.SetDefaultText(cmd.Flags(), "file's, else %v", "m", "eps", "Delta", "delta")
	cmd.AddCommand(newSeparateMergeCmd())
	return cmd
}

// separateShard is the shard of --shard (spec) or of --shard-from-env
// (scheduler, shard.FromEnv with the process's environment): exactly
// one of them is given.
func separateShard(cmd *cobra.Command, spec, scheduler string) (gamma.Shard, error) {
	given, fromEnv := cmd.Flags().Changed("shard"), cmd.Flags().Changed("shard-from-env")
	switch {
	case given && fromEnv:
		return gamma.Shard{}, cli.Usagef("--shard and --shard-from-env exclude each other: give one")
	case given:
		s, err := shard.Parse(spec)
		if err != nil {
			return gamma.Shard{}, cli.Usagef("--shard %q: %v", spec, err)
		}
		return s, nil
	case fromEnv:
		s, err := shard.FromEnv(scheduler, os.Getenv)
		if err != nil {
			return gamma.Shard{}, cli.Usagef("--shard-from-env %s: %v", scheduler, err)
		}
		return s, nil
	}
	return gamma.Shard{}, cli.Usagef("give the shard to run: --shard i/n, or --shard-from-env slurm or k8s in an array job")
}

func newSeparateMergeCmd() *cobra.Command {
	var f struct {
		Format cliout.Format `flag:"format"`
	}
	return newCmd("separate-merge", &cobra.Command{
		Use:   "merge PART...",
		Short: "Combine the shards of darrm separate into the certificate",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			docs, err := setup.ReadJSON[report.Shard](cmd, "PART", args, setup.WantShard)
			if err != nil {
				return err
			}
			out, err := report.MergeShards(args, docs)
			if err != nil {
				return cli.AsUsage(err)
			}
			out.Seconds = time.Since(start).Seconds()
			return out.WriteVerdict(cmd.OutOrStdout(), f.Format)
		},
	}, &f)
}
