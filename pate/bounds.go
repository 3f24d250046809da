package pate

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/noisymax"
)

// answer says what became of one query of a release: answerUnknown (the
// zero value: no release given, charged in expectation), answerGiven or
// answerWithheld (the threshold step withheld the label).
type answer int8

const (
	// answerUnknown: no release is given; the threshold step is charged
	// in expectation over its noise (the PATE paper's Table 2).
	answerUnknown answer = iota
	// Answered: the query got a label.
	answerGiven
	// answerWithheld: the threshold step withheld the label.
	answerWithheld
)

// defaultOrders returns darrm's default grid of Rényi orders for PATE
// accounting: 1.25, 1.5, 1.75, then 2 to 100 in steps of 0.5, then 40
// orders spaced geometrically from 100 to 1000 (rounded to 0.01).
func defaultOrders() []float64 {
	o := []float64{1.25, 1.5, 1.75}
	for x := 2.0; x <= 100; x += 0.5 {
		o = append(o, x)
	}
	for j := 1; j <= 40; j++ {
		o = append(o, math.Round(100*math.Pow(10, float64(j)/40)*100)/100)
	}
	return o
}

// rdpAccount accumulates the privacy cost of PATE queries at a grid of
// Rényi orders: data-independent (every query charged λ/σ2², plus
// λ/(2σ1²) for the threshold step) and data-dependent (Theorem 6 per
// step, in both directions unless rdpOptions say one-sided), the GNMax
// step charged only when it answers, or, when the answers are unknown,
// with the probability that it does. It keeps every query's counts for
// the smooth-sensitivity analysis (localSensitivity): memory grows as
// queries × classes.
type rdpAccount struct {
	mech       noisymax.Steps
	directions Directions
	orders     []float64
	gn, th     []*curve
	teachers   int
	classes    int
	abstain    bool   // the relation: teachers may abstain (rdpOptions.Abstain)
	mode       answer // answerUnknown, or answerGiven for a realised release
	counts     []int32
	answers    []answer
	logq       [][2]float64 // per query: log q̃ charged for the threshold step and for GNMax
	// thLogQ and thP are the threshold step's log q̃ (as charged) and its
	// probability of answering at each largest count 0..K.
	thLogQ, thP []float64
	expected    float64
	answered    int
	ind, dep    []float64 // totals per order (upper bounds) of the first done queries
	done        int
	mo          *memo // what the account's bounds keep (rdpOptions.memo)
}

// rdpOptions are the choices of a PATE analysis that are not the
// mechanism's.
type rdpOptions struct {
	// Orders is the grid of Rényi orders; nil is defaultOrders.
	Orders []float64
	// Directions says which divergences the data-dependent bound covers:
	// BothDirections (the zero value, a guarantee) or OneSided (the PATE
	// paper's value).
	Directions Directions
	// Abstain says that teachers may abstain (a class label -1, or
	// counts that sum to fewer than K): a query's counts then sum to at
	// most K, and the neighbours every bound ranges over differ by one
	// vote added, removed or moved, where without it every teacher votes
	// and a neighbour moves one vote between two classes (docs/pate.md,
	// "Abstaining teachers"). The data-independent curves hold for both;
	// the data-dependent bounds and the local sensitivities are computed
	// for the relation given. A bound for abstentions holds for votes
	// without them too (it ranges over more neighbours).
	Abstain bool
	// memo keeps the curves, terms and conditions the account's bounds
	// make (memoIn); nil: the account's own.
	memo *memo
}

// maxAccountTeachers bounds the teachers of an rdpAccount: its tables and
// the smooth sensitivity's walk have K+1 entries (PATE's experiments have
// K = 250; at K = 4e9, summed from four counts of a vote file, they
// exhausted memory).
const maxAccountTeachers = 1 << 20

// newRDPAccount returns an empty account for mechanism m, K teachers
// (at most maxAccountTeachers) and C classes, analysed as opt says.
func newRDPAccount(m noisymax.Steps, teachers, classes int, opt rdpOptions) (*rdpAccount, error) {
	if err := param.CountIn("teachers", teachers, 1, maxAccountTeachers); err != nil {
		return nil, fmt.Errorf("PATE account: %w", err)
	}
	if err := m.CheckFor(teachers); err != nil {
		return nil, fmt.Errorf("PATE account: %w", err)
	}
	if err := param.Count("classes", classes, 2); err != nil {
		return nil, fmt.Errorf("PATE account: %w", err)
	}
	if opt.Directions != BothDirections && opt.Directions != OneSided {
		return nil, fmt.Errorf("PATE account: unknown directions %v", opt.Directions)
	}
	orders := opt.Orders
	if orders == nil {
		orders = defaultOrders()
	}
	if len(orders) == 0 {
		return nil, fmt.Errorf("PATE account: no orders")
	}
	a := &rdpAccount{mech: m, directions: opt.Directions, orders: append([]float64(nil), orders...), teachers: teachers, classes: classes, abstain: opt.Abstain,
		ind: make([]float64, len(orders)), dep: make([]float64, len(orders)), mode: -1, mo: opt.memo}
	if a.mo == nil {
		a.mo = memoIn(nil)
	}
	for _, o := range orders {
		if err := param.Alpha(o); err != nil {
			return nil, fmt.Errorf("PATE account: %w", err)
		}
		a.gn = append(a.gn, newCurve(a.mo, gnmaxSlope(m.Sigma2), o))
		if m.Confident() {
			a.th = append(a.th, newCurve(a.mo, thresholdSlope(m.Sigma1), o))
		}
	}
	if m.Confident() {
		a.thLogQ, a.thP = thresholdTable(m.Threshold, m.Sigma1, m.Noise, a.neighbours(), classes, opt.Directions)
	}
	return a, nil
}

// neighbours returns the relation the account's bounds range over.
func (a *rdpAccount) neighbours() neighbours {
	return neighbours{abstain: a.abstain, teachers: a.teachers}
}

// Add charges one query with vote counts (C of them, summing to K, or
// to at most K when teachers may abstain: rdpOptions.Abstain) and what
// became of it: answerUnknown for every query of an account of
// expected cost, answerGiven or answerWithheld for every query of a release
// (a plain GNMax release answers every query).
func (a *rdpAccount) add(counts []int, ans answer) error {
	if len(counts) != a.classes {
		return fmt.Errorf("PATE account: %d counts, want C = %d", len(counts), a.classes)
	}
	sum, top := 0, 0
	for i, n := range counts {
		if n < 0 {
			return fmt.Errorf("PATE account: count[%d] = %d: must be >= 0", i, n)
		}
		sum += n
		if n > counts[top] {
			top = i
		}
	}
	if sum > a.teachers || (!a.abstain && sum != a.teachers) {
		return fmt.Errorf("PATE account: counts %s (their sum is not quoted: a query's votes are private)", countsRule(a.neighbours()))
	}
	mode := ans
	if ans == answerWithheld {
		mode = answerGiven
	}
	if ans < answerUnknown || ans > answerWithheld {
		return fmt.Errorf("PATE account: unknown answer %d", ans)
	}
	if a.mode >= 0 && mode != a.mode {
		return fmt.Errorf("PATE account: a query with and one without a known answer: an account is either of a release or of expected cost")
	}
	if ans == answerWithheld && !a.mech.Confident() {
		return fmt.Errorf("PATE account: GNMax without the threshold step answers every query")
	}
	a.mode = mode
	p, logq1 := 1.0, 0.0
	if a.mech.Confident() {
		logq1, p = a.thLogQ[counts[top]], a.thP[counts[top]]
	}
	var logq2 float64
	if a.directions == OneSided {
		logq2 = gnmaxLogQ(a.mo, counts, top, a.mech.Sigma2, a.mech.Noise)
	} else {
		logq2 = gnmaxNeighbourLogQ(a.mo, counts, a.mech.Sigma2, a.mech.Noise, a.neighbours())
	}
	if ans == answerGiven {
		a.answered++
	}
	for _, n := range counts {
		a.counts = append(a.counts, int32(n))
	}
	a.answers = append(a.answers, ans)
	a.logq = append(a.logq, [2]float64{logq1, logq2})
	a.expected += p
	if len(a.answers)-a.done >= flushEvery {
		a.flush()
	}
	return nil
}

// flushEvery is how many queries add holds before it charges them: a
// caller that checks its context between adds then notices it within one
// flush (1,024 queries at 240 orders: about 10 ms), where charging every
// query at result took seconds that nothing could interrupt (200,000
// queries: 1-3 s). The totals are the same: each order adds its queries
// in order, in one flush or many.
const flushEvery = 1 << 10

// flush charges the queries added since the last flush at every order:
// the orders are shared among the cores, and each order's total adds its
// queries in order, so the totals do not depend on the number of cores.
func (a *rdpAccount) flush() {
	if a.done == len(a.answers) {
		return
	}
	parallel(len(a.orders), func(j int) {
		var th *curve
		if a.mech.Confident() {
			th = a.th[j]
		}
		for i := a.done; i < len(a.answers); i++ {
			ind, dep := a.charge(i, a.gn[j], th)
			a.ind[j] = outward.AddUp(a.ind[j], ind)
			a.dep[j] = outward.AddUp(a.dep[j], dep)
		}
	})
	a.done = len(a.answers)
}

// charge returns query i's data-independent and data-dependent cost on
// the curves gn and th (nil without the threshold step) of one order: the
// GNMax step weighted by 1, 0 or Pr[answer], the threshold step in full.
func (a *rdpAccount) charge(i int, gn, th *curve) (ind, dep float64) {
	weight := outward.Exact(1.0)
	if th != nil {
		weight = outward.Exact(a.thP[a.top(i)])
	}
	switch a.answers[i] {
	case answerGiven:
		weight = outward.Exact(1)
	case answerWithheld:
		weight = outward.Exact(0)
	}
	ind = gn.ind.Hi
	dep = gn.at(a.logq[i][1]).Mul(weight).Hi
	if th != nil {
		ind = outward.AddUp(ind, th.ind.Hi)
		dep = outward.AddUp(dep, th.at(a.logq[i][0]).Hi)
		if a.answers[i] == answerWithheld {
			ind = th.ind.Hi
		}
	}
	return ind, dep
}

// parallel calls f(i) for i in [0, n) on every core.
func parallel(n int, f func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// orderEps is an (ε, δ) bound at the Rényi order that minimises it.
type orderEps struct {
	Eps   float64
	Order float64
	RDP   float64 // the Rényi DP at Order
}

// bounds is the privacy of the queries of an rdpAccount.
type bounds struct {
	// Directions says which divergences Dependent bounds: only
	// BothDirections is a differential-privacy guarantee.
	Directions Directions
	Queries    int
	Teachers   int
	Classes    int
	// answerGiven counts the answered queries of a release; -1 when the
	// answers are unknown.
	Answered int
	// ExpectedAnswered is Σ Pr[answer] over the queries (the queries
	// when there is no threshold step).
	ExpectedAnswered float64
	// Independent is the data-independent bound: every query charged
	// λ/σ2² (and λ/(2σ1²)), or, for a release, the unanswered ones only
	// the threshold step.
	Independent orderEps
	// Dependent is the data-dependent bound, in the directions Directions
	// says, which is a function of the votes: releasing it is itself a
	// release (see rdpAccount.localSensitivity).
	Dependent                    orderEps
	Orders                       []float64
	RDPIndependent, RDPDependent []float64
}

// bounds converts the totals to (ε, δ) under conversion c, each at its
// best order of the grid.
func (a *rdpAccount) result(delta float64, c accountant.Conversion) (bounds, error) {
	if err := c.Check(delta); err != nil {
		return bounds{}, fmt.Errorf("PATE account: %w", err)
	}
	a.flush()
	r := bounds{Directions: a.directions, Queries: len(a.answers), Teachers: a.teachers, Classes: a.classes, Answered: -1,
		ExpectedAnswered: a.expected, Orders: append([]float64(nil), a.orders...),
		RDPIndependent: append([]float64(nil), a.ind...), RDPDependent: append([]float64(nil), a.dep...)}
	if a.mode == answerGiven {
		r.Answered = a.answered
		r.ExpectedAnswered = float64(a.answered)
	}
	var err error
	if r.Independent, err = bestOrder(a.orders, a.ind, delta, c); err != nil {
		return r, err
	}
	r.Dependent, err = bestOrder(a.orders, a.dep, delta, c)
	return r, err
}

func bestOrder(orders, rdp []float64, delta float64, c accountant.Conversion) (orderEps, error) {
	best := orderEps{Eps: math.Inf(1)}
	for j, o := range orders {
		e, err := c.ConvertRDP(rdp[j], o, delta)
		if err != nil {
			return best, fmt.Errorf("PATE account: %w", err)
		}
		if e < best.Eps {
			best = orderEps{Eps: e, Order: o, RDP: rdp[j]}
		}
	}
	return best, nil
}

// RDPDependent returns the data-dependent total at one order (which need
// not be on the grid), as Add charged it.
func (a *rdpAccount) rdpDependent(order float64) (float64, error) {
	if err := param.Alpha(order); err != nil {
		return 0, fmt.Errorf("PATE account: %w", err)
	}
	var gn, th *curve
	gn = newCurve(a.mo, gnmaxSlope(a.mech.Sigma2), order)
	if a.mech.Confident() {
		th = newCurve(a.mo, thresholdSlope(a.mech.Sigma1), order)
	}
	var total float64
	for i := range a.answers {
		_, dep := a.charge(i, gn, th)
		total = outward.AddUp(total, dep)
	}
	return total, nil
}

// top returns query i's largest count.
func (a *rdpAccount) top(i int) int {
	return int(slices.Max(a.counts[i*a.classes : (i+1)*a.classes]))
}

func (a *rdpAccount) query(i int) []int {
	row := a.counts[i*a.classes : (i+1)*a.classes]
	out := make([]int, len(row))
	for j, n := range row {
		out[j] = int(n)
	}
	return out
}

func argmax(counts []int) int {
	top := 0
	for i, n := range counts {
		if n > counts[top] {
			top = i
		}
	}
	return top
}
