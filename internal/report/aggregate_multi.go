package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/ledger"
)

// AggregateMulti is the summary darrm aggregate prints after a release of
// multi-class labels (gnmax, confident-gnmax, lnmax). Like every summary
// of a release it holds no vote count and no un-noised label, only what
// the label file itself shows (how many queries got a label).
type AggregateMulti struct {
	Input        string `json:"input"`
	Layout       string `json:"layout"`
	InputFormat  string `json:"input_format"`
	IDColumn     bool   `json:"id_column"`
	Output       string `json:"output"`
	OutputFormat string `json:"output_format"`
	Mechanism    string `json:"mechanism"`
	K            int    `json:"K"`
	Classes      int    `json:"classes"`
	// The mechanism's parameters: Threshold, Sigma1 and Sigma2 for the
	// GNMax family (Threshold, Sigma1 with confident-gnmax), LaplaceScale
	// for lnmax.
	Threshold    *float64 `json:"threshold,omitempty"`
	Sigma1       *float64 `json:"sigma1,omitempty"`
	Sigma2       *float64 `json:"sigma2,omitempty"`
	LaplaceScale *float64 `json:"laplace_scale,omitempty"`
	Noise        string   `json:"noise"`
	// VotesHeader is the vote file's metadata header, nil without one.
	VotesHeader *ensemble.VoteMeta `json:"votes_header,omitempty"`
	PerQuery    PerQuery           `json:"per_query"`
	// Queries counts the rows read; Released those written to the label
	// file and charged (answered or not), Answered those with a label,
	// NotAnswered those the threshold step withheld, StoppedByBudget
	// those after the budget's limit, read and checked but not released.
	Queries         int                `json:"queries"`
	Released        int                `json:"released"`
	Answered        int                `json:"answered"`
	NotAnswered     int                `json:"not_answered"`
	StoppedByBudget int                `json:"stopped_by_budget"`
	Totals          []accountant.Total `json:"totals"`
	// CapNote says why no teacher-level cap bounds the totals.
	CapNote    string     `json:"cap_note"`
	Budget     *Budget    `json:"budget,omitempty"`
	Ledger     *Ledger    `json:"ledger,omitempty"`
	Randomness Randomness `json:"randomness"`
	ForRelease bool       `json:"for_release"`
	Seconds    float64    `json:"seconds"`
}

// MultiRelease is a release of multi-class labels
// (ensemble.ReleaseMultiTo), as NewAggregateMulti summarises it.
type MultiRelease struct {
	Mechanism     string
	Aggregator    ensemble.MultiAggregator
	Input, Output string
	Votes         *ensemble.MultiReader
	Sink          ensemble.LabelSink
	Result        ensemble.MultiResult
	Budget        *Budget
	DeltaPrime    float64
	CapNote       string
	Seed          *uint64
	Ledger        *ledger.Ledger
	LedgerPath    string
	Elapsed       time.Duration
}

// NewAggregateMulti is the summary of the release r: the guarantee of each
// released row, the totals of the rows released under each composition
// (no teacher-level cap applies in the one-vote relation), whether the
// budget stopped the release, and the ledger's state after it.
func NewAggregateMulti(r MultiRelease) (AggregateMulti, error) {
	priv := r.Aggregator.Privacy()
	res := r.Result
	layout := ensemble.LayoutVotes
	if r.Votes.Counts() {
		layout = ensemble.LayoutCounts
	}
	out := AggregateMulti{
		Input: r.Input, Layout: layout.String(), InputFormat: r.Votes.Format().String(), IDColumn: r.Votes.HasID(),
		Output: r.Output, OutputFormat: r.Sink.Format.String(), Mechanism: r.Mechanism,
		K: r.Aggregator.K(), Classes: r.Aggregator.Classes(), VotesHeader: r.Votes.Meta(),
		PerQuery: PerQuery{Eps: priv.Eps, Delta: priv.Delta, Source: priv.Source, Relation: priv.Relation.String(), RelationText: priv.Relation.Describe()},
		Queries:  res.Answered + res.Unanswered, Released: res.Answered, Answered: res.Answered - res.Withheld, NotAnswered: res.Withheld,
		StoppedByBudget: res.Unanswered, CapNote: r.CapNote, Budget: r.Budget,
		Randomness: Randomness{Source: "crypto/rand"}, ForRelease: r.Seed == nil, Seconds: r.Elapsed.Seconds(),
	}
	switch a := r.Aggregator.(type) {
	case *ensemble.MultiGNMax:
		m := a.Mechanism()
		out.Sigma2 = &m.Sigma2
		if m.Confident() {
			out.Threshold, out.Sigma1 = &m.Threshold, &m.Sigma1
		}
		out.Noise = "discrete Gaussian N_Z(0, sigma^2), sampled exactly (Canonne, Kamath and Steinke 2020); ties broken uniformly"
	case *ensemble.LNMax:
		b := a.Mechanism().Scale
		out.LaplaceScale = &b
		out.Noise = "discrete Laplace of scale b, sampled exactly (Canonne, Kamath and Steinke 2020); ties broken uniformly"
	}
	if r.Seed != nil {
		out.Randomness = Randomness{Source: "seeded ChaCha8 (math/rand/v2)", Seed: r.Seed, Note: NotForRelease}
	}
	if res.Answered > 0 {
		out.Totals = accountant.Totals(priv.Guarantee, res.Answered, r.DeltaPrime)
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
func (out AggregateMulti) Write(w io.Writer, f cliout.Format) error {
	switch f {
	case cliout.JSON:
		return cliout.WriteJSON(w, out)
	case cliout.CSV:
		header := []string{"mechanism", "released", "answered", "not_answered", "stopped_by_budget", "eps_per_query", "delta_per_query", "method", "delta_prime", "eps_total", "delta_total", "for_release"}
		var rows [][]string
		for _, t := range out.Totals {
			rows = append(rows, append([]string{out.Mechanism, fmt.Sprint(out.Released), fmt.Sprint(out.Answered), fmt.Sprint(out.NotAnswered), fmt.Sprint(out.StoppedByBudget),
				cliout.Float(out.PerQuery.Eps), cliout.Float(out.PerQuery.Delta)}, append(totalCells(t, cliout.Float)[:4], fmt.Sprint(out.ForRelease))...))
		}
		return cliout.WriteCSV(w, header, rows)
	}
	if out.Randomness.Note != "" {
		fmt.Fprintf(w, "*** %s ***\n", out.Randomness.Note)
	}
	desc := []string{strings.ToUpper(out.InputFormat), out.Layout}
	if out.VotesHeader != nil {
		desc = append(desc, "metadata header")
	}
	if out.IDColumn {
		desc = append(desc, "id column")
	}
	fmt.Fprintf(w, "votes: %s (%s), K = %d teachers, C = %d classes\n", out.Input, strings.Join(desc, ", "), out.K, out.Classes)
	if m := out.VotesHeader; m != nil {
		fmt.Fprintf(w, "teachers: ensemble %s (%v, %v relation, partition %v); their own guarantee plays no part in the one-vote relation\n", m.Ensemble, m.Kind, m.Relation, m.Partition)
	}
	fmt.Fprintf(w, "labels: %s (%s; a query the threshold step withheld has an empty label and answered 0)\n", out.Output, out.OutputFormat)
	params := fmt.Sprintf("sigma2 = %g", deref(out.Sigma2))
	switch {
	case out.LaplaceScale != nil:
		params = fmt.Sprintf("b = %g", *out.LaplaceScale)
	case out.Threshold != nil:
		params = fmt.Sprintf("T = %g, sigma1 = %g, ", *out.Threshold, *out.Sigma1) + params
	}
	fmt.Fprintf(w, "mechanism: %s (%s), noise %s\n", out.Mechanism, params, out.Noise)
	fmt.Fprintf(w, "per released query: (%.6g, %.6g)-DP, charged whether or not it was answered\n", out.PerQuery.Eps, out.PerQuery.Delta)
	fmt.Fprintf(w, "  by %s\n", out.PerQuery.Source)
	fmt.Fprintf(w, "  neighbouring relation: %s\n", out.PerQuery.Relation)
	fmt.Fprintf(w, "randomness: %s\n", out.Randomness.Source)
	released := fmt.Sprintf("released: %d of %d queries, %d answered, %d withheld by the threshold step", out.Released, out.Queries, out.Answered, out.NotAnswered)
	if b := out.Budget; b != nil {
		released += fmt.Sprintf(" (budget (%g, %g) under %s composition allows %d", b.Eps, b.Delta, b.Method, b.MaxQueries)
		if b.Stopped {
			released += fmt.Sprintf("; STOPPED: %d queries not released", out.StoppedByBudget)
		}
		released += ")"
	}
	fmt.Fprintln(w, released)
	if l := out.Ledger; l != nil {
		fmt.Fprintf(w, "ledger %s (ensemble %s): total spent (%.6g, %.6g)-DP by %s composition, budget %v; %d more such queries allowed\n", l.Path, l.Ensemble, l.Total.Eps, l.Total.Delta, l.Composition, l.Budget, l.QueriesLeft)
	}
	fmt.Fprintf(w, "teachers' cap: none: %s\n", out.CapNote)
	if len(out.Totals) > 0 {
		fmt.Fprintf(w, "\nTotal privacy loss of the %d released queries (relation %s: %s); account pate gives the Renyi composition:\n", out.Released, out.PerQuery.Relation, out.PerQuery.RelationText)
		var rows [][]string
		for _, t := range out.Totals {
			ref := t.Method.Reference()
			if t.Err != nil {
				ref = t.Err.Error()
			}
			rows = append(rows, append(totalCells(t, g6), ref))
		}
		if err := cliout.WriteTable(w, []string{"composition", "delta'", "eps total", "delta total", "reference"}, rows); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "time: %.3g s\n", out.Seconds)
	return err
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
