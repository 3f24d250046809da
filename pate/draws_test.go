package pate

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/noise"
)

// prepared returns Account's prepared (not drawn) release of counts by
// Confident-GNMax, as account pate does before ReleaseOnce.
func prepared(t *testing.T, counts [][]int, smooth SmoothParams) *AccountResult {
	t.Helper()
	m := Mechanisms()[0]
	a, err := Account(t.Context(), countsReader(t, counts, accountant.OneVote),
		AccountOptions{Mechanism: m.Name, GNMax: m.GNMax, Delta: Delta, Conversion: accountant.PaperConversion, Smooth: smooth}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Smooth.Error != "" || a.Smooth.Drawn {
		t.Fatalf("release: error %q, drawn %v", a.Smooth.Error, a.Smooth.Drawn)
	}
	return a
}

// TestEpsReleasedIsAnEstimate: eps_released is the data-dependent cost
// plus symmetric noise, so it falls below the cost it estimates (with the
// release's own GNSS cost, converted at the same order) about half of the
// time: an estimate, not a bound (issue 40 item 7).
func TestEpsReleasedIsAnEstimate(t *testing.T) {
	counts, _ := syntheticCounts(200, 4)
	a := prepared(t, counts, SmoothParams{})
	s := a.Smooth
	realised, err := accountant.ConvertRDP(s.center+s.GNSS, s.Order, Delta, accountant.PaperConversion)
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
	if g, _, err := a.Guarantee(); err != nil || !(g >= realised) {
		t.Errorf("guarantee %v (%v) below the realised cost %v", g, err, realised)
	}
}

// TestReleaseOnce: one draw per votes and settings, recorded; shown again
// from the record (whatever the file the counts came from), drawn again
// only when asked and charged first; a charge refused draws nothing.
func TestReleaseOnce(t *testing.T) {
	counts, _ := syntheticCounts(60, 4)
	rec := Draws{Dir: t.TempDir()}
	src := noise.NewSeededSource(9)
	first := prepared(t, counts, SmoothParams{})
	st, err := first.ReleaseOnce(Once{Record: rec}, src)
	if err != nil || st == nil || st.Recorded || !first.Smooth.Drawn || st.Same != 1 || first.Draws != 1 {
		t.Fatalf("first draw: %+v, %v, drawn %v", st, err, first.Smooth.Drawn)
	}
	again := prepared(t, counts, SmoothParams{})
	if st, err := again.ReleaseOnce(Once{Record: rec}, src); err != nil || !st.Recorded || again.Smooth.Released != first.Smooth.Released || again.Smooth.Eps != first.Smooth.Eps {
		t.Errorf("rerun: %+v, %v: released %v, want the recorded %v", st, err, again.Smooth.Released, first.Smooth.Released)
	}
	if again.Votes != first.Votes {
		t.Errorf("the same counts hash to %s and %s", again.Votes, first.Votes)
	}
	// Other settings: another release, drawn and recorded beside.
	other := prepared(t, counts, SmoothParams{Order: 8})
	if st, err := other.ReleaseOnce(Once{Record: rec}, src); err != nil || st.Recorded || st.Draws != 2 || st.Same != 1 {
		t.Errorf("other settings: %+v, %v", st, err)
	}
	// Again without a charge is refused; a refused charge draws nothing.
	var bi interface{ BadInput() bool }
	if _, err := prepared(t, counts, SmoothParams{}).ReleaseOnce(Once{Record: rec, Again: true}, src); !errors.As(err, &bi) || !bi.BadInput() {
		t.Errorf("again without a charge: %v", err)
	}
	refused := errors.New("over budget")
	no := prepared(t, counts, SmoothParams{})
	if _, err := no.ReleaseOnce(Once{Record: rec, Again: true, Charge: func(accountant.Guarantee) error { return refused }}, src); err != refused || no.Smooth.Drawn {
		t.Errorf("refused charge: %v, drawn %v", err, no.Smooth.Drawn)
	}
	var charged accountant.Guarantee
	redrawn := prepared(t, counts, SmoothParams{})
	st, err = redrawn.ReleaseOnce(Once{Record: rec, Again: true, Ledger: "L", Charge: func(g accountant.Guarantee) error { charged = g; return nil }}, src)
	want, _ := first.Smooth.Cost()
	if err != nil || st.Recorded || st.Charged == nil || *st.Charged != want || charged != want || st.Same != 2 || redrawn.Draws != 2 || redrawn.Smooth.Released == first.Smooth.Released {
		t.Errorf("charged draw: %+v, %v, charged %v (cost %v)", st, err, charged, want)
	}
	g1, _, _ := first.Guarantee()
	if g2, covers, _ := redrawn.Guarantee(); !(g2 > g1) || !strings.Contains(covers, "its 2 draws") {
		t.Errorf("guarantee after two draws %v (%s), after one %v", g2, covers, g1)
	}
	shown := prepared(t, counts, SmoothParams{})
	if st, err := shown.ReleaseOnce(Once{Record: rec}, src); err != nil || !st.Recorded || shown.Smooth.Released != redrawn.Smooth.Released || st.Charged == nil || shown.Draws != 2 {
		t.Errorf("after the charged draw: %+v, %v", st, err)
	}
	// A number another run took is not taken again.
	if ok, err := rec.add(Draw{Version: drawsVersion, Votes: first.Votes, Settings: "x"}, 1); ok || err != nil {
		t.Errorf("draw 1 recorded twice: %v, %v", ok, err)
	}
	if got, _ := rec.read(first.Votes); len(got) != 3 || got[0].RDPReleased != first.Smooth.Released {
		t.Errorf("record after a refused add: %d draws, the first %+v", len(got), got[0])
	}
	// A damaged record is refused, nothing drawn.
	if err := os.WriteFile(rec.file(first.Votes, 1), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := prepared(t, counts, SmoothParams{}).ReleaseOnce(Once{Record: rec}, src); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("damaged record: %v", err)
	}
}
