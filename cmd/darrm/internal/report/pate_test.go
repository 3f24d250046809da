package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/pate"
)

// TestAccountPATESeededDraw checks what account pate lets be published of
// a smooth-sensitivity draw: drawn from crypto/rand with data-free
// parameters, eps_released is an estimate that may be published as such;
// drawn from a seed, its noise is the seed's, so rdp_released and
// eps_released are the data-dependent cost to whoever knows the seed and
// are not for publication, as with parameters chosen from the votes.
func TestAccountPATESeededDraw(t *testing.T) {
	mech := ensemble.ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: ensemble.GNMax{Sigma2: 40}}
	for _, tc := range []struct {
		name      string
		draw      *pate.DrawState
		fromVotes bool
		hidden    bool // rdp_released and eps_released not for publication
	}{
		{"crypto/rand draw", &pate.DrawState{Shown: true}, false, false},
		{"recorded draw", &pate.DrawState{Shown: true, Recorded: true}, false, false},
		{"seeded draw", &pate.DrawState{Shown: true, Experiment: true}, false, true},
		{"seeded draw, parameters from the votes", &pate.DrawState{Shown: true, Experiment: true}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &pate.AccountResult{}
			r.Options.Mechanism = mech
			r.Smooth.Drawn, r.Smooth.FromVotes = true, tc.fromVotes
			d := AccountPATE{AccountResult: r, Draw: tc.draw}
			nfp := d.NotForPublication()
			for _, k := range []string{"rdp_released", "eps_released"} {
				if slices.Contains(nfp, k) != tc.hidden {
					t.Errorf("not_for_publication %v: %s listed %v, want %v", nfp, k, !tc.hidden, tc.hidden)
				}
			}
			if got := d.marks()["eps_released"]; (got == notForPublication) != tc.hidden {
				t.Errorf("eps_released marked %q", got)
			}
			if slices.Contains(d.analysis(), "eps_released") == tc.hidden {
				t.Errorf("analysis %v: eps_released there is an estimate that may be published", d.analysis())
			}
			line := d.publication(nil)[2].Val.(string)
			if tc.hidden && !strings.Contains(line, "eps_released") {
				t.Errorf("publication %q does not say that eps_released is not for publication", line)
			}
		})
	}
}
