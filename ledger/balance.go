package ledger

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/roots"
)

// compose returns the total of the spends seq by the ledger's filter, as
// r holds it (accountant.Sequence.FilterTotal), and whether they meet the budget:
// by the filter's halting rule; with a teachers' cap (fixed private
// teachers), only when the cap meets the budget or seq is empty, since
// the cap is the only bound of releases from fixed teachers
// (accountant.Cap) and the total, a composition, is then analysis.
func (l *Ledger) compose(r rule, seq accountant.Sequence) (accountant.Guarantee, bool, error) {
	var g accountant.Guarantee
	var fits bool
	var err error
	if l.header.Use != nil {
		g, fits, err = l.composeUse(seq)
	} else {
		g, fits, err = l.composeWithin(r, seq, 1)
	}
	if l.cap != nil {
		fits = seq.Steps == 0 || l.free()
	}
	return g, fits, err
}

// ruleFor returns the rule a run of labels that step describes is
// charged by: the ledger's, with, on a ledger whose first run chooses
// its filter and none has yet, the filter this run chooses
// (Header.firstRunFilter).
func (l *Ledger) ruleFor(step accountant.Spend) (rule, error) {
	r := l.chain.rule
	if !r.firstRun || r.filter != nil {
		return r, nil
	}
	f, err := l.header.firstRunFilter(l.memo, step)
	if err != nil {
		return r, err
	}
	r.filter = &f
	return r, nil
}

// composeWithin is compose on a ledger open to any use, against the
// fraction share of its budget: 1, or an analyst's share (Header.Shares;
// composeShare).
func (l *Ledger) composeWithin(r rule, seq accountant.Sequence, share float64) (accountant.Guarantee, bool, error) {
	budget := scaleBudget(l.header.Budget.Guarantee, share)
	var g accountant.Guarantee
	var fits bool
	var err error
	if f := r.filter; f != nil {
		g, fits, err = scaleFilter(*f, share).Total(seq, budget)
	} else {
		g, fits, err = seq.FilterTotal(l.header.Filter, budget)
	}
	return g, fits, err
}

// scaleBudget returns the fraction share of budget, of its ε and its δ.
func scaleBudget(budget accountant.Guarantee, share float64) accountant.Guarantee {
	return accountant.Guarantee{Eps: share * budget.Eps, Delta: share * budget.Delta}
}

// scaleFilter returns the filter f that holds the fraction share of a
// budget (scaleBudget): each part's share of δ scaled alike, so that they
// sum to the share's δ.
func scaleFilter(f accountant.Filter, share float64) accountant.Filter {
	scaled := accountant.Filter{Parts: slices.Clone(f.Parts)}
	for i := range scaled.Parts {
		scaled.Parts[i].Delta *= share
	}
	return scaled
}

// shareLabels returns the labels that a share f gives an analyst of a
// declared use of n labels: floor(f·n), with f·n raised by 1e-9 first,
// so that a share written in decimal gives the labels it means (0.29 of
// 100 is 29, though the double nearest 0.29 times 100 is below 29).
func shareLabels(f float64, n int) int {
	return int(math.Floor(f*float64(n) + 1e-9))
}

// shareBudget returns the part of a ledger with header h that the share
// f gives an analyst, as a guarantee: on a ledger open to any use, f of
// its budget; of a declared use, the exact composition of the first of
// its labels that the share gives (shareLabels), at the budget's δ.
func (h Header) shareBudget(m *accountant.Memo, f float64) (accountant.Guarantee, error) {
	if h.Use == nil {
		return scaleBudget(h.Budget.Guarantee, f), nil
	}
	if n := shareLabels(f, useSteps(h.Use)); n > 0 {
		return h.useSpent(m, n)
	}
	return accountant.Guarantee{}, nil
}

// ShareAllows returns how many labels that step describes a new ledger
// with header h allows an analyst whose share of it is f (Header.Shares),
// as a release holds them (allowance): of a declared use, floor(f·N) of
// its N labels (step is then the use's); on a ledger open to any use, the
// most whose composition by its filter meets both the budget and f of it,
// each label charged as a release charges it. A plan for an analyst's
// share counts by it.
func (h Header) ShareAllows(m *accountant.Memo, step accountant.Spend, f float64) (int, error) {
	if !(f > 0 && f <= 1) {
		return 0, paramError("shares", fmt.Sprint(f), "a share is a fraction of the budget in (0, 1]")
	}
	if h.Use != nil {
		return shareLabels(f, useSteps(h.Use)), nil
	}
	if len(h.Parts) == 0 {
		return 0, errors.New("ledger: a header with neither a declared use nor a filter's parts: not a new ledger's")
	}
	whole := accountant.Filter{Parts: h.Parts}
	c, err := whole.Charge(m, step, h.Budget.Guarantee)
	if err != nil {
		return 0, err
	}
	part, budget := scaleFilter(whole, f), scaleBudget(h.Budget.Guarantee, f)
	fits := func(k int) (bool, error) {
		seq, err := whole.Add(accountant.Sequence{}, c, k)
		if err != nil {
			return false, err
		}
		if _, ok, err := whole.Total(seq, h.Budget.Guarantee); err != nil || !ok {
			return false, err
		}
		_, ok, err := part.Total(seq, budget)
		return ok, err
	}
	if ok, err := fits(0); err != nil || !ok {
		return 0, err
	}
	n, err := roots.Last(0, accountant.CountLimit, fits)
	if errors.Is(err, roots.ErrLimitFits) {
		return accountant.CountLimit, nil
	}
	return n, err
}

// filterName names the composition that holds the ledger's runs as r
// holds them: its filter with its parts and their shares of δ, or its
// method.
func (l *Ledger) filterName(r rule) string {
	if r.filter != nil {
		return r.filter.String()
	}
	return l.header.Filter.String()
}

// method returns the composition that holds the ledger's runs as r holds
// them: the first part of its filter, or its header's method.
func (l *Ledger) method(r rule) accountant.Method {
	if r.filter != nil {
		return r.filter.Parts[0].Method
	}
	return l.header.Filter
}

// composeUse is compose on a ledger whose use is declared: the steps fit
// while they are within the run of the use being released (the whole use
// outside a run), and their total is the exact composition of the first
// seq.Steps steps of the use (analysis: what publishes is the whole use's,
// Balance.Publish).
func (l *Ledger) composeUse(seq accountant.Sequence) (accountant.Guarantee, bool, error) {
	end := useSteps(l.header.Use)
	if l.run != "" {
		end = l.useEnd
	}
	switch {
	case seq.Steps > end:
		return accountant.Guarantee{}, false, nil
	case seq.Steps == 0:
		return accountant.Guarantee{}, true, nil
	}
	g, err := l.header.useSpent(l.memo, seq.Steps)
	return g, true, err
}

// useSpent returns the exact composition of the first n > 0 steps of the
// declared use of a ledger with header h.
func (h Header) useSpent(m *accountant.Memo, n int) (accountant.Guarantee, error) {
	return useTotal(m, useAccount(h.Use, n, &h.Budget))
}

// useTotal returns the exact composition of the steps of a, an account of
// labels of a declared use with at least one, at its budget's δ.
func useTotal(m *accountant.Memo, a accountant.Account) (accountant.Guarantee, error) {
	t, err := a.Publish(m)
	if err == nil && t.Err != nil {
		err = t.Err
	}
	return t.Guarantee, err
}

// Spent returns what n labels that step describes spend on a new ledger
// with header h, as ledger show prints it once they are released (a
// realised cost: analysis), against the fraction share of the ledger (1:
// the whole; an analyst's share, Header.Shares, as AnalystSpend.Spent
// states it): for a declared use, the exact composition of its first n
// steps at the budget's δ (step is then the use's); on a ledger open to
// any use, their total by its filter held to share of its budget.
func (h Header) Spent(m *accountant.Memo, step accountant.Spend, n int, share float64) (accountant.Guarantee, error) {
	if n == 0 {
		return accountant.Guarantee{}, nil
	}
	if h.Use != nil {
		return h.useSpent(m, n)
	}
	if len(h.Parts) == 0 {
		return accountant.Guarantee{}, errors.New("ledger: a header with neither a declared use nor a filter's parts: not a new ledger's")
	}
	f := accountant.Filter{Parts: h.Parts}
	c, err := f.Charge(m, step, h.Budget.Guarantee)
	if err != nil {
		return accountant.Guarantee{}, err
	}
	seq, err := f.Add(accountant.Sequence{}, c, n)
	if err != nil {
		return accountant.Guarantee{}, err
	}
	g, _, err := scaleFilter(f, share).Total(seq, scaleBudget(h.Budget.Guarantee, share))
	return g, err
}

// free reports whether the teachers' cap is within the budget at the
// budget's δ (accountant.Cap.Fits: on shared data the teachers' composition
// with its slack chosen for that δ, whatever the ledger's δ').
func (l *Ledger) free() bool { return l.cap != nil && l.cap.Fits(l.header.Budget.Guarantee) }

// Balance is the state of a ledger's budget: what it has spent and its
// total to publish (Ledger.Balance) and, for labels of a step
// (Ledger.BalanceFor), how many more its budget allows. A release's
// summary states it as JSON.
type Balance struct {
	Ensemble string            `json:"ensemble"`
	Relation string            `json:"relation"`
	Budget   accountant.Budget `json:"budget"`
	// Total is the privacy spent: Queries, or the teachers' Cap when
	// there is one and anything was spent (accountant.Cap.Total); Bound
	// says which. Queries is the composition of every spend by the
	// ledger's filter, Composition (accountant.Sequence.FilterTotal).
	Total       accountant.Guarantee `json:"total"`
	Composition accountant.Method    `json:"composition"`
	Bound       accountant.Bound     `json:"total_bound"`
	Queries     accountant.Guarantee `json:"queries"`
	// Cap is the teachers' cap on every total, nil (JSON null, the key
	// kept, as the summary's every key is) when there is none.
	Cap *accountant.Cap `json:"cap"`
	// QueriesLeft is how many more labels of the step given to BalanceFor
	// the budget allows; nil (JSON null) when Free, and from Balance.
	QueriesLeft *int `json:"queries_left"`
	// Free says that the cap is within the budget: every further release
	// from these teachers is free, however many labels it has.
	Free bool `json:"free"`
	// FilterPending says that the ledger's first run chooses its filter
	// (Header.FirstRunFilter) and none has run: nothing is spent, and
	// Composition and Publish.Method are the zero Method, no filter's
	// (Balance; BalanceFor states the filter a run of its step would
	// choose). FilterChosen says that this run, the ledger's first, chose
	// its filter, Composition's.
	FilterPending bool `json:"-"`
	FilterChosen  bool `json:"filter_chosen,omitempty"`
	// Analyst and Share, on a ledger that gives analysts shares
	// (Header.Shares), name who charges the run and that analyst's part
	// of the ledger (Header.shareBudget; of a declared use, ShareLabels
	// of its labels), which QueriesLeft is held to as well; ShareBound
	// says that the share allows fewer than the budget does. AnalystSpent
	// is what the analyst's runs have spent, this one's included,
	// composed against the share as Share states it (AnalystSpend.Spent):
	// a realised cost, analysis. BalanceFor states them.
	Analyst      string                `json:"analyst,omitempty"`
	Share        *accountant.Guarantee `json:"share_budget,omitempty"`
	ShareLabels  int                   `json:"share_labels,omitempty"`
	AnalystSpent *accountant.Guarantee `json:"analyst_spent,omitempty"`
	ShareBound   bool                  `json:"share_bound,omitempty"`
	// Publish is the total to publish of every release charged to the
	// ledger: the budget its filter holds them to, fixed before the first
	// run; where runs of version 3, which no filter held, spent past the
	// budget by simple composition, that composition of every run
	// (pastBudgetArgument); with a teachers' cap, the cap at the budget's δ, and Err
	// (a *accountant.CapError) when it is not within the budget
	// (accountant.Account.Publish). Total, a composition of what was
	// spent, is a realised cost: analysis.
	Publish accountant.Total `json:"-"`
}

// Balance returns the privacy spent so far.
func (l *Ledger) Balance() (Balance, error) { return l.balance(l.chain.rule) }

// balance is Balance with the ledger's runs held as r holds them.
func (l *Ledger) balance(r rule) (Balance, error) {
	q, fits, err := l.compose(r, l.chain.spent)
	if err != nil {
		return Balance{}, err
	}
	m, h := l.method(r), l.header
	b := Balance{Ensemble: h.Ensemble, Relation: h.Relation, Budget: h.Budget, Queries: q, Composition: m, Cap: l.cap, Free: l.free(),
		FilterPending: r.firstRun && r.filter == nil, FilterChosen: l.chose && l.chain.rule.filter != nil}
	b.Total, b.Bound = l.cap.Total(q)
	b.Publish, err = l.header.publish(l.memo, m, l.cap)
	if err == nil && !fits && b.Publish.Filter && m == accountant.Simple && (h.Upgraded != nil || l.format == chained3) {
		// The runs of version 3 (read, or carried by an upgrade), which
		// took a run when general or optimal composition said it fitted, spent more
		// than the budget by simple composition: no filter held them to
		// it, so it is no guarantee of them. Their simple composition is
		// the least that is: a guarantee of runs whose sizes and settings
		// were fixed before the first, and, of runs chosen from earlier
		// labels, their realised total, which no filter stands behind (a
		// privacy odometer's reading, Rogers et al. 2016), said so. Its δ
		// is theirs, not the budget's, but the total is the ledger's, as a
		// declared use's is (LedgerDelta).
		b.Publish = accountant.Total{Method: accountant.Simple, Guarantee: q, DeltaFrom: accountant.LedgerDelta,
			Argument: pastBudgetArgument, ArgumentSource: accountant.Simple.Reference()}
	}
	return b, err
}

// pastBudgetArgument names the total to publish of a ledger whose runs
// of version 3 (read, or carried by an upgrade) spent more than its
// budget by simple composition (Balance.Publish): that composition, of
// every run. It is the one total of a ledger that an argument names.
const pastBudgetArgument = "simple composition of every run, past the budget"

// Publish returns the total to publish of every release charged to the
// ledger (Balance.Publish), this run's included: on a ledger whose first
// run chooses its filter, of the filter this run (Begin) chose.
func (l *Ledger) Publish() (accountant.Total, error) {
	r := l.chain.rule
	if l.run != "" {
		r = l.rule
	}
	b, err := l.balance(r)
	return b.Publish, err
}

// Publish returns the total to publish of every release charged to a
// ledger with header h, before any teachers' cap (Balance.Publish): its
// filter's budget, or for a declared use the composition of every label
// it allows.
func (h Header) Publish(m *accountant.Memo) (accountant.Total, error) {
	return h.publish(m, h.Filter, nil)
}

// publish is Publish of a ledger held by filter (the method of its
// filter's first part, which lines state when its first run chose it),
// with the teachers' cap c (nil: none), which is then the total alone.
func (h Header) publish(m *accountant.Memo, filter accountant.Method, c *accountant.Cap) (accountant.Total, error) {
	if h.Use != nil {
		// The whole use's total, fixed at init: a stop at any count is
		// post-processing of it.
		a := useAccount(h.Use, useSteps(h.Use), &h.Budget)
		a.Cap = c
		t, err := a.Publish(m)
		// The δ of the budget of a ledger, which every release on it is
		// charged to.
		t.DeltaFrom = accountant.LedgerDelta
		return t, err
	}
	return accountant.Account{Filter: &filter, Budget: &h.Budget, Cap: c}.Publish(m)
}

// allowance returns how many more labels that step describes the budget,
// and the share of this run's analyst when the ledger gives shares,
// allows (at most limit when limit >= 0): limit, or accountant.Unlimited
// when limit < 0, if the teachers' cap is within the budget; 0 if a cap
// is not (the cap is the only bound of fixed teachers). A budget
// that allows every label the accountant can still count allows
// accountant.CountLimit: more than any count it returns.
func (l *Ledger) allowance(step accountant.Spend, limit int) (int, error) {
	switch {
	case l.free():
		return limit, nil
	case l.cap != nil:
		return 0, nil
	}
	if l.header.Use != nil {
		return l.useAllowance(step, limit)
	}
	var charge *accountant.Charge
	r, err := l.ruleFor(step)
	if err != nil {
		return 0, nil
	}
	if r.filter != nil {
		c, err := r.charge(step)
		if err != nil {
			return 0, nil
		}
		charge = &c
	}
	s := spendOf(l.memo, l.version, "-", "", step, charge)
	fits := func(k int) (bool, error) {
		seq, err := r.add(l.chain.spent, s, k)
		if err != nil {
			return false, err
		}
		_, ok, err := l.compose(r, seq)
		if err != nil || !ok {
			return false, err
		}
		_, ok, err = l.withinShare(r, s, k)
		return ok, err
	}
	if ok, err := fits(0); err != nil || !ok {
		return 0, err
	}
	// Doubling, then bisection (roots.Last), never past limit nor past
	// the most steps the accountant composes after those spent.
	bound := accountant.CountLimit - l.chain.spent.Steps
	if limit >= 0 {
		bound = min(limit+1, bound)
	}
	n, err := roots.Last(0, bound, func(k int) (bool, error) {
		if limit >= 0 && k > limit {
			return false, nil
		}
		ok, _ := fits(k)
		return ok, nil
	})
	if errors.Is(err, roots.ErrLimitFits) {
		return accountant.CountLimit, nil
	}
	return n, err
}

// useAllowance is Allowance on a ledger whose use is declared: the labels
// left in the run of the use whose turn it is, when step is that run's
// (0 otherwise: such labels are refused).
func (l *Ledger) useAllowance(step accountant.Spend, limit int) (int, error) {
	spent := l.chain.spent.Steps
	i, end := l.header.UseTurn(spent)
	if _, err := l.matchUse(l.header.Use[i].Mechanism, step, spent); err != nil {
		return 0, nil
	}
	left := max(end-spent, 0)
	if l.share != nil {
		f := l.header.Shares[l.analyst]
		left = min(left, max(shareLabels(f, useSteps(l.header.Use))-l.mine.Steps-l.held, 0))
	}
	if limit >= 0 {
		left = min(left, limit)
	}
	return left, nil
}

// BalanceFor returns the ledger's balance (Balance) with how many more
// labels that step describes its budget allows, unless every further
// release is free, and, on a ledger that gives shares, this run's
// analyst's share. On a ledger whose first run chooses its filter and
// none has run, its composition and total to publish are those of the
// filter a run of step would choose.
func (l *Ledger) BalanceFor(step accountant.Spend) (Balance, error) {
	r, err := l.ruleFor(step)
	if err != nil {
		r = l.chain.rule // no filter holds step: allowance says 0
	}
	st, err := l.balance(r)
	if err != nil {
		return Balance{}, err
	}
	h := l.header
	if !st.Free {
		left, err := l.allowance(step, -1)
		if err != nil {
			return Balance{}, err
		}
		st.QueriesLeft = &left
	}
	if l.share != nil {
		st.Analyst, st.Share = l.analyst, l.share
		if h.Use != nil {
			st.ShareLabels = shareLabels(h.Shares[l.analyst], useSteps(h.Use))
		}
		if l.run != "" {
			spent, _, err := l.composeShare(l.rule, l.mine, l.mineUse, h.Shares[l.analyst], true)
			if err != nil {
				return Balance{}, err
			}
			st.AnalystSpent = &spent
		}
		if left := st.QueriesLeft; left != nil {
			// The budget's own allowance, with the share set aside.
			share := l.share
			l.share = nil
			all, err := l.allowance(step, *left+1)
			l.share = share
			if err != nil {
				return Balance{}, err
			}
			st.ShareBound = all > *left
		}
	}
	return st, nil
}

// withinShare returns the total by the ledger's filter of the spends of
// this run's analyst, with k more labels of s after the labels this run
// holds, and whether they meet the analyst's share (composeShare):
// always, when the ledger gives no shares or the teachers' cap frees
// every release.
func (l *Ledger) withinShare(r rule, s Spend, k int) (accountant.Guarantee, bool, error) {
	if l.share == nil || l.free() {
		return accountant.Guarantee{}, true, nil
	}
	seq, err := r.add(l.mine, s, k)
	if err != nil {
		return accountant.Guarantee{}, false, err
	}
	return l.composeShare(r, seq, l.mineUse, l.header.Shares[l.analyst], true)
}

// composeShare returns the total of an analyst's spends seq, and whether
// they meet the analyst's share f of the ledger: on a ledger open to any
// use, their composition by its filter against f of its budget
// (composeWithin); of a declared use, whether their labels are within
// those the share gives (shareLabels), and the exact composition at the
// budget's δ of the analyst's labels of each run of the use, use (the
// labels of seq beyond them, a count to check, are not composed). With
// held, the labels this run holds are added first.
func (l *Ledger) composeShare(r rule, seq accountant.Sequence, use []int, f float64, held bool) (accountant.Guarantee, bool, error) {
	if held && l.held > 0 {
		var err error
		if seq, err = r.add(seq, spendOf(l.memo, l.version, l.run, l.mech, l.step, l.charge), l.held); err != nil {
			return accountant.Guarantee{}, false, err
		}
		if l.header.Use != nil {
			use = useLabels(l.header.Use, slices.Clone(use), l.base.Steps, l.held)
		}
	}
	if l.header.Use == nil {
		return l.composeWithin(r, seq, f)
	}
	g, err := l.header.usedSpent(l.memo, use)
	return g, seq.Steps <= shareLabels(f, useSteps(l.header.Use)), err
}

// usedSpent returns the exact composition, at the budget's δ, of counts[i]
// labels of each run i of the declared use of a ledger with header h: what
// labels released in those runs, by whichever analysts, spend.
func (h Header) usedSpent(m *accountant.Memo, counts []int) (accountant.Guarantee, error) {
	a := useCounts(h.Use, counts, &h.Budget)
	if a.Steps == 0 {
		return accountant.Guarantee{}, nil
	}
	return useTotal(m, a)
}

// AnalystSpend is what the runs of one analyst have spent of a ledger.
type AnalystSpend struct {
	// Analyst is who charged the runs ("" for runs that name no one).
	Analyst string `json:"analyst"`
	Runs    int    `json:"runs"`
	Labels  int    `json:"labels"`
	// Spent is the composition of the analyst's runs by the ledger's
	// filter: a realised cost (analysis), not a guarantee; the total to
	// publish is the ledger's (Balance.Publish), whoever spent it.
	Spent accountant.Guarantee `json:"spent"`
	// Share is the analyst's fraction and ShareBudget that part of the
	// ledger, when the ledger gives shares (Header.Shares): of a declared
	// use, ShareLabels of its labels, composed exactly at the budget's
	// δ. Spent is then composed against the share: by the filter at the
	// share's δ on a ledger open to any use, exactly at the budget's δ
	// (as ShareBudget) of a declared use.
	Share       float64               `json:"share,omitempty"`
	ShareBudget *accountant.Guarantee `json:"share_budget,omitempty"`
	ShareLabels int                   `json:"share_labels,omitempty"`
	seq         accountant.Sequence
	// use, of a declared use, is the analyst's labels of each of its runs.
	use []int
}

// Analysts returns the spends of each analyst who charged the ledger, in
// the order of their first runs, then the analysts given a share who have
// not charged it yet. It reads the ledger again from its start.
func (l *Ledger) Analysts(ctx context.Context) ([]AnalystSpend, error) {
	var sums []AnalystSpend
	index := map[string]int{}
	add := func(name string) *AnalystSpend {
		i, ok := index[name]
		if !ok {
			i = len(sums)
			index[name] = i
			sums = append(sums, AnalystSpend{Analyst: name})
		}
		return &sums[i]
	}
	err := l.Runs(ctx, func(s Spend) error {
		a := add(s.Analyst)
		if l.header.Use != nil && s.Prior != nil {
			a.use = useLabels(l.header.Use, a.use, s.Prior.Steps, s.Queries)
		}
		seq, err := l.chain.rule.add(a.seq, s, s.Queries)
		a.seq, a.Runs, a.Labels = seq, a.Runs+1, a.Labels+s.Queries
		return err
	})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(l.header.Shares))
	for name := range l.header.Shares {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		add(name)
	}
	for i := range sums {
		a := &sums[i]
		f, ok := l.header.Shares[a.Analyst]
		switch {
		case !ok && l.header.Use != nil:
			// The analyst's own labels of each run, not the use's first.
			if a.Spent, err = l.header.usedSpent(l.memo, a.use); err != nil {
				return nil, err
			}
			continue
		case !ok:
			if a.Spent, _, err = l.compose(l.chain.rule, a.seq); err != nil {
				return nil, err
			}
			continue
		}
		share, err := l.header.shareBudget(l.memo, f)
		if err != nil {
			return nil, err
		}
		a.Share, a.ShareBudget = f, &share
		if l.header.Use != nil {
			a.ShareLabels = shareLabels(f, useSteps(l.header.Use))
		}
		if a.Spent, _, err = l.composeShare(l.chain.rule, a.seq, a.use, f, false); err != nil {
			return nil, err
		}
	}
	return sums, nil
}

// checkHeld reports as damage a ledger open to any use whose runs spend
// past its budget by its filter: the filter held every release to the
// budget (allowance), which is the total the ledger publishes, so no
// release writes the line that passes it. A ledger of fixed private
// teachers, whose releases the teachers' cap bounds, is not held by its
// filter. Totals within the budget taken a relative heldSlack wider in ε
// pass too, so that the same totals computed by another build's darrm,
// other in their last digits, pass (a wider ε loosens every part's rule
// but the one on a Gaussian-DP part's tails, which the exact budget
// then decides).
func (l *Ledger) checkHeld() error {
	f := l.chain.rule.filter
	if f == nil || l.cap != nil {
		return nil
	}
	budget := l.header.Budget.Guarantee
	g, fits, err := f.Total(l.chain.spent, budget)
	if err == nil && !fits {
		budget.Eps *= 1 + heldSlack
		_, fits, err = f.Total(l.chain.spent, budget)
	}
	if err != nil || fits {
		// An error of the filter's total is Balance's to report: it
		// composes the same runs by the same filter (composeWithin).
		return nil
	}
	return &CorruptError{Path: l.path, Line: l.chain.n, Reason: fmt.Sprintf("the runs up to this line spend %v by the ledger's filter %v, past its budget %v, which the filter holds every release to: no release writes this line", g, *f, l.header.Budget.Guarantee)}
}

// heldSlack is the relative margin of checkHeld.
const heldSlack = 1e-9
