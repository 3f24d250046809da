package gamma

import (
	"os"
	"testing"
)

// optK11M3 is gamma_opt for constraints.New(11, 3, 0.1, 1e-5) as darrm
// solve wrote it (testdata/gamma-K11-m3.json; package optimal checks that
// it is current).
func optK11M3(t testing.TB) Gamma {
	t.Helper()
	f, err := os.Open("../testdata/gamma-K11-m3.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tab, err := ReadTable(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	return tab.Gamma
}

// parseActuals reads actual distributions (ParseActual), refusing the
// list at the first it cannot read.
func parseActuals(ss []string) ([]Actual, error) {
	actuals := make([]Actual, len(ss))
	for i, s := range ss {
		var err error
		if actuals[i], err = ParseActual(s); err != nil {
			return nil, err
		}
	}
	return actuals, nil
}
