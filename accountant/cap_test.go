package accountant

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestTeacherCap checks the cap against values computed by hand.
func TestTeacherCap(t *testing.T) {
	// Disjoint shares: the teacher's own guarantee, exactly.
	teacher := Guarantee{Eps: 0.0885, Delta: 1e-4}
	c, err := TeacherCap(teacher, 11, Disjoint, 1e-5)
	if err != nil || c.Guarantee != teacher || c.Rule() != "parallel" || c.K != 11 {
		t.Errorf("disjoint: %+v, %v", c, err)
	}
	// Shared data, K = 11 teachers (0.1, 1e-5), delta' = 1e-5. Simple:
	// (1.1, 1.1e-4). General: a + 0.1·sqrt(22·log(1e5)) > 1.1, so its eps
	// is 11·0.1 too, with delta 1-(1-1e-5)^12 > 1.1e-4: simple dominates it.
	// Optimal: for u in [0.9, 1.1) only the outcome l = 0 counts, and
	// (e^1.1 - e^u)/(1+e^0.1)^11 = delta' gives u = log(e^1.1 -
	// delta'·(1+e^0.1)^11) = 1.088..., with delta 1-(1-1e-5)^12. Simple
	// and optimal cross; optimal has the smaller eps and is the cap.
	c, err = TeacherCap(Guarantee{Eps: 0.1, Delta: 1e-5}, 11, Shared, 1e-5)
	wantEps := math.Log(math.Exp(1.1) - 1e-5*math.Pow(1+math.Exp(0.1), 11))
	wantDelta := -math.Expm1(12 * math.Log1p(-1e-5))
	if err != nil || c.Method != Optimal || c.DeltaPrime != 1e-5 || c.Eps < wantEps || c.Eps > wantEps*(1+1e-12) || c.Delta < wantDelta || c.Delta > wantDelta*(1+1e-12) {
		t.Errorf("shared: %+v (%v), want optimal (%.15g, %.15g)", c, err, wantEps, wantDelta)
	}
	if wantEps < 1.0879 || wantEps > 1.0881 {
		t.Fatalf("hand value %v", wantEps)
	}
	// Pure-DP teachers on shared data: simple composition, (3·0.5, 0),
	// rounded up, and pure.
	c, err = TeacherCap(Guarantee{Eps: 0.5, Delta: 0}, 3, Shared, 1e-5)
	if err != nil || c.Method != Simple || c.Eps != 1.5 || c.Delta != 0 || c.DeltaPrime != 0 {
		t.Errorf("pure DP: %+v, %v", c, err)
	}
	for _, bad := range []struct {
		g      Guarantee
		k      int
		s      Shares
		dp     float64
		inText string
	}{
		{Guarantee{Eps: 0, Delta: 0}, 3, Disjoint, 1e-5, "eps = 0"},
		{Guarantee{Eps: 0.1, Delta: 1}, 3, Shared, 1e-5, "delta = 1"},
		{Guarantee{Eps: 0.1, Delta: 0}, 0, Disjoint, 1e-5, "k = 0"},
		{Guarantee{Eps: 0.1, Delta: 1e-5}, 3, Shared, 0, "delta' = 0"},
		{Guarantee{Eps: 0.1, Delta: 1e-5}, 3, Shares(7), 1e-5, "shares Shares(7)"},
	} {
		if _, err := TeacherCap(bad.g, bad.k, bad.s, bad.dp); err == nil || !strings.Contains(err.Error(), bad.inText) {
			t.Errorf("%+v: %v, want %q", bad, err, bad.inText)
		}
	}
}

func TestTighter(t *testing.T) {
	for _, tc := range []struct {
		a, b Guarantee
		want bool
	}{
		{Guarantee{1, 1e-5}, Guarantee{2, 1e-4}, true},   // a at most b in both
		{Guarantee{2, 1e-4}, Guarantee{1, 1e-5}, false},  // b at most a
		{Guarantee{1, 1e-5}, Guarantee{1, 1e-4}, true},   // equal eps: smaller delta
		{Guarantee{1, 1e-3}, Guarantee{1.2, 1e-5}, true}, // they cross: smaller eps
		{Guarantee{1.2, 1e-5}, Guarantee{1, 1e-3}, false},
		{Guarantee{0.5, 1}, Guarantee{9, 0.5}, false}, // delta >= 1 is vacuous
		{Guarantee{9, 0.5}, Guarantee{0.5, 1.2}, true},
		{Guarantee{1, 1e-5}, Guarantee{1, 1e-5}, false},
	} {
		if got := tighter(tc.a, tc.b); got != tc.want {
			t.Errorf("tighter(%v, %v) = %v", tc.a, tc.b, got)
		}
	}
}

// TestCapped: with a cap (fixed private teachers) a total is the cap,
// whatever its composition, says so, and keeps the composition as
// analysis; without one, the composition. Nothing released spends
// nothing.
func TestCapped(t *testing.T) {
	step := Guarantee{Eps: 0.3, Delta: 3e-5}
	c, _ := TeacherCap(Guarantee{Eps: 0.1, Delta: 1e-5}, 11, Disjoint, 1e-5)
	totals := allTotals(step, 20, 1e-5)
	for _, tot := range totals {
		got := tot.Capped(&c)
		if got.Guarantee != c.Guarantee || got.Bound != TeachersBound || got.Queries != tot.Guarantee {
			t.Errorf("%v: %+v", tot.Method, got)
		}
		if got := tot.Capped(nil); got.Guarantee != tot.Guarantee || got.Bound != QueriesBound {
			t.Errorf("%v without a cap: %+v", tot.Method, got)
		}
	}
	// One query of (0.3, 3e-5) against the shared cap of 11 teachers
	// (1.088..., 1.2e-4): the query is below the cap in both, and was
	// the total before composing per-query guarantees of fixed teachers
	// was dropped as unproved; now the cap is.
	shared, _ := TeacherCap(Guarantee{Eps: 0.1, Delta: 1e-5}, 11, Shared, 1e-5)
	if got := allTotals(step, 1, 1e-5)[0].Capped(&shared); got.Bound != TeachersBound || got.Guarantee != shared.Guarantee || got.Queries != step {
		t.Errorf("one query: %+v", got)
	}
	for _, tc := range []struct {
		queries Guarantee
		c       *Cap
		want    Guarantee
		bound   Bound
	}{
		{Guarantee{Eps: 1.2}, &shared, shared.Guarantee, TeachersBound}, // pure queries, a cap with delta > 0
		{Guarantee{Eps: 0.2, Delta: 1e-9}, &c, c.Guarantee, TeachersBound},
		{Guarantee{}, &shared, Guarantee{}, QueriesBound}, // nothing released
		{Guarantee{Eps: 2, Delta: 1e-6}, nil, Guarantee{Eps: 2, Delta: 1e-6}, QueriesBound},
	} {
		if g, b := tc.c.Total(tc.queries); g != tc.want || b != tc.bound {
			t.Errorf("%v.Total(%v) = %v %v, want %v %v", tc.c, tc.queries, g, b, tc.want, tc.bound)
		}
	}
	// A composition that failed is bounded by the cap alone.
	big := allTotals(step, maxOptimalSteps+1, 1e-5)[2]
	got := big.Capped(&c)
	b, _ := json.Marshal(got)
	if big.Err == nil || got.Guarantee != c.Guarantee || got.Bound != TeachersBound ||
		!strings.Contains(string(b), `"eps":0.1,"delta":0.00001,"total_bound":"teachers","queries":null`) {
		t.Errorf("failed composition, capped: %s", b)
	}
	b, _ = json.Marshal(totals[0].Capped(&c))
	if !strings.Contains(string(b), `"eps":0.1,"delta":0.00001,"total_bound":"teachers","queries":{"eps":6,`) {
		t.Errorf("JSON %s", b)
	}
}

// TestAccountRefusesInvalidCap checks that an account with a cap that no
// TeacherCap returns is refused, naming the field: the zero Cap, of no
// teachers, fitted every budget, stated (0, 0) and allowed any count.
func TestAccountRefusesInvalidCap(t *testing.T) {
	budget := Budget{Guarantee: Guarantee{Eps: 1, Delta: 1e-5}}
	valid, err := TeacherCap(Guarantee{Eps: 0.1, Delta: 1e-6}, 11, Disjoint, 0)
	if err != nil {
		t.Fatal(err)
	}
	noTeachers, badShares := valid, valid
	noTeachers.K = 0
	badShares.Shares = Shares(7)
	for _, tc := range []struct {
		cap  Cap
		want string
	}{
		{Cap{}, "teacher eps = 0"},
		{noTeachers, "K = 0"},
		{badShares, "shares"},
	} {
		a := Account{Step: ApproxStep(Guarantee{Eps: 0.5, Delta: 1e-7}), Steps: 100, Cap: &tc.cap, Budget: &budget}
		if _, err := a.Publish(nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Publish with cap %+v: %v, want %q", tc.cap, err, tc.want)
		}
		if ok, err := a.Fits(nil); ok || err == nil {
			t.Errorf("Fits with cap %+v: %v, %v, want an error", tc.cap, ok, err)
		}
		if _, err := a.Totals(nil); err == nil {
			t.Errorf("Totals with cap %+v: no error", tc.cap)
		}
	}
}
