package gamma

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/internal/param"
)

// subByEnumeration computes gamma_Sub(l) for l >= H by enumerating every
// s-subset of K teachers of which the first l vote 1.
func subByEnumeration(k, s, l int) float64 {
	var win, total float64
	var rec func(start, chosen, ones int)
	rec = func(start, chosen, ones int) {
		if chosen == s {
			total++
			switch {
			case 2*ones > s:
				win++
			case 2*ones == s:
				win += 0.5
			}
			return
		}
		for i := start; i < k; i++ {
			o := ones
			if i < l {
				o++
			}
			rec(i+1, chosen+1, o)
		}
	}
	rec(0, 0, 0)
	return 2*win/total - 1
}

func TestSubMatchesEnumeration(t *testing.T) {
	for _, k := range []int{1, 3, 5, 9, 11} {
		for s := 1; s <= k; s++ {
			g, err := Sub(k, s)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.check(); err != nil {
				t.Fatalf("Sub(%d, %d): %v", k, s, err)
			}
			for l := (k + 1) / 2; l <= k; l++ {
				if want := subByEnumeration(k, s, l); math.Abs(g[l]-want) > 1e-14 {
					t.Errorf("Sub(%d, %d)(%d) = %v, enumeration %v", k, s, l, g[l], want)
				}
			}
		}
	}
}

func TestSubClosedForms(t *testing.T) {
	k := 101
	g1, _ := Sub(k, 1) // Lemma 3.4.2: gamma(l) = |2l-K|/K
	gk, _ := Sub(k, k) // all teachers: the exact majority
	for l := 0; l <= k; l++ {
		if want := math.Abs(float64(2*l-k)) / float64(k); math.Abs(g1[l]-want) > 1e-15 {
			t.Errorf("Sub(K, 1)(%d) = %v, want %v", l, g1[l], want)
		}
		if gk[l] != 1 {
			t.Errorf("Sub(K, K)(%d) = %v, want 1", l, gk[l])
		}
	}
}

func TestHypergeometricMatchesBig(t *testing.T) {
	for _, tc := range []struct{ k, l, s int }{{11, 6, 3}, {101, 60, 10}, {1001, 700, 40}, {41, 41, 5}, {41, 0, 5}, {9, 5, 9}} {
		pmf := hypergeometric(tc.k, tc.l, tc.s)
		den := new(big.Int).Binomial(int64(tc.k), int64(tc.s))
		for j := 0; j <= tc.s; j++ {
			num := new(big.Int).Mul(new(big.Int).Binomial(int64(tc.l), int64(j)), new(big.Int).Binomial(int64(tc.k-tc.l), int64(tc.s-j)))
			if j > tc.l || tc.s-j > tc.k-tc.l {
				num.SetInt64(0)
			}
			want, _ := new(big.Rat).SetFrac(num, den).Float64()
			if d := math.Abs(pmf[j] - want); d > 1e-14*math.Max(want, 1e-300) && d > 1e-300 {
				t.Errorf("hypergeometric(%d, %d, %d)[%d] = %v, exact %v", tc.k, tc.l, tc.s, j, pmf[j], want)
			}
		}
	}
}

func TestDSub(t *testing.T) {
	k := 11
	for _, m := range []float64{1, 1.5, 2, 2.99, 3, 5, 5.5, 6, 7.25, 11} {
		g, err := DSub(k, m)
		if err != nil {
			t.Fatal(err)
		}
		// Theorem 3.5.1 at the integer s = floor(m): a non-integer m
		// gets the gamma of the allowance below it, never above.
		s := int(math.Floor(m))
		var want Gamma
		if 2*s >= k+1 {
			want, _ = Const(k, 1)
		} else {
			want, _ = Sub(k, 2*s-1)
		}
		for l := range g {
			if g[l] != want[l] {
				t.Errorf("DSub(%d, %v)(%d) = %v, want %v", k, m, l, g[l], want[l])
			}
		}
	}
}

// TestDSubBadM checks that an allowance out of [1, K] is refused with an
// error naming m, its value and the rule.
func TestDSubBadM(t *testing.T) {
	for _, m := range []float64{0, 0.5, -1, 11.5, 12, math.NaN(), math.Inf(1)} {
		_, err := DSub(11, m)
		if err == nil {
			t.Errorf("DSub(11, %v): no error", m)
			continue
		}
		want := fmt.Sprintf("m = %v: must be in [1, K] = [1, 11]", m)
		if !strings.Contains(err.Error(), want) {
			t.Errorf("DSub(11, %v) = %q, want it to contain %q", m, err, want)
		}
	}
}

func TestBaselineBadInput(t *testing.T) {
	for name, f := range map[string]func() (Gamma, error){
		"Sub even K":     func() (Gamma, error) { return Sub(10, 3) },
		"Sub s=0":        func() (Gamma, error) { return Sub(11, 0) },
		"Sub s>K":        func() (Gamma, error) { return Sub(11, 12) },
		"DSub m=0":       func() (Gamma, error) { return DSub(11, 0) },
		"Const p>1":      func() (Gamma, error) { return Const(11, 1.5) },
		"Const p NaN":    func() (Gamma, error) { return Const(11, math.NaN()) },
		"Const K even":   func() (Gamma, error) { return Const(4, 0.5) },
		"DSub K even":    func() (Gamma, error) { return DSub(4, 1) },
		"Sub negative K": func() (Gamma, error) { return Sub(-1, 1) },
	} {
		if _, err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		g    Gamma
		want string
	}{
		{Gamma{1}, "1 values"},
		{Gamma{1, 1, 1}, "3 values: need K+1 values for an odd K, an even number (2 for K = 1 or 4 for K = 3)"},
		{Gamma{0.5, 0.4}, "symmetric"},
		{Gamma{1, 0.2, 0.3, 1}, "symmetric"},
		{Gamma{1.1, 1.1}, "[0, 1]"},
		{Gamma{-0.1, -0.1}, "[0, 1]"},
		{Gamma{math.NaN(), math.NaN()}, "[0, 1]"},
	} {
		err := tc.g.check()
		if err == nil {
			t.Errorf("Check(%v) accepted", tc.g)
		} else if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%v) = %q, want mention of %q", tc.g, err, tc.want)
		}
	}
	if err := (Gamma{0.3, 1, 1, 0.3}).check(); err != nil {
		t.Errorf("valid gamma rejected: %v", err)
	}
}

// TestCheckForSaysTheNumber: a gamma of the wrong length for a known K is
// told the number of values it needs.
func TestCheckForSaysTheNumber(t *testing.T) {
	for _, g := range []Gamma{make(Gamma, 8), make(Gamma, 11), make(Gamma, 13)} {
		err := g.CheckFor(11)
		if err == nil || !strings.Contains(err.Error(), "want K+1 = 12") {
			t.Errorf("CheckFor(11) of %d values = %v, want the number 12", len(g), err)
		}
		if _, err := Verify(context.Background(), constraints.New(11, 3, 0.1, 1e-5), g, VerifyOptions{}); err == nil || !strings.Contains(err.Error(), "want K+1 = 12") {
			t.Errorf("Verify of %d values at K = 11 = %v, want the number 12", len(g), err)
		}
	}
	if err := (Gamma{1, 1}).CheckFor(1); err != nil {
		t.Errorf("valid gamma rejected: %v", err)
	}
}

// TestConstructorsBoundK: every constructor of a noise function, and the
// prior's coefficients, refuse a K out of [1, maxK] or even, naming K,
// before allocating by it: K = 2^27+1 took gamma_Sub 3 GiB, and 2^31 the
// prior's coefficients 16 GiB.
func TestConstructorsBoundK(t *testing.T) {
	for _, k := range []int{-1, 0, 4, maxK + 2, 1<<31 + 1, math.MaxInt} {
		for name, make := range map[string]func(int) error{
			"Sub":   func(k int) error { _, err := Sub(k, 1); return err },
			"DSub":  func(k int) error { _, err := DSub(k, 1); return err },
			"Const": func(k int) error { _, err := Const(k, 0.5); return err },
			"GNMax": func(k int) error { _, err := GNMax(k, 1); return err },
			"Coefficients": func(k int) error {
				_, err := UniformPrior().Coefficients(k)
				return err
			},
		} {
			var pe *param.Error
			if err := make(k); !errors.As(err, &pe) || pe.Name != "K" {
				t.Errorf("%s at K = %d: %v, want a ParamError on K", name, k, err)
			}
		}
	}
	if _, err := Const(maxK, 0.5); err != nil {
		t.Errorf("Const at K = maxK: %v", err)
	}
}

// TestFromUpper: the noise function of its upper half, symmetric and
// clamped to [0, 1]; an upper half of another length, or an even K,
// panics naming them (a shorter one left the rest 0 unsaid, a longer one
// panicked on an index).
func TestFromUpper(t *testing.T) {
	if g := FromUpper(5, []float64{0.2, 1.5, -1e-12}); !slices.Equal(g, Gamma{0, 1, 0.2, 0.2, 1, 0}) {
		t.Errorf("FromUpper(5, ...) = %v", g)
	}
	for _, tc := range []struct {
		k     int
		upper []float64
	}{{5, []float64{1, 1}}, {5, []float64{1, 1, 1, 1}}, {4, []float64{1, 1}}, {0, nil}, {-1, nil}} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "gamma: FromUpper: K =") {
					t.Errorf("FromUpper(%d, %d values): recovered %v, want a panic naming them", tc.k, len(tc.upper), r)
				}
			}()
			FromUpper(tc.k, tc.upper)
		}()
	}
}
