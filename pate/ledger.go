package pate

import (
	"context"
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/provenance"
)

// RecordedIn returns the releases that the ledger l, read from path,
// charged: the reference a label file's header is checked against
// (AccountOptions.Recorded).
func RecordedIn(l *ledger.Ledger, path string) (*Recorded, error) {
	r := &Recorded{Ledger: path, ID: l.Header().ID, Ensemble: l.Header().Ensemble}
	err := l.Runs(func(s ledger.Spend) error {
		r.Releases = append(r.Releases, recordedRelease{Mechanism: s.Mechanism, PerQuery: accountant.Guarantee{Eps: s.Eps, Delta: s.Delta}, Labels: s.Queries})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// ChargeDraw charges one smooth-sensitivity draw of cost to the ledger at
// location (a file or a PostgreSQL URL; book holds your records of the
// ledgers) for the teachers b, before it is drawn (Once.Charge): one step of
// its (ε, δ) as converted, so that a zcdp-filter ledger refuses it (GNSS's
// RDP holds only below order 1/(2β): it has no zCDP slope). A budget with
// no room left for it is an ensemble.ErrBudget. notes hears what opening
// the ledger found worth telling.
func ChargeDraw(ctx context.Context, location string, b provenance.Binding, cost accountant.Guarantee, book ledger.Options, notes func([]string)) error {
	l, err := ledger.Open(ctx, location, book)
	if err != nil {
		return err
	}
	defer l.Close()
	allowed, err := l.Begin(gnssMechanism, b, accountant.ApproxStep(cost), 1)
	if err != nil {
		return err
	}
	notes(l.Notes())
	if allowed < 1 {
		return fmt.Errorf("%w: ledger %s: a smooth-sensitivity draw costs %v, beyond what its budget has left: nothing drawn", ensemble.ErrBudget, ledger.Redact(location), cost)
	}
	if err := l.Reserve(1); err != nil {
		return err
	}
	return l.Settle(1)
}

// LedgerCovers reports whether the total of the ledger at path (absolute,
// as the record of draws names it) covers everything the account's totals
// do, and so is the one to publish, as it is for the release it charged
// (aggregate's): the account is of labels whose header that ledger's
// records vouch for (AccountOptions.Recorded: Account refuses a header
// that names another ledger as the one the labels were charged to), and
// it charged every draw the account counts.
func (a *AccountResult) LedgerCovers(path string) bool {
	o := a.Options
	if o.Recorded == nil || o.Labels == nil || o.Labels.Meta() == nil {
		return false
	}
	for _, d := range a.Draws {
		if d.Ledger != path || d.Charged == nil {
			return false
		}
	}
	return true
}
