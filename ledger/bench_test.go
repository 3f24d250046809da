package ledger

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/darrm/darrm/accountant"
)

// largeLedger writes a ledger of runs runs, each a reservation and a
// settlement of one label of step, as releases would have written them,
// and records it.
func largeLedger(tb testing.TB, runs int) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "large.ledger")
	b := unique(bound)
	if _, err := book.create(ctx, path, NewHeader(b, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1e9, Delta: 0.5}}, 1e-5, simpleFilter(accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1e9, Delta: 0.5}})), false); err != nil {
		tb.Fatal(err)
	}
	l := open(tb, path)
	head, seq, size, hh := l.Head(), l.Spent(), l.size, l.headerHash
	h := l.Header()
	l.Close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	now := time.Now().UTC()
	for i := range runs {
		prior := seq
		for _, final := range []bool{false, true} {
			line, hash, err := encodeLine(Version, head, Spend{Run: fmt.Sprintf("%016x", i), Time: now, Mechanism: "darrm", Eps: step.Eps, Delta: 1e-12, Queries: 1, Final: final, Prior: &prior})
			if err != nil {
				tb.Fatal(err)
			}
			w.Write(line)
			head, size = hash, size+int64(len(line))
		}
		if seq, err = seq.AddSpend(accountant.ApproxStep(accountant.Guarantee{Eps: step.Eps, Delta: 1e-12}), 1); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	st, err := openState(Options{}, h.Ensemble)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.close()
	fi, _ := os.Stat(path)
	dev, ino := fileID(fi)
	if err := st.write(ctx, newRecord(h, hh, path, dev, ino, 1+2*runs, size, head)); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkReleaseOnLargeLedger times what a ledger adds to a release of
// one label (open and check the ledger against its record, the allowance,
// the reservation, the settlement, and the status the summary prints) on
// a new ledger and on one of a million runs (about 1.1 GB, written once
// before the timing). The record vouches for the last line, so a release
// reads that line and the header, whatever the length of the ledger.
func BenchmarkReleaseOnLargeLedger(b *testing.B) {
	for _, runs := range []int{0, 1_000_000} {
		b.Run(fmt.Sprintf("runs=%d", runs), func(b *testing.B) {
			path := largeLedger(b, runs)
			g := accountant.Guarantee{Eps: step.Eps, Delta: 1e-12}
			l := open(b, path)
			bd, err := l.Header().binding()
			l.Close()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				l, allowed, err := openRun(ctx, book, path, "darrm", bd, accountant.ApproxStep(g), 1)
				if err != nil || allowed != 1 {
					b.Fatalf("allowance %d: %v", allowed, err)
				}
				if err := l.Reserve(ctx, 1); err != nil {
					b.Fatal(err)
				}
				if err := l.Settle(ctx, 1); err != nil {
					b.Fatal(err)
				}
				if _, err := l.BalanceFor(accountant.ApproxStep(g)); err != nil {
					b.Fatal(err)
				}
				l.Close()
			}
		})
	}
}

// declaredLedger writes a ledger whose use is declared, of runs runs of
// a one-bit step of 41 dominating pairs (as DaRRM's at K = 11, m = 3),
// each a reservation and a settlement of two labels, as releases would
// have written them, charged by the analysts in turn, who have shares
// when there are several.
func declaredLedger(tb testing.TB, runs int, analysts []string) string {
	tb.Helper()
	var bits []accountant.BitPair
	for j := range 41 {
		bits = append(bits, accountant.BitPair{P: 0.6 - 0.005*float64(j), Q: 0.4 - 0.006*float64(j)})
	}
	step := accountant.Spend{Kind: accountant.OneBitSpend, Guarantee: accountant.Guarantee{Eps: 1}, Bits: bits}
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1e4, Delta: 0.5}}
	h, err := NewUseHeader(ctx, nil, unique(oneVote), budget, 1e-5, []UseRun{{Mechanism: "darrm-one-vote", Step: step, Labels: 2 * runs}})
	if err != nil {
		tb.Fatal(err)
	}
	if len(analysts) > 1 {
		h.Shares = map[string]float64{}
		for _, a := range analysts {
			h.Shares[a] = 1 / float64(len(analysts))
		}
	}
	path := filepath.Join(tb.TempDir(), "declared.ledger")
	if _, err := book.create(ctx, path, h, false); err != nil {
		tb.Fatal(err)
	}
	l := open(tb, path)
	head, seq, size := l.Head(), l.Spent(), l.size
	l.Close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	now := time.Now().UTC()
	var held *bitsAt
	for i := range runs {
		prior := seq
		for _, final := range []bool{false, true} {
			s := spendOf(nil, Version, fmt.Sprintf("%016x", i), "darrm-one-vote", step, nil)
			if held != nil {
				s.Bits, s.BitsAt = nil, held
			}
			s.Analyst, s.Time, s.Queries, s.Final, s.Prior = analysts[i%len(analysts)], now, 2, final, &prior
			line, hash, err := encodeLine(Version, head, s)
			if err != nil {
				tb.Fatal(err)
			}
			w.Write(line)
			head, size = hash, size+int64(len(line))
			if held == nil {
				held = &bitsAt{Line: 2, End: size}
			}
		}
		if seq, err = seq.AddSpend(accountant.ApproxStep(step.Guarantee), 2); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	return path
}

// BenchmarkReadDeclaredUse times a read of every line (ledger verify) of
// a ledger of 1,000 runs whose use is declared, of one analyst and of two
// taking turns, each run's first line after a line of the other's.
func BenchmarkReadDeclaredUse(b *testing.B) {
	for _, analysts := range [][]string{{""}, {"alice", "bob"}} {
		b.Run(fmt.Sprintf("analysts=%d", len(analysts)), func(b *testing.B) {
			path := declaredLedger(b, 1000, analysts)
			b.ReportAllocs()
			for b.Loop() {
				l, err := book.readOnly(ctx, path)
				if err != nil {
					b.Fatal(err)
				}
				l.Close()
			}
		})
	}
}
