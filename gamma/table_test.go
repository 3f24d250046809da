package gamma

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
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
		{"solve's CSV", "# {\"K\":3,\"m\":2,\"eps\":0.1}\nl,gamma_opt,gamma_sub\n0,1,1\n1,0.3,0.2\n2,0.3,0.2\n3,1,1\n", Gamma{1, 0.3, 0.3, 1}, 2},
		{"a list under the problem line", "# {\"m\":2}\n1 0.3 0.3 1\n", Gamma{1, 0.3, 0.3, 1}, 2},
	} {
		tab, err := ReadTable(strings.NewReader(tc.in), 0)
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

// TestReadTableNegativeZero reads a zero given as -0, in each form, as 0:
// it was kept negative, and darrm verify and separate printed -0 in JSON.
func TestReadTableNegativeZero(t *testing.T) {
	for _, in := range []string{"-0 0.5 0.5 0\n", "[-0, 0.5, 0.5, 0]", `{"gamma": [-0, 0.5, 0.5, 0]}`, "l,gamma_opt\n0,-0\n1,0.5\n2,0.5\n3,0\n", "-0.0e3 0.5 0.5 0\n"} {
		tab, err := ReadTable(strings.NewReader(in), 3)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if math.Signbit(tab.Gamma[0]) {
			t.Errorf("%q: gamma(0) read as %v, want 0", in, tab.Gamma[0])
		}
	}
}

func TestReadTableRejects(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "empty"},
		{"  \n ", "empty"},
		{"#000000000000000000", "no numbers"},
		{"# a comment\n\n  # another, after a blank line", "no numbers"},
		{"# {\"K\": 1}", "no numbers"},
		{"1 0.5 x 1", `"x" is not a number`},
		// A value beyond float64's range is a value, not a header.
		{"1e400\n0.5\n0.5\n1", `line 1: "1e400" is beyond the largest float64`},
		{"1 0.5 0.5 -1e400", `"-1e400" is beyond the largest float64`},
		{"1 0.5 0.5", "3 values"},
		{"1 0.5 0.4 1", "symmetric"},
		{"1 NaN NaN 1", "gamma(1) = NaN"},
		{"1 1.5 1.5 1", "gamma(1) = 1.5"},
		{"[1, 0.5", "invalid JSON"},
		{`{"gamma": "no"}`, "invalid JSON"},
		{`{"K": 5, "gamma": [1, 1]}`, "K = 5"},
		{`{"gamma_opt": [1, 1]}`, `no "gamma"`},
		{"# {\"m\": x}\nl,gamma_opt\n0,1\n1,1\n", "line 1: the problem line"},
		{"# {\"K\":5}\nl,gamma_opt\n0,1\n1,1\n", "K = 5"},
	} {
		_, err := ReadTable(strings.NewReader(tc.in), 0)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadTable(%q, 0) = %v, want an error mentioning %q", tc.in, err, tc.want)
		}
	}
}

// TestReadTableForK: with K known, a gamma of another size is refused
// naming its count and the K+1 wanted, before any other rule (a count
// that is odd, symmetry); one of the right size is read.
func TestReadTableForK(t *testing.T) {
	for _, tc := range []struct {
		in   string
		k    int
		want string
	}{
		{"0.5 0.7 0.3", 11, "gamma has 3 values, want K+1 = 12"},
		{"1 0.5 0.4 1", 5, "gamma has 4 values, want K+1 = 6"},
		{`{"K": 3, "gamma": [1, 0.5, 0.5, 1]}`, 5, "gamma has 4 values, want K+1 = 6"},
		{"1 0.5 0.4 1", 3, "symmetric"},
	} {
		_, err := ReadTable(strings.NewReader(tc.in), tc.k)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadTable(%q, %d) = %v, want an error mentioning %q", tc.in, tc.k, err, tc.want)
		}
	}
	if tab, err := ReadTable(strings.NewReader("1 0.5 0.5 1"), 3); err != nil || tab.Gamma.K() != 3 {
		t.Errorf("ReadTable of a gamma for K = 3: %v, %v", tab.Gamma, err)
	}
}

func FuzzReadTable(f *testing.F) {
	for _, s := range []string{"1 0.5 0.5 1", "[1,1]", `{"K":1,"gamma":[1,1]}`, "# c\n0.1,0.1", "1e-3 1e-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tab, err := ReadTable(strings.NewReader(s), 0)
		if err != nil {
			// Errors quote at most a few bytes of the input (ReadTable).
			const most = 64
			msg := err.Error()
			if len(msg) > 500 {
				t.Fatalf("an error of %d bytes: %.200s...", len(msg), msg)
			}
			for i := 0; i+most <= len(s); i++ {
				if strings.Contains(msg, s[i:i+most]) {
					t.Fatalf("the error quotes %d bytes of the input from byte %d: %v", most, i, err)
				}
			}
			return
		}
		// Whatever is accepted is a valid noise function.
		if err := tab.Gamma.check(); err != nil {
			t.Fatalf("accepted %q but Check fails: %v", s, err)
		}
	})
}

// TestReadTableCSV reads the CSV that darrm solve --format csv writes,
// with and without --compare's extra columns.
func TestReadTableCSV(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Gamma
	}{
		{"l,gamma_opt\n0,1\n1,0.5\n2,0.5\n3,1\n", Gamma{1, 0.5, 0.5, 1}},
		{"l,gamma_opt,gamma_sub,gamma_rr\n0,1,0.2,0.1\n1,0.5,0.2,0.1\n2,0.5,0.2,0.1\n3,1,0.2,0.1\n", Gamma{1, 0.5, 0.5, 1}},
		{"# a comment\n\nl,gamma_sub\n0,0.2\n1,0.2\n", Gamma{0.2, 0.2}},
	} {
		tab, err := ReadTable(strings.NewReader(tc.in), 0)
		if err != nil || !slices.Equal(tab.Gamma, tc.want) {
			t.Errorf("ReadTable(%q, 0) = %v, %v; want %v", tc.in, tab.Gamma, err, tc.want)
		}
	}
	for _, bad := range []string{"l,gamma_sub,gamma_rr\n0,1,1\n1,1,1\n", "l,p\n0,1\n", "l,gamma_opt\n0\n1\n"} {
		if _, err := ReadTable(strings.NewReader(bad), 0); err == nil {
			t.Errorf("ReadTable(%q, 0) accepted", bad)
		}
	}
}

// TestReadTableBinary: binary input is refused without being echoed.
func TestReadTableBinary(t *testing.T) {
	in := append([]byte("0.5 0.5\n"), 0, 0xff, 0xfe, 'x', 1, 2, 3)
	in = append(in, bytes.Repeat([]byte{0x9b, '[', '2', 'J'}, 100)...)
	_, err := ReadTable(bytes.NewReader(in), 0)
	if err == nil || !strings.Contains(err.Error(), "binary") || len(err.Error()) > 100 {
		t.Errorf("binary input: %v", err)
	}
	long := strings.Repeat("z", 5000)
	if _, err := ReadTable(strings.NewReader(long), 0); err == nil || len(err.Error()) > 200 {
		t.Errorf("a 5000-byte token: error of %d bytes", len(err.Error()))
	}
}

// TestInRelation: a table is for the relation it states, else DaRRM's.
func TestInRelation(t *testing.T) {
	one := accountant.OneVote
	if r := (Table{}).InRelation(); r != accountant.PrivateTeachers {
		t.Errorf("nothing stated: %v", r)
	}
	if r := (Table{Relation: &one}).InRelation(); r != accountant.OneVote {
		t.Errorf("one-vote stated: %v", r)
	}
}
