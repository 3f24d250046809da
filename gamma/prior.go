package gamma

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/darrm/darrm/internal/poissonbinom"
)

// Prior is the belief about the teachers' probabilities p_i of voting for
// the majority that the optimal gamma maximises expected utility under
// (objective (3.2)). Only the means of the p_i matter: for independent p_i,
// E[PoissonBinomial(p)] = PoissonBinomial(E[p_1], ..., E[p_K]), so the
// expected objective of App. B.3.1 has a closed form and needs no sampling
// (the thesis approximates it by Monte Carlo, Algorithms 9-10).
type Prior struct {
	name  string
	means []float64 // one per teacher, or a single common mean
}

// UniformPrior is the thesis' default T_U: p_i uniform on [0.5, 1] (the
// half where 1 is the majority), mean 0.75.
func UniformPrior() Prior { return Prior{name: "uniform", means: []float64{0.75}} }

// tpPrior is the thesis' T_P of App. B.4, Uniform([0, 0.3] ∪ [0.7, 1])
// restricted to the majority half [0.7, 1]: mean 0.85.
func tpPrior() Prior { return Prior{name: "tp", means: []float64{0.85}} }

// meanPrior is a prior under which every teacher votes for the majority
// with mean probability mu, 0.5 < mu <= 1.
func meanPrior(mu float64) (Prior, error) {
	if !(mu > 0.5 && mu <= 1) {
		return Prior{}, fmt.Errorf("prior mean %v: must be in (0.5, 1] (the objective takes 1 as the majority, App. B.3.2)", mu)
	}
	return Prior{name: strconv.FormatFloat(mu, 'g', -1, 64), means: []float64{mu}}, nil
}

// teacherPrior is a prior with one mean per teacher, each in [0.5, 1] and
// at least one above 0.5.
func teacherPrior(mus []float64) (Prior, error) {
	if len(mus) < 1 {
		return Prior{}, fmt.Errorf("per-teacher prior: no means given")
	}
	above := false
	parts := make([]string, len(mus))
	for i, mu := range mus {
		if !(mu >= 0.5 && mu <= 1) {
			return Prior{}, fmt.Errorf("prior mean of teacher %d = %v: must be in [0.5, 1] (the objective takes 1 as the majority)", i+1, mu)
		}
		above = above || mu > 0.5
		parts[i] = strconv.FormatFloat(mu, 'g', -1, 64)
	}
	if !above {
		return Prior{}, fmt.Errorf("per-teacher prior: all means are 0.5, which makes every gamma equally good")
	}
	return Prior{name: strings.Join(parts, ","), means: append([]float64(nil), mus...)}, nil
}

// parsePrior reads a prior as UnmarshalText does.
func parsePrior(s string) (Prior, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "uniform", "tu", "t_u":
		return UniformPrior(), nil
	case "tp", "t_p":
		return tpPrior(), nil
	}
	fields := strings.Split(s, ",")
	mus := make([]float64, len(fields))
	for i, f := range fields {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return Prior{}, fmt.Errorf("prior %q: want uniform, tp, a mean in (0.5, 1] or one mean per teacher", s)
		}
		mus[i] = v
	}
	if len(mus) == 1 {
		return meanPrior(mus[0])
	}
	return teacherPrior(mus)
}

// String returns the prior in the form UnmarshalText reads.
func (p Prior) String() string { return p.name }

// Coefficients returns the objective's coefficients on gamma(H..K):
// c[i] = b_l - b_{K-l}, l = H+i, where b is the pmf of the vote count when
// teacher i votes 1 with its prior mean (App. B.3.1, Eq. B.60).
func (p Prior) Coefficients(k int) ([]float64, error) {
	if len(p.means) == 0 {
		return nil, fmt.Errorf("prior is not set")
	}
	if err := checkK(k); err != nil {
		return nil, fmt.Errorf("prior coefficients: %w", err)
	}
	var b []float64
	var err error
	if len(p.means) == 1 {
		b, err = poissonbinom.Binomial(k, p.means[0])
	} else {
		if len(p.means) != k {
			return nil, fmt.Errorf("prior has %d per-teacher means, want K = %d", len(p.means), k)
		}
		b, err = poissonbinom.PMF(p.means)
	}
	if err != nil {
		return nil, err
	}
	h := (k + 1) / 2
	c := make([]float64, k-h+1)
	for i := range c {
		c[i] = b[h+i] - b[k-h-i]
	}
	return c, nil
}

// MarshalText returns the name of p, so that a Prior reads and prints as
// text (a flag, a JSON or config value).
func (p Prior) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText sets p from its name, as written on darrm's command line:
// "uniform", "tp", a mean such as "0.8", or K comma-separated per-teacher
// means.
func (p *Prior) UnmarshalText(b []byte) error {
	x, err := parsePrior(string(b))
	if err == nil {
		*p = x
	}
	return err
}

// utility returns the LP objective U(gamma) = sum_{l>=H} (b_l - b_{K-l})·gamma(l),
// which equals 2·Pr[DaRRM releases 1] - 1 when every teacher votes 1 with
// its prior mean: Measurement.Utility.
func utility(g Gamma, coeffs []float64) float64 {
	var u float64
	for i, v := range g.upper() {
		u += coeffs[i] * v
	}
	return u
}

// surrogateError returns (1/2)·sum_{l>=H} (b_l - b_{K-l})·(1 - gamma(l)), the
// error E(DaRRM_gamma) of Definition 3.3.4 when every teacher votes 1 with
// its prior mean (App. B.3.1, Eq. B.56): Measurement.SurrogateError.
func surrogateError(g Gamma, coeffs []float64) float64 {
	var e float64
	for i, v := range g.upper() {
		e += coeffs[i] * (1 - v)
	}
	return math.Abs(e) / 2
}
