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

// gamma_DSub at m = 3 for 11 teachers is the majority of 2m-1 = 5 of them,
// drawn without replacement (Theorem 3.5.1); gamma_Sub at m = 3 (Lemma
// 3.4.1) the majority of 3. With pure-DP teachers both reach the budget
// e^{m·eps} - 1 exactly, which float64 cannot tell from above it: the
// certificate says tight, and Certify would scale them by 1 - O(1e-12).
func ExampleDSub() {
	p := constraints.New(11, 3, 0.1, 0)
	sub, err := gamma.Sub(p.K, gamma.SubSize(p.M))
	if err != nil {
		panic(err)
	}
	dsub, err := gamma.DSub(p.K, p.M)
	if err != nil {
		panic(err)
	}
	for _, g := range []gamma.Gamma{sub, dsub} {
		cert, err := gamma.Verify(context.Background(), p, g, gamma.VerifyOptions{})
		if err != nil {
			panic(err)
		}
		fmt.Printf("gamma(6..11) = %.3f: %v\n", g[6:], cert.Status)
	}
	_, err = gamma.DSub(11, 0.5)
	fmt.Println(err)
	// Output:
	// gamma(6..11) = [0.152 0.442 0.697 0.891 1.000 1.000]: tight
	// gamma(6..11) = [0.216 0.606 0.879 1.000 1.000 1.000]: tight
	// gamma_DSub: m = 0.5: must be in [1, K] = [1, 11] (a non-integer m is taken as floor(m))
}

// gamma_DSub at m = 3 is exactly at the budget, which float64 cannot
// prove; Certify scales it down by 1 - O(1e-12) until the exhaustive check
// certifies it, and returns the certificate of the scaled gamma.
func ExampleCertify() {
	p := constraints.New(11, 3, 0.1, 0)
	dsub, err := gamma.DSub(p.K, p.M)
	if err != nil {
		panic(err)
	}
	g, cert, err := gamma.Certify(context.Background(), p, dsub, gamma.VerifyOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%v, max f / budget = 1 - %.2g, scaled by 1 - %.2g\n", cert.Status, 1-cert.Ratio, 1-g[11]/dsub[11])
	// Output:
	// certified, max f / budget = 1 - 2.8e-13, scaled by 1 - 2.8e-13
}
