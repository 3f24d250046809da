package enum

import "testing"

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
	})
}
