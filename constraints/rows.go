package constraints

import (
	"fmt"
	"slices"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/poissonbinom"
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

// pmfs returns the vote-count pmfs alpha (on D) and alpha' (on D') of the
// teachers placed at the corners of c, factor by factor in the corners'
// order, as AllPMFs computes them; with binomials set, the teachers at
// one probability are one binomial (poissonbinom.Dist.AddBinomial), the
// largest group first, in O(K) for it where factor by factor takes O(K²):
// a row that binds has most teachers at one corner, and Row's pmfs were
// 43% of a solve's CPU time at K = 2001, m = 2. The two agree within the
// roundings of their sums (about K·2^-53 relative).
func (p Problem) pmfs(c Config, binomials bool) (alpha, alphaPrime []float64, err error) {
	if err := p.check(c); err != nil {
		return nil, nil, err
	}
	corners := p.Corners()
	type group struct {
		q float64
		n int
	}
	side := func(prob func(Corner) float64) ([]float64, error) {
		// A teacher that votes 0 or 1 surely only pads or shifts the
		// pmf: convolve the others and shift by the sure votes.
		d := poissonbinom.New(p.K)
		var groups []group
		ones := 0
		for j, corner := range corners {
			switch q := prob(corner); {
			case c[j] == 0 || q == 0:
			case q == 1:
				ones += c[j]
			case binomials:
				if i := slices.IndexFunc(groups, func(g group) bool { return g.q == q }); i >= 0 {
					groups[i].n += c[j]
				} else {
					groups = append(groups, group{q, c[j]})
				}
			default:
				for range c[j] {
					if err := d.Add(q); err != nil {
						return nil, err
					}
				}
			}
		}
		slices.SortStableFunc(groups, func(a, b group) int { return b.n - a.n })
		for _, g := range groups {
			if err := d.AddBinomial(g.n, g.q); err != nil {
				return nil, err
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
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.Relation == accountant.OneVote {
		return p.oneVoteRow(c)
	}
	alpha, alphaPrime, err := p.pmfs(c, true)
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
	if err := p.Validate(); err != nil {
		return 0, err
	}
	if len(gamma) != p.K+1 {
		return 0, fmt.Errorf("gamma has %d values, want K+1 = %d", len(gamma), p.K+1)
	}
	alpha, alphaPrime, err := p.pmfs(c, false)
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

// AllPMFs calls fn for every corner multiset of size K with its pmfs, as
// AllConfigs and PMFs would give them, until fn returns false. It shares
// the pmf of the teachers placed so far between the multisets that
// extend it (PMFs' factors in PMFs' order: the same values), so listing
// every multiset's pmfs costs O(K) a multiset instead of O(K^2). fn must
// not keep c, alpha or alphaPrime. The error is PMFs' (a corner that is
// not a probability, from an invalid problem).
func (p Problem) AllPMFs(fn func(c Config, alpha, alphaPrime []float64) bool) error {
	// The problem first: its pmfs are sized by K (K = 2^31 ran out of
	// memory).
	if err := p.Validate(); err != nil {
		return err
	}
	var err error
	if p.Relation == accountant.OneVote {
		p.AllConfigs(func(c Config) bool {
			var alpha, alphaPrime []float64
			if alpha, alphaPrime, err = p.pmfs(c, false); err != nil {
				return false
			}
			return fn(c, alpha, alphaPrime)
		})
		return err
	}
	corners := p.Corners()
	for _, c := range corners {
		if !(c.P >= 0 && c.P <= 1 && c.Q >= 0 && c.Q <= 1) {
			return fmt.Errorf("corner (%v, %v): must be probabilities", c.P, c.Q)
		}
	}
	nc := len(corners)
	c := make(Config, nc)
	// at[j] holds both sides after corners 0..j-1 and some of corner j.
	at := make([][2]pmfState, nc+1)
	for j := range at {
		for s := range at[j] {
			at[j][s].d = poissonbinom.New(p.K)
		}
	}
	out := [2][]float64{make([]float64, p.K+1), make([]float64, p.K+1)}
	var rec func(j, left int) bool
	rec = func(j, left int) bool {
		st := &at[j+1]
		for s := range st {
			st[s].d.Set(at[j][s].d)
			st[s].ones = at[j][s].ones
		}
		add := func() {
			st[0].add(corners[j].P)
			st[1].add(corners[j].Q)
		}
		if j == nc-1 {
			for range left {
				add()
			}
			c[j] = left
			for s := range out {
				clear(out[s])
				// ones + N() + 1 <= K + 1 entries: in out's room.
				st[s].d.AppendPMF(out[s][:st[s].ones])
			}
			return fn(c, out[0], out[1])
		}
		for v := 0; v <= left; v++ {
			if v > 0 {
				add()
			}
			c[j] = v
			if !rec(j+1, left-v) {
				return false
			}
		}
		c[j] = 0
		return true
	}
	rec(0, p.K)
	return nil
}

// pmfState is the pmf of some teachers' vote count, as PMFs builds it:
// those that vote 1 surely (ones) shift the Poisson binomial pmf of the
// others, and those that never do are left out.
type pmfState struct {
	d    *poissonbinom.Dist
	ones int
}

// add adds a teacher that votes 1 with probability q, in [0, 1].
func (st *pmfState) add(q float64) {
	switch q {
	case 0:
	case 1:
		st.ones++
	default:
		st.d.Add(q) // q is a probability: AllPMFs checked the corners
	}
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
