package ledger

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/pgtest"
)

// BenchmarkPGReleases times what a ledger adds to a release of one label
// (BenchmarkReleaseOnLargeLedger's steps: open and check against the
// record, the allowance, the reservation, the settlement, the status) on
// a ledger in the local test server, against the same on a ledger file,
// and, with workers > 1, that many workers releasing on one PostgreSQL
// ledger at once, each with records of its own (as on other machines):
// their runs are serialised by the ledger's lock, so the releases per
// second of all of them (releases/s) say what a team's ledger takes. Any
// error fails it.
func BenchmarkPGReleases(b *testing.B) {
	db := pgtest.DB(b)
	g := accountant.ApproxStep(accountant.Guarantee{Eps: step.Eps, Delta: 1e-12})
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1e9, Delta: 0.5}}
	file := newBenchLedger(b, "", budget)
	for _, c := range []struct {
		name     string
		location string
		workers  int
	}{
		{"file", file, 1},
		{"postgres/workers=1", newBenchLedger(b, pgURL(db, "w1"), budget), 1},
		{"postgres/workers=2", newBenchLedger(b, pgURL(db, "w2"), budget), 2},
		{"postgres/workers=4", newBenchLedger(b, pgURL(db, "w4"), budget), 4},
		{"postgres/workers=8", newBenchLedger(b, pgURL(db, "w8"), budget), 8},
	} {
		b.Run(c.name, func(b *testing.B) {
			l := open(b, c.location)
			bd, err := l.Header().binding()
			l.Close()
			if err != nil {
				b.Fatal(err)
			}
			books := make([]Options, c.workers)
			for i := range books {
				books[i] = Options{StateDir: b.TempDir()}
			}
			release := func(bk Options) error {
				l, allowed, err := openRun(ctx, bk, c.location, "darrm", bd, g, 1)
				if err != nil || allowed != 1 {
					return fmt.Errorf("allowance %d: %v", allowed, err)
				}
				defer l.Close()
				if err := l.Reserve(ctx, 1); err != nil {
					return err
				}
				if err := l.Settle(ctx, 1); err != nil {
					return err
				}
				_, err = l.BalanceFor(g)
				return err
			}
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			var mu sync.Mutex
			var failed error
			next := make(chan struct{})
			for _, bk := range books {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range next {
						if err := release(bk); err != nil {
							mu.Lock()
							failed = err
							mu.Unlock()
						}
					}
				}()
			}
			for b.Loop() {
				next <- struct{}{}
			}
			close(next)
			wg.Wait()
			if failed != nil {
				b.Fatal(failed)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "releases/s")
		})
	}
}

// newBenchLedger makes a ledger at location (a new file when "") with
// budget, for an ensemble of its own, and returns its location.
func newBenchLedger(b *testing.B, location string, budget accountant.Budget) string {
	if location == "" {
		location = b.TempDir() + "/bench.ledger"
	}
	if _, err := book.create(ctx, location, NewHeader(unique(bound), budget, 1e-5, simpleFilter(budget)), false); err != nil {
		b.Fatal(err)
	}
	return location
}
