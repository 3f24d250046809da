// Package poissonbinom computes the Poisson-binomial distribution: the law of
// the number of successes L = S_1 + … + S_K of independent Bernoulli trials
// with success probabilities p_1, …, p_K.
//
// In DaRRM the vote count of K teachers is Poisson-binomial (thesis, Lemma
// 3.4.4 and App. B.3.3), so its pmf drives both the privacy constraints and
// the utility objective. The pmf is computed by direct convolution, which is
// exact up to rounding (every step is a convex combination of non-negative
// numbers, so there is no cancellation) and costs O(K^2).
//
// Reference: Shuli Jiang, "Communication Efficient and Differentially
// Private Optimization", PhD thesis, Carnegie Mellon University,
// CMU-RI-TR-25-46, 2025 ("the thesis": lemma, section, table and figure
// numbers are its own). Its Chapter 3 and Appendix B are based
// on Jiang, Zhang and Joshi, "Optimized Tradeoffs for Private Prediction
// with Majority Ensembling", TMLR 2024.
package poissonbinom

import "fmt"

// checkProb reports whether p is a probability.
func checkProb(i int, p float64) error {
	if !(p >= 0 && p <= 1) { // also rejects NaN
		return fmt.Errorf("poissonbinom: p[%d] = %v: must be in [0, 1]", i, p)
	}
	return nil
}

// PMF returns pmf[l] = Pr[L = l] for l = 0..len(p).
func PMF(p []float64) ([]float64, error) {
	d := New(len(p))
	for i, pi := range p {
		if err := checkProb(i, pi); err != nil {
			return nil, err
		}
		d.add(pi)
	}
	return d.pmf, nil
}

// Binomial returns the pmf of Binomial(n, p), the Poisson-binomial law with
// all n probabilities equal to p.
func Binomial(n int, p float64) ([]float64, error) {
	if n < 0 {
		return nil, fmt.Errorf("poissonbinom: n = %d: must be >= 0", n)
	}
	if err := checkProb(0, p); err != nil {
		return nil, err
	}
	d := New(n)
	for i := 0; i < n; i++ {
		d.add(p)
	}
	return d.pmf, nil
}

// Dist is a Poisson-binomial distribution built one Bernoulli factor at a
// time, each in O(n), without recomputing the convolution.
// The zero value is not usable; create one with New.
type Dist struct {
	pmf []float64 // pmf[l] = Pr[L = l], l = 0..n
	// pmf is zero outside [lo, hi]. Factors near 0 or 1 underflow the
	// tails (n Bernoulli(1e-5) factors leave about 70 non-zero values),
	// and a factor leaves a zero of both neighbours zero, so add skips
	// them: the pmf is bit for bit the one of adding over all of it, in
	// O(hi - lo) where that took O(n).
	lo, hi int
}

// New returns the distribution of an empty sum (L = 0 with probability 1),
// with room for capacity factors before reallocating.
func New(capacity int) *Dist {
	pmf := make([]float64, 1, capacity+1)
	pmf[0] = 1
	return &Dist{pmf: pmf}
}

// n returns the number of Bernoulli factors.
func (d *Dist) n() int { return len(d.pmf) - 1 }

// PMF returns a copy of the pmf, indexed by l = 0..n().
func (d *Dist) PMF() []float64 { return d.AppendPMF(nil) }

// AppendPMF appends the pmf to dst and returns the extended slice: a
// caller that lists many pmfs (every corner multiset of a problem) reuses
// one buffer.
func (d *Dist) AppendPMF(dst []float64) []float64 { return append(dst, d.pmf...) }

// Set makes d the distribution src is, in d's room: sums that share
// their first factors extend copies of the shared part.
func (d *Dist) Set(src *Dist) {
	d.pmf, d.lo, d.hi = append(d.pmf[:0], src.pmf...), src.lo, src.hi
}

// Add convolves the distribution with a Bernoulli(p) factor.
func (d *Dist) Add(p float64) error {
	if err := checkProb(d.n(), p); err != nil {
		return err
	}
	d.add(p)
	return nil
}

func (d *Dist) add(p float64) {
	d.pmf = append(d.pmf, 0)
	q := 1 - p
	top := d.hi + 1
	// The support, from the top down, each value read once (the loop is
	// the inner one of every pmf a problem lists): the same products and
	// sums as pmf[l] = q·pmf[l] + p·pmf[l-1], each product rounded on its
	// own (the conversions): a build that fuses multiply-adds (arm64,
	// GOAMD64=v3) would otherwise round once where others round twice,
	// and the same problem would certify other bits on other machines.
	s := d.pmf[d.lo : top+1]
	x := s[len(s)-1]
	for l := len(s) - 1; l > 0; l-- {
		y := s[l-1]
		s[l] = float64(q*x) + float64(p*y)
		x = y
	}
	s[0] = q * x // pmf[lo-1] is zero
	if d.pmf[top] != 0 {
		d.hi = top
	}
	for d.lo < d.hi && d.pmf[d.lo] == 0 {
		d.lo++
	}
}

// AddBinomial convolves the distribution with n Bernoulli(p) factors,
// Binomial(n, p), as n calls of Add would, in O(n) for the first factors
// of a sum and O(n·(hi−lo+1)) after them, where n calls of Add take
// O(n·(hi−lo+n)): a privacy row of K = 2001 teachers, most of them at one
// corner, took O(K²) steps, and rows 43% of a solve's CPU time at m = 2.
// The binomial's values come from the ratio of neighbours,
// (n−k)/(k+1)·p/(1−p), both ways from the mode (set to 1, so that nothing
// underflows there), divided by their sum: every step multiplies
// non-negative numbers, so each value is within about (3|k−mode| + n)
// roundings of its own, as Add's are within n.
func (d *Dist) AddBinomial(n int, p float64) error {
	if n < 0 {
		return fmt.Errorf("poissonbinom: %d factors: must be >= 0", n)
	}
	if err := checkProb(d.n(), p); err != nil {
		return err
	}
	switch {
	case n == 0:
		return nil
	case p == 0 || p == 1 || n == 1:
		for range n {
			d.add(p)
		}
		return nil
	}
	b, lo := binomial(n, p)
	// out[l] = sum_k d.pmf[l-k]·b[k-lo], over the support of both.
	out := make([]float64, len(d.pmf)+n)
	for i := d.lo; i <= d.hi; i++ {
		v := d.pmf[i]
		if v == 0 {
			continue
		}
		row := out[i+lo : i+lo+len(b)]
		for k, w := range b {
			row[k] += v * w
		}
	}
	d.pmf = append(d.pmf[:0], out...)
	d.lo, d.hi = d.lo+lo, d.hi+lo+len(b)-1
	return nil
}

// binomial returns the pmf of Binomial(n, p), 0 < p < 1, n >= 2, on the
// support where it does not underflow: b[k] = Pr[X = lo+k].
func binomial(n int, p float64) (b []float64, lo int) {
	q := 1 - p
	mode := min(int(float64(n+1)*p), n)
	v := make([]float64, n+1)
	v[mode] = 1
	up, down := p/q, q/p
	hi := mode
	for k := mode; k < n; k++ {
		x := v[k] * float64(n-k) / float64(k+1) * up
		if x == 0 {
			break
		}
		v[k+1], hi = x, k+1
	}
	lo = mode
	for k := mode; k > 0; k-- {
		x := v[k] * float64(k) / float64(n-k+1) * down
		if x == 0 {
			break
		}
		v[k-1], lo = x, k-1
	}
	var sum float64
	for _, x := range v[lo : hi+1] {
		sum += x
	}
	b = v[lo : hi+1]
	for k := range b {
		b[k] /= sum
	}
	return b, lo
}
