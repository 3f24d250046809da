package optimal_test

import (
	"context"
	"fmt"
	"os"

	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/optimal"
)

// The thesis' main setting (Section 3.7.1): K = 11 teachers, each
// (0.1, 1e-5)-DP, released (3·0.1, 1-(1-1e-5)^3)-DP.
func ExampleSolve() {
	p := constraints.New(11, 3, 0.1, 1e-5) // delta = 1-(1-Delta)^m, the thesis' default
	res, err := optimal.Solve(context.Background(), p, gamma.UniformPrior(), optimal.Options{})
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

// A Source with a cache solves gamma_opt once and stores it; a later Load
// takes it from the cache and certifies it again exhaustively, never
// trusting the file's certificate.
func ExampleSource_Load() {
	dir, err := os.MkdirTemp("", "darrm-example-cache")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	d, err := cache.Open(dir)
	if err != nil {
		panic(err)
	}
	src := optimal.Source{Cache: d, Prior: gamma.UniformPrior()}
	p := constraints.New(11, 3, 0.1, 1e-5)
	for range 2 {
		l, err := src.Load(context.Background(), p)
		if err != nil {
			panic(err)
		}
		if l.StoreErr != nil {
			fmt.Println("not stored:", l.StoreErr)
		}
		fmt.Printf("solved now: %v, from the cache: %v, certificate: %v\n", !l.Cached, l.Cached, l.Entry.Certificate.Status)
	}
	// Output:
	// solved now: true, from the cache: false, certificate: certified
	// solved now: false, from the cache: true, certificate: certified
}
