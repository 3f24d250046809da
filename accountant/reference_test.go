package accountant

import (
	"fmt"
	"testing"
)

// round formats x with the number of decimals of the printed value want, so
// that a reference value is compared to exactly the digits the paper prints.
func round(x float64, want string) string {
	decimals := 0
	for i, c := range want {
		if c == '.' {
			decimals = len(want) - i - 1
		}
	}
	return fmt.Sprintf("%.*f", decimals, x)
}

// TestGeneralCompositionReference reproduces every general-composition value
// of the thesis: Table B.1 (m = ε'/ε, δ, τ, λ) and the totals of Tables 3.2,
// B.3, B.5 and B.7 (δ' = 1e-4).
func TestGeneralCompositionReference(t *testing.T) {
	tests := []struct {
		source     string
		step       Guarantee
		k          int
		deltaPrime float64
		ratio      string // ε'/ε when printed as m or τ, else ""
		eps, delta string
	}{
		{"Table B.1 M=10", Guarantee{0.1, 1e-5}, 10, 0.1, "6.4521", "0.6452", "0.1001"},
		{"Table B.1 M=13", Guarantee{0.1, 1e-5}, 13, 0.1, "7.5742", "0.7574", "0.1001"},
		{"Table B.1 M=15", Guarantee{0.1, 1e-5}, 15, 0.1, "8.2708", "0.8271", "0.1001"},
		{"Table B.1 M=20", Guarantee{0.1, 1e-5}, 20, 0.1, "9.8823", "0.9882", "0.1002"},
		{"Table B.1 tau, lambda (K=35)", Guarantee{0.1, 1e-5}, 35, 0.1, "14.0328", "", "0.1003"},

		{"Table 3.2 MNIST Q=20", Guarantee{0.2676, 3e-4}, 20, 1e-4, "", "5.352", "0.006"},
		{"Table 3.2 MNIST Q=50", Guarantee{0.2676, 3e-4}, 50, 1e-4, "", "9.901", "0.015"},
		{"Table 3.2 MNIST Q=100", Guarantee{0.2676, 3e-4}, 100, 1e-4, "", "15.044", "0.030"},
		{"Table 3.2 Fashion Q=20", Guarantee{0.2556, 3e-4}, 20, 1e-4, "", "5.112", "0.006"},
		{"Table 3.2 Fashion Q=50", Guarantee{0.2556, 3e-4}, 50, 1e-4, "", "9.382", "0.015"},
		{"Table 3.2 Fashion Q=100", Guarantee{0.2556, 3e-4}, 100, 1e-4, "", "14.219", "0.030"},

		{"Table B.3 MNIST Q=20", Guarantee{0.0892, 1e-4}, 20, 1e-4, "", "1.704", "0.002"},
		{"Table B.3 MNIST Q=50", Guarantee{0.0892, 1e-4}, 50, 1e-4, "", "2.837", "0.005"},
		{"Table B.3 MNIST Q=100", Guarantee{0.0892, 1e-4}, 100, 1e-4, "", "4.202", "0.010"},
		{"Table B.3 Fashion Q=20", Guarantee{0.0852, 1e-4}, 20, 1e-4, "", "1.620", "0.002"},
		{"Table B.3 Fashion Q=50", Guarantee{0.0852, 1e-4}, 50, 1e-4, "", "2.695", "0.005"},
		{"Table B.3 Fashion Q=100", Guarantee{0.0852, 1e-4}, 100, 1e-4, "", "3.988", "0.010"},

		{"Table B.5 MNIST Q=20", Guarantee{0.4460, 5e-4}, 20, 1e-4, "", "8.920", "0.010"},
		{"Table B.5 MNIST Q=50", Guarantee{0.4460, 5e-4}, 50, 1e-4, "", "18.428", "0.025"},
		{"Table B.5 MNIST Q=100", Guarantee{0.4460, 5e-4}, 100, 1e-4, "", "28.926", "0.049"},
		{"Table B.5 Fashion Q=20", Guarantee{0.4260, 5e-4}, 20, 1e-4, "", "8.520", "0.010"},
		{"Table B.5 Fashion Q=50", Guarantee{0.4260, 5e-4}, 50, 1e-4, "", "17.398", "0.025"},
		{"Table B.5 Fashion Q=100", Guarantee{0.4260, 5e-4}, 100, 1e-4, "", "27.223", "0.049"},

		{"Table B.7 MNIST Q=20", Guarantee{0.6244, 7e-4}, 20, 1e-4, "", "12.488", "0.014"},
		{"Table B.7 MNIST Q=50", Guarantee{0.6244, 7e-4}, 50, 1e-4, "", "28.392", "0.035"},
		{"Table B.7 MNIST Q=100", Guarantee{0.6244, 7e-4}, 100, 1e-4, "", "45.683", "0.068"},
		{"Table B.7 Fashion Q=20", Guarantee{0.5964, 7e-4}, 20, 1e-4, "", "11.928", "0.014"},
		{"Table B.7 Fashion Q=50", Guarantee{0.5964, 7e-4}, 50, 1e-4, "", "26.738", "0.035"},
		{"Table B.7 Fashion Q=100", Guarantee{0.5964, 7e-4}, 100, 1e-4, "", "42.873", "0.068"},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			g, err := composeGeneral(tt.step, tt.k, tt.deltaPrime)
			if err != nil {
				t.Fatal(err)
			}
			if tt.ratio != "" {
				if got := round(g.Eps/tt.step.Eps, tt.ratio); got != tt.ratio {
					t.Errorf("eps'/eps = %v, printed %s", g.Eps/tt.step.Eps, tt.ratio)
				}
			}
			if tt.eps != "" {
				if got := round(g.Eps, tt.eps); got != tt.eps {
					t.Errorf("eps' = %v, printed %s", g.Eps, tt.eps)
				}
			}
			if got := round(g.Delta, tt.delta); got != tt.delta {
				t.Errorf("delta = %v, printed %s", g.Delta, tt.delta)
			}
		})
	}
}
