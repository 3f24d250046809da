package constraints

import (
	"fmt"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/poissonbinom"
)

// Config is a multiset of K corners: Config[j] teachers sit at corner j of
// Problem.Corners.
type Config []int

// check reports whether c is a multiset of K corners of p.
func (p Problem) check(c Config) error {
	if len(c) != len(p.Corners()) {
		return fmt.Errorf("configuration has %d corner counts, want %d", len(c), len(p.Corners()))
	}
	n := 0
	for j, v := range c {
		if v < 0 {
			return fmt.Errorf("configuration count[%d] = %d: must be >= 0", j, v)
		}
		n += v
	}
	if n != p.K {
		return fmt.Errorf("configuration counts sum to %d, want K = %d", n, p.K)
	}
	if p.Relation == accountant.OneVote && c[2]+c[3] != 1 {
		return fmt.Errorf("configuration has %d teachers whose vote changes: the one-vote relation has exactly one", c[2]+c[3])
	}
	return nil
}

// PMFs returns the vote-count pmfs alpha (on D) and alpha' (on D') of the
// teachers placed at the corners of c.
func (p Problem) PMFs(c Config) (alpha, alphaPrime []float64, err error) {
	if err := p.check(c); err != nil {
		return nil, nil, err
	}
	corners := p.Corners()
	side := func(prob func(Corner) float64) ([]float64, error) {
		// A teacher that votes 0 or 1 surely only pads or shifts the
		// pmf: convolve the others, whose number is small for the rows
		// that bind, and shift by the sure votes.
		d := poissonbinom.New(p.K)
		ones := 0
		for j, corner := range corners {
			switch q := prob(corner); q {
			case 0:
			case 1:
				ones += c[j]
			default:
				for range c[j] {
					if err := d.Add(q); err != nil {
						return nil, err
					}
				}
			}
		}
		pmf := make([]float64, p.K+1)
		copy(pmf[ones:], d.PMF())
		return pmf, nil
	}
	if alpha, err = side(func(c Corner) float64 { return c.P }); err != nil {
		return nil, nil, err
	}
	if alphaPrime, err = side(func(c Corner) float64 { return c.Q }); err != nil {
		return nil, nil, err
	}
	return alpha, alphaPrime, nil
}

// Row returns the coefficients of the privacy constraint of configuration c
// on the free values gamma(H), ..., gamma(K): row[i] = d_l - d_{K-l} with
// l = H+i and d = alpha - e^{m·eps}·alpha'. The constraint is
// sum_i row[i]·gamma(H+i) <= Budget().
func (p Problem) Row(c Config) ([]float64, error) {
	if p.Relation == accountant.OneVote {
		return p.oneVoteRow(c)
	}
	alpha, alphaPrime, err := p.PMFs(c)
	if err != nil {
		return nil, err
	}
	e := p.E()
	h := p.H()
	row := make([]float64, p.K-h+1)
	for i := range row {
		l := h + i
		row[i] = (alpha[l] - e*alphaPrime[l]) - (alpha[p.K-l] - e*alphaPrime[p.K-l])
	}
	return row, nil
}

// Cost returns the privacy cost f(c; gamma) of Lemma 3.4.4 for the full
// noise function gamma(0..K), computed directly from the pmfs. Separate
// computes the same quantity for all configurations at once; Cost is the
// independent reference.
func (p Problem) Cost(c Config, gamma []float64) (float64, error) {
	if len(gamma) != p.K+1 {
		return 0, fmt.Errorf("gamma has %d values, want K+1 = %d", len(gamma), p.K+1)
	}
	alpha, alphaPrime, err := p.PMFs(c)
	if err != nil {
		return 0, err
	}
	e := p.E()
	h := p.H()
	var f float64
	for l := 0; l <= p.K; l++ {
		d := (alpha[l] - e*alphaPrime[l]) * gamma[l]
		if l < h {
			f -= d
		} else {
			f += d
		}
	}
	return f, nil
}

// AllConfigs calls fn for every corner multiset of size K, in lexicographic
// order of the counts, until fn returns false. There are NumConfigs() of
// them: use it only for small K (tests, the full LP). In the one-vote
// relation they are the 2K pairs of vote vectors, by the count of
// unchanged votes for 1.
func (p Problem) AllConfigs(fn func(Config) bool) {
	if p.Relation == accountant.OneVote {
		for n11 := 0; n11 < p.K; n11++ {
			for _, up := range [2]bool{true, false} {
				if c, _, _ := p.oneVoteConfig(n11, up); !fn(c) {
					return
				}
			}
		}
		return
	}
	nc := len(p.Corners())
	c := make(Config, nc)
	var rec func(j, left int) bool
	rec = func(j, left int) bool {
		if j == nc-1 {
			c[j] = left
			return fn(append(Config(nil), c...))
		}
		for v := 0; v <= left; v++ {
			c[j] = v
			if !rec(j+1, left-v) {
				return false
			}
		}
		c[j] = 0
		return true
	}
	rec(0, p.K)
}
