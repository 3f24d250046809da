package gamma

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/poissonbinom"
)

// TVError returns the error of DaRRM_gamma (Definition 3.3.4) when teacher
// i votes 1 with probability p[i]: the total variation distance
// |Pr[DaRRM = 1] - Pr[majority = 1]| = (1/2)·|sum_{l>=H} (1-gamma(l))·(alpha_{K-l} - alpha_l)|.
func (g Gamma) TVError(p []float64) (float64, error) {
	if err := g.checkValues(); err != nil {
		// A value outside [0, 1], or an even K, made an error of NaN or
		// of a gamma that is no noise function.
		return 0, fmt.Errorf("error of gamma: %w", err)
	}
	if len(p) != g.K() {
		return 0, fmt.Errorf("error of gamma for K = %d teachers: got %d probabilities", g.K(), len(p))
	}
	alpha, err := poissonbinom.PMF(p)
	if err != nil {
		return 0, err
	}
	return tvError(g, alpha), nil
}

// LabelOne returns Pr[DaRRM_gamma = 1] when teacher i votes 1 with
// probability p[i] (Algorithm 1: the majority with probability gamma(L),
// else a fair coin): the labels' accuracy when the true label is 1 and
// p[i] is teacher i's accuracy.
func (g Gamma) LabelOne(p []float64) (float64, error) {
	if err := g.checkValues(); err != nil {
		// A value outside [0, 1] made a probability of 1.3 or NaN.
		return 0, fmt.Errorf("Pr[label = 1]: %w", err)
	}
	if len(p) != g.K() {
		return 0, fmt.Errorf("Pr[label = 1] of gamma for K = %d teachers: got %d probabilities", g.K(), len(p))
	}
	alpha, err := poissonbinom.PMF(p)
	if err != nil {
		return 0, err
	}
	k := g.K()
	var one float64
	for l, a := range alpha {
		if 2*l > k {
			one += a * (1 + g[l]) / 2
		} else {
			one += a * (1 - g[l]) / 2
		}
	}
	return one, nil
}

// Agreement returns the probability that DaRRM_gamma releases the
// majority of the votes when teacher i votes 1 with probability p[i]:
// sum_l alpha_l·(1 + gamma(l))/2 with alpha = PoissonBinomial(p).
func (g Gamma) Agreement(p []float64) (float64, error) {
	if err := g.check(); err != nil {
		// A value outside [0, 1] made an agreement of NaN or -0.37.
		return 0, fmt.Errorf("agreement: %w", err)
	}
	if len(p) != g.K() {
		return 0, fmt.Errorf("agreement of gamma for K = %d teachers: got %d probabilities", g.K(), len(p))
	}
	alpha, err := poissonbinom.PMF(p)
	if err != nil {
		return 0, fmt.Errorf("agreement: %w", err)
	}
	var a float64
	for l, v := range g {
		a += alpha[l] * (1 + v) / 2
	}
	return a, nil
}

// tvError is the total variation error of g on votes of pmf alpha. Each
// product is rounded before it is added (the conversion), on a build that
// fuses multiply-adds (arm64, GOAMD64=v3) as on any other: the same bits
// on every machine, and expectedTVError's sum the same as this one.
func tvError(g Gamma, alpha []float64) float64 {
	k := g.K()
	var e float64
	for l := (k + 1) / 2; l <= k; l++ {
		e += float64((1 - g[l]) * (alpha[k-l] - alpha[l]))
	}
	return math.Abs(e) / 2
}

// Actual is a distribution of the teachers' probabilities p_i of voting 1,
// under which the true expected error of a gamma is measured (App. B.4,
// "Comparison Using Different Prior Distributions").
type Actual struct {
	name   string
	fixed  []float64 // all p_i fixed: one common value or one per teacher
	lo, hi float64   // otherwise p_i i.i.d. uniform on [lo, hi]
}

// The actual distributions of the thesis' Figure B.7.
var (
	actualUniform = Actual{name: "U(0,1)", lo: 0, hi: 1}
	actualHalf    = Actual{name: "0.5", fixed: []float64{0.5}}
	actualLow     = Actual{name: "U(0,0.1)", lo: 0, hi: 0.1}
)

// ParseActual reads an actual distribution: "U(a,b)" for p_i i.i.d.
// uniform on [a, b], a single probability for p_i all equal, or K
// comma-separated probabilities.
func ParseActual(s string) (Actual, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(strings.ToUpper(s), "U(") && strings.HasSuffix(s, ")") {
		ab := strings.Split(s[2:len(s)-1], ",")
		if len(ab) == 2 {
			a, errA := strconv.ParseFloat(strings.TrimSpace(ab[0]), 64)
			b, errB := strconv.ParseFloat(strings.TrimSpace(ab[1]), 64)
			if errA == nil && errB == nil && 0 <= a && a <= b && b <= 1 {
				return Actual{name: s, lo: a, hi: b}, nil
			}
		}
		return Actual{}, fmt.Errorf("actual distribution %q: U(a,b) needs 0 <= a <= b <= 1", s)
	}
	var ps []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v >= 0 && v <= 1) {
			return Actual{}, fmt.Errorf("actual distribution %q: want U(a,b), a probability, or one probability per teacher", s)
		}
		ps = append(ps, v)
	}
	return Actual{name: s, fixed: ps}, nil
}

// String returns the distribution in the form ParseActual reads.
func (a Actual) String() string { return a.name }

// Fixed says whether a fixes every p_i (one common value, or one per
// teacher), rather than drawing them.
func (a Actual) Fixed() bool { return a.fixed != nil }

// Sample returns the probabilities p_1..p_K of K teachers under a: the
// fixed values (one common value, or one per teacher), or K i.i.d. draws
// uniform on [a, b] made from uniform, a source of uniform numbers in [0, 1).
func (a Actual) Sample(k int, uniform func() float64) ([]float64, error) {
	switch {
	case k < 1 || k > maxK:
		return nil, &param.Error{Name: "K", Value: k, Rule: fmt.Sprintf("must be in [1, %d]", maxK)}
	case a.fixed == nil && uniform == nil:
		return nil, fmt.Errorf("actual distribution %q: draws its probabilities, and no source of uniform numbers was given", a.name)
	}
	p := make([]float64, k)
	switch {
	case a.fixed == nil:
		for i := range p {
			p[i] = a.lo + (a.hi-a.lo)*uniform()
		}
	case len(a.fixed) == 1:
		for i := range p {
			p[i] = a.fixed[0]
		}
	case len(a.fixed) == k:
		copy(p, a.fixed)
	default:
		return nil, fmt.Errorf("actual distribution %q: %d probabilities, want 1 or K = %d", a.name, len(a.fixed), k)
	}
	return p, nil
}

// ErrorEstimate is an expected error under an actual distribution, with
// its Monte Carlo standard error (zero when it was computed exactly).
type ErrorEstimate struct {
	Actual  string  `json:"actual"`
	Mean    float64 `json:"mean"`
	StdErr  float64 `json:"stderr"`
	Exact   bool    `json:"exact"`
	Samples int     `json:"samples,omitempty"`
}

// expectedTVError returns E_p[g.TVError(p)] under the actual distribution.
// It is exact when the p_i are fixed; otherwise it averages samples draws
// of p from a PCG generator seeded with seed (the error is an absolute
// value of a multilinear function of p, which has no closed-form mean).
func expectedTVError(ctx context.Context, memo *accountant.Memo, g Gamma, a Actual, samples int, seed uint64) (ErrorEstimate, error) {
	k := g.K()
	if a.fixed != nil {
		p, err := a.Sample(k, nil)
		if err != nil {
			return ErrorEstimate{}, err
		}
		e, err := g.TVError(p)
		return ErrorEstimate{Actual: a.name, Mean: e, Exact: true}, err
	}
	if samples < 2 {
		return ErrorEstimate{}, fmt.Errorf("expected error: %d samples: need at least 2", samples)
	}
	var mean, m2 float64 // Welford's running moments
	h := (k + 1) / 2
	n := 0
	err := drawDiffs(ctx, memo, k, a, samples, seed, func(diffs []float64) {
		// tvError's sum, of the same products in the same order.
		var e float64
		for j, d := range diffs {
			e += float64((1 - g[h+j]) * d)
		}
		e = math.Abs(e) / 2
		n++
		delta := e - mean
		mean += delta / float64(n)
		m2 += float64(delta * (e - mean))
	})
	if err != nil {
		return ErrorEstimate{}, err
	}
	return ErrorEstimate{Actual: a.name, Mean: mean, StdErr: math.Sqrt(m2 / float64(samples-1) / float64(samples)), Samples: samples}, nil
}

// drawDiffs calls fn with the differences alpha_{K-l} - alpha_l, l = H..K,
// of the pmf alpha of each of samples draws of p under a (not fixed) for
// k teachers from a PCG generator seeded with seed, in order: all that
// tvError reads of a draw. A comparison (darrm compare, solve) measures
// every gamma it prints under the same actual distributions with the same
// seed, so it draws the same p for each: the differences of the draws
// last made are kept in memo (drawsIn), where each gamma convolved every
// draw again.
func drawDiffs(ctx context.Context, memo *accountant.Memo, k int, a Actual, samples int, seed uint64, fn func(diffs []float64)) error {
	key := drawsKey{k: k, samples: samples, seed: seed, lo: math.Float64bits(a.lo), hi: math.Float64bits(a.hi)}
	h := (k + 1) / 2
	w := k - h + 1
	kept := drawsIn(memo)
	if diffs := kept.get(key); diffs != nil {
		for n := range samples {
			fn(diffs[n*w : (n+1)*w])
		}
		return nil
	}
	keep := memo != nil && samples*w <= maxMemoDraws
	diffs := make([]float64, 0, w)
	if keep {
		diffs = make([]float64, 0, samples*w)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	// Each draw convolves its p_i as it draws them (a.Sample's values and
	// poissonbinom.PMF's steps, in the same order) in one distribution
	// emptied for every draw.
	empty, d := poissonbinom.New(0), poissonbinom.New(k)
	alpha := make([]float64, 0, k+1)
	for range samples {
		// A draw is K Poisson-binomial steps of up to K terms each: some
		// 4·10^6 at K = 2001, far below what SIGTERM may wait.
		if err := ctx.Err(); err != nil {
			return err
		}
		d.Set(empty)
		for range k {
			if err := d.Add(a.lo + (a.hi-a.lo)*rng.Float64()); err != nil {
				return err
			}
		}
		alpha = d.AppendPMF(alpha[:0])
		if !keep {
			diffs = diffs[:0]
		}
		start := len(diffs)
		for l := h; l <= k; l++ {
			diffs = append(diffs, alpha[k-l]-alpha[l])
		}
		fn(diffs[start:])
	}
	if keep {
		kept.put(key, diffs)
	}
	return nil
}

// drawsKey identifies the draws of drawDiffs: a's range by its bits.
type drawsKey struct {
	k, samples int
	seed       uint64
	lo, hi     uint64
}

// drawsKey is the key of the draws a Memo keeps for this package.
type drawsMemoKey struct{}

// drawsIn returns the differences of the draws drawDiffs last made that m
// keeps, most recent first, shared read-only: a gamma is measured under
// each actual distribution in turn (expectedErrors), and a comparison
// measures each gamma under the same ones. It holds at most maxMemoDraws
// differences (expectedErrors' draws of one distribution take at most
// 1e8/K, under 2^20 at K = 100); a nil m keeps none.
func drawsIn(m *accountant.Memo) *diffsMemo {
	return m.Keep(drawsMemoKey{}, func() any { return new(diffsMemo) }).(*diffsMemo)
}

// maxMemoDraws bounds the differences a Memo keeps: 2^21, 16 MiB.
const maxMemoDraws = 1 << 21

// diffsMemo is a bounded list of drawDiffs' differences, safe for
// concurrent use.
type diffsMemo struct {
	mu     sync.Mutex
	recent []keptDiffs
}

// keptDiffs is the differences of the draws key names.
type keptDiffs struct {
	key   drawsKey
	diffs []float64
}

func (m *diffsMemo) get(key drawsKey) []float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.recent {
		if e.key == key {
			return e.diffs
		}
	}
	return nil
}

// put keeps diffs first, and as many of the others as stay within
// maxMemoDraws.
func (m *diffsMemo) put(key drawsKey, diffs []float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	kept := []keptDiffs{{key, diffs}}
	total := len(diffs)
	for _, e := range m.recent {
		if e.key != key && total+len(e.diffs) <= maxMemoDraws {
			kept, total = append(kept, e), total+len(e.diffs)
		}
	}
	m.recent = kept
}
