package gamma_test

import (
	"context"
	"fmt"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
)

// The thesis' main setting (Section 3.7.1): K = 11 teachers, each
// (0.1, 1e-5)-DP, released (3·0.1, 1-(1-1e-5)^3)-DP.
func ExampleOpt() {
	p := constraints.Params{K: 11, M: 3, Eps: 0.1, Delta: 1e-5, TargetDelta: constraints.DefaultTargetDelta(1e-5, 3)}
	res, err := gamma.Opt(context.Background(), p, gamma.UniformPrior(), gamma.OptOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("certificate:", res.Certificate.Status)
	fmt.Printf("gamma(6..11): %.4f\n", res.Gamma[6:])
	fmt.Printf("surrogate error: %.4f\n", res.SurrogateError)
	// Output:
	// certificate: certified
	// gamma(6..11): [0.9392 0.5423 1.0000 1.0000 0.9777 1.0000]
	// surrogate error: 0.0413
}

func ExampleVerify() {
	p := constraints.Params{K: 11, M: 1, Eps: 0.1, Delta: 1e-5, TargetDelta: 1e-5}
	exact, _ := gamma.Const(11, 1) // always release the true majority
	cert, err := gamma.Verify(context.Background(), p, exact, 0, nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%v: max f = %.4f > budget %.4f, worst case %v\n", cert.Status, cert.MaxF, cert.Budget, cert.Worst)
	// Output:
	// violated: max f = 0.2836 > budget 0.1052, worst case [0 0 0 1 0 0 10 0]
}
