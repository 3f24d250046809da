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
	tab, err := ReadTable(f)
	if err != nil {
		t.Fatal(err)
	}
	return tab.Gamma
}
