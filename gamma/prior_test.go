package gamma

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestPriorCoefficients(t *testing.T) {
	// K = 3, mu = 3/4: b = (1, 9, 27, 27)/64, so c = (b2-b1, b3-b0) = (18, 26)/64.
	c, err := UniformPrior().Coefficients(3)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{18.0 / 64, 26.0 / 64} {
		if math.Abs(c[i]-want) > 1e-15 {
			t.Errorf("c[%d] = %v, want %v", i, c[i], want)
		}
	}
	// Per-teacher means equal to a common mean give the same objective.
	tp, _ := teacherPrior([]float64{0.85, 0.85, 0.85})
	c1, _ := tp.Coefficients(3)
	c2, _ := tpPrior().Coefficients(3)
	for i := range c1 {
		if math.Abs(c1[i]-c2[i]) > 1e-15 {
			t.Errorf("per-teacher prior c[%d] = %v, common mean %v", i, c1[i], c2[i])
		}
	}
	if _, err := tp.Coefficients(5); err == nil {
		t.Error("3 per-teacher means accepted for K = 5")
	}
}

// TestPriorObjectiveIsExpectation checks the closed form against the
// thesis' Monte Carlo objective (Algorithm 9): E_p[alpha_l - alpha_{K-l}]
// with p_i uniform on [0.5, 1].
func TestPriorObjectiveIsExpectation(t *testing.T) {
	const k, n = 7, 200000
	c, _ := UniformPrior().Coefficients(k)
	rng := rand.New(rand.NewPCG(7, 7))
	mc := make([]float64, len(c))
	p := make([]float64, k)
	for it := 0; it < n; it++ {
		for i := range p {
			p[i] = 0.5 + 0.5*rng.Float64()
		}
		alpha := mustPMF(t, p)
		for i := range mc {
			l := (k+1)/2 + i
			mc[i] += (alpha[l] - alpha[k-l]) / n
		}
	}
	for i := range c {
		if math.Abs(mc[i]-c[i]) > 3e-3 {
			t.Errorf("coefficient %d: closed form %v, Monte Carlo %v", i, c[i], mc[i])
		}
	}
}

func TestParsePrior(t *testing.T) {
	for in, want := range map[string]string{
		"uniform": "uniform", "TP": "tp", "0.8": "0.8", " 0.6, 0.7,0.9": "0.6,0.7,0.9",
	} {
		p, err := parsePrior(in)
		if err != nil {
			t.Errorf("parsePrior(%q): %v", in, err)
			continue
		}
		if p.String() != want {
			t.Errorf("parsePrior(%q) = %q, want %q", in, p, want)
		}
	}
	for _, in := range []string{"", "gauss", "0.5", "0.3", "1.2", "NaN", "0.6,x", "0.5,0.5", "0.4,0.9"} {
		if _, err := parsePrior(in); err == nil {
			t.Errorf("parsePrior(%q) accepted", in)
		}
	}
}

// TestPriorText: a prior reads from the text it prints, as a flag does,
// and keeps its coefficients.
func TestPriorText(t *testing.T) {
	for _, in := range []string{"uniform", "tp", "0.8", "0.6,0.7,0.9"} {
		var p, q Prior
		if err := p.UnmarshalText([]byte(in)); err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		b, _ := p.MarshalText()
		if err := q.UnmarshalText(b); err != nil || q.String() != in {
			t.Errorf("%q prints %q, which reads back as %q (%v)", in, b, q, err)
		}
		cp, _ := p.Coefficients(3)
		cq, _ := q.Coefficients(3)
		if !slices.Equal(cp, cq) {
			t.Errorf("%q: coefficients %v, read back %v", in, cp, cq)
		}
	}
	var p Prior
	if err := p.UnmarshalText([]byte("gauss")); err == nil || p.String() != "" {
		t.Errorf("gauss: %v, prior %q", err, p)
	}
}

func TestUtilityAndSurrogate(t *testing.T) {
	c, _ := UniformPrior().Coefficients(11)
	ones, _ := Const(11, 1)
	zeros, _ := Const(11, 0)
	if e := surrogateError(ones, c); e != 0 {
		t.Errorf("surrogate error of gamma = 1: %v, want 0", e)
	}
	var sum float64
	for _, v := range c {
		sum += v
	}
	if u := utility(ones, c); math.Abs(u-sum) > 1e-15 {
		t.Errorf("utility of gamma = 1: %v, want %v", u, sum)
	}
	// gamma = 0 releases a fair coin: error |1/2 - Pr[majority = 1]|.
	if e, want := surrogateError(zeros, c), sum/2; math.Abs(e-want) > 1e-15 {
		t.Errorf("surrogate error of gamma = 0: %v, want %v", e, want)
	}
}

func FuzzParsePrior(f *testing.F) {
	for _, s := range []string{"uniform", "tp", "0.8", "0.6,0.7,0.9", "", "1", "0.5,0.5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parsePrior(s)
		if err != nil {
			return
		}
		// An accepted prior round-trips and gives a usable objective.
		q, err := parsePrior(p.String())
		if err != nil || q.String() != p.String() {
			t.Fatalf("parsePrior(%q) = %q does not round-trip: %q, %v", s, p, q, err)
		}
		k := len(p.means)
		if k == 1 {
			k = 5
		}
		if k%2 == 0 {
			return
		}
		c, err := p.Coefficients(k)
		if err != nil {
			t.Fatalf("parsePrior(%q): Coefficients(%d): %v", s, k, err)
		}
		for _, v := range c {
			if math.IsNaN(v) {
				t.Fatalf("parsePrior(%q): NaN coefficient", s)
			}
		}
	})
}
