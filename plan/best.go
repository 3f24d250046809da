package plan

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/integrate/quad"

	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/provenance"
)

// Comparison is every mechanism that fits the proxy votes, each planned
// for the same budget, queries and target (one run or a new ledger) and
// scored on the votes, and the best of them.
type Comparison struct {
	// Plans are the mechanisms compared, in the order Compare lists them,
	// each with its expected utility on the proxy votes (Plan.Utility), or
	// why it has none (NoFit: a budget that fits not even the least
	// generous value of its parameter, a parameter error on
	// budget-eps, or a least precision no threshold reaches).
	Plans []Equal
	// Best is the index in Plans of the plan with the most expected
	// correct labels among those whose expected precision (correct of
	// answered) reaches Request.MinPrecision, -1 when none does.
	Best int
	// Left are the mechanisms of the votes' classes left out, each with
	// why.
	Left []string
}

// Compare plans every mechanism that fits the proxy votes base.Proxy
// (needed) for base.Queries queries of base.Budget in base.For's target,
// scores each on the votes, and names the one with the most expected
// correct labels: GNMax, Confident-GNMax (onProxy) and LNMax on class
// counts, and, for two classes of K odd teachers who all vote,
// darrm-one-vote (its gamma from src, pure per query).
// Every plan has the same total budget and target, so their utilities
// compare at equal totals. base.MinPrecision sets
// Confident-GNMax's threshold, and a mechanism whose expected precision
// falls short of it is not the best.
//
// base gives K, the classes, the budget, its slack, the target, the
// filter and the certificate's options; its Mechanism is GNMax on class
// counts whose Delta is the per-query δ of the GNMax family (> 0) and
// whose Noise is their noise; the mechanisms and their settings are
// Compare's. Each label is
// scored as its noise would be were it continuous (GNMax's Gaussian, as
// GNMax scores it; LNMax's Laplace, pArgmaxLaplace), darrm-one-vote's
// exactly from its gamma.
func Compare(ctx context.Context, base Request, src optimal.Source) (Comparison, error) {
	if err := base.validate(); err != nil {
		return Comparison{}, err
	}
	if base.Proxy == nil {
		return Comparison{}, errors.New("plan: Compare's base.Proxy is not set: a comparison scores the plans on proxy votes")
	}
	base = base.withMemo()
	queries, proxy := base.Queries, *base.Proxy
	if err := proxy.check(base.K, base.Classes); err != nil {
		return Comparison{}, err
	}
	family, ok := base.Mechanism.(ensemble.GNMax)
	if !ok || family.Delta == 0 {
		return Comparison{}, errors.New("plan: Compare's base.Mechanism is GNMax on class counts with the family's per-query delta")
	}
	// Each planned mechanism on the counts, its noise at the family's and
	// its scale the plan's to choose: a GNMax's Sigma2 says that it labels
	// counts.
	many := func(m ensemble.Mechanism) Request {
		r := base
		r.Mechanism = m
		return r
	}
	gnmax := ensemble.GNMax{Target: ensemble.Target{Delta: family.Delta}, Sigma2: 1, Noise: family.Noise}
	confident := confidentOf(family)
	c := Comparison{Best: -1}
	type planner struct {
		name provenance.MechanismName
		plan func() (Plan, error)
	}
	ps := []planner{
		{gnmax.Name(), func() (Plan, error) { return gnmaxOnProxy(ctx, many(gnmax), queries, proxy) }},
		{confident.Name(), func() (Plan, error) { return confidentGNMax(ctx, many(confident), queries, proxy) }},
		{ensemble.LNMax{}.Name(), func() (Plan, error) { return scoreLNMax(ctx, many(ensemble.LNMax{}), queries, proxy) }},
	}
	if why := oneVoteFits(proxy); why != "" {
		if proxy.Classes == 2 {
			c.Left = append(c.Left, fmt.Sprintf("%s: %s", ensemble.OneVoteDaRRM{}.Name(), why))
		}
	} else {
		ps = append(ps, planner{ensemble.OneVoteDaRRM{}.Name(), func() (Plan, error) {
			r := base
			r.Mechanism, r.Classes = ensemble.OneVoteDaRRM{Eps: 1, Gamma: src}, 2
			return scoreOneVote(ctx, r, queries, proxy)
		}})
	}
	for _, p := range ps {
		pl, err := p.plan()
		s := Equal{Mechanism: p.name}
		var pe *param.Error
		switch {
		case errors.As(err, &pe) && pe.Name == "budget-eps", errors.As(err, new(*precisionError)):
			s.NoFit = err
		case err != nil:
			return Comparison{}, fmt.Errorf("%s for %d queries of %v: %w", p.name, queries, base.Budget.Guarantee, err)
		default:
			s.Plan = pl
			u := pl.Utility
			if u.Correct >= base.MinPrecision*u.Answered && (c.Best < 0 || u.Correct > c.Plans[c.Best].Plan.Utility.Correct) {
				c.Best = len(c.Plans)
			}
		}
		c.Plans = append(c.Plans, s)
	}
	return c, nil
}

// oneVoteFits says why darrm-one-vote does not fit the proxy votes, ""
// when it does: two classes of K odd teachers who all vote (it releases
// the majority of 0/1 votes).
func oneVoteFits(proxy Proxy) string {
	if proxy.Classes != 2 {
		return "it labels two classes"
	}
	if proxy.K%2 == 0 {
		return fmt.Sprintf("it needs an odd number of teachers, not K = %d", proxy.K)
	}
	if n, same := commonSum(proxy.Counts); !same || n != proxy.K {
		return "it needs every teacher's vote on every query, and some abstain here"
	}
	return ""
}

// scoreLNMax returns the plan of LNMax's scale for queries queries
// (parameters) with its expected correct labels on the proxy votes, the
// discrete Laplace noise scored as continuous noise of the same scale
// (pArgmaxLaplace).
func scoreLNMax(ctx context.Context, r Request, queries int, proxy Proxy) (Plan, error) {
	pl, err := parameters(ctx, r, queries)
	if err != nil {
		return Plan{}, err
	}
	var c float64
	for i, counts := range proxy.Counts {
		if i%256 == 0 && ctx.Err() != nil {
			return Plan{}, ctx.Err()
		}
		c += pArgmaxLaplace(counts, proxy.truth(i), pl.Request.Mechanism.(ensemble.LNMax).Scale)
	}
	pl.Utility = answeredAll(c, queries, proxy)
	return pl, nil
}

// scoreOneVote returns the plan of darrm-one-vote's per-query ε for
// queries queries (parameters) with its expected correct labels on the
// two-class proxy votes, exactly: with l votes for class 1, the label is
// the majority with probability (1 + γ(l))/2.
func scoreOneVote(ctx context.Context, r Request, queries int, proxy Proxy) (Plan, error) {
	pl, err := parameters(ctx, r, queries)
	if err != nil {
		return Plan{}, err
	}
	g, err := released(ctx, pl.Request)
	if err != nil {
		return Plan{}, err
	}
	var c float64
	for i, counts := range proxy.Counts {
		l := counts[1]
		one := (1 - g[l]) / 2 // Pr[label = 1]
		if 2*l > proxy.K {
			one = (1 + g[l]) / 2
		}
		if proxy.truth(i) == 1 {
			c += one
		} else {
			c += 1 - one
		}
	}
	pl.Utility = answeredAll(c, queries, proxy)
	return pl, nil
}

// answeredAll returns the utility of a mechanism that answers every
// query and expects correct correct labels over the proxy votes.
func answeredAll(correct float64, queries int, proxy Proxy) *Utility {
	q := float64(queries)
	return &Utility{Correct: correct / float64(len(proxy.Counts)) * q, Answered: q, On: proxy.describe(queries)}
}

// legendre16 are the nodes and weights of 16-point Gauss-Legendre
// quadrature on [-1, 1].
var legendre16 = func() (g struct{ nodes, weights [16]float64 }) {
	quad.Legendre{}.FixedLocations(g.nodes[:], g.weights[:], -1, 1)
	return g
}()

// pArgmaxLaplace returns the probability that class j has the largest of
// the counts c plus independent Laplace noise of scale b (continuous, so
// that ties have probability 0): ∫ f(z) Π_{i≠j} F(c_j - c_i + z) dz, f
// and F the Laplace density and distribution function, over [-36b, 36b]
// (beyond, below e^-36/2). The integrand has kinks at z = 0 and
// z = c_i - c_j, and between them it is a sum of exponentials of rates up
// to (m + 1)/b, m the factors: 16-point Gauss-Legendre on pieces between
// kinks at most 10b/(m + 1) wide keeps the rule's error near
// 5.4^32/32! < 1e-12 of the piece's mass. TestPArgmaxLaplace checks it
// against the closed form for two classes and a fine rule for more.
func pArgmaxLaplace(c []int, j int, b float64) float64 {
	const lim = 36.0 // in units of b
	cuts := []float64{-lim, 0, lim}
	var ds []float64 // (c_j - c_i)/b
	for i, n := range c {
		d := float64(c[j]-n) / b
		if i == j || d > 2*lim { // F(d + z) is 1 to double precision
			continue
		}
		ds = append(ds, d)
		if -d > -lim && -d < lim {
			cuts = append(cuts, -d)
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	width := math.Min(1, 10/float64(len(ds)+1))
	g := legendre16
	var sum float64
	for k := 0; k+1 < len(cuts); k++ {
		lo, hi := cuts[k], cuts[k+1]
		n := math.Ceil((hi - lo) / width)
		w := (hi - lo) / n
		for p := 0.0; p < n; p++ {
			a := lo + p*w
			for q, x := range g.nodes {
				z := a + w*(x+1)/2
				v := math.Exp(-math.Abs(z)) / 2
				for _, d := range ds {
					if t := d + z; t < 0 {
						v *= math.Exp(t) / 2
					} else {
						v *= 1 - math.Exp(-t)/2
					}
				}
				sum += v * g.weights[q] * w / 2
			}
		}
	}
	return sum
}
