package resolve

import (
	"fmt"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
)

// TestProblem: each parameter comes from the first source that states it,
// else from the defaults; delta stated nowhere is 1-(1-Delta)^m of the
// parameters chosen.
func TestProblem(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	def := constraints.Problem{M: DefaultM, Eps: DefaultEps, Delta: DefaultDelta} // the thesis' main setting: m = 3, (0.1, 1e-5)-DP teachers
	for _, tc := range []struct {
		name               string
		ss                 []Stated
		want               constraints.Problem
		mDefault, dDefault bool
	}{
		{"nothing stated", nil, constraints.Problem{K: 11, M: 3, Eps: 0.1, Delta: 1e-5, TargetDelta: constraints.DefaultTargetDelta(1e-5, 3)}, true, true},
		{"the first wins", []Stated{{M: f(5)}, {M: f(7), Eps: f(0.2)}}, constraints.Problem{K: 11, M: 5, Eps: 0.2, Delta: 1e-5, TargetDelta: constraints.DefaultTargetDelta(1e-5, 5)}, false, true},
		{"delta from a later source", []Stated{{Delta: f(0)}, {TargetDelta: f(1e-3)}}, constraints.Problem{K: 11, M: 3, Eps: 0.1, Delta: 0, TargetDelta: 1e-3}, true, false},
		{"default delta of the stated Delta", []Stated{{}, {Delta: f(1e-4)}}, constraints.Problem{K: 11, M: 3, Eps: 0.1, Delta: 1e-4, TargetDelta: constraints.DefaultTargetDelta(1e-4, 3)}, true, true},
	} {
		p := Problem(11, def, tc.ss...)
		if p.Problem != tc.want || p.MDefault != tc.mDefault || p.DeltaDefault != tc.dDefault {
			t.Errorf("%s: %+v, want %+v (m default %v, delta default %v)", tc.name, p, tc.want, tc.mDefault, tc.dDefault)
		}
	}
	// A table's stated values take part like any other.
	tab, err := gamma.ReadTable(strings.NewReader(`{"gamma": [1, 0.5, 0.5, 1], "m": 2, "delta": 0.001}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	if p := Problem(tab.Gamma.K(), def, Stated{}, FromTable(tab)); p.K != 3 || p.M != 2 || p.TargetDelta != 0.001 || p.MDefault || p.DeltaDefault {
		t.Errorf("from a table: %+v", p)
	}
}

// TestOneVoteDefaults: the relation a solve output states sets the
// defaults of m and Delta.
func TestOneVoteDefaults(t *testing.T) {
	tab, err := gamma.ReadTable(strings.NewReader(`{"K": 3, "m": 1, "eps": 0.3, "Delta": 0, "delta": 1e-5, "relation": "one-vote", "gamma": [0.2, 0.1, 0.1, 0.2]}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	def := constraints.Problem{M: DefaultM, Eps: DefaultEps, Delta: DefaultDelta}
	if p := Problem(3, def, FromTable(tab)); p.Problem != constraints.NewOneVote(3, 0.3, 1e-5) {
		t.Errorf("problem %+v, want the one-vote problem", p.Problem)
	}
	ov := accountant.OneVote
	eps := 0.2
	if p := Problem(5, def, Stated{Relation: &ov, Eps: &eps}); p.Problem != constraints.NewOneVote(5, 0.2, 0) || !p.DeltaDefault || !p.MDefault {
		t.Errorf("one-vote defaults: %+v", p)
	}
}

// A problem from what a command line and a gamma file state: the command
// line's m wins over the file's, the file's eps over the default, and the
// release's delta, stated by neither, is the thesis' 1-(1-Delta)^m.
func ExampleProblem() {
	def := constraints.Problem{M: DefaultM, Eps: DefaultEps, Delta: DefaultDelta}
	flagM, fileM, fileEps := 5.0, 3.0, 0.2
	p := Problem(11, def, Stated{M: &flagM}, Stated{M: &fileM, Eps: &fileEps})
	fmt.Printf("K = %d, m = %g, eps = %g, Delta = %g, delta = %.6g (default: %v)\n", p.K, p.M, p.Eps, p.Delta, p.TargetDelta, p.DeltaDefault)
	// Output:
	// K = 11, m = 5, eps = 0.2, Delta = 1e-05, delta = 4.9999e-05 (default: true)
}
