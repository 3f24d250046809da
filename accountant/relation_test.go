package accountant

import (
	"strings"
	"testing"
)

// TestRelationDescribe: each relation says what changes between
// neighbours: adding or removing a record, the change DP-SGD's Poisson
// sampling and the teachers' cap on disjoint shares are analysed for.
func TestRelationDescribe(t *testing.T) {
	for _, r := range []Relation{PrivateTeachers, OneVote} {
		if d := r.Describe(); !strings.Contains(d, "adding or removing one record") || strings.Contains(d, "differ in one record") {
			t.Errorf("%v: %q", r, d)
		}
	}
}

// TestRelationText: a neighbouring relation reads back from its name, and
// another name is refused with the choices.
func TestRelationText(t *testing.T) {
	for _, tc := range []struct {
		text string
		want Relation
		err  string
	}{
		{"private-teachers", PrivateTeachers, ""},
		{"one-vote", OneVote, ""},
		{"bogus", 0, `relation "bogus": must be private-teachers (each teacher private, any vote may change: DaRRM, RR, subsampling) or one-vote (one record changes at most one vote: GNMax, DaRRM)`},
	} {
		var r Relation
		err := r.UnmarshalText([]byte(tc.text))
		b, _ := r.MarshalText()
		if tc.err == "" && (err != nil || r != tc.want || string(b) != tc.text) || tc.err != "" && (err == nil || err.Error() != tc.err) {
			t.Errorf("%q: %v, %v (prints %q)", tc.text, r, err, b)
		}
	}
}
