package gamma

import (
	"context"
	"errors"
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/internal/param"
)

func TestVerifyRejectsInfeasibleGamma(t *testing.T) {
	// Releasing the exact majority (gamma = 1) with an allowance of one
	// teacher is not private: one teacher can swing the majority.
	p := constraints.New(11, 1, 0.1, 1e-5)
	ones, _ := Const(11, 1)
	cert, err := Verify(context.Background(), p, ones, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cert.Status != Violated || cert.Ratio <= 1 {
		t.Errorf("gamma = 1 at m = 1: %v with ratio %v, want violated", cert.Status, cert.Ratio)
	}
	// Nudging a certified gamma_opt up by 1e-6 breaks it.
	bumped := optK11M3(t).Scale(1 + 1e-6)
	for l := range bumped {
		bumped[l] = math.Min(bumped[l], 1)
	}
	cert, err = Verify(context.Background(), constraints.New(11, 3, 0.1, 1e-5), bumped, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cert.Status != Violated {
		t.Errorf("gamma_opt scaled by 1+1e-6: %v (ratio %.12f), want violated", cert.Status, cert.Ratio)
	}
}

func TestVerifyWorstCase(t *testing.T) {
	p := constraints.New(11, 3, 0.1, 1e-5)
	g, _ := Sub(11, 3)
	cert, err := Verify(context.Background(), p, g, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := p.Cost(cert.Worst, g)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f-cert.MaxF) > cert.ErrBound {
		t.Errorf("worst configuration %v costs %v, certificate says %v", cert.Worst, f, cert.MaxF)
	}
	if cert.Configs.Int64() != 31824 {
		t.Errorf("configs checked = %v, want C(18, 7) = 31824", cert.Configs)
	}
	if len(cert.Corners) != 8 {
		t.Errorf("%d corners, want 8", len(cert.Corners))
	}
}

// TestSubAtSimpleCompositionIsPrivate: subsampling m teachers is
// (m·eps, m·Delta)-DP by simple composition (Theorem 3.3.2), so Verify must
// not call it violated at delta = m·Delta.
func TestSubAtSimpleCompositionIsPrivate(t *testing.T) {
	for _, m := range []int{1, 2, 3, 5} {
		p := constraints.Problem{K: 11, M: float64(m), Eps: 0.1, Delta: 1e-5, TargetDelta: float64(m) * 1e-5}
		g, _ := Sub(11, m)
		cert, err := Verify(context.Background(), p, g, VerifyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cert.Status == Violated {
			t.Errorf("gamma_Sub(%d) at (m·eps, m·Delta): violated, ratio %.15f", m, cert.Ratio)
		}
	}
}

func TestCertifyScalesUniformly(t *testing.T) {
	p := constraints.New(11, 2, 0.1, 1e-5)
	ones, _ := Const(11, 1)
	g, cert, err := Certify(context.Background(), p, ones, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cert.Status != Certified {
		t.Fatalf("Certify returned %v", cert.Status)
	}
	for l := range g {
		if g[l] != g[0] || !(g[0] > 0 && g[0] < 1) {
			t.Fatalf("certified gamma %v is not a uniform scaling of gamma = 1", g)
		}
	}
	// RR's success probability cannot exceed the budget ratio found here:
	// scaled further up by 1e-9 it must fail.
	up := g.Scale(1 + 1e-9)
	if c, _ := Verify(context.Background(), p, up, VerifyOptions{}); c.Status == Certified {
		t.Errorf("scaling %v by 1+1e-9 is still certified: Certify scaled too far", g[0])
	}
}

// TestCertifyFromSeparation: Certify started from a separation already
// run of its gamma returns what it returns from its own pass, and refuses
// a separation that covers only a shard of the multisets.
func TestCertifyFromSeparation(t *testing.T) {
	ctx := context.Background()
	p := constraints.New(11, 2, 0.1, 1e-5)
	ones, _ := Const(11, 1)
	sep, err := p.Separate(ctx, ones, constraints.SeparateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, wantCert, err := Certify(ctx, p, ones, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, gotCert, err := Certify(ctx, p, ones, VerifyOptions{Separation: &sep})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) || gotCert.MaxF != wantCert.MaxF || gotCert.Status != wantCert.Status {
		t.Errorf("from a separation: %v (%v, max f %v), from its own pass: %v (%v, max f %v)", got, gotCert.Status, gotCert.MaxF, want, wantCert.Status, wantCert.MaxF)
	}
	shard, err := p.Separate(ctx, ones, constraints.SeparateOptions{Shard: 0, Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Certify(ctx, p, ones, VerifyOptions{Separation: &shard}); err == nil || !strings.Contains(err.Error(), "needs all of them") {
		t.Errorf("from a shard of the separation: %v, want a refusal", err)
	}
}

// TestCertifyTinyBudget: a budget below what floating point can certify
// is a parameter of the problem, m·eps, not a failure.
func TestCertifyTinyBudget(t *testing.T) {
	p := constraints.New(11, 1, 1e-17, 0)
	ones, _ := Const(11, 1)
	_, _, err := Certify(context.Background(), p, ones, VerifyOptions{})
	var pe *param.Error
	if !errors.As(err, &pe) || pe.Name != "m·eps" {
		t.Errorf("Certify at m·eps = 1e-17: %v, want a ParamError on m·eps", err)
	}
}

func TestVerifyBadInput(t *testing.T) {
	p := constraints.New(11, 3, 0.1, 1e-5)
	for _, g := range []Gamma{{1, 1}, make(Gamma, 11), {1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.9}} {
		if _, err := Verify(context.Background(), p, g, VerifyOptions{}); err == nil {
			t.Errorf("Verify accepted %v", g)
		}
	}
}

// TestCertificateErr: a certified gamma has no error; a tight or violated
// one an error wrapping ErrNotCertified that says the verdict and the
// ratio, from Verify's own certificates.
func TestCertificateErr(t *testing.T) {
	p := constraints.New(11, 1, 0.1, 1e-5)
	ones, _ := Const(11, 1)
	zeros, _ := Const(11, 0)
	for _, c := range []struct {
		g    Gamma
		want Status
	}{{zeros, Certified}, {ones, Violated}} {
		cert, err := Verify(context.Background(), p, c.g, VerifyOptions{})
		if err != nil || cert.Status != c.want {
			t.Fatalf("Verify: %v, %v, want %v", cert.Status, err, c.want)
		}
		err = cert.Err()
		switch {
		case c.want == Certified && err != nil:
			t.Errorf("certified: %v", err)
		case c.want != Certified && (!errors.Is(err, ErrNotCertified) || !strings.Contains(err.Error(), "gamma is not certified (m·eps, delta)-DP: violated, max f / budget = ")):
			t.Errorf("violated: %v", err)
		}
	}
}

// TestVerifyInterrupted: a certification stopped by its context says
// what it was doing, in words (it said "verify K=11: context canceled",
// which the command prints after "interrupted:").
func TestVerifyInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Verify(ctx, constraints.New(11, 3, 0.1, 1e-5), optK11M3(t), VerifyOptions{})
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "certifying gamma (K = 11): ") {
		t.Errorf("Verify on a cancelled context: %v", err)
	}
}

// TestCertifiedSumIsExact: a certificate is Certified only when max f plus
// the rounding bound is at most the budget as real numbers. The bound
// covers the errors of max f and of the budget, not that of the sum:
// compared in float64, a sum up to half an ulp above the budget rounded
// down onto it and passed.
func TestCertifiedSumIsExact(t *testing.T) {
	for _, p := range []constraints.Problem{
		constraints.New(11, 3, 0.1, 1e-5),
		{K: 1, M: 1, Eps: 0.1},
		{K: 101, M: 2, Eps: 0.1},
		constraints.New(41, 10, 0.1, 1e-3),
		{K: 11, M: 5, Eps: 10, TargetDelta: 0.5},
		constraints.NewOneVote(11, 0.3, 1e-5),
	} {
		b, eb := p.Budget(), p.ErrBound()
		sum := func(x float64) *big.Rat {
			r := new(big.Rat).SetFloat64(x)
			return r.Add(r, new(big.Rat).SetFloat64(eb))
		}
		x := b - eb
		for range 64 {
			x = math.Nextafter(x, math.Inf(-1))
		}
		certified := 0
		for range 128 {
			x = math.Nextafter(x, math.Inf(1))
			c := newCertificate(p, constraints.Separation{MaxF: x, ErrBound: eb, Configs: p.NumConfigs()})
			if c.Status != Certified {
				continue
			}
			certified++
			if sum(x).Cmp(new(big.Rat).SetFloat64(b)) > 0 {
				t.Errorf("%+v: max f %v + bound %v > budget %v, but %v", p, x, eb, b, c.Status)
			}
		}
		if certified == 0 || certified == 128 {
			t.Errorf("%+v: %d of 128 maxima around budget - bound certified: the scan missed the edge", p, certified)
		}
	}
}
