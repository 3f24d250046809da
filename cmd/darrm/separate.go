package main

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/atomicfile"
	"github.com/darrm/darrm/internal/cli"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/report"
)

func init() { subcommands = append(subcommands, newSeparateCmd) }

// shardFile is one shard of a separation on disk: the problem, the gamma
// and the partial result.
type shardFile struct {
	Problem    report.Problem         `json:"problem"`
	Gamma      []float64              `json:"gamma"`
	Separation constraints.Separation `json:"separation"`
	Seconds    float64                `json:"seconds"`
}

func newSeparateCmd() *cobra.Command {
	var (
		f       problemFlags
		workers workersFlag
		shard   string
		out     string
	)
	cmd := &cobra.Command{
		Use:   "separate [GAMMA] --shard i/n --out PART.json",
		Short: "One shard of the exhaustive certificate, to run the certificate of a large K as independent jobs",
		Long: `separate runs part i of n of the exact separation behind darrm verify's
certificate (the maximum of the privacy cost f over every corner multiset)
for the gamma in GAMMA (as verify reads it) and writes the partial result
(maximum, worst multiset, costliest multisets, multisets covered) to --out.
The n shards are independent: run them anywhere, as separate processes or
jobs of a cluster scheduler, then "darrm separate merge PART..." combines
them exactly and prints the certificate, as darrm verify would. See
docs/solve.md, "A certificate in shards".`,
		Example: `  for i in 0 1 2 3; do darrm separate g.json --shard $i/4 --out part$i.json & done; wait
  darrm separate merge part0.json part1.json part2.json part3.json`,
		Args: cli.MaxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			if err := cli.RequireFlags(cmd, "shard", "out"); err != nil {
				return err
			}
			var i, n int
			if _, err := fmt.Sscanf(shard, "%d/%d", &i, &n); err != nil || n < 1 || i < 0 || i >= n || fmt.Sprintf("%d/%d", i, n) != shard {
				return cli.Usagef("--shard %q: must be i/n with 0 <= i < n", shard)
			}
			if err := cli.CheckOutPath("out", out); err != nil {
				return err
			}
			w, err := workers.get()
			if err != nil {
				return err
			}
			tab, p, err := f.readGamma(cmd, args)
			if err != nil {
				return err
			}
			sep, err := p.Separate(cmd.Context(), tab.Gamma, constraints.SeparateOptions{Top: 16, Floor: p.Budget(), Workers: w, Shard: i, Shards: n})
			if err != nil {
				return cli.Usagef("%v", err)
			}
			doc := shardFile{Problem: p.out(), Gamma: tab.Gamma, Separation: sep, Seconds: time.Since(start).Seconds()}
			return atomicfile.Write(out, 0o644, func(file *os.File) error { return cliout.WriteJSON(file, doc) })
		},
	}
	f.add(cmd)
	workers.add(cmd)
	cmd.Flags().StringVar(&shard, "shard", "", "which part: i/n, 0 <= i < n")
	cmd.Flags().StringVar(&out, "out", "", "file for the partial result (JSON)")
	cmd.AddCommand(newSeparateMergeCmd())
	return cmd
}

func newSeparateMergeCmd() *cobra.Command {
	var format formatFlag
	cmd := &cobra.Command{
		Use:   "merge PART...",
		Short: "Combine the shards of darrm separate into the certificate",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			f, err := format.parse()
			if err != nil {
				return err
			}
			docs, err := cli.ReadJSON[shardFile](cmd.InOrStdin(), args, darrmJSON)
			if err != nil {
				return err
			}
			first := docs[0]
			p := constraints.Params{K: first.Problem.K, M: first.Problem.M, Eps: first.Problem.Eps, Delta: first.Problem.Delta, TargetDelta: first.Problem.TargetDelta}
			var parts []constraints.Separation
			for i, d := range docs {
				if d.Problem != first.Problem || !slices.Equal(d.Gamma, first.Gamma) {
					return cli.Usagef("%s is a shard of another problem or gamma than %s", args[i], args[0])
				}
				parts = append(parts, d.Separation)
			}
			if err := p.Validate(); err != nil {
				return cli.Usagef("%s: %v", args[0], err)
			}
			sep, err := constraints.MergeSeparations(p, parts, 16)
			if err != nil {
				return cli.Usagef("%v", err)
			}
			// The bound is recomputed here, never read from the files.
			sep.ErrBound = p.ErrBound()
			cert := gamma.NewCertificate(p, sep)
			out := report.Verify{Problem: first.Problem, Gamma: first.Gamma, Certificate: cert, Seconds: time.Since(start).Seconds()}
			if err := out.Write(cmd.OutOrStdout(), f); err != nil {
				return err
			}
			if cert.Status != gamma.Certified {
				return fmt.Errorf("gamma is %w (m·eps, delta)-DP: %v, max f / budget = %.15g", errNotCertified, cert.Status, cert.Ratio)
			}
			return nil
		},
	}
	format.add(cmd)
	return cmd
}
