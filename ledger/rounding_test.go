package ledger

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
)

// TestChargeOfAnotherBuild: a line's charge is checked against its step
// as this build computes it, not to the bit. A darrm built otherwise
// (arm64, GOAMD64=v3) states quantities lower in their last digits
// (here a relative 2^-51, as a fused math library rounds them): the
// margin every charge carries covers that, so the line is accepted. A
// charge under the step's cost is refused; when only in rounding (a line
// of a darrm built otherwise before charges carried a margin), the
// refusal says so, and by more it is an edit.
func TestChargeOfAnotherBuild(t *testing.T) {
	budget := accountant.Guarantee{Eps: 2, Delta: 1e-5}
	gdp := accountant.Filter{Parts: []accountant.FilterPart{{Method: accountant.GDPFilter, Delta: 1e-5}, {Method: accountant.Simple}}}
	r := rule{version: Version, budget: budget, filter: &gdp}
	want, err := r.charge(confident)
	if err != nil {
		t.Fatal(err)
	}
	if want.Mu2 == nil || want.MuDelta == 0 {
		t.Fatalf("the step's charge %+v has no Gaussian-DP mu and tail to check", want)
	}
	scaled := func(f float64) *accountant.Charge {
		c := want
		mu2 := *want.Mu2 * f
		c.Mu2, c.MuDelta = &mu2, want.MuDelta*f
		return &c
	}
	for _, tc := range []struct {
		name     string
		charge   *accountant.Charge
		refused  bool
		rounding bool
	}{
		{"as this build charges it", &want, false, false},
		{"as another build charges it", scaled(1 - 0x1p-51), false, false},
		{"higher", scaled(1.5), false, false},
		{"under the step's cost in rounding", scaled(1 - 0x1p-29), true, true},
		{"under the step's cost by a millionth", scaled(1 - 1e-6), true, false},
		{"none", nil, true, false},
	} {
		s := spendOf(nil, Version, "r", "gnmax", confident, tc.charge)
		err := r.checkCharge(s, nil)
		if (err != nil) != tc.refused {
			t.Errorf("%s: %v, want refused %v", tc.name, err, tc.refused)
			continue
		}
		if tc.refused && (errors.As(err, new(*roundingError)) != tc.rounding || tc.charge != nil && !strings.Contains(err.Error(), "gdp_")) {
			t.Errorf("%s: %v, want a rounding error %v naming the quantity", tc.name, err, tc.rounding)
		}
	}
}

// TestLedgersBeforeTheMargin: ledgers that darrm wrote before charges
// carried a margin, one of each filter (testdata/premargin-*.ledger:
// `darrm ledger init --filter F` and a release of three labels on it, by
// darrm at 7f628127, on amd64's default build: DaRRM's one-bit labels at
// a profile point of the simple and advanced filters, darrm-one-vote's
// pure point by zcdp-filter and rdp-filter, progressive GNMax's draws by
// gdp-filter), still read whole: their charges are the least that cover
// their steps on that build.
func TestLedgersBeforeTheMargin(t *testing.T) {
	for _, f := range []string{"simple", "advanced-filter", "zcdp-filter", "rdp-filter", "gdp-filter"} {
		b, err := os.ReadFile(filepath.Join("testdata", "premargin-"+f+".ledger"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"charge":`) {
			t.Fatalf("%s: no line states a charge: the fixture checks nothing", f)
		}
		path := filepath.Join(t.TempDir(), f+".ledger")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := openErr(path, Options{StateDir: t.TempDir()}); err != nil {
			var ce *CorruptError
			if fusesMulAdd() && f == "gdp-filter" && errors.As(err, &ce) && ce.rounding {
				// A build that fuses multiply-adds computes this ledger's
				// μ² 3 units in the last place above the line's, which an
				// older darrm stated without a margin: refused, as the
				// docs say.
				continue
			}
			t.Errorf("%s: %v", f, err)
		}
	}
}

// mulAdd is x*y + z as written, which a build that fuses multiply-adds
// compiles to one operation, rounded once.
//
//go:noinline
func mulAdd(x, y, z float64) float64 { return x*y + z }

// fusesMulAdd reports whether this build fuses multiply-adds (arm64;
// amd64 at GOAMD64=v3): (1+2^-30)² is 1 + 2^-29 + 2^-60, which one
// rounding keeps and two lose.
func fusesMulAdd() bool {
	const x = 1 + 0x1p-30
	return mulAdd(x, x, -(1+0x1p-29)) != 0
}
