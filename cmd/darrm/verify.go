package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/cliout"
)

func init() { subcommands = append(subcommands, newVerifyCmd) }

type verifyFlags struct {
	problem problemFlags
	format  string
	workers int
}

func newVerifyCmd() *cobra.Command {
	var f verifyFlags
	cmd := &cobra.Command{
		Use:   "verify [FILE] [flags]",
		Short: "Certify that a gamma makes DaRRM (m·eps, delta)-DP",
		Long: `verify reads a noise function gamma(0..K) from FILE (or standard input): the
JSON printed by "darrm solve --format json", a JSON array, or numbers separated
by spaces, commas or newlines. It maximises the privacy cost f exactly over
every corner multiset (Lemmas 3.4.4 and 3.6.1) and prints the certificate.

The problem is taken from the JSON when it states it; flags given on the
command line override it. K defaults to the length of gamma minus one and
delta to 1-(1-Delta)^m.

Exit status: 0 if certified (max f + rounding bound <= budget); 3 if not,
including a gamma that meets the budget only to within rounding error
("tight"); 2 for bad input.`,
		Example: `  darrm solve --K 11 --m 3 --format json | darrm verify
  darrm verify gamma.txt --m 3 --eps 0.1 --Delta 1e-5`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runVerify(cmd, &f, args) },
	}
	f.problem.register(cmd)
	cmd.Flags().StringVar(&f.format, "format", "table", "output format: table or json")
	cmd.Flags().IntVar(&f.workers, "workers", 0, "goroutines for the exhaustive separation (default: all cores)")
	return cmd
}

// verifyOut is the JSON document verify prints.
type verifyOut struct {
	problemOut
	Gamma       []float64         `json:"gamma"`
	Certificate gamma.Certificate `json:"certificate"`
	Seconds     float64           `json:"seconds"`
}

func runVerify(cmd *cobra.Command, f *verifyFlags, args []string) error {
	start := time.Now()
	format, err := cliout.ParseFormat(f.format)
	if err != nil || format == cliout.CSV {
		return usageErrorf("--format %q: must be table or json", f.format)
	}
	name := "-"
	if len(args) == 1 {
		name = args[0]
	}
	in, err := openInput(cmd, name)
	if err != nil {
		return usageErrorf("%v", err)
	}
	tab, err := gamma.ReadTable(in)
	in.Close()
	if err != nil {
		return usageErrorf("%s: %v", displayName(name), err)
	}
	p, deltaDefault, err := verifyParams(cmd, &f.problem, tab)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	prog := cliout.NewProgress(cmd.ErrOrStderr(), 100, fmt.Sprintf("certifying K=%d", p.K))
	cert, err := gamma.Verify(ctx, p, tab.Gamma, f.workers, func(x float64) { prog.Set(int64(100 * x)) })
	prog.Done()
	if err != nil {
		return usageErrorf("%v", err)
	}
	out := verifyOut{problemOut: newProblemOut(p, deltaDefault),
		Gamma: tab.Gamma, Certificate: cert, Seconds: time.Since(start).Seconds()}
	w := cmd.OutOrStdout()
	if format == cliout.JSON {
		err = cliout.WriteJSON(w, out)
	} else {
		fmt.Fprintf(w, "gamma for K = %d teachers, each (eps = %g, Delta = %g)-DP; target (m·eps, delta) with m = %g, delta = %.6g\n",
			p.K, p.Eps, p.Delta, p.M, p.TargetDelta)
		writeCertificate(w, "certificate", cert)
		if cert.Status == gamma.Tight {
			fmt.Fprintf(w, "  scaling gamma by %.15g (= 1 - 2·bound/budget) would certify it\n", 1-2*cert.ErrBound/cert.Budget)
		}
	}
	if err != nil {
		return err
	}
	if cert.Status != gamma.Certified {
		return withCode(exitNotCertified, fmt.Errorf("gamma is not certified (m·eps, delta)-DP: %v, max f / budget = %.15g", cert.Status, cert.Ratio))
	}
	return nil
}

func displayName(name string) string {
	if name == "-" {
		return "standard input"
	}
	return name
}

// verifyParams combines the parameters stated in the gamma file with the
// command line, which takes precedence.
func verifyParams(cmd *cobra.Command, f *problemFlags, tab gamma.Table) (constraints.Params, bool, error) {
	fs := cmd.Flags()
	p := constraints.Params{K: tab.Gamma.K(), Eps: f.eps, Delta: f.delta}
	pick := func(flag string, fromFlag float64, fromFile *float64) float64 {
		if fromFile != nil && !fs.Changed(flag) {
			return *fromFile
		}
		return fromFlag
	}
	if fs.Changed("K") && f.k != p.K {
		return p, false, usageErrorf("--K = %d but gamma has %d values: need K+1", f.k, len(tab.Gamma))
	}
	if !fs.Changed("m") && tab.M == nil {
		return p, false, usageErrorf("--m is required (the gamma file does not state m)")
	}
	p.M = pick("m", f.m, tab.M)
	p.Eps = pick("eps", f.eps, tab.Eps)
	p.Delta = pick("Delta", f.delta, tab.Delta)
	deltaDefault := false
	switch {
	case fs.Changed("delta"):
		p.TargetDelta = f.target
	case tab.TargetDelta != nil:
		p.TargetDelta = *tab.TargetDelta
	default:
		p.TargetDelta = constraints.DefaultTargetDelta(p.Delta, p.M)
		deltaDefault = true
	}
	if err := p.Validate(); err != nil {
		return p, false, usageErrorf("%v", err)
	}
	return p, deltaDefault, nil
}
