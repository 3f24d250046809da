package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/resolve"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/plural"
	"github.com/darrm/darrm/provenance"
)

// Simulate is the document darrm simulate prints.
type Simulate struct {
	Problem
	Teachers string                     `json:"teachers"`
	P        []float64                  `json:"p"`
	Queries  int                        `json:"queries"`
	Seed     uint64                     `json:"seed"`
	Note     string                     `json:"note"`
	Results  []SimResult                `json:"results"`
	Above    []provenance.MechanismName `json:"darrm_above,omitempty"`
	// EqualTotals compares the mechanisms at equal totals, for each number
	// of queries (simulate --budget-eps).
	EqualTotals []SimEqual `json:"equal_totals,omitempty"`
}

// SimResult is one mechanism's agreement with the majority of the votes.
type SimResult struct {
	Mechanism provenance.MechanismName `json:"mechanism"`
	Label     string                   `json:"label"`
	// Relation is the neighbouring relation of the mechanism's guarantee:
	// mechanisms of different relations are not ranked against each other.
	Relation  accountant.Relation `json:"relation"`
	Eps       float64             `json:"eps"`
	Delta     float64             `json:"delta"`
	Source    string              `json:"source"`
	Agree     int                 `json:"agree"`
	Agreement float64             `json:"agreement"`
	Lo        float64             `json:"ci95_lo"`
	Hi        float64             `json:"ci95_hi"`
	Exact     float64             `json:"exact_agreement"`
	TVError   float64             `json:"exact_error"`
}

// NewSimulate is the document of a simulation of seed on teachers whose
// probabilities of voting 1, probs, the description teachers gave: the
// results res of ensemble.Simulate, whose aggregators labels describe,
// and the mechanisms whose interval that of subject (darrm's) lies above.
func NewSimulate(p resolve.Resolved, teachers string, probs []float64, seed uint64, res []ensemble.SimResult, labels []string, subject provenance.MechanismName) Simulate {
	out := Simulate{Problem: NewProblem(p), Teachers: teachers, P: probs, Seed: seed, Above: above(res, subject),
		Note: "a simulation with a seeded generator, not a private release: agreement with the majority of synthetic teachers"}
	for i, r := range res {
		out.Queries = r.Queries
		out.Results = append(out.Results, SimResult{
			Mechanism: r.Name, Label: labels[i], Relation: r.Privacy.Relation, Eps: r.Privacy.Eps, Delta: r.Privacy.Delta, Source: r.Privacy.Source,
			Agree: r.Agree, Agreement: r.Rate, Lo: r.Lo, Hi: r.Hi, Exact: r.Exact, TVError: r.TVError,
		})
	}
	return out
}

// Write renders the document in format f.
func (out Simulate) Write(w io.Writer, f cliout.Format) error {
	switch f {
	case cliout.JSON:
		return cliout.WriteJSON(w, out)
	case cliout.CSV:
		header := []string{"mechanism", "eps", "delta", "queries", "agree", "agreement", "ci95_lo", "ci95_hi", "exact_agreement", "exact_error", "seed", "relation"}
		var rows [][]string
		for _, r := range out.Results {
			rows = append(rows, []string{string(r.Mechanism), cliout.Float(r.Eps), cliout.Float(r.Delta), fmt.Sprint(out.Queries), fmt.Sprint(r.Agree),
				cliout.Float(r.Agreement), cliout.Float(r.Lo), cliout.Float(r.Hi), cliout.Float(r.Exact), cliout.Float(r.TVError), fmt.Sprint(out.Seed), r.Relation.String()})
		}
		return cliout.WriteCSV(w, header, rows)
	}
	t := cliout.NewText(w)
	t.Line("Simulation (seeded generator, seed %d; not a private release): %s", out.Seed, plural.Of(out.Queries, "query", "queries"))
	t.Line("%s", out.Describe())
	ps := make([]string, len(out.P))
	for i, v := range out.P {
		ps[i] = cliout.FloatN(v, 3)
	}
	t.Line("teachers %s: p = %s", out.Teachers, strings.Join(ps, ", "))
	t.Line("")
	if len(out.EqualTotals) > 0 {
		t.Line("Comparison at equal per-query guarantees (each release (m·eps, delta)-DP, whatever its total):")
	}
	var rows [][]string
	relations := map[accountant.Relation]bool{}
	for _, r := range out.Results {
		relations[r.Relation] = true
		rows = append(rows, []string{string(r.Mechanism), r.Relation.String(), fmt.Sprintf("%.4f", r.Agreement), fmt.Sprintf("[%.4f, %.4f]", r.Lo, r.Hi),
			fmt.Sprintf("%.4f", r.Exact), fmt.Sprintf("%.4f", r.TVError)})
	}
	t.Table([]string{"mechanism", "relation", "agreement", "95% interval", "exact", "error E"}, rows)
	t.Line("agreement: labels equal to the majority of the votes; exact: its expectation from gamma; error E: |Pr[label=1] - Pr[majority=1]|")
	if len(relations) > 1 {
		t.Line("relation: the neighbouring relation of each guarantee, %v (%s) or %v (%s); the same (eps, delta) promises another thing in each, so rank mechanisms within a relation only",
			accountant.PrivateTeachers, "every teacher (eps, Delta)-DP, any vote may change", accountant.OneVote, "teachers on disjoint shares, not necessarily private, one vote changes")
	}
	for _, r := range out.Results {
		t.Line("  %s: %s", r.Mechanism, r.Label)
	}
	if len(out.Above) > 0 {
		t.Line("darrm's 95%% interval lies above those of (in its relation, %v): %s", accountant.PrivateTeachers, provenance.JoinMechanisms(out.Above, ", "))
	}
	for _, e := range out.EqualTotals {
		e.write(t)
	}
	return t.Close()
}

// above returns the names of the results in the neighbouring relation of
// the result named name whose 95% interval lies wholly below its interval
// (none if no result has that name). A result of the other relation is
// never ranked against it: the same (eps, delta) is another promise there.
func above(res []ensemble.SimResult, name provenance.MechanismName) []provenance.MechanismName {
	i := slices.IndexFunc(res, func(r ensemble.SimResult) bool { return r.Name == name })
	if i < 0 {
		return nil
	}
	var below []provenance.MechanismName
	for j, r := range res {
		if j != i && r.Privacy.Relation == res[i].Privacy.Relation && res[i].Lo > r.Hi {
			below = append(below, r.Name)
		}
	}
	return below
}
