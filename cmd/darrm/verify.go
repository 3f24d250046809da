package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/report"
)

func init() { subcommands = append(subcommands, newVerifyCmd) }

type verifyFlags struct {
	problem problemFlags
	format  formatFlag
	workers workersFlag
}

func newVerifyCmd() *cobra.Command {
	var f verifyFlags
	cmd := withHelp("verify", &cobra.Command{
		Use:   "verify [FILE] [flags]",
		Short: "Certify that a gamma makes DaRRM (m·eps, delta)-DP",
		Args:  maxArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return runVerify(cmd, &f, args) },
	})
	f.problem.add(cmd)
	f.format.add(cmd)
	f.workers.add(cmd)
	return cmd
}

func runVerify(cmd *cobra.Command, f *verifyFlags, args []string) error {
	start := time.Now()
	format, err := f.format.parse()
	if err != nil {
		return err
	}
	workers, err := f.workers.get()
	if err != nil {
		return err
	}
	tab, p, err := f.problem.readGamma(cmd, args)
	if err != nil {
		return err
	}
	prog := cliout.NewProgress(cmd.ErrOrStderr(), 100, fmt.Sprintf("certifying K=%d", p.K))
	cert, err := gamma.Verify(cmd.Context(), p.Params, tab.Gamma, workers, func(x float64) { prog.Set(int64(100 * x)) })
	prog.Done()
	if err != nil {
		return err
	}
	out := report.Verify{Problem: p.out(), Gamma: tab.Gamma, Certificate: cert, Seconds: time.Since(start).Seconds()}
	if err := out.Write(cmd.OutOrStdout(), format); err != nil {
		return err
	}
	if cert.Status != gamma.Certified {
		return fmt.Errorf("gamma is %w (m·eps, delta)-DP: %v, max f / budget = %.15g", errNotCertified, cert.Status, cert.Ratio)
	}
	return nil
}

// withTable combines the parameters stated in a gamma file with the
// command line, which takes precedence; K is the file's.
func (f *problemFlags) withTable(cmd *cobra.Command, tab gamma.Table) (problem, error) {
	fs := cmd.Flags()
	k := tab.Gamma.K()
	if fs.Changed("K") && f.K != k {
		return problem{}, usageErrorf("--K = %d but gamma has %d values: need K+1", f.K, len(tab.Gamma))
	}
	pick := func(flag string, fromFlag float64, fromFile *float64) float64 {
		if fromFile != nil && !fs.Changed(flag) {
			return *fromFile
		}
		return fromFlag
	}
	p := problem{Params: constraints.Params{K: k, M: pick("m", f.M, tab.M), Eps: pick("eps", f.Eps, tab.Eps), Delta: pick("Delta", f.Delta, tab.Delta)}}
	p.mDefault = !fs.Changed("m") && tab.M == nil
	switch {
	case fs.Changed("delta"):
		p.TargetDelta = f.Target
	case tab.TargetDelta != nil:
		p.TargetDelta = *tab.TargetDelta
	default:
		p.TargetDelta = constraints.DefaultTargetDelta(p.Delta, p.M)
		p.deltaDefault = true
	}
	return p, p.validate()
}

// readGamma reads the gamma file named by args (standard input if none)
// and the problem it is for, from the file and the flags (withTable).
func (f *problemFlags) readGamma(cmd *cobra.Command, args []string) (gamma.Table, problem, error) {
	name := "-"
	if len(args) == 1 {
		name = args[0]
	}
	tab, err := readTable(cmd, name)
	if err != nil {
		return gamma.Table{}, problem{}, err
	}
	p, err := f.withTable(cmd, tab)
	return tab, p, err
}
