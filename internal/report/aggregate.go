package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/plural"
	"github.com/darrm/darrm/ledger"
)

// Aggregate is the summary darrm aggregate prints after a release.
type Aggregate struct {
	Input        string `json:"input"`
	InputFormat  string `json:"input_format"`
	Header       bool   `json:"header"`
	IDColumn     bool   `json:"id_column"`
	Output       string `json:"output"`
	OutputFormat string `json:"output_format"`
	Mechanism    string `json:"mechanism"`
	Label        string `json:"label"`
	Problem
	// EpsSource says where the teachers' eps and Delta came from: the
	// vote file's metadata header or the flags. TeachersDiffer says that
	// the header gives the teachers different guarantees, of which eps
	// and Delta are the common bound. VotesHeader is the header.
	EpsSource      ensemble.EpsSource `json:"eps_source"`
	TeachersDiffer bool               `json:"teachers_differ"`
	VotesHeader    *ensemble.VoteMeta `json:"votes_header,omitempty"`
	PerQuery       PerQuery           `json:"per_query"`
	Gamma          []float64          `json:"gamma"`
	Sigma          *float64           `json:"sigma,omitempty"`
	Answered       int                `json:"queries_answered"`
	Unanswered     int                `json:"queries_unanswered"`
	Totals         []accountant.Total `json:"totals"`
	// Cap is the teacher-level post-processing cap that bounds every
	// total, or nil, and CapNote says why there is none.
	Cap              *accountant.Cap    `json:"cap,omitempty"`
	CapNote          string             `json:"cap_note,omitempty"`
	Budget           *Budget            `json:"budget,omitempty"`
	Ledger           *Ledger            `json:"ledger,omitempty"`
	Randomness       Randomness         `json:"randomness"`
	ForRelease       bool               `json:"for_release"`
	Seconds          float64            `json:"seconds"`
	QueriesPerSecond float64            `json:"queries_per_second"`
	Certificate      *gamma.Certificate `json:"certificate,omitempty"`
}

// PerQuery is the guarantee of one released label and what proves it.
type PerQuery struct {
	Eps    float64 `json:"eps"`
	Delta  float64 `json:"delta"`
	Source string  `json:"source"`
	// Relation names the neighbouring relation of the guarantee and of
	// the totals; RelationText says it in words.
	Relation     string `json:"relation"`
	RelationText string `json:"relation_text"`
}

// Budget is a total budget that limits a release.
type Budget struct {
	Eps        float64 `json:"eps"`
	Delta      float64 `json:"delta"`
	Method     string  `json:"method"`
	DeltaPrime float64 `json:"delta_prime"`
	// MaxQueries is the number of queries the budget allows, -1 when the
	// teachers' cap is within it (Unlimited); TotalBound says which
	// bound decided.
	MaxQueries int              `json:"max_queries"`
	Unlimited  bool             `json:"unlimited"`
	TotalBound accountant.Bound `json:"total_bound"`
	Stopped    bool             `json:"stopped"`
}

// NewBudget is the budget b under composition m with slack deltaPrime,
// which allows limit queries (accountant.MaxStepsCapped: Unlimited when
// the teachers' cap is within it).
func NewBudget(b accountant.Guarantee, m accountant.Method, deltaPrime float64, limit int) *Budget {
	out := &Budget{Eps: b.Eps, Delta: b.Delta, Method: m.String(), DeltaPrime: deltaPrime, MaxQueries: limit}
	if limit == accountant.Unlimited {
		out.Unlimited, out.TotalBound = true, accountant.TeachersBound
	}
	return out
}

// Ledger is the state of the privacy ledger a release was charged to,
// after it.
type Ledger struct {
	Path string `json:"path"`
	ledger.Status
}

// Randomness says where the noise of a release came from.
type Randomness struct {
	Source string  `json:"source"`
	Seed   *uint64 `json:"seed,omitempty"`
	Note   string  `json:"note,omitempty"`
}

// NotForRelease is what every output of a seeded release says.
const NotForRelease = "NOT FOR RELEASE: --seed makes the noise reproducible, so anyone who knows the seed can remove it"

// Release is a release of private labels (ensemble.ReleaseTo), as
// NewAggregate summarises it.
type Release struct {
	Problem gamma.Problem
	// Mechanism names the aggregator Aggregator, which Label describes.
	Mechanism, Label string
	Aggregator       ensemble.Aggregator
	// Input names the votes that Votes read; Output names where the sink
	// Sink wrote the labels.
	Input, Output string
	Votes         *ensemble.VoteReader
	// Teachers is the teachers' guarantee the release used.
	Teachers ensemble.TeacherGuarantee
	Sink     ensemble.LabelSink
	Result   ensemble.ReleaseResult
	// Budget is the budget that limited the release, if any; DeltaPrime
	// the slack of the totals' general and optimal composition.
	Budget     *Budget
	DeltaPrime float64
	// Cap is the teachers' cap on every total (ensemble.Binding.Cap), nil
	// with CapNote saying why there is none.
	Cap     *accountant.Cap
	CapNote string
	// Seed is the seed of a reproducible release, nil for crypto/rand.
	Seed *uint64
	// Ledger, if not nil, is the ledger at LedgerPath the release was
	// charged to.
	Ledger     *ledger.Ledger
	LedgerPath string
	Elapsed    time.Duration
}

// NewAggregate is the summary of the release r: the guarantee of each
// label, the total of the labels answered under each composition
// (accountant.Totals), whether the budget stopped the release, and the
// ledger's state after it.
func NewAggregate(r Release) (Aggregate, error) {
	priv := r.Aggregator.Privacy()
	res := r.Result
	out := Aggregate{
		Input: r.Input, InputFormat: r.Votes.Format().String(), Header: r.Votes.HasHeader(), IDColumn: r.Votes.HasID(),
		Output: r.Output, OutputFormat: r.Sink.Format.String(), Mechanism: r.Mechanism, Label: r.Label,
		Problem:   NewProblem(r.Problem),
		EpsSource: r.Teachers.Source, TeachersDiffer: r.Teachers.Heterogeneous, VotesHeader: r.Votes.Meta(),
		PerQuery: PerQuery{Eps: priv.Eps, Delta: priv.Delta, Source: priv.Source, Relation: priv.Relation.String(), RelationText: priv.Relation.Describe()},
		Gamma:    r.Aggregator.Gamma(), Certificate: priv.Certificate,
		Answered: res.Answered, Unanswered: res.Unanswered,
		Budget:     r.Budget,
		Randomness: Randomness{Source: "crypto/rand"}, ForRelease: r.Seed == nil,
		Seconds: r.Elapsed.Seconds(), QueriesPerSecond: float64(res.Answered+res.Unanswered) / r.Elapsed.Seconds(),
	}
	if r.Seed != nil {
		out.Randomness = Randomness{Source: "seeded ChaCha8 (math/rand/v2)", Seed: r.Seed, Note: NotForRelease}
	}
	out.Cap, out.CapNote = r.Cap, r.CapNote
	if res.Answered > 0 {
		out.Totals = accountant.Totals(priv.Guarantee, res.Answered, r.DeltaPrime)
		var budget *accountant.Guarantee
		if r.Budget != nil {
			budget = &accountant.Guarantee{Eps: r.Budget.Eps, Delta: r.Budget.Delta}
		}
		for i := range out.Totals {
			out.Totals[i] = out.Totals[i].Capped(r.Cap, budget)
		}
	}
	if g, ok := r.Aggregator.(*ensemble.GNMax); ok {
		sigma, _ := g.Sigma()
		out.Sigma = &sigma
	}
	if out.Budget != nil {
		out.Budget.Stopped = res.Unanswered > 0
	}
	if r.Ledger != nil {
		st, err := r.Ledger.Status(priv.Guarantee)
		if err != nil {
			return out, err
		}
		out.Ledger = &Ledger{Path: r.LedgerPath, Status: st}
	}
	return out, nil
}

// Write renders the summary in format f.
func (out Aggregate) Write(w io.Writer, f cliout.Format) error {
	switch f {
	case cliout.JSON:
		return cliout.WriteJSON(w, out)
	case cliout.CSV:
		header := []string{"mechanism", "queries_answered", "queries_unanswered", "eps_per_query", "delta_per_query", "method", "delta_prime", "eps_total", "delta_total", "total_bound", "for_release"}
		var rows [][]string
		for _, t := range out.Totals {
			rows = append(rows, append([]string{out.Mechanism, fmt.Sprint(out.Answered), fmt.Sprint(out.Unanswered),
				cliout.Float(out.PerQuery.Eps), cliout.Float(out.PerQuery.Delta)}, append(totalCells(t, cliout.Float), t.Bound.String(), fmt.Sprint(out.ForRelease))...))
		}
		return cliout.WriteCSV(w, header, rows)
	}
	if out.Randomness.Note != "" {
		fmt.Fprintf(w, "*** %s ***\n", out.Randomness.Note)
	}
	layout := []string{strings.ToUpper(out.InputFormat)}
	if out.VotesHeader != nil {
		layout = append(layout, "metadata header")
	}
	if out.Header {
		layout = append(layout, "header")
	}
	if out.IDColumn {
		layout = append(layout, "id column")
	}
	fmt.Fprintf(w, "votes: %s (%s), K = %d teachers, each (eps = %g, Delta = %g)-DP\n", out.Input, strings.Join(layout, ", "), out.K, out.Eps, out.Delta)
	fmt.Fprintf(w, "teachers: %s\n", out.describeTeachers())
	fmt.Fprintf(w, "labels: %s (%s)\n", out.Output, out.OutputFormat)
	fmt.Fprintf(w, "mechanism: %s\n", out.Label)
	fmt.Fprintf(w, "per query: (%.6g, %.6g)-DP: %s\n", out.PerQuery.Eps, out.PerQuery.Delta, out.Describe())
	fmt.Fprintf(w, "  by %s\n", out.PerQuery.Source)
	fmt.Fprintf(w, "  neighbouring relation: %s\n", out.PerQuery.Relation)
	if c := out.Certificate; c != nil {
		fmt.Fprintf(w, "  certificate: %v, max f / budget = %.15g, %s corner multisets\n", c.Status, c.Ratio, groupDigits(c.Configs.String()))
	}
	fmt.Fprintf(w, "randomness: %s\n", out.Randomness.Source)
	answered := "answered: " + plural.Of(out.Answered, "query", "queries")
	if b := out.Budget; b != nil && b.Unlimited {
		answered += fmt.Sprintf(" (budget (%g, %g) allows every query: the teachers' cap is within it)", b.Eps, b.Delta)
	} else if b != nil {
		answered += fmt.Sprintf(" (budget (%g, %g) under %s composition allows %d", b.Eps, b.Delta, b.Method, b.MaxQueries)
		if b.Stopped {
			answered += "; STOPPED: " + plural.Of(out.Unanswered, "query", "queries") + " left unanswered"
		}
		answered += ")"
	}
	fmt.Fprintln(w, answered)
	if l := out.Ledger; l != nil && l.TotalBound == accountant.TeachersBound {
		fmt.Fprintf(w, "ledger %s (ensemble %s): total spent %s, the teachers' cap (by %s composition of the spends: %s), budget %v",
			cliout.Escape(l.Path), cliout.Escape(l.Ensemble), formatTotal(l.Total), l.Composition, formatTotal(l.Queries), l.Budget)
	} else if l != nil {
		fmt.Fprintf(w, "ledger %s (ensemble %s): total spent %s by %s composition, budget %v",
			cliout.Escape(l.Path), cliout.Escape(l.Ensemble), formatTotal(l.Total), l.Composition, l.Budget)
	}
	if l := out.Ledger; l != nil && l.Free {
		fmt.Fprintf(w, "; every further release from these teachers is free: their cap %s is within the budget\n", formatTotal(l.Cap.Guarantee))
	} else if l != nil {
		fmt.Fprintf(w, "; %d more such queries allowed\n", l.QueriesLeft)
	}
	if c := out.Cap; c != nil {
		fmt.Fprintf(w, "teachers' cap: (%.6g, %.6g)-DP by %s: every release from these teachers, however many, is within it\n", c.Eps, c.Delta, c.Reference())
	} else if out.CapNote != "" {
		fmt.Fprintf(w, "teachers' cap: none: %s\n", out.CapNote)
	}
	if len(out.Totals) > 0 {
		fmt.Fprintf(w, "\nTotal privacy loss of the %s released (relation %s: %s), the smaller of the composition over the queries and the teachers' cap:\n", plural.Of(out.Answered, "label", "labels"), out.PerQuery.Relation, out.PerQuery.RelationText)
		var rows [][]string
		for _, t := range out.Totals {
			ref := t.Method.Reference()
			if t.Err != nil {
				ref = t.Err.Error()
			}
			rows = append(rows, append(totalCells(t, g6), t.Bound.String(), ref))
		}
		if err := cliout.WriteTable(w, []string{"composition", "delta'", "eps total", "delta total", "bound", "reference"}, rows); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "time: %.3g s, %.3g queries/s\n", out.Seconds, out.QueriesPerSecond)
	return err
}

// totalCells formats a total's method, delta', eps and delta, with "-" for
// what it lacks.
func totalCells(t accountant.Total, f func(float64) string) []string {
	cells := []string{t.Method.String(), "-", "-", "-"}
	if t.Method != accountant.Simple {
		cells[1] = f(t.DeltaPrime)
	}
	if t.Err == nil || t.Bound == accountant.TeachersBound {
		cells[2], cells[3] = f(t.Guarantee.Eps), f(t.Guarantee.Delta)
	}
	return cells
}

// describeTeachers says where the teachers' guarantee came from.
func (out Aggregate) describeTeachers() string {
	m := out.VotesHeader
	if m == nil {
		return "(eps, Delta) from --eps and --Delta (the vote file has no metadata header)"
	}
	what := fmt.Sprintf("ensemble %s (%v, %v relation, partition %v)", m.Ensemble, m.Kind, m.Relation, m.Partition)
	if out.EpsSource == ensemble.FromFlags {
		return fmt.Sprintf("%s, non-private (no guarantee in the header): the release is calibrated to (eps, Delta) from --eps and --Delta", what)
	}
	var groups []string
	for _, g := range m.Teachers {
		groups = append(groups, fmt.Sprintf("%d × %s", g.Count, TeacherGuarantee(g)))
	}
	s := fmt.Sprintf("(eps, Delta) from the metadata header: %s; %s", what, strings.Join(groups, "; "))
	if out.TeachersDiffer {
		s += "; the guarantees differ, so the release uses their common bound (the largest eps and the largest Delta)"
	}
	return s
}
