package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/figure"
	"github.com/darrm/darrm/lp"
	"github.com/darrm/darrm/optimal"
)

func init() { subcommands = append(subcommands, newSolveCmd) }

type solveFlags struct {
	problem problemFlags
	cache   cacheFlags
	prior   string
	format  string
	compare bool
	actual  []string
	plot    string
	workers int
	verbose bool
	rr      rrFlags
	subSize int
}

// rrFlags select how RR's p_const is calibrated (Lemma B.1.1).
type rrFlags struct {
	method     string
	deltaPrime float64
}

func newSolveCmd() *cobra.Command {
	var f solveFlags
	cmd := &cobra.Command{
		Use:   "solve --K K --m m [flags]",
		Short: "Compute, certify and cache the optimal noise function gamma",
		Long: `solve computes gamma_opt, the DaRRM noise function that maximises utility
under a prior subject to (m·eps, delta)-DP (thesis Section 3.6), by linear
programming with cutting planes. The returned gamma is certified: the privacy
cost is maximised exactly over every corner multiset of the teachers'
feasible regions (Lemma 3.6.1) and is below the budget e^{m·eps} - 1 + 2·delta
with a margin covering floating-point error. Results are cached.

--compare adds the baselines at the same (m·eps, delta): gamma_Sub (majority of
floor(m) subsampled teachers, Lemma 3.4.1), gamma_DSub (2m-1 subsampled
teachers, Theorem 3.5.1, when Delta = delta = 0) and randomized response with
p_const of Lemma B.1.1 (the majority of K teachers being (tau·eps, lambda)-DP
by --rr-method composition), each with its own certificate, and true
expected errors under actual distributions of the teachers' probabilities.`,
		Example: `  darrm solve --K 11 --m 3
  darrm solve --K 11 --m 3 --compare --plot gamma.png
  darrm solve --K 101 --m 10 --Delta 0 --format json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSolve(cmd, &f) },
	}
	f.problem.register(cmd)
	f.cache.register(cmd)
	fs := cmd.Flags()
	fs.StringVar(&f.prior, "prior", "uniform", "prior on the teachers' accuracy: uniform (mean 0.75), tp (mean 0.85), a mean in (0.5, 1], or K comma-separated means")
	fs.StringVar(&f.format, "format", "table", "output format: table, json or csv")
	fs.BoolVar(&f.compare, "compare", false, "also compute and certify the baselines gamma_Sub, gamma_DSub and RR")
	fs.StringSliceVar(&f.actual, "actual", []string{"U(0,1)", "0.5", "U(0,0.1)"}, "with --compare: actual distributions of the p_i for the true expected error: U(a,b), a probability, or K probabilities")
	fs.StringVar(&f.plot, "plot", "", "write the gamma shapes and errors (thesis Figure 3.2) to this .png or .svg file")
	fs.IntVar(&f.workers, "workers", 0, "goroutines for the exhaustive separation (default: all cores)")
	fs.BoolVar(&f.verbose, "highs-log", false, "show HiGHS's solver log")
	fs.IntVar(&f.subSize, "sub-size", 0, "with --compare: teachers subsampled by gamma_Sub (default floor(m); App. B.4 subsamples M with m from general composition)")
	fs.StringVar(&f.rr.method, "rr-method", "simple", "with --compare: composition giving RR's tau and lambda: simple, general or optimal")
	fs.Float64Var(&f.rr.deltaPrime, "rr-delta-prime", 1e-5, "with --compare and --rr-method general or optimal: the composition's slack delta'")
	return cmd
}

// errorOut is a true expected error under an actual distribution.
type errorOut struct {
	Actual  string  `json:"actual"`
	Mean    float64 `json:"mean"`
	StdErr  float64 `json:"stderr"`
	Exact   bool    `json:"exact"`
	Samples int     `json:"samples,omitempty"`
}

// mechanismOut describes one noise function in solve's output.
type mechanismOut struct {
	Name           string            `json:"name"`
	Label          string            `json:"label"`
	Gamma          []float64         `json:"gamma"`
	Objective      float64           `json:"objective"`
	SurrogateError float64           `json:"surrogate_error"`
	Errors         []errorOut        `json:"expected_errors,omitempty"`
	Certificate    gamma.Certificate `json:"certificate"`
}

// solveOut is the JSON document solve prints; its fields are stable.
type solveOut struct {
	problemOut
	Prior          string            `json:"prior"`
	Gamma          []float64         `json:"gamma"`
	Objective      float64           `json:"objective"`
	SurrogateError float64           `json:"surrogate_error"`
	Certificate    gamma.Certificate `json:"certificate"`
	Seconds        float64           `json:"seconds"`
	Cached         bool              `json:"cached"`
	CacheFile      string            `json:"cache_file,omitempty"`
	Solve          solveStats        `json:"solve"`
	Errors         []errorOut        `json:"expected_errors,omitempty"`
	Compare        []mechanismOut    `json:"compare,omitempty"`
}

// solveStats describe the computation that produced the gamma (the
// original one, for a cached gamma).
type solveStats struct {
	Seconds  float64 `json:"seconds"`
	LPSolves int     `json:"lp_solves"`
	Rows     int     `json:"rows"`
	Passes   int     `json:"passes"`
	// TieBroken is false when the solver failed on the tie-break phase and
	// the first optimum found was returned (equally optimal and certified,
	// but not the canonical one).
	TieBroken bool `json:"tie_broken"`
}

func runSolve(cmd *cobra.Command, f *solveFlags) error {
	start := time.Now()
	p, deltaDefault, err := f.problem.params(cmd)
	if err != nil {
		return err
	}
	format, err := cliout.ParseFormat(f.format)
	if err != nil {
		return usageErrorf("%v", err)
	}
	prior, err := gamma.ParsePrior(f.prior)
	if err != nil {
		return usageErrorf("--prior: %v", err)
	}
	if _, err := prior.Coefficients(p.K); err != nil {
		return usageErrorf("--prior: %v", err)
	}
	var actuals []gamma.Actual
	if f.compare {
		for _, s := range f.actual {
			a, err := gamma.ParseActual(s)
			if err != nil {
				return usageErrorf("--actual: %v", err)
			}
			actuals = append(actuals, a)
		}
	}
	if f.plot != "" {
		if err := figure.CheckPath(f.plot); err != nil {
			return usageErrorf("%v", err)
		}
	}
	subSize := int(math.Floor(p.M))
	if cmd.Flags().Changed("sub-size") {
		if f.subSize < 1 || f.subSize > p.K {
			return usageErrorf("--sub-size = %d: must be in [1, K] = [1, %d]", f.subSize, p.K)
		}
		subSize = f.subSize
	}
	rrMethod, err := accountant.ParseMethod(f.rr.method)
	if err != nil {
		return usageErrorf("--rr-method: %v", err)
	}
	var rr gamma.Gamma
	var rrLabel string
	if f.compare {
		if rr, rrLabel, err = rrBaseline(p, rrMethod, f.rr.deltaPrime); err != nil {
			return usageErrorf("%v", err)
		}
	}
	dir, err := f.cache.open()
	if err != nil {
		return err
	}

	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	prog := cliout.NewProgress(cmd.ErrOrStderr(), -1, fmt.Sprintf("solving K=%d m=%g", p.K, p.M))
	opts := optimal.Options{
		Workers: f.workers,
		LP:      lp.Options{Verbose: f.verbose},
		Progress: func(s optimal.Progress) {
			prog.Describe(fmt.Sprintf("solving K=%d m=%g: separation pass %d (%3.0f%%), %d rows, violation %.2g", p.K, p.M, s.Pass, 100*s.Fraction, s.Rows, math.Max(s.Violation, 0)))
			prog.Set(int64(s.Pass))
		},
	}
	e, cached, storeErr, err := optimal.Cached(ctx, dir, p, prior, opts, warnCorrupt(cmd))
	prog.Done()
	if err != nil {
		return err // optimal.Solve and the cache name K and m already
	}
	if storeErr != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "darrm: warning: the result was not cached: %v\n", storeErr)
	}
	out := solveOut{
		problemOut: newProblemOut(p, deltaDefault),
		Prior:      prior.String(), Gamma: e.Gamma, Objective: e.Utility, SurrogateError: e.SurrogateError,
		Certificate: e.Certificate, Cached: cached,
		Solve: solveStats{Seconds: e.Seconds, LPSolves: e.LPSolves, Rows: e.Rows, Passes: e.Passes, TieBroken: e.TieBroken},
	}
	if dir != nil {
		out.CacheFile = dir.Path(cache.Key{Params: p, Prior: prior.String()})
	}
	if f.compare {
		if out.Errors, err = expectedErrors(gamma.Gamma(e.Gamma), actuals); err != nil {
			return err
		}
		if out.Compare, err = baselines(ctx, p, prior, actuals, f.workers, subSize, rr, rrLabel); err != nil {
			return err
		}
	}
	out.Seconds = time.Since(start).Seconds()
	if f.plot != "" {
		if err := plotSolve(f.plot, out); err != nil {
			return err
		}
	}
	w := cmd.OutOrStdout()
	switch format {
	case cliout.JSON:
		return cliout.WriteJSON(w, out)
	case cliout.CSV:
		return writeSolveCSV(w, out)
	default:
		return writeSolveTable(w, out)
	}
}

// mcSamples is the number of Monte Carlo draws for an expected error: about
// 2e8/K^2 pmf steps in all, between 500 and 20,000 draws.
func mcSamples(k int) int {
	return min(20000, max(500, 200_000_000/(k*k)))
}

func expectedErrors(g gamma.Gamma, actuals []gamma.Actual) ([]errorOut, error) {
	var out []errorOut
	for _, a := range actuals {
		// The seed is fixed: these are evaluations, not private releases,
		// and a fixed seed makes the table reproducible.
		est, err := gamma.ExpectedTVError(g, a, mcSamples(g.K()), 1)
		if err != nil {
			return nil, fmt.Errorf("expected error under %v: %w", a, err)
		}
		out = append(out, errorOut{Actual: a.String(), Mean: est.Mean, StdErr: est.StdErr, Exact: est.Exact, Samples: est.Samples})
	}
	return out, nil
}

// baselines returns the baselines at the same (m·eps, delta), each certified
// on its own: a baseline justified by composition need not fit this budget.
func baselines(ctx context.Context, p constraints.Params, prior gamma.Prior, actuals []gamma.Actual, workers, s int, rr gamma.Gamma, rrLabel string) ([]mechanismOut, error) {
	coeffs, err := prior.Coefficients(p.K)
	if err != nil {
		return nil, err
	}
	type cand struct {
		name, label string
		g           gamma.Gamma
		err         error
	}
	var cands []cand
	sub, err := gamma.Sub(p.K, s)
	cands = append(cands, cand{"sub", fmt.Sprintf("gamma_Sub: majority of %d subsampled teachers (Lemma 3.4.1)", s), sub, err})
	if p.Delta == 0 && p.TargetDelta == 0 {
		mf := int(math.Floor(p.M))
		d, err := gamma.DSub(p.K, mf)
		label := fmt.Sprintf("gamma_DSub: majority of %d subsampled teachers (Theorem 3.5.1)", min(2*mf-1, p.K))
		if 2*mf >= p.K+1 {
			label = "gamma_DSub: gamma = 1, m >= (K+1)/2 (Theorem 3.5.1)"
		}
		cands = append(cands, cand{"dsub", label, d, err})
	}
	cands = append(cands, cand{"rr", rrLabel, rr, nil})
	var out []mechanismOut
	for _, c := range cands {
		if c.err != nil {
			return nil, c.err
		}
		cert, err := gamma.Verify(ctx, p, c.g, workers, nil)
		if err != nil {
			return nil, fmt.Errorf("certify %s: %w", c.name, err)
		}
		errs, err := expectedErrors(c.g, actuals)
		if err != nil {
			return nil, err
		}
		out = append(out, mechanismOut{
			Name: c.name, Label: c.label, Gamma: c.g, Certificate: cert, Errors: errs,
			Objective: gamma.Utility(c.g, coeffs), SurrogateError: gamma.SurrogateError(c.g, coeffs),
		})
	}
	return out, nil
}

// rrBaseline returns randomized response's constant gamma = p_const of
// Lemma B.1.1, the majority of the K teachers being (tau·eps, lambda)-DP
// by the given composition.
func rrBaseline(p constraints.Params, m accountant.Method, deltaPrime float64) (gamma.Gamma, string, error) {
	tau, lambda, err := accountant.RRParams(accountant.Guarantee{Eps: p.Eps, Delta: p.Delta}, p.K, m, deltaPrime)
	if err != nil {
		return nil, "", fmt.Errorf("--rr-method %v: %w", m, err)
	}
	pc, err := accountant.PConst(p.Eps, p.M, p.TargetDelta, tau, lambda)
	if err != nil {
		return nil, "", err
	}
	g, err := gamma.Const(p.K, pc)
	label := fmt.Sprintf("RR: gamma = p_const = %.6g (Lemma B.1.1; the majority is (tau·eps, lambda)-DP with tau = %.6g, lambda = %.3g by %v composition)", pc, tau, lambda, m)
	return g, label, err
}

func writeSolveCSV(w io.Writer, out solveOut) error {
	header := []string{"l", "gamma_opt"}
	for _, m := range out.Compare {
		header = append(header, "gamma_"+m.Name)
	}
	rows := make([][]string, len(out.Gamma))
	for l, v := range out.Gamma {
		rows[l] = []string{fmt.Sprint(l), cliout.Float(v)}
		for _, m := range out.Compare {
			rows[l] = append(rows[l], cliout.Float(m.Gamma[l]))
		}
	}
	return cliout.WriteCSV(w, header, rows)
}

func writeSolveTable(w io.Writer, out solveOut) error {
	deltaNote := ""
	if out.DeltaDefault {
		deltaNote = " = 1-(1-Delta)^m, the default"
	}
	fmt.Fprintf(w, "DaRRM gamma_opt for K = %d teachers, each (eps = %g, Delta = %g)-DP;\n", out.K, out.Eps, out.Delta)
	fmt.Fprintf(w, "release (m·eps, delta)-DP with m = %g, m·eps = %.6g, delta = %.6g%s; prior %s\n\n", out.M, out.M*out.Eps, out.TargetDelta, deltaNote, out.Prior)
	header := []string{"l", "gamma_opt"}
	for _, m := range out.Compare {
		header = append(header, "gamma_"+m.Name)
	}
	rows := make([][]string, len(out.Gamma))
	for l, v := range out.Gamma {
		rows[l] = []string{fmt.Sprint(l), cliout.FloatN(v, 6)}
		for _, m := range out.Compare {
			rows[l] = append(rows[l], cliout.FloatN(m.Gamma[l], 6))
		}
	}
	if err := cliout.WriteTable(w, header, rows); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nobjective U(gamma) = %.6g   surrogate error = %.6g\n", out.Objective, out.SurrogateError)
	writeCertificate(w, "certificate", out.Certificate)
	if out.Cached {
		fmt.Fprintf(w, "from the cache (%s), solved originally in %.3g s\n", out.CacheFile, out.Solve.Seconds)
	} else {
		fmt.Fprintf(w, "solved in %.3g s: %d LP solves, %d privacy rows, %d exhaustive separation passes\n", out.Solve.Seconds, out.Solve.LPSolves, out.Solve.Rows, out.Solve.Passes)
	}
	if !out.Solve.TieBroken {
		fmt.Fprintln(w, "note: the LP solver failed on the tie-break phase; this is an optimal gamma, certified, but not the canonical one (docs/solve.md)")
	}
	if len(out.Compare) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nComparison at the same (m·eps, delta):")
	header = []string{"mechanism", "objective", "surrogate err"}
	for _, e := range out.Errors {
		header = append(header, "E err "+e.Actual)
	}
	header = append(header, "max f / budget", "certificate")
	mechs := append([]mechanismOut{{Name: "opt", Objective: out.Objective, SurrogateError: out.SurrogateError, Errors: out.Errors, Certificate: out.Certificate}}, out.Compare...)
	rows = nil
	for _, m := range mechs {
		row := []string{"gamma_" + m.Name, cliout.FloatN(m.Objective, 6), cliout.FloatN(m.SurrogateError, 6)}
		for _, e := range m.Errors {
			if e.Exact {
				row = append(row, cliout.FloatN(e.Mean, 4))
			} else {
				row = append(row, fmt.Sprintf("%.4g ± %.1g", e.Mean, e.StdErr))
			}
		}
		status := m.Certificate.Status.String()
		if m.Certificate.Status == gamma.Violated {
			status = "VIOLATED: not (m·eps, delta)-DP"
		}
		row = append(row, fmt.Sprintf("%.15g", m.Certificate.Ratio), status)
		rows = append(rows, row)
	}
	if err := cliout.WriteTable(w, header, rows); err != nil {
		return err
	}
	for _, m := range out.Compare {
		fmt.Fprintf(w, "  gamma_%s: %s\n", m.Name, m.Label)
	}
	return nil
}

// writeCertificate prints a certificate in words.
func writeCertificate(w io.Writer, title string, c gamma.Certificate) {
	verdict := map[gamma.Status]string{
		gamma.Certified: "CERTIFIED: max f + rounding bound <= budget",
		gamma.Tight:     "TIGHT: max f equals the budget to within rounding; not certified",
		gamma.Violated:  "VIOLATED: max f > budget, not (m·eps, delta)-DP",
	}[c.Status]
	fmt.Fprintf(w, "%s: %s\n", title, verdict)
	fmt.Fprintf(w, "  max f = %.15g, budget e^(m·eps) - 1 + 2·delta = %.15g, ratio %.15f, rounding bound %.2g\n", c.MaxF, c.Budget, c.Ratio, c.ErrBound)
	fmt.Fprintf(w, "  worst case: %s; %s corner multisets covered exhaustively\n", describeConfig(c), groupDigits(c.Configs.String()))
}

// describeConfig lists the corners the worst case puts teachers at.
func describeConfig(c gamma.Certificate) string {
	var parts []string
	for j, n := range c.Worst {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d × (%.6g, %.6g)", n, c.Corners[j].P, c.Corners[j].Q))
		}
	}
	return strings.Join(parts, " + ")
}

// groupDigits writes 31824 as 31,824.
func groupDigits(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
