package ledger

import (
	"errors"
	"os"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/fixtures"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// TestBind: a header binds its ensemble, and what is stated must agree
// with it; without a header what is stated binds, and must be complete.
func TestBind(t *testing.T) {
	f, err := os.Open(fixtures.Path("votes-K11.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, err := votefile.Open("votes-K11.csv", votefile.Options{In: f})
	if err != nil {
		t.Fatal(err)
	}
	meta := in.Meta()
	pt := accountant.PrivateTeachers
	eps, delta, other := 0.1, 1e-5, 0.2
	full := provenance.Stated{Ensemble: "e", K: 11, Relation: &pt, Kind: provenance.Fixed, Partition: provenance.SharedData, Eps: &eps, Delta: &delta}
	noK := full
	noK.K = 0
	for _, c := range []struct {
		name     string
		meta     *votefile.Meta
		s        provenance.Stated
		ensemble string
		teachers bool // a *provenance.TeachersError
		fails    bool
	}{
		{"header", meta, provenance.Stated{}, meta.Ensemble, false, false},
		{"header, agreeing K", meta, provenance.Stated{K: 11}, meta.Ensemble, false, false},
		{"header, other eps", meta, provenance.Stated{Eps: &other, Delta: &delta}, "", true, true},
		{"flags", nil, full, "e", false, false},
		{"flags without K", nil, noK, "", false, true},
	} {
		b, err := Bind(c.meta, c.s)
		var te *provenance.TeachersError
		switch {
		case c.fails != (err != nil), c.teachers != errors.As(err, &te):
			t.Errorf("%s: %v", c.name, err)
		case !c.fails && b.Ensemble != c.ensemble:
			t.Errorf("%s: ensemble %q, want %q", c.name, b.Ensemble, c.ensemble)
		}
	}
}
