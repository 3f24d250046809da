package enum

import (
	"encoding/json"
	"testing"
)

type colour int

const (
	unset colour = iota
	red
	green
)

var colours = Names[colour]{What: "colour", List: []string{red: "red", green: "green"}}

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		names Names[colour]
		v     colour
		want  string
	}{
		{colours, red, "red"},
		{colours, green, "green"},
		{colours, unset, "colour(0)"},
		{colours, 7, "colour(7)"},
		{colours, -1, "colour(-1)"},
		{Names[colour]{What: "colour", List: colours.List, Zero: "unstated"}, unset, "unstated"},
	} {
		if got := tc.names.String(tc.v); got != tc.want {
			t.Errorf("String(%d) = %q, want %q", int(tc.v), got, tc.want)
		}
	}
	for _, s := range []string{"red", "green"} {
		v, err := colours.Parse(s)
		if err != nil || colours.String(v) != s {
			t.Errorf("Parse(%q) = %d, %v", s, int(v), err)
		}
	}
	for _, s := range []string{"", "blue", "Red", "unstated"} {
		if _, err := colours.Parse(s); err == nil || err.Error() != `colour "`+s+`": must be one of red, green` {
			t.Errorf("Parse(%q): %v", s, err)
		}
	}
	v := green
	if err := colours.Unmarshal(&v, []byte("blue")); err == nil || v != green {
		t.Errorf("Unmarshal of blue: %v, value %d (want green kept)", err, int(v))
	}
	if err := colours.Unmarshal(&v, []byte("red")); err != nil || v != red {
		t.Errorf("Unmarshal of red: %v, value %d", err, int(v))
	}
}

func FuzzParse(f *testing.F) {
	f.Add("red")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		v, err := colours.Parse(s)
		if err == nil && colours.String(v) != s {
			t.Errorf("Parse(%q) = %d, whose name is %q", s, int(v), colours.String(v))
		}
		// A name not known is quoted cut (param.Quote): a value from a
		// file may be a megabyte.
		if err != nil && len(err.Error()) > 200 {
			t.Errorf("Parse(%.40q): an error of %d bytes", s, len(err.Error()))
		}
	})
}

// TestParseOptions: Also's names, folded case and the rule worded with
// "or", with and without What.
func TestParseOptions(t *testing.T) {
	fold := Names[colour]{What: "colour", List: colours.List, Also: map[string]colour{"verde": green}, Fold: true, Or: true}
	bare := Names[colour]{List: []string{"red", "green", "blue"}, Or: true}
	for _, tc := range []struct {
		names Names[colour]
		in    string
		want  colour
		err   string
	}{
		{fold, "RED", red, ""},
		{fold, "Verde", green, ""},
		{fold, "", 0, `colour "": must be red or green`},
		{fold, "blue", 0, `colour "blue": must be red or green`},
		{colours, "verde", 0, `colour "verde": must be one of red, green`},
		{bare, "green", 1, ""},
		{bare, "Green", 0, `"Green": must be red, green or blue`},
	} {
		v, err := tc.names.Parse(tc.in)
		switch {
		case tc.err == "" && (err != nil || v != tc.want):
			t.Errorf("Parse(%q) = %d, %v, want %d", tc.in, int(v), err, int(tc.want))
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("Parse(%q): %v, want %s", tc.in, err, tc.err)
		}
	}
	if fold.String(green) != "green" {
		t.Errorf("String(green) = %q: an alias was printed", fold.String(green))
	}
	for v, want := range map[colour]bool{unset: false, red: true, green: true, 3: false, -1: false} {
		if colours.Named(v) != want {
			t.Errorf("Named(%d) = %v", int(v), !want)
		}
	}
}

// shade is an enumeration exported for its values, its methods its
// Names', as a package declares one.
type shade int

var shadeNames = Names[shade]{What: "shade", List: []string{1: "light", 2: "dark"}}

func (s shade) String() string                   { return shadeNames.String(s) }
func (s shade) MarshalText() ([]byte, error)     { return []byte(shadeNames.String(s)), nil }
func (s *shade) UnmarshalText(text []byte) error { return shadeNames.Unmarshal(s, text) }

// TestValue: a value prints and reads as its name, one without a name as
// its type and number (shade(5)), and a name that parses to none leaves
// the value as it was.
func TestValue(t *testing.T) {
	for _, tc := range []struct {
		v    shade
		want string
	}{{1, "light"}, {2, "dark"}, {0, "shade(0)"}, {5, "shade(5)"}} {
		if got := tc.v.String(); got != tc.want {
			t.Errorf("String(%d) = %q, want %q", int(tc.v), got, tc.want)
		}
		if b, err := json.Marshal(tc.v); err != nil || string(b) != `"`+tc.want+`"` {
			t.Errorf("json of %d = %s, %v, want %q", int(tc.v), b, err, tc.want)
		}
	}
	var v shade
	if err := json.Unmarshal([]byte(`"dark"`), &v); err != nil || v != 2 {
		t.Errorf(`json "dark" = %d, %v`, int(v), err)
	}
	if err := v.UnmarshalText([]byte("grey")); err == nil || err.Error() != `shade "grey": must be one of light, dark` || v != 2 {
		t.Errorf(`UnmarshalText("grey") = %v, value %d (want an error and dark kept)`, err, int(v))
	}
}
