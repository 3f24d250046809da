package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cmd/darrm/internal/cli"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/gamma"
)

func init() { subcommands = append(subcommands, subcommand{"verify", plain(newVerifyCmd)}) }

func newVerifyCmd() *cobra.Command {
	var f struct {
		setup.ProblemFlags
		setup.RelationFlags
		Format  cliout.Format `flag:"format"`
		Workers int           `flag:"workers"`
	}
	cmd := f.WithRelation(newCmd("verify", &cobra.Command{
		Use:   "verify [FILE] [flags]",
		Short: "Certify that a gamma makes DaRRM (m·eps, delta)-DP",
		Args:  cli.MaxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			if err := setup.CheckWorkers(f.Workers); err != nil {
				return err
			}
			tab, p, err := f.ReadGamma(cmd, args)
			if err != nil {
				return err
			}
			prog := cliout.NewProgress(cmd.ErrOrStderr(), 100, fmt.Sprintf("certifying K=%d", p.K))
			cert, err := gamma.Verify(cmd.Context(), p.Problem, tab.Gamma, gamma.VerifyOptions{Workers: f.Workers, Progress: func(x float64) { prog.Set(int64(100 * x)) }})
			prog.Done()
			if err != nil {
				return err
			}
			return report.Verify{Problem: report.NewProblem(p), Gamma: tab.Gamma, Certificate: cert, Seconds: time.Since(start).Seconds()}.WriteVerdict(cmd.OutOrStdout(), f.Format)
		},
	}, &f), &f.RelationFlags)
	// The problem is the gamma file's where it states one.
	cli.SetDefaultText(cmd.Flags(), "file's, else %v", "m", "eps", "Delta", "delta", "relation")
	return cmd
}
