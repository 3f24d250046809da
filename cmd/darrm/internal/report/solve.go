package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/peek"
	"github.com/darrm/darrm/internal/plural"
)

// Evaluation is what darrm reports of a noise function for a problem and
// a prior: its exhaustive certificate and its utility.
type Evaluation struct {
	Certificate    gamma.Certificate     `json:"certificate"`
	Utility        float64               `json:"objective"`
	SurrogateError float64               `json:"surrogate_error"`
	Errors         []gamma.ErrorEstimate `json:"expected_errors,omitempty"`
}

// Evaluated describes one noise function in solve's comparison with its
// evaluation.
type Evaluated struct {
	Name  string    `json:"name"`
	Label string    `json:"label"`
	Gamma []float64 `json:"gamma"`
	// Proof names the result that proves the baseline private at the
	// problem whatever its certificate says (gamma.Baseline.Proof): with
	// a certificate that is tight, the baseline is exactly at the budget.
	Proof string `json:"proof,omitempty"`
	Evaluation
}

// Compared describes the baselines bases with their evaluations evs, for
// Solve.Compare.
func Compared(bases []gamma.Baseline, evs []Evaluation) []Evaluated {
	ms := make([]Evaluated, len(bases))
	for i, b := range bases {
		ms[i] = Evaluated{Name: b.Name, Label: b.Label, Gamma: b.Gamma, Proof: b.Proof, Evaluation: evs[i]}
	}
	return ms
}

// Solve is the document darrm solve prints.
type Solve struct {
	Problem
	Prior string    `json:"prior"`
	Gamma []float64 `json:"gamma"`
	// Utility is U(gamma) (optimal.Result.Utility). Its JSON key is
	// "objective", the documented key of earlier versions, kept so that
	// scripts and saved outputs keep working.
	Utility float64 `json:"objective"`
	// UpperBound bounds every private gamma's utility; Gap is the
	// utility's relative distance below it; Scale is the factor
	// certification applied to the LP's solution. For a cached gamma,
	// UpperBound and Scale are as the cache entry stores them
	// (UpperBoundStored; no solve ran to compute them), while the
	// utility, the surrogate error and the gap are computed from the
	// gamma's values (optimal.Source.Load).
	UpperBound       float64           `json:"upper_bound"`
	UpperBoundStored bool              `json:"upper_bound_stored"`
	Gap              float64           `json:"gap"`
	Scale            float64           `json:"scale"`
	SurrogateError   float64           `json:"surrogate_error"`
	Certificate      gamma.Certificate `json:"certificate"`
	// CertifiedNow is true: the certificate is computed in this run from
	// the gamma's values, for a cached gamma too, never read from a file.
	CertifiedNow bool                  `json:"certified_in_this_run"`
	Seconds      float64               `json:"seconds"`
	Cached       bool                  `json:"cached"`
	CacheFile    string                `json:"cache_file,omitempty"`
	Solve        SolveStats            `json:"solve"`
	Errors       []gamma.ErrorEstimate `json:"expected_errors,omitempty"`
	Compare      []Evaluated           `json:"compare,omitempty"`
	// NotCompared names the baselines that Compare leaves out, each with
	// the reason.
	NotCompared []Omitted `json:"not_compared,omitempty"`
	// EqualTotals compares the same noise functions at equal totals, for
	// each number of queries (solve --budget-eps).
	EqualTotals []SolveEqual `json:"equal_totals,omitempty"`
}

// Omitted is a baseline left out of a comparison, and why.
type Omitted struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// SolveStats describe the computation that produced the gamma (the
// original one, for a cached gamma).
type SolveStats struct {
	Seconds  float64 `json:"seconds"`
	LPSolves int     `json:"lp_solves"`
	Rows     int     `json:"rows"`
	Passes   int     `json:"passes"`
	// TieBroken is true when gamma is the canonical gamma_opt
	// (optimal.Result.TieBroken); false when the tie-break did not finish
	// and gamma is the optimum the cutting-plane loop reached, equally
	// optimal and certified but dependent on the loop's path.
	TieBroken bool `json:"tie_broken"`
	// Stalled is true when the solve stopped closing its gap before its
	// tolerance (optimal.Result.Stalled): gamma is certified and within
	// the gap of the optimum, no closer.
	Stalled bool `json:"stalled"`
}

// NewSolve is the document of the gamma_opt that the cache entry e holds
// for problem p, certified in this run; cached says it was read from the
// cache rather than solved now.
func NewSolve(p Problem, e *cache.Entry, cached bool) Solve {
	return Solve{
		Problem: p, Prior: e.Prior, Gamma: e.Gamma, Utility: e.Utility, SurrogateError: e.SurrogateError,
		UpperBound: e.UpperBound, UpperBoundStored: cached, Gap: e.Gap, Scale: e.Scale,
		Certificate: e.Certificate, CertifiedNow: true, Cached: cached,
		Solve: SolveStats{Seconds: e.Seconds, LPSolves: e.LPSolves, Rows: e.Rows, Passes: e.Passes, TieBroken: e.TieBroken, Stalled: e.Stalled},
	}
}

// Mechanisms returns gamma_opt and the baselines, in that order.
func (out Solve) Mechanisms() []Evaluated {
	opt := Evaluated{Name: "opt", Gamma: out.Gamma, Evaluation: Evaluation{
		Utility: out.Utility, SurrogateError: out.SurrogateError, Errors: out.Errors, Certificate: out.Certificate}}
	return append([]Evaluated{opt}, out.Compare...)
}

// Certificates returns the certificates the document states, of
// gamma_opt and of each baseline, beside the gammas they are of: a
// caller that read the document from a file replaces them by ones it
// computes (gamma.Verify), so that what is drawn never shows a status the
// file merely claims.
func (out *Solve) Certificates() ([]gamma.Gamma, []*gamma.Certificate) {
	gs, certs := []gamma.Gamma{out.Gamma}, []*gamma.Certificate{&out.Certificate}
	for i := range out.Compare {
		gs, certs = append(gs, out.Compare[i].Gamma), append(certs, &out.Compare[i].Certificate)
	}
	return gs, certs
}

// CheckDrawable checks that out is a result of darrm solve --compare that
// can be drawn beside first, the result read from the file firstName: it
// states a gamma for its K and a comparison, of each baseline once, under
// the same actual distributions as first.
func (out *Solve) CheckDrawable(first *Solve, firstName string) error {
	switch {
	case len(out.Gamma) < 2 || out.K != len(out.Gamma)-1 || len(out.Compare) == 0:
		return errors.New("not the output of darrm solve --compare --format json")
	case !slices.EqualFunc(out.Errors, first.Errors, func(a, b gamma.ErrorEstimate) bool { return a.Actual == b.Actual }):
		return fmt.Errorf("its actual distributions differ from %s's: give every solve the same --actual", firstName)
	}
	// Each baseline compared is certified again and drawn, a line of the
	// figure, whose drawing checks no signal: a file that repeats one
	// 100,000 times took minutes to draw, and SIGTERM waited for it.
	for i, m := range out.Compare {
		if j := slices.IndexFunc(out.Compare[:i], func(e Evaluated) bool { return e.Name == m.Name }); j >= 0 {
			return fmt.Errorf("compared gamma %d is named %q, as gamma %d is: darrm solve --compare compares each baseline once", i+1, m.Name, j+1)
		}
	}
	return nil
}

// Rows are the numbers behind a figure of the document: per mechanism, the
// problem, the objective, the errors with their standard errors, and the
// certificate.
func (out Solve) Rows() []cliout.Record {
	var rows []cliout.Record
	for _, m := range out.Mechanisms() {
		ev := m.Evaluation
		r := cliout.Record{{Key: "K", Val: out.K}, {Key: "m", Val: out.M}, {Key: "eps", Val: out.Eps}, {Key: "Delta", Val: out.Delta},
			{Key: "delta", Val: out.TargetDelta}, {Key: "prior", Val: out.Prior}, {Key: "mechanism", Val: m.Name},
			{Key: "objective", Val: ev.Utility}, {Key: "surrogate_error", Val: ev.SurrogateError}}
		for _, e := range ev.Errors {
			// A Monte Carlo mean goes with its standard error, as solve
			// prints it.
			r = append(r, cliout.Field{Key: "error " + e.Actual, Val: e.Mean}, cliout.Field{Key: "stderr " + e.Actual, Val: e.StdErr})
		}
		rows = append(rows, append(r, cliout.Field{Key: "ratio", Val: ev.Certificate.Ratio}, cliout.Field{Key: "status", Val: ev.Certificate.Status.String()}))
	}
	return rows
}

// Write renders the document in format f. The CSV opens with a line "# "
// and the problem as a JSON object (the keys of the JSON document), as a
// label file opens with its header, then has the columns l, gamma_opt,
// gamma_<baseline>...: darrm verify reads the gamma back for the problem
// it was solved for (gamma.ReadTable).
func (out Solve) Write(w io.Writer, f cliout.Format) error {
	switch f {
	case cliout.JSON:
		return cliout.WriteJSON(w, out)
	case cliout.CSV:
		problem, err := json.Marshal(out.Problem)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "# %s\n", problem); err != nil {
			return err
		}
		header, rows := out.gammaColumns(cliout.Float)
		return cliout.WriteCSV(w, header, rows)
	}
	return out.writeTable(w)
}

// gammaColumns lays out the gammas as columns l, gamma_opt, gamma_<name>...
// with values formatted by fmtV.
func (out Solve) gammaColumns(fmtV func(float64) string) ([]string, [][]string) {
	ms := out.Mechanisms()
	var header []string
	for _, m := range ms {
		header = append(header, "gamma_"+m.Name)
	}
	header = append([]string{"l"}, header...)
	rows := make([][]string, len(out.Gamma))
	for l := range out.Gamma {
		rows[l] = []string{fmt.Sprint(l)}
		for _, m := range ms {
			rows[l] = append(rows[l], fmtV(m.Gamma[l]))
		}
	}
	return header, rows
}

// solveTableStart is how solve's table starts (IsSolveTable).
const solveTableStart = "DaRRM gamma_opt for "

// IsSolveTable reports whether line, a file's first, starts darrm solve's
// table, by which darrm tells it from a gamma it can certify: the table
// rounds gamma to six digits.
func IsSolveTable(line []byte) bool { return bytes.HasPrefix(line, []byte(solveTableStart)) }

// IsGammaFile reports whether start, the start of a file, is a gamma file as
// darrm writes one (gamma.ReadTable reads it): a JSON object with a gamma (darrm solve's or verify's),
// or solve's CSV, whose header row is l,gamma_opt[,gamma_sub,...].
func IsGammaFile(start []byte) bool {
	if slices.Contains(peek.Keys(start), "gamma") {
		return true
	}
	line, _, _ := bytes.Cut(start, []byte("\n"))
	fields := strings.Split(string(line), ",")
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	return len(fields) >= 2 && fields[0] == "l" && slices.ContainsFunc(fields[1:], func(f string) bool { return f == "gamma" || strings.HasPrefix(f, "gamma_") })
}

func (out Solve) writeTable(w io.Writer) error {
	t := cliout.NewText(w)
	t.Line("%s%s; prior %s", solveTableStart, out.Describe(), out.Prior)
	t.Line("")
	header, rows := out.gammaColumns(g6)
	t.Table(header, rows)
	t.Line("")
	t.Line("utility U(gamma) = %.6g   surrogate error = %.6g", out.Utility, out.SurrogateError)
	stored := ""
	if out.UpperBoundStored {
		stored = " (as stored in the cache entry; utility and gap computed now from the gamma)"
	}
	t.Line("optimality: no private gamma exceeds U = %.10g%s; gap %.2g; certification scaled the LP solution by %.15g", out.UpperBound, stored, out.Gap, out.Scale)
	writeCertificate(t, "certificate (computed in this run)", out.Certificate)
	if out.Cached {
		t.Line("from the cache (%s), solved originally in %.3g s", out.CacheFile, out.Solve.Seconds)
	} else {
		t.Line("solved in %.3g s: %s, %s, %s", out.Solve.Seconds, plural.Of(out.Solve.LPSolves, "LP solve", "LP solves"),
			plural.Of(out.Solve.Rows, "privacy row", "privacy rows"), plural.Of(out.Solve.Passes, "exhaustive separation pass", "exhaustive separation passes"))
	}
	if out.Solve.Stalled {
		t.Line("note: the solve stopped closing its gap at %.2g; this gamma is certified and within that gap", out.Gap)
		t.Line("  of the optimum, no closer; it is not cached (docs/solve.md, \"When the gap stops closing\")")
	}
	if !out.Solve.TieBroken {
		t.Line("note: this gamma is optimal (within the gap above) and certified, but the tie-break that picks the canonical one did not finish;")
		t.Line("  of the equally good gammas it is the one this run's solver reached, and another run may return another (docs/solve.md, \"The canonical gamma_opt\")")
	}
	if len(out.Compare) == 0 {
		return t.Close()
	}
	budget := "(m·eps, delta)"
	if out.Relation == accountant.OneVote {
		budget = "(eps, delta), in the one-vote relation"
	}
	t.Line("")
	t.Line("Comparison at the same %s:", budget)
	header = []string{"mechanism", "utility", "surrogate err"}
	for _, e := range out.Errors {
		header = append(header, "E err "+e.Actual)
	}
	header = append(header, "max f / budget", "certificate")
	rows = nil
	for _, m := range out.Mechanisms() {
		row := []string{"gamma_" + m.Name, g6(m.Utility), g6(m.SurrogateError)}
		for _, e := range m.Errors {
			row = append(row, errorCell(e))
		}
		row = append(row, fmt.Sprintf("%.15g", m.Certificate.Ratio), m.verdict())
		rows = append(rows, row)
	}
	t.Table(header, rows)
	for _, m := range out.Compare {
		t.Line("  gamma_%s: %s", m.Name, m.Label)
	}
	for _, o := range out.NotCompared {
		t.Line("  gamma_%s: not compared: %s", o.Name, o.Reason)
	}
	out.columnNotes(t)
	for _, e := range out.EqualTotals {
		e.write(t)
	}
	return t.Close()
}

// verdict is the certificate's status as the comparison shows it: a
// baseline whose certificate is tight but whose proof makes it private is
// exactly at the budget, by that proof, not "not certified".
func (m Evaluated) verdict() string {
	if m.Certificate.Status == gamma.Tight && m.Proof != "" {
		return "AT BUDGET: " + m.Proof
	}
	return Verdict(m.Certificate.Status)
}

// columnNotes explains each column of the comparison's table: what it
// measures, under what, and which way is better; the statuses that the
// certificate column shows; and why an expected error is 0 for every
// mechanism when the actual distribution is symmetric about 1/2.
func (out Solve) columnNotes(t *cliout.Text) {
	t.Line("  utility: U(gamma) = 2·Pr[release = 1] - 1 when each teacher votes 1 with its prior mean " +
		"(higher is better); surrogate err: the error of Definition 3.3.4 there (lower is better)")
	var drawn, fixed bool
	var zero []string
	for _, e := range out.Errors {
		drawn, fixed = drawn || !e.Exact, fixed || e.Exact
		if symmetricActual(e.Actual, out.K) {
			zero = append(zero, "E err "+e.Actual)
		}
	}
	if len(out.Errors) > 0 {
		how := []string{}
		if drawn {
			how = append(how, "under U(a,b) each p_i is uniform on [a, b], a Monte Carlo mean ± its standard error")
		}
		if fixed {
			how = append(how, "under numbers the p_i are those (one for all, or one each), exact")
		}
		t.Line("  E err A: the error |Pr[release = 1] - Pr[majority = 1]| (Definition 3.3.4) when teacher i "+
			"votes 1 with probability p_i, as --actual A gives them: %s", strings.Join(how, "; "))
	}
	if len(zero) > 0 {
		t.Line("  %s: 0 for every gamma, rightly: with the p_i symmetric about 1/2 the count of votes is "+
			"symmetric about K/2, so the majority and the release are both fair coins", strings.Join(zero, ", "))
	}
	budget := "e^(m·eps) - 1 + 2·delta (Lemma 3.4.4)"
	if out.Relation == accountant.OneVote {
		budget = "e^eps - 1 + 2·delta"
	}
	t.Line("  max f / budget: the certificate's largest privacy cost f over the budget %s; "+
		"at most 1 is private", budget)
	statuses := map[string]string{}
	for _, m := range out.Mechanisms() {
		switch c := m.Certificate; {
		case c.Status == gamma.Certified:
			statuses["certified"] = "CERTIFIED: max f plus the bound on its rounding is within the budget"
		case c.Status == gamma.Tight && m.Proof != "":
			statuses["at budget"] = "AT BUDGET: max f is the budget to within rounding, which float64 cannot tell " +
				"from just over it; the result named proves the baseline (m·eps, delta)-DP: private, " +
				"exactly at the budget (docs/solve.md, \"Certification\")"
		case c.Status == gamma.Tight:
			statuses["tight"] = "TIGHT: max f is the budget to within rounding, and no theorem settles it: not certified"
		default:
			statuses["violated"] = "VIOLATED: max f is over the budget beyond rounding: not private at this budget"
		}
	}
	for _, k := range []string{"certified", "at budget", "tight", "violated"} {
		if statuses[k] != "" {
			t.Line("  %s", statuses[k])
		}
	}
}

// symmetricActual reports whether the actual distribution named name
// fixes the K teachers' p_i to values symmetric about 1/2 (0.5 itself, or
// 0.2 with 0.8, ...): then every symmetric gamma's error is exactly 0.
func symmetricActual(name string, k int) bool {
	a, err := gamma.ParseActual(name)
	if err != nil || !a.Fixed() {
		return false
	}
	p, err := a.Sample(k, nil)
	if err != nil {
		return false
	}
	slices.Sort(p)
	for i := range p {
		if p[i]+p[len(p)-1-i] != 1 {
			return false
		}
	}
	return true
}
