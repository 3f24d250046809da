package accountant

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/param"
)

// TestBadInput checks that every entry point rejects out-of-domain input with
// a parameter error naming the parameter and its value, and does not panic.
func TestBadInput(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	ok := Guarantee{0.1, 1e-5}
	run := PABI{G: 10, Epochs: 50, Dilution: 1}
	tests := []struct {
		name  string
		param string
		call  func() error
	}{
		{"eps 0", "eps", func() error { _, err := composeSimple(Guarantee{0, 0}, 3); return err }},
		{"eps < 0", "eps", func() error { _, err := composeGeneral(Guarantee{-1, 0}, 3, 0.1); return err }},
		{"eps NaN", "eps", func() error { _, err := composeOptimal(Guarantee{nan, 0}, 3, 0.1); return err }},
		{"eps Inf", "eps", func() error { _, err := composeOptimal(Guarantee{inf, 0}, 3, 0.1); return err }},
		{"delta 1", "delta", func() error { _, err := composeSimple(Guarantee{0.1, 1}, 3); return err }},
		{"delta < 0", "delta", func() error { _, err := composeGeneral(Guarantee{0.1, -1e-9}, 3, 0.1); return err }},
		{"delta NaN", "delta", func() error { _, err := composeGeneral(Guarantee{0.1, nan}, 3, 0.1); return err }},
		{"delta' 0", "delta'", func() error { _, err := composeGeneral(ok, 3, 0); return err }},
		{"delta' 1", "delta'", func() error { _, err := composeOptimal(ok, 3, 1); return err }},
		{"delta' NaN", "delta'", func() error { _, err := Composition{Method: General, DeltaPrime: nan}.Compose(ok, 3); return err }},
		{"k 0", "k", func() error { _, err := composeSimple(ok, 0); return err }},
		{"k < 0", "k", func() error { _, err := composeOptimal(ok, -4, 0.1); return err }},
		{"k too large for optimal", "k", func() error { _, err := composeOptimal(ok, maxOptimalSteps+1, 0.1); return err }},
		{"bad step in sequence", "eps", func() error { _, err := seqOf([]Guarantee{ok, {nan, 0}}); return err }},
		{"budget eps 0", "budget eps", func() error {
			_, err := (Composition{Method: General, DeltaPrime: 0.1}).MaxSteps(ok, Budget{Guarantee: Guarantee{0, 0.1}})
			return err
		}},
		{"budget delta Inf", "budget delta", func() error {
			_, err := (Composition{Method: Simple, DeltaPrime: 0}).MaxSteps(ok, Budget{Guarantee: Guarantee{1, inf}})
			return err
		}},
		{"step eps total NaN", "eps total", func() error { _, err := (Composition{Method: Optimal, DeltaPrime: 0.1}).StepEps(nan, 0, 3); return err }},
		{"step eps k 0", "k", func() error { _, err := (Composition{Method: Simple, DeltaPrime: 0}).StepEps(1, 0, 0); return err }},
		{"alpha 1", "alpha", func() error { _, err := PaperConversion.ConvertRDP(1, 1, 1e-5); return err }},
		{"SGM alpha 1", "alpha", func() error { _, err := sgmRDP(0.1, 1, 1); return err }},
		{"alpha NaN", "alpha", func() error { _, err := PaperConversion.ConvertRDP(1, nan, 1e-5); return err }},
		{"alpha Inf", "alpha", func() error { _, err := PaperConversion.ConvertRDP(1, inf, 1e-5); return err }},
		{"sigma 0", "sigma", func() error { _, err := gaussianRho(1, 0); return err }},
		{"sigma < 0", "sigma", func() error { _, _, err := run.Eps(-3, 1e-6, PaperConversion); return err }},
		{"sensitivity NaN", "sensitivity", func() error { _, err := gaussianRho(nan, 1); return err }},
		{"rho 0", "rho", func() error { _, _, err := ImprovedConversion.RhoToDP(0, 1e-5); return err }},
		{"conversion delta 0", "delta", func() error { _, _, err := PaperConversion.RhoToDP(1, 0); return err }},
		{"rdp < 0", "rdp", func() error { _, err := PaperConversion.ConvertRDP(-1, 2, 1e-5); return err }},
		{"pabi G 0", "G", func() error {
			_, _, err := PABI{Epochs: 5, Dilution: 1}.sigma(Guarantee{1, 1e-6}, PaperConversion)
			return err
		}},
		{"pabi epochs 0", "epochs", func() error {
			_, _, err := PABI{G: 1, Dilution: 1}.sigma(Guarantee{1, 1e-6}, PaperConversion)
			return err
		}},
		{"pabi dilution 0", "dilution", func() error { _, err := PABI{G: 1, Epochs: 5}.rho(1); return err }},
		{"pabi eps NaN", "eps", func() error { _, _, err := run.sigmaTable43(Guarantee{nan, 1e-6}); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var pe *param.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *param.Error", err)
			}
			if pe.Name != tt.param {
				t.Errorf("error names %q, want %q (%v)", pe.Name, tt.param, err)
			}
			if !strings.Contains(err.Error(), pe.Rule) || !strings.Contains(err.Error(), tt.param) {
				t.Errorf("message %q does not state the parameter and the rule", err)
			}
		})
	}
}

func FuzzParseMethod(f *testing.F) {
	for _, s := range []string{"simple", "general", "optimal", "", "Simple", "optimal "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var m Method
		err := m.UnmarshalText([]byte(s))
		if err != nil {
			return
		}
		if m.String() != s {
			t.Errorf("Method.UnmarshalText(%q), then String() = %q", s, m.String())
		}
	})
}

func FuzzParseConversion(f *testing.F) {
	for _, s := range []string{"paper", "improved", "", "Paper"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var c Conversion
		err := c.UnmarshalText([]byte(s))
		if err != nil {
			return
		}
		if c.String() != s {
			t.Errorf("Conversion.UnmarshalText(%q), then String() = %q", s, c.String())
		}
	})
}

func TestEnumStrings(t *testing.T) {
	if Method(9).String() != "Method(9)" || Conversion(-1).String() != "Conversion(-1)" {
		t.Error("out-of-range enum strings")
	}
	for _, m := range []Method{Simple, General, Optimal} {
		if !strings.Contains(m.Reference(), "Thm") && !strings.Contains(m.Reference(), "Theorem") {
			t.Errorf("%v reference %q", m, m.Reference())
		}
	}
}

// TestFilterReferenceArticle: a filter's total names its budget with the
// article its reference reads with ("an advanced-composition filter").
func TestFilterReferenceArticle(t *testing.T) {
	for m, want := range map[Method]string{AdvancedFilter: "the budget of an advanced-composition filter", GDPFilter: "the budget of a Gaussian-DP filter", ZCDPFilter: "the budget of a zCDP filter"} {
		if got := (Total{Method: m, Filter: true}).Reference(); !strings.HasPrefix(got, want) {
			t.Errorf("%v: %q, want it to begin %q", m, got, want)
		}
	}
}
