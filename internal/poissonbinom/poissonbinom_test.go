package poissonbinom

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
)

// exactPMF computes the Poisson-binomial pmf of probabilities num[i]/den
// exactly, by summing over all 2^K outcomes, independently of the
// convolution: each outcome's probability is an integer over den^K, so
// the sums are of integers, divided once at the end.
func exactPMF(num []int64, den int64) []*big.Rat {
	k := len(num)
	sums := make([]*big.Int, k+1)
	for l := range sums {
		sums[l] = new(big.Int)
	}
	prob, factor := new(big.Int), new(big.Int)
	for mask := 0; mask < 1<<k; mask++ {
		prob.SetInt64(1)
		ones := 0
		for i := 0; i < k; i++ {
			if mask&(1<<i) != 0 {
				factor.SetInt64(num[i])
				ones++
			} else {
				factor.SetInt64(den - num[i])
			}
			prob.Mul(prob, factor)
		}
		sums[ones].Add(sums[ones], prob)
	}
	all := new(big.Int).Exp(big.NewInt(den), big.NewInt(int64(k)), nil)
	pmf := make([]*big.Rat, k+1)
	for l, v := range sums {
		pmf[l] = new(big.Rat).SetFrac(v, all)
	}
	return pmf
}

func TestPMFMatchesExactRational(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{0, 1, 2, 5, 9, 13} {
		for trial := 0; trial < 5; trial++ {
			num := make([]int64, k)
			pf := make([]float64, k)
			for i := range num {
				// Dyadic probabilities are exact in float64, so any
				// difference comes from the convolution alone.
				num[i] = rng.Int64N(1025)
				pf[i] = float64(num[i]) / 1024
			}
			got, err := PMF(pf)
			if err != nil {
				t.Fatal(err)
			}
			want := exactPMF(num, 1024)
			for l := range want {
				w, _ := want[l].Float64()
				if d := math.Abs(got[l] - w); d > 4*float64(k+1)*0x1p-53 {
					t.Errorf("K=%d p=%v: pmf[%d] = %v, exact %v (diff %g)", k, pf, l, got[l], w, d)
				}
			}
		}
	}
}

func TestPMFEqualsBinomial(t *testing.T) {
	for _, tc := range []struct {
		n int
		p float64
	}{{1, 0.3}, {11, 0.75}, {41, 0.85}, {101, 0.5}, {1001, 0.75}} {
		p := make([]float64, tc.n)
		for i := range p {
			p[i] = tc.p
		}
		got, err := PMF(p)
		if err != nil {
			t.Fatal(err)
		}
		want := bigBinomial(tc.n, tc.p)
		for l := 0; l <= tc.n; l++ {
			if d := math.Abs(got[l] - want[l]); d > 4*float64(tc.n+1)*0x1p-53 {
				t.Errorf("n=%d p=%v: pmf[%d] = %v, binomial %v (diff %g)", tc.n, tc.p, l, got[l], want[l], d)
			}
		}
		b, err := Binomial(tc.n, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		for l := range b {
			if b[l] != got[l] {
				t.Fatalf("Binomial(%d, %v)[%d] = %v, PMF gives %v", tc.n, tc.p, l, b[l], got[l])
			}
		}
	}
}

// bigBinomial evaluates C(n,l) p^l (1-p)^(n-l) with 256-bit floats, taking
// p exactly as the float64 it is.
func bigBinomial(n int, p float64) []float64 {
	const prec = 256
	bp := new(big.Float).SetPrec(prec).SetFloat64(p)
	bq := new(big.Float).SetPrec(prec).Sub(new(big.Float).SetPrec(prec).SetInt64(1), bp)
	out := make([]float64, n+1)
	for l := 0; l <= n; l++ {
		v := new(big.Float).SetPrec(prec).SetInt(new(big.Int).Binomial(int64(n), int64(l)))
		for i := 0; i < l; i++ {
			v.Mul(v, bp)
		}
		for i := 0; i < n-l; i++ {
			v.Mul(v, bq)
		}
		out[l], _ = v.Float64()
	}
	return out
}

// TestAddMatchesPMF: a distribution built factor by factor with Add is
// the pmf of all the factors.
func TestAddMatchesPMF(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	base := make([]float64, 40)
	d := New(0)
	for i := range base {
		base[i] = rng.Float64()
		if err := d.Add(base[i]); err != nil {
			t.Fatal(err)
		}
	}
	want, _ := PMF(base)
	got := d.PMF()
	if d.n() != len(base) || len(got) != len(want) {
		t.Fatalf("N = %d, %d values; want %d, %d", d.n(), len(got), len(base), len(want))
	}
	for l := range want {
		if got[l] != want[l] {
			t.Errorf("pmf[%d] = %v, PMF gives %v", l, got[l], want[l])
		}
	}
}

func TestInvalidInput(t *testing.T) {
	for _, p := range []float64{-0.1, 1.5, math.NaN(), math.Inf(1)} {
		if _, err := PMF([]float64{0.5, p}); err == nil {
			t.Errorf("PMF accepted p = %v", p)
		}
		if err := New(1).Add(p); err == nil {
			t.Errorf("Add accepted p = %v", p)
		}
	}
	if _, err := Binomial(-1, 0.5); err == nil {
		t.Error("Binomial accepted n = -1")
	}
}

func BenchmarkPMF101(b *testing.B) {
	p := make([]float64, 101)
	for i := range p {
		p[i] = float64(i) / 100
	}
	for b.Loop() {
		if _, err := PMF(p); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSet: a copy made by Set extends as the original would, and leaves
// the original as it was.
func TestSet(t *testing.T) {
	a := New(4)
	for _, p := range []float64{0.3, 0.9} {
		a.Add(p)
	}
	b := New(4)
	b.Add(0.5)
	b.Set(a)
	b.Add(0.2)
	a2 := New(4)
	for _, p := range []float64{0.3, 0.9, 0.2} {
		a2.Add(p)
	}
	if got, want := b.PMF(), a2.PMF(); !slices.Equal(got, want) {
		t.Errorf("Set then Add: %v, want %v", got, want)
	}
	if a.n() != 2 {
		t.Errorf("the original has %d factors after its copy grew, want 2", a.n())
	}
}

// TestAddSkipsZeros checks that add, which skips the pmf's zero tails, is
// bit for bit the convolution over the whole pmf, on factors that
// underflow the tails (near 0 and 1), exact 0 and 1, and factors between,
// in random orders, and that Set keeps the tails' bounds.
func TestAddSkipsZeros(t *testing.T) {
	full := func(p []float64) []float64 {
		pmf := []float64{1}
		for _, pi := range p {
			pmf = append(pmf, 0)
			for l := len(pmf) - 1; l > 0; l-- {
				pmf[l] = float64((1-pi)*pmf[l]) + float64(pi*pmf[l-1]) // as add rounds
			}
			pmf[0] *= 1 - pi
		}
		return pmf
	}
	factors := []float64{0, 1, 1e-5, 1 - 1e-5, 1e-300, 0.3, 0.5, 0.97}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		p := make([]float64, 1+rng.IntN(400))
		for i := range p {
			p[i] = factors[rng.IntN(len(factors))]
		}
		if trial%2 == 0 {
			slices.Sort(p) // long runs of one factor
		}
		want := full(p)
		d := New(len(p))
		half := New(0)
		for i, pi := range p {
			d.add(pi)
			if i == len(p)/2 {
				half.Set(d)
			}
		}
		if got := d.PMF(); !slices.Equal(got, want) {
			t.Fatalf("trial %d: the pmf of %d factors differs from the full convolution", trial, len(p))
		}
		for _, pi := range p[len(p)/2+1:] {
			half.add(pi)
		}
		if got := half.PMF(); !slices.Equal(got, want) {
			t.Fatalf("trial %d: a copy made by Set, extended, differs from the full convolution", trial)
		}
	}
}

// TestAddBinomialAgainstBig: AddBinomial's values are within the
// roundings of its ratios and sum of C(n,k)·p^k·(1−p)^(n−k) in 256 bits.
func TestAddBinomialAgainstBig(t *testing.T) {
	ns := []int{2, 7, 100, 2001}
	if testing.Short() {
		ns = ns[:3]
	}
	for _, n := range ns {
		for _, p := range []float64{1e-5, 0.3, 0.5249791874789399, 1 - 1e-5} {
			d := New(n)
			if err := d.AddBinomial(n, p); err != nil {
				t.Fatal(err)
			}
			ref := bigBinomial(n, p)
			worst := 0.0
			for k, v := range d.PMF() {
				want := ref[k]
				switch {
				case want > 1e-290:
					worst = math.Max(worst, math.Abs(v-want)/want)
				case math.Abs(v-want) > 1e-300:
					t.Errorf("n=%d p=%v: pmf[%d] = %v, want %v", n, p, k, v, want)
				}
			}
			// 3 roundings a step from the mode and n for the sum.
			if limit := float64(4*n+8) * 0x1p-53; worst > limit {
				t.Errorf("n=%d p=%v: relative error %.3g, limit %.3g", n, p, worst, limit)
			}
		}
	}
}

func TestAddBinomialMatchesAdd(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		var fast, slow Dist
		fast, slow = *New(0), *New(0)
		total := 0
		for range 1 + r.IntN(4) {
			n := r.IntN(60)
			p := []float64{0, 1, 1e-5, 1 - 1e-5, r.Float64()}[r.IntN(5)]
			if err := fast.AddBinomial(n, p); err != nil {
				t.Fatal(err)
			}
			for range n {
				if err := slow.Add(p); err != nil {
					t.Fatal(err)
				}
			}
			total += n
		}
		a, b := fast.PMF(), slow.PMF()
		if len(a) != total+1 || len(b) != total+1 {
			t.Fatalf("trial %d: %d and %d values, want %d", trial, len(a), len(b), total+1)
		}
		for l := range a {
			if d := math.Abs(a[l] - b[l]); d > 1e-13*b[l] && d > 1e-300 {
				t.Errorf("trial %d: pmf[%d] = %v by AddBinomial, %v by Add", trial, l, a[l], b[l])
			}
		}
		if fast.n() != total || fast.lo > fast.hi || fast.hi > total {
			t.Errorf("trial %d: support [%d, %d] of %d", trial, fast.lo, fast.hi, total)
		}
	}
	if err := New(0).AddBinomial(-1, 0.5); err == nil {
		t.Error("AddBinomial(-1, 0.5): no error")
	}
	if err := New(0).AddBinomial(3, 1.5); err == nil {
		t.Error("AddBinomial(3, 1.5): no error")
	}
}
