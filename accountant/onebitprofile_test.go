package accountant

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// profileOracle is the profile's sums as they were made before the
// losses were computed on demand, the estimate's suffix sums kept per
// block and the blocks' largest entries found as p was written (issue
// 88): every entry's loss and both suffix sums at every entry, kept in
// arrays, and blockMax from a scan of p. The run's answers must be
// these, bit for bit.
type profileOracle struct {
	r            *bitRun
	losses       []float64
	tailP, tailE []float64
	blockMax     []float64
}

func newProfileOracle(r *bitRun) profileOracle {
	o := profileOracle{r: r, losses: make([]float64, len(r.p)-r.start), blockMax: blockMaxOf(r.p)}
	for j := range o.losses {
		o.losses[j] = r.loss(r.first + r.start + j)
	}
	n := len(o.losses)
	o.tailP, o.tailE = make([]float64, n+1), make([]float64, n+1)
	up := math.Exp(r.hi / float64(r.n))
	var e float64
	for j := n - 1; j >= 0; j-- {
		if (n-1-j)%estimateAnchor == 0 {
			e = math.Exp(-o.losses[j])
		} else {
			e *= up
		}
		p := r.p[r.start+j]
		o.tailP[j] = o.tailP[j+1] + p
		o.tailE[j] = o.tailE[j+1] + float64(p*e)
	}
	return o
}

// blockMaxOf returns the largest entry of each block of rawBlock entries
// of p.
func blockMaxOf(p []float64) []float64 {
	out := make([]float64, (len(p)+rawBlock-1)/rawBlock)
	for i, v := range p {
		if b := i / rawBlock; v > out[b] {
			out[b] = v
		}
	}
	return out
}

func (o profileOracle) above(eps float64) int {
	return sort.Search(len(o.losses), func(j int) bool { return o.losses[j] > eps })
}

func (o profileOracle) lossOf(i int) float64 {
	if i >= o.r.start {
		return o.losses[i-o.r.start]
	}
	return o.r.loss(o.r.first + i)
}

func (o profileOracle) delta(eps float64) float64 {
	r := o.r
	from := 0
	if eps >= 0 {
		from = r.start + o.above(eps)
	}
	var sum float64
	for i := from; i < len(r.p); i++ {
		if i%rawBlock == 0 && sum > 0x1p-900 && o.blockMax[i/rawBlock] < sum*0x1p-54 {
			i += rawBlock - 1
			continue
		}
		p := r.p[i]
		if !(p > 0) || sum > 0x1p-900 && p < sum*0x1p-54 {
			continue
		}
		if l := o.lossOf(i); l > eps {
			sum += float64(p * -math.Expm1(eps-l))
		}
	}
	return r.bound(sum, eps)
}

func (o profileOracle) estimate(eps float64) float64 {
	if eps < 0 {
		return o.delta(eps)
	}
	j := o.above(eps)
	return o.r.bound(max(0, o.tailP[j]-float64(math.Exp(eps)*o.tailE[j])), eps)
}

// TestProfileSumsUnchanged: the profile of a one-bit composition and its
// estimate are, at every ε asked, bit for bit those of the arrays of
// every entry's loss and suffix sums (profileOracle), on random pairs
// (the tests' pairs, with an infinite loss, randomized response, a rare
// large loss),
// counts and total δ, composed directly and by the transform, tilted and
// not, at ε on the grid's losses and between them.
func TestProfileSumsUnchanged(t *testing.T) {
	rng := rand.New(rand.NewPCG(88, 4))
	runs, windows := 40, 6
	if testing.Short() {
		runs, windows = 8, 3
	}
	ks := []int{1, 2, 3, 7, 20, 79, 300, 2000}
	deltas := []float64{0, 1e-300, 1e-12, 1e-8, 1e-5, 0.05}
	for i := range runs {
		var pairs []BitPair
		switch i % 4 {
		case 0:
			pairs = testBits()[[]string{"pure", "delta", "random"}[rng.IntN(3)]]
		case 1:
			for range 3 {
				pairs = append(pairs, BitPair{P: rng.Float64(), Q: rng.Float64()})
			}
			pairs = append(pairs, BitPair{P: 1e-6 * rng.Float64(), Q: 0})
		case 2:
			p := 0.5 + rng.Float64()/2
			pairs = []BitPair{{P: p, Q: 1 - p}}
		default:
			pairs = []BitPair{{P: 1e-8, Q: 1e-12}}
			for range 30 {
				p := 0.3 + 0.4*rng.Float64()
				pairs = append(pairs, BitPair{P: p, Q: p * (1 - 0.05*rng.Float64())})
			}
		}
		k, delta := ks[rng.IntN(len(ks))], deltas[rng.IntN(len(deltas))]
		if i%8 == 7 {
			k = 1 << 16
		}
		// Smaller windows than a release's: the same sums, cheaper
		// transforms; every tenth run at the release's own.
		window := 1 << (12 + rng.IntN(windows))
		if i%10 == 9 {
			window = maxBitWindow
		}
		r, err := newBitRunIn(nil, []bitPart{{oneBitLoss(pairs), k}}, delta, window)
		if err != nil || r.empty {
			continue
		}
		r.ready()
		o := newProfileOracle(r)
		if !slices.Equal(r.blockMax, o.blockMax) {
			t.Fatalf("pairs %v, k %d, delta %g, window %d: blockMax is not p's", pairs, k, delta, window)
		}
		for j := range 200 {
			var eps float64
			switch j % 4 {
			case 0: // a loss of the grid, where above decides
				eps = r.loss(r.first + rng.IntN(len(r.p)+2) - 1)
			case 1:
				eps = math.Nextafter(r.loss(r.first+rng.IntN(len(r.p))), math.Inf(-1))
			case 2:
				eps = (rng.Float64()*1.2 - 0.1) * r.loss(r.first+len(r.p)-1)
			default:
				eps = []float64{-2, -1e-300, 0, 1e-300, 1e300, math.Inf(1)}[rng.IntN(6)]
			}
			if got, want := r.above(eps), o.above(eps); got != want {
				t.Fatalf("pairs %v, k %d, window %d: above(%v) = %d, was %d", pairs, k, window, eps, got, want)
			}
			if got, want := r.delta(eps), o.delta(eps); got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("pairs %v, k %d, delta %g, window %d: delta(%v) = %v, was %v", pairs, k, delta, window, eps, got, want)
			}
			if got, want := r.estimate(eps), o.estimate(eps); got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("pairs %v, k %d, delta %g, window %d: estimate(%v) = %v, was %v", pairs, k, delta, window, eps, got, want)
			}
		}
	}
}
