package plan

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/darrm/darrm/internal/ctxio"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/tally"
	"github.com/darrm/darrm/votefile"
)

// Proxy is the votes a plan scores mechanisms on: class counts of the
// release's K teachers over Classes classes, on data the student will not
// be labelled on. In PATE the queries to be labelled are themselves the
// teachers' votes on public data: those votes are the release's private
// votes, although the data is public, because the votes are functions of
// the teachers' private training data, as are the same teachers' votes
// on any other queries. Proxy votes must not depend on that data:
// synthetic votes, votes of teachers trained on public data, or votes
// themselves released under differential privacy. Tuning on the private votes is a mechanism of its own
// (Papernot and Steinke 2022, Rényi DP of hyperparameter tuning) that a
// plan does not charge (CheckNotPrivate refuses what it can tell).
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

// maxProxyCounts bounds the class counts a proxy holds in memory
// (queries × classes, 8 bytes each: 256 MiB): far more than PATE's proxy
// votes (some 9,000 queries of 10 classes), and far less than memory. A
// file of class indices holds a query's C counts in a line of K labels,
// so a small file of many classes would otherwise hold gigabytes.
const maxProxyCounts = 32 << 20

// ReadProxy reads the class counts of the many-class votes in (any
// votefile reader of counts or class indices), named name in the output.
// It refuses votes whose counts would exceed maxProxyCounts, naming the
// classes and the queries read, and stops when ctx is done.
func ReadProxy(ctx context.Context, in votefile.Reader, name string) (Proxy, error) {
	if in == nil {
		// It was a nil dereference, where OnProxy and ReleaseTo name
		// what is missing.
		return Proxy{}, errors.New("plan: ReadProxy: in is nil: the proxy votes (votefile.Open, votefile.ReadRows)")
	}
	p := Proxy{K: in.K(), Classes: in.Classes(), Name: name}
	held := 0
	for in.Next() {
		if len(p.Counts)%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return Proxy{}, err
			}
		}
		c := in.Query().Counts
		if held += len(c); held > maxProxyCounts {
			return Proxy{}, &param.SettingError{Name: "classes", Value: fmt.Sprint(p.Classes), Rule: fmt.Sprintf(
				"proxy votes are held in memory as counts, one for each class of each query: %d queries of %d classes exceed %d counts (%d MiB); give fewer queries or fewer classes",
				len(p.Counts)+1, p.Classes, maxProxyCounts, maxProxyCounts*8>>20)}
		}
		p.Counts = append(p.Counts, slices.Clone(c))
	}
	return p, in.Err()
}

// CheckNotPrivate refuses proxy votes that are the votes to be released,
// as far as their counts tell: the same K and classes, and the same
// multiset of rows of counts (the same queries, in any order). Tuning on
// those is a release of them that a plan does not charge. It reads
// private until its first row the proxy does not hold, or to its end,
// and keeps none of it. What counts cannot tell stays on trust: proxy
// votes that share some queries with the private ones, or votes on the
// same records by other means.
func (p Proxy) CheckNotPrivate(private votefile.Reader) error {
	if private.K() != p.K || private.Classes() != p.Classes {
		return nil
	}
	left := make(map[string]int, len(p.Counts))
	for _, c := range p.Counts {
		left[rowKey(c)]++
	}
	n := 0
	for private.Next() {
		k := rowKey(private.Query().Counts)
		if left[k] == 0 {
			return private.Err()
		}
		left[k]--
		n++
	}
	if err := private.Err(); err != nil || n != len(p.Counts) {
		return err
	}
	return &param.SettingError{Name: "votes", Value: p.Name, Rule: fmt.Sprintf("the same %d queries as the private votes (the same counts, in any order): proxy votes must not depend on the private data (synthetic votes, or votes of teachers trained on public data), never the queries to be released", n)}
}

// rowKey returns a map key of a row of counts.
func rowKey(c []int) string {
	b := make([]byte, 0, 4*len(c))
	for _, v := range c {
		b = binary.AppendUvarint(b, uint64(v))
	}
	return string(b)
}

// check checks the proxy against a plan of K teachers over classes
// classes: the same K and C, counts that sum to K, truths in range.
func (p Proxy) check(k, classes int) error {
	switch {
	case p.K != k:
		return &param.Error{Name: "votes K", Value: p.K, Rule: fmt.Sprintf("the proxy votes must be of the plan's K = %d teachers", k)}
	case p.Classes != classes:
		return &param.Error{Name: "votes classes", Value: p.Classes, Rule: fmt.Sprintf("the proxy votes must be over the plan's %d classes", classes)}
	case len(p.Counts) == 0:
		return &param.Error{Name: "votes queries", Value: 0, Rule: "the proxy votes must have at least one query"}
	case p.Truth != nil && len(p.Truth) != len(p.Counts):
		return &param.Error{Name: "labels", Value: len(p.Truth), Rule: fmt.Sprintf("must be one per proxy query (%d)", len(p.Counts))}
	}
	// Rows may sum to less than K (abstaining teachers), but rows that all
	// sum to one n < K are the votes of n teachers read under the plan's K.
	if n, same := commonSum(p.Counts); same && n < k {
		return &param.Error{Name: "votes K", Value: n, Rule: fmt.Sprintf("every proxy query has K = %d votes: the proxy votes must be of the plan's K = %d teachers", n, k)}
	}
	for i, c := range p.Counts {
		if _, err := tally.Counts(c, k, classes); err != nil {
			return fmt.Errorf("proxy votes, query %d: %w", i+1, err)
		}
		if p.Truth != nil && (p.Truth[i] < 0 || p.Truth[i] >= classes) {
			return &param.Error{Name: "labels", Value: p.Truth[i], Rule: fmt.Sprintf("query %d: must be a class in [0, %d)", i+1, classes)}
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
	// Thresholds are, for a Confident-GNMax plan, the expected utility
	// of its σ1 and σ2 at its threshold, at the least higher ones whose
	// expected precision reaches 0.9, 0.95 and 0.99, and, when 0.99 is
	// not reached, at the most precise one (each answering at least one
	// proxy query): with every query charged both steps, a higher
	// threshold only withholds labels, and what it buys is precision.
	Thresholds []ThresholdUtility
}

// ThresholdUtility is the expected utility of a Confident-GNMax plan's σ1
// and σ2 at one threshold, over the planned queries.
type ThresholdUtility struct {
	Threshold         float64
	Correct, Answered float64
}

// Precision returns the expected fraction of answered labels that are
// correct: Correct/Answered, a ratio of expectations.
func (u ThresholdUtility) Precision() float64 { return u.Correct / u.Answered }

// frontierPrecisions are the precisions at which Utility.Thresholds shows
// what a higher threshold costs.
var frontierPrecisions = []float64{0.9, 0.95, 0.99}

// defaultRatios are the σ1/σ2 a Confident-GNMax plan tries: PATE 2018's
// settings have σ1/σ2 from 1 (200/200) to 3.75 (150/40).
var defaultRatios = []float64{1, 1.5, 2, 3, 4, 6, 10}

// onProxy returns the plan of r's mechanism on class counts for queries
// queries with its expected utility on the proxy votes: its setting
// (parameters) scored on them, or, with a threshold step, its threshold,
// σ1 and setting chosen on them (with r's least precision, which a
// mechanism without one does not use).
func onProxy(ctx context.Context, r Request, queries int, proxy Proxy) (Plan, error) {
	if r.planned().Threshold != nil {
		return confidentGNMax(ctx, r, queries, proxy)
	}
	return scoreOnProxy(ctx, r, queries, proxy)
}

// confidentGNMax returns the parameters (T, σ1, σ2) of r's mechanism
// with a threshold step (Confident-GNMax's) with which queries queries
// fit r.Budget in r.For's target (parameters, for each σ1/σ2 ratio) and
// whose expected number of correct answered labels on the proxy votes is
// largest, among the thresholds whose expected
// precision reaches r.MinPrecision and that answer at least one proxy
// query in expectation (a precision measured on less is not measured).
// The label step's discrete Gaussian noise is scored as continuous noise
// of the same σ2 (their laws differ by less than the quadrature's error
// at σ2 >= 1); the threshold step exactly.
//
// Every query is charged both steps, so the expected correct labels fall
// as the threshold rises: without MinPrecision the plan's threshold is 0,
// the lowest the mechanism takes, and Utility.Thresholds shows what
// higher ones cost and buy. A MinPrecision no threshold reaches is a
// *precisionError that says the best precision reachable and the largest
// number of queries that reaches MinPrecision.
func confidentGNMax(ctx context.Context, r Request, queries int, proxy Proxy) (Plan, error) {
	if r.planned().Threshold == nil {
		return Plan{}, fmt.Errorf("plan: %s has no threshold step to plan on proxy votes", r.Mechanism.Name())
	}
	if err := proxy.check(r.K, r.Classes); err != nil {
		return Plan{}, err
	}
	if err := r.checkMinPrecision(); err != nil {
		return Plan{}, err
	}
	ratios := r.ratios
	if ratios == nil {
		ratios = defaultRatios
	}
	for _, ratio := range ratios {
		if !(ratio > 0) || math.IsInf(ratio, 0) {
			return Plan{}, &param.Error{Name: "ratio", Value: ratio, Rule: "sigma1/sigma2 must be > 0 and finite"}
		}
	}
	best, rps, err := confident(ctx, r, queries, ratios, proxy, r.MinPrecision)
	if err != nil {
		return Plan{}, err
	}
	if best == nil {
		return Plan{}, unreachable(ctx, r, queries, ratios, proxy, r.MinPrecision, rps)
	}
	best.Utility.On = proxy.describe(queries)
	return *best, nil
}

// confident returns the verified plan of queries with the most expected
// correct labels among the thresholds that reach minPrecision (nil if
// none does), and the plan of each ratio.
func confident(ctx context.Context, r Request, queries int, ratios []float64, proxy Proxy, minPrecision float64) (*Plan, []ratioPlan, error) {
	// Each ratio is searched on its own, in parallel. A ratio at which no
	// σ2 lets the queries fit is left out (a filter may hold σ1 only up to
	// a bound, which a large ratio passes first); when none fits, the
	// first ratio's error says why.
	all := make([]ratioPlan, len(ratios))
	none := make([]error, len(ratios))
	err := inParallel(len(ratios), func(i int) error {
		var err error
		all[i], err = planRatio(ctx, r, queries, ratios[i], proxy)
		if nf := (*noneFitError)(nil); errors.As(err, &nf) {
			none[i], err = err, nil
		}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	var rps []ratioPlan
	for i := range all {
		if none[i] == nil {
			rps = append(rps, all[i])
		}
	}
	if len(rps) == 0 {
		return nil, nil, none[0]
	}
	var best *Plan
	for _, rp := range rps {
		if t := rp.scores.best(minPrecision); t >= 0 && (best == nil || rp.utility(t).Correct > best.Utility.Correct) {
			pl := rp.at(t)
			best = &pl
		}
	}
	if best == nil {
		return nil, rps, nil
	}
	if err := verify(ctx, best); err != nil {
		return nil, nil, err
	}
	return best, rps, nil
}

// inParallel calls f(0), ..., f(n-1), at most GOMAXPROCS at once, and
// returns their errors joined, each said once: an interruption, which
// ends every call, is the first call's to see it alone (joined, a plan
// interrupted printed "context canceled" once for every ratio).
func inParallel(n int, f func(i int) error) error {
	errs := make([]error, n)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	var out []error
	seen := make(map[string]bool)
	for _, err := range errs {
		switch {
		case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
			return err
		case err != nil && !seen[err.Error()]:
			seen[err.Error()] = true
			out = append(out, err)
		}
	}
	return errors.Join(out...)
}

// ratioPlan is the plan of one σ1/σ2 ratio for a number of queries (its
// threshold not set: it costs nothing of the budget, since every query is
// charged) and its scores on the proxy votes at every threshold.
type ratioPlan struct {
	ratio  float64
	plan   Plan
	scores scores
}

// planRatio searches the σ2 of ratio σ1/σ2 with which queries fit (search)
// and scores it on the proxy votes.
func planRatio(ctx context.Context, r Request, queries int, ratio float64, proxy Proxy) (ratioPlan, error) {
	pl, err := search(ctx, r, queries, ratio)
	if err != nil {
		return ratioPlan{}, err
	}
	sc, err := score(ctx, proxy, ratio*pl.Value, pl.Request.planned().Expect)
	return ratioPlan{ratio: ratio, plan: pl, scores: sc}, err
}

// utility returns the expected utility at threshold t over the planned
// queries.
func (rp ratioPlan) utility(t int) ThresholdUtility {
	scale := float64(rp.plan.Queries) / rp.scores.n
	return ThresholdUtility{Threshold: float64(t), Correct: rp.scores.correct[t] * scale, Answered: rp.scores.answered[t] * scale}
}

// at returns the plan at threshold t with its utility, and what the least
// higher thresholds that reach the frontier's precisions expect.
func (rp ratioPlan) at(t int) Plan {
	pl := rp.plan
	pl.threshold, pl.sigma1 = float64(t), rp.ratio*pl.Value
	pl.Request = withStep(pl.Request, pl.threshold, pl.sigma1)
	u := rp.utility(t)
	pl.Utility = &Utility{Correct: u.Correct, Answered: u.Answered, Thresholds: []ThresholdUtility{u}}
	for _, p := range frontierPrecisions {
		if u.Precision() >= p {
			continue
		}
		for h := t + 1; h < len(rp.scores.correct); h++ {
			if rp.scores.reaches(h, p) {
				pl.Utility.Thresholds = append(pl.Utility.Thresholds, rp.utility(h))
				break
			}
		}
	}
	// Where the last precision is not reached, the most precise threshold
	// says how far the plan's σ1 and σ2 can go.
	last := pl.Utility.Thresholds[len(pl.Utility.Thresholds)-1]
	if h, p := rp.scores.bestPrecision(); h > int(last.Threshold) && p > last.Precision() && p < frontierPrecisions[len(frontierPrecisions)-1] {
		pl.Utility.Thresholds = append(pl.Utility.Thresholds, rp.utility(h))
	}
	return pl
}

// scores are the expected correct answered labels and the expected
// answered labels of one (σ1, σ2) at every threshold 0..K, summed over
// the n proxy queries.
type scores struct {
	correct, answered []float64
	n                 float64
}

// score returns the scores on the proxy votes of a threshold step of
// deviation σ1 before a label that expect scores (ensemble.Planned.Expect).
// The threshold step sees only a query's largest count, so queries are
// grouped by it: (K+1)² terms for the thresholds, beside one score per
// query for the label.
func score(ctx context.Context, proxy Proxy, sigma1 float64, expect func([]int, int) float64) (scores, error) {
	k := proxy.K
	queries := make([]float64, k+1) // by largest count
	correct := make([]float64, k+1)
	// Checked every 256 queries, or once 2^16 class counts were scored
	// since: a query of 500,000 classes takes a tenth of a second.
	check := ctxio.Every{Ctx: ctx, Items: 256, Units: 1 << 16}
	for i, c := range proxy.Counts {
		if err := check.Step(len(c)); err != nil {
			return scores{}, err
		}
		m := maxCount(c)
		queries[m]++
		correct[m] += expect(c, proxy.truth(i))
	}
	tail := discreteTail(sigma1)
	s := scores{correct: make([]float64, k+1), answered: make([]float64, k+1), n: float64(len(proxy.Counts))}
	for t := 0; t <= k; t++ {
		for m, q := range queries {
			if q == 0 {
				continue
			}
			p := tail(t - m)
			s.answered[t] += p * q
			s.correct[t] += p * correct[m]
		}
	}
	return s, nil
}

// reaches reports whether threshold t answers at least one proxy query in
// expectation with an expected precision of at least p.
func (s scores) reaches(t int, p float64) bool {
	return s.answered[t] >= 1 && s.correct[t] >= p*s.answered[t]
}

// best returns the threshold with the most expected correct labels among
// those that reach precision p, -1 if none does.
func (s scores) best(p float64) int {
	best := -1
	for t := range s.correct {
		if s.reaches(t, p) && (best < 0 || s.correct[t] > s.correct[best]) {
			best = t
		}
	}
	return best
}

// bestPrecision returns the threshold of the highest expected precision
// among those that answer at least one proxy query, and that precision;
// -1 if none does.
func (s scores) bestPrecision() (int, float64) {
	best, prec := -1, 0.0
	for t := range s.correct {
		if s.answered[t] >= 1 && (best < 0 || s.correct[t]/s.answered[t] > prec) {
			best, prec = t, s.correct[t]/s.answered[t]
		}
	}
	return best, prec
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

// scoreOnProxy returns the plan of the setting of r's mechanism on class
// counts (parameters) with its expected number of correct labels on the
// proxy votes, its label scored as its Plan says (ensemble.Planned.Expect:
// GNMax's discrete Gaussian noise as continuous noise of the same σ2, as
// confidentGNMax scores its label step; LNMax's discrete Laplace noise
// as continuous): beside a Confident-GNMax plan of the same budget, what
// the threshold step costs or buys.
func scoreOnProxy(ctx context.Context, r Request, queries int, proxy Proxy) (Plan, error) {
	if r.votes() != votefile.ManyClasses || r.planned().Expect == nil {
		return Plan{}, fmt.Errorf("plan: %s is not scored on proxy votes of class counts", r.Mechanism.Name())
	}
	if err := proxy.check(r.K, r.Classes); err != nil {
		return Plan{}, err
	}
	pl, err := parameters(ctx, r, queries)
	if err != nil {
		return Plan{}, err
	}
	expect := pl.Request.planned().Expect
	var c float64
	check := ctxio.Every{Ctx: ctx, Items: 256, Units: 1 << 16} // as score's
	for i, counts := range proxy.Counts {
		if err := check.Step(len(counts)); err != nil {
			return Plan{}, err
		}
		c += expect(counts, proxy.truth(i))
	}
	pl.Utility = answeredAll(c, queries, proxy)
	return pl, nil
}

// maxTailPoints bounds the table of discreteTail.
const maxTailPoints = 1 << 20

// maxCount returns the largest count.
func maxCount(c []int) int {
	m := c[0]
	for _, v := range c[1:] {
		m = max(m, v)
	}
	return m
}

// discreteTail returns t ↦ P(Z >= t) for Z the discrete Gaussian of
// scale sigma (discrete.Gaussian's law, exp(-z²/2σ²) normalised),
// summed from the far tail inwards so that small tails keep their
// digits; beyond 40σ a tail is 0 or 1 to double precision. Beyond
// maxTailPoints points (σ above 26,000, up to the samplers' 1e15) the sum
// is the integral of the continuous density from t - 1/2, by the midpoint
// rule within a relative 1/(24σ²) of it: a utility's estimate needs no
// more, and the table would not fit in memory.
func discreteTail(sigma float64) func(t int) float64 {
	if 40*sigma > maxTailPoints {
		return func(t int) float64 { return 0.5 * math.Erfc((float64(t)-0.5)/(sigma*math.Sqrt2)) }
	}
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

// checkMinPrecision checks the least precision a plan must reach: in
// [0, 1).
func (r Request) checkMinPrecision() error {
	if !(r.MinPrecision >= 0 && r.MinPrecision < 1) {
		return &param.Error{Name: "min-precision", Value: r.MinPrecision, Rule: "must be in [0, 1)"}
	}
	return nil
}
