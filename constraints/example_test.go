package constraints_test

import (
	"fmt"

	"github.com/darrm/darrm/constraints"
)

// The thesis' main setting (Section 3.7.1): 11 teachers, each
// (0.1, 1e-5)-DP, whose majority is released (3·0.1, delta)-DP. The fourth
// argument is the teachers' Delta; the release's delta defaults to
// 1-(1-Delta)^m.
func ExampleNew() {
	p := constraints.New(11, 3, 0.1, 1e-5)
	if err := p.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("K = %d, m = %g, eps = %g\n", p.K, p.M, p.Eps)
	fmt.Printf("teachers' Delta = %g, release's delta = %.6g\n", p.Delta, p.TargetDelta)
	fmt.Printf("budget e^{m·eps} - 1 + 2·delta = %.6f\n", p.Budget())
	// Output:
	// K = 11, m = 3, eps = 0.1
	// teachers' Delta = 1e-05, release's delta = 2.99997e-05
	// budget e^{m·eps} - 1 + 2·delta = 0.349919
}

// A release delta other than the thesis' default is set on the result;
// Validate names a delta below the teachers' Delta.
func ExampleProblem_Validate() {
	p := constraints.New(11, 3, 0.1, 1e-5)
	p.TargetDelta = 1e-6
	fmt.Println(p.Validate())
	// Output:
	// delta (the release's delta, Problem.TargetDelta) = 1e-06: must be >= Delta = 1e-05: DaRRM's problem holds a release to at least its teachers' delta
}
