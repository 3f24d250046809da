package ledger_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/provenance"
)

// A ledger's life: a team binds a new ledger to its teacher ensemble with
// a budget (NewHeader, with the filter a ledger open to any use takes,
// DefaultFilter) and creates it; a release opens it, begins its run with
// the privacy of each of its labels (here GNMax's on 250 teachers' counts,
// ensemble.New), learns how many the budget allows, reserves them before
// they leave and settles what left; every later release sees what was
// spent (Balance). The example keeps its ledger and the records of the
// user's ledgers in a folder of its own; the zero Options keep the
// records in $XDG_STATE_HOME/darrm.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "darrm-ledger-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	opts := ledger.Options{StateDir: filepath.Join(dir, "state")}
	path := filepath.Join(dir, "team.ledger")

	// 250 teachers, not private, each trained on a keyed-hash share of
	// the data: one record changes one vote.
	b := provenance.Binding{Ensemble: "pate-k250", Teachers: provenance.Teachers{K: 250, Relation: accountant.OneVote, Kind: provenance.Fixed, Partition: provenance.KeyedHash}}
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-5}}
	filter, err := ledger.DefaultFilter(b, budget)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := ledger.Create(ctx, path, ledger.NewHeader(b, budget, accountant.DefaultDeltaPrime, filter), opts); err != nil {
		log.Fatal(err)
	}

	agg, _, err := ensemble.New(ctx, ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 40}, 250, 10, accountant.Guarantee{}, ensemble.Options{})
	if err != nil {
		log.Fatal(err)
	}
	l, err := ledger.Open(ctx, path, opts)
	if err != nil {
		log.Fatal(err)
	}
	allowed, err := l.Begin(ctx, agg.Name(), b, agg.Privacy().Spend, 100)
	if err != nil {
		log.Fatal(err)
	}
	if err := l.Reserve(ctx, allowed); err != nil {
		log.Fatal(err)
	}
	// ... the labels leave ...
	if err := l.Settle(ctx, allowed); err != nil {
		log.Fatal(err)
	}
	bal, err := l.Balance()
	if err != nil {
		log.Fatal(err)
	}
	if err := l.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d labels of %v each allowed and released\n", allowed, agg.Privacy().Guarantee)
	fmt.Printf("spent %v by %v; to publish %v\n", bal.Total, bal.Composition, bal.Publish.Guarantee)
	// Output:
	// 100 labels of (0.170279, 1e-05)-DP each allowed and released
	// spent (1.35651, 1e-05)-DP by gdp-filter; to publish (2, 1e-05)-DP
}
