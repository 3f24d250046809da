package pate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/votefile"
)

// optionsOf returns the options of an account of Confident-GNMax at
// PATE's setting with smooth-sensitivity parameters smooth.
func optionsOf(smooth SmoothParams) AccountOptions {
	m := paperMechanisms()[0]
	return AccountOptions{Memo: ptrMemo, Mechanism: m.mech(), Delta: paperDelta, Conversion: accountant.PaperConversion, Smooth: smooth}
}

// prepared returns Account's prepared (not drawn) release of counts by
// Confident-GNMax, as account pate does before ReleaseOnce.
func prepared(t *testing.T, counts [][]int, smooth SmoothParams) *AccountResult {
	t.Helper()
	return accountOf(t, countsReader(t, counts, accountant.OneVote), optionsOf(smooth))
}

// accountOf returns Account's result on in under opts, which must not
// have drawn.
func accountOf(t *testing.T, in votefile.Reader, opts AccountOptions) *AccountResult {
	t.Helper()
	a, err := Account(t.Context(), in, opts)
	if err != nil {
		t.Fatal(err)
	}
	if a.Smooth.Drawn {
		t.Fatal("Account drew the smooth-sensitivity release")
	}
	return a
}

// read returns a reader of the file b, read with opts.
func read(t *testing.T, b []byte, opts votefile.Options) votefile.Reader {
	t.Helper()
	opts.In = bytes.NewReader(b)
	in, err := votefile.Open("votes", opts)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestVotesKey: the record of draws is keyed by the private votes as a
// multiset of rows of counts (DESIGN "A draw is a release of the private
// votes"): the same rows reordered, in another format (with or without a
// header or ids, as JSON lines, as a NumPy array, as class labels),
// accounted with labels or other settings, give the same key; other votes
// (a vote moved, a row dropped or repeated) another.
func TestVotesKey(t *testing.T) {
	// Under -short 20 queries: the key is of the rows, not their number,
	// and each of the thirteen accounts below scores every query.
	n := 60
	if testing.Short() {
		n = 20
	}
	counts, _ := syntheticCounts(n, 5)
	reversed := slices.Clone(counts)
	slices.Reverse(reversed)
	file := func(rows [][]int, meta *votefile.Meta, ids bool) []byte {
		var b bytes.Buffer
		var names []string
		if ids {
			for i := range rows {
				names = append(names, fmt.Sprintf("q%d", i+1))
			}
		}
		if err := votefile.WriteCounts(&b, meta, names, rows); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	var jl, npy, classes bytes.Buffer
	for _, c := range reversed {
		j, _ := json.Marshal(c)
		jl.Write(append(j, '\n'))
		// The same counts as 250 teachers' class labels.
		var row []string
		for class, n := range c {
			for range n {
				row = append(row, fmt.Sprint(class))
			}
		}
		classes.WriteString(strings.Join(row, ",") + "\n")
	}
	if err := votefile.WriteCountsNPY(&npy, reversed); err != nil {
		t.Fatal(err)
	}
	counts2 := func(f func([][]int) [][]int) [][]int {
		c := make([][]int, len(counts))
		for i := range counts {
			c[i] = slices.Clone(counts[i])
		}
		return f(c)
	}
	base := prepared(t, counts, SmoothParams{}).Votes
	asCounts := votefile.Options{Layout: votefile.LayoutCounts}
	improved, oneSided, fromVotes := optionsOf(SmoothParams{}), optionsOf(SmoothParams{Order: 8}), optionsOf(SmoothParams{FromVotes: true})
	improved.Conversion, improved.Delta = accountant.ImprovedConversion, 1.0000001e-6
	oneSided.Directions = OneSided
	_, labels := releaseLabels(t, paperMechanisms()[0], counts)
	withLabels := optionsOf(SmoothParams{})
	lr, err := votefile.NewLabelReader(bytes.NewReader(labels.Bytes()), "labels")
	if err != nil {
		t.Fatal(err)
	}
	withLabels.Labels = lr
	for _, tc := range []struct {
		name string
		in   votefile.Reader
		opts AccountOptions
		same bool
	}{
		{"reordered, with a header", countsReader(t, reversed, accountant.OneVote), optionsOf(SmoothParams{}), true},
		{"no header, ids", read(t, file(reversed, nil, true), votefile.Options{Layout: votefile.LayoutCounts, ID: withIDs(t)}), optionsOf(SmoothParams{}), true},
		{"no header, no ids", read(t, file(reversed, nil, false), asCounts), optionsOf(SmoothParams{}), true},
		{"JSON lines", read(t, jl.Bytes(), asCounts), optionsOf(SmoothParams{}), true},
		{"NumPy", read(t, npy.Bytes(), votefile.Options{}), optionsOf(SmoothParams{}), true},
		{"class labels", read(t, classes.Bytes(), votefile.Options{Classes: 10, Orientation: votefile.QueriesInRows}), optionsOf(SmoothParams{}), true},
		{"other delta and conversion", countsReader(t, counts, accountant.OneVote), improved, true},
		{"one-sided, other order", countsReader(t, counts, accountant.OneVote), oneSided, true},
		{"parameters from the votes", countsReader(t, counts, accountant.OneVote), fromVotes, true},
		{"a release's labels", countsReader(t, counts, accountant.OneVote), withLabels, true},
		{"a vote moved", countsReader(t, counts2(func(c [][]int) [][]int {
			top := slices.Index(c[7], slices.Max(c[7]))
			c[7][top]--
			c[7][(top+1)%10]++
			return c
		}), accountant.OneVote), optionsOf(SmoothParams{}), false},
		{"a row dropped", countsReader(t, counts[1:], accountant.OneVote), optionsOf(SmoothParams{}), false},
		{"a row repeated", countsReader(t, append(slices.Clone(counts), counts[3]), accountant.OneVote), optionsOf(SmoothParams{}), false},
	} {
		if got := accountOf(t, tc.in, tc.opts).Votes; (got == base) != tc.same {
			t.Errorf("%s: key %.12s, the votes' %.12s: want the same %v", tc.name, got, base, tc.same)
		}
	}
}

// TestEpsReleasedIsAnEstimate: eps_released is the data-dependent cost
// plus symmetric noise, so it falls below the cost it estimates (with the
// release's own GNSS cost, converted at the same order) about half of the
// time: an estimate, not a bound (issue 40 item 7); the total that covers
// the draw never is.
func TestEpsReleasedIsAnEstimate(t *testing.T) {
	counts, _ := syntheticCounts(200, 4)
	a := prepared(t, counts, SmoothParams{})
	s := a.Smooth
	realised, err := accountant.PaperConversion.ConvertRDP(s.center+s.GNSS, s.Order, paperDelta)
	if err != nil {
		t.Fatal(err)
	}
	const n = 400
	below := 0
	for seed := range uint64(n) {
		d := s
		if err := d.Draw(noise.NewSeededSource(seed)); err != nil {
			t.Fatal(err)
		}
		if d.Eps < realised {
			below++
		}
	}
	// Binomial(400, 1/2) is within 200 ± 40 (4 standard deviations)
	// but for a chance of 6e-5.
	if below < 160 || below > 240 {
		t.Errorf("%d of %d draws below the realised cost %v: want about half", below, n, realised)
	}
	if _, err := a.ReleaseOnce(Once{Dir: t.TempDir(), New: true, Experiment: true}, noise.NewSeededSource(1)); err != nil {
		t.Fatal(err)
	}
	if tot, err := a.totals(); err != nil || len(tot) != 1 || !(tot[0].Guarantee.Eps >= realised) {
		t.Errorf("total %v (%v) below the realised cost %v", tot, err, realised)
	}
}

// TestReleaseOnce: nothing is drawn unasked; the first draw on the votes
// is recorded without a charge, every later one (the same votes in
// another order, with other settings) needs one; a refused charge draws
// nothing; an experiment is counted, not recorded; draws from an earlier
// darrm's record are counted; the total covers every draw.
func TestReleaseOnce(t *testing.T) {
	// Under -short 20 queries: the record keys the votes whatever their
	// number, and each of the nine accounts below scores every query.
	n := 60
	if testing.Short() {
		n = 20
	}
	counts, _ := syntheticCounts(n, 4)
	reversed := slices.Clone(counts)
	slices.Reverse(reversed)
	rec := drawRecord{dir: t.TempDir()}
	src := noise.NewSeededSource(9)
	var bad interface{ BadInput() bool }
	total := func(a *AccountResult) float64 {
		t.Helper()
		tot, err := a.totals()
		if err != nil || len(tot) == 0 {
			t.Fatalf("totals %v: %v", tot, err)
		}
		return tot[len(tot)-1].Guarantee.Eps
	}
	charge := func(into *accountant.Guarantee, err error) func(accountant.Guarantee) error {
		return func(g accountant.Guarantee) error { *into = g; return err }
	}

	none := prepared(t, counts, SmoothParams{})
	st, err := none.ReleaseOnce(Once{Dir: rec.dir}, src)
	if err != nil || st.Shown || st.Draws != 0 || none.Smooth.Drawn || len(none.Draws) != 0 {
		t.Fatalf("no draw asked: %+v, %v", st, err)
	}
	if _, err := os.Stat(filepath.Join(rec.dir, "pate-draws")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("reading the record wrote it: %v", err)
	}
	undrawn := total(none)

	first := prepared(t, counts, SmoothParams{})
	st, err = first.ReleaseOnce(Once{Dir: rec.dir, New: true}, src)
	if err != nil || !st.Shown || st.Recorded || st.Charged != nil || st.Draws != 1 || len(first.Draws) != 1 || !first.Smooth.Drawn {
		t.Fatalf("first draw: %+v, %v", st, err)
	}
	once := total(first)
	if !(once > undrawn) {
		t.Errorf("total with a draw %v, without %v", once, undrawn)
	}

	for _, tc := range []struct {
		name   string
		counts [][]int
		smooth SmoothParams
		o      Once
		check  func(a *AccountResult, st *DrawState, err error) bool
	}{
		{"shown again", counts, SmoothParams{}, Once{Dir: rec.dir}, func(a *AccountResult, st *DrawState, err error) bool {
			return err == nil && st.Shown && st.Recorded && a.Smooth.Released == first.Smooth.Released && total(a) == once
		}},
		{"reordered, other settings: counted, not shown", reversed, SmoothParams{Order: 8}, Once{Dir: rec.dir}, func(a *AccountResult, st *DrawState, err error) bool {
			return err == nil && !st.Shown && st.Draws == 1 && len(a.Draws) == 1 && !a.Smooth.Drawn
		}},
		{"a second draw without a charge", reversed, SmoothParams{Order: 8}, Once{Dir: rec.dir, New: true}, func(a *AccountResult, st *DrawState, err error) bool {
			var again *AgainError
			return errors.As(err, &again) && again.Draws == 1 && errors.As(err, &bad) && bad.BadInput() && !a.Smooth.Drawn
		}},
		{"a refused charge", counts, SmoothParams{}, Once{Dir: rec.dir, New: true, Charge: charge(new(accountant.Guarantee), errors.New("over budget"))}, func(a *AccountResult, st *DrawState, err error) bool {
			return err != nil && err.Error() == "over budget" && !a.Smooth.Drawn
		}},
		{"parameters from the votes", counts, SmoothParams{FromVotes: true}, Once{Dir: rec.dir, New: true, Charge: charge(new(accountant.Guarantee), nil)}, func(a *AccountResult, st *DrawState, err error) bool {
			return errors.As(err, &bad) && bad.BadInput() && !a.Smooth.Drawn
		}},
		{"an experiment", counts, SmoothParams{}, Once{Dir: rec.dir, New: true, Experiment: true}, func(a *AccountResult, st *DrawState, err error) bool {
			return err == nil && st.Shown && st.Experiment && st.Draws == 1 && len(a.Draws) == 2 && total(a) > once
		}},
	} {
		a := prepared(t, tc.counts, tc.smooth)
		st, err := a.ReleaseOnce(tc.o, src)
		if !tc.check(a, st, err) {
			t.Errorf("%s: %+v, %v", tc.name, st, err)
		}
		if got, _ := rec.read(first.Votes); len(got) != 1 {
			t.Errorf("%s: %d draws recorded, want the first alone", tc.name, len(got))
		}
	}

	// A charged draw: recorded beside, with its ledger; the totals cover
	// both, and the first run's settings show their draw again.
	var charged accountant.Guarantee
	second := prepared(t, reversed, SmoothParams{Order: 8})
	st, err = second.ReleaseOnce(Once{Dir: rec.dir, New: true, Ledger: "/L", Charge: charge(&charged, nil)}, src)
	want, _ := second.Smooth.Cost()
	if err != nil || !st.Shown || st.Charged == nil || *st.Charged != want || charged != want || st.Ledger != "/L" || st.Draws != 2 || len(second.Draws) != 2 {
		t.Fatalf("charged draw: %+v, %v, charged %v (cost %v)", st, err, charged, want)
	}
	again := prepared(t, counts, SmoothParams{})
	if st, err := again.ReleaseOnce(Once{Dir: rec.dir}, src); err != nil || !st.Recorded || again.Smooth.Released != first.Smooth.Released || len(again.Draws) != 2 || !(total(again) > once) {
		t.Errorf("after the charged draw: %+v, %v, total %v (one draw: %v)", st, err, total(again), once)
	}
	if got := again.LedgerCovers("/L"); got {
		t.Error("a ledger that charged one of two draws, and no labels, covers the account")
	}

	// A number another run took is not taken again.
	if ok, err := rec.add(draw{Version: drawsVersion, Votes: first.Votes, Settings: "x", Order: 2, Beta: 0.1, Sigma: 1}, 1); ok || err != nil {
		t.Errorf("draw 1 recorded twice: %v, %v", ok, err)
	}

	// An earlier darrm's record of these votes in this order is counted,
	// and its draw is no free one.
	old := drawRecord{dir: t.TempDir()}
	legacy := prepared(t, counts, SmoothParams{})
	if ok, err := old.add(draw{Version: 1, Votes: legacy.legacy, Settings: "old", Order: 20, Beta: 0.02, Sigma: 10, Time: time.Now()}, 1); !ok || err != nil {
		t.Fatal(ok, err)
	}
	var again2 *AgainError
	if _, err := legacy.ReleaseOnce(Once{Dir: old.dir, New: true}, src); !errors.As(err, &again2) || len(legacy.Draws) != 1 {
		t.Errorf("an earlier darrm's draw: %v, %d counted", err, len(legacy.Draws))
	}

	// A damaged record is refused, nothing drawn.
	if err := os.WriteFile(rec.file(first.Votes, 1), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := prepared(t, counts, SmoothParams{}).ReleaseOnce(Once{Dir: rec.dir}, src); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("damaged record: %v", err)
	}
}

// TestRDPTotal: the composition of the queries' curve and the draws is
// their Rényi DP added at an order up to the least draw's and converted,
// the least over the orders; it grows with every draw.
func TestRDPTotal(t *testing.T) {
	m := paperMechanisms()[0].GNMax
	rho, err := m.RunSlope(200, 200)
	if err != nil {
		t.Fatal(err)
	}
	d1 := draw{Order: 30, Beta: 0.4 / 30, Sigma: 15}
	d2 := draw{Order: 12, Beta: 0.4 / 12, Sigma: 8}
	at := func(order float64, draws ...draw) float64 {
		r := rho * order
		for _, d := range draws {
			g, err := gnssRDP(d.Beta, d.Sigma, order)
			if err != nil {
				t.Fatal(err)
			}
			r += g
		}
		e, err := accountant.ImprovedConversion.ConvertRDP(r, order, paperDelta)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	orders := []float64{2, 5, 10, 12, 20, 30, 50}
	for _, tc := range []struct {
		name  string
		draws []draw
		try   []float64
	}{
		{"no draw", nil, orders},
		{"one draw", []draw{d1}, []float64{2, 5, 10, 12, 20, 30}},
		{"two draws", []draw{d1, d2}, []float64{2, 5, 10, 12}},
	} {
		got, err := rdpTotal(rho, tc.draws, orders, paperDelta)
		if err != nil {
			t.Fatal(err)
		}
		want := 1e300
		for _, o := range tc.try {
			want = min(want, at(o, tc.draws...))
		}
		if got.Method != accountant.Renyi || got.Guarantee.Delta != paperDelta || got.Guarantee.Eps < want || got.Guarantee.Eps > want*(1+1e-12) {
			t.Errorf("%s: %v, want eps %v", tc.name, got, want)
		}
	}
	one, _ := rdpTotal(rho, []draw{d1}, orders, paperDelta)
	two, _ := rdpTotal(rho, []draw{d1, d1}, orders, paperDelta)
	if !(two.Guarantee.Eps > one.Guarantee.Eps) {
		t.Errorf("two draws %v, one %v", two, one)
	}
}

// withIDs is the vote-file option that the rows have an id column.
func withIDs(t *testing.T) votefile.Presence {
	var p votefile.Presence
	if err := p.UnmarshalText([]byte("yes")); err != nil {
		t.Fatal(err)
	}
	return p
}
