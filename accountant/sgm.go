package accountant

import (
	"fmt"
	"math"
	"sync"

	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
)

// sgmRDP returns the Rényi DP at integer order α >= 2 of one step of the
// sampled Gaussian mechanism: each record is included independently with
// probability q (Poisson sampling), the sum of the included records'
// contributions, of L2 norm at most 1, gets N(0, σ²) noise (Mironov,
// Talwar and Zhang 2019, Theorem 5 and Section 3.3):
//
//	ε(α) = log(A_α)/(α-1),  A_α = Σ_{k=0}^{α} C(α,k)·(1-q)^{α-k}·q^k·e^{(k²-k)/(2σ²)}.
//
// The sum is taken in log space term by term (every term is positive), and
// the result is raised by a bound on its rounding error. q = 1 gives the
// Gaussian mechanism's α/(2σ²); q = 0 gives 0; a σ so small that a term
// overflows gives +Inf, no bound at that order.
func sgmRDP(q, sigma float64, alpha int) (float64, error) {
	if !(q >= 0 && q <= 1) {
		return 0, fmt.Errorf("sampled Gaussian RDP: %w", &param.Error{Name: "q", Value: q, Rule: "must be a sampling rate in [0, 1]"})
	}
	if err := param.Positive("sigma", sigma); err != nil {
		return 0, fmt.Errorf("sampled Gaussian RDP: %w", err)
	}
	if alpha < 2 {
		return 0, fmt.Errorf("sampled Gaussian RDP: %w", &param.Error{Name: "alpha", Value: alpha, Rule: "must be an integer >= 2"})
	}
	if q == 0 {
		return 0, nil
	}
	a := float64(alpha)
	logQ, log1mQ := outward.Ln(q), math.Log1p(-q)
	// logFactorial of 0..α, read from its table without a call per term
	// (a curve's table of orders takes O(maxSGMOrder²) terms).
	lf := logFactorials()
	if alpha > maxSGMOrder {
		lf = make([]float64, alpha+1)
		for n := range lf {
			lf[n] = logFactorial(n)
		}
	}
	lgA := lf[alpha]
	terms := make([]float64, 0, alpha+1)
	maxT := math.Inf(-1)
	for k := 0; k <= alpha; k++ {
		kf := float64(k)
		if q == 1 && k < alpha {
			continue // (1-q)^{α-k} = 0
		}
		t := lgA - lf[k] - lf[alpha-k] + kf*logQ + (kf*kf-kf)/(2*sigma*sigma)
		if k < alpha {
			t += (a - kf) * log1mQ
		}
		terms = append(terms, t)
		// math.Max(maxT, t), whose call is most of a term's cost where
		// they are ordered.
		switch {
		case t > maxT:
			maxT = t
		case !(t < maxT):
			maxT = math.Max(maxT, t) // equal (±0), or NaN
		}
	}
	if math.IsInf(maxT, 1) {
		return maxT, nil // e^{(k²-k)/(2σ²)} overflows: no bound at this order
	}
	var sum float64
	for _, t := range terms {
		// Below -745.2 math.Exp is 0 (on every architecture): such a term
		// adds nothing, and at a small q nearly all of a high order's are
		// (q = 10^-9: all but some 40 of 4,097 at order 4,096).
		if t-maxT < -750 {
			continue
		}
		sum += math.Exp(t - maxT)
	}
	logA := maxT + outward.Ln(sum)
	// Each term's exponent is within a few ulps of its largest part
	// (lgamma and the products); the sum of exponentials adds relative
	// error (α+1)·2^-53. Raise by both.
	absErr := 8*outward.ULP*(math.Abs(lgA)+math.Abs(maxT)+a*math.Abs(logQ)+a*a/(sigma*sigma)) + float64(alpha+2)*outward.ULP
	return math.Max(0, outward.Up((logA+absErr)/(a-1), 4)), nil
}

// logFactorial returns math.Lgamma(n + 1), n >= 0, from a table made once
// up to maxSGMOrder: sgmRDP takes two for each of its α + 1 terms (from
// the table itself up to that order), and a curve's O(maxSGMOrder²)
// terms spent most of their time in Lgamma.
func logFactorial(n int) float64 {
	if n <= maxSGMOrder {
		return logFactorials()[n]
	}
	l, _ := math.Lgamma(float64(n) + 1)
	return l
}

// logFactorials is the table of logFactorial.
var logFactorials = sync.OnceValue(func() []float64 {
	t := make([]float64, maxSGMOrder+1)
	for n := range t {
		t[n], _ = math.Lgamma(float64(n) + 1)
	}
	return t
})

// SGM is a run of DP-SGD as the accountant sees it: Steps steps of the
// sampled Gaussian mechanism with sampling rate Q and noise multiplier
// Sigma (Abadi et al. 2016), composed in RDP.
type SGM struct {
	Q     float64
	Sigma float64
	Steps int
}

// maxSGMOrder bounds the integer orders Eps searches.
const maxSGMOrder = 4096

// sgmCurve is the RDP curve of one step of a sampled Gaussian mechanism
// at the integer orders 2..maxSGMOrder, computed as far as asked
// (rdp[α-2]): Eps stops past its minimum, a run's RDP total reads every
// order.
type sgmCurve struct {
	q, sigma float64
	rdp      []float64
}

// maxSGMCurves bounds the curves a Memo keeps.
const maxSGMCurves = 8

// recentSGMCurves is the curves a Memo keeps, the last used, most
// recent first: a search over step counts converts the same curve at
// every count, and computing it costs O(maxSGMOrder²) terms, a good part
// of a second.
type recentSGMCurves struct {
	sync.Mutex
	recent []*sgmCurve
}

// sgmRDPAt returns sgmRDP(q, sigma, alpha), alpha in [2, maxSGMOrder],
// from the curve of (q, sigma) m keeps, computing the orders up to alpha
// not yet known (every order up to alpha when m is nil).
func (m *Memo) sgmRDPAt(q, sigma float64, alpha int) (float64, error) {
	if m == nil {
		m = new(Memo)
	}
	s := &m.sgm
	s.Lock()
	defer s.Unlock()
	recent := s.recent
	var c *sgmCurve
	for i, r := range recent {
		if r.q == q && r.sigma == sigma {
			copy(recent[1:i+1], recent[:i])
			recent[0], c = r, r
			break
		}
	}
	if c == nil {
		c = &sgmCurve{q: q, sigma: sigma}
		s.recent = append([]*sgmCurve{c}, recent[:min(len(recent), maxSGMCurves-1)]...)
	}
	for a := len(c.rdp) + 2; a <= alpha; a++ {
		r, err := sgmRDP(q, sigma, a)
		if err != nil {
			return 0, err
		}
		c.rdp = append(c.rdp, r)
	}
	return c.rdp[alpha-2], nil
}

// Eps returns the smallest ε over integer orders α in [2, 4096] such that
// the run is (ε, δ)-DP under conversion c, and that α: Steps·sgmRDP(α)
// converted at α.
func (s SGM) Eps(delta float64, c Conversion) (eps float64, alpha int, err error) {
	if err := param.Count("steps", s.Steps, 1); err != nil {
		return 0, 0, fmt.Errorf("DP-SGD: %w", err)
	}
	if err := c.Check(delta); err != nil {
		return 0, 0, fmt.Errorf("DP-SGD: %w", err)
	}
	// The curve is made as far as the search asks, each order once.
	curve := new(Memo)
	best, bestAlpha := math.Inf(1), 0
	for a := 2; a <= maxSGMOrder; a++ {
		r, err := curve.sgmRDPAt(s.Q, s.Sigma, a)
		if err != nil {
			return 0, 0, fmt.Errorf("DP-SGD: %w", err)
		}
		total := outward.MulUp(float64(s.Steps), r)
		if math.IsInf(total, 1) {
			break // no bound at this order, nor at the larger ones: RDP grows with the order
		}
		e, err := c.ConvertRDP(total, float64(a), delta)
		if err != nil {
			return 0, 0, fmt.Errorf("DP-SGD: %w", err)
		}
		if e < best {
			best, bestAlpha = e, a
		}
		// ε(α) is the sum of an increasing and a decreasing term; past the
		// minimum by a margin the search can stop.
		if a > 2*bestAlpha+16 {
			break
		}
	}
	if bestAlpha == 0 {
		return 0, 0, fmt.Errorf("DP-SGD: %w", &param.Error{Name: "sigma", Value: s.Sigma, Rule: fmt.Sprintf("too small for %d steps at sampling rate %v: their RDP is infinite in floating point at every order", s.Steps, s.Q)})
	}
	return best, bestAlpha, nil
}
