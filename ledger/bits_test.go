package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/provenance"
)

// testPairs returns n pairs of a one-bit release (a DaRRM label's, as
// far as the ledger can tell: Pr[1] on neighbouring inputs, their loss
// at most about 0.3), most of them inside the envelope of a few; seed
// draws them.
func testPairs(n int, seed uint64) []accountant.BitPair {
	rng := rand.New(rand.NewPCG(seed, 3))
	out := make([]accountant.BitPair, n)
	for i := range out {
		p := 0.05 + 0.9*rng.Float64()
		out[i] = accountant.BitPair{P: p, Q: p * math.Exp(-0.29*rng.Float64())}
	}
	return out
}

// bitRun runs one run of labels of the one-bit release of pairs, of
// guarantee step, on the ledger at location with bk: it reserves
// reserve labels and settles settle of them.
func bitRun(t *testing.T, bk Options, location string, pairs []accountant.BitPair, reserve, settle int) {
	t.Helper()
	l, err := bk.forRun(ctx, location)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.begin(ctx, "darrm", binding(t, l), accountant.Spend{Kind: accountant.OneBitSpend, Guarantee: step, Bits: pairs}); err != nil {
		t.Fatal(err)
	}
	if err := l.Reserve(ctx, reserve); err != nil {
		t.Fatal(err)
	}
	if err := l.Settle(ctx, settle); err != nil {
		t.Fatal(err)
	}
}

// editSpend returns raw, a spend's JSON, with edit applied to the spend.
func editSpend(t *testing.T, raw string, edit func(s *Spend)) string {
	t.Helper()
	var s Spend
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatal(err)
	}
	edit(&s)
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// cheaper charges a label of the spend raw ε = 0.001 by the simple
// filter instead of what it charged.
func cheaper(t *testing.T, raw string) string {
	return editSpend(t, raw, func(s *Spend) { s.Charge.Point.Eps = 0.001 })
}

// spendsOf returns the spends of the lines of the ledger at path, by
// line number (nil for the header).
func spendsOf(t *testing.T, path string) map[int]Spend {
	t.Helper()
	out := map[int]Spend{}
	for i, b := range lines(t, path) {
		var ln line
		if b == "" {
			continue
		}
		if err := json.Unmarshal([]byte(b), &ln); err != nil {
			t.Fatal(err)
		}
		if ln.Spend != nil {
			var s Spend
			json.Unmarshal(*ln.Spend, &s)
			out[i+1] = s
		}
	}
	return out
}

// TestOneBitCharges: a one-bit release's lines keep its pairs once, the
// few that dominate the others, and a read recomputes every line's
// charge from them: a charge edited, on the line that holds the pairs or
// on one that names it, the chain hashed again, fails at that line with
// the charge it should be; so do pairs edited (their digest no longer
// theirs), a line that names a line without them, and a line without
// them after one with them. A ledger whose lines have none (written
// before darrm kept them) reads with a note that their charges were not
// recomputed.
func TestOneBitCharges(t *testing.T) {
	listA, listB := testPairs(3000, 1), testPairs(2000, 2)
	// Runs of A (lines 2 and 3), A again (4, 5) and B (6, 7).
	made := func(t *testing.T) string {
		path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 4, Delta: 1e-3}})
		bitRun(t, book, path, listA, 2, 2)
		bitRun(t, book, path, listA, 3, 2)
		bitRun(t, book, path, listB, 1, 1)
		return path
	}
	path := made(t)
	spends := spendsOf(t, path)
	kept := accountant.Spend{Kind: accountant.OneBitSpend, Bits: listA}.Dominating(nil).Bits
	if len(kept) >= len(listA)/10 || len(spends[2].Bits) != len(kept) || spends[2].BitsSHA256 != bitsDigest(kept) {
		t.Fatalf("line 2 holds %d pairs of digest %s; want the %d of %d that dominate the others", len(spends[2].Bits), spends[2].BitsSHA256, len(kept), len(listA))
	}
	for n, want := range map[int]int{3: 2, 4: 2, 5: 2, 7: 6} {
		if s := spends[n]; s.Bits != nil || s.BitsAt == nil || s.BitsAt.Line != want {
			t.Errorf("line %d: %d pairs, named at %+v; want line %d named", n, len(s.Bits), s.BitsAt, want)
		}
	}
	if spends[6].Bits == nil || spends[6].BitsSHA256 == spends[2].BitsSHA256 {
		t.Errorf("line 6, of a second list, holds %d pairs", len(spends[6].Bits))
	}
	if err := readErr(path); err != nil {
		t.Fatal(err)
	}
	chargeLine := func(n int) string {
		s := spends[n]
		c, err := (&accountant.Filter{Parts: simpleFilter(accountant.Budget{Guarantee: accountant.Guarantee{Eps: 4, Delta: 1e-3}}).Parts}).Charge(nil, s.charged(kept), accountant.Guarantee{Eps: 4, Delta: 1e-3})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(c)
		return string(b)
	}

	for name, tc := range map[string]struct {
		edit   func(n int, raw string) string
		line   int
		reason string
	}{
		"charge of the line that holds the pairs": {func(n int, raw string) string {
			if n == 2 || n == 3 {
				return cheaper(t, raw)
			}
			return raw
		}, 2, "charges its step, " + chargeLine(2)},
		"charge of a line that names them": {func(n int, raw string) string {
			if n == 4 || n == 5 {
				return cheaper(t, raw)
			}
			return raw
		}, 4, "charges its step, " + chargeLine(4)},
		"a pair edited": {func(n int, raw string) string {
			if n == 2 {
				return editSpend(t, raw, func(s *Spend) { s.Bits[0].Q /= 2 })
			}
			return raw
		}, 2, "the pairs or the digest were changed"},
		"a line named that holds other pairs": {func(n int, raw string) string {
			if n == 5 {
				return editSpend(t, raw, func(s *Spend) { s.BitsAt.Line = 3 })
			}
			return raw
		}, 5, "holds no pair list of digest"},
		"a line without the pairs after one with them": {func(n int, raw string) string {
			if n == 5 {
				return editSpend(t, raw, func(s *Spend) { s.BitsAt = nil })
			}
			return raw
		}, 5, "without its pairs"},
	} {
		path := made(t)
		resign(t, path, tc.edit)
		corruptAt(t, name, readErr(path), tc.line, tc.reason)
		corruptAt(t, name+", a release without a record", openErr(path, Options{StateDir: t.TempDir()}), tc.line, tc.reason)
	}

	// A charge below its step's cost only in rounding, as a darrm built
	// otherwise before charges carried a margin states it, is refused all
	// the same, saying so instead of asking for a restore; one that
	// differs by more is an edit.
	for _, tc := range []struct {
		name     string
		scale    func(float64) float64
		rounding bool
	}{
		{"an ulp lower", func(x float64) float64 { return math.Nextafter(x, 0) }, true},
		{"two ulps lower", func(x float64) float64 { return math.Nextafter(math.Nextafter(x, 0), 0) }, true},
		{"a millionth lower", func(x float64) float64 { return x * (1 - 1e-6) }, false},
	} {
		path := made(t)
		resign(t, path, func(n int, raw string) string {
			if n == 2 || n == 3 {
				return editSpend(t, raw, func(s *Spend) { s.Charge.Point.Eps = tc.scale(s.Charge.Point.Eps) })
			}
			return raw
		})
		for _, err := range []error{readErr(path), openErr(path, Options{StateDir: t.TempDir()})} {
			corruptAt(t, tc.name, err, 2, "charges its step, "+chargeLine(2))
			var ce *CorruptError
			if errors.As(err, &ce) && ce.rounding != tc.rounding {
				t.Errorf("%s: %v, want rounding %v", tc.name, err, tc.rounding)
			}
			if msg := fmt.Sprint(err); strings.Contains(msg, "differ only in their last digits") != tc.rounding || strings.Contains(msg, "restored from a good copy") == tc.rounding {
				t.Errorf("%s: %s", tc.name, msg)
			}
		}
	}

	// A forged line's long digest, mechanism or run id is named cut.
	long := strings.Repeat("x", 300)
	for name, tc := range map[string]struct {
		edit   func(s *Spend)
		lines  []int
		reason string
	}{
		"a long digest of the pairs held":  {func(s *Spend) { s.BitsSHA256 = long }, []int{2}, "the pairs or the digest were changed"},
		"a long digest of the pairs named": {func(s *Spend) { s.BitsSHA256 = long }, []int{4}, "holds no pair list of digest"},
		"a long mechanism":                 {func(s *Spend) { s.Mechanism = provenance.MechanismName(long) }, []int{2}, "spend changed from"},
		"a long run id, ended":             {func(s *Spend) { s.Run = long }, []int{2, 3, 4}, "a line of run"},
	} {
		path := made(t)
		resign(t, path, func(n int, raw string) string {
			if slices.Contains(tc.lines, n) {
				return editSpend(t, raw, tc.edit)
			}
			return raw
		})
		if err := readErr(path); err == nil || !strings.Contains(err.Error(), tc.reason) || strings.Contains(err.Error(), long[:100]) {
			t.Errorf("%s: %v, want %q, the value cut", name, err, tc.reason)
		}
	}

	// Lines without pairs, of a darrm before they were kept, before the
	// first with some or in a ledger with none: their charges are not
	// recomputed, and a read says so.
	for last, want := range map[int]string{
		5: "charges of 4 lines not recomputed (lines 2, 3, 4, 5): their pair lists are not in the ledger",
		7: "charges of 6 lines not recomputed (lines 2, 3, 4, 5, 6, ...): their pair lists are not in the ledger",
	} {
		path := made(t)
		resign(t, path, func(n int, raw string) string {
			if n == 1 || n > last {
				return raw
			}
			return editSpend(t, raw, func(s *Spend) { s.Bits, s.BitsAt = nil, nil })
		})
		l, err := Options{StateDir: t.TempDir()}.readOnly(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
		if notes := strings.Join(l.Notes(), "\n"); !strings.Contains(notes, want) {
			t.Errorf("lines 2 to %d without pair lists: notes %q", last, notes)
		}
	}

	// Such a line's charge is not recomputed, but none is below 0: run
	// B's lines (6 and 7), without pairs in a ledger with none, charging
	// back half of what the runs before them spent, are refused at the
	// first of them, by a read and by a release.
	path = made(t)
	resign(t, path, func(n int, raw string) string {
		if n == 1 {
			return raw
		}
		return editSpend(t, raw, func(s *Spend) {
			s.Bits, s.BitsAt = nil, nil
			if n >= 6 {
				s.Charge.Point.Eps = -s.Prior.PointEps / 2
			}
		})
	})
	corruptAt(t, "a negative charge", readErr(path), 6, "charge point eps")
	corruptAt(t, "a negative charge, a release", openErr(path, Options{StateDir: t.TempDir()}), 6, "charge point eps")
}

// TestOneBitChargesResumed: a release that reads from the line its
// record vouches for recomputes the charge of each line after it, with
// the pairs a line before it holds (read alone), and names that line on
// its own lines; a release that has read no line with the pairs holds
// them again, and a read of the whole ledger takes either. A charge
// edited after the record, the chain hashed again, is refused by that
// release at its line.
func TestOneBitChargesResumed(t *testing.T) {
	listA, listB := testPairs(3000, 1), testPairs(2000, 2)
	a, b := book, Options{StateDir: t.TempDir()}
	path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 8, Delta: 1e-3}})
	bitRun(t, a, path, listA, 2, 2) // lines 2, 3: A held
	bitRun(t, b, path, listB, 2, 2) // 4, 5: B held
	bitRun(t, a, path, listA, 2, 2) // 6, 7: a reads line 2 alone, and 4 and 5; names line 2
	bitRun(t, a, path, listB, 2, 2) // 8, 9: a has read no line with B since line 7: held again
	bitRun(t, b, path, listB, 2, 2) // 10, 11: b reads line 4 alone, names it
	spends := spendsOf(t, path)
	for n, want := range map[int]int{6: 2, 7: 2, 9: 8, 10: 4, 11: 4} {
		if s := spends[n]; s.Bits != nil || s.BitsAt == nil || s.BitsAt.Line != want {
			t.Errorf("line %d: %d pairs, named at %+v; want line %d named", n, len(s.Bits), s.BitsAt, want)
		}
	}
	if spends[8].Bits == nil {
		t.Errorf("line 8: no pairs held, named at %+v", spends[8].BitsAt)
	}
	if err := readErr(path); err != nil {
		t.Fatal(err)
	}

	// b's last run charged less, the chain hashed again: a, whose record
	// vouches for line 9, reads from there and refuses line 10, with the
	// pairs of line 4, read alone.
	resign(t, path, func(n int, raw string) string {
		if n >= 10 {
			return cheaper(t, raw)
		}
		return raw
	})
	corruptAt(t, "a release resumed", openErr(path, a), 10, "is not the one the filter")
	corruptAt(t, "a read", readErr(path), 10, "is not the one the filter")
}

// resignPG rewrites the rows of the ledger name in the database at db as
// resign rewrites a file, as a superuser would: the guards dropped (the
// append-only trigger among them), the rows and the head updated.
func resignPG(t *testing.T, db, name string, edit func(n int, raw string) string) {
	t.Helper()
	conn, err := pgConnect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var key int
	if err := conn.QueryRow(ctx, "SELECT key FROM darrm.ledgers WHERE name = $1", name).Scan(&key); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, "SELECT line FROM darrm.lines WHERE ledger = $1 ORDER BY n", key)
	if err != nil {
		t.Fatal(err)
	}
	var in []string
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		in = append(in, string(b))
	}
	if rows.Close(); rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	out := resignLines(t, in, edit)
	// As a superuser would: the guards dropped.
	if _, err := conn.Exec(ctx, "DROP TRIGGER IF EXISTS append_only ON darrm.lines; DROP TRIGGER IF EXISTS guard_ledger ON darrm.ledgers"); err != nil {
		t.Fatal(err)
	}
	var stop int64
	for i, b := range out {
		stop += int64(len(b)) + 1
		if _, err := conn.Exec(ctx, "UPDATE darrm.lines SET line = $3, stop = $4 WHERE ledger = $1 AND n = $2", key, i+1, []byte(b), stop); err != nil {
			t.Fatal(err)
		}
	}
	var last line
	if err := json.Unmarshal([]byte(out[len(out)-1]), &last); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "UPDATE darrm.ledgers SET size = $2, head = $3 WHERE key = $1", key, stop, last.SHA256); err != nil {
		t.Fatal(err)
	}
}

// testPGOneBitCharges: on a PostgreSQL ledger as on a file, a read
// recomputes every one-bit line's charge, and a release that reads from
// its record reads the row that holds the pairs a later row names (after
// the rows it reads: one query at a time); its export reads the same. A
// charge edited by a superuser, the trigger disabled and the chain hashed
// again, is refused at its line by both. It drops the guards: it runs
// at the end.
func testPGOneBitCharges(t *testing.T, db string) {
	u := newPG(t, db, "bits", accountant.Budget{Guarantee: accountant.Guarantee{Eps: 8, Delta: 1e-3}})
	listA, listB := testPairs(3000, 1), testPairs(2000, 2)
	a, b := book, Options{StateDir: t.TempDir()}
	bitRun(t, a, u, listA, 2, 2) // lines 2, 3: A held
	bitRun(t, a, u, listB, 2, 2) // 4, 5: B held
	bitRun(t, a, u, listA, 2, 2) // 6, 7: a reads from line 5, and row 4 alone: A held again
	bitRun(t, b, u, listA, 2, 2) // 8, 9: b reads every row, names line 2
	// An export is the same lines, which name the same lines at the same
	// ends, and its end line.
	file := filepath.Join(t.TempDir(), "export.ledger")
	if err := (Options{StateDir: t.TempDir()}).Export(ctx, u, file); err != nil {
		t.Fatal(err)
	}
	if _, _, lines := readAll(t, file); lines != 10 {
		t.Fatalf("the export reads %d lines, want 9 and its end", lines)
	}
	spends := spendsOf(t, file)
	if spends[6].Bits == nil || spends[8].BitsAt == nil || spends[8].BitsAt.Line != 2 || len(spends) != 8 {
		t.Fatalf("line 6 holds %d pairs, line 8 names %+v, of %d spends: want the pairs held again, read from line 5", len(spends[6].Bits), spends[8].BitsAt, len(spends))
	}
	resignPG(t, db, "bits", func(n int, raw string) string {
		if n >= 8 {
			return cheaper(t, raw)
		}
		return raw
	})
	_, err := Options{StateDir: t.TempDir()}.readOnly(ctx, u)
	corruptAt(t, "verify, a charge edited", err, 8, "is not the one the filter")
	corruptAt(t, "a release whose record vouches for line 7, a charge edited after it", openErr(u, a), 8, "is not the one the filter")
}

// TestOneBitRefused: a one-bit release whose pairs are not probabilities,
// or whose pairs that dominate the others are more than a line holds, is
// refused before its run begins, with an error naming the rule, and the
// ledger is left as it was.
func TestOneBitRefused(t *testing.T) {
	many := make([]accountant.BitPair, maxLinePairs+1)
	for i := range many {
		many[i] = accountant.BitPair{P: 0.9 - float64(i)*1e-6, Q: 0.1 - float64(i)*1e-6}
	}
	for name, tc := range map[string]struct {
		pairs []accountant.BitPair
		rule  string
	}{
		"not a number":     {[]accountant.BitPair{{P: math.NaN(), Q: 0.5}}, "a probability must be in [0, 1]"},
		"above 1":          {[]accountant.BitPair{{P: 0.5, Q: 1.5}}, "a probability must be in [0, 1]"},
		"none":             {[]accountant.BitPair{}, "no pairs of output probabilities"},
		"more than a line": {many, "10001 pairs of output probabilities: a line holds at most 10000"},
	} {
		path := newLedger(t, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 4, Delta: 1e-3}})
		before := lines(t, path)
		l, err := book.forRun(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		err = l.begin(ctx, "darrm", binding(t, l), accountant.Spend{Kind: accountant.OneBitSpend, Guarantee: step, Bits: tc.pairs})
		l.Close()
		if err == nil || !strings.Contains(err.Error(), tc.rule) {
			t.Errorf("%s: %v, want an error saying %q", name, err, tc.rule)
		}
		if after := lines(t, path); strings.Join(after, "") != strings.Join(before, "") {
			t.Errorf("%s: the ledger changed", name)
		}
	}
}
