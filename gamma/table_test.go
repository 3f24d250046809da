package gamma

import (
	"strings"
	"testing"
)

func TestReadTable(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Gamma
		wantM    float64
	}{
		{"plain", "1 0.5 0.5 1\n", Gamma{1, 0.5, 0.5, 1}, 0},
		{"commas and comments", "# gamma for K = 3\n1, 0.25,\n0.25, 1 # end\n", Gamma{1, 0.25, 0.25, 1}, 0},
		{"array", "[0.5, 0.5]", Gamma{0.5, 0.5}, 0},
		{"solve output", `{"K": 3, "m": 2, "eps": 0.1, "gamma": [1, 0.3, 0.3, 1], "certificate": {"max_f": 1}}`, Gamma{1, 0.3, 0.3, 1}, 2},
	} {
		tab, err := ReadTable(strings.NewReader(tc.in))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if len(tab.Gamma) != len(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tab.Gamma, tc.want)
			continue
		}
		for l := range tc.want {
			if tab.Gamma[l] != tc.want[l] {
				t.Errorf("%s: %v, want %v", tc.name, tab.Gamma, tc.want)
			}
		}
		if tc.wantM != 0 && (tab.M == nil || *tab.M != tc.wantM) {
			t.Errorf("%s: m = %v, want %v", tc.name, tab.M, tc.wantM)
		}
	}
}

func TestReadTableRejects(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "empty"},
		{"  \n ", "empty"},
		{"1 0.5 x 1", `"x" is not a number`},
		{"1 0.5 0.5", "3 values"},
		{"1 0.5 0.4 1", "symmetric"},
		{"1 NaN NaN 1", "gamma(1) = NaN"},
		{"1 1.5 1.5 1", "gamma(1) = 1.5"},
		{"[1, 0.5", "invalid JSON"},
		{`{"gamma": "no"}`, "invalid JSON"},
		{`{"K": 5, "gamma": [1, 1]}`, "K = 5"},
		{`{"gamma_opt": [1, 1]}`, `no "gamma"`},
	} {
		_, err := ReadTable(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadTable(%q) = %v, want an error mentioning %q", tc.in, err, tc.want)
		}
	}
}

func FuzzReadTable(f *testing.F) {
	for _, s := range []string{"1 0.5 0.5 1", "[1,1]", `{"K":1,"gamma":[1,1]}`, "# c\n0.1,0.1", "1e-3 1e-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tab, err := ReadTable(strings.NewReader(s))
		if err != nil {
			return
		}
		// Whatever is accepted is a valid noise function.
		if err := tab.Gamma.Check(); err != nil {
			t.Fatalf("accepted %q but Check fails: %v", s, err)
		}
	})
}
