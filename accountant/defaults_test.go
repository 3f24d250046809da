package accountant

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTotals(t *testing.T) {
	step := Guarantee{Eps: 0.2676, Delta: 3e-4}
	totals := allTotals(step, 20, 1e-4)
	if len(totals) != 3 {
		t.Fatalf("%d totals, want 3", len(totals))
	}
	for i, m := range []Method{Simple, General, Optimal} {
		want, err := Composition{Method: m, DeltaPrime: 1e-4}.Compose(step, 20)
		if err != nil {
			t.Fatal(err)
		}
		if got := totals[i]; got.Method != m || got.Err != nil || got.Guarantee != want {
			t.Errorf("total %d: %+v, want %v %v", i, got, m, want)
		}
	}
	// Table 3.2: 20 queries at (0.2676, 3e-4), delta' = 1e-4: 5.352 by general composition.
	if g := totals[1].Guarantee; g.Eps < 5.3515 || g.Eps > 5.3525 {
		t.Errorf("general total eps = %v, want 5.352", g.Eps)
	}
	b, err := json.Marshal(totals)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, `"method":"simple","eps"`) || !strings.Contains(s, `"delta_prime":0.0001`) {
		t.Errorf("JSON %s", s)
	}
	// Beyond the optimal method's range, that total reports its error and
	// the others stand.
	big := allTotals(step, maxOptimalSteps+1, 1e-4)
	if big[2].Err == nil || big[1].Err != nil {
		t.Errorf("k beyond maxOptimalSteps: %+v", big)
	}
	if b, _ := json.Marshal(big[2]); !strings.Contains(string(b), `"eps":null`) {
		t.Errorf("JSON of a failed total: %s", b)
	}
}

func TestRRComposition(t *testing.T) {
	if RRComposition(1e-5) != General || RRComposition(0) != Simple {
		t.Error("RR composition: want general for Delta > 0, simple for Delta = 0")
	}
}
