package pate

import (
	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ledger"
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
