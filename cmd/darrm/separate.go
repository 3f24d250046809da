package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/atomicfile"
	"github.com/darrm/darrm/internal/cli"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/report"
)

func init() { subcommands = append(subcommands, newSeparateCmd) }

func newSeparateCmd() *cobra.Command {
	var f struct {
		problemFlags
		Workers int    `flag:"workers"`
		Shard   string `flag:"shard" help:"which part: i/n, 0 <= i < n" required:""`
		Out     string `flag:"out" help:"file for the partial result (JSON)" required:""`
	}
	cmd := newCmd("separate", &cobra.Command{
		Use:   "separate [GAMMA] --shard i/n --out PART.json",
		Short: "One shard of the exhaustive certificate, to run the certificate of a large K as independent jobs",
		Args:  cli.MaxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			shard, err := gamma.ParseShard(f.Shard)
			if err != nil {
				return cli.Usagef("--shard %q: %v", f.Shard, err)
			}
			if err := checkWorkers(f.Workers); err != nil {
				return err
			}
			tab, p, err := f.readGamma(cmd, args)
			if err != nil {
				return err
			}
			prog := cliout.NewProgress(cmd.ErrOrStderr(), -1, fmt.Sprintf("certifying shard %v for K=%d m=%g", shard, p.K, p.M))
			sep, err := gamma.VerifyShard(cmd.Context(), p.Params, tab.Gamma, shard, f.Workers)
			prog.Done()
			if err != nil {
				return cli.AsUsage(err)
			}
			doc := report.Shard{Problem: report.NewProblem(p), Gamma: tab.Gamma, Separation: sep, Seconds: time.Since(start).Seconds()}
			return atomicfile.WriteOutput(cmd.Context(), f.Out, 0o644, func(w io.Writer) error { return cliout.WriteJSON(w, doc) })
		},
	}, &f, nil)
	cmd.AddCommand(newSeparateMergeCmd())
	return cmd
}

func newSeparateMergeCmd() *cobra.Command {
	var f struct {
		Format cliout.Format `flag:"format"`
	}
	return newCmd("", &cobra.Command{
		Use:   "merge PART...",
		Short: "Combine the shards of darrm separate into the certificate",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			docs, err := cli.ReadJSON[report.Shard](cmd.InOrStdin(), args, darrmJSON)
			if err != nil {
				return err
			}
			out, err := report.MergeShards(args, docs)
			if err != nil {
				return cli.AsUsage(err)
			}
			out.Seconds = time.Since(start).Seconds()
			return writeVerify(cmd, out, f.Format)
		},
	}, &f, nil)
}
