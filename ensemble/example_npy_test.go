package ensemble_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/votefile"
)

// A ledgered release from a NumPy file with its sidecar (Release's
// documentation shows its calls), in three of
// darrm's packages (votefile, ensemble, ledger): the class labels of 25
// non-private teachers on 60 queries (testdata/votes.npy) and the
// metadata header beside them (votes.npy.meta.json: the ensemble, its
// one-vote relation on keyed-hash shares, the teachers in rows).
// votefile.Open reads the votes with the sidecar; ledger.VotesHeader
// binds a ledger to the ensemble they state, with its budget, and
// ledger.Create makes it; the caller opens it for the run (ledger.Open)
// and Release labels the queries by GNMax on their counts, charged to the
// ledger before the labels leave. The same ledger.Options (where the
// records of the user's ledgers are kept) go to both ledger calls. (The
// example keeps its ledger and its records in a folder of its own; the
// zero Options keep the records in $XDG_STATE_HOME/darrm.)
func ExampleRelease_ledger() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "darrm-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	opts := ledger.Options{StateDir: filepath.Join(dir, "state")}
	path := filepath.Join(dir, "pate.ledger")

	votes, err := votefile.Open("testdata/votes.npy", votefile.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer votes.Close()
	h, err := ledger.VotesHeader(votes.Meta(), 2, 1e-5)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := ledger.Create(ctx, path, h, opts); err != nil {
		log.Fatal(err)
	}
	l, err := ledger.Open(ctx, path, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	out, err := ensemble.Release(ctx, ensemble.ReleaseSpec{
		Votes:     votes,
		Mechanism: ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 40},
		Ledger:    l,
		Sink:      ensemble.LabelSink{Path: filepath.Join(dir, "labels.csv")},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("header from %s\n", filepath.Base(votes.HeaderFile))
	fmt.Printf("%d labels released, each %v\n", out.Result.Released, out.Aggregator.Privacy().Guarantee)
	fmt.Printf("to publish: %v by %s\n", out.Publish.Guarantee, out.Publish.Name())
	// Output:
	// header from votes.npy.meta.json
	// 60 labels released, each (0.170279, 1e-05)-DP
	// to publish: (2, 1e-05)-DP by gdp-filter budget
}
