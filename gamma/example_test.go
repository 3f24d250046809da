package gamma_test

import (
	"context"
	"fmt"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
)

func ExampleVerify() {
	p := constraints.New(11, 1, 0.1, 1e-5) // at m = 1, delta = Delta
	exact, _ := gamma.Const(11, 1)         // always release the true majority
	cert, err := gamma.Verify(context.Background(), p, exact, gamma.VerifyOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%v: max f = %.4f > budget %.4f, worst case %v\n", cert.Status, cert.MaxF, cert.Budget, cert.Worst)
	// Output:
	// violated: max f = 0.2836 > budget 0.1052, worst case [0 0 0 1 0 0 10 0]
}
