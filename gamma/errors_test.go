package gamma

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/internal/poissonbinom"
)

func mustPMF(t *testing.T, p []float64) []float64 {
	t.Helper()
	pmf, err := poissonbinom.PMF(p)
	if err != nil {
		t.Fatal(err)
	}
	return pmf
}

func TestTVError(t *testing.T) {
	k := 11
	sub, _ := Sub(k, 3)
	ones, _ := Const(k, 1)
	zeros, _ := Const(k, 0)
	p := []float64{0.9, 0.8, 0.7, 0.6, 0.95, 0.2, 0.1, 0.55, 0.65, 0.75, 0.85}
	alpha := mustPMF(t, p)
	var maj float64
	for l := (k + 1) / 2; l <= k; l++ {
		maj += alpha[l]
	}
	for _, tc := range []struct {
		name string
		g    Gamma
		want float64
	}{
		{"gamma=1 is the exact majority", ones, 0},
		{"gamma=0 is a fair coin", zeros, math.Abs(0.5 - maj)},
	} {
		got, err := tc.g.TVError(p)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("%s: error %v, want %v", tc.name, got, tc.want)
		}
	}
	// Subsampling 3 teachers: Pr[release 1] is Pr[majority of 3 random teachers is 1].
	got, _ := sub.TVError(p)
	var subMaj, n float64
	for i := 0; i < k; i++ {
		for j := i + 1; j < k; j++ {
			for l := j + 1; l < k; l++ {
				a, b, c := p[i], p[j], p[l]
				subMaj += a*b + a*c + b*c - 2*a*b*c
				n++
			}
		}
	}
	if want := math.Abs(subMaj/n - maj); math.Abs(got-want) > 1e-14 {
		t.Errorf("error of gamma_Sub(3): %v, direct %v", got, want)
	}
	half := make([]float64, k)
	for i := range half {
		half[i] = 0.5
	}
	if e, _ := sub.TVError(half); e > 1e-16 {
		t.Errorf("error with p_i = 0.5: %v, want 0 (both outputs are fair coins)", e)
	}
	if _, err := sub.TVError(p[:3]); err == nil {
		t.Error("TVError accepted 3 probabilities for K = 11")
	}
}

func TestExpectedTVError(t *testing.T) {
	g, _ := Sub(11, 3)
	exact, err := expectedTVError(context.Background(), nil, g, actualHalf, 0, 0)
	if err != nil || !exact.Exact || exact.Mean != 0 {
		t.Errorf("p = 0.5: %+v, %v; want exact 0", exact, err)
	}
	a, _ := expectedTVError(context.Background(), nil, g, actualUniform, 4000, 1)
	b, _ := expectedTVError(context.Background(), nil, g, actualUniform, 4000, 1)
	if a != b {
		t.Errorf("same seed, different estimates: %+v, %+v", a, b)
	}
	ref, _ := expectedTVError(context.Background(), nil, g, actualUniform, 200000, 2)
	if math.Abs(a.Mean-ref.Mean) > 4*a.StdErr || a.StdErr <= 0 {
		t.Errorf("estimate %v ± %v, reference %v", a.Mean, a.StdErr, ref.Mean)
	}
	// With all p_i < 1/2 the majority is 0 with high probability and
	// gamma_Sub(3) errs where subsampling flips it.
	low, _ := expectedTVError(context.Background(), nil, g, actualLow, 2000, 3)
	if !(low.Mean > 0 && low.Mean < 0.1) {
		t.Errorf("U(0,0.1) error %v, want small and positive", low.Mean)
	}
	if _, err := expectedTVError(context.Background(), nil, g, actualUniform, 1, 0); err == nil {
		t.Error("one sample accepted")
	}
}

func TestParseActual(t *testing.T) {
	for _, ok := range []string{"U(0,1)", "u(0, 0.1)", "0.5", "0.1,0.2,0.3"} {
		if _, err := ParseActual(ok); err != nil {
			t.Errorf("ParseActual(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"U(1,0)", "U(0,2)", "U(0)", "1.5", "x", "0.2,-1"} {
		if _, err := ParseActual(bad); err == nil {
			t.Errorf("ParseActual(%q) accepted", bad)
		}
	}
}

func FuzzParseActual(f *testing.F) {
	for _, s := range []string{"U(0,1)", "u(0, 0.1)", "0.5", "0.1,0.2,0.3", "U(", "U(1,0)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseActual(s)
		if err != nil {
			return
		}
		// Every accepted distribution yields probabilities in [0, 1].
		for _, p := range a.fixed {
			if !(p >= 0 && p <= 1) {
				t.Fatalf("ParseActual(%q) accepted p = %v", s, p)
			}
		}
		if a.fixed == nil && !(0 <= a.lo && a.lo <= a.hi && a.hi <= 1) {
			t.Fatalf("ParseActual(%q) accepted U(%v, %v)", s, a.lo, a.hi)
		}
	})
}

// TestLabelOneAgreement: Pr[label = 1] and Pr[label = majority] against
// sums over every vote vector (2^K of them, each with its probability, the
// release's label given its count by Algorithm 1), for teachers of
// different accuracies and gammas; Pr[label = 1]'s distance to
// Pr[majority = 1] is TVError.
func TestLabelOneAgreement(t *testing.T) {
	for _, tc := range []struct {
		name string
		g    Gamma
		p    []float64
	}{
		{"majority", Gamma{1, 1, 1, 1, 1, 1}, []float64{0.75, 0.75, 0.75, 0.75, 0.75}},
		{"coin", Gamma{0, 0, 0, 0, 0, 0}, []float64{0.9, 0.2, 0.75, 0.6, 0.75}},
		{"sloped", Gamma{0.9, 0.5, 0.1, 0.1, 0.5, 0.9}, []float64{0.9, 0.2, 0.75, 0.6, 0.55}},
	} {
		k := len(tc.p)
		var want, maj, agree float64
		for v := range 1 << k {
			pr, l := 1.0, 0
			for i, pi := range tc.p {
				if v>>i&1 == 1 {
					pr, l = pr*pi, l+1
				} else {
					pr *= 1 - pi
				}
			}
			one := (1 - tc.g[l]) / 2
			if 2*l > k {
				one, maj = (1+tc.g[l])/2, maj+pr
			}
			want += pr * one
			agree += pr * (1 + tc.g[l]) / 2
		}
		got, err := tc.g.LabelOne(tc.p)
		if err != nil {
			t.Fatal(err)
		}
		tv, err := tc.g.TVError(tc.p)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-want) > 1e-14 || math.Abs(math.Abs(maj-got)-tv) > 1e-14 {
			t.Errorf("%s: Pr[label = 1] %v, want %v; |Pr[majority = 1] - it| %v, TVError %v", tc.name, got, want, math.Abs(maj-got), tv)
		}
		a, err := tc.g.Agreement(tc.p)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(a-agree) > 1e-14 {
			t.Errorf("%s: Agreement %v, want %v", tc.name, a, agree)
		}
	}
	if _, err := (Gamma{1, 1, 1}).LabelOne([]float64{0.5}); err == nil {
		t.Error("K = 2 gamma, 1 probability: LabelOne gave no error")
	}
	if _, err := (Gamma{1, 1, 1}).Agreement([]float64{0.5}); err == nil {
		t.Error("K = 2 gamma, 1 probability: Agreement gave no error")
	}
}

// TestMeasure: Measure gives the utility, surrogate error and expected
// errors that their own functions give, Pr[label = 1] for the fixed actual
// distributions only, in their order, and refuses coefficients of another
// K.
func TestMeasure(t *testing.T) {
	g := Gamma{0.1, 0.3, 0.6, 0.6, 0.3, 0.1}
	coeffs, err := UniformPrior().Coefficients(5)
	if err != nil {
		t.Fatal(err)
	}
	actuals, err := parseActuals([]string{"0.8", "U(0.5,1)", "0.6"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := g.Measure(context.Background(), nil, coeffs, actuals)
	if err != nil {
		t.Fatal(err)
	}
	errs, err := expectedErrors(context.Background(), nil, g, actuals)
	if err != nil {
		t.Fatal(err)
	}
	if m.Utility != utility(g, coeffs) || m.SurrogateError != surrogateError(g, coeffs) || len(m.Errors) != 3 || m.Errors[1] != errs[1] {
		t.Errorf("Measure = %+v, want the utility %v, surrogate error %v and errors %v", m, utility(g, coeffs), surrogateError(g, coeffs), errs)
	}
	if len(m.LabelOne) != 2 || m.LabelOne[0].Actual != "0.8" || m.LabelOne[1].Actual != "0.6" {
		t.Fatalf("LabelOne = %+v, want the fixed distributions 0.8 and 0.6", m.LabelOne)
	}
	for _, l := range m.LabelOne {
		p := []float64{0.6, 0.6, 0.6, 0.6, 0.6}
		if l.Actual == "0.8" {
			p = []float64{0.8, 0.8, 0.8, 0.8, 0.8}
		}
		if want, _ := g.LabelOne(p); l.Value != want {
			t.Errorf("LabelOne %s = %v, want %v", l.Actual, l.Value, want)
		}
	}
	if _, err := g.Measure(context.Background(), nil, coeffs[1:], actuals); err == nil {
		t.Error("Measure with coefficients for another K: no error")
	}
	// The draws stop when the context is done: at K = 2001 each is some
	// 4·10^6 steps, and SIGTERM waits for none of them.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.Measure(ctx, nil, coeffs, actuals); !errors.Is(err, context.Canceled) {
		t.Errorf("Measure with its context cancelled: err %v, want context.Canceled", err)
	}
}

// TestTVErrorByEnumeration checks TVError against Definition 3.3.4
// computed by enumerating every vote vector: Pr[release = 1] - Pr[majority
// = 1], DaRRM releasing the majority with probability gamma(L) and a fair
// coin otherwise. With the p_i symmetric about 1/2 (all 0.5, or 0.2 with
// 0.8) the count of votes is symmetric about K/2 and the error is 0 for
// every symmetric gamma, as solve --compare's "E err 0.5" column shows.
func TestTVErrorByEnumeration(t *testing.T) {
	for _, tc := range []struct {
		p        []float64
		symmetry bool
	}{
		{[]float64{0.5, 0.5, 0.5, 0.5, 0.5}, true},
		{[]float64{0.2, 0.8, 0.5, 0.1, 0.9}, true},
		{[]float64{0.3, 0.3, 0.7, 0.7, 0.5, 0.5, 0.5}, true},
		{[]float64{0.9, 0.6, 0.2, 0.7, 0.55}, false},
		{[]float64{0.1, 0.05, 0.02}, false},
	} {
		k := len(tc.p)
		sub, _ := Sub(k, 1)
		ramp := make(Gamma, k+1)
		for l := range ramp {
			ramp[l] = math.Abs(float64(2*l-k)) / float64(k)
		}
		for _, g := range []Gamma{sub, ramp} {
			var release, majority float64
			for v := range 1 << k {
				pr, l := 1.0, 0
				for i, p := range tc.p {
					if v>>i&1 == 1 {
						pr, l = pr*p, l+1
					} else {
						pr *= 1 - p
					}
				}
				maj := 0.0
				if 2*l > k {
					maj = 1
				}
				majority += pr * maj
				release += pr * (g[l]*maj + (1-g[l])/2)
			}
			want := math.Abs(release - majority)
			got, err := g.TVError(tc.p)
			if err != nil || math.Abs(got-want) > 1e-15 {
				t.Errorf("p %v, gamma %v: error %v, by enumeration %v (%v)", tc.p, g, got, want, err)
			}
			if tc.symmetry && got > 1e-15 {
				t.Errorf("p %v symmetric about 1/2, gamma %v: error %v, want 0", tc.p, g, got)
			}
			if !tc.symmetry && want < 1e-3 {
				t.Errorf("p %v: error %v by enumeration: not a case that tells", tc.p, want)
			}
		}
	}
}

// TestExpectedTVErrorDraws checks that expectedTVError averages the error
// of the draws Actual.Sample makes from its seeded generator, to the bit,
// for several gammas under several distributions in turn, as a comparison
// measures them, so that the draws a Memo keeps for the next gamma
// (drawsIn) are those it would make.
func TestExpectedTVErrorDraws(t *testing.T) {
	const k, samples = 11, 200
	acts := []Actual{actualUniform, actualLow, {name: "U(0.4,0.9)", lo: 0.4, hi: 0.9}}
	memo := new(accountant.Memo)
	for i := range 4 {
		g := make(Gamma, k+1)
		for l := range g {
			g[l] = math.Mod(float64(l*(i+3))/7, 1)
		}
		for _, a := range acts {
			for _, seed := range []uint64{1, 2} {
				rng := rand.New(rand.NewPCG(seed, 0x5eed))
				var mean, m2 float64
				for n := 1; n <= samples; n++ {
					p, err := a.Sample(k, rng.Float64)
					if err != nil {
						t.Fatal(err)
					}
					e, err := g.TVError(p)
					if err != nil {
						t.Fatal(err)
					}
					delta := e - mean
					mean += delta / float64(n)
					m2 += float64(delta * (e - mean)) // as expectedTVError rounds
				}
				want := ErrorEstimate{Actual: a.name, Mean: mean, StdErr: math.Sqrt(m2 / (samples - 1) / samples), Samples: samples}
				got, err := expectedTVError(context.Background(), memo, g, a, samples, seed)
				if err != nil || got != want {
					t.Errorf("gamma %d, %v, seed %d: %+v, %v; want %+v", i, a, seed, got, err, want)
				}
			}
		}
	}
}

// TestSampleChecksK: Sample refuses a K out of [1, maxK], naming K, and a
// drawn distribution without a source of uniform numbers, where each
// panicked.
func TestSampleChecksK(t *testing.T) {
	u, err := ParseActual("U(0,1)")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{-1, 0, maxK + 1} {
		var pe *param.Error
		if _, err := u.Sample(k, rand.Float64); !errors.As(err, &pe) || pe.Name != "K" {
			t.Errorf("K = %d: %v, want a ParamError on K", k, err)
		}
	}
	if _, err := u.Sample(3, nil); err == nil {
		t.Error("U(0,1) sampled without a source of uniform numbers")
	}
	fixed, _ := ParseActual("0.7")
	if p, err := fixed.Sample(3, nil); err != nil || len(p) != 3 || p[2] != 0.7 {
		t.Errorf("a fixed distribution without a source: %v, %v", p, err)
	}
}

// TestAgreementChecksGamma: a gamma with a value outside [0, 1] or not
// symmetric has no agreement: one was NaN, +Inf or -0.37.
func TestAgreementChecksGamma(t *testing.T) {
	for _, g := range []Gamma{{1, math.NaN(), math.NaN(), 1}, {1, -5, -5, 1}, {1, math.Inf(1), math.Inf(1), 1}, {1, 0.2, 0.3, 1}} {
		if a, err := g.Agreement([]float64{0.5, 0.5, 0.5}); err == nil {
			t.Errorf("%v: agreement %v", g, a)
		}
	}
}

// TestMeasuresCheckGamma: TVError, LabelOne and Measure refuse a gamma
// of values outside [0, 1] or of an even K, as Agreement does: they gave
// a Pr[label = 1] of 1.3, errors and utilities of NaN, and a utility of 0
// for a nil gamma, without an error.
func TestMeasuresCheckGamma(t *testing.T) {
	fixed, err := ParseActual("0.9")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		g    Gamma
	}{
		{"nil", nil},
		{"empty", Gamma{}},
		{"even K", Gamma{1, 1, 1}},
		{"NaN", Gamma{math.NaN(), 1, 1, math.NaN()}},
		{"above 1", Gamma{2, 2}},
		{"negative", Gamma{-1, 0.5, 0.5, -1}},
	} {
		p := make([]float64, max(0, len(tc.g)-1))
		for i := range p {
			p[i] = 0.9
		}
		if v, err := tc.g.TVError(p); err == nil {
			t.Errorf("%s: TVError %v, want an error", tc.name, v)
		}
		if v, err := tc.g.LabelOne(p); err == nil {
			t.Errorf("%s: LabelOne %v, want an error", tc.name, v)
		}
		coeffs := make([]float64, len(tc.g)/2)
		for _, actuals := range [][]Actual{nil, {fixed}} {
			if m, err := tc.g.Measure(context.Background(), nil, coeffs, actuals); err == nil {
				t.Errorf("%s: Measure %+v, want an error", tc.name, m)
			}
		}
	}
}
