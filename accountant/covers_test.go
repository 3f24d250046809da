package accountant

import (
	"math"
	"strings"
	"testing"
)

// TestCovers: a charge covers its step as Charge states it, as a darrm
// built otherwise states it, every quantity lower in its last digits (by
// 2^-51 here, two units in the last place, under the margin Charge
// adds), and above it; a
// quantity below what the step costs, a point below the one Charge's
// rule chooses (even one of the step's profile, chosen after the fact),
// another guarantee, a quantity the filter has no part for, or one
// missing does not.
func TestCovers(t *testing.T) {
	budget := Guarantee{Eps: 2, Delta: 1e-5}
	all := Filter{Parts: []FilterPart{
		{Method: GDPFilter, Delta: 4e-6}, {Method: ZCDPFilter, Delta: 2e-6}, {Method: RenyiFilter, Delta: 2e-6, Order: 8},
		{Method: AdvancedFilter, Delta: 1e-6, Slack: 5e-7}, {Method: Simple, Delta: 5e-7},
	}}
	// noPure has a pair with a probability 0 the other lacks: no pure
	// point, so the points are on its profile (mostStepsPoint).
	noPure := Spend{Kind: OneBitSpend, Guarantee: Guarantee{Eps: 1, Delta: 1e-3}, Bits: []BitPair{{0.6, 0.4}, {1e-9, 0}}}
	lower := func(x float64) float64 { return x * (1 - 0x1p-51) }
	under := func(x float64) float64 { return x * (1 - 0x1p-44) }
	for name, s := range map[string]Spend{"darrm-one-vote": oneVoteStep, "Confident-GNMax": confidentStep, "GNMax": gnmaxStep, "no pure point": noPure} {
		c, err := all.Charge(testMemo, s, budget)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := all.Covers(testMemo, s, budget, c); err != nil {
			t.Errorf("%s: the charge Charge states: %v", name, err)
		}
		type edit struct {
			what  string
			apply func(c *Charge)
		}
		// Lower in the last digits, as another build may compute them.
		for _, e := range []edit{
			{"every quantity", func(c *Charge) {
				for _, p := range []*float64{c.Rho, c.Mu2, c.Renyi} {
					if p != nil {
						*p = lower(*p)
					}
				}
				c.MuDelta = lower(c.MuDelta)
				// A point at the step's guarantee is read from its
				// description, not computed; a profile point's ε is the
				// budget's share, the same on every build for the simple
				// part.
				for _, p := range []*Guarantee{c.Point, c.Advanced} {
					switch {
					case *p == s.Guarantee:
					case p.Delta == 0:
						p.Eps = lower(p.Eps)
					default:
						p.Delta = lower(p.Delta)
					}
				}
			}},
			{"the simple point's ε higher", func(c *Charge) { c.Point.Eps = c.Point.Eps*1.5 + 0.01 }},
			{"the advanced point's δ higher", func(c *Charge) { c.Advanced.Delta = c.Advanced.Delta*2 + 1e-12 }},
		} {
			d := clone(c)
			e.apply(&d)
			if err := all.Covers(testMemo, s, budget, d); err != nil {
				t.Errorf("%s, %s: %v", name, e.what, err)
			}
		}
		refused := []edit{
			{"another guarantee", func(c *Charge) { c.Eps = lower(c.Eps) }},
			{"the simple point below the profile", func(c *Charge) { c.Point.Eps = under(c.Point.Eps) / 2 }},
			{"the advanced point's δ under the step's", func(c *Charge) {
				if c.Advanced.Delta > 0 {
					c.Advanced.Delta = under(c.Advanced.Delta)
				} else {
					c.Advanced.Eps = under(c.Advanced.Eps)
				}
			}},
		}
		for what, field := range map[string]func(c *Charge) **float64{
			"rho":     func(c *Charge) **float64 { return &c.Rho },
			"gdp_mu2": func(c *Charge) **float64 { return &c.Mu2 },
			"rdp":     func(c *Charge) **float64 { return &c.Renyi },
		} {
			if *field(&c) == nil {
				continue
			}
			refused = append(refused,
				edit{what + " under the step's", func(c *Charge) { **field(c) = under(**field(c)) }},
				edit{what + " missing", func(c *Charge) { *field(c) = nil }})
		}
		if c.MuDelta > 0 {
			refused = append(refused, edit{"gdp_delta under the step's", func(c *Charge) { c.MuDelta = under(c.MuDelta) }})
		}
		for _, e := range refused {
			d := clone(c)
			e.apply(&d)
			if err := all.Covers(testMemo, s, budget, d); err == nil {
				t.Errorf("%s, %s: covers", name, e.what)
			} else if strings.Contains(err.Error(), "%!") {
				t.Errorf("%s, %s: %v", name, e.what, err)
			}
		}
	}
	// A point of the profile other than the rule's, with a smaller ε and
	// a larger δ: a choice made after the step ran, which no filter allows.
	c, err := all.Charge(testMemo, noPure, budget)
	if err != nil {
		t.Fatal(err)
	}
	if d := bitProfile(noPure.Bits, 0.25); !(c.Point.Eps > 0.25 && d < 0.2) {
		t.Fatalf("the simple point %v, the profile at 0.25 %g: the case shows nothing", *c.Point, d)
	}
	c.Point = &Guarantee{Eps: 0.25, Delta: 0.2}
	if err := all.Covers(testMemo, noPure, budget, c); err == nil {
		t.Error("a point of the profile other than the one the rule chooses covers the step")
	}
	simple := part(Simple, 1e-6)
	c, err = simple.Charge(testMemo, oneVoteStep, budget)
	if err != nil {
		t.Fatal(err)
	}
	rho := 0.1
	d := clone(c)
	d.Rho = &rho
	if err := simple.Covers(testMemo, oneVoteStep, budget, d); err == nil {
		t.Error("a charge with a zCDP slope covers a step under a filter with no zCDP part")
	}
	d = clone(c)
	d.MuDelta = 1e-60
	if err := simple.Covers(testMemo, oneVoteStep, budget, d); err == nil {
		t.Error("a charge with a Gaussian-DP tail covers a step under a filter with no Gaussian-DP part")
	}
}

// clone returns c with copies of the values its fields point to.
func clone(c Charge) Charge {
	cp := func(p *float64) *float64 {
		if p == nil {
			return nil
		}
		v := *p
		return &v
	}
	d := c
	d.Rho, d.Mu2, d.Renyi = cp(c.Rho), cp(c.Mu2), cp(c.Renyi)
	if c.Point != nil {
		p := *c.Point
		d.Point = &p
	}
	if c.Advanced != nil {
		p := *c.Advanced
		d.Advanced = &p
	}
	return d
}

// TestChargeMargin: Charge states each quantity it computes above what
// it computed, by at least the margin and less than twice it.
func TestChargeMargin(t *testing.T) {
	for _, x := range []float64{1e-300, 2.5e-3, 0.2, 1, 1e6} {
		m := margined(x)
		if r := (m - x) / x; !(r >= buildMargin && r < 2*buildMargin) || math.IsNaN(r) {
			t.Errorf("margined(%g) = %g: relative margin %g, want in [%g, %g)", x, m, r, buildMargin, 2*buildMargin)
		}
	}
	if margined(0) != 0 {
		t.Errorf("margined(0) = %g", margined(0))
	}
}
