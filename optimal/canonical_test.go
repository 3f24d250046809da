package optimal

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
)

// canonicalTol is how far apart, in any gamma(l), two solves of one
// problem may return gamma_opt (docs/solve.md, "The canonical gamma_opt").
const canonicalTol = 1e-6

type setting struct {
	name  string
	p     constraints.Problem
	prior gamma.Prior
}

// documentedSettings are the problems the README and scripts/reproduce.sh
// solve (Chapter 3 and App. B); slow adds the ones that take seconds.
func documentedSettings(t *testing.T, slow bool) []setting {
	u, tp := gamma.UniformPrior(), tpPrior(t)
	var out []setting
	add := func(name string, p constraints.Problem, prior gamma.Prior) {
		out = append(out, setting{fmt.Sprintf("%s K=%d m=%.6g Delta=%g delta=%.6g %v", name, p.K, p.M, p.Delta, p.TargetDelta, prior), p, prior})
	}
	for _, m := range []float64{1, 3, 5, 7} { // Figure 3.2, and Delta = 0
		add("fig-3.2", constraints.New(11, m, 0.1, 1e-5), u)
		add("fig-3.2 pure", constraints.New(11, m, 0.1, 0), u)
	}
	for m := 1.0; m <= 11; m++ { // Figure B.5
		add("fig-b.5", constraints.New(11, m, 0.1, 0), u)
	}
	for _, m := range []float64{10, 20, 30, 40, 60, 80} { // Figure B.6; README's pure DP
		add("fig-b.6", constraints.New(101, m, 0.1, 0), u)
	}
	for _, m := range []float64{3, 5} { // Figure B.7
		add("fig-b.7", constraints.New(11, m, 0.1, 0), tp)
	}
	for _, n := range []int{10, 13, 15, 20} { // Table B.1 and Figure B.4
		g, err := accountant.Composition{Method: accountant.General, DeltaPrime: 0.1}.Compose(accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, n)
		if err != nil {
			t.Fatal(err)
		}
		add("table-b.1", constraints.Problem{K: 35, M: g.Eps / 0.1, Eps: 0.1, Delta: 1e-5, TargetDelta: g.Delta}, u)
	}
	add("docs/solve.md shards", constraints.New(31, 4, 0.1, 1e-5), u)
	if slow {
		add("README", constraints.New(101, 10, 0.1, 1e-5), u)
		add("frontier", constraints.New(301, 5, 0.1, 0), u)
	}
	return out
}

// paths are different ways to the same problem: the default, one worker
// and few rows per pass, another worker count and many rows per pass
// started from a perturbed gamma, and a start from the gamma of a nearby
// problem (as a cached gamma of an earlier solver would be).
func paths(p constraints.Problem, first gamma.Gamma) []Options {
	perturbed := make(gamma.Gamma, len(first))
	for l := range first {
		// Symmetric, and moved by up to 0.3 towards 0 and 1 alternately.
		d := 0.3 * math.Sin(float64(min(l, p.K-l)))
		perturbed[l] = math.Min(math.Max(first[l]+d, 0), 1)
	}
	near := make(gamma.Gamma, len(first))
	for l := range first {
		near[l] = 0.9 * first[l]
	}
	return []Options{
		{Workers: 1, CutsPerPass: 3},
		{Workers: 2, CutsPerPass: 40, Start: perturbed},
		{Workers: 3, Start: near},
	}
}

func checkSamePaths(t *testing.T, slow bool) {
	ctx := context.Background()
	for si, s := range documentedSettings(t, slow) {
		first, err := Solve(ctx, s.p, s.prior, Options{})
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if !first.TieBroken {
			t.Errorf("%s: the tie-break failed: %v", s.name, first.TieBreakError)
		}
		for i, o := range paths(s.p, first.Gamma) {
			if testing.Short() && !slow && i != si%3 {
				// Under -short at a smaller size: each setting against the
				// default path along one other, rotating over the settings
				// (each of the three taken by ten or more).
				continue
			}
			r, err := Solve(ctx, s.p, s.prior, o)
			if err != nil {
				t.Fatalf("%s, path %d: %v", s.name, i, err)
			}
			if r.Certificate.Status != gamma.Certified || !r.TieBroken {
				t.Errorf("%s, path %d: %v, tie-break error %v", s.name, i, r.Certificate.Status, r.TieBreakError)
			}
			worst, at := 0.0, 0
			for l := range r.Gamma {
				if d := math.Abs(r.Gamma[l] - first.Gamma[l]); d > worst {
					worst, at = d, l
				}
			}
			t.Logf("%s, path %d: %.2g apart; %d passes and %d LP solves against %d and %d; gap %.2g",
				s.name, i, worst, r.Passes, r.LPSolves, first.Passes, first.LPSolves, r.Gap)
			if worst > canonicalTol {
				t.Errorf("%s, path %d: gamma(%d) = %.12f, the default path gives %.12f (%.2g apart, more than %g)",
					s.name, i, at, r.Gamma[at], first.Gamma[at], worst, canonicalTol)
			}
			if r.Gap > tieTol {
				t.Errorf("%s, path %d: gap %g > %g", s.name, i, r.Gap, tieTol)
			}
		}
	}
}

// TestCanonicalSamePaths solves every fast README and reproduction setting
// along several cutting-plane paths and gets one gamma_opt.
func TestCanonicalSamePaths(t *testing.T) { checkSamePaths(t, false) }

// TestCanonicalSamePathsSlow adds the settings that take seconds; run it
// with DARRM_LONG_TESTS=1 go test ./optimal -run CanonicalSamePathsSlow.
func TestCanonicalSamePathsSlow(t *testing.T) {
	if os.Getenv("DARRM_LONG_TESTS") == "" {
		t.Skip("set DARRM_LONG_TESTS=1 to run the slow settings")
	}
	checkSamePaths(t, true)
}
