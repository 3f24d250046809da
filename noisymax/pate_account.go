package noisymax

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
)

// ConfidentGNMax is a PATE aggregator of K teachers' votes over C classes
// (PATE paper, Algorithm 1): when Sigma1 > 0, a query is answered only if
// its largest vote count plus noise of deviation Sigma1 reaches Threshold;
// an answered query gets GNMax's label, the argmax of the counts plus
// noise of deviation Sigma2. Sigma1 = 0 is plain GNMax: every query is
// answered.
type ConfidentGNMax struct {
	Threshold float64
	Sigma1    float64
	Sigma2    float64
	Noise     Noise
}

// Confident reports whether m has the threshold step.
func (m ConfidentGNMax) Confident() bool { return m.Sigma1 != 0 }

// Validate checks the parameters.
func (m ConfidentGNMax) Validate() error {
	if err := checkNoise("sigma2", m.Sigma2, m.Noise); err != nil {
		return err
	}
	if m.Sigma1 == 0 {
		if m.Threshold != 0 {
			return &accountant.ParamError{Name: "threshold", Value: m.Threshold, Rule: "needs sigma1 > 0 (the threshold step's noise)"}
		}
		return nil
	}
	if err := checkNoise("sigma1", m.Sigma1, m.Noise); err != nil {
		return err
	}
	if math.IsNaN(m.Threshold) || math.IsInf(m.Threshold, 0) {
		return &accountant.ParamError{Name: "threshold", Value: m.Threshold, Rule: "must be a finite number"}
	}
	return nil
}

// thresholdReach is how many σ1 above K a threshold may lie: beyond it the
// step answers no query (Pr[N(0, 1) >= 10] < 10^-23), yet every query is
// charged for it.
const thresholdReach = 10

// ValidateFor checks m (Validate) for K teachers: a threshold step must
// be able to both answer and withhold, so its threshold is in
// [0, K + 10·σ1]. Below 0 it is the threshold 0 (no count is negative);
// beyond, no query is ever answered. A setting that does nothing is
// refused rather than charged.
func (m ConfidentGNMax) ValidateFor(teachers int) error {
	if err := m.Validate(); err != nil {
		return err
	}
	if hi := float64(teachers) + thresholdReach*m.Sigma1; m.Confident() && !(m.Threshold >= 0 && m.Threshold <= hi) {
		return &accountant.ParamError{Name: "threshold", Value: m.Threshold, Rule: fmt.Sprintf("must be in [0, K + %d·sigma1] = [0, %v]: below 0 it is the threshold 0, and beyond no query is ever answered (yet each is charged)", thresholdReach, hi)}
	}
	return nil
}

// RDPSlope returns the slope ρ of the data-independent Rényi curve ρ·λ of
// one query that may be answered: 1/σ2² + 1/(2σ1²) (the second term only
// with the threshold step), rounded up. A ledger that charges every
// query this much does not depend on the data.
func (m ConfidentGNMax) RDPSlope() (float64, error) {
	if err := m.Validate(); err != nil {
		return 0, fmt.Errorf("PATE: %w", err)
	}
	r := gnmaxSlope(m.Sigma2)
	if m.Confident() {
		r = r.Add(thresholdSlope(m.Sigma1))
	}
	return r.Hi, nil
}

// RunSlope returns the slope ρ of the data-independent Rényi curve ρ·λ of
// queries threshold steps and labels label steps (for GNMax, which has no
// threshold step, labels steps), rounded up: the curve of a run that asks
// at most queries and labels at most labels of them, whichever they are.
func (m ConfidentGNMax) RunSlope(queries, labels int) (float64, error) {
	if err := m.Validate(); err != nil {
		return 0, fmt.Errorf("PATE: %w", err)
	}
	if queries < 0 || labels < 0 {
		return 0, fmt.Errorf("PATE: %d queries, %d labels: must be >= 0", queries, labels)
	}
	r := gnmaxSlope(m.Sigma2).Mul(outward.Exact(float64(labels)))
	if m.Confident() {
		r = r.Add(thresholdSlope(m.Sigma1).Mul(outward.Exact(float64(queries))))
	}
	return r.Hi, nil
}

// answer says what became of one query of a release: AnswerUnknown (the
// zero value: no release given, charged in expectation), Answered or
// NotAnswered (the threshold step withheld the label).
type answer int8

const (
	// AnswerUnknown: no release is given; the threshold step is charged
	// in expectation over its noise (the PATE paper's Table 2).
	AnswerUnknown answer = iota
	// Answered: the query got a label.
	Answered
	// NotAnswered: the threshold step withheld the label.
	NotAnswered
)

// DefaultOrders returns darrm's default grid of Rényi orders for PATE
// accounting: 1.25, 1.5, 1.75, then 2 to 100 in steps of 0.5, then 40
// orders spaced geometrically from 100 to 1000 (rounded to 0.01).
func DefaultOrders() []float64 {
	o := []float64{1.25, 1.5, 1.75}
	for x := 2.0; x <= 100; x += 0.5 {
		o = append(o, x)
	}
	for j := 1; j <= 40; j++ {
		o = append(o, math.Round(100*math.Pow(10, float64(j)/40)*100)/100)
	}
	return o
}

// Account accumulates the privacy cost of PATE queries at a grid of
// Rényi orders: data-independent (every query charged λ/σ2², plus
// λ/(2σ1²) for the threshold step) and data-dependent (Theorem 6 per
// step, in both directions unless Options say one-sided), the GNMax
// step charged only when it answers, or, when the answers are unknown,
// with the probability that it does. It keeps every query's counts for
// the smooth-sensitivity analysis (LocalSensitivity): memory grows as
// queries × classes.
type Account struct {
	mech       ConfidentGNMax
	directions Directions
	orders     []float64
	gn, th     []*curve
	teachers   int
	classes    int
	abstain    bool   // the relation: teachers may abstain (Options.Abstain)
	mode       answer // AnswerUnknown, or Answered for a realised release
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
}

// Options are the choices of a PATE analysis that are not the
// mechanism's.
type Options struct {
	// Orders is the grid of Rényi orders; nil is DefaultOrders.
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
}

// maxAccountTeachers bounds the teachers of an Account: its tables and
// the smooth sensitivity's walk have K+1 entries (PATE's experiments have
// K = 250; at K = 4e9, summed from four counts of a vote file, they
// exhausted memory).
const maxAccountTeachers = 1 << 20

// NewAccount returns an empty account for mechanism m, K teachers
// (at most maxAccountTeachers) and C classes, analysed as opt says.
func NewAccount(m ConfidentGNMax, teachers, classes int, opt Options) (*Account, error) {
	if err := param.CountIn("teachers", teachers, 1, maxAccountTeachers); err != nil {
		return nil, fmt.Errorf("PATE account: %w", err)
	}
	if err := m.ValidateFor(teachers); err != nil {
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
		orders = DefaultOrders()
	}
	if len(orders) == 0 {
		return nil, fmt.Errorf("PATE account: no orders")
	}
	a := &Account{mech: m, directions: opt.Directions, orders: append([]float64(nil), orders...), teachers: teachers, classes: classes, abstain: opt.Abstain,
		ind: make([]float64, len(orders)), dep: make([]float64, len(orders)), mode: -1}
	for _, o := range orders {
		if err := param.Alpha(o); err != nil {
			return nil, fmt.Errorf("PATE account: %w", err)
		}
		a.gn = append(a.gn, newCurve(gnmaxSlope(m.Sigma2), o))
		if m.Confident() {
			a.th = append(a.th, newCurve(thresholdSlope(m.Sigma1), o))
		}
	}
	if m.Confident() {
		a.thLogQ, a.thP = thresholdTable(m, a.neighbours(), classes, opt.Directions)
	}
	return a, nil
}

// GNMaxDataDependent returns the privacy of one GNMax query (noise of
// deviation sigma, of the given kind) answered at the vote counts counts,
// one per class, summing to the number of teachers: its data-dependent
// (eps, delta)-DP bound (the PATE paper's Theorem 6, in both directions)
// and its data-independent one, each at its best order of
// DefaultOrders under accountant.PaperConversion. It is an Account of that
// one query (NewAccount, Add, Result); use one directly for many
// queries, Confident-GNMax or other orders. The data-dependent bound is a
// function of the votes: publishing it is itself a release (see
// Account.LocalSensitivity).
func GNMaxDataDependent(counts []int, sigma float64, noise Noise, delta float64) (Result, error) {
	// Capped: a sum past maxAccountTeachers is refused as such, and never
	// overflows.
	teachers := castVotes(counts)
	wrap := func(err error) error {
		return fmt.Errorf("GNMax of %d counts (C classes) summing to %d (K teachers): %w", len(counts), teachers, err)
	}
	a, err := NewAccount(ConfidentGNMax{Sigma2: sigma, Noise: noise}, teachers, len(counts), Options{})
	if err != nil {
		return Result{}, wrap(err)
	}
	if err := a.Add(counts, Answered); err != nil {
		return Result{}, wrap(err)
	}
	r, err := a.Result(delta, accountant.PaperConversion)
	if err != nil {
		return Result{}, wrap(err)
	}
	return r, nil
}

// Mechanism returns the mechanism the account is of.
func (a *Account) Mechanism() ConfidentGNMax { return a.mech }

// neighbours returns the relation the account's bounds range over.
func (a *Account) neighbours() neighbours {
	return neighbours{abstain: a.abstain, teachers: a.teachers}
}

// Add charges one query with vote counts (C of them, summing to K, or
// to at most K when teachers may abstain: Options.Abstain) and what
// became of it: AnswerUnknown for every query of an account of
// expected cost, Answered or NotAnswered for every query of a release
// (a plain GNMax release answers every query).
func (a *Account) Add(counts []int, ans answer) error {
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
		return fmt.Errorf("PATE account: counts sum to %d: %s", sum, countsRule(a.neighbours()))
	}
	mode := ans
	if ans == NotAnswered {
		mode = Answered
	}
	if ans < AnswerUnknown || ans > NotAnswered {
		return fmt.Errorf("PATE account: unknown answer %d", ans)
	}
	if a.mode >= 0 && mode != a.mode {
		return fmt.Errorf("PATE account: a query with and one without a known answer: an account is either of a release or of expected cost")
	}
	if ans == NotAnswered && !a.mech.Confident() {
		return fmt.Errorf("PATE account: GNMax without the threshold step answers every query")
	}
	a.mode = mode
	p, logq1 := 1.0, 0.0
	if a.mech.Confident() {
		logq1, p = a.thLogQ[counts[top]], a.thP[counts[top]]
	}
	var logq2 float64
	if a.directions == OneSided {
		logq2 = gnmaxLogQ(counts, top, a.mech.Sigma2, a.mech.Noise)
	} else {
		logq2 = gnmaxNeighbourLogQ(counts, a.mech.Sigma2, a.mech.Noise, a.neighbours())
	}
	if ans == Answered {
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

// flushEvery is how many queries Add holds before it charges them: a
// caller that checks its context between Adds then notices it within one
// flush (1,024 queries at 240 orders: about 10 ms), where charging every
// query at Result took seconds that nothing could interrupt (200,000
// queries: 1-3 s). The totals are the same: each order adds its queries
// in order, in one flush or many.
const flushEvery = 1 << 10

// flush charges the queries added since the last flush at every order:
// the orders are shared among the cores, and each order's total adds its
// queries in order, so the totals do not depend on the number of cores.
func (a *Account) flush() {
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
func (a *Account) charge(i int, gn, th *curve) (ind, dep float64) {
	weight := outward.Exact(1.0)
	if th != nil {
		weight = outward.Exact(a.thP[a.top(i)])
	}
	switch a.answers[i] {
	case Answered:
		weight = outward.Exact(1)
	case NotAnswered:
		weight = outward.Exact(0)
	}
	ind = gn.ind.Hi
	dep = gn.at(a.logq[i][1]).Mul(weight).Hi
	if th != nil {
		ind = outward.AddUp(ind, th.ind.Hi)
		dep = outward.AddUp(dep, th.at(a.logq[i][0]).Hi)
		if a.answers[i] == NotAnswered {
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

// OrderEps is an (ε, δ) bound at the Rényi order that minimises it.
type OrderEps struct {
	Eps   float64
	Order float64
	RDP   float64 // the Rényi DP at Order
}

// Result is the privacy of the queries of an Account.
type Result struct {
	// Directions says which divergences Dependent bounds: only
	// BothDirections is a differential-privacy guarantee.
	Directions Directions
	Queries    int
	Teachers   int
	Classes    int
	// Answered counts the answered queries of a release; -1 when the
	// answers are unknown.
	Answered int
	// ExpectedAnswered is Σ Pr[answer] over the queries (the queries
	// when there is no threshold step).
	ExpectedAnswered float64
	// Independent is the data-independent bound: every query charged
	// λ/σ2² (and λ/(2σ1²)), or, for a release, the unanswered ones only
	// the threshold step.
	Independent OrderEps
	// Dependent is the data-dependent bound, in the directions Directions
	// says, which is a function of the votes: releasing it is itself a
	// release (see Account.LocalSensitivity).
	Dependent                    OrderEps
	Orders                       []float64
	RDPIndependent, RDPDependent []float64
}

// Result converts the totals to (ε, δ) under conversion c, each at its
// best order of the grid.
func (a *Account) Result(delta float64, c accountant.Conversion) (Result, error) {
	if err := accountant.CheckConversion(delta, c); err != nil {
		return Result{}, fmt.Errorf("PATE account: %w", err)
	}
	a.flush()
	r := Result{Directions: a.directions, Queries: len(a.answers), Teachers: a.teachers, Classes: a.classes, Answered: -1,
		ExpectedAnswered: a.expected, Orders: append([]float64(nil), a.orders...),
		RDPIndependent: append([]float64(nil), a.ind...), RDPDependent: append([]float64(nil), a.dep...)}
	if a.mode == Answered {
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

func bestOrder(orders, rdp []float64, delta float64, c accountant.Conversion) (OrderEps, error) {
	best := OrderEps{Eps: math.Inf(1)}
	for j, o := range orders {
		e, err := accountant.ConvertRDP(rdp[j], o, delta, c)
		if err != nil {
			return best, fmt.Errorf("PATE account: %w", err)
		}
		if e < best.Eps {
			best = OrderEps{Eps: e, Order: o, RDP: rdp[j]}
		}
	}
	return best, nil
}

// RDPDependent returns the data-dependent total at one order (which need
// not be on the grid), as Add charged it.
func (a *Account) RDPDependent(order float64) (float64, error) {
	if err := param.Alpha(order); err != nil {
		return 0, fmt.Errorf("PATE account: %w", err)
	}
	var gn, th *curve
	gn = newCurve(gnmaxSlope(a.mech.Sigma2), order)
	if a.mech.Confident() {
		th = newCurve(thresholdSlope(a.mech.Sigma1), order)
	}
	var total float64
	for i := range a.answers {
		_, dep := a.charge(i, gn, th)
		total = outward.AddUp(total, dep)
	}
	return total, nil
}

// top returns query i's largest count.
func (a *Account) top(i int) int {
	return int(slices.Max(a.counts[i*a.classes : (i+1)*a.classes]))
}

func (a *Account) query(i int) []int {
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
