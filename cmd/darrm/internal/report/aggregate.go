package report

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/resolve"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/internal/decimal"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/plural"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// Aggregate is the summary darrm aggregate prints after a release: one
// schema for every mechanism and number of classes (docs/aggregate.md,
// "JSON summary"), each key there whatever the release, null when it does
// not apply to it. It holds no vote count and no un-noised label, only
// what the label file itself shows.
type Aggregate struct {
	Input        string                   `json:"input"`
	InputFormat  string                   `json:"input_format"`
	IDColumn     bool                     `json:"id_column"`
	Output       string                   `json:"output"`
	OutputFormat string                   `json:"output_format"`
	Mechanism    provenance.MechanismName `json:"mechanism"`
	// VotesHeader is the vote file's metadata header, nil without one;
	// VotesHeaderFile the sidecar it was read from, nil when it is in the
	// vote file.
	VotesHeader     *votefile.Meta `json:"votes_header"`
	VotesHeaderFile *string        `json:"votes_header_file"`
	PerQuery        PerQuery       `json:"per_query"`
	// Queries counts the rows read; Released those written to the label
	// file and charged (answered or not), Answered those with a label,
	// Withheld those a threshold step withheld (released without a
	// label), StoppedByBudget those after the budget's limit, read and
	// checked but not released, NotRequested those after the first
	// --max-queries (or a PTR release's proposal), likewise, as asked.
	Queries         int `json:"queries"`
	Released        int `json:"released"`
	Answered        int `json:"answered"`
	Withheld        int `json:"withheld"`
	StoppedByBudget int `json:"stopped_by_budget"`
	NotRequested    int `json:"not_requested"`
	// Publish is the one total to publish; Totals, each a valid bound of
	// the release's labels, are analysis (TotalsRole says so).
	Publish    Publish `json:"publish"`
	Budget     *Budget `json:"budget"`
	Totals     []Total `json:"totals"`
	TotalsRole string  `json:"totals_role"`
	// Cap is the teacher-level post-processing cap that bounds every
	// total, or nil, and CapNote says why there is none ("" when there
	// is one).
	Cap        *accountant.Cap `json:"cap"`
	CapNote    string          `json:"cap_note"`
	Ledger     *Ledger         `json:"ledger"`
	Randomness Randomness      `json:"randomness"`
	ForRelease bool            `json:"for_release"`
	Seconds    float64         `json:"seconds"`
	// QueriesPerSecond is the rate at which the release read the queries.
	QueriesPerSecond float64 `json:"queries_per_second"`
	// Analysis says to print the analysis totals in a table too (they
	// are always in JSON and CSV).
	Analysis bool `json:"-"`
	// PTR is the plan of a release by generalized PTR, null otherwise.
	PTR *PTR `json:"ptr"`
	// Filter is the use of the Gaussian-DP filter of a release charged
	// per draw (progressive-gnmax), null otherwise.
	Filter *FilterUse `json:"filter"`
	// Header says that the vote file has a header row; Label describes
	// the mechanism; Layout, K and Classes are the votes'.
	Header  bool   `json:"header"`
	Label   string `json:"label"`
	Layout  string `json:"layout"`
	K       int    `json:"K"`
	Classes int    `json:"classes"`
	// The problem of a two-class release (Problem: m, the teachers' (eps,
	// Delta) as used, the release's delta, which took their defaults, its
	// relation) and where the teachers' guarantee came from: the vote
	// file's metadata header or the flags (EpsSource), and whether the
	// header gives them different guarantees, of which eps and Delta are
	// the common bound (TeachersDiffer). Null for multi-class votes,
	// whose mechanisms have no such problem.
	M              *float64             `json:"m"`
	Eps            *float64             `json:"eps"`
	Delta          *float64             `json:"Delta"`
	TargetDelta    *float64             `json:"delta"`
	MDefault       *bool                `json:"m_is_default"`
	DeltaDefault   *bool                `json:"delta_is_default"`
	Relation       *accountant.Relation `json:"relation"`
	EpsSource      *string              `json:"eps_source"`
	TeachersDiffer *bool                `json:"teachers_differ"`
	// The mechanism's settings, those it has (ensemble.Mechanism):
	// threshold, sigma1 and sigma2 for the GNMax family (sigma2 alone
	// for gnmax, of two classes too), laplace_scale for lnmax. Noise
	// says in words the noise a multi-class mechanism adds to the counts
	// (null for the two-class ones, whose label says it).
	settings
	// Settings are all of the mechanism's settings as its label file's
	// header states them (its JSON; ensemble.Mechanism), null when it has
	// none: of a mechanism a program registers too, whose settings the
	// fields above do not name.
	Settings json.RawMessage `json:"settings"`
	Noise    *string         `json:"noise"`
	// Gamma is the noise function sampled (K+1 values) and Certificate
	// its certificate, for the mechanisms that sample one.
	Gamma       []float64          `json:"gamma"`
	Certificate *gamma.Certificate `json:"certificate"`
	// Abstained counts the votes not cast (class labels -1, and what
	// rows of counts fall short of a stated K by), when the votes were
	// read with abstentions allowed (null otherwise, a setting, not the
	// votes, deciding): a function of the private votes, so listed in
	// NotForPublication, the keys not to publish.
	Abstained         *int64   `json:"votes_abstained"`
	NotForPublication []string `json:"not_for_publication"`
	// twoClass says that the votes were 0/1 votes; problem is the
	// problem of a two-class mechanism whose target is m·eps of the
	// teachers' or its own eps (nil for one whose guarantee is its
	// settings'), for the table, and words the multi-class mechanism in
	// words (ensemble.Mechanism.Words).
	twoClass bool
	problem  *Problem
	words    ensemble.Words
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

// FilterUse is what a release charged per draw took of its Gaussian-DP
// filter: the draws charged and the μ² they sum to, of the budget's μ_B²
// (analysis: the total to publish is the budget).
type FilterUse struct {
	Method accountant.Method `json:"method"`
	Draws  int               `json:"draws"`
	Mu2    float64           `json:"mu2_spent"`
	MuB2   float64           `json:"mu2_budget"`
	Role   string            `json:"role"`
}

// Ledger is the state of the privacy ledger a release was charged to,
// after it.
type Ledger struct {
	Path string `json:"path"`
	ledger.Balance
	// QueryUnits, of a release charged per draw, is the most units of the
	// ledger's charge that one query's draws take (every draw taken):
	// QueriesLeft then counts units, room for at least QueriesLeft over
	// QueryUnits more queries; null otherwise.
	QueryUnits *int `json:"query_units"`
}

// Randomness says where the noise of a release came from.
type Randomness struct {
	Source string  `json:"source"`
	Seed   *uint64 `json:"seed"`
	Note   string  `json:"note"`
}

// NotForRelease is what every output of a seeded release says.
const NotForRelease = "NOT FOR RELEASE: --seed makes the noise reproducible, so anyone who knows the seed can remove it"

// randomnessOf says where the noise of a run comes from: crypto/rand, or
// seed when it is not nil.
func randomnessOf(seed *uint64) Randomness {
	if seed != nil {
		return Randomness{Source: "seeded ChaCha8 (math/rand/v2)", Seed: seed, Note: NotForRelease}
	}
	return Randomness{Source: "crypto/rand"}
}

// write says, first in a table, that a seeded run is not for release.
func (r Randomness) write(t *cliout.Text) {
	if r.Note != "" {
		t.Line("*** seed %d: %s ***", *r.Seed, r.Note)
	}
}

// Release is a release of private labels (ensemble.Release), as
// NewAggregate summarises it: what it did, and the command's side of it.
type Release struct {
	ensemble.Released
	// Mechanism names the aggregator, which Label describes.
	Mechanism provenance.MechanismName
	// Problem and Teachers are the problem of a two-class release and
	// the teachers' guarantee it used.
	Problem  resolve.Resolved
	Teachers provenance.TeacherGuarantee
	// Input names the votes that Votes read, HeaderFile the sidecar their
	// metadata header was read from ("": none, or the header is in the
	// file); Output names where the sink Sink wrote the labels.
	Input, HeaderFile, Output string
	Votes                     votefile.Reader
	Sink                      ensemble.LabelSink
	// Seed is the seed of a reproducible release, nil for crypto/rand.
	Seed *uint64
	// LedgerPath names the ledger charged, and LedgerStatus its state
	// after the release (nil without a ledger).
	LedgerPath   string
	LedgerStatus *ledger.Balance
	// Analysis says to print the analysis totals as a table too.
	Analysis bool
	Elapsed  time.Duration
	// PTR is the plan of a release by generalized PTR, nil otherwise.
	PTR *PTR
	// Memo is the run's, in which the analysis totals compose the labels
	// again (accountant.Memo).
	Memo *accountant.Memo
}

// NewAggregate is the summary of the release r, for every mechanism and
// number of classes: the guarantee of each label, the counts, the total
// to publish, the analysis totals of the labels released with the
// teachers' cap, the budget, the ledger's state after the release; and
// the two-class problem and the gamma sampled, or the multi-class
// mechanism's noise and the votes not cast, with the others' keys null.
func NewAggregate(r Release) Aggregate {
	res := r.Result
	priv := r.Aggregator.Privacy()
	s := settingsOf(r.Aggregator.Mechanism())
	all, _ := json.Marshal(r.Aggregator.Mechanism()) // the numbers of a built mechanism are finite
	out := Aggregate{
		Input: r.Input, InputFormat: r.Votes.Format().String(), IDColumn: r.Votes.HasID(),
		Output: r.Output, OutputFormat: r.Sink.Format.String(), Mechanism: r.Mechanism, VotesHeader: r.Votes.Meta(),
		PerQuery: PerQuery{Eps: priv.Eps, Delta: priv.Delta, Source: priv.Source, Relation: priv.Relation.String(), RelationText: priv.Relation.Describe()},
		Queries:  res.Released + res.StoppedByBudget + res.NotRequested, Released: res.Released, Answered: res.Released - res.Withheld, Withheld: res.Withheld,
		StoppedByBudget: res.StoppedByBudget, NotRequested: res.NotRequested,
		TotalsRole: analysisRole, Cap: r.Account.Cap, CapNote: r.CapNote, Budget: newBudget(r.Released, res.StoppedByBudget),
		Randomness: randomnessOf(r.Seed), ForRelease: r.Seed == nil, Seconds: r.Elapsed.Seconds(), Analysis: r.Analysis,
		Header: r.Votes.HasHeader(), Label: r.Label, Layout: r.Votes.Layout().String(), K: r.Aggregator.K(), Classes: r.Aggregator.Classes(),
		settings: s, NotForPublication: []string{},
	}
	if string(all) != "{}" {
		out.Settings = all
	}
	if r.Elapsed > 0 {
		out.QueriesPerSecond = float64(out.Queries) / r.Elapsed.Seconds()
	}
	if r.HeaderFile != "" {
		out.VotesHeaderFile = &r.HeaderFile
	}
	if r.LedgerStatus != nil {
		out.Ledger = &Ledger{Path: r.LedgerPath, Balance: *r.LedgerStatus}
		if r.QueryUnits > 0 {
			out.Ledger.QueryUnits = &r.QueryUnits
		}
	}
	// A release accounted as a whole publishes its total whatever it
	// released (a failed test's output is that none was).
	out.Publish = Publish{Total: r.Publish, None: r.LedgerStatus == nil && res.Released == 0 && r.Publish.Argument == ""}
	out.PTR = r.PTR
	if f := r.Account.Filter; f != nil {
		out.Filter = &FilterUse{Method: *f, Draws: r.Draws, Mu2: r.Mu2, MuB2: r.MuB2, Role: "analysis: what the run used of its budget; the total to publish is the budget"}
	}
	// A total by an argument is the release's only one: no composition of
	// its labels covers its test.
	if acc := r.Account; res.Released > 0 && r.Publish.Argument == "" {
		acc.Steps = res.Released
		if ts, err := acc.Totals(r.Memo); err == nil {
			out.Totals = newTotals(ts)
		}
	}
	out.twoClass = r.Votes.Input() != votefile.ManyClasses
	switch {
	case !out.twoClass:
		out.words = r.Aggregator.Mechanism().Words()
		out.Noise = &out.words.Noise
	case r.Problem.K > 0: // the problem whose target m·eps or eps is the mechanism's
		p := NewProblem(r.Problem)
		source, differ := "header", r.Teachers.Heterogeneous // where the teachers' eps and Delta came from
		if r.Teachers.FromFlags {
			source = "flags"
		}
		out.problem = &p
		out.M, out.Eps, out.Delta, out.TargetDelta, out.MDefault, out.DeltaDefault = &p.M, &p.Eps, &p.Delta, &p.TargetDelta, &p.MDefault, &p.DeltaDefault
		out.Relation, out.EpsSource, out.TeachersDiffer = &p.Relation, &source, &differ
	}
	if agg, ok := r.Aggregator.(ensemble.Aggregator); ok {
		out.Gamma, out.Certificate = agg.Gamma(), agg.Privacy().Certificate
	}
	// A PTR release whose test failed read no query to label.
	if r.Votes.MayAbstain() && (r.PTR == nil || res.Released > 0) {
		out.Abstained, out.NotForPublication = new(r.Votes.Abstained()), []string{"votes_abstained"}
	}
	if r.PTR != nil {
		// The test's bound walks over the votes, as darrm pate's
		// smooth-sensitivity analysis does: the run's time is a function
		// of them.
		out.NotForPublication = append(out.NotForPublication, "seconds", "queries_per_second")
	}
	if !out.ForRelease {
		// Anyone who knows the seed can remove the noise: the total is
		// the mechanism's with secret noise, which these labels lack.
		out.NotForPublication = append(out.NotForPublication, "publish")
	}
	return out
}

// csvHeader is the header of a release's summary in CSV, for every
// mechanism: a row per analysis total, then the total to publish.
var csvHeader = []string{"mechanism", "queries", "released", "answered", "withheld", "stopped_by_budget", "not_requested", "eps_per_query", "delta_per_query",
	"method", "delta_prime", "eps_total", "delta_total", "total_bound", "for_release", "role"}

// writeCSV writes the summary's rows under csvHeader.
func (out Aggregate) writeCSV(w io.Writer) error {
	lead := []string{string(out.Mechanism), fmt.Sprint(out.Queries), fmt.Sprint(out.Released), fmt.Sprint(out.Answered), fmt.Sprint(out.Withheld),
		fmt.Sprint(out.StoppedByBudget), fmt.Sprint(out.NotRequested), cliout.Float(out.PerQuery.Eps), cliout.Float(out.PerQuery.Delta)}
	row := func(cells ...string) []string {
		return append(append(lead[:len(lead):len(lead)], cells...), fmt.Sprint(out.ForRelease))
	}
	var rows [][]string
	for _, t := range out.Totals {
		rows = append(rows, append(row(append(t.cells(cliout.Float), t.Bound.String())...), "analysis"))
	}
	rows = append(rows, append(row(out.Publish.cells()...), "publish"))
	return cliout.WriteCSV(w, csvHeader, rows)
}

// Write renders the summary in format f.
func (out Aggregate) Write(w io.Writer, f cliout.Format) error {
	switch f {
	case cliout.JSON:
		return cliout.WriteJSON(w, out)
	case cliout.CSV:
		return out.writeCSV(w)
	}
	if !out.twoClass {
		return out.writeMultiText(w)
	}
	return out.writeTwoClassText(w)
}

// writeTwoClassText writes the table of a two-class release.
func (out Aggregate) writeTwoClassText(w io.Writer) error {
	t := cliout.NewText(w)
	out.writePublish(t, plural.Of(out.Released, "label", "labels")+" released")
	out.writeLabels(t)
	out.writeBudget(t)
	var teachers, target string
	switch p := out.problem; {
	case p == nil:
	case p.Relation == accountant.OneVote || out.PerQuery.Relation == accountant.OneVote.String():
		// Two-class GNMax's problem is the target it is calibrated to;
		// its teachers, in the one-vote relation, need not be private.
		teachers, target = ", not necessarily private (one-vote relation)", ": "+p.Describe()
	default:
		teachers, target = fmt.Sprintf(", each (eps = %g, Delta = %g)-DP", p.Eps, p.Delta), ": "+p.Describe()
	}
	t.Line("votes: %s (%s), K = %d teachers%s", out.Input, out.votesLayout(out.Header), out.K, teachers)
	t.Line("teachers: %s", out.describeTeachers())
	t.Line("mechanism: %s", out.Label)
	out.writePerQuery(t, "per query: ", target)
	if c := out.Certificate; c != nil {
		what := "corner multisets"
		if c.Relation == accountant.OneVote {
			what = "pairs of neighbouring vote counts"
		}
		t.Line("  certificate: %v, max f / budget = %.15g, %s %s", c.Status, c.Ratio, groupDigits(c.Configs.String()), what)
	}
	out.writeAccount(t, fmt.Sprintf("the %s released", plural.Of(out.Released, "label", "labels")), "each the teachers' cap when there is one (fixed teachers: the composition over the queries, kept as queries, is not proved for them)")
	out.writeTime(t, out.QueriesPerSecond)
	return t.Close()
}

// writeLabels says where the labels went, how many of the queries were
// released and answered, and what stopped a release that the budget did.
func (out Aggregate) writeLabels(t *cliout.Text) {
	if p := out.PTR; p != nil && out.Released == 0 {
		why := "the test of the " + plural.Of(p.Queries, "query", "queries") + " proposed FAILED"
		if p.Passed == nil {
			why = fmt.Sprintf("STOPPED by %s: the %s proposed not released", out.stoppedBy(), plural.Of(p.Queries, "query", "queries"))
		}
		t.Line("labels: none released, no label file written: %s", why)
		return
	}
	labels := fmt.Sprintf("labels: %s (%s): %d of %s released, every one answered", out.Output, out.OutputFormat, out.Released, plural.Of(out.Queries, "query", "queries"))
	if out.Released == 0 {
		labels = fmt.Sprintf("labels: %s (%s): none of %s released", out.Output, out.OutputFormat, plural.Of(out.Queries, "query", "queries"))
	}
	if w := out.words.Withheld; w != "" && out.Released > 0 {
		labels = fmt.Sprintf("labels: %s (%s): %d of %s released, %d answered, %d withheld %s",
			out.Output, out.OutputFormat, out.Released, plural.Of(out.Queries, "query", "queries"), out.Answered, out.Withheld, w)
	}
	if out.StoppedByBudget > 0 {
		labels += fmt.Sprintf("; STOPPED by %s: %d not released", out.stoppedBy(), out.StoppedByBudget)
	}
	if out.NotRequested > 0 {
		labels += fmt.Sprintf("; the %d after the first %d not requested (--max-queries), not released", out.NotRequested, out.Queries-out.NotRequested)
	}
	t.Line("%s", labels)
}

// votesLayout says how the votes were read: their format, the layout of
// multi-class votes, where their metadata header is (in the vote file, or
// in a sidecar, named), a header row when header says to, and an id
// column.
func (out Aggregate) votesLayout(header bool) string {
	desc := []string{strings.ToUpper(out.InputFormat)}
	if !out.twoClass {
		desc = append(desc, out.Layout)
	}
	switch {
	case out.VotesHeader != nil && out.VotesHeaderFile != nil:
		desc = append(desc, "metadata header in "+*out.VotesHeaderFile)
	case out.VotesHeader != nil:
		desc = append(desc, "metadata header")
	}
	if header {
		desc = append(desc, "header")
	}
	if out.IDColumn {
		desc = append(desc, "id column")
	}
	return strings.Join(desc, ", ")
}

// writePerQuery writes the guarantee of each label between lead and
// rest, and by what and in which relation it holds.
func (out Aggregate) writePerQuery(t *cliout.Text, lead, rest string) {
	t.Line("%s%v%s", lead, accountant.Guarantee{Eps: out.PerQuery.Eps, Delta: out.PerQuery.Delta}, rest)
	t.Line("  by %s", out.PerQuery.Source)
	t.Line("  neighbouring relation: %s %s", out.PerQuery.Relation, t.Note(out.PerQuery.RelationText))
}

// writeMultiText writes the table of a multi-class release.
func (out Aggregate) writeMultiText(w io.Writer) error {
	t := cliout.NewText(w)
	what := plural.Of(out.Released, "query", "queries") + " released"
	switch {
	case out.PTR != nil && out.Released == 0:
		what = "run, which released no query"
	case out.words.Withheld != "":
		what += fmt.Sprintf(" (%d answered, %d withheld)", out.Answered, out.Withheld)
	}
	out.writePublish(t, what)
	out.writeLabels(t)
	out.writeBudget(t)
	if out.PTR != nil {
		out.PTR.write(t)
	}
	t.Line("votes: %s (%s), K = %d teachers, C = %d classes", out.Input, out.votesLayout(false), out.K, out.Classes)
	if out.Abstained != nil {
		t.Line("  votes not cast (abstaining teachers): %d, computed from the votes: not for publication; the guarantee holds with abstentions (docs/pate.md, \"Abstaining teachers\")", *out.Abstained)
	}
	if m := out.VotesHeader; m != nil {
		if out.PerQuery.Relation == accountant.OneVote.String() {
			t.Line("teachers: %s; their own guarantee plays no part in the one-vote relation", ensembleOf(m))
		} else { // a mechanism of counts calibrated to the teachers' guarantee
			t.Line("teachers: %s; %s, stated: the labels' guarantee is calibrated to it", ensembleOf(m), statedTeachers(m))
		}
	}
	t.Line("mechanism: %s (%s), noise %s", out.Mechanism, out.words.Settings, out.words.Noise)
	switch {
	case out.PTR != nil:
		out.writePerQuery(t, "per released query: ", ", each label's own guarantee: the release is accounted as a whole, by the total above")
	case out.Filter != nil:
		out.writePerQuery(t, "per released query: at most ", " (every draw taken); each draw charged to the filter only when drawn")
		t.Line("filter: %d draws charged, sum of mu^2 = %.6g of the budget's mu_B^2 = %.6g (analysis: what the run used; publish the budget above)", out.Filter.Draws, out.Filter.Mu2, out.Filter.MuB2)
	default:
		out.writePerQuery(t, "per released query: ", ", charged whether or not it was answered")
	}
	out.writeAccount(t, fmt.Sprintf("the %s", what), "each a valid bound for them")
	out.writeTime(t, out.QueriesPerSecond)
	return t.Close()
}

// writePublish writes the total to publish of what (e.g. "5 labels
// released"), the first line of the summary after a seeded release's
// note, with its theorem as a note.
func (out Aggregate) writePublish(t *cliout.Text, what string) {
	out.Randomness.write(t)
	p := out.Publish
	switch {
	case p.known() && !out.ForRelease:
		// Before the ledger's case too: a seeded release charged to a
		// ledger has no guarantee either.
		of, by := "the "+what, p.Name()
		if p.source() == "ledger" {
			of, by = "every release charged to the ledger", theName(by)
		}
		t.Line("NOT TO PUBLISH (seeded): %s for %s, by %s %s", formatTotal(p.Guarantee), of, by, t.Note(p.Reference()))
		t.Line("  at %s: the total of this mechanism with secret noise; these labels, whose noise anyone who knows the seed can remove, have none: publish nothing of them", deltaWords[p.DeltaFrom])
	case p.known() && p.source() == "ledger":
		t.Line("TO PUBLISH: %s for every release charged to the ledger, by %s %s",
			formatTotal(p.Guarantee), theName(p.Name()), t.Note(p.Reference()))
		t.Line("  why: %s", p.why())
	case p.known():
		t.Line("TO PUBLISH: %s for the %s, by %s %s", formatTotal(p.Guarantee), what, p.Name(), t.Note(p.Reference()))
		switch {
		case p.Argument != "":
			t.Line("  at %s; the one total of this release, its test and its labels: no composition of the labels covers the test", deltaWords[p.DeltaFrom])
		case out.Filter != nil:
			t.Line("  at %s; the one total of this release: every draw was charged to the filter before it was drawn, and the run stopped when the next query's draws might not fit", deltaWords[p.DeltaFrom])
		default:
			t.Line("  at %s; other totals hold too, as analysis (--analysis, JSON)", deltaWords[p.DeltaFrom])
		}
		if p.Inexact != "" {
			t.Line("  note: %s; the total is a looser bound that holds", p.Inexact)
		}
		switch {
		case param.GuaranteeDelta("delta", p.Guarantee.Delta) == nil:
		case out.Cap != nil:
			// Fewer queries only lower the default δ the cap is read at:
			// the cap bounds every release from the teachers.
			t.Line("  VACUOUS: a delta above 1/2 guarantees nothing (a release that published its whole input with that probability would meet it): give --total-delta; the teachers are fixed, and their cap, %s, bounds every release from them, however many queries", formatTotal(out.Cap.Guarantee))
		default:
			t.Line("  VACUOUS: a delta above 1/2 guarantees nothing (a release that published its whole input with that probability would meet it): give --budget-eps and --budget-delta, or release fewer queries")
		}
	case p.Err != nil:
		t.Line("TO PUBLISH: none %s: %s", deltaWords[p.DeltaFrom], p.Err)
	default:
		t.Line("TO PUBLISH: nothing: no label was released")
	}
}

// deltaWords says where the δ of a total to publish comes from.
var deltaWords = map[accountant.DeltaOrigin]string{
	accountant.BudgetDelta:  "the budget's delta",
	accountant.StatedDelta:  "the delta of --total-delta",
	accountant.DefaultDelta: "the default delta 1-(1-delta)^Q·(1-delta'), delta per query, Q labels",
	accountant.LedgerDelta:  "the ledger budget's delta",
}

// writeBudget writes what the budget allowed, and by which result.
func (out Aggregate) writeBudget(t *cliout.Text) {
	b := out.Budget
	switch {
	case b == nil:
	case b.Filter:
		t.Line("budget: (%g, %g), of the Gaussian-DP filter that each draw is charged to: no number of queries is fixed in advance", b.Eps, b.Delta)
	case b.Unlimited:
		t.Line("budget: (%g, %g) allows every query: the teachers' cap %s is within it %s", b.Eps, b.Delta,
			formatTotal(b.AllowedBy.Guarantee), t.Note(b.AllowedBy.Reference()))
	case b.AllowedBy == nil && b.Why != "":
		t.Line("budget: (%g, %g) allows no query: %s", b.Eps, b.Delta, b.Why)
	case b.AllowedBy == nil:
		// Say what does not fit and where the budget that would is.
		t.Line("budget: (%g, %g) allows no query: not even one, %s, fits at its delta; darrm plan with these settings gives the smallest budget that fits one",
			b.Eps, b.Delta, formatTotal(accountant.Guarantee{Eps: out.PerQuery.Eps, Delta: out.PerQuery.Delta}))
	default:
		t.Line("budget: (%g, %g) allows %s, %s by %s %s", b.Eps, b.Delta, plural.Of(b.MaxQueries, "query", "queries"),
			formatTotal(b.AllowedBy.Guarantee), b.AllowedBy.Name(), t.Note(b.AllowedBy.Reference()))
	}
}

// writeTime prints how long the release took, and its rate of queries
// per second when it took long enough for the rate to say something,
// marked when it is a function of the votes.
func (out Aggregate) writeTime(t *cliout.Text, rate float64) {
	mark := ""
	if slices.Contains(out.NotForPublication, "seconds") {
		mark = ", computed from the votes: not for publication"
	}
	if out.Seconds < 1 || rate == 0 {
		t.Line("time: %.3g s%s", out.Seconds, mark)
		return
	}
	t.Line("time: %.3g s, %.3g queries/s%s", out.Seconds, rate, mark)
}

// stoppedBy names what stopped a release that the budget stopped: the
// budget, or an analyst's share of the ledger's budget, which holds the
// analyst's runs as well, when it allows fewer.
func (out Aggregate) stoppedBy() string {
	if l := out.Ledger; l != nil && l.ShareBound {
		return fmt.Sprintf("analyst %q's share of the budget", l.Analyst)
	}
	return "the budget"
}

// writeAccount prints the ledger's state, the teachers' cap, the
// randomness, and, when asked for, the table of analysis totals of what
// (e.g. "the 5 labels released"), which how says more of.
func (out Aggregate) writeAccount(t *cliout.Text, what, how string) {
	if l := out.Ledger; l != nil {
		filter := l.Composition.String()
		if l.FilterChosen {
			filter += " (chosen for these labels by this release, the ledger's first)"
		}
		spent := fmt.Sprintf("spent so far %s by its filter, %s", formatTotal(l.Queries), filter)
		if l.Bound == accountant.TeachersBound {
			// The cap is what was spent, as ledger show says: the
			// composition of the queries may exceed it, and is analysis.
			spent = fmt.Sprintf("spent so far %s, the teachers' cap (its queries compose to %s by its filter, %s)", formatTotal(l.Total), formatTotal(l.Queries), filter)
		}
		if l.AnalystSpent != nil {
			spent += fmt.Sprintf("; analyst %q's runs spent %s of their share %s", l.Analyst, formatTotal(*l.AnalystSpent), shareText(l.ShareLabels, *l.Share))
		}
		var left string
		one, many := "more such query", "more such queries"
		if out.PTR != nil {
			// A ledger charges a release by generalized PTR its total
			// as one step.
			one, many = "more such release by generalized PTR (its total charged as one step)", "more such releases by generalized PTR (each its total charged as one step)"
		}
		if n := l.QueriesLeft; n != nil {
			left = Allowed(*n, one, many) + " allowed"
			if u := l.QueryUnits; u != nil {
				// A release charged per draw is charged in units, which
				// a query's draws take as many of as they need.
				left = fmt.Sprintf("%s of its charge allowed, room for at least %s (every draw taken: a query whose draws stop early takes fewer)", Allowed(*n, "more unit", "more units"), Allowed(*n / *u, "more query", "more queries"))
			}
			if l.ShareBound {
				left += fmt.Sprintf(" by analyst %q's share of it, %s", l.Analyst, shareText(l.ShareLabels, *l.Share))
			}
		} else {
			left = fmt.Sprintf("every further release from these teachers is free: their cap %s is within the budget", formatTotal(l.Cap.Guarantee))
		}
		t.Line("ledger %s (ensemble %s): budget %v, %s (analysis: a realised cost, not a guarantee); %s",
			cliout.Escape(l.Path), cliout.Escape(l.Ensemble), l.Budget, spent, left)
	}
	if c := out.Cap; c != nil {
		// The total to publish may be this cap at another delta: say
		// which pair to quote.
		quote := ""
		if p := out.Publish; p.known() && p.Cap != nil && p.Guarantee != c.Guarantee {
			quote = fmt.Sprintf("; the total to publish, %s, is this cap at %s", formatTotal(p.Guarantee), deltaWords[p.DeltaFrom])
		}
		t.Line("teachers' cap: %s: every release from these teachers, however many, is within it %s%s", formatTotal(c.Guarantee), t.Note(c.Reference()), quote)
	} else if out.CapNote != "" {
		t.Line("teachers' cap: none: %s", out.CapNote)
	}
	t.Line("randomness: %s", out.Randomness.Source)
	if !out.Analysis || len(out.Totals) == 0 {
		return
	}
	t.Line("")
	t.Line("Analysis (not for publication: publish the total above): totals of %s, %s:", what, how)
	var rows [][]string
	for _, tot := range out.Totals {
		ref := tot.Reference()
		if tot.Err != nil {
			ref = tot.Err.Error()
		}
		rows = append(rows, append(tot.cells(decimal.FormatBound), tot.Bound.String(), t.Note(ref)))
	}
	t.Table([]string{"composition", "delta'", "eps total", "delta total", "bound", "note"}, rows)
}

// cells formats the method, delta' ("-"), eps, delta and bound of p.
func (p Publish) cells() []string {
	c := []string{p.source() + ": " + p.method(), "-", "-", "-", "-"}
	if p.known() {
		c[2], c[3] = cliout.Float(p.Guarantee.Eps), cliout.Float(p.Guarantee.Delta)
	}
	return c
}

// cells formats the total's method, delta', eps and delta, with "-" for
// what it lacks.
func (t Total) cells(f func(float64) string) []string {
	cells := []string{t.Name(), "-", "-", "-"}
	if d := t.deltaPrime(); d != nil {
		cells[1] = f(*d)
	}
	if e := t.eps(); e != nil {
		cells[2], cells[3] = f(*e), f(*t.delta())
	}
	return cells
}

// describeTeachers says where the teachers' guarantee of a two-class
// release came from.
func (out Aggregate) describeTeachers() string {
	m := out.VotesHeader
	if p := out.problem; p == nil || p.Relation == accountant.OneVote {
		// The mechanism's own guarantee, or the one-vote relation's own
		// problem: the teachers' guarantee plays no part.
		s := "the vote file has no metadata header"
		if m != nil {
			s = ensembleOf(m)
		}
		if p == nil {
			return s + "; their own guarantee plays no part: the mechanism's guarantee is its settings'"
		}
		return s + "; their own guarantee plays no part in the one-vote relation: the release's (eps, delta) from --target-eps and --delta"
	}
	if m == nil {
		return "(eps, Delta) from --eps and --Delta (the vote file has no metadata header)"
	}
	if *out.EpsSource == "flags" {
		return fmt.Sprintf("%s, non-private (no guarantee in the header): the release is calibrated to (eps, Delta) from --eps and --Delta", ensembleOf(m))
	}
	s := fmt.Sprintf("(eps, Delta) from the metadata header: %s; %s", ensembleOf(m), statedTeachers(m))
	if *out.TeachersDiffer {
		s += "; the guarantees differ, so the release uses their common bound (the largest eps and the largest Delta)"
	}
	return s
}

// ensembleOf says the teacher ensemble a votes' header m states.
func ensembleOf(m *votefile.Meta) string {
	return fmt.Sprintf("ensemble %s (%v, %v relation, partition %v)", m.Ensemble, m.Kind, m.Relation, m.Partition)
}

// statedTeachers says the teachers' guarantees a votes' header m states,
// group by group.
func statedTeachers(m *votefile.Meta) string {
	var groups []string
	for _, g := range m.Teachers {
		groups = append(groups, fmt.Sprintf("%d × %s", g.Count, TeacherGuarantee(g)))
	}
	return strings.Join(groups, "; ")
}

// Stopped says, in its summary's words, how far a release that its
// budget stopped got, for the error it ends with; "" when the budget did
// not stop it. A query is released unless the budget stops it; a row the
// threshold step withheld is released (and charged) but not answered.
func (r Release) Stopped() string {
	res := r.Result
	if res.StoppedByBudget == 0 {
		return ""
	}
	var by string
	if l := r.LedgerStatus; l != nil && l.ShareBound && l.Share != nil {
		// The analyst's share, not the budget, is what stopped it.
		by = fmt.Sprintf("analyst %q's share of ledger %s, %s, allows no more: ", l.Analyst, r.LedgerPath, shareText(l.ShareLabels, *l.Share))
	}
	queries := plural.Of(res.Released+res.StoppedByBudget, "query", "queries")
	switch {
	case res.Released == 0 && r.PTR != nil:
		return fmt.Sprintf("%sthe %s proposed not released: nothing drawn or charged, no label file written", by, plural.Of(res.StoppedByBudget, "query", "queries"))
	case res.Withheld > 0:
		withheld := " by the threshold step"
		if r.Account.Filter != nil {
			withheld = "" // the threshold step, or no level's gap reached its bar
		}
		return fmt.Sprintf("%sreleased %d of %s (%d answered, %d withheld%s), %d not released; %s holds the %d released",
			by, res.Released, queries, res.Released-res.Withheld, res.Withheld, withheld, res.StoppedByBudget, r.Output, res.Released)
	}
	return fmt.Sprintf("%sreleased %d of %s, %d not released; %s holds the %d released", by, res.Released, queries, res.StoppedByBudget, r.Output, res.Released)
}
