package pate

import (
	"context"
	"fmt"
	"slices"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/discrete"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/votefile"
)

// Generalized Propose-Test-Release of PATE's labels (Redberg, Zhu and
// Wang, AISTATS 2023): the data-dependent Rényi DP of the release that
// runs, at the votes, is tested privately against a proposed bound, and
// the labels are released only if the test passes. docs/pate.md, "A
// data-dependent guarantee: generalized PTR", states the theorem and
// proves every bound below.

// PTROptions are the settings of a release of PATE's labels by generalized
// Propose-Test-Release, which its plan fixes (PlanPTR) and the release
// holds (ReleasePTR). Every one is fixed before the votes are seen: none
// is chosen from them.
type PTROptions struct {
	// Budget is the (ε, δ) to publish, δ > 0.
	Budget accountant.Guarantee
	// Queries is the proposal: how many queries, the first of the votes,
	// are labelled if the test passes; 0 proposes every query. Choosing
	// it from the votes would release something of them that no test
	// accounts for: fix it from the budget on proxy votes.
	Queries int
	// Abstain says that teachers may abstain (rdpOptions.Abstain).
	Abstain bool
	// Fallback asks, on a failed test, for the data-independent release
	// of the first PTRResult.Fallback queries, within what the test left
	// (docs/pate.md), where a failed test labels none.
	Fallback bool
}

// PTRArgument names the argument of the total a PTR release publishes.
const PTRArgument = "generalized PTR"

// PTRResult is a release by generalized Propose-Test-Release: whether its
// test passed (the proposed queries are then labelled, else none is), and
// the one total to publish, Publish, which holds either way. Every other
// field is a function of the settings alone (ptrRule), not of the votes:
// the data-dependent bound tested, its distance to instability and the
// test's draw are never returned.
type PTRResult struct {
	Pass    bool
	Queries int
	// Publish is the total to publish, by the argument PTRArgument
	// (docs/pate.md, "A data-dependent guarantee: generalized PTR"): the
	// budget's ε itself, in its own decimal.
	Publish accountant.Guarantee
	// Order is the Rényi order of the bound tested, Proposal the bound
	// proposed at it; Sigma the deviation of the test's noise, in changed
	// teachers, Margin its margin z in deviations of its noise and
	// TestRDP its Rényi DP at Order (ptrBitRDP: the test releases one
	// bit).
	Order, Proposal, Sigma, Margin, TestRDP float64
	// Test is the test's own guarantee, FalsePass the probability that
	// the test passes at votes whose bound exceeds the proposal.
	Test      accountant.Guarantee
	FalsePass float64
	// Fallback is the number of queries, the first of the votes, that
	// the data-independent release labels if the test fails
	// (PTROptions.Fallback); 0 labels none.
	Fallback int

	// planned is what PlanPTR or PTRQueries made the plan for, which a
	// release holds it to (ReleasePTR); zero for a plan of another making.
	planned ptrPlanned
	// converted is the ε the test and the proposal convert to, within
	// the budget's: the total that label files written before the total
	// was the budget's ε state (labelsPTR accepts it).
	converted float64
}

// ptrPlanned is what a plan of a PTR release was made for: the settings
// of the mechanism's steps as PTR tests them (ptrFamily), the classes, the
// budget and whether teachers may abstain.
type ptrPlanned struct {
	mech    noisymax.Steps
	classes int
	budget  accountant.Guarantee
	abstain bool
}

// ReleasePTR releases the labels of s by generalized Propose-Test-Release
// as plan, PlanPTR's (or PTRQueries') for s's mechanism and classes, says:
// ensemble.Release of s (Confident-GNMax or GNMax on class counts),
// accounted as a whole (ensemble.Accounted, "ptr"): it labels the first
// plan.Queries queries only if the test of PTR (docs/pate.md) passes on
// counts, the counts of s.Votes, drawn from s.Random (crypto/rand when
// nil), and publishes the plan's total, by PTRArgument, whether it passes
// or not; a ledger of s is charged that total as one step before the test
// is drawn (PTRResult.Pass says whether it passed). A failed test is
// ensemble.ErrTestFailed, with no label released, or, with a fallback
// (PTROptions.Fallback), no error and the first plan.Fallback queries
// labelled by the data-independent release. The queries after the
// proposal are not requested (ensemble.ReleaseResult.NotRequested). s
// takes no budget and no MaxQueries: the plan's budget is the release's,
// its Queries the proposal. The bounds the test draws on
// keep what they compute in s.Certificate.Memo.
func ReleasePTR(ctx context.Context, s ensemble.ReleaseSpec, counts [][]int, plan PTRResult) (ensemble.Released, PTRResult, error) {
	if s.Votes == nil {
		return ensemble.Released{}, PTRResult{}, fmt.Errorf("PATE PTR: ReleaseSpec.Votes is not set")
	}
	if _, ok := ensemble.Steps(s.Mechanism, s.Votes.Classes()); !ok {
		return ensemble.Released{}, PTRResult{}, fmt.Errorf("PATE PTR: ReleaseSpec.Mechanism must be Confident-GNMax or GNMax on class counts, not %T", s.Mechanism)
	}
	r := plan
	m, err := ptrFamily(s.Mechanism, s.Votes.Classes())
	if err != nil {
		return ensemble.Released{}, r, err
	}
	if p := r.planned; p.mech != m || p.classes != s.Votes.Classes() {
		return ensemble.Released{}, r, fmt.Errorf("PATE PTR: the plan is not PlanPTR's for the release's mechanism (%v) on %d classes", s.Mechanism.Name(), s.Votes.Classes())
	}
	acct, err := ptrAccount(memoIn(s.Certificate.Memo), counts, r.Queries, s.Votes.K(), s.Votes.Classes(), m, r.Order, r.planned.abstain, "votes")
	if err != nil {
		return ensemble.Released{}, r, err
	}
	src := s.Random
	if src == nil {
		src = noise.NewSource()
	}
	// The test's outcome is output too (a failed test releases that it
	// failed): a seeded stream would let anyone who knows the seed read
	// the bit tested, so it is refused here, before the test, as the
	// label loop refuses it before the first label.
	if _, seeded := src.Seeded(); seeded && !s.Options.Experiment {
		return ensemble.Released{}, r, fmt.Errorf("PATE PTR: a seeded Random makes the test's noise reproducible: set ReleaseSpec.Options.Experiment to use one, and publish neither the labels nor the test's outcome")
	}
	s.Random = src
	// The test holds for the votes it tested: a row released must be the
	// row tested, whatever the reader reads the second time.
	s.Votes = &testedVotes{Reader: s.Votes, counts: counts}
	s.Accounted = &ensemble.Accounted{Accounting: "ptr", Queries: r.Queries, Fallback: r.Fallback,
		Total:  accountant.Total{Guarantee: r.Publish, DeltaFrom: accountant.BudgetDelta, Argument: PTRArgument, ArgumentSource: ptrSource},
		Budget: r.planned.budget,
		Test: func(ctx context.Context) (bool, error) {
			var err error
			r.Pass, err = acct.ptrTest(ctx, r, src)
			return r.Pass, err
		}}
	out, err := ensemble.Release(ctx, s)
	return out, r, err
}

// testedVotes reads the votes of a PTR release and stops, with an error,
// at a query whose counts are not those the test was drawn on: a file
// that changed between the test's read and the release's would otherwise
// be labelled under a test it did not pass.
type testedVotes struct {
	votefile.Reader
	counts [][]int
	err    error
}

func (v *testedVotes) Next() bool {
	if v.err != nil || !v.Reader.Next() {
		return false
	}
	q := v.Reader.Query()
	if i := q.Index - 1; i < len(v.counts) && !slices.Equal(q.Counts, v.counts[i]) {
		// The counts themselves stay out of the message: they are a
		// private query's votes.
		v.err = fmt.Errorf("PATE PTR: query %d (line %d) reads other votes than those the test was drawn on: the votes changed since they were tested, and no label of it is released", q.Index, q.Line)
		return false
	}
	return true
}

func (v *testedVotes) Err() error {
	if v.err != nil {
		return v.err
	}
	return v.Reader.Err()
}

// ptrSource names the result behind a PTR release's total.
const ptrSource = "generalized Propose-Test-Release (Redberg, Zhu and Wang 2023), with a Renyi bound tested (docs/pate.md)"

// ptrTest draws the test of plan r on the account's queries (ptrStatistic,
// then ptrDraw).
func (a *rdpAccount) ptrTest(ctx context.Context, r PTRResult, src *noise.Source) (bool, error) {
	g, err := a.ptrStatistic(ctx, r)
	if err != nil {
		return false, err
	}
	return ptrDraw(g, r, src)
}

// ptrStatistic returns, for plan r, the distance to instability that the
// test draws on (ptrDistance of the bound on the account's queries,
// ptrBound, its local sensitivity and the evaluation margin). It is a
// function of the votes.
func (a *rdpAccount) ptrStatistic(ctx context.Context, r PTRResult) (int, error) {
	f, ls, err := a.ptrBound(ctx, r.Order)
	if err != nil {
		return 0, err
	}
	margin, err := a.margin(r.Order)
	if err != nil {
		return 0, err
	}
	return ptrDistance(f, ls, margin, r.Proposal), nil
}

// ptrDistance returns the distance to instability of a bound f̂ whose
// local sensitivity at distance d is at most ls[d], against the proposal
// β_prop, with the evaluation margin m: -1 when f̂ > β_prop, else the
// largest k <= len(ls) with f̂ + Σ_{d<k} (ls[d] + m) <= β_prop. It changes
// by at most one between neighbouring votes, provided ls at a neighbour
// is at most ls[d + 1] (docs/pate.md), and is at least 0 only where
// f̂ <= β_prop.
func ptrDistance(f float64, ls []float64, margin, proposal float64) int {
	if !(f <= proposal) {
		return -1
	}
	g := 0
	for _, l := range ls {
		if f = outward.AddUp(f, outward.AddUp(l, margin)); !(f <= proposal) {
			break
		}
		g++
	}
	return g
}

// ptrDraw draws the test at distance to instability g: G from the
// discrete Gaussian of deviation 1 on ptrStep·Z centred at 0, from src,
// and passes when G <= clamp(u - z), u = (g + 1)/σ. Its pass probability
// is Φ(a), a within ptrSlack of clamp(u - z) (docs/pate.md): the step's
// share is at most ptrStep (the lattice sum of an increasing density
// against its integral), and the rounding of u - z at most 41·2^-53
// inside the clamp; the rounding of u is a factor within e^{±2^-52}, in
// ptrRound.
func ptrDraw(g int, r PTRResult, src *noise.Source) (bool, error) {
	a := ptrClampTo(float64(g+1)/r.Sigma - r.Margin)
	x, err := discrete.LatticeGaussian(src, 0, 1, ptrStep)
	if err != nil {
		return false, err
	}
	return x <= a, nil
}
