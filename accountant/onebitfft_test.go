package accountant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// directOracle is the direct convolution as it was summed before it
// visited only the nonzero entries (issue 88): every entry of every
// step's sum, into a new array per step. The run's p must be this, bit
// for bit.
func directOracle(n int, comps []bitComp) (first int, p []float64) {
	cur, width := []float64{1}, 0
	for _, c := range comps {
		first += c.k * c.imin
		for range c.k {
			width += n - c.imin
			next := make([]float64, width+1)
			for i, v := range cur {
				if v == 0 {
					continue
				}
				for j, m := range c.mass {
					next[i+c.idx[j]-c.imin] += v * m
				}
			}
			cur = next
		}
	}
	return first, cur
}

// TestDirectUnchanged: the direct convolution gives the oracle's sums bit
// for bit, on the layouts of random pairs (few atoms on a fine grid,
// which stay sparse, and many on a coarse one, which fill the window),
// with masses of 0 and products that underflow, one part and a
// schedule's several.
func TestDirectUnchanged(t *testing.T) {
	rng := rand.New(rand.NewPCG(88, 5))
	cases, most := 300, float64(maxDirect)
	if testing.Short() {
		cases, most = 40, maxDirect/16
	}
	for i := range cases {
		n := []int{1, 2, 7, 50, 1000, 1 << 17}[rng.IntN(6)]
		var comps []bitComp
		for range 1 + rng.IntN(3) {
			c := bitComp{k: 1 + rng.IntN(6), imin: n}
			for range 1 + rng.IntN(5) {
				i := rng.IntN(2*n+1) - n
				m := rng.Float64()
				switch rng.IntN(6) {
				case 0:
					m = 0
				case 1:
					m = 0x1p-1000 * rng.Float64()
				}
				c.mass, c.idx = append(c.mass, m), append(c.idx, i)
				c.imin = min(c.imin, i)
			}
			if rng.IntN(4) == 0 {
				c.k = 40 + rng.IntN(40)
			}
			comps = append(comps, c)
		}
		// Within the work layBitGrid composes directly (a sixteenth of
		// it in -short).
		var kf, work float64
		for _, c := range comps {
			kf += float64(c.k)
		}
		for _, c := range comps {
			work += float64(len(c.mass)) * float64(c.k) * (kf*float64(n-c.imin) + 1)
		}
		if work > most {
			continue
		}
		first, want := directOracle(n, comps)
		r := &bitRun{n: n}
		r.direct(comps)
		if r.first != first || len(r.p) != len(want) {
			t.Fatalf("case %d: first %d, %d entries; was %d, %d", i, r.first, len(r.p), first, len(want))
		}
		for j := range want {
			if math.Float64bits(r.p[j]) != math.Float64bits(want[j]) {
				t.Fatalf("case %d (n %d, %v): p[%d] = %v, was %v", i, n, comps, j, r.p[j], want[j])
			}
		}
		r.positive()
		if !slices.Equal(r.blockMax, blockMaxOf(want)) {
			t.Fatalf("case %d (n %d, %v): blockMax is not p's", i, n, comps)
		}
	}
}

// BenchmarkDirect: the direct convolution of the layouts that commands
// compose directly (a few steps on the grid of a release's window; many
// on a coarse one), beside directOracle, the path it replaced.
func BenchmarkDirect(b *testing.B) {
	loss := oneBitLoss(testBits()["delta"])
	for _, tc := range []struct{ k, n int }{{1, 262142}, {2, 131071}, {25, 655}, {20, 1}} {
		g := layBitGrid([]bitPart{{loss, tc.k}}, loss.top(), tc.n, 0)
		if !g.direct {
			b.Fatalf("k %d, n %d: not composed directly", tc.k, tc.n)
		}
		b.Run(fmt.Sprintf("k=%d/n=%d/new", tc.k, tc.n), func(b *testing.B) {
			for b.Loop() {
				r := &bitRun{n: tc.n}
				r.direct(g.comps)
				sink = r.p[0]
			}
		})
		b.Run(fmt.Sprintf("k=%d/n=%d/old", tc.k, tc.n), func(b *testing.B) {
			for b.Loop() {
				_, p := directOracle(tc.n, g.comps)
				sink = p[0]
			}
		})
	}
}
