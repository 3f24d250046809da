package ledger

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/quotetest"
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
	// Headers hashed anew, their values long: an analyst's share (a name
	// beyond 200 bytes), a time, the ensemble (beyond 256 bytes).
	long := strings.Repeat("x", 300)
	header := string(seed[:bytes.IndexByte(seed, '\n')])
	for _, edit := range [][2]string{
		{`"ensemble":"`, `"ensemble":"` + long},
		{`"created"`, `"shares":{"` + long + `":0.5},"created"`},
		{`"created":"`, `"created":"` + long},
	} {
		f.Add(forgedHeader(header, edit[0], edit[1]))
	}

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
		} else {
			quotetest.Check(t, err.Error(), data, 2000)
		}
		if l, err := (Options{StateDir: state}).forRun(ctx, path); err == nil {
			_, _ = l.Balance()
			l.Close()
		} else {
			quotetest.Check(t, err.Error(), data, 2000)
		}
		if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, data) && !bytes.HasPrefix(data, b) {
			t.Errorf("reading the ledger changed it: %d bytes, were %d (%v)", len(b), len(data), err)
		}
	})
}

// forgedHeader returns the ledger of the header line header with its
// content's first old replaced by new and hashed anew, as one who can
// write the file can.
func forgedHeader(header, old, new string) []byte {
	const prefix = `{"prev":"","header":`
	j := strings.Replace(header[len(prefix):strings.LastIndex(header, `,"sha256":`)], old, new, 1)
	return []byte(prefix + j + `,"sha256":"` + chainHash(Version, "", "header", []byte(j)) + `"}` + "\n")
}
