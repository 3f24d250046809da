package pate

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/noisymax"
)

// Exact output distributions of PATE's steps with discrete Gaussian noise,
// summed over the noise, and the Rényi divergences between them: the
// references the data-dependent bounds are tested against.

// relPad is the relative error allowed for each probability the sums
// below return: every sum has positive terms only, each a product of at
// most a few dozen roundings, over at most a few thousand terms.
const relPad = 1e-10

// dgWeights returns e^{-z²/(2σ²)} for z = -w..w (index z + w), their sum
// and w, with w so large that the mass beyond it is negligible: the test
// helpers check that against each probability they return.
func dgWeights(sigma float64) (wt []float64, sum float64, w int) {
	w = int(math.Ceil(38*sigma)) + 2
	wt = make([]float64, 2*w+1)
	for z := -w; z <= w; z++ {
		wt[z+w] = math.Exp(-float64(z) * float64(z) / (2 * sigma * sigma))
		sum += wt[z+w]
	}
	return wt, sum, w
}

// logTailBeyond returns an upper bound on log Pr[|Z| > w] for Z ~ N_Z(0,
// σ²): 2·Σ_{z>w} e^{-z²/(2σ²)}/N <= 2e^{-(w+1)²/(2σ²)}/(1 - e^{-(w+1)/σ²}),
// as N >= 1 and the ratio of consecutive terms is below e^{-(w+1)/σ²}.
func logTailBeyond(sigma float64, w int) float64 {
	x := float64(w + 1)
	return math.Ln2 - x*x/(2*sigma*sigma) - math.Log(-math.Expm1(-x/(sigma*sigma)))
}

// exactGNMax returns Pr[GNMax(counts) = i] for every class i with discrete
// Gaussian noise N_Z(0, σ²) on each count and ties broken uniformly at
// random: class i wins at noisy count v = n_i + z with probability
// ∫_0^1 Π_{j≠i}(Pr[n_j + Z_j < v] + Pr[n_j + Z_j = v]·t) dt (k classes
// tied with it each win with probability 1/(k+1) = ∫ t^k dt).
func exactGNMax(t *testing.T, counts []int, sigma float64) []float64 {
	t.Helper()
	wt, sum, w := dgWeights(sigma)
	cdf := make([]float64, len(wt)) // Σ_{z' <= z} weight, z = -w..w
	acc := 0.0
	for i, x := range wt {
		acc += x
		cdf[i] = acc
	}
	less := func(x int) float64 { // Pr[Z < x]·N
		switch {
		case x-1 < -w:
			return 0
		case x-1 >= w:
			return sum
		}
		return cdf[x-1+w]
	}
	at := func(x int) float64 { // Pr[Z = x]·N
		if x < -w || x > w {
			return 0
		}
		return wt[x+w]
	}
	c := len(counts)
	p := make([]float64, c)
	poly := make([]float64, c)
	for i := range counts {
		for z := -w; z <= w; z++ {
			v := counts[i] + z
			poly = poly[:1]
			poly[0] = 1
			for j, n := range counts {
				if j == i {
					continue
				}
				a, b := less(v-n)/sum, at(v-n)/sum
				poly = append(poly, 0)
				for k := len(poly) - 1; k >= 1; k-- {
					poly[k] = poly[k]*a + poly[k-1]*b
				}
				poly[0] *= a
			}
			var integral float64
			for k, x := range poly {
				integral += x / float64(k+1)
			}
			p[i] += wt[z+w] / sum * integral
		}
	}
	tail := logTailBeyond(sigma, w)
	for i, x := range p {
		// A truncated noise misses at most c tails' mass of p_i; it must
		// be far below the relative error allowed.
		if !(x > 1e-290) || tail+math.Log(float64(c)) > math.Log(x)+math.Log(relPad)-30 {
			t.Fatalf("counts %v sigma %v: p[%d] = %v too small for the truncated sum (log tail %v)", counts, sigma, i, x, tail)
		}
	}
	return p
}

// exactThreshold returns Pr[answer] and Pr[no answer] of the threshold
// step at largest count v: v + Z >= T, Z ~ N_Z(0, σ²), each summed
// directly.
func exactThreshold(t *testing.T, v int, threshold, sigma float64) [2]float64 {
	t.Helper()
	wt, sum, w := dgWeights(sigma)
	k := int(math.Ceil(threshold)) - v // answer iff Z >= k
	var yes, no float64
	for z := -w; z <= w; z++ {
		if z >= k {
			yes += wt[z+w]
		} else {
			no += wt[z+w]
		}
	}
	out := [2]float64{yes / sum, no / sum}
	tail := logTailBeyond(sigma, w)
	for _, x := range out {
		if !(x > 1e-290) || tail > math.Log(x)+math.Log(relPad)-30 {
			t.Fatalf("v %d T %v sigma %v: probability %v too small for the truncated sum", v, threshold, sigma, x)
		}
	}
	return out
}

// renyi returns an interval [lo, hi] holding D_λ(P||Q) =
// log(Σ p_i^λ q_i^{1-λ})/(λ-1) for probabilities known to a relative
// relPad each. The likeliest outcome's term is formed from the others'
// total mass, (1-a)^λ(1-b)^{1-λ}, so that a divergence far below 1 keeps
// its digits.
func renyi(p, q []float64, order float64) (lo, hi float64) {
	top := 0
	for i := range p {
		if p[i]+q[i] > p[top]+q[top] {
			top = i
		}
	}
	var a, b, rest [2]float64 // lower and upper ends
	for i := range p {
		if i == top {
			continue
		}
		pl, ph := p[i]*(1-relPad), p[i]*(1+relPad)
		ql, qh := q[i]*(1-relPad), q[i]*(1+relPad)
		a[0], a[1] = a[0]+pl, a[1]+ph
		b[0], b[1] = b[0]+ql, b[1]+qh
		// p^λ q^{1-λ} grows with p and falls with q for λ > 1.
		rest[0] += math.Exp(order*math.Log(pl) + (1-order)*math.Log(qh))
		rest[1] += math.Exp(order*math.Log(ph) + (1-order)*math.Log(ql))
	}
	// (1-a)^λ(1-b)^{1-λ} falls with a and grows with b.
	topLo := math.Expm1(order*math.Log1p(-a[1]) + (1-order)*math.Log1p(-b[0]))
	topHi := math.Expm1(order*math.Log1p(-a[0]) + (1-order)*math.Log1p(-b[1]))
	eLo, eHi := topLo+rest[0], topHi+rest[1] // E - 1
	// A few ulps of each piece for the float operations themselves.
	slack := 1e-14 * (math.Abs(topLo) + math.Abs(topHi) + rest[1])
	return math.Log1p(eLo-slack) / (order - 1), math.Log1p(eHi+slack) / (order - 1)
}

// distinctNeighbours returns the histograms one changed teacher from
// counts in rel, one per pair of counts moved between and, with
// abstentions, one per count a vote is removed from or added to
// (permuting the classes of both histograms alike changes no divergence).
func distinctNeighbours(rel neighbours, counts []int) [][]int {
	var out [][]int
	var tried [][2]int
	for a, na := range counts {
		for b, nb := range counts {
			if a == b || na == 0 || slices.Contains(tried, [2]int{na, nb}) {
				continue
			}
			tried = append(tried, [2]int{na, nb})
			y := slices.Clone(counts)
			y[a], y[b] = na-1, nb+1
			out = append(out, y)
		}
	}
	if !rel.abstain {
		return out
	}
	var seen []int
	for a, na := range counts {
		if slices.Contains(seen, na) {
			continue
		}
		seen = append(seen, na)
		for _, step := range []int{-1, 1} {
			if na+step < 0 || (step > 0 && sum(counts) >= rel.teachers) {
				continue
			}
			y := slices.Clone(counts)
			y[a] += step
			out = append(out, y)
		}
	}
	return out
}

// gnmaxDirections returns the largest upper ends of D_λ(M(x)‖M(x')) and
// D_λ(M(x')‖M(x)) over the neighbours x' of x in rel, and the largest
// lower end of the second, for GNMax with discrete Gaussian noise.
func gnmaxDirections(t *testing.T, x []int, sigma, order float64, rel neighbours) (fwd, rev, revLo float64) {
	t.Helper()
	p := exactGNMax(t, x, sigma)
	for _, y := range distinctNeighbours(rel, x) {
		q := exactGNMax(t, y, sigma)
		_, f := renyi(p, q, order)
		lo, r := renyi(q, p, order)
		fwd, rev, revLo = math.Max(fwd, f), math.Max(rev, r), math.Max(revLo, lo)
	}
	return fwd, rev, revLo
}

// gnmaxBounds returns the data-dependent bounds of GNMax at x: the PATE
// paper's one-sided value and darrm's default, both directions, over the
// neighbours of x in rel.
func gnmaxBounds(x []int, sigma, order float64, rel neighbours) (oneSided, both float64) {
	k := newCurve(testMemo, gnmaxSlope(sigma), order)
	return k.at(gnmaxLogQ(testMemo, x, argmax(x), sigma, noisymax.DiscreteNoise)).Hi, k.at(gnmaxNeighbourLogQ(testMemo, x, sigma, noisymax.DiscreteNoise, rel)).Hi
}

// The examples of the PATE paper's one-sided bound failing in the other
// direction: the neighbour's divergence from x exceeds the one-sided value
// at x, and the default bound covers both directions.
func TestGNMaxBothDirectionsExamples(t *testing.T) {
	for _, c := range []struct {
		counts       []int
		sigma, order float64
	}{{[]int{20, 0, 0}, 2, 5}, {[]int{6, 0}, 0.5, 2}} {
		rel := neighbours{teachers: sum(c.counts)}
		one, both := gnmaxBounds(c.counts, c.sigma, c.order, rel)
		fwd, rev, revLo := gnmaxDirections(t, c.counts, c.sigma, c.order, rel)
		t.Logf("%v sigma %v order %v: one-sided %.4g, both %.4g; exact forward %.4g, reverse %.4g", c.counts, c.sigma, c.order, one, both, fwd, rev)
		if !(revLo > one) {
			t.Errorf("%v: the reverse divergence %v does not exceed the one-sided bound %v", c.counts, revLo, one)
		}
		if fwd > one || fwd > both || rev > both {
			t.Errorf("%v: forward %v, reverse %v; bounds one-sided %v, both %v", c.counts, fwd, rev, one, both)
		}
	}
}

// Over random small histograms, noises and orders, both directions stay
// below the default bound, the forward one below the one-sided bound too,
// and the reverse one exceeds the one-sided bound in some cases (else the
// test would not tell the two apart); in both relations: K votes, and at
// most K with a vote added, removed or moved (histograms of fewer votes
// than K). Every divergence is also below the data-independent λ/σ²,
// which a vote added or removed (L2 distance 1) keeps as a vote moved
// (√2) does.
func TestGNMaxBothDirectionsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 1))
	for _, abstain := range []bool{false, true} {
		checked, exceeded := 0, 0
		for range 150 {
			k, c := 2+r.IntN(30), 2+r.IntN(3)
			sigma := 0.5 + r.Float64()*5
			order := 1.25 + r.Float64()*15
			rel := neighbours{abstain: abstain, teachers: k}
			cast := k
			if abstain {
				cast = r.IntN(k + 1)
			}
			x := randomCounts(r, cast, c)
			one, both := gnmaxBounds(x, sigma, order, rel)
			fwd, rev, revLo := gnmaxDirections(t, x, sigma, order, rel)
			if fwd > one || fwd > both || rev > both {
				t.Fatalf("%v of K = %d (abstain %v) sigma %v order %v: forward %v, reverse %v; bounds one-sided %v, both %v", x, k, abstain, sigma, order, fwd, rev, one, both)
			}
			if ind := order / (sigma * sigma); math.Max(fwd, rev) > ind*(1+1e-12) {
				t.Fatalf("%v of K = %d (abstain %v) sigma %v order %v: forward %v, reverse %v above the data-independent %v", x, k, abstain, sigma, order, fwd, rev, ind)
			}
			checked++
			if revLo > one {
				exceeded++
			}
		}
		t.Logf("abstain %v: %d histograms: the reverse divergence exceeded the one-sided bound at %d", abstain, checked, exceeded)
		if exceeded == 0 {
			t.Errorf("abstain %v: the one-sided bound held in both directions everywhere: the cases test nothing", abstain)
		}
	}
}

// PATE's MNIST setting (K = 250, C = 10, σ2 = 40): both directions below
// the default bound on skewed and split histograms, and there below the
// one-sided bound too.
func TestGNMaxBothDirectionsMNIST(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: exact sums over the noise at sigma 40")
	}
	r := rand.New(rand.NewPCG(28, 2))
	hs := [][]int{{250, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {200, 30, 10, 10, 0, 0, 0, 0, 0, 0}, {130, 120, 0, 0, 0, 0, 0, 0, 0, 0}}
	for range 2 {
		hs = append(hs, randomCounts(r, 250, 10))
	}
	for _, x := range hs {
		for _, order := range []float64{5, 20, 60} {
			rel := neighbours{teachers: 250}
			one, both := gnmaxBounds(x, 40, order, rel)
			fwd, rev, _ := gnmaxDirections(t, x, 40, order, rel)
			if fwd > both || rev > both || fwd > one || rev > one {
				t.Errorf("%v order %v: forward %v, reverse %v; bounds one-sided %v, both %v", x, order, fwd, rev, one, both)
			}
			t.Logf("%v order %v: forward %.3g, reverse %.3g; one-sided %.3g, both %.3g", x, order, fwd, rev, one, both)
		}
	}
}

// The threshold step: the answered/withheld distribution at largest
// count v against those at v - 1 and v + 1, for small σ1 where the
// one-sided bound fails in the other direction; in both relations. With
// abstentions the largest count ranges over [0, K], below ⌈K/C⌉ too: at
// v = ⌈K/C⌉ the neighbour v - 1 exists only there, and the table of a
// relation without abstentions (which leaves it out) is exceeded by the
// reverse divergence in some cases, the under-count the relation prevents.
func TestThresholdBothDirections(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 3))
	for _, abstain := range []bool{false, true} {
		checked, exceeded, beyondMoves := 0, 0, 0
		for range 400 {
			k, c := 5+r.IntN(60), 2+r.IntN(8)
			sigma := 0.5 + r.Float64()*6
			order := 1.25 + r.Float64()*20
			rel := neighbours{abstain: abstain, teachers: k}
			moves := neighbours{teachers: k}
			lo := rel.leastMax(c)
			v := lo + r.IntN(k-lo+1)
			if abstain && r.IntN(2) == 0 {
				v = moves.leastMax(c) // where the relations differ
			}
			// Thresholds within 8σ1 of v keep both outcomes' probabilities
			// far from underflow.
			thr := float64(v) + (2*r.Float64()-1)*8*sigma
			m := noisymax.Steps{Threshold: thr, Sigma1: sigma, Sigma2: 1, Noise: noisymax.DiscreteNoise}
			oneTab, _ := thresholdTable(m.Threshold, m.Sigma1, m.Noise, rel, c, OneSided)
			bothTab, _ := thresholdTable(m.Threshold, m.Sigma1, m.Noise, rel, c, BothDirections)
			movesTab, _ := thresholdTable(m.Threshold, m.Sigma1, m.Noise, moves, c, BothDirections)
			cv := newCurve(testMemo, thresholdSlope(sigma), order)
			one, both, onlyMoves := cv.at(oneTab[v]).Hi, cv.at(bothTab[v]).Hi, cv.at(movesTab[v]).Hi
			if l, err := thresholdNeighbourLogQ(v, rel, c, thr, sigma, noisymax.DiscreteNoise); err != nil || l != bothTab[v] {
				t.Fatalf("thresholdNeighbourLogQ %v, %v; table %v", l, err, bothTab[v])
			}
			p := exactThreshold(t, v, thr, sigma)
			for _, w := range []int{v - 1, v + 1} {
				if w < lo || w > k {
					continue
				}
				q := exactThreshold(t, w, thr, sigma)
				_, fwd := renyi(p[:], q[:], order)
				revLo, rev := renyi(q[:], p[:], order)
				if fwd > one || fwd > both || rev > both {
					t.Fatalf("K %d C %d abstain %v v %d -> %d T %v sigma1 %v order %v: forward %v, reverse %v; bounds one-sided %v, both %v", k, c, abstain, v, w, thr, sigma, order, fwd, rev, one, both)
				}
				if ind := order / (2 * sigma * sigma); math.Max(fwd, rev) > ind*(1+1e-12) {
					t.Fatalf("K %d v %d -> %d: forward %v, reverse %v above the data-independent %v", k, v, w, fwd, rev, ind)
				}
				checked++
				if revLo > one {
					exceeded++
				}
				if revLo > onlyMoves {
					beyondMoves++
				}
			}
		}
		t.Logf("abstain %v: %d pairs: the reverse divergence exceeded the one-sided bound at %d, the bound without abstentions at %d", abstain, checked, exceeded, beyondMoves)
		if exceeded == 0 {
			t.Errorf("abstain %v: the one-sided bound held in both directions everywhere: the cases test nothing", abstain)
		}
		if abstain && beyondMoves == 0 {
			t.Error("the bound without abstentions held at every neighbour with them: the cases do not tell the relations apart")
		}
	}
}

// The probability of answering with discrete noise is Pr[Z >= k] under the
// discrete Gaussian's own normaliser: against a 256-bit sum over the
// integers at small σ1, where σ1·√(2π) is 1.4% off.
func TestThresholdAnswerProbabilityExact(t *testing.T) {
	for _, sigma := range []float64{0.5, 0.7, 1, 2.5, 40} {
		w := int(40*sigma) + 2
		inv := new(big.Float).SetPrec(refPrec).Quo(bf(-1), new(big.Float).SetPrec(refPrec).Mul(bf(2*sigma), bf(sigma)))
		weights := make([]*big.Float, w+1) // e^{-z²/(2σ²)}, z = 0..w
		total := new(big.Float).SetPrec(refPrec)
		for z := range weights {
			weights[z] = bigExp(new(big.Float).SetPrec(refPrec).Mul(inv, bf(float64(z*z))))
			total.Add(total, weights[z])
			if z > 0 {
				total.Add(total, weights[z])
			}
		}
		weight := func(z int) *big.Float { return weights[max(z, -z)] }
		for _, c := range []struct {
			v int
			t float64
		}{{5, 5}, {5, 6}, {5, 7.5}, {5, 4}, {10, 3}, {0, 4}, {3, 3.2}} {
			k := int(math.Ceil(c.t)) - c.v
			tail := new(big.Float).SetPrec(refPrec)
			for z := k; z <= w; z++ {
				tail.Add(tail, weight(z))
			}
			want, _ := new(big.Float).SetPrec(refPrec).Quo(tail, total).Float64()
			_, p, err := checkedThresholdLogQ(c.v, c.t, sigma, noisymax.DiscreteNoise)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(p-want) > 1e-13*want+1e-300 {
				t.Errorf("sigma1 %v v %d T %v: p = %.17g, exact %.17g", sigma, c.v, c.t, p, want)
			}
		}
	}
}

// The account charges each query a bound on both directions by default:
// against exact sums where the one-sided value fails, for a GNMax query
// and for a withheld query (the threshold step alone), while OneSided
// keeps the PATE paper's smaller value; with abstentions too, where the
// neighbour that fails it withdraws a vote from the plurality (8 of
// K = 10 voted: the largest count 5 falls to 4, below ⌈K/C⌉).
func TestPATEAccountBothDirections(t *testing.T) {
	for _, c := range []struct {
		name     string
		m        noisymax.Steps
		counts   []int
		teachers int // 0: the counts' sum, every teacher voting
		ans      answer
		order    float64
		other    []int // the neighbour with the larger reverse divergence
	}{
		{"gnmax", noisymax.Steps{Sigma2: 2, Noise: noisymax.DiscreteNoise}, []int{20, 0, 0}, 0, answerGiven, 5, []int{19, 1, 0}},
		{"gnmax", noisymax.Steps{Sigma2: 0.5, Noise: noisymax.DiscreteNoise}, []int{6, 0}, 0, answerGiven, 2, []int{5, 1}},
		{"threshold", noisymax.Steps{Threshold: 8, Sigma1: 0.5, Sigma2: 1, Noise: noisymax.DiscreteNoise}, []int{5, 5}, 0, answerWithheld, 2, []int{6, 4}},
		{"threshold, abstentions", noisymax.Steps{Threshold: 2, Sigma1: 0.7, Sigma2: 1, Noise: noisymax.DiscreteNoise}, []int{5, 3}, 10, answerWithheld, 2, []int{4, 3}},
	} {
		rel := neighbours{teachers: sum(c.counts)}
		if c.teachers > 0 {
			rel = neighbours{abstain: true, teachers: c.teachers}
		}
		var p, q []float64
		if c.m.Confident() {
			p1, q1 := exactThreshold(t, slices.Max(c.counts), c.m.Threshold, c.m.Sigma1), exactThreshold(t, slices.Max(c.other), c.m.Threshold, c.m.Sigma1)
			p, q = p1[:], q1[:]
		} else {
			p, q = exactGNMax(t, c.counts, c.m.Sigma2), exactGNMax(t, c.other, c.m.Sigma2)
		}
		_, fwd := renyi(p, q, c.order)
		revLo, rev := renyi(q, p, c.order)
		charged := map[Directions]float64{}
		for _, dir := range []Directions{BothDirections, OneSided} {
			a, err := newRDPAccount(c.m, rel.teachers, len(c.counts), rdpOptions{memo: testMemo, Orders: []float64{c.order}, Directions: dir, Abstain: rel.abstain})
			if err != nil {
				t.Fatal(err)
			}
			if err := a.add(c.counts, c.ans); err != nil {
				t.Fatal(err)
			}
			if charged[dir], err = a.rdpDependent(c.order); err != nil {
				t.Fatal(err)
			}
			r, _ := a.result(1e-5, accountant.PaperConversion)
			if r.Directions != dir || r.RDPDependent[0] != charged[dir] {
				t.Errorf("%s %v: result %v, %v; charged %v", c.name, dir, r.Directions, r.RDPDependent, charged[dir])
			}
		}
		def, err := newRDPAccount(c.m, rel.teachers, len(c.counts), rdpOptions{memo: testMemo, Orders: []float64{c.order}, Abstain: rel.abstain})
		if err != nil {
			t.Fatal(err)
		}
		_ = def.add(c.counts, c.ans)
		if got, _ := def.rdpDependent(c.order); got != charged[BothDirections] {
			t.Errorf("%s: the default account charges %v, both directions %v", c.name, got, charged[BothDirections])
		}
		if fwd > charged[BothDirections] || rev > charged[BothDirections] {
			t.Errorf("%s %v: charged %v; exact forward %v, reverse %v", c.name, c.counts, charged[BothDirections], fwd, rev)
		}
		if !(revLo > charged[OneSided]) {
			t.Errorf("%s %v: one-sided %v is not exceeded by the reverse divergence %v", c.name, c.counts, charged[OneSided], revLo)
		}
	}
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

// The account's A(d) bounds the true local sensitivity of its total, a
// single query's cost as a function of the histogram, by brute force over
// every histogram of 12 votes among 3 classes (with abstentions, of at
// most 12: neighbours a vote added, removed or moved): GNMax answered, the
// threshold step alone, and the expected cost; in both directions and
// one-sided.
func TestPATEAccountLocalSensitivityBruteForce(t *testing.T) {
	const k, classes, order = 12, 3, 2.0
	for ri, rel := range relations(k) {
		sp := newSpace(rel, classes)
		hs := sp.hs
		for ci, c := range []struct {
			m   noisymax.Steps
			ans answer
		}{
			{noisymax.Steps{Sigma2: 1, Noise: noisymax.DiscreteNoise}, answerGiven},
			{noisymax.Steps{Threshold: 8, Sigma1: 1.5, Sigma2: 1, Noise: noisymax.DiscreteNoise}, answerGiven},
			{noisymax.Steps{Threshold: 8, Sigma1: 1.5, Sigma2: 1, Noise: noisymax.DiscreteNoise}, answerWithheld},
			{noisymax.Steps{Threshold: 8, Sigma1: 1.5, Sigma2: 1, Noise: noisymax.DiscreteNoise}, answerUnknown},
		} {
			for di, dir := range []Directions{BothDirections, OneSided} {
				if testing.Short() && di != (ci+ri)%2 {
					// Under -short each case and relation in one
					// direction, alternating (each case in both
					// directions over the two relations), at a smaller
					// size.
					continue
				}
				account := func(h []int) *rdpAccount {
					a, err := newRDPAccount(c.m, k, classes, rdpOptions{memo: testMemo, Orders: []float64{order}, Directions: dir, Abstain: rel.abstain})
					if err != nil {
						t.Fatal(err)
					}
					if err := a.add(h, c.ans); err != nil {
						t.Fatal(err)
					}
					return a
				}
				f := make([]float64, len(hs))
				for i, h := range hs {
					f[i], _ = account(h).rdpDependent(order)
				}
				trueLS := sp.localSensitivity(f)
				// A(d) bounds the exact cost's local sensitivity; f holds
				// the upper ends of its evaluation, a sum rounded up (a
				// release adds a margin for that: EvalMargin).
				pad := 4 * outward.ULP * slices.Max(f)
				for i, x := range hs {
					a, err := account(x).localSensitivity(t.Context(), order)
					if err != nil {
						t.Fatal(err)
					}
					for j, y := range hs {
						if d := sp.dist(i, j); trueLS[j] > a[d]+pad {
							t.Fatalf("%+v %v %v abstain %v: x %v: A(%d) = %v below the local sensitivity %v at %v", c.m, c.ans, dir, rel.abstain, x, d, a[d], trueLS[j], y)
						}
					}
				}
			}
		}
	}
}

// Without abstentions the threshold step's A(d) would stop at ⌈K/C⌉, the
// least largest count of K votes: by brute force over the histograms of
// at most 12 votes, a table that stops there falls below the true local
// sensitivity of the threshold step's cost with abstentions, which the
// account's, reaching 0, bounds. The check above cannot fail unnoticed.
func TestThresholdLocalSensitivityNeedsAbstentions(t *testing.T) {
	const k, classes, order = 12, 3, 2.0
	m := noisymax.Steps{Threshold: 1, Sigma1: 1.5, Sigma2: 1, Noise: noisymax.DiscreteNoise}
	rel := neighbours{abstain: true, teachers: k}
	logq, _ := thresholdTable(m.Threshold, m.Sigma1, m.Noise, rel, classes, OneSided)
	beta := newThresholdLS(testMemo, m.Sigma1, order, logq, 0).beta
	trueLS := make([]float64, k+1) // by largest count: its neighbours' are within one
	for _, h := range relHistograms(rel, classes) {
		v := slices.Max(h)
		for _, y := range relNeighbours(rel, h) {
			w := slices.Max(y)
			trueLS[v] = math.Max(trueLS[v], math.Abs(beta[v].Hi-beta[w].Hi))
		}
	}
	under := 0
	for _, lo := range []int{0, leastMaxCount(k, classes)} {
		th := newThresholdLS(testMemo, m.Sigma1, order, logq, lo)
		for x := 0; x <= k; x++ {
			a := th.distances(x)
			for v, ls := range trueLS {
				if d := max(x-v, v-x); ls > a[d]*(1+1e-12)+1e-300 {
					if lo == 0 {
						t.Fatalf("largest count %d: A(%d) = %v below the local sensitivity %v at %d", x, d, a[d], ls, v)
					}
					under++
				}
			}
		}
	}
	if under == 0 {
		t.Error("a table that stops at ceil(K/C) bounds every local sensitivity with abstentions: the case tests nothing")
	}
}
