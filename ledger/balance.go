package ledger

import (
	"fmt"

	"github.com/darrm/darrm/accountant"
)

// Total returns the total privacy of the spends, with the composition
// that gave it, and of extra more labels of guarantee step.
func (l *Ledger) total(step accountant.Guarantee, extra int) (accountant.Guarantee, string, error) {
	var runs []accountant.Run
	add := func(g accountant.Guarantee, k int) {
		if k == 0 {
			return
		}
		for i := range runs {
			if runs[i].Step == g {
				runs[i].K += k
				return
			}
		}
		runs = append(runs, accountant.Run{Step: g, K: k})
	}
	for _, s := range l.spends {
		add(accountant.Guarantee{Eps: s.Eps, Delta: s.Delta}, s.Queries)
	}
	add(step, extra)
	return Compose(runs, l.header.DeltaPrime)
}

// Balance is what a ledger has spent.
type Balance struct {
	// Total is the privacy spent: the smaller of Queries and the
	// teachers' Cap, one that meets the budget if either does
	// (accountant.CapTotal); Bound says which.
	Total accountant.Guarantee
	Bound accountant.Bound
	// Queries is the composition of every spend, by Composition.
	Queries     accountant.Guarantee
	Composition string
	// Cap is the teachers' cap on every total, nil when there is none.
	Cap *accountant.Cap
	// Free says that the cap is within the budget: every further release
	// from these teachers is free, however many labels it has.
	Free bool
}

// Balance returns the privacy spent so far.
func (l *Ledger) Balance() (Balance, error) {
	q, method, err := l.total(accountant.Guarantee{}, 0)
	if err != nil {
		return Balance{}, err
	}
	b := Balance{Queries: q, Composition: method, Cap: l.cap, Free: l.cap != nil && l.cap.Within(l.header.Budget)}
	b.Total, b.Bound = accountant.CapTotal(q, l.cap, &l.header.Budget)
	return b, nil
}

// Total returns the total privacy spent so far (Balance: the smaller of
// the composition and the teachers' cap) and how it was obtained: the
// composition's name, or "teachers' cap".
func (l *Ledger) Total() (accountant.Guarantee, string, error) {
	b, err := l.Balance()
	if b.Bound == accountant.TeachersBound {
		return b.Total, "teachers' cap (" + b.Cap.Rule() + ")", err
	}
	return b.Total, b.Composition, err
}

// within reports whether spends of composition q meet the budget: q does,
// or the teachers' cap, which bounds them too, does.
func (l *Ledger) within(q accountant.Guarantee) bool {
	b := l.header.Budget
	return q.Within(b) || l.cap != nil && l.cap.Within(b)
}

// Compose returns the total of a sequence of steps, given as runs of equal
// steps: optimal composition with slack deltaPrime when all steps are equal
// (and there are at most accountant.MaxOptimalSteps), heterogeneous general
// composition otherwise, or simple composition when it is no larger in
// either ε or δ; and the name of the composition used.
func Compose(runs []accountant.Run, deltaPrime float64) (accountant.Guarantee, string, error) {
	if len(runs) == 0 {
		return accountant.Guarantee{}, "none", nil
	}
	simple, err := accountant.ComposeSimpleSeq(runs)
	if err != nil {
		return accountant.Guarantee{}, "", err
	}
	var adv accountant.Guarantee
	name := "general (heterogeneous)"
	if len(runs) == 1 && runs[0].K <= accountant.MaxOptimalSteps {
		adv, err = accountant.ComposeOptimal(runs[0].Step, runs[0].K, deltaPrime)
		name = "optimal"
	} else {
		adv, err = accountant.ComposeGeneralSeq(runs, deltaPrime)
	}
	if err != nil {
		return accountant.Guarantee{}, "", err
	}
	if simple.Eps <= adv.Eps && simple.Delta <= adv.Delta {
		return simple, "simple", nil
	}
	return adv, name, nil
}

// maxAllowance bounds the search of Allowance.
const maxAllowance = 1 << 50

// Allowance returns how many more labels of guarantee step the budget
// allows (at most limit when limit >= 0): limit, or accountant.Unlimited
// when limit < 0, if the teachers' cap is within the budget.
func (l *Ledger) Allowance(step accountant.Guarantee, limit int) (int, error) {
	if l.cap != nil && l.cap.Within(l.header.Budget) {
		return limit, nil
	}
	fits := func(k int) (bool, error) {
		g, _, err := l.total(step, k)
		return err == nil && l.within(g), err
	}
	if ok, err := fits(0); err != nil || !ok {
		return 0, err
	}
	lo, hi := 0, 1
	for {
		if limit >= 0 && hi > limit {
			hi = limit + 1
			break
		}
		if hi > maxAllowance {
			return 0, fmt.Errorf("ledger %s: more than %d labels of %v fit in the budget", l.path, maxAllowance, step)
		}
		ok, _ := fits(hi)
		if !ok {
			break
		}
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if ok, _ := fits(mid); ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// Status is the state of a ledger as a release reports it.
type Status struct {
	Ensemble string               `json:"ensemble"`
	Relation string               `json:"relation"`
	Budget   accountant.Guarantee `json:"budget"`
	// Total is the privacy spent so far, the smaller of the composition
	// of the spends (Queries, by Composition) and the teachers' Cap;
	// TotalBound says which.
	Total       accountant.Guarantee `json:"total"`
	Composition string               `json:"composition"`
	TotalBound  accountant.Bound     `json:"total_bound"`
	Queries     accountant.Guarantee `json:"queries"`
	Cap         *accountant.Cap      `json:"cap,omitempty"`
	// QueriesLeft is how many more labels of the guarantee given to
	// Status the budget allows: -1 when every further release is free
	// (Free: the teachers' cap is within the budget).
	QueriesLeft int  `json:"queries_left"`
	Free        bool `json:"free"`
}

// Status returns the ledger's budget, its total so far, and how many more
// labels of guarantee step its budget allows.
func (l *Ledger) Status(step accountant.Guarantee) (Status, error) {
	b, err := l.Balance()
	if err != nil {
		return Status{}, err
	}
	left, err := l.Allowance(step, -1)
	if err != nil {
		return Status{}, err
	}
	h := l.header
	return Status{Ensemble: h.Ensemble, Relation: h.Relation, Budget: h.Budget, Total: b.Total, Composition: b.Composition,
		TotalBound: b.Bound, Queries: b.Queries, Cap: b.Cap, QueriesLeft: left, Free: b.Free}, nil
}
