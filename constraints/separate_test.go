package constraints

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/darrm/darrm/internal/param"
)

// randomGamma returns a symmetric noise function with values in [0, 1].
func randomGamma(k int, rng *rand.Rand) []float64 {
	g := make([]float64, k+1)
	for l := (k + 1) / 2; l <= k; l++ {
		g[l] = rng.Float64()
		g[k-l] = g[l]
	}
	return g
}

// bruteForce evaluates Cost on every configuration, costliest first.
func bruteForce(t *testing.T, p Problem, gamma []float64) []Scored {
	return bruteForceOf(t, p, gamma, func(Config) bool { return true })
}

// bruteForceReduced evaluates Cost on every reduced configuration (see
// reduced), those Separate scores, costliest first.
func bruteForceReduced(t *testing.T, p Problem, gamma []float64) []Scored {
	return bruteForceOf(t, p, gamma, func(c Config) bool { return reduced(p, c) })
}

func bruteForceOf(t *testing.T, p Problem, gamma []float64, keep func(Config) bool) []Scored {
	t.Helper()
	// Room for every configuration at once (NumConfigs: tens of
	// thousands at K = 41), which the appends grew step by step.
	all := make([]Scored, 0, p.NumConfigs().Int64())
	p.AllConfigs(func(c Config) bool {
		if !keep(c) {
			return true
		}
		f, err := p.Cost(c, gamma)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, Scored{c, f})
		return true
	})
	sort.Slice(all, func(i, j int) bool { return all[i].F > all[j].F })
	return all
}

func TestSeparateMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	cases := []Problem{
		{K: 1, M: 1, Eps: 0.1, Delta: 1e-5, TargetDelta: 1e-5},
		{K: 3, M: 2, Eps: 0.5, Delta: 0.01, TargetDelta: 0.02},
		{K: 5, M: 3, Eps: 0.1, Delta: 1e-5, TargetDelta: 3e-5},
		{K: 7, M: 2.5, Eps: 1, Delta: 0.05, TargetDelta: 0.1},
		{K: 9, M: 3, Eps: 0.3, Delta: 0.2, TargetDelta: 0.25},
		{K: 5, M: 2, Eps: 0.1, Delta: 0, TargetDelta: 0},
		{K: 11, M: 4, Eps: 0.2, Delta: 0, TargetDelta: 0.001},
		{K: 21, M: 7, Eps: 0.05, Delta: 0, TargetDelta: 0},
	}
	for _, p := range cases {
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		for trial := 0; trial < 4; trial++ {
			gamma := randomGamma(p.K, rng)
			if trial == 0 {
				for l := range gamma {
					gamma[l] = 1
				}
			}
			all := bruteForce(t, p, gamma)
			// bruteForceReduced's costs, costliest first: the reduced
			// multisets' of all, scored once.
			var want []Scored
			for _, s := range all {
				if reduced(p, s.Config) {
					want = append(want, s)
				}
			}
			for _, workers := range []int{1, 3} {
				const top = 6
				sep, err := p.Separate(context.Background(), gamma, SeparateOptions{Top: top, Floor: math.Inf(-1), Workers: workers})
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(sep.MaxF-want[0].F) > sep.ErrBound {
					t.Errorf("%+v workers=%d: MaxF = %.17g, brute force over the reduced multisets %.17g (bound %g)", p, workers, sep.MaxF, want[0].F, sep.ErrBound)
				}
				// Every multiset is within rounding of the exact maximum,
				// which a reduced multiset attains (TestMirrorCouples).
				if math.Abs(sep.MaxF-all[0].F) > 2*sep.ErrBound {
					t.Errorf("%+v workers=%d: MaxF = %.17g, brute force over every multiset %.17g (bound %g)", p, workers, sep.MaxF, all[0].F, sep.ErrBound)
				}
				fw, err := p.Cost(sep.Worst, gamma)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(fw-sep.MaxF) > sep.ErrBound {
					t.Errorf("%+v: worst config %v has cost %v, MaxF %v", p, sep.Worst, fw, sep.MaxF)
				}
				if n := min(top, len(want)); len(sep.Top) != n {
					t.Fatalf("%+v: %d top configs, want %d", p, len(sep.Top), n)
				}
				for i, s := range sep.Top {
					if math.Abs(s.F-want[i].F) > sep.ErrBound {
						t.Errorf("%+v: top[%d].F = %v, brute force %v", p, i, s.F, want[i].F)
					}
					if fc, _ := p.Cost(s.Config, gamma); math.Abs(fc-s.F) > sep.ErrBound {
						t.Errorf("%+v: top[%d] %v reports %v, costs %v", p, i, s.Config, s.F, fc)
					}
				}
				if got, want := sep.Configs.Int64(), int64(len(all)); got != want {
					t.Errorf("%+v: Configs = %d, enumerated %d", p, got, want)
				}
			}
		}
	}
}

func TestSeparateFloor(t *testing.T) {
	p := Problem{K: 7, M: 3, Eps: 0.1, Delta: 1e-3, TargetDelta: 3e-3}
	gamma := randomGamma(p.K, rand.New(rand.NewPCG(5, 6)))
	all := bruteForceReduced(t, p, gamma)
	// Put the floor in the first clear gap after the 20th costliest
	// configuration, so that rounding cannot move a configuration across it.
	i := 20
	for all[i].F-all[i+1].F < 1e-9 {
		i++
	}
	floor := (all[i].F + all[i+1].F) / 2
	sep, err := p.Separate(context.Background(), gamma, SeparateOptions{Top: 1000, Floor: floor})
	if err != nil {
		t.Fatal(err)
	}
	above := 0
	for _, s := range all {
		if s.F > floor {
			above++
		}
	}
	if len(sep.Top) != above {
		t.Errorf("Top has %d configs above the floor, brute force %d", len(sep.Top), above)
	}
	for _, s := range sep.Top {
		if s.F <= floor {
			t.Errorf("config %v with cost %v is not above the floor %v", s.Config, s.F, floor)
		}
	}
}

func TestSeparateRejectsBadGamma(t *testing.T) {
	p := Problem{K: 3, M: 1, Eps: 0.1, Delta: 0, TargetDelta: 0}
	for _, g := range [][]float64{{1, 1}, {1, math.NaN(), math.NaN(), 1}} {
		if _, err := p.Separate(context.Background(), g, SeparateOptions{}); err == nil {
			t.Errorf("Separate accepted gamma %v", g)
		}
	}
}

// TestSeparateRejectsNegativeWorkers checks that a negative number of
// goroutines is refused as the parameter "workers", by param.Workers and by
// Separate, which callers pass their value to; 0 (all cores) is valid.
func TestSeparateRejectsNegativeWorkers(t *testing.T) {
	p := Problem{K: 3, M: 1, Eps: 0.1}
	g := []float64{1, 0.5, 0.5, 1}
	for _, tc := range []struct {
		n  int
		ok bool
	}{{-1, false}, {-100, false}, {0, true}, {3, true}, {1 << 10, true}, {1<<10 + 1, false}, {math.MaxInt, false}} {
		err := param.Workers(tc.n)
		_, serr := p.Separate(context.Background(), g, SeparateOptions{Workers: tc.n})
		if (err == nil) != tc.ok || (serr == nil) != tc.ok {
			t.Errorf("workers %d: param.Workers %v, Separate %v; want ok = %v", tc.n, err, serr, tc.ok)
			continue
		}
		var pe *param.Error
		if !tc.ok && (!errors.As(serr, &pe) || pe.Name != "workers" || pe.Value != tc.n) {
			t.Errorf("workers %d: Separate's error %v is not the ParamError of workers", tc.n, serr)
		}
	}
}

// TestSeparateChecksFirst: options out of their domain and a problem out
// of range are refused, naming the field, before any work: a Top below 0
// panicked a worker, which no caller can recover, and a K of 2^31 was
// allocated for before the problem was checked.
func TestSeparateChecksFirst(t *testing.T) {
	g := []float64{1, 0.5, 0.5, 1}
	for _, tc := range []struct {
		p    Problem
		opts SeparateOptions
		name string
	}{
		{Problem{K: 3, M: 1, Eps: 0.1, Delta: 1e-5, TargetDelta: 1e-5}, SeparateOptions{Top: -1}, "Top"},
		{Problem{K: 3, M: 1, Eps: 0.1}, SeparateOptions{Top: -1}, "Top"},
		{Problem{K: 3, M: 1, Eps: 0.1, Delta: 1e-5, TargetDelta: 1e-5}, SeparateOptions{Floor: math.NaN()}, "Floor"},
		{New(1<<31, 2, 0.1, 1e-6), SeparateOptions{}, "K"},
		{New(-1, 2, 0.1, 1e-6), SeparateOptions{}, "K"},
	} {
		_, err := tc.p.Separate(context.Background(), g, tc.opts)
		var pe *param.Error
		if !errors.As(err, &pe) || pe.Name != tc.name {
			t.Errorf("K = %d, %+v: %v, want a ParamError on %s", tc.p.K, tc.opts, err, tc.name)
		}
	}
}

// TestRowsCheckProblem: AllPMFs, Cost and Row refuse a problem out of
// range before computing by it: AllPMFs at K = 2^31 ran out of memory, and
// Cost at ε = -1 returned a cost of -0.103.
func TestRowsCheckProblem(t *testing.T) {
	c := Config{3, 0, 0, 0, 0, 0, 0, 0}
	for _, p := range []Problem{New(1<<31, 2, 0.1, 1e-6), NewOneVote(1<<31, 0.1, 0), {K: 3, M: 1, Eps: -1}, {K: 3, M: math.Inf(1), Eps: 0.1}} {
		errs := map[string]error{"AllPMFs": p.AllPMFs(func(Config, []float64, []float64) bool { return true })}
		_, errs["Cost"] = p.Cost(c, []float64{1, 0.5, 0.5, 1})
		_, errs["Row"] = p.Row(c)
		for name, err := range errs {
			var pe *param.Error
			if !errors.As(err, &pe) {
				t.Errorf("%s of K = %d, m = %v, eps = %v: %v, want a ParamError", name, p.K, p.M, p.Eps, err)
			}
		}
	}
}

func TestSeparateCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := Problem{K: 41, M: 5, Eps: 0.1, Delta: 1e-5, TargetDelta: 5e-5}
	g := make([]float64, p.K+1)
	if _, err := p.Separate(ctx, g, SeparateOptions{}); err == nil {
		t.Error("Separate ignored a canceled context")
	}
}

func BenchmarkSeparate(b *testing.B) {
	for _, p := range []Problem{
		{K: 11, M: 3, Eps: 0.1, Delta: 1e-5, TargetDelta: DefaultTargetDelta(1e-5, 3)},
		{K: 41, M: 5, Eps: 0.1, Delta: 1e-5, TargetDelta: DefaultTargetDelta(1e-5, 5)},
		{K: 101, M: 10, Eps: 0.1, Delta: 1e-5, TargetDelta: DefaultTargetDelta(1e-5, 10)},
		{K: 1001, M: 40, Eps: 0.1, Delta: 0, TargetDelta: 0},
	} {
		gamma := randomGamma(p.K, rand.New(rand.NewPCG(1, 1)))
		b.Run(benchName(p), func(b *testing.B) {
			for b.Loop() {
				if _, err := p.Separate(context.Background(), gamma, SeparateOptions{Top: 50, Floor: 0}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSeparatePruningKeepsTop checks the pruning of row pairs (Delta > 0)
// and of pairs (n6, n7) (Delta = 0) where it prunes most: noise functions scaled so that their
// costliest multisets sit at the budget, with a floor just below it, as in
// the cutting-plane loop and the certificate. Every multiset above the
// floor by more than the rounding bound must be found.
func TestSeparatePruningKeepsTop(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	trials := 3 // gamma_Sub, then random noise functions
	if testing.Short() {
		trials = 1
	}
	for _, p := range []Problem{
		{K: 13, M: 3, Eps: 0.1, Delta: 1e-5, TargetDelta: 3e-5},
		{K: 15, M: 5, Eps: 0.2, Delta: 1e-3, TargetDelta: 5e-3},
		{K: 11, M: 2, Eps: 0.5, Delta: 0.05, TargetDelta: 0.1},
		{K: 31, M: 3, Eps: 0.1, Delta: 0, TargetDelta: 0},
		{K: 41, M: 2, Eps: 0.3, Delta: 0, TargetDelta: 1e-3},
	} {
		for trial := range trials {
			g := randomGamma(p.K, rng)
			if trial == 0 {
				for l := range g {
					g[l] = math.Abs(float64(2*l-p.K)) / float64(p.K) // gamma_Sub with one teacher
				}
			}
			// The scale is set up by Separate's maximum (within its
			// ErrBound of the brute force's, which is checked below at the
			// scaled g): the brute force, scoring every multiset, runs once.
			first, err := p.Separate(context.Background(), g, SeparateOptions{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			c := p.Budget() / first.MaxF
			for l := range g {
				g[l] = min(g[l]*c, 1)
			}
			all := bruteForceReduced(t, p, g)
			for _, floor := range []float64{all[0].F * (1 - 1e-3), all[0].F * 0.9} {
				for _, top := range []int{0, 7, 400} {
					sep, err := p.Separate(context.Background(), g, SeparateOptions{Top: top, Floor: floor, Workers: 2})
					if err != nil {
						t.Fatal(err)
					}
					eb := sep.ErrBound
					if math.Abs(sep.MaxF-all[0].F) > eb {
						t.Errorf("%+v trial %d top %d: MaxF = %.17g, brute force %.17g", p, trial, top, sep.MaxF, all[0].F)
					}
					// Top holds the costliest multisets above the floor:
					// all those clearly above it, up to top of them, give
					// or take rounding at the floor and at the cut-off.
					sure, maybe := countAbove(all, floor+eb), countAbove(all, floor-eb)
					if len(sep.Top) < min(top, sure) || len(sep.Top) > min(top, maybe) {
						t.Errorf("%+v trial %d top %d floor %v: %d multisets in Top, brute force has %d to %d above the floor", p, trial, top, floor, len(sep.Top), sure, maybe)
					}
					found := make(map[string]bool)
					for _, s := range sep.Top {
						found[fmt.Sprint(s.Config)] = true
					}
					for _, s := range all {
						if len(sep.Top) == 0 || s.F <= sep.Top[len(sep.Top)-1].F+eb || s.F <= floor+eb {
							break
						}
						if !found[fmt.Sprint(s.Config)] {
							t.Errorf("%+v trial %d top %d: %v (cost %v) is missing from Top", p, trial, top, s.Config, s.F)
						}
					}
				}
			}
		}
	}
}

func countAbove(all []Scored, floor float64) int {
	n := 0
	for _, s := range all {
		if s.F > floor {
			n++
		}
	}
	return n
}

// TestSeparatePairBoundAtFloor puts the floor just below the costliest
// multiset of one reduced pair (n6, n7) in pure DP, where Separate's bound
// on the pair decides whether the pair is scored at all: the multiset must
// still be found.
func TestSeparatePairBoundAtFloor(t *testing.T) {
	p := Problem{K: 41, M: 3, Eps: 0.1, Delta: 0, TargetDelta: 0}
	g := randomGamma(p.K, rand.New(rand.NewPCG(31, 32)))
	all := bruteForceReduced(t, p, g)
	// The costliest multiset of each pair, by rank in all.
	seen := make(map[[2]int]bool)
	var heads []Scored
	for _, s := range all {
		key := [2]int{s.Config[2], s.Config[3]}
		if !seen[key] {
			seen[key] = true
			heads = append(heads, s)
		}
	}
	for i := 1; i < len(heads); i += 3 {
		floor := heads[i].F - 1e-12
		if countAbove(all, floor) > 1000 {
			break // more than Top holds
		}
		sep, err := p.Separate(context.Background(), g, SeparateOptions{Top: 1000, Floor: floor})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, s := range sep.Top {
			found = found || slices.Equal(s.Config, heads[i].Config)
		}
		if !found {
			t.Errorf("floor %v: %v (cost %v), the costliest multiset of its pair, is missing from Top", floor, heads[i].Config, heads[i].F)
		}
	}
}

// TestStepCostRange checks the fused sweep against step and costRange,
// bit for bit, at even and odd lengths.
func TestStepCostRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 1; n <= 9; n++ {
		for range 20 {
			x := make([]float64, n+1)
			for i := range x {
				x[i] = 2*rng.Float64() - 1
			}
			a, e := rng.Float64(), 1+rng.Float64()
			want := step(slices.Clone(x), a)
			wantHi, wantLo := costRange(want, e)
			got, hi, lo := stepCostRange(slices.Clone(x), a, e)
			if !slices.Equal(got, want) || hi != wantHi || lo != wantLo {
				t.Fatalf("len %d: stepCostRange = %v, %v, %v; step and costRange give %v, %v, %v", n+1, got, hi, lo, want, wantHi, wantLo)
			}
		}
	}
}

// BenchmarkRow times the privacy row of a multiset at K = 2001 of the kind
// the cutting-plane loop adds with Delta > 0: most teachers at the corners
// within Delta of voting surely, whose factors underflow the pmf's tails,
// and a group at a corner of e^eps.
func BenchmarkRow(b *testing.B) {
	p := Problem{K: 2001, M: 3, Eps: 0.1, Delta: 1e-5, TargetDelta: DefaultTargetDelta(1e-5, 3)}
	for _, c := range []Config{
		{600, 0, 930, 0, 471, 0, 0, 0},
		{500, 0, 700, 0, 400, 0, 401, 0},
	} {
		b.Run(fmt.Sprint(c), func(b *testing.B) {
			for b.Loop() {
				if _, err := p.Row(c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestFamilySideBound checks the bound on each column of a family's side
// (familySide.prepare) against the column as filled: never below any of
// its entries, on vectors whose window is cut and whose window is not,
// at Deltas where few flips and where many are expected; and within 1%
// of the entries' maximum where many flips are expected on an increasing
// vector, where the bound is the window's last entry: a bound scaled down
// by a tenth of its move fails.
func TestFamilySideBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 37))
	for _, c := range []struct {
		n, s, t, window int
		d, scale        float64
		increasing      bool
	}{
		{60, 20, 59, 8, 1e-3, 1, false},
		{60, 20, 59, 8, 1e-3, -2.7, false},
		{60, 30, 59, 100, 0.05, 1, false},    // not cut
		{60, 30, 59, 100, 0.05, -1.2, false}, // not cut
		{200, 50, 199, 16, 0.3, 1, false},
		{200, 50, 199, 16, 0.3, -3, false},
		{200, 50, 199, 16, 0.5, 1, true},
		{200, 50, 199, 16, 0.5, -3, true},
	} {
		v := make([]float64, c.n)
		for i := range v {
			v[i] = 2*rng.Float64() - 1
			if c.increasing {
				v[i] = float64(i) / float64(c.n)
				if c.scale < 0 {
					v[i] = -v[i]
				}
			}
		}
		var fs familySide
		var base, buf []float64
		fs.prepare(v, c.s, c.t, c.d, c.scale, c.window, &base)
		nb := c.s + 1
		table := make([]float64, (c.t-c.s+1)*nb)
		closest := math.Inf(1)
		for a := range nb {
			fs.fill(table, a, c.t-c.s, c.d, &buf)
			top := math.Inf(-1)
			for i := a; i < len(table); i += nb {
				top = math.Max(top, table[i])
			}
			if top > fs.bound[a] {
				t.Errorf("%+v: column %d reaches %.17g above its bound %.17g", c, a, top, fs.bound[a])
			}
			closest = math.Min(closest, (fs.bound[a]-top)/math.Abs(c.scale))
		}
		if c.increasing && closest > 0.01/float64(c.n) {
			t.Errorf("%+v: every bound is more than %.3g above its column's maximum", c, closest)
		}
	}
}
