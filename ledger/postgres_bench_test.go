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

// BenchmarkPGReleaseSteps says where the time of a one-label release on a
// ledger goes, step by step (open: connect, find the ledger, take its
// lock, check the record and the lines after it; begin: the allowance;
// reserve and settle: an append each, committed synchronously, and the
// record's update; close), on a ledger file and on a ledger in a server of
// its own that syncs its writes to the disk as in production (the shared
// test server does not), and what a connection alone costs (its TCP and
// SCRAM exchange), in milliseconds per release.
func BenchmarkPGReleaseSteps(b *testing.B) {
	srv := pgtest.NewServer(b)
	db := srv.DB(b)
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1e9, Delta: 0.5}}
	g := accountant.ApproxStep(accountant.Guarantee{Eps: step.Eps, Delta: 1e-12})
	for _, c := range []struct{ name, location string }{
		{"file", newBenchLedger(b, "", budget)},
		{"postgres", newBenchLedger(b, pgURL(db, "steps"), budget)},
	} {
		b.Run(c.name, func(b *testing.B) {
			l := open(b, c.location)
			bd, err := l.Header().binding()
			l.Close()
			if err != nil {
				b.Fatal(err)
			}
			bk := Options{StateDir: b.TempDir()}
			var connect, opening, begin, reserve, settle, closing time.Duration
			lap := func(d *time.Duration, start time.Time) time.Time {
				now := time.Now()
				*d += now.Sub(start)
				return now
			}
			for b.Loop() {
				t := time.Now()
				if IsURL(c.location) {
					p, err := parsePG(c.location)
					if err != nil {
						b.Fatal(err)
					}
					conn, err := p.connect(ctx)
					if err != nil {
						b.Fatal(err)
					}
					closeConn(conn)
					t = lap(&connect, t)
				}
				l, err := bk.forRun(ctx, c.location)
				if err != nil {
					b.Fatal(err)
				}
				t = lap(&opening, t)
				if _, err := l.Begin(ctx, "darrm", bd, g, 1); err != nil {
					b.Fatal(err)
				}
				t = lap(&begin, t)
				if err := l.Reserve(ctx, 1); err != nil {
					b.Fatal(err)
				}
				t = lap(&reserve, t)
				if err := l.Settle(ctx, 1); err != nil {
					b.Fatal(err)
				}
				t = lap(&settle, t)
				l.Close()
				lap(&closing, t)
			}
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
			for _, m := range []struct {
				d    time.Duration
				unit string
			}{{connect, "connect-ms"}, {opening, "open-ms"}, {begin, "begin-ms"}, {reserve, "reserve-ms"}, {settle, "settle-ms"}, {closing, "close-ms"}} {
				b.ReportMetric(ms(m.d), m.unit)
			}
		})
	}
}
