package accountant

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/darrm/darrm/internal/param"
)

// TestSequence: a Sequence built run by run composes as the runs do
// step by step (simpleSeq, generalSeq; composeOptimal for equal steps),
// whatever the order of the runs' Adds; it survives JSON exactly; and
// Check refuses what Add cannot build.
func TestSequence(t *testing.T) {
	a, b := Guarantee{0.3, 3e-5}, Guarantee{0.05, 0}
	var s Sequence
	for _, k := range []int{3, 0, 4} {
		var err error
		if s, err = s.Add(a, k); err != nil {
			t.Fatal(err)
		}
	}
	tot, err := s.totals(1e-5)
	if err != nil {
		t.Fatal(err)
	}
	simple, _ := composeSimple(a, 7)
	opt, _ := composeOptimal(a, 7, 1e-5)
	if len(tot) != 2 || tot[0] != (composed{simple, Simple}) || tot[1] != (composed{opt, Optimal}) || s.Mixed || s.Step != a || s.Steps != 7 {
		t.Errorf("equal steps: %+v, totals %+v", s, tot)
	}
	if s, err = s.Add(b, 5); err != nil {
		t.Fatal(err)
	}
	var steps []Guarantee
	for range 7 {
		steps = append(steps, a)
	}
	for range 5 {
		steps = append(steps, b)
	}
	wantS, _ := simpleSeq(steps)
	wantG, _ := generalSeq(steps, 1e-5)
	if tot, err = s.totals(1e-5); err != nil || len(tot) != 2 || !s.Mixed || tot[1].Method != General {
		t.Fatalf("mixed steps: %+v, totals %+v (%v)", s, tot, err)
	}
	// The steps are summed one at a time, so the sums may differ from the
	// runs' in their last bits, never by more.
	if relErr(tot[0].Eps, wantS.Eps) > 1e-15 || relErr(tot[1].Eps, wantG.Eps) > 1e-15 || relErr(tot[1].Delta, wantG.Delta) > 1e-14 {
		t.Errorf("mixed totals %+v, want simple %v, general %v", tot, wantS, wantG)
	}
	raw, _ := json.Marshal(s)
	var back Sequence
	if err := json.Unmarshal(raw, &back); err != nil || back != s {
		t.Errorf("JSON round trip: %s gives %+v (%v)", raw, back, err)
	}
	for name, bad := range map[string]Sequence{
		"negative count":     {Steps: -1},
		"sums without steps": {SumEps: 1},
		"mixed with a step":  {Steps: 2, Mixed: true, Step: a, SumEps: 1},
		"positive log keep":  {Steps: 1, Step: a, SumLogKeep: 1},
		"bad common step":    {Steps: 1, Step: Guarantee{0, 0}},
	} {
		if err := bad.Check(); err == nil {
			t.Errorf("%s: %+v passes Check", name, bad)
		}
		if _, err := bad.totals(1e-5); err == nil {
			t.Errorf("%s: %+v composes", name, bad)
		}
	}
	if _, err := (Sequence{}).Add(a, -1); err == nil {
		t.Error("a negative count was added")
	}
}

// TestPureBudget: pure-DP steps compose to (kε, 0) by simple
// composition only; against a pure-DP budget every method allows the
// steps that simple composition fits, although optimal composition's ε is
// smaller. The steps are m·ε = 3 × 0.1 = 0.30000000000000004, of which 9
// fit in ε = 3.
func TestPureBudget(t *testing.T) {
	eps := 0.1
	step := Guarantee{3 * eps, 0} // 0.30000000000000004: a float product, not a constant
	pure := Guarantee{3, 0}
	for _, m := range []Method{Simple, General, Optimal} {
		if n, err := (Composition{Method: m, DeltaPrime: 1e-5}).MaxSteps(step, Budget{Guarantee: pure}); n != 9 || err != nil {
			t.Errorf("MaxSteps of %v in %v, %v: %d (%v), want 9", step, pure, m, n, err)
		}
	}
}

// composed is a total of composed steps and the composition theorem that
// gave it.
type composed struct {
	Guarantee
	Method Method
}

// totals returns the totals of s that hold at once: simple composition
// (Theorem 3.3.2), and, with slack deltaPrime, the optimal composition of
// equal steps (Kairouz, Oh and Viswanath 2015, Thm 3.3; at most
// maxOptimalSteps of them) or else general composition (their Thm 3.5,
// for steps that differ). Simple composition is the only one without the
// slack, so it is the one that keeps a pure-DP sequence pure. The empty
// sequence is (0, 0)-DP by simple composition.
func (s Sequence) totals(deltaPrime float64) ([]composed, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	if s.Steps == 0 {
		return []composed{{Method: Simple}}, nil
	}
	if err := param.DeltaPrime(deltaPrime); err != nil {
		return nil, fmt.Errorf("sequence: %w", err)
	}
	simple := composed{s.simple(), Simple}
	if !s.Mixed && s.Steps <= maxOptimalSteps {
		g, err := composeOptimal(s.Step, s.Steps, deltaPrime)
		return []composed{simple, {g, Optimal}}, err
	}
	return []composed{simple, {s.general(deltaPrime), General}}, nil
}
