package poissonbinom_test

import (
	"fmt"

	"github.com/darrm/darrm/internal/poissonbinom"
)

func ExamplePMF() {
	// Three teachers vote 1 with probabilities 0.9, 0.8 and 0.5.
	pmf, err := poissonbinom.PMF([]float64{0.9, 0.8, 0.5})
	if err != nil {
		panic(err)
	}
	for l, v := range pmf {
		fmt.Printf("Pr[L=%d] = %.3f\n", l, v)
	}
	// Output:
	// Pr[L=0] = 0.010
	// Pr[L=1] = 0.140
	// Pr[L=2] = 0.490
	// Pr[L=3] = 0.360
}
