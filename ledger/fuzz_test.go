package ledger

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/darrm/darrm/accountant"
)

// FuzzLedgerFile: a ledger file of any content, read as a ledger is by
// `darrm ledger show` and `verify` and opened for a release, is read or
// refused with an error, never a panic; a ledger that reads gives its
// balance, total, runs and analysts, or an error, and reading it writes
// nothing to it. The seeds are a ledger with two runs, the same ledger
// cut, and its lines swapped.
func FuzzLedgerFile(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "seed.ledger")
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 5, Delta: 1e-3}}
	h := NewHeader(unique(bound), budget, 1e-5, simpleFilter(budget))
	if _, err := book.create(ctx, path, h, false); err != nil {
		f.Fatal(err)
	}
	for _, n := range []int{3, 2} {
		l, err := book.forRun(ctx, path)
		if err != nil {
			f.Fatal(err)
		}
		b, err := l.Header().binding()
		if err == nil {
			err = l.begin(ctx, "darrm", b, accountant.ApproxStep(step))
		}
		if err == nil {
			err = l.Reserve(ctx, n)
		}
		if err == nil {
			err = l.Settle(ctx, n)
		}
		l.Close()
		if err != nil {
			f.Fatal(err)
		}
	}
	seed, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	if l, err := (Options{StateDir: f.TempDir()}).readOnly(ctx, path); err != nil || l.RunCount() != 2 {
		f.Fatalf("the seed ledger does not read as two runs: %v", err)
	} else {
		l.Close()
	}
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	if ls := bytes.SplitAfter(seed, []byte("\n")); len(ls) > 2 {
		f.Add(bytes.Join([][]byte{ls[0], ls[2], ls[1]}, nil))
	}
	f.Add([]byte(`{"prev":"","header":{"version":5}}` + "\n"))

	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.ledger")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		state := t.TempDir()
		if l, err := (Options{StateDir: state}).readOnly(ctx, path); err == nil {
			_, _ = l.Balance()
			_, _ = l.Publish()
			_ = l.Runs(ctx, func(Spend) error { return nil })
			_, _ = l.Analysts(ctx)
			l.Close()
		}
		if l, err := (Options{StateDir: state}).forRun(ctx, path); err == nil {
			_, _ = l.Balance()
			l.Close()
		}
		if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, data) && !bytes.HasPrefix(data, b) {
			t.Errorf("reading the ledger changed it: %d bytes, were %d (%v)", len(b), len(data), err)
		}
	})
}
