package accountant_test

import (
	"fmt"

	"github.com/darrm/darrm/accountant"
)

// The per-query privacy of Table B.1: ten (0.1, 1e-5)-DP teachers with
// slack δ' = 0.1.
func ExampleComposition_Compose_general() {
	total, err := accountant.Composition{Method: accountant.General, DeltaPrime: 0.1}.Compose(accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, 10)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("m = %.4f, delta = %.4f\n", total.Eps/0.1, total.Delta)
	// Output: m = 6.4521, delta = 0.1001
}

// Optimal composition is tighter than general composition for the same δ'.
func ExampleComposition_Compose() {
	step := accountant.Guarantee{Eps: 0.01, Delta: 0}
	for _, m := range []accountant.Method{accountant.Simple, accountant.General, accountant.Optimal} {
		total, err := accountant.Composition{Method: m, DeltaPrime: 1e-5}.Compose(step, 10000)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-8v eps = %.4f\n", m, total.Eps)
	}
	// Output:
	// simple   eps = 100.0000
	// general  eps = 5.2985
	// optimal  eps = 4.3764
}

// How many queries of Table 3.2's per-query cost fit in a budget of
// (10, 0.02) with δ' = 1e-4.
func ExampleComposition_MaxSteps() {
	step := accountant.Guarantee{Eps: 0.2676, Delta: 3e-4}
	budget := accountant.Guarantee{Eps: 10, Delta: 0.02}
	for _, m := range []accountant.Method{accountant.Simple, accountant.General, accountant.Optimal} {
		q, err := (accountant.Composition{Method: m, DeltaPrime: 1e-4}).MaxSteps(step, accountant.Budget{Guarantee: budget})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-8v Q = %d\n", m, q)
	}
	// Output:
	// simple   Q = 37
	// general  Q = 50
	// optimal  Q = 66
}

// The noise Interleaved-ShuffleG needs for (5, 1e-6)-DP in the setting of
// Section 4.7 (K = 50 epochs, G = 10, n = 1000, n_d = 500).
func ExamplePABI_Calibrate() {
	run := accountant.PABI{G: 10, Epochs: 50, Dilution: 501} // Interleaved, n = 1000, n_d = 500
	target := accountant.Guarantee{Eps: 5, Delta: 1e-6}
	for _, c := range []accountant.Conversion{accountant.PaperConversion, accountant.ImprovedConversion} {
		sigma, alpha, _, err := run.Calibrate(target, c, accountant.AlphaExact)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%-8v sigma = %.4f (alpha = %.2f)\n", c, sigma, alpha)
	}
	// Output:
	// paper    sigma = 7.1971 (alpha = 6.99)
	// improved sigma = 6.5654 (alpha = 6.09)
}

// The same run as a Gaussian: at the optimal order, and at a given one.
func ExampleGaussian_Eps() {
	run := accountant.Gaussian{Sensitivity: 1, Sigma: 5, Steps: 100}
	for _, alpha := range []float64{0, 8} {
		eps, order, _ := run.Eps(1e-5, alpha, accountant.PaperConversion)
		fmt.Printf("eps = %.4f at alpha = %.3f\n", eps, order)
	}
	// Output:
	// eps = 11.5971 at alpha = 3.399
	// eps = 17.6447 at alpha = 8.000
}

// The Gaussian mechanism with sensitivity 1 and σ = 5, composed 100 times.
func ExampleConversion_RhoToDP() {
	r := 1.0 / 5       // Δ/σ
	rho := r * r / 2   // its RDP slope Δ²/(2σ²)
	total := 100 * rho // RDP composes by addition
	for _, c := range []accountant.Conversion{accountant.PaperConversion, accountant.ImprovedConversion} {
		eps, alpha, _ := c.RhoToDP(total, 1e-5)
		fmt.Printf("%-8v eps = %.4f at alpha = %.3f\n", c, eps, alpha)
	}
	// Output:
	// paper    eps = 11.5971 at alpha = 3.399
	// improved eps = 10.7248 at alpha = 3.272
}

// The teacher-level cap of 11 fixed DP-SGD teachers, (0.0885, 1e-4)-DP
// each, bounds the total of any number of labels released from their
// votes, and is their only bound: 100 labels at (0.2655, 3e-4) compose
// to far more, and even one label's composition is not proved for
// fixed teachers.
func ExampleTeacherCap() {
	teacher := accountant.Guarantee{Eps: 0.0885, Delta: 1e-4}
	for _, s := range []accountant.Shares{accountant.Disjoint, accountant.Shared} {
		c, err := accountant.TeacherCap(teacher, 11, s, 1e-4)
		if err != nil {
			fmt.Println(err)
			return
		}
		queries, err := accountant.Composition{Method: accountant.General, DeltaPrime: 1e-4}.Compose(accountant.Guarantee{Eps: 0.2655, Delta: 3e-4}, 100)
		if err != nil {
			fmt.Println(err)
			return
		}
		total, bound := c.Total(queries)
		fmt.Printf("%-8v cap (%.4f, %.2g) by %s; 100 labels: (%.4f, %.2g), bound %v\n", s, c.Eps, c.Delta, c.Rule(), total.Eps, total.Delta, bound)
	}
	// Output:
	// disjoint cap (0.0885, 0.0001) by parallel; 100 labels: (0.0885, 0.0001), bound teachers
	// shared   cap (0.8374, 0.0012) by optimal; 100 labels: (0.8374, 0.0012), bound teachers
}

// ExampleComposeRun composes 194 queries of Confident-GNMax (σ1 = 150,
// σ2 = 40, discrete noise) at total δ = 1e-5: the exact composition of
// their dominating pairs fits (2, 1e-5), RDP's needs more.
func ExampleComposeRun() {
	step := accountant.Spend{Kind: accountant.GaussianSpend, Guarantee: accountant.Guarantee{Eps: 0.173291, Delta: 1e-5}, Discrete: true,
		Gaussian: []accountant.GaussianPart{{Sigma: 40, Coords: 2}, {Sigma: 150, Coords: 1}}}
	totals, err := accountant.ComposeRun(nil, step, 194, 1e-5, 1e-5, accountant.ImprovedConversion)
	if err != nil {
		panic(err)
	}
	for _, t := range totals[3:] {
		fmt.Printf("%s: eps %.4f\n", t.Method, t.Guarantee.Eps)
	}
	// Output:
	// rdp: eps 2.1711
	// exact: eps 1.9981
}
