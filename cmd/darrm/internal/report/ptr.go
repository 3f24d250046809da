package report

import (
	"strconv"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/plural"
	"github.com/darrm/darrm/pate"
)

// PTR is the plan of a release by generalized PTR (aggregate --accounting
// ptr) and whether its test passed: every key a function of the settings
// and the budget, none of the votes (the bound tested, its sensitivity and
// the test's draw are never reported).
type PTR struct {
	BudgetEps   float64 `json:"budget_eps"`
	BudgetDelta float64 `json:"budget_delta"`
	// Queries is the proposal, the first queries labelled on a pass;
	// Passed whether the test passed, null when it was not drawn (the
	// ledger had no room for the total).
	Queries int   `json:"queries_proposed"`
	Passed  *bool `json:"passed"`
	// Order is the Rényi order of the bound tested, ProposalRDP the bound
	// proposed at it, TestRDP the test's Rényi DP there; TestEps and
	// TestDelta the test's own guarantee, FalsePass the probability
	// that it passes where the bound exceeds the proposal.
	Order       float64 `json:"order"`
	ProposalRDP float64 `json:"proposal_rdp"`
	TestRDP     float64 `json:"test_rdp"`
	TestEps     float64 `json:"test_eps"`
	TestDelta   float64 `json:"test_delta"`
	FalsePass   float64 `json:"false_pass"`
	// Fallback is the number of queries the data-independent release
	// labels if the test fails (aggregate --fallback); 0 without it.
	Fallback int `json:"fallback_queries,omitempty"`
}

// NewPTR is the summary of the PTR release r under budget.
func NewPTR(r pate.PTRResult, budget accountant.Guarantee) *PTR {
	return &PTR{BudgetEps: budget.Eps, BudgetDelta: budget.Delta, Queries: r.Queries, Passed: &r.Pass, Order: r.Order,
		ProposalRDP: r.Proposal, TestRDP: r.TestRDP, TestEps: r.Test.Eps, TestDelta: r.Test.Delta, FalsePass: r.FalsePass, Fallback: r.Fallback}
}

// write writes the plan's lines.
func (p *PTR) write(t *cliout.Text) {
	outcome := "the test FAILED: no label released"
	switch {
	case p.Passed == nil:
		outcome = "the test was not drawn: the ledger has no room for the total; nothing charged, no label released"
	case *p.Passed:
		outcome = "the test passed: the " + plural.Of(p.Queries, "query", "queries") + " proposed released"
	case p.Fallback > 0:
		outcome = "the test FAILED: the first " + plural.Of(p.Fallback, "query", "queries") + " released by the data-independent fallback, within what the test left"
	}
	t.Line("accounting: generalized PTR within the budget (%g, %g): %s", p.BudgetEps, p.BudgetDelta, outcome)
	t.Line("  test: %s, Renyi DP %s at order %s, false pass <= %s; proposal: Renyi DP %s at that order; the bound tested and the test's draw are of the votes: not printed",
		formatTotal(accountant.Guarantee{Eps: p.TestEps, Delta: p.TestDelta}), short(p.TestRDP), short(p.Order), short(p.FalsePass), short(p.ProposalRDP))
}

// short formats a parameter of the plan to 4 digits: the JSON has them
// all.
func short(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }
