package pate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/darrm/darrm/internal/bigmath"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noisymax"
)

// bigPow returns x^y for x > 0 in math/big.
func bigPow(x, y *big.Float) *big.Float {
	return bigExp(new(big.Float).SetPrec(refPrec).Mul(y, bigLog(x)))
}

// exactTheorem6 evaluates Theorem 6's bound in 256-bit arithmetic for
// q = e^L, the μ_i the accountant chooses and ε_i = μ_i/σ² exactly.
func exactTheorem6(L, sigma, order float64) *big.Float {
	mu2 := math.Sqrt(-L / (1 / (sigma * sigma)))
	return theorem6Fixed(L, sigma, order, mu2+1, mu2)
}

func TestTheorem6AgainstBig(t *testing.T) {
	// Under -short 200 draws of the 400, at a smaller size: the same
	// ranges of σ, order and q, at least 50 of them checked.
	draws := 400
	if testing.Short() {
		draws = 200
	}
	r := rand.New(rand.NewPCG(1, 2))
	checked := 0
	for range draws {
		sigma := math.Exp(r.Float64()*5 - 0.5) // 0.6 .. 90
		order := 1 + math.Exp(r.Float64()*6-2)
		L := -math.Exp(r.Float64() * 8) // q from e^-1 down to e^-3000
		k := newCurve(testMemo, gnmaxSlope(sigma), order)
		b, ok := k.theorem6(L)
		if !ok {
			continue
		}
		checked++
		want := exactTheorem6(L, sigma, order)
		if want.Cmp(bf(1e-50)) < 0 {
			// Below 2^-256 relative to 1 the reference has no digits left.
			if b.Hi < 0 || b.Hi > 1e-49 {
				t.Fatalf("sigma %v order %v log q %v: %v, exact below 1e-50", sigma, order, L, b.Hi)
			}
			continue
		}
		if below(b.Hi, want) {
			t.Fatalf("sigma %v order %v log q %v: %v below the exact %v", sigma, order, L, b.Hi, want)
		}
		w, _ := want.Float64()
		if math.Abs(b.Hi-w) > 1e-9*math.Abs(w)+1e-300 {
			t.Errorf("sigma %v order %v log q %v: %v, exact %v", sigma, order, L, b.Hi, w)
		}
	}
	if checked < draws/4 {
		t.Fatalf("only %d cases met Theorem 6's conditions", checked)
	}
}

func randomCounts(r *rand.Rand, k, c int) []int {
	counts := make([]int, c)
	// Skewed votes: a plurality class with a random share, the rest spread.
	top := r.IntN(c)
	share := r.Float64()
	for range k {
		if r.Float64() < share {
			counts[top]++
		} else {
			counts[r.IntN(c)]++
		}
	}
	return counts
}

// Data-dependent <= data-independent, for both steps, every noise, over
// random vote histograms; the data-dependent bound is smallest at the
// unanimous histogram, so when it equals the data-independent one there,
// it equals it everywhere.
func TestDataDependentBelowIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		k, c := 1+r.IntN(400), 2+r.IntN(9)
		sigma := 1 + r.Float64()*60
		order := 1.5 + r.Float64()*80
		noise := []noisymax.Noise{noisymax.DiscreteNoise, noisymax.ContinuousNoise}[r.IntN(2)]
		counts := randomCounts(r, k, c)
		lq, err := checkedGNMaxLogQ(counts, sigma, noise)
		if err != nil {
			t.Fatal(err)
		}
		dep, _ := gnmaxRDP(lq, sigma, order)
		ind, _ := gnmaxRDPIndependent(sigma, order)
		if dep > ind {
			t.Fatalf("counts %v sigma %v order %v: dependent %v > independent %v", counts, sigma, order, dep, ind)
		}
		unanimous := make([]int, c)
		unanimous[0] = k
		lu, _ := checkedGNMaxLogQ(unanimous, sigma, noise)
		du, _ := gnmaxRDP(lu, sigma, order)
		if du > dep {
			t.Fatalf("K %d C %d sigma %v order %v: unanimous %v above %v at %v", k, c, sigma, order, du, dep, counts)
		}
		lt, p, err := checkedThresholdLogQ(counts[argmax(counts)], r.Float64()*float64(k), sigma, noise)
		if err != nil || p < 0 || p > 1 {
			t.Fatal(err, p)
		}
		td, _ := thresholdRDP(lt, sigma, order)
		ti, _ := thresholdRDPIndependent(sigma, order)
		if td > ti {
			t.Fatalf("threshold: dependent %v > independent %v", td, ti)
		}
	}
}

// The thesis' setting (App. B.4.1): K = 11 teachers, 2 classes, σ = 21.46
// at λ = 62.31: Theorem 6 does not apply even to unanimous votes, so the
// data-dependent bound is the data-independent one.
func TestThesisSettingIsDataIndependent(t *testing.T) {
	for _, noise := range []noisymax.Noise{noisymax.ContinuousNoise, noisymax.DiscreteNoise} {
		lq, _ := checkedGNMaxLogQ([]int{11, 0}, 21.46, noise)
		dep, _ := gnmaxRDP(lq, 21.46, 62.31)
		ind, _ := gnmaxRDPIndependent(21.46, 62.31)
		if dep != ind {
			t.Errorf("%v: dependent %v, independent %v", noise, dep, ind)
		}
	}
	// With 250 teachers and 10 classes it does apply.
	lq, _ := checkedGNMaxLogQ([]int{250, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 40, noisymax.ContinuousNoise)
	dep, _ := gnmaxRDP(lq, 40, 20)
	if ind, _ := gnmaxRDPIndependent(40, 20); !(dep < ind/10) {
		t.Errorf("MNIST-like unanimous votes: dependent %v, independent %v", dep, ind)
	}
}

// exactDiscreteMiss returns Pr[GNMax(counts) != i*] exactly (to float
// precision) for discrete Gaussian noise with ties broken uniformly, by
// summing over the noise of three classes.
func exactDiscreteMiss(counts []int, sigma float64) float64 {
	w := int(14*sigma) + 2
	pmf := make([]float64, 2*w+1)
	var n float64
	for z := -w; z <= w; z++ {
		pmf[z+w] = math.Exp(-float64(z*z) / (2 * sigma * sigma))
		n += pmf[z+w]
	}
	top := argmax(counts)
	var miss float64
	for a := -w; a <= w; a++ {
		for b := -w; b <= w; b++ {
			for c := -w; c <= w; c++ {
				v := []int{counts[0] + a, counts[1] + b, counts[2] + c}
				m := max(v[0], v[1], v[2])
				ties := 0
				for _, x := range v {
					if x == m {
						ties++
					}
				}
				p := pmf[a+w] * pmf[b+w] * pmf[c+w]
				switch {
				case v[top] < m:
					miss += p
				case ties > 1:
					miss += p * float64(ties-1) / float64(ties)
				}
			}
		}
	}
	return miss / (n * n * n)
}

func TestDiscreteQBoundHolds(t *testing.T) {
	for _, sigma := range []float64{0.5, 1, 1.7, 3} {
		for _, counts := range [][]int{{5, 5, 0}, {6, 4, 0}, {8, 1, 1}, {10, 0, 0}, {7, 3, 0}, {12, 0, 0}} {
			miss := exactDiscreteMiss(counts, sigma)
			lq, _ := checkedGNMaxLogQ(counts, sigma, noisymax.DiscreteNoise)
			if math.Exp(lq) < miss*(1+1e-9) {
				t.Errorf("sigma %v counts %v: q bound %v below the exact %v", sigma, counts, math.Exp(lq), miss)
			}
		}
	}
}

// TestClassQBound: each class's term of q̃ (classLogQUp, times r for
// discrete noise) bounds the probability that the class beats the
// plurality at its gap g, computed independently in math/big at 200 bits:
// for continuous noise erfc(g/(2σ))/2; for discrete noise both
// Pr[D > g] + Pr[D = g]/2 (ties broken uniformly, the event q̃ needs) and
// Pr[D >= g] (a tie counted whole), D the difference of two independent
// N_Z(0, σ²), at a tie and at small and larger gaps.
func TestClassQBound(t *testing.T) {
	const prec = 200
	for _, sigma := range []float64{0.5, 0.75, 1, 1.3, 1.7, 2.5, 4, 9} {
		tieBroken, whole := discreteDifferenceTails(sigma, 12, prec)
		r := discreteGNMaxExcess(sigma)
		for g := range 12 {
			b := r * math.Exp(classLogQUp(g, sigma, noisymax.DiscreteNoise))
			for _, c := range []struct {
				event string
				p     float64
			}{{"beats or wins the tie", tieBroken[g]}, {"ties or beats", whole[g]}} {
				if b < c.p*(1-1e-13) {
					t.Errorf("discrete, sigma %v, gap %d: the bound %.17g is below Pr[%s] = %.17g (by %.3g%%)", sigma, g, b, c.event, c.p, 100*(c.p/b-1))
				}
			}
			x := new(big.Float).SetPrec(prec).Quo(big.NewFloat(float64(g)), big.NewFloat(2*sigma))
			exact, _ := new(big.Float).Quo(bigmath.Erfc(x, prec), big.NewFloat(2)).Float64()
			if b := math.Exp(classLogQUp(g, sigma, noisymax.ContinuousNoise)); b < exact*(1-1e-13) {
				t.Errorf("continuous, sigma %v, gap %d: the bound %.17g is below erfc(g/(2σ))/2 = %.17g", sigma, g, b, exact)
			}
		}
	}
}

// TestQMovesHoldAtTies: the bounds B_u and B_l on q̃ one changed teacher
// away (qMoves) hold at every neighbour of every histogram of 10 votes
// over 2 to 4 classes, ties included, whose terms (classLogQUp) are not of
// the form erfc(x)/2 that B_u and B_l assume.
func TestQMovesHoldAtTies(t *testing.T) {
	for _, sigma := range []float64{0.5, 0.8, 1, 1.5, 3, 10, 40} {
		for _, classes := range []int{2, 3, 4} {
			m := newQMoves(sigma, classes, noisymax.DiscreteNoise)
			for _, rel := range relations(10) {
				for _, h := range relHistograms(rel, classes) {
					up, down := m.both(gnmaxLogQ(testMemo, h, argmax(h), sigma, noisymax.DiscreteNoise))
					for _, y := range relNeighbours(rel, h) {
						if l := gnmaxLogQ(testMemo, y, argmax(y), sigma, noisymax.DiscreteNoise); l > up || l < down {
							t.Errorf("sigma %v, abstain %v: log q̃ at %v is %v, outside [%v, %v] from %v", sigma, rel.abstain, y, l, down, up, h)
						}
					}
				}
			}
		}
	}
}

// TestLogErfcInvIsTheBisection: logErfcInv, which takes the bisection's
// midpoints far below the root as lo without their logErfc, returns the
// bits the bisection that evaluates every midpoint returns, at values of
// t from just under log 2 to -10^7, around logErfc(26) (where logErfc
// changes formula) and at random.
func TestLogErfcInvIsTheBisection(t *testing.T) {
	bisection := func(t float64) float64 {
		lo, hi := -6.0, 1.0
		for logErfc(hi) > t {
			hi *= 2
			if hi > 1e154 {
				return math.Inf(1)
			}
		}
		y := hi
		for range 60 {
			f := logErfc(y) - t
			if f > 0 {
				lo = math.Max(lo, y)
			} else {
				hi = math.Min(hi, y)
			}
			next := y - f/(-2/math.Sqrt(math.Pi)*math.Exp(-y*y-logErfc(y)))
			if !(next > lo && next < hi) || next == y {
				break
			}
			y = next
		}
		for range 2000 {
			m := lo + (hi-lo)/2
			if m <= lo || m >= hi {
				break
			}
			if logErfc(m) > t {
				lo = m
			} else {
				hi = m
			}
		}
		return lo + (hi-lo)/2
	}
	var ts []float64
	for k := 1; k <= 60; k++ {
		ts = append(ts, math.Ln2-math.Ldexp(1, -k))
	}
	for x := 1e-6; x < 1e7; x *= 1.01 {
		ts = append(ts, -x)
	}
	at26 := logErfc(26)
	for k := -40; k <= 40; k++ {
		ts = append(ts, at26+float64(k)*1e-9, at26*(1+float64(k)*0x1p-52))
	}
	rng := rand.New(rand.NewPCG(69, 1))
	for range 2000 {
		ts = append(ts, math.Ln2-math.Exp(rng.Float64()*20-10))
	}
	for _, x := range ts {
		if got, want := logErfcInv(x), bisection(x); math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("logErfcInv(%v) = %v, the bisection's %v", x, got, want)
		}
	}
}

// discreteDifferenceTails returns, for g in [0, gaps), Pr[D > g] +
// Pr[D = g]/2 and Pr[D >= g], D = Z - Z' for independent Z, Z' ~ N_Z(0,
// σ²), summed in math/big at prec bits over |z| <= 40σ + 40 (the mass
// beyond is below e^-800).
func discreteDifferenceTails(sigma float64, gaps int, prec uint) (tieBroken, whole []float64) {
	n := int(40*sigma) + 40
	w := make([]*big.Float, 2*n+1) // w[z+n] = e^{-z²/(2σ²)}
	total := new(big.Float).SetPrec(prec)
	for z := -n; z <= n; z++ {
		e := new(big.Float).SetPrec(prec).SetFloat64(-float64(z*z) / (2 * sigma * sigma))
		w[z+n] = bigmath.Exp(e, prec)
		total.Add(total, w[z+n])
	}
	// above[j] = Σ_{k >= j} w[k], and Pr[D >= g] = Σ_j w[j]·above[j+g] / N².
	above := make([]*big.Float, len(w)+1)
	above[len(w)] = new(big.Float).SetPrec(prec)
	for j := len(w) - 1; j >= 0; j-- {
		above[j] = new(big.Float).SetPrec(prec).Add(above[j+1], w[j])
	}
	norm := new(big.Float).SetPrec(prec).Mul(total, total)
	atLeast := func(g int) *big.Float {
		s := new(big.Float).SetPrec(prec)
		for j := range w {
			if j+g < len(above) {
				s.Add(s, new(big.Float).SetPrec(prec).Mul(w[j], above[j+g]))
			}
		}
		return s.Quo(s, norm)
	}
	for g := range gaps {
		ge, gt := atLeast(g), atLeast(g+1)
		half := new(big.Float).SetPrec(prec).Add(ge, gt)
		half.Quo(half, big.NewFloat(2))
		a, _ := ge.Float64()
		b, _ := half.Float64()
		whole, tieBroken = append(whole, a), append(tieBroken, b)
	}
	return tieBroken, whole
}

func TestDiscreteTailBound(t *testing.T) {
	for _, sigma := range []float64{0.5, 1, 2.5, 40, 150} {
		for _, k := range []float64{1, 2, 3, 7, 20, 100, 400, 1000} {
			exact := discreteTail(k, sigma)
			if b := math.Exp(discreteTailLogUp(k, sigma)); b < exact*(1+1e-12) && exact > 1e-300 {
				t.Errorf("sigma %v k %v: bound %v below %v", sigma, k, b, exact)
			}
		}
	}
}

// histograms lists every vote histogram of k votes over c classes.
func histograms(k, c int) [][]int {
	if c == 1 {
		return [][]int{{k}}
	}
	var out [][]int
	for n := 0; n <= k; n++ {
		for _, rest := range histograms(k-n, c-1) {
			out = append(out, append([]int{n}, rest...))
		}
	}
	return out
}

func voteDistance(a, b []int) int {
	d := 0
	for i := range a {
		if a[i] > b[i] {
			d += a[i] - b[i]
		}
	}
	return d
}

// The relation with abstentions, by brute force: a histogram of at most K
// votes is one of exactly K over C + 1 classes, the last "no vote", which
// the mechanism does not see; a changed teacher moves one vote among the
// C + 1. The helpers below enumerate it directly, independently of the
// code under test.
// relHistograms lists every vote histogram of rel over c classes: K votes,
// or with abstentions 0 to K.
func relHistograms(rel neighbours, c int) [][]int {
	if !rel.abstain {
		return histograms(rel.teachers, c)
	}
	var out [][]int
	for s := 0; s <= rel.teachers; s++ {
		out = append(out, histograms(s, c)...)
	}
	return out
}

// space is every histogram of a relation over C classes (relHistograms),
// with the distance between two of them and the local sensitivity of a
// function of them, by brute force.
type space struct {
	rel   neighbours
	hs    [][]int
	sums  []int
	index map[string]int
}

func newSpace(rel neighbours, classes int) *space {
	s := &space{rel: rel, hs: relHistograms(rel, classes), index: map[string]int{}}
	for i, h := range s.hs {
		s.sums = append(s.sums, sum(h))
		s.index[fmt.Sprint(h)] = i
	}
	return s
}

// dist returns the fewest changed teachers between histograms i and j:
// the votes that move between the C + 1 classes, "no vote" (K less the
// votes cast) among them.
func (s *space) dist(i, j int) int {
	return voteDistance(s.hs[i], s.hs[j]) + max(0, s.sums[j]-s.sums[i])
}

// localSensitivity returns, for each histogram h, the largest
// |f(h) - f(y)| over its neighbours y (relNeighbours), f given by index.
func (s *space) localSensitivity(f []float64) []float64 {
	ls := make([]float64, len(s.hs))
	for i, h := range s.hs {
		for _, y := range relNeighbours(s.rel, h) {
			j, ok := s.index[fmt.Sprint(y)]
			if !ok {
				panic(fmt.Sprintf("neighbour %v of %v is no histogram of %+v", y, h, s.rel))
			}
			ls[i] = math.Max(ls[i], math.Abs(f[i]-f[j]))
		}
	}
	return ls
}

// relNeighbours returns every histogram one changed teacher from h in rel,
// class by class: a vote moved from a class to another and, with
// abstentions, a vote removed from a class or, while fewer than K voted,
// added to one.
func relNeighbours(rel neighbours, h []int) [][]int {
	var out [][]int
	with := func(i, di, j, dj int) {
		y := slices.Clone(h)
		y[i] += di
		if j >= 0 {
			y[j] += dj
		}
		out = append(out, y)
	}
	for a := range h {
		for b := range h {
			if a != b && h[a] > 0 {
				with(a, -1, b, 1)
			}
		}
		if rel.abstain && h[a] > 0 {
			with(a, -1, -1, 0)
		}
		if rel.abstain && sum(h) < rel.teachers {
			with(a, 1, -1, 0)
		}
	}
	return out
}

// The relations the brute-force tests take, for K teachers: every teacher
// voting, and teachers that may abstain.
func relations(k int) []neighbours {
	return []neighbours{{teachers: k}, {abstain: true, teachers: k}}
}

// A(d) bounds the true local sensitivity |f(y') - f(y)| over every pair
// of neighbours y, y' with y within d of x, found by brute force, for the
// one-sided cost f = β(q̃) and for the cost in both directions,
// f = β(Q̃) with Q̃ the largest q̃ within one vote, whose A(d) is the
// one-sided A(d + 1); in both relations, every teacher voting (K votes)
// and teachers that may abstain (every histogram of at most K votes,
// neighbours a vote added, removed or moved).
func TestLocalSensitivityBruteForce(t *testing.T) {
	for ci, c := range []struct {
		k, classes   int
		sigma, order float64
		noise        noisymax.Noise
	}{
		{12, 3, 1, 2, noisymax.ContinuousNoise}, {12, 3, 1, 2, noisymax.DiscreteNoise}, {14, 3, 1.5, 2, noisymax.ContinuousNoise},
		{10, 4, 0.8, 1.5, noisymax.DiscreteNoise}, {16, 2, 1.2, 2, noisymax.ContinuousNoise}, {12, 4, 1, 2, noisymax.DiscreteNoise},
	} {
		if c5, c6 := smoothConditions(testMemo, c.sigma, c.classes, c.order, c.noise); !c5 || !c6 {
			t.Fatalf("%+v: conditions C5 %v C6 %v", c, c5, c6)
		}
		g := newGNMaxLS(testMemo, c.sigma, c.order, c.classes, c.noise)
		for ri, rel := range relations(c.k) {
			if testing.Short() && ri != ci%2 {
				// Under -short each case in one relation, alternating
				// (every case, both relations three times, both
				// directions), at a smaller size.
				continue
			}
			sp := newSpace(rel, c.classes)
			hs := sp.hs
			for _, dir := range []Directions{OneSided, BothDirections} {
				beta := make([]float64, len(hs))
				for i, h := range hs {
					lq := gnmaxLogQ(testMemo, h, argmax(h), c.sigma, c.noise)
					if dir == BothDirections {
						lq = gnmaxNeighbourLogQ(testMemo, h, c.sigma, c.noise, rel)
					}
					beta[i] = g.k.at(lq).Hi
				}
				trueLS := sp.localSensitivity(beta)
				nontrivial := false
				for i, x := range hs {
					a := g.distances(x, rel)
					if dir == BothDirections {
						a = append(a[1:], a[len(a)-1])
					}
					for j, y := range hs {
						d := sp.dist(i, j)
						if trueLS[j] > a[d] {
							t.Fatalf("%+v abstain %v %v: x %v: A(%d) = %v below the local sensitivity %v at %v", c, rel.abstain, dir, x, d, a[d], trueLS[j], y)
						}
						if trueLS[j] > 0 && trueLS[j] < g.plateau/2 {
							nontrivial = true
						}
					}
				}
				if !nontrivial {
					t.Errorf("%+v abstain %v %v: every local sensitivity is 0 or near the plateau: the case tests nothing", c, rel.abstain, dir)
				}
			}
		}
	}
}

// With abstentions the walk that lowers q̃ adds votes to the plurality
// once the other classes are empty: from 4 unanimous votes of K = 12
// (σ = 2, λ = 5: q̃ above q0 there) the histograms within d are at best
// (4 + d, 0, 0), whose local sensitivity stays below the plateau for
// d <= 2, where without abstentions (4 votes of K = 4: no histogram
// beyond) the walk ends and A(d) is the plateau.
func TestLocalSensitivityAbstainWalk(t *testing.T) {
	const sigma = 2.0
	g := newGNMaxLS(testMemo, sigma, 5, 3, noisymax.ContinuousNoise)
	x := []int{4, 0, 0}
	if l := gnmaxLogQ(testMemo, x, 0, sigma, noisymax.ContinuousNoise); !(l > g.k.logq0) {
		t.Fatalf("%v: log q̃ %v not above log q0 %v: the walk lowers nothing", x, l, g.k.logq0)
	}
	a := g.distances(x, neighbours{abstain: true, teachers: 12})
	moves := g.distances(x, neighbours{teachers: 4})
	if !(a[2] < g.plateau) || moves[1] != g.plateau {
		t.Errorf("A(2) = %v with abstentions, A(1) = %v without; the plateau %v", a[2], moves[1], g.plateau)
	}
	for d := 1; d <= 2; d++ {
		want := math.Max(a[d-1], g.lsAt(gnmaxLogQ(testMemo, []int{4 + d, 0, 0}, 0, sigma, noisymax.ContinuousNoise)))
		if a[d] != want {
			t.Errorf("A(%d) = %v, want the local sensitivity at (%d, 0, 0), %v", d, a[d], 4+d, want)
		}
	}
	if !(a[2] > 0) {
		t.Errorf("A(2) = 0: the case tests nothing")
	}
}

// Theorem 6 holds at any q̃ above the true probability that meets its
// conditions, because with μ1, μ2 fixed the bound does not decrease in q
// up to q̃: the step the bound in both directions rests on (docs/pate.md).
// Checked in 256-bit arithmetic on a grid of q below q̃, for 100 random
// cases (40 under -short), at least 30% of which meet the conditions.
func TestTheorem6NonDecreasingBelowQ(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 28))
	checked := 0
	n := 100
	if testing.Short() {
		n = 40
	}
	for range n {
		sigma := math.Exp(r.Float64()*5 - 0.5)
		order := 1 + math.Exp(r.Float64()*6-2)
		L := -math.Exp(r.Float64() * 8)
		if _, ok := newCurve(testMemo, gnmaxSlope(sigma), order).theorem6(L); !ok {
			continue
		}
		checked++
		mu2 := math.Sqrt(-L / (1 / (sigma * sigma)))
		at := func(lq float64) *big.Float { return theorem6Fixed(lq, sigma, order, mu2+1, mu2) }
		top := at(L)
		for _, f := range []float64{1.001, 1.1, 2, 10} {
			if b := at(L * f); b.Cmp(top) > 0 {
				t.Fatalf("sigma %v order %v log q̃ %v: the bound at log q = %v is %v, above %v at q̃", sigma, order, L, L*f, b, top)
			}
		}
	}
	if checked < 30*n/100 {
		t.Fatalf("only %d of %d cases met Theorem 6's conditions", checked, n)
	}
}

// theorem6Fixed is Theorem 6's bound at q = e^L for given μ1, μ2 and
// ε_i = μ_i/σ², in 256-bit arithmetic.
func theorem6Fixed(L, sigma, order, mu1, mu2 float64) *big.Float {
	c := new(big.Float).SetPrec(refPrec).Quo(bf(1), new(big.Float).SetPrec(refPrec).Mul(bf(sigma), bf(sigma)))
	e1 := new(big.Float).SetPrec(refPrec).Mul(c, bf(mu1))
	e2 := new(big.Float).SetPrec(refPrec).Mul(c, bf(mu2))
	q := bigExp(bf(L))
	one := bf(1)
	sub := func(a, b *big.Float) *big.Float { return new(big.Float).SetPrec(refPrec).Sub(a, b) }
	mul := func(a, b *big.Float) *big.Float { return new(big.Float).SetPrec(refPrec).Mul(a, b) }
	quo := func(a, b *big.Float) *big.Float { return new(big.Float).SetPrec(refPrec).Quo(a, b) }
	oneq := sub(one, q)
	A := quo(oneq, sub(one, bigPow(mul(q, bigExp(e2)), quo(sub(bf(mu2), one), bf(mu2)))))
	B := quo(bigExp(e1), bigPow(q, quo(one, sub(bf(mu1), one))))
	lm1 := sub(bf(order), one)
	s := new(big.Float).SetPrec(refPrec).Add(mul(oneq, bigPow(A, lm1)), mul(q, bigPow(B, lm1)))
	return quo(bigLog(s), lm1)
}

// TestGNMaxNeighbourLogQEveryPair: the neighbours' log q̃, which tries one
// move per pair of distinct counts (and with abstentions one removal and
// one addition per count), is the largest log q̃ over every neighbour,
// class by class (relNeighbours), bit for bit, on random histograms with
// repeated counts (zeros, ties) and without, in both relations; some
// histograms with abstentions have a neighbour no move reaches with a
// larger q̃ (two classes, (5, 4) to (4, 4)).
func TestGNMaxNeighbourLogQEveryPair(t *testing.T) {
	r := rand.New(rand.NewPCG(40, 10))
	beyondMoves := 0
	for range 300 {
		classes := 2 + r.IntN(12)
		h := make([]int, classes)
		for range 1 + r.IntN(40) {
			h[r.IntN(1+r.IntN(classes))]++
		}
		sigma := 0.5 + 4*r.Float64()
		for _, rel := range []neighbours{{teachers: sum(h)}, {abstain: true, teachers: sum(h) + r.IntN(3)}} {
			for _, noise := range []noisymax.Noise{noisymax.DiscreteNoise, noisymax.ContinuousNoise} {
				want := gnmaxLogQ(testMemo, h, argmax(h), sigma, noise)
				for _, y := range relNeighbours(rel, h) {
					want = math.Max(want, gnmaxLogQ(testMemo, y, argmax(y), sigma, noise))
				}
				if got := gnmaxNeighbourLogQ(testMemo, h, sigma, noise, rel); got != want {
					t.Fatalf("%v, %+v, sigma %v, %v: %v, every neighbour gives %v", h, rel, sigma, noise, got, want)
				}
				if rel.abstain && gnmaxNeighbourLogQ(testMemo, h, sigma, noise, neighbours{teachers: sum(h)}) < want {
					beyondMoves++
				}
			}
		}
	}
	for _, noise := range []noisymax.Noise{noisymax.DiscreteNoise, noisymax.ContinuousNoise} {
		h := []int{5, 4}
		if moves, all := gnmaxNeighbourLogQ(testMemo, h, 1, noise, neighbours{teachers: 9}), gnmaxNeighbourLogQ(testMemo, h, 1, noise, neighbours{abstain: true, teachers: 9}); !(all > moves) {
			t.Errorf("%v %v: log Q̃ with abstentions %v, without %v: the removal to (4, 4) is not counted", h, noise, all, moves)
		}
	}
	t.Logf("%d random cases with abstentions where a neighbour no move reaches has the largest q̃", beyondMoves)
	if _, err := checkedGNMaxNeighbourLogQ([]int{5, 4}, 1, noisymax.DiscreteNoise, neighbours{teachers: 10}); err == nil {
		t.Error("9 votes of K = 10 without abstentions accepted")
	}
	if _, err := checkedGNMaxNeighbourLogQ([]int{5, 6}, 1, noisymax.DiscreteNoise, neighbours{abstain: true, teachers: 10}); err == nil {
		t.Error("11 votes of K = 10 accepted")
	}
}

// TestThresholdBound: a threshold that makes the threshold step vacuous
// (below 0: every query answered as at 0; beyond K + 10·σ1: no query ever
// answered, Pr < 1e-23) is refused for K teachers, by the account and by
// the check a release uses, naming the threshold and the range; PATE's
// own settings (T = 300 for K = 250, σ1 = 200) pass.
func TestThresholdBound(t *testing.T) {
	for _, tc := range []struct {
		m  noisymax.Steps
		ok bool
	}{
		{noisymax.Steps{Threshold: 200, Sigma1: 150, Sigma2: 40, Noise: noisymax.DiscreteNoise}, true},
		{noisymax.Steps{Threshold: 300, Sigma1: 200, Sigma2: 100, Noise: noisymax.DiscreteNoise}, true},
		{noisymax.Steps{Threshold: 0, Sigma1: 150, Sigma2: 40, Noise: noisymax.DiscreteNoise}, true},
		{noisymax.Steps{Threshold: 250 + 1500, Sigma1: 150, Sigma2: 40, Noise: noisymax.DiscreteNoise}, true},
		{noisymax.Steps{Threshold: -1, Sigma1: 150, Sigma2: 40, Noise: noisymax.DiscreteNoise}, false},
		{noisymax.Steps{Threshold: 1e300, Sigma1: 150, Sigma2: 40, Noise: noisymax.DiscreteNoise}, false},
		{noisymax.Steps{Threshold: 250 + 1501, Sigma1: 150, Sigma2: 40, Noise: noisymax.DiscreteNoise}, false},
	} {
		err := tc.m.CheckFor(250)
		var pe *param.Error
		if tc.ok != (err == nil) || (!tc.ok && (!errors.As(err, &pe) || pe.Name != "threshold" || pe.Value != tc.m.Threshold)) {
			t.Errorf("threshold %v, sigma1 %v: %v", tc.m.Threshold, tc.m.Sigma1, err)
		}
		if _, err := newRDPAccount(tc.m, 250, 10, rdpOptions{memo: testMemo}); tc.ok != (err == nil) {
			t.Errorf("account at threshold %v: %v", tc.m.Threshold, err)
		}
	}
}

// TestAddFlushesInOrder: add charges its queries flushEvery at a time (so
// that a caller checking its context between adds is never held up by
// one long charge at result), and the totals are those of charging every
// query in order at each order, as one flush at the end did. Under -short
// at a smaller size: add flushes once before the last flush, not twice
// (the order is still checked across a flush), at every eighth order of
// the default grid and its last (31 of 240, 1.25 to 1000), each charged
// by the same path.
func TestAddFlushesInOrder(t *testing.T) {
	flushes := 2
	var orders []float64 // defaultOrders
	if testing.Short() {
		flushes = 1
		all := defaultOrders()
		for i := 0; i < len(all); i += 8 {
			orders = append(orders, all[i])
		}
		orders = append(orders, all[len(all)-1])
	}
	for _, tc := range []struct {
		name    string
		answers []answer
	}{
		{"expected cost", []answer{answerUnknown}},
		{"a release", []answer{answerGiven, answerWithheld, answerGiven}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := newRDPAccount(noisymax.Steps{Threshold: 200, Sigma1: 150, Sigma2: 40, Noise: noisymax.DiscreteNoise}, 250, 10, rdpOptions{memo: testMemo, Orders: orders})
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(7, 8))
			n := flushes*flushEvery + 37
			for i := range n {
				if err := a.add(randomCounts(r, 250, 10), tc.answers[i%len(tc.answers)]); err != nil {
					t.Fatal(err)
				}
			}
			if a.done != flushes*flushEvery {
				t.Errorf("after %d Adds, %d queries charged, want %d", n, a.done, flushes*flushEvery)
			}
			a.flush()
			for j := range a.orders {
				var th *curve
				if a.mech.Confident() {
					th = a.th[j]
				}
				var ind, dep float64
				for i := range n {
					qi, qd := a.charge(i, a.gn[j], th)
					ind, dep = outward.AddUp(ind, qi), outward.AddUp(dep, qd)
				}
				if a.ind[j] != ind || a.dep[j] != dep {
					t.Errorf("order %v: totals %v, %v charged in flushes, want %v, %v charged in order", a.orders[j], a.ind[j], a.dep[j], ind, dep)
				}
			}
		})
	}
}

// TestLocalSensitivityCancelled: localSensitivity, minutes long on
// hundreds of thousands of queries, returns its context's error once the
// context is done, not a sensitivity of the queries it reached.
func TestLocalSensitivityCancelled(t *testing.T) {
	a, err := newRDPAccount(noisymax.Steps{Threshold: 200, Sigma1: 150, Sigma2: 40, Noise: noisymax.DiscreteNoise}, 250, 10, rdpOptions{memo: testMemo})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(9, 10))
	for range 100 {
		if err := a.add(randomCounts(r, 250, 10), answerUnknown); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if ls, err := a.localSensitivity(ctx, 20); !errors.Is(err, context.Canceled) {
		t.Errorf("localSensitivity of a cancelled context: %v, %v; want context.Canceled", ls, err)
	}
	if _, err := a.localSensitivity(t.Context(), 20); err != nil {
		t.Errorf("localSensitivity after a cancelled one: %v", err)
	}
}
