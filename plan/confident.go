package plan

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// Proxy is the votes a plan scores Confident-GNMax on: class counts of K
// teachers over Classes classes on queries like the release's, taken on
// public or already released data. The private votes of the release
// must not be used: tuning on them is a mechanism of its own (Papernot
// and Steinke 2022, Rényi DP of hyperparameter tuning) that a plan does
// not charge.
type Proxy struct {
	K, Classes int
	Counts     [][]int
	// Truth is each query's true class; nil: the plurality of its counts
	// (the smallest class among tied ones), the label the teachers give
	// without noise, so that the score is agreement with the ensemble.
	Truth []int
	// Name says what the votes are, for the output.
	Name string
}

// ReadProxy reads the class counts of the many-class votes in (any
// votefile reader of counts or class indices), named name in the output.
func ReadProxy(in votefile.Reader, name string) (Proxy, error) {
	p := Proxy{K: in.K(), Classes: in.Classes(), Name: name}
	for in.Next() {
		p.Counts = append(p.Counts, slices.Clone(in.Query().Counts))
	}
	return p, in.Err()
}

// check checks the proxy against a plan of K teachers over classes
// classes: the same K and C, counts that sum to K, truths in range.
func (p Proxy) check(k, classes int) error {
	switch {
	case p.K != k:
		return &accountant.ParamError{Name: "votes K", Value: float64(p.K), Rule: fmt.Sprintf("the proxy votes must be of the plan's K = %d teachers", k)}
	case p.Classes != classes:
		return &accountant.ParamError{Name: "votes classes", Value: float64(p.Classes), Rule: fmt.Sprintf("the proxy votes must be over the plan's %d classes", classes)}
	case len(p.Counts) == 0:
		return &accountant.ParamError{Name: "votes queries", Value: 0, Rule: "the proxy votes must have at least one query"}
	case p.Truth != nil && len(p.Truth) != len(p.Counts):
		return &accountant.ParamError{Name: "labels", Value: float64(len(p.Truth)), Rule: fmt.Sprintf("must be one per proxy query (%d)", len(p.Counts))}
	}
	// Rows may sum to less than K (abstaining teachers), but rows that all
	// sum to one n < K are the votes of n teachers read under the plan's K.
	if n, same := commonSum(p.Counts); same && n < k {
		return &accountant.ParamError{Name: "votes K", Value: float64(n), Rule: fmt.Sprintf("every proxy query has K = %d votes: the proxy votes must be of the plan's K = %d teachers", n, k)}
	}
	for i, c := range p.Counts {
		if _, err := votefile.CheckCounts(c, k, classes); err != nil {
			return fmt.Errorf("proxy votes, query %d: %w", i+1, err)
		}
		if p.Truth != nil && (p.Truth[i] < 0 || p.Truth[i] >= classes) {
			return &accountant.ParamError{Name: "labels", Value: float64(p.Truth[i]), Rule: fmt.Sprintf("query %d: must be a class in [0, %d)", i+1, classes)}
		}
	}
	return nil
}

// truth returns query i's true class.
func (p Proxy) truth(i int) int {
	if p.Truth != nil {
		return p.Truth[i]
	}
	best := 0
	for j, n := range p.Counts[i] {
		if n > p.Counts[i][best] {
			best = j
		}
	}
	return best
}

// Utility is a plan's expected utility over the noise on proxy votes.
type Utility struct {
	// Correct and Answered are the expected correct answered labels and
	// the expected answered labels over the planned queries: their means
	// over the proxy queries times the number of queries planned.
	Correct, Answered float64
	// On says what the expectation was computed on.
	On string
}

// ConfidentOptions configure the search of Confident-GNMax's parameters.
type ConfidentOptions struct {
	// Ratios are the σ1/σ2 tried (nil: DefaultRatios); for each the least
	// σ2 that fits is searched, and every integer threshold.
	Ratios []float64
	// MinPrecision, in [0, 1), is the least expected fraction of answered
	// labels that are correct; 0 leaves the threshold free, and then the
	// lowest threshold scores best, since every query is charged whether
	// answered or not.
	MinPrecision float64
}

// DefaultRatios are the σ1/σ2 a Confident-GNMax plan tries: PATE 2018's
// settings have σ1/σ2 from 1 (200/200) to 3.75 (150/40).
var DefaultRatios = []float64{1, 1.5, 2, 3, 4, 6, 10}

// ConfidentGNMax returns the Confident-GNMax parameters (T, σ1, σ2) with
// which queries queries fit r.Budget (Parameters, for each σ1/σ2 ratio)
// and whose expected number of correct answered labels on the proxy
// votes is largest. The label step's discrete Gaussian noise is scored as
// continuous noise of the same σ2 (their laws differ by less than the
// quadrature's error at σ2 >= 1); the threshold step exactly.
func ConfidentGNMax(ctx context.Context, r Request, queries int, proxy Proxy, opts ConfidentOptions) (Plan, error) {
	if r.Mechanism.Name != provenance.ConfidentGNMax {
		return Plan{}, fmt.Errorf("plan: ConfidentGNMax plans confident-gnmax, not %s", r.Mechanism.Name)
	}
	if err := proxy.check(r.Problem.K, r.Classes); err != nil {
		return Plan{}, err
	}
	if !(opts.MinPrecision >= 0 && opts.MinPrecision < 1) {
		return Plan{}, &accountant.ParamError{Name: "min-precision", Value: opts.MinPrecision, Rule: "must be in [0, 1)"}
	}
	ratios := opts.Ratios
	if ratios == nil {
		ratios = DefaultRatios
	}
	for _, ratio := range ratios {
		if !(ratio > 0) || math.IsInf(ratio, 0) {
			return Plan{}, &accountant.ParamError{Name: "ratio", Value: ratio, Rule: "sigma1/sigma2 must be > 0 and finite"}
		}
	}
	// Each ratio is searched on its own, in parallel.
	found := make([]*Plan, len(ratios))
	errs := make([]error, len(ratios))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, ratio := range ratios {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			found[i], errs[i] = bestThreshold(ctx, r, queries, ratio, proxy, opts.MinPrecision)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Plan{}, err
	}
	var best *Plan
	for _, p := range found {
		if p != nil && (best == nil || p.Utility.Correct > best.Utility.Correct) {
			best = p
		}
	}
	if best == nil {
		return Plan{}, &accountant.ParamError{Name: "min-precision", Value: opts.MinPrecision, Rule: "no threshold reaches it on the proxy votes"}
	}
	if err := verify(ctx, best); err != nil {
		return Plan{}, err
	}
	best.Utility.On = proxy.describe(queries)
	return *best, nil
}

// describe says what a utility over queries queries was computed on.
func (p Proxy) describe(queries int) string {
	truth := "their plurality as the truth"
	if p.Truth != nil {
		truth = "their given labels as the truth"
	}
	return fmt.Sprintf("%s: %d proxy queries of %d teachers over %d classes, %s; expected over the noise, scaled to %d queries",
		p.Name, len(p.Counts), p.K, p.Classes, truth, queries)
}

// GNMax returns the plan of GNMax's σ2 (Parameters) with its expected
// number of correct labels on the proxy votes, the label's discrete
// Gaussian noise scored as continuous noise of the same σ2 (as
// ConfidentGNMax scores its label step): beside a Confident-GNMax plan of
// the same budget, what the threshold step costs or buys.
func GNMax(ctx context.Context, r Request, queries int, proxy Proxy) (Plan, error) {
	if r.Mechanism.Name != provenance.GNMax || r.Mechanism.Input != votefile.ManyClasses {
		return Plan{}, fmt.Errorf("plan: GNMax plans gnmax on class counts, not %s", r.Mechanism.Name)
	}
	if err := proxy.check(r.Problem.K, r.Classes); err != nil {
		return Plan{}, err
	}
	pl, err := Parameters(ctx, r, queries)
	if err != nil {
		return Plan{}, err
	}
	var c float64
	for i, counts := range proxy.Counts {
		c += pArgmax(counts, proxy.truth(i), pl.Request.Mechanism.GNMax.Sigma2)
	}
	q := float64(queries)
	pl.Utility = &Utility{Correct: c / float64(len(proxy.Counts)) * q, Answered: q, On: proxy.describe(queries)}
	return pl, nil
}

// bestThreshold returns the plan of ratio σ1/σ2 whose threshold gives
// the most expected correct answered labels on the proxy votes with an
// expected precision of at least minPrecision, nil if none reaches it.
func bestThreshold(ctx context.Context, r Request, queries int, ratio float64, proxy Proxy, minPrecision float64) (*Plan, error) {
	// The threshold costs nothing of the budget: every query is charged.
	// Any value lets the search run.
	q := r
	q.Mechanism.GNMax.Threshold = float64(r.Problem.K)
	pl, err := search(ctx, q, queries, ratio)
	if err != nil {
		return nil, err
	}
	g := pl.Request.Mechanism.GNMax
	correct := make([]float64, len(proxy.Counts))
	for i, c := range proxy.Counts {
		correct[i] = pArgmax(c, proxy.truth(i), g.Sigma2)
	}
	tail := discreteTail(g.Sigma1)
	n := float64(len(proxy.Counts))
	var best *Plan
	for t := 0; t <= r.Problem.K; t++ {
		var c, a float64
		for i, counts := range proxy.Counts {
			pa := tail(t - maxCount(counts))
			a += pa
			c += pa * correct[i]
		}
		if a == 0 || c/a < minPrecision {
			continue
		}
		if best == nil || c/n*float64(queries) > best.Utility.Correct {
			pt := pl
			pt.Request.Mechanism.GNMax.Threshold = float64(t)
			pt.Utility = &Utility{Correct: c / n * float64(queries), Answered: a / n * float64(queries)}
			best = &pt
		}
	}
	return best, nil
}

// maxCount returns the largest count.
func maxCount(c []int) int {
	m := c[0]
	for _, v := range c[1:] {
		m = max(m, v)
	}
	return m
}

// discreteTail returns t ↦ P(Z >= t) for Z the discrete Gaussian of
// scale sigma (noise.DiscreteGaussian's law, exp(-z²/2σ²) normalised),
// summed from the far tail inwards so that small tails keep their
// digits; beyond 40σ a tail is 0 or 1 to double precision.
func discreteTail(sigma float64) func(t int) float64 {
	l := int(math.Ceil(40*sigma)) + 1
	tail := make([]float64, 2*l+2) // tail[z+l] = Σ_{y >= z} w(y)
	for z := l; z >= -l; z-- {
		w := math.Exp(-float64(z) * float64(z) / (2 * sigma * sigma))
		tail[z+l] = tail[z+l+1] + w
	}
	norm := tail[0]
	return func(t int) float64 {
		switch {
		case t <= -l:
			return 1
		case t > l:
			return 0
		}
		return tail[t+l] / norm
	}
}

// pArgmax returns the probability that class j has the largest of the
// counts c plus independent N(0, σ²) noise: ∫ φ(z) Π_{i≠j}
// Φ((c_j - c_i)/σ + z) dz, by the trapezoid rule on [-9, 9] in steps of
// 1/32 (the integrand is smooth and below 1e-17 beyond).
func pArgmax(c []int, j int, sigma float64) float64 {
	const h, lim = 1.0 / 32, 9.0
	var sum float64
	for z := -lim; z <= lim; z += h {
		v := math.Exp(-z*z/2) / math.Sqrt(2*math.Pi)
		for i, n := range c {
			if i == j || v == 0 {
				continue
			}
			v *= 0.5 * math.Erfc(-((float64(c[j]-n))/sigma+z)/math.Sqrt2)
		}
		sum += v
	}
	return sum * h
}

// commonSum returns the sum of the first row of counts and whether every
// row has that sum.
func commonSum(counts [][]int) (int, bool) {
	sum := func(c []int) int {
		n := 0
		for _, v := range c {
			n += v
		}
		return n
	}
	if len(counts) == 0 {
		return 0, false
	}
	n := sum(counts[0])
	for _, c := range counts[1:] {
		if sum(c) != n {
			return n, false
		}
	}
	return n, true
}
