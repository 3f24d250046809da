package constraints

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/param"
)

func benchName(p Problem) string {
	return fmt.Sprintf("K=%d/m=%g/Delta=%g", p.K, p.M, p.Delta)
}

func TestValidate(t *testing.T) {
	ok := Problem{K: 11, M: 3, Eps: 0.1, Delta: 1e-5, TargetDelta: 3e-5}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid params rejected: %v", err)
	}
	for _, tc := range []struct {
		name string
		mut  func(*Problem)
		want string
	}{
		{"even K", func(p *Problem) { p.K = 10 }, "K = 10"},
		{"K zero", func(p *Problem) { p.K = 0 }, "K = 0"},
		{"eps zero", func(p *Problem) { p.Eps = 0 }, "eps = 0"},
		{"eps NaN", func(p *Problem) { p.Eps = math.NaN() }, "eps = NaN"},
		{"eps Inf", func(p *Problem) { p.Eps = math.Inf(1) }, "eps = +Inf"},
		{"Delta negative", func(p *Problem) { p.Delta = -1e-9 }, "Delta = -1e-09"},
		{"Delta one", func(p *Problem) { p.Delta = 1 }, "Delta = 1"},
		{"m below 1", func(p *Problem) { p.M = 0.5 }, "m = 0.5"},
		{"m above K", func(p *Problem) { p.M = 12 }, "m = 12"},
		{"m NaN", func(p *Problem) { p.M = math.NaN() }, "m = NaN"},
		{"delta below Delta", func(p *Problem) { p.TargetDelta = 1e-6 }, "delta (the release's delta, Problem.TargetDelta) = 1e-06"},
		{"delta one", func(p *Problem) { p.TargetDelta = 1 }, "delta (the release's delta, Problem.TargetDelta) = 1"},
		{"m eps huge", func(p *Problem) { p.Eps = 50 }, "m·eps = 150"},
		{"K too large", func(p *Problem) { p.K = maxKApprox + 2 }, fmt.Sprintf("K = %d", maxKApprox+2)},
	} {
		p := ok
		tc.mut(&p)
		err := p.Validate()
		if err == nil {
			t.Errorf("%s: accepted %+v", tc.name, p)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %q does not name %q", tc.name, err, tc.want)
		}
	}
}

func TestCorners(t *testing.T) {
	for _, p := range []Problem{
		{K: 3, M: 1, Eps: 0.1, Delta: 1e-5, TargetDelta: 1e-5},
		{K: 3, M: 1, Eps: 2, Delta: 0.3, TargetDelta: 0.3},
		{K: 3, M: 1, Eps: 0.7, Delta: 0, TargetDelta: 0},
		{K: 3, M: 1, Eps: 30, Delta: 0.01, TargetDelta: 0.01},
	} {
		cs := p.Corners()
		if want := map[bool]int{true: 4, false: 8}[p.Delta == 0]; len(cs) != want {
			t.Fatalf("%+v: %d corners, want %d", p, len(cs), want)
		}
		e := math.Exp(p.Eps)
		for _, c := range cs {
			// Every corner satisfies the four (eps, Delta)-DP inequalities.
			tol := 1e-12 * e // 1-P loses digits when P is within 1/e of 1
			if c.P > e*c.Q+p.Delta+tol || c.Q > e*c.P+p.Delta+tol ||
				1-c.P > e*(1-c.Q)+p.Delta+tol || 1-c.Q > e*(1-c.P)+p.Delta+tol {
				t.Errorf("%+v: corner %+v violates (eps, Delta)-DP", p, c)
			}
		}
		want := (e + p.Delta) / (e + 1)
		if got := cs[len(cs)-2].P; math.Abs(got-want) > 1e-15 {
			t.Errorf("%+v: (e+Delta)/(e+1) = %v, want %v", p, got, want)
		}
	}
}

func TestDefaultTargetDelta(t *testing.T) {
	got := DefaultTargetDelta(1e-5, 3)
	x := 1e-5
	want := 3*x - 3*x*x + x*x*x // 1-(1-x)^3 expanded: no cancellation
	if math.Abs(got-want) > 1e-20 {
		t.Errorf("DefaultTargetDelta(1e-5, 3) = %v, want %v", got, want)
	}
	if DefaultTargetDelta(0, 5) != 0 {
		t.Error("DefaultTargetDelta(0, m) != 0")
	}
}

func TestRowMatchesCost(t *testing.T) {
	p := Problem{K: 9, M: 2, Eps: 0.3, Delta: 0.01, TargetDelta: 0.02}
	gamma := []float64{0.9, 0.6, 0.4, 0.2, 0.1, 0.1, 0.2, 0.4, 0.6, 0.9}
	n := 0
	p.AllConfigs(func(c Config) bool {
		n++
		if n%37 != 0 {
			return true
		}
		row, err := p.Row(c)
		if err != nil {
			t.Fatal(err)
		}
		var dot float64
		for i, r := range row {
			dot += r * gamma[p.H()+i]
		}
		f, _ := p.Cost(c, gamma)
		if math.Abs(dot-f) > 1e-14 {
			t.Errorf("config %v: row·gamma = %v, cost %v", c, dot, f)
		}
		return true
	})
	if _, err := p.Row(Config{1, 2}); err == nil {
		t.Error("Row accepted a configuration with the wrong number of corners")
	}
	if _, err := p.Row(Config{1, 0, 0, 0, 0, 0, 0, 0}); err == nil {
		t.Error("Row accepted a configuration of 1 teacher for K = 9")
	}
}

// TestNewFillsTheDefaultDelta: New is the problem with the thesis' delta,
// and a literal that leaves TargetDelta at zero is told its field's name
// and how to get the default.
func TestNewFillsTheDefaultDelta(t *testing.T) {
	p := New(11, 3, 0.1, 1e-5)
	if p.TargetDelta != DefaultTargetDelta(1e-5, 3) || p.Validate() != nil {
		t.Errorf("New(11, 3, 0.1, 1e-5) = %+v (%v)", p, p.Validate())
	}
	if p := New(101, 10, 0.1, 0); p.TargetDelta != 0 || p.Validate() != nil {
		t.Errorf("pure DP: New(101, 10, 0.1, 0) = %+v (%v)", p, p.Validate())
	}
	err := Problem{K: 11, M: 3, Eps: 0.1, Delta: 1e-5}.Validate()
	var pe *param.Error
	var pf interface{ ProblemField() string }
	if !errors.As(err, &pe) || pe.Name != "delta" || !errors.As(err, &pf) || pf.ProblemField() != "TargetDelta" ||
		!strings.Contains(err.Error(), "delta (the release's delta, Problem.TargetDelta) = 0") || !strings.Contains(err.Error(), "constraints.New") {
		t.Errorf("TargetDelta left at zero: %v", err)
	}
}

// TestAllPMFsMatchesPMFs: the shared recurrence of AllPMFs gives every
// multiset, in AllConfigs' order, exactly PMFs' pmfs, and stops when
// asked.
func TestAllPMFsMatchesPMFs(t *testing.T) {
	for _, p := range []Problem{
		New(11, 3, 0.1, 1e-5),
		New(7, 2, 0.5, 0),
		New(9, 1, 2, 0.01),
		NewOneVote(5, 0.3, 1e-6),
	} {
		var want []Config
		p.AllConfigs(func(c Config) bool { want = append(want, c); return true })
		n := 0
		err := p.AllPMFs(func(c Config, alpha, alphaPrime []float64) bool {
			if n >= len(want) || !slices.Equal(c, want[n]) {
				t.Fatalf("%v: multiset %d is %v, AllConfigs gives %v", p, n, c, want[min(n, len(want)-1)])
			}
			a, ap, err := p.pmfs(c, false)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(alpha, a) || !slices.Equal(alphaPrime, ap) {
				t.Fatalf("%v: multiset %v: pmfs %v %v, PMFs %v %v", p, c, alpha, alphaPrime, a, ap)
			}
			n++
			return true
		})
		if err != nil || n != len(want) {
			t.Errorf("%v: %d multisets (%v), want %d", p, n, err, len(want))
		}
		stopped := 0
		p.AllPMFs(func(Config, []float64, []float64) bool { stopped++; return stopped < 3 })
		if stopped != 3 {
			t.Errorf("%v: went on after false: %d calls", p, stopped)
		}
	}
	bad := New(5, 1, math.NaN(), 1e-5)
	if err := bad.AllPMFs(func(Config, []float64, []float64) bool { return true }); err == nil {
		t.Error("corners of eps = NaN: no error")
	}
}

// TestMEps: m·eps is the product of the decimals m and eps are written
// as, and the budget and e^{m·eps} are of it: the guarantee a release
// states is the one the certificate proves (3 × 0.1 is 0.3, not the
// float64 product 0.30000000000000004). In the one-vote relation it is
// eps itself.
func TestMEps(t *testing.T) {
	for _, tc := range []struct {
		p    Problem
		want float64
	}{
		{New(11, 3, 0.1, 1e-5), 0.3},
		{New(11, 3, 0.7, 0), 2.1},
		{New(101, 10, 0.03, 1e-5), 0.3},
		{New(35, 6.4521, 0.1, 1e-5), 0.64521},
		{NewOneVote(11, 0.30000000000000004, 1e-5), 0.30000000000000004},
	} {
		p := tc.p
		if got := p.MEps(); got != tc.want || p.E() != math.Exp(tc.want) || p.Budget() != math.Expm1(tc.want)+2*p.TargetDelta {
			t.Errorf("m = %v, eps = %v: m·eps %v, E %v, budget %v; want %v", p.M, p.Eps, got, p.E(), p.Budget(), tc.want)
		}
	}
}

// TestRowBinomialsMatchFactors: Row's pmfs, a binomial for each
// probability, agree with the factor-by-factor pmfs that Cost and
// AllPMFs use within the roundings of K factors, at K = 2001 on multisets
// like those that bind (most teachers at one eps corner, a few at the
// flipping corners) and on spread ones.
func TestRowBinomialsMatchFactors(t *testing.T) {
	p := New(2001, 2, 0.1, 1e-4)
	for _, c := range []Config{
		{0, 0, 0, 0, 0, 0, 2001, 0},
		{0, 0, 0, 0, 0, 0, 0, 2001},
		{400, 300, 20, 3, 7, 1, 1270, 0},
		{0, 0, 117, 0, 59, 0, 0, 1825},
		{250, 250, 250, 250, 250, 250, 250, 251},
		{1000, 1001, 0, 0, 0, 0, 0, 0},
	} {
		a, ap, err := p.pmfs(c, true)
		if err != nil {
			t.Fatal(err)
		}
		b, bp, err := p.pmfs(c, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, side := range []int{0, 1} {
			got, want := [][]float64{a, ap}[side], [][]float64{b, bp}[side]
			for l := range want {
				if d := math.Abs(got[l] - want[l]); d > 4*float64(p.K)*0x1p-53*want[l] && d > 1e-300 {
					t.Errorf("%v side %d: pmf[%d] = %v with binomials, %v factor by factor", c, side, l, got[l], want[l])
					break
				}
			}
		}
	}
}
