package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/plural"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// released is what every summary of a release holds, whatever the
// mechanism and the number of classes. Like every summary of a release
// it holds no vote count and no un-noised label, only what the label
// file itself shows.
type released struct {
	Input        string                   `json:"input"`
	InputFormat  string                   `json:"input_format"`
	IDColumn     bool                     `json:"id_column"`
	Output       string                   `json:"output"`
	OutputFormat string                   `json:"output_format"`
	Mechanism    provenance.MechanismName `json:"mechanism"`
	// VotesHeader is the vote file's metadata header, nil without one.
	VotesHeader *votefile.Meta `json:"votes_header,omitempty"`
	PerQuery    PerQuery       `json:"per_query"`
	// Publish is the one total to publish; Totals, each a valid bound of
	// the release's labels, are analysis (TotalsRole says so).
	Publish    Publish            `json:"publish"`
	Totals     []accountant.Total `json:"totals"`
	TotalsRole string             `json:"totals_role"`
	// Cap is the teacher-level post-processing cap that bounds every
	// total, or nil, and CapNote says why there is none.
	Cap        *accountant.Cap `json:"cap,omitempty"`
	CapNote    string          `json:"cap_note,omitempty"`
	Budget     *Budget         `json:"budget,omitempty"`
	Ledger     *Ledger         `json:"ledger,omitempty"`
	Randomness Randomness      `json:"randomness"`
	ForRelease bool            `json:"for_release"`
	Seconds    float64         `json:"seconds"`
}

// Aggregate is the summary darrm aggregate prints after a release of
// two-class labels.
type Aggregate struct {
	released
	Header bool   `json:"header"`
	Label  string `json:"label"`
	Problem
	// EpsSource says where the teachers' eps and Delta came from: the
	// vote file's metadata header or the flags. TeachersDiffer says that
	// the header gives the teachers different guarantees, of which eps
	// and Delta are the common bound.
	EpsSource        provenance.EpsSource `json:"eps_source"`
	TeachersDiffer   bool                 `json:"teachers_differ"`
	Gamma            []float64            `json:"gamma"`
	Sigma            *float64             `json:"sigma,omitempty"`
	Answered         int                  `json:"queries_answered"`
	Unanswered       int                  `json:"queries_unanswered"`
	QueriesPerSecond float64              `json:"queries_per_second"`
	Certificate      *gamma.Certificate   `json:"certificate,omitempty"`
}

// AggregateMulti is the summary darrm aggregate prints after a release of
// multi-class labels (gnmax, confident-gnmax, lnmax).
type AggregateMulti struct {
	released
	Layout  string `json:"layout"`
	K       int    `json:"K"`
	Classes int    `json:"classes"`
	// Settings are the mechanism's: threshold, sigma1 and sigma2 for the
	// GNMax family (threshold, sigma1 with confident-gnmax),
	// laplace_scale for lnmax. Noise describes the noise in words.
	provenance.Settings
	Noise string `json:"noise"`
	// Queries counts the rows read; Released those written to the label
	// file and charged (answered or not), Answered those with a label,
	// NotAnswered those the threshold step withheld, StoppedByBudget
	// those after the budget's limit, read and checked but not released.
	Queries         int `json:"queries"`
	Released        int `json:"released"`
	Answered        int `json:"answered"`
	NotAnswered     int `json:"not_answered"`
	StoppedByBudget int `json:"stopped_by_budget"`
	// Abstained counts the votes not cast (class labels -1, and what
	// rows of counts fall short of a stated K by), when the votes were
	// read with abstentions allowed (nil otherwise, a setting, not the
	// votes, deciding): a function of the private votes, so listed in
	// NotForPublication.
	Abstained         *int64   `json:"votes_abstained,omitempty"`
	NotForPublication []string `json:"not_for_publication,omitempty"`
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

// Publish is the total of a release to publish: the ledger's when the
// release was charged to one (Source "ledger": every release from the
// ensemble so far, by the ledger's filter or the teachers' cap), else the
// tightest of the run's totals (Source "run"), with the method and the
// theorem that give it. Nil eps and delta: no label was released.
type Publish struct {
	Source    string   `json:"source"`
	Eps       *float64 `json:"eps"`
	Delta     *float64 `json:"delta"`
	Method    string   `json:"method"`
	Reference string   `json:"reference"`
}

// analysisRole labels the totals that are not the one to publish.
const analysisRole = "analysis: each total holds for these labels; publish the one under publish"

// newPublish returns the total to publish of a release with totals, the
// teachers' cap c (nil: none) and the ledger's status st (nil: no
// ledger).
func newPublish(totals []accountant.Total, c *accountant.Cap, st *ledger.Status) Publish {
	if st != nil {
		p := Publish{Source: "ledger", Eps: &st.Total.Eps, Delta: &st.Total.Delta, Method: st.Composition.String(), Reference: st.Composition.Reference()}
		if st.TotalBound == accountant.TeachersBound && st.Cap != nil {
			p.Method, p.Reference = "teachers' cap ("+st.Cap.Rule()+")", st.Cap.Reference()
		}
		return p
	}
	p := Publish{Source: "run"}
	var best *accountant.Total
	for i, t := range totals {
		if t.Err != nil && t.Bound != accountant.TeachersBound {
			continue
		}
		if best == nil || accountant.Tighter(t.Guarantee, best.Guarantee) {
			best = &totals[i]
		}
	}
	if best == nil {
		return p
	}
	p.Eps, p.Delta, p.Method, p.Reference = &best.Guarantee.Eps, &best.Guarantee.Delta, best.Name(), best.Reference()
	if best.Bound == accountant.TeachersBound && c != nil {
		p.Method, p.Reference = "teachers' cap ("+c.Rule()+")", c.Reference()
	}
	return p
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

// newBudget is the budget b of a release that left unanswered queries
// unanswered.
func newBudget(b *ensemble.Budget, unanswered int) *Budget {
	if b == nil {
		return nil
	}
	out := &Budget{Eps: b.Eps, Delta: b.Delta, Method: b.Method.String(), DeltaPrime: b.DeltaPrime, MaxQueries: b.MaxQueries, Stopped: unanswered > 0}
	if b.MaxQueries == accountant.Unlimited {
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
// NewSummary summarises it.
type Release struct {
	// Mechanism names the aggregator Aggregator, which Label describes.
	Mechanism  provenance.MechanismName
	Label      string
	Aggregator ensemble.Labeler
	// Problem and Teachers are the problem of a two-class release and
	// the teachers' guarantee it used.
	Problem  gamma.Resolved
	Teachers provenance.TeacherGuarantee
	// Input names the votes that Votes read; Output names where the sink
	// Sink wrote the labels.
	Input, Output string
	Votes         votefile.Reader
	Sink          ensemble.LabelSink
	Result        ensemble.ReleaseResult
	// Accounting is the release's privacy: its totals, cap and budget.
	Accounting ensemble.Accounting
	// Seed is the seed of a reproducible release, nil for crypto/rand.
	Seed *uint64
	// Ledger, if not nil, is the state after the release of the ledger at
	// LedgerPath that it was charged to (ensemble.Released.LedgerStatus).
	Ledger     *ledger.Status
	LedgerPath string
	Elapsed    time.Duration
}

// NewSummary is the summary of the release r: NewAggregateMulti for
// multi-class votes, NewAggregate otherwise.
func NewSummary(r Release) (Document, error) {
	if r.Votes.Input() == votefile.ManyClasses {
		return NewAggregateMulti(r)
	}
	return NewAggregate(r)
}

// newReleased is the common part of the summaries of r: the guarantee of
// each label, the totals of the labels answered under each composition
// with the teachers' cap, the budget, the ledger's state after the
// release.
func newReleased(r Release) (released, error) {
	a := r.Accounting
	priv := a.PerQuery
	out := released{
		Input: r.Input, InputFormat: r.Votes.Format().String(), IDColumn: r.Votes.HasID(),
		Output: r.Output, OutputFormat: r.Sink.Format.String(), Mechanism: r.Mechanism, VotesHeader: r.Votes.Meta(),
		PerQuery: PerQuery{Eps: priv.Eps, Delta: priv.Delta, Source: priv.Source, Relation: priv.Relation.String(), RelationText: priv.Relation.Describe()},
		Totals:   a.Totals(r.Result.Answered), TotalsRole: analysisRole, Cap: a.Cap, CapNote: a.CapNote, Budget: newBudget(a.Budget, r.Result.Unanswered),
		Randomness: Randomness{Source: "crypto/rand"}, ForRelease: r.Seed == nil, Seconds: r.Elapsed.Seconds(),
	}
	if r.Seed != nil {
		out.Randomness = Randomness{Source: "seeded ChaCha8 (math/rand/v2)", Seed: r.Seed, Note: NotForRelease}
	}
	if r.Ledger != nil {
		out.Ledger = &Ledger{Path: r.LedgerPath, Status: *r.Ledger}
	}
	var st *ledger.Status
	if out.Ledger != nil {
		st = &out.Ledger.Status
	}
	out.Publish = newPublish(out.Totals, a.Cap, st)
	return out, nil
}

// NewAggregate is the summary of the two-class release r.
func NewAggregate(r Release) (Aggregate, error) {
	common, err := newReleased(r)
	res := r.Result
	out := Aggregate{released: common, Header: r.Votes.HasHeader(), Label: r.Label, Problem: NewProblem(r.Problem),
		EpsSource: r.Teachers.Source, TeachersDiffer: r.Teachers.Heterogeneous,
		Answered: res.Answered, Unanswered: res.Unanswered, QueriesPerSecond: float64(res.Answered+res.Unanswered) / r.Elapsed.Seconds()}
	if agg, ok := r.Aggregator.(ensemble.Aggregator); ok {
		out.Gamma, out.Certificate = agg.Gamma(), agg.Privacy().Certificate
	}
	out.Sigma = r.Aggregator.Settings().Sigma2
	return out, err
}

// NewAggregateMulti is the summary of the multi-class release r, which
// adds the mechanism's settings and the queries withheld by a threshold
// step.
func NewAggregateMulti(r Release) (AggregateMulti, error) {
	common, err := newReleased(r)
	res := r.Result
	s := r.Aggregator.Settings()
	out := AggregateMulti{released: common, Layout: r.Votes.Layout().String(), K: r.Aggregator.K(), Classes: r.Aggregator.Classes(), Settings: s,
		Noise:   "discrete Gaussian N_Z(0, sigma^2), sampled exactly (Canonne, Kamath and Steinke 2020); ties broken uniformly",
		Queries: res.Answered + res.Unanswered, Released: res.Answered, Answered: res.Answered - res.Withheld, NotAnswered: res.Withheld, StoppedByBudget: res.Unanswered}
	if votefile.MayAbstain(r.Votes) {
		n := votefile.Abstained(r.Votes)
		out.Abstained, out.NotForPublication = &n, []string{"votes_abstained"}
	}
	if s.LaplaceScale != nil {
		out.Noise = "discrete Laplace of scale b, sampled exactly (Canonne, Kamath and Steinke 2020); ties broken uniformly"
	}
	return out, err
}

// Write renders the summary in format f.
func (out Aggregate) Write(w io.Writer, f cliout.Format) error {
	switch f {
	case cliout.JSON:
		return cliout.WriteJSON(w, out)
	case cliout.CSV:
		header := []string{"mechanism", "queries_answered", "queries_unanswered", "eps_per_query", "delta_per_query", "method", "delta_prime", "eps_total", "delta_total", "total_bound", "for_release", "role"}
		var rows [][]string
		for _, t := range out.Totals {
			rows = append(rows, append([]string{string(out.Mechanism), fmt.Sprint(out.Answered), fmt.Sprint(out.Unanswered),
				cliout.Float(out.PerQuery.Eps), cliout.Float(out.PerQuery.Delta)}, append(totalCells(t, cliout.Float), t.Bound.String(), fmt.Sprint(out.ForRelease), "analysis")...))
		}
		rows = append(rows, append([]string{string(out.Mechanism), fmt.Sprint(out.Answered), fmt.Sprint(out.Unanswered),
			cliout.Float(out.PerQuery.Eps), cliout.Float(out.PerQuery.Delta)}, append(out.Publish.cells(), out.Publish.Source, fmt.Sprint(out.ForRelease), "publish")...))
		return cliout.WriteCSV(w, header, rows)
	}
	out.writeNote(w)
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
	teachers := fmt.Sprintf("each (eps = %g, Delta = %g)-DP", out.Eps, out.Delta)
	if out.Relation == accountant.OneVote {
		teachers = "not necessarily private (one-vote relation)"
	}
	fmt.Fprintf(w, "votes: %s (%s), K = %d teachers, %s\n", out.Input, strings.Join(layout, ", "), out.K, teachers)
	fmt.Fprintf(w, "teachers: %s\n", out.describeTeachers())
	fmt.Fprintf(w, "labels: %s (%s)\n", out.Output, out.OutputFormat)
	fmt.Fprintf(w, "mechanism: %s\n", out.Label)
	fmt.Fprintf(w, "per query: %v: %s\n", accountant.Guarantee{Eps: out.PerQuery.Eps, Delta: out.PerQuery.Delta}, out.Describe())
	fmt.Fprintf(w, "  by %s\n", out.PerQuery.Source)
	fmt.Fprintf(w, "  neighbouring relation: %s\n", out.PerQuery.Relation)
	if c := out.Certificate; c != nil {
		what := "corner multisets"
		if c.Relation == accountant.OneVote {
			what = "pairs of neighbouring vote counts"
		}
		fmt.Fprintf(w, "  certificate: %v, max f / budget = %.15g, %s %s\n", c.Status, c.Ratio, groupDigits(c.Configs.String()), what)
	}
	fmt.Fprintf(w, "randomness: %s\n", out.Randomness.Source)
	answered := "answered: " + plural.Of(out.Answered, "query", "queries")
	if b := out.Budget; b != nil && b.Unlimited {
		answered += fmt.Sprintf(" (budget (%g, %g) allows every query: the teachers' cap is within it)", b.Eps, b.Delta)
	} else if b != nil {
		answered += fmt.Sprintf(" (budget (%g, %g) allows %d by the tightest composition valid for the run, %s for the per-query (eps, delta)", b.Eps, b.Delta, b.MaxQueries, b.Method)
		if b.Stopped {
			answered += "; STOPPED: " + plural.Of(out.Unanswered, "query", "queries") + " left unanswered"
		}
		answered += ")"
	}
	fmt.Fprintln(w, answered)
	if err := out.writeAccount(w, fmt.Sprintf("the %s released", plural.Of(out.Answered, "label", "labels")), "the smaller of the composition over the queries and the teachers' cap"); err != nil {
		return err
	}
	return out.writeTime(w, out.QueriesPerSecond)
}

// writeTime prints how long the release took, and its rate of queries
// per second when it took long enough for the rate to say something.
func (out released) writeTime(w io.Writer, rate float64) error {
	if out.Seconds < 1 || rate == 0 {
		_, err := fmt.Fprintf(w, "time: %.3g s\n", out.Seconds)
		return err
	}
	_, err := fmt.Fprintf(w, "time: %.3g s, %.3g queries/s\n", out.Seconds, rate)
	return err
}

// Write renders the summary in format f.
func (out AggregateMulti) Write(w io.Writer, f cliout.Format) error {
	switch f {
	case cliout.JSON:
		return cliout.WriteJSON(w, out)
	case cliout.CSV:
		header := []string{"mechanism", "released", "answered", "not_answered", "stopped_by_budget", "eps_per_query", "delta_per_query", "method", "delta_prime", "eps_total", "delta_total", "for_release", "role"}
		var rows [][]string
		lead := []string{string(out.Mechanism), fmt.Sprint(out.Released), fmt.Sprint(out.Answered), fmt.Sprint(out.NotAnswered), fmt.Sprint(out.StoppedByBudget),
			cliout.Float(out.PerQuery.Eps), cliout.Float(out.PerQuery.Delta)}
		for _, t := range out.Totals {
			rows = append(rows, append(append(lead[:len(lead):len(lead)], totalCells(t, cliout.Float)...), fmt.Sprint(out.ForRelease), "analysis"))
		}
		rows = append(rows, append(append(lead[:len(lead):len(lead)], out.Publish.cells()...), fmt.Sprint(out.ForRelease), "publish"))
		return cliout.WriteCSV(w, header, rows)
	}
	out.writeNote(w)
	desc := []string{strings.ToUpper(out.InputFormat), out.Layout}
	if out.VotesHeader != nil {
		desc = append(desc, "metadata header")
	}
	if out.IDColumn {
		desc = append(desc, "id column")
	}
	fmt.Fprintf(w, "votes: %s (%s), K = %d teachers, C = %d classes\n", out.Input, strings.Join(desc, ", "), out.K, out.Classes)
	if out.Abstained != nil {
		fmt.Fprintf(w, "  votes not cast (abstaining teachers): %d, computed from the votes: not for publication; the guarantee holds with abstentions (docs/pate.md, \"Abstaining teachers\")\n", *out.Abstained)
	}
	if m := out.VotesHeader; m != nil {
		fmt.Fprintf(w, "teachers: ensemble %s (%v, %v relation, partition %v); their own guarantee plays no part in the one-vote relation\n", m.Ensemble, m.Kind, m.Relation, m.Partition)
	}
	if out.Threshold != nil {
		fmt.Fprintf(w, "labels: %s (%s; a query the threshold step withheld has an empty label and answered 0)\n", out.Output, out.OutputFormat)
	} else {
		fmt.Fprintf(w, "labels: %s (%s)\n", out.Output, out.OutputFormat)
	}
	params := fmt.Sprintf("sigma2 = %g", deref(out.Sigma2))
	switch {
	case out.LaplaceScale != nil:
		params = fmt.Sprintf("b = %g", *out.LaplaceScale)
	case out.Threshold != nil:
		params = fmt.Sprintf("T = %g, sigma1 = %g, ", *out.Threshold, *out.Sigma1) + params
	}
	fmt.Fprintf(w, "mechanism: %s (%s), noise %s\n", out.Mechanism, params, out.Noise)
	fmt.Fprintf(w, "per released query: %v, charged whether or not it was answered\n", accountant.Guarantee{Eps: out.PerQuery.Eps, Delta: out.PerQuery.Delta})
	fmt.Fprintf(w, "  by %s\n", out.PerQuery.Source)
	fmt.Fprintf(w, "  neighbouring relation: %s\n", out.PerQuery.Relation)
	fmt.Fprintf(w, "randomness: %s\n", out.Randomness.Source)
	released := fmt.Sprintf("released: %d of %d queries, %d answered, %d withheld by the threshold step", out.Released, out.Queries, out.Answered, out.NotAnswered)
	if out.Threshold == nil {
		released = fmt.Sprintf("released: %d of %d queries, every one answered", out.Released, out.Queries)
	}
	if b := out.Budget; b != nil {
		released += fmt.Sprintf(" (budget (%g, %g) allows %d by the tightest composition valid for the run, %s for the per-query (eps, delta)", b.Eps, b.Delta, b.MaxQueries, b.Method)
		if b.Stopped {
			released += fmt.Sprintf("; STOPPED: %d queries not released", out.StoppedByBudget)
		}
		released += ")"
	}
	fmt.Fprintln(w, released)
	if err := out.writeAccount(w, fmt.Sprintf("the %d released queries", out.Released), "each a valid bound for them"); err != nil {
		return err
	}
	return out.writeTime(w, 0)
}

// writeNote prints the NOT FOR RELEASE note of a seeded release, with
// its seed: the one place a summary says it.
func (out released) writeNote(w io.Writer) {
	if r := out.Randomness; r.Note != "" {
		fmt.Fprintf(w, "*** seed %d: %s ***\n", *r.Seed, r.Note)
	}
}

// writeAccount prints the ledger's state, the teachers' cap and the
// table of totals of what (e.g. "the 5 labels released"), which how
// says more of.
func (out released) writeAccount(w io.Writer, what, how string) error {
	if l := out.Ledger; l != nil && l.TotalBound == accountant.TeachersBound {
		fmt.Fprintf(w, "ledger %s (ensemble %s): total spent %s, which is the teachers' cap (below the %s that %s composition of the spends gives); budget %v",
			cliout.Escape(l.Path), cliout.Escape(l.Ensemble), formatTotal(l.Total), formatTotal(l.Queries), l.Composition, l.Budget)
	} else if l != nil {
		fmt.Fprintf(w, "ledger %s (ensemble %s): total spent %s by the %s, budget %v",
			cliout.Escape(l.Path), cliout.Escape(l.Ensemble), formatTotal(l.Total), l.Composition, l.Budget)
	}
	if l := out.Ledger; l != nil && l.Free {
		fmt.Fprintf(w, "; every further release from these teachers is free: their cap %s is within the budget\n", formatTotal(l.Cap.Guarantee))
	} else if l != nil {
		fmt.Fprintf(w, "; %d more such queries allowed\n", l.QueriesLeft)
	}
	if c := out.Cap; c != nil {
		fmt.Fprintf(w, "teachers' cap: %s by %s: every release from these teachers, however many, is within it\n", formatTotal(c.Guarantee), c.Reference())
	} else if out.CapNote != "" {
		fmt.Fprintf(w, "teachers' cap: none: %s\n", out.CapNote)
	}
	if p := out.Publish; p.Eps != nil {
		whose := "this release's total"
		if p.Source == "ledger" {
			whose = "the ledger's total, every release charged to it so far"
		}
		fmt.Fprintf(w, "TO PUBLISH: %s, %s, by %s (%s)\n", formatTotal(accountant.Guarantee{Eps: *p.Eps, Delta: *p.Delta}), whose, p.Method, p.Reference)
	}
	if len(out.Totals) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nAnalysis (not for publication: publish the total above) — total privacy loss of %s (relation %s: %s), %s:\n", what, out.PerQuery.Relation, out.PerQuery.RelationText, how)
	var rows [][]string
	for _, t := range out.Totals {
		ref := t.Reference()
		if t.Err != nil {
			ref = t.Err.Error()
		}
		rows = append(rows, append(totalCells(t, accountant.FormatBound), t.Bound.String(), ref))
	}
	return cliout.WriteTable(w, []string{"composition", "delta'", "eps total", "delta total", "bound", "reference"}, rows)
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// cells formats the method, delta' ("-"), eps and delta of p.
func (p Publish) cells() []string {
	c := []string{p.Source + ": " + p.Method, "-", "-", "-"}
	if p.Eps != nil {
		c[2], c[3] = cliout.Float(*p.Eps), cliout.Float(*p.Delta)
	}
	return c
}

// totalCells formats a total's method, delta', eps and delta, with "-" for
// what it lacks.
func totalCells(t accountant.Total, f func(float64) string) []string {
	cells := []string{t.Name(), "-", "-", "-"}
	if t.Method.Slack() {
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
	if out.Relation == accountant.OneVote {
		// The one-vote relation's own problem: the teachers' guarantee
		// plays no part.
		s := "the vote file has no metadata header"
		if m != nil {
			s = fmt.Sprintf("ensemble %s (%v, %v relation, partition %v)", m.Ensemble, m.Kind, m.Relation, m.Partition)
		}
		return s + "; their own guarantee plays no part in the one-vote relation: the release's (eps, delta) from --target-eps and --delta"
	}
	if m == nil {
		return "(eps, Delta) from --eps and --Delta (the vote file has no metadata header)"
	}
	what := fmt.Sprintf("ensemble %s (%v, %v relation, partition %v)", m.Ensemble, m.Kind, m.Relation, m.Partition)
	if out.EpsSource == provenance.FromFlags {
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

// Stopped says, in its summary's words, how far a release that its
// budget stopped got, for the error it ends with; "" when the budget did
// not stop it. A row the threshold step withheld is released (and
// charged) but not answered.
func (r Release) Stopped() string {
	res := r.Result
	switch queries := plural.Of(res.Answered+res.Unanswered, "query", "queries"); {
	case res.Unanswered > 0 && res.Withheld > 0:
		return fmt.Sprintf("released %d of %s (%d answered, %d withheld by the threshold step), %d not released; %s holds the %d released",
			res.Answered, queries, res.Answered-res.Withheld, res.Withheld, res.Unanswered, r.Output, res.Answered)
	case res.Unanswered > 0:
		return fmt.Sprintf("answered %d of %s, %d left unanswered; %s holds the %d answered", res.Answered, queries, res.Unanswered, r.Output, res.Answered)
	}
	return ""
}
