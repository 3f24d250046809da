package noisymax_test

import (
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/noisymax"
)

// GNMax's noise for the MNIST per-query target of Table B.2, by the
// paper's grid search and by the exact search under either conversion.
func ExampleCalibrateGNMax() {
	target := accountant.Guarantee{Eps: 0.2676, Delta: 3e-4}
	sigma, lambda, _ := noisymax.CalibrateGNMax(target, noisymax.GNMaxGrid, accountant.PaperConversion)
	fmt.Printf("grid:     sigma = %.2f at lambda = %.2f\n", sigma, lambda)
	sigma, lambda, _ = noisymax.CalibrateGNMax(target, noisymax.GNMaxExact, accountant.PaperConversion)
	fmt.Printf("exact:    sigma = %.2f at lambda = %.2f\n", sigma, lambda)
	sigma, lambda, _ = noisymax.CalibrateGNMax(target, noisymax.GNMaxExact, accountant.ImprovedConversion)
	fmt.Printf("improved: sigma = %.2f at lambda = %.2f\n", sigma, lambda)
	// Output:
	// grid:     sigma = 21.46 at lambda = 62.31
	// exact:    sigma = 21.46 at lambda = 62.12
	// improved: sigma = 14.63 at lambda = 32.48
}
