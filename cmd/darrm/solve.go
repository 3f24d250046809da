package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/figure"
)

func init() { subcommands = append(subcommands, newSolveCmd) }

type solveFlags struct {
	problem  problemFlags
	cache    cacheFlags
	format   formatFlag
	workers  workersFlag
	prior    string
	compare  bool
	actual   []string
	plot     string
	highsLog bool
	rrComp   string
	rrDelta  float64
	subSize  int
}

func newSolveCmd() *cobra.Command {
	var f solveFlags
	cmd := &cobra.Command{
		Use:   "solve --K K [--m m] [flags]",
		Short: "Compute, certify and cache the optimal noise function gamma",
		Long: `solve computes gamma_opt, the DaRRM noise function that maximises utility
under a prior subject to (m·eps, delta)-DP (thesis Section 3.6), by linear
programming with cutting planes. The returned gamma is certified: the privacy
cost is maximised exactly over every corner multiset of the teachers'
feasible regions (Lemma 3.6.1) and is below the budget e^{m·eps} - 1 + 2·delta
with a margin covering floating-point error. Results are cached.

--compare adds the baselines at the same (m·eps, delta): gamma_Sub (majority of
--sub-size subsampled teachers, Lemma 3.4.1), gamma_DSub (2m-1 subsampled
teachers, Theorem 3.5.1, when Delta = delta = 0) and randomized response with
p_const of Lemma B.1.1, each with its own certificate, and true expected
errors under actual distributions of the teachers' probabilities.

Earlier spellings --rr-method is still accepted.`,
		Example: `  darrm solve --K 11 --m 3
  darrm solve --K 11 --m 3 --compare --plot gamma.png
  darrm solve --K 101 --m 10 --Delta 0 --format json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runSolve(cmd, &f) },
	}
	f.problem.add(cmd)
	f.cache.add(cmd)
	f.format.add(cmd)
	f.workers.add(cmd)
	fs := cmd.Flags()
	flagPrior.add(fs, &f.prior)
	flagPlot.add(fs, &f.plot)
	flagRRComposition.add(fs, &f.rrComp)
	flagRRDeltaPrime.add(fs, &f.rrDelta)
	fs.BoolVar(&f.compare, "compare", false, "also compute and certify the baselines gamma_Sub, gamma_DSub and RR")
	fs.StringSliceVar(&f.actual, "actual", []string{"U(0,1)", "0.5", "U(0,0.1)"}, "with --compare: actual distributions of the p_i for the true expected error: U(a,b), a probability, or K probabilities")
	fs.BoolVar(&f.highsLog, "highs-log", false, "show HiGHS's solver log")
	fs.IntVar(&f.subSize, "sub-size", 0, "with --compare: teachers subsampled by gamma_Sub (default floor(m); App. B.4 subsamples M with m from general composition)")
	aliases(cmd, map[string]string{"rr-method": "rr-composition"})
	return cmd
}

// mechanismOut describes one noise function in solve's output.
type mechanismOut struct {
	Name  string    `json:"name"`
	Label string    `json:"label"`
	Gamma []float64 `json:"gamma"`
	gamma.Evaluation
}

// solveOut is the JSON document solve prints; its fields are stable.
type solveOut struct {
	problemOut
	Prior          string                `json:"prior"`
	Gamma          []float64             `json:"gamma"`
	Objective      float64               `json:"objective"`
	SurrogateError float64               `json:"surrogate_error"`
	Certificate    gamma.Certificate     `json:"certificate"`
	Seconds        float64               `json:"seconds"`
	Cached         bool                  `json:"cached"`
	CacheFile      string                `json:"cache_file,omitempty"`
	Solve          solveStats            `json:"solve"`
	Errors         []gamma.ErrorEstimate `json:"expected_errors,omitempty"`
	Compare        []mechanismOut        `json:"compare,omitempty"`
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
	p, err := f.problem.params(cmd)
	if err != nil {
		return err
	}
	format, err := f.format.parse()
	if err != nil {
		return err
	}
	workers, err := f.workers.get()
	if err != nil {
		return err
	}
	prior, err := gamma.ParsePrior(f.prior)
	if err == nil {
		_, err = prior.Coefficients(p.K)
	}
	if err != nil {
		return usageErrorf("--prior: %v", err)
	}
	var actuals []gamma.Actual
	var bases []gamma.Baseline
	if f.compare {
		if actuals, bases, err = f.baselines(cmd, p); err != nil {
			return err
		}
	}
	if f.plot != "" {
		if err := figure.CheckPath(f.plot); err != nil {
			return &usageError{err}
		}
	}
	dir, err := f.cache.open()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	e, cached, err := solveGamma(ctx, cmd, p.Params, prior, dir, workers, f.highsLog)
	if err != nil {
		return err
	}
	out := solveOut{
		problemOut: p.out(),
		Prior:      prior.String(), Gamma: e.Gamma, Objective: e.Utility, SurrogateError: e.SurrogateError,
		Certificate: e.Certificate, Cached: cached,
		Solve: solveStats{Seconds: e.Seconds, LPSolves: e.LPSolves, Rows: e.Rows, Passes: e.Passes, TieBroken: e.TieBroken},
	}
	if dir != nil {
		out.CacheFile = dir.Path(cache.Key{Params: p.Params, Prior: prior.String()})
	}
	if f.compare {
		if out.Errors, err = gamma.ExpectedErrors(e.Gamma, actuals); err != nil {
			return err
		}
		coeffs, _ := prior.Coefficients(p.K)
		for _, b := range bases {
			ev, err := gamma.Evaluate(ctx, p.Params, b.Gamma, coeffs, actuals, workers)
			if err != nil {
				return fmt.Errorf("certify %s: %w", b.Name, err)
			}
			out.Compare = append(out.Compare, mechanismOut{Name: b.Name, Label: b.Label, Gamma: b.Gamma, Evaluation: ev})
		}
	}
	out.Seconds = time.Since(start).Seconds()
	if f.plot != "" {
		if err := figure.WriteGammas(f.plot, "", []figure.Setting{out.setting()}, 1, false); err != nil {
			return err
		}
	}
	w := cmd.OutOrStdout()
	switch format {
	case cliout.JSON:
		return cliout.WriteJSON(w, out)
	case cliout.CSV:
		header, rows := gammaColumns(out, cliout.Float)
		return cliout.WriteCSV(w, header, rows)
	}
	return writeSolveTable(w, out)
}

// mechanisms returns gamma_opt and the baselines of out, in that order.
func (out solveOut) mechanisms() []mechanismOut {
	opt := mechanismOut{Name: "opt", Gamma: out.Gamma, Evaluation: gamma.Evaluation{
		Utility: out.Objective, SurrogateError: out.SurrogateError, Errors: out.Errors, Certificate: out.Certificate}}
	return append([]mechanismOut{opt}, out.Compare...)
}

// setting is out as a column of a gamma figure.
func (out solveOut) setting() figure.Setting {
	s := figure.Setting{K: out.K, M: out.M, Eps: out.Eps, Delta: out.Delta, TargetDelta: out.TargetDelta}
	for _, m := range out.mechanisms() {
		s.Mechanisms = append(s.Mechanisms, figure.Mechanism{Name: m.Name, Prior: out.Prior, Gamma: m.Gamma, Status: m.Certificate.Status, Errors: m.Errors})
	}
	return s
}

// baselines parses the flags of --compare and builds the baselines.
func (f *solveFlags) baselines(cmd *cobra.Command, p problem) ([]gamma.Actual, []gamma.Baseline, error) {
	var actuals []gamma.Actual
	for _, s := range f.actual {
		a, err := gamma.ParseActual(s)
		if err != nil {
			return nil, nil, usageErrorf("--actual: %v", err)
		}
		actuals = append(actuals, a)
	}
	s := gamma.SubSize(p.M)
	if cmd.Flags().Changed("sub-size") {
		if f.subSize < 1 || f.subSize > p.K {
			return nil, nil, usageErrorf("--sub-size = %d: must be in [1, K] = [1, %d]", f.subSize, p.K)
		}
		s = f.subSize
	}
	sub, err := gamma.SubBaseline(p.K, s)
	if err != nil {
		return nil, nil, &usageError{err}
	}
	bases := []gamma.Baseline{sub}
	if p.Delta == 0 && p.TargetDelta == 0 {
		d, err := gamma.DSubBaseline(p.K, p.M)
		if err != nil {
			return nil, nil, &usageError{err}
		}
		bases = append(bases, d)
	}
	comp, err := rrComposition(f.rrComp, p.Delta)
	if err != nil {
		return nil, nil, err
	}
	rr, err := gamma.RRBaseline(p.Params, comp, f.rrDelta)
	if err != nil {
		return nil, nil, usageErrorf("RR with --rr-composition %v: %v", comp, err)
	}
	return actuals, append(bases, rr), nil
}

// gammaColumns lays out the gammas as columns l, gamma_opt, gamma_<name>...
// with values formatted by fmtV: solve's CSV, which verify reads back.
func gammaColumns(out solveOut, fmtV func(float64) string) ([]string, [][]string) {
	header := []string{"l", "gamma_opt"}
	for _, m := range out.Compare {
		header = append(header, "gamma_"+m.Name)
	}
	rows := make([][]string, len(out.Gamma))
	for l, v := range out.Gamma {
		rows[l] = []string{fmt.Sprint(l), fmtV(v)}
		for _, m := range out.Compare {
			rows[l] = append(rows[l], fmtV(m.Gamma[l]))
		}
	}
	return header, rows
}

func writeSolveTable(w io.Writer, out solveOut) error {
	fmt.Fprintf(w, "DaRRM gamma_opt for %s; prior %s\n\n", out.describe(), out.Prior)
	header, rows := gammaColumns(out, func(v float64) string { return cliout.FloatN(v, 6) })
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
	rows = nil
	for _, m := range out.mechanisms() {
		row := []string{"gamma_" + m.Name, cliout.FloatN(m.Utility, 6), cliout.FloatN(m.SurrogateError, 6)}
		for _, e := range m.Errors {
			if e.Exact {
				row = append(row, cliout.FloatN(e.Mean, 4))
			} else {
				row = append(row, fmt.Sprintf("%.4g ± %.1g", e.Mean, e.StdErr))
			}
		}
		row = append(row, fmt.Sprintf("%.15g", m.Certificate.Ratio), verdict(m.Certificate.Status))
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

// verdict is a certificate's status in capitals, as tables show it.
func verdict(s gamma.Status) string {
	switch s {
	case gamma.Certified:
		return "CERTIFIED"
	case gamma.Tight:
		return "TIGHT: not certified"
	}
	return "VIOLATED: not (m·eps, delta)-DP"
}

// writeCertificate prints a certificate in words.
func writeCertificate(w io.Writer, title string, c gamma.Certificate) {
	why := map[gamma.Status]string{
		gamma.Certified: "max f + rounding bound <= budget",
		gamma.Tight:     "max f equals the budget to within rounding",
		gamma.Violated:  "max f > budget",
	}[c.Status]
	fmt.Fprintf(w, "%s: %s: %s\n", title, verdict(c.Status), why)
	fmt.Fprintf(w, "  max f = %.15g, budget e^(m·eps) - 1 + 2·delta = %.15g, ratio %.15f, rounding bound %.2g\n", c.MaxF, c.Budget, c.Ratio, c.ErrBound)
	var parts []string
	for j, n := range c.Worst {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d × (%.6g, %.6g)", n, c.Corners[j].P, c.Corners[j].Q))
		}
	}
	fmt.Fprintf(w, "  worst case: %s; %s corner multisets covered exhaustively\n", strings.Join(parts, " + "), groupDigits(c.Configs.String()))
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
