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

// PATE's MNIST setting: the privacy of 100 queries whose 250 teachers
// nearly agree, released by Confident-GNMax with the realised answers;
// the data-dependent bound in both directions (the default), and the PATE
// paper's one-sided value.
func ExampleNewAccount() {
	m := noisymax.ConfidentGNMax{Threshold: 200, Sigma1: 150, Sigma2: 40, Noise: noisymax.DiscreteNoise}
	for _, dir := range []noisymax.Directions{noisymax.BothDirections, noisymax.OneSided} {
		acct, err := noisymax.NewAccount(m, 250, 10, noisymax.Options{Directions: dir})
		if err != nil {
			panic(err)
		}
		for i := range 100 {
			counts := []int{240, 5, 5, 0, 0, 0, 0, 0, 0, 0}
			ans := noisymax.Answered
			if i%10 == 0 {
				ans = noisymax.NotAnswered
			}
			if err := acct.Add(counts, ans); err != nil {
				panic(err)
			}
		}
		r, err := acct.Result(1e-5, accountant.PaperConversion)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-9v data-independent eps %.3f, data-dependent eps %.3f (not for publication)\n", r.Directions, r.Independent.Eps, r.Dependent.Eps)
	}
	// Output:
	// both      data-independent eps 1.699, data-dependent eps 0.472 (not for publication)
	// one-sided data-independent eps 1.699, data-dependent eps 0.468 (not for publication)
}

// The privacy of one GNMax label whose 250 teachers nearly agree, with
// the discrete Gaussian noise darrm's releases draw: the data-dependent
// bound is far below the data-independent one at sigma = 10, and no lower
// at sigma = 40. It depends on the votes, so it is not for publication as
// it stands.
func ExampleGNMaxDataDependent() {
	counts := []int{240, 5, 5, 0, 0, 0, 0, 0, 0, 0}
	for _, sigma := range []float64{10, 40} {
		r, err := noisymax.GNMaxDataDependent(counts, sigma, noisymax.DiscreteNoise, 1e-5)
		if err != nil {
			panic(err)
		}
		fmt.Printf("sigma %g: data-independent eps %.4f, data-dependent eps %.4f\n", sigma, r.Independent.Eps, r.Dependent.Eps)
	}
	// Output:
	// sigma 10: data-independent eps 0.6886, data-dependent eps 0.2014
	// sigma 40: data-independent eps 0.1703, data-dependent eps 0.1703
}
