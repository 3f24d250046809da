package pate

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/darrm/darrm/noisymax"
)

// synthCounts returns n queries of k teachers' counts over c classes: in
// a share high of them each teacher votes the query's class with
// probability 0.95, in the others with probability 0.3, and otherwise a
// uniform other class.
func synthCounts(r *rand.Rand, n, k, c int, high float64) [][]int {
	out := make([][]int, n)
	for i := range out {
		p := 0.3
		if r.Float64() < high {
			p = 0.95
		}
		truth := r.IntN(c)
		row := make([]int, c)
		for range k {
			if r.Float64() < p {
				row[truth]++
				continue
			}
			o := r.IntN(c - 1)
			if o >= truth {
				o++
			}
			row[o]++
		}
		out[i] = row
	}
	return out
}

// TestPTRLocalSensitivityBruteForce checks the local sensitivity at every
// distance d that ptrBound gives one query against brute force: the
// largest change of the bound between a histogram within d of the query's
// and any of its neighbours, over every histogram of K teachers and C
// classes, with and without abstaining teachers.
func TestPTRLocalSensitivityBruteForce(t *testing.T) {
	for _, c := range []struct {
		name    string
		k, cl   int
		m       noisymax.ConfidentGNMax
		order   float64
		abstain bool
	}{
		{"confident-gnmax", 14, 3, noisymax.ConfidentGNMax{Threshold: 10, Sigma1: 2, Sigma2: 1, Noise: noisymax.DiscreteNoise}, 2, false},
		{"confident-gnmax abstain", 12, 3, noisymax.ConfidentGNMax{Threshold: 8, Sigma1: 1.5, Sigma2: 1, Noise: noisymax.DiscreteNoise}, 2, true},
		{"confident-gnmax continuous", 14, 3, noisymax.ConfidentGNMax{Threshold: 10, Sigma1: 2, Sigma2: 1.5, Noise: noisymax.ContinuousNoise}, 2, false},
		{"confident-gnmax four classes", 10, 4, noisymax.ConfidentGNMax{Threshold: 6, Sigma1: 1, Sigma2: 0.8, Noise: noisymax.DiscreteNoise}, 1.5, true},
		{"gnmax", 12, 3, noisymax.ConfidentGNMax{Sigma2: 1, Noise: noisymax.DiscreteNoise}, 2, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			sp := newSpace(neighbours{abstain: c.abstain, teachers: c.k}, c.cl)
			hs := sp.hs
			f := make([]float64, len(hs))
			ls := make([][]float64, len(hs))
			varies := false
			for i, h := range hs {
				acct, err := newRDPAccount(c.m, c.k, c.cl, rdpOptions{Orders: []float64{c.order}, Abstain: c.abstain})
				if err != nil {
					t.Fatal(err)
				}
				if err := acct.add(h, answerUnknown); err != nil {
					t.Fatal(err)
				}
				if f[i], ls[i], err = acct.ptrBound(context.Background(), c.order); err != nil {
					t.Fatal(err)
				}
				varies = varies || f[i] != f[0]
			}
			if !varies {
				t.Fatal("the bound is the same at every histogram: nothing is checked")
			}
			local := sp.localSensitivity(f)
			tight := 0.0
			for i, x := range hs {
				for d := 0; d <= c.k; d++ {
					brute := 0.0
					for j := range hs {
						if sp.dist(i, j) <= d {
							brute = math.Max(brute, local[j])
						}
					}
					if brute > ls[i][d]*(1+1e-12)+1e-15 {
						t.Fatalf("%v at distance %d: a change of %g by brute force, above the bound %g", x, d, brute, ls[i][d])
					}
					if brute > 0 {
						tight = math.Max(tight, brute/ls[i][d])
					}
				}
			}
			t.Logf("largest brute-force change over the bound: %.3f", tight)
		})
	}
}
