package accountant

import (
	"fmt"
	"math"
	"sync"

	"github.com/darrm/darrm/internal/outward"
	"github.com/darrm/darrm/internal/param"
)

// SGMRDP returns the Rényi DP at integer order α >= 2 of one step of the
// sampled Gaussian mechanism: each record is included independently with
// probability q (Poisson sampling), the sum of the included records'
// contributions, of L2 norm at most 1, gets N(0, σ²) noise (Mironov,
// Talwar and Zhang 2019, Theorem 5 and Section 3.3):
//
//	ε(α) = log(A_α)/(α-1),  A_α = Σ_{k=0}^{α} C(α,k)·(1-q)^{α-k}·q^k·e^{(k²-k)/(2σ²)}.
//
// The sum is taken in log space term by term (every term is positive), and
// the result is raised by a bound on its rounding error. q = 1 gives the
// Gaussian mechanism's α/(2σ²); q = 0 gives 0.
func SGMRDP(q, sigma float64, alpha int) (float64, error) {
	if !(q >= 0 && q <= 1) {
		return 0, fmt.Errorf("sampled Gaussian RDP: %w", &ParamError{Name: "q", Value: q, Rule: "must be a sampling rate in [0, 1]"})
	}
	if err := param.Positive("sigma", sigma); err != nil {
		return 0, fmt.Errorf("sampled Gaussian RDP: %w", err)
	}
	if alpha < 2 {
		return 0, fmt.Errorf("sampled Gaussian RDP: %w", &ParamError{Name: "alpha", Value: float64(alpha), Rule: "must be an integer >= 2"})
	}
	if q == 0 {
		return 0, nil
	}
	a := float64(alpha)
	logQ, log1mQ := math.Log(q), math.Log1p(-q)
	lgA, _ := math.Lgamma(a + 1)
	terms := make([]float64, 0, alpha+1)
	maxT := math.Inf(-1)
	for k := 0; k <= alpha; k++ {
		kf := float64(k)
		if q == 1 && k < alpha {
			continue // (1-q)^{α-k} = 0
		}
		lk, _ := math.Lgamma(kf + 1)
		lak, _ := math.Lgamma(a - kf + 1)
		t := lgA - lk - lak + kf*logQ + (kf*kf-kf)/(2*sigma*sigma)
		if k < alpha {
			t += (a - kf) * log1mQ
		}
		terms = append(terms, t)
		maxT = math.Max(maxT, t)
	}
	var sum float64
	for _, t := range terms {
		sum += math.Exp(t - maxT)
	}
	logA := maxT + math.Log(sum)
	// Each term's exponent is within a few ulps of its largest part
	// (lgamma and the products); the sum of exponentials adds relative
	// error (α+1)·2^-53. Raise by both.
	absErr := 8*outward.ULP*(math.Abs(lgA)+math.Abs(maxT)+a*math.Abs(logQ)+a*a/(sigma*sigma)) + float64(alpha+2)*outward.ULP
	return math.Max(0, outward.Up((logA+absErr)/(a-1), 4)), nil
}

// SGM is a run of DP-SGD as the accountant sees it: Steps steps of the
// sampled Gaussian mechanism with sampling rate Q and noise multiplier
// Sigma (Abadi et al. 2016), composed in RDP.
type SGM struct {
	Q     float64
	Sigma float64
	Steps int
}

// SamplingRate returns the Poisson sampling rate batch/n of DP-SGD with
// expected batch size batch on n records, 1 <= batch <= n.
func SamplingRate(batch, n int) (float64, error) {
	if err := param.Count("n", n, 1); err != nil {
		return 0, fmt.Errorf("DP-SGD: %w", err)
	}
	if batch < 1 || batch > n {
		return 0, fmt.Errorf("DP-SGD: %w", &ParamError{Name: "batch", Value: float64(batch), Rule: fmt.Sprintf("must be an integer in [1, n] = [1, %d]", n)})
	}
	return float64(batch) / float64(n), nil
}

// EpochSteps returns the steps of DP-SGD in epochs expected passes over n
// records in expected batches of batch: ceil(epochs·n/batch), in integers.
func EpochSteps(epochs, batch, n int) (int, error) {
	if _, err := SamplingRate(batch, n); err != nil {
		return 0, err
	}
	if err := param.Count("epochs", epochs, 1); err != nil {
		return 0, fmt.Errorf("DP-SGD: %w", err)
	}
	return (epochs*n + batch - 1) / batch, nil
}

// maxSGMOrder bounds the integer orders Eps searches.
const maxSGMOrder = 4096

// sgmCurve is the RDP curve of one step of a sampled Gaussian mechanism
// at the integer orders 2..maxSGMOrder (rdp[α-2]).
type sgmCurve struct {
	q, sigma float64
	rdp      []float64
}

// maxSGMCurves bounds the curves the process keeps.
const maxSGMCurves = 8

// sgmCurves keeps the curves last used, most recent first: a search over
// step counts (MaxRunSteps) converts the same curve at every count, and
// computing it costs O(maxSGMOrder²) terms, a good part of a second.
var sgmCurves struct {
	sync.Mutex
	recent []*sgmCurve
}

// sgmRDPCurve returns the RDP curve of the sampled Gaussian mechanism
// with rate q and noise sigma (SGMRDP at every order), computed once.
func sgmRDPCurve(q, sigma float64) ([]float64, error) {
	sgmCurves.Lock()
	defer sgmCurves.Unlock()
	recent := sgmCurves.recent
	for i, c := range recent {
		if c.q == q && c.sigma == sigma {
			copy(recent[1:i+1], recent[:i])
			recent[0] = c
			return c.rdp, nil
		}
	}
	c := &sgmCurve{q: q, sigma: sigma, rdp: make([]float64, maxSGMOrder-1)}
	for a := 2; a <= maxSGMOrder; a++ {
		r, err := SGMRDP(q, sigma, a)
		if err != nil {
			return nil, err
		}
		c.rdp[a-2] = r
	}
	sgmCurves.recent = append([]*sgmCurve{c}, recent[:min(len(recent), maxSGMCurves-1)]...)
	return c.rdp, nil
}

// Eps returns the smallest ε over integer orders α in [2, 4096] such that
// the run is (ε, δ)-DP under conversion c, and that α: Steps·SGMRDP(α)
// converted at α.
func (s SGM) Eps(delta float64, c Conversion) (eps float64, alpha int, err error) {
	if err := param.Count("steps", s.Steps, 1); err != nil {
		return 0, 0, fmt.Errorf("DP-SGD: %w", err)
	}
	if err := CheckConversion(delta, c); err != nil {
		return 0, 0, fmt.Errorf("DP-SGD: %w", err)
	}
	curve, err := sgmRDPCurve(s.Q, s.Sigma)
	if err != nil {
		return 0, 0, fmt.Errorf("DP-SGD: %w", err)
	}
	best, bestAlpha := math.Inf(1), 0
	for a := 2; a <= maxSGMOrder; a++ {
		r := curve[a-2]
		e, err := ConvertRDP(outward.MulUp(float64(s.Steps), r), float64(a), delta, c)
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
	return best, bestAlpha, nil
}
