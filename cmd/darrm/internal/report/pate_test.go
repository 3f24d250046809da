package report

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/experiments/patemnist"
	"github.com/darrm/darrm/experiments/teachers"
	"github.com/darrm/darrm/pate"
	"github.com/darrm/darrm/votefile"
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

// TestPATEExperimentSeeded checks what darrm pate lets be published: a
// run from crypto/rand publishes eps_guarantee and names eps_released an
// estimate; a seeded one, whose noise anyone who knows the seed removes,
// lists both under not_for_publication, as a seeded aggregate lists its
// total, and its table marks no column to publish.
func TestPATEExperimentSeeded(t *testing.T) {
	seed := uint64(2)
	for _, tc := range []struct {
		name string
		seed *uint64
	}{{"crypto/rand", nil}, {"seeded", &seed}} {
		t.Run(tc.name, func(t *testing.T) {
			mech := ensemble.ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: ensemble.GNMax{Sigma2: 40}}
			released := 1.5
			r := pate.Result{Mechanism: mech.Name(), Queries: 10, Answered: 8, EpsReleased: &released, Delta: 1e-5}
			r.Smooth.Order = 8
			out := &patemnist.Outcome{Teachers: &teachers.Ensemble{Accuracy: []float64{0.9}, Meta: &votefile.Meta{}}, Queries: 10, Results: []pate.Result{r}}
			d := NewPATEExperiment("mnist", out, patemnist.Params{K: 1, Mechanisms: []ensemble.Mechanism{mech}, Seed: tc.seed}, time.Second)
			seeded := tc.seed != nil
			for _, k := range []string{"eps_guarantee", "eps_released"} {
				if slices.Contains(d.NotForPublication, k) != seeded {
					t.Errorf("not_for_publication %v: %s listed %v", d.NotForPublication, k, !seeded)
				}
			}
			if slices.Contains(d.Analysis, "eps_released") == seeded {
				t.Errorf("analysis %v", d.Analysis)
			}
			if seeded && !strings.Contains(d.Publication, "a seeded run (--seed) is an experiment") {
				t.Errorf("publication %q", d.Publication)
			}
			var b strings.Builder
			if err := d.Write(&b, cliout.Table); err != nil {
				t.Fatal(err)
			}
			table := b.String()
			if strings.Contains(table, "(publish)") == seeded || !strings.Contains(table, "fixed without the votes") {
				t.Errorf("table:\n%s", table)
			}
		})
	}
}

// TestPATEExperimentTableRoundsUp: darrm pate's table prints each ε bound
// (eps_data_independent, eps_data_dependent, eps_guarantee, the total to
// publish) rounded up, as every table prints a total, never below the
// value JSON and CSV hold: it printed them to the nearest four digits
// (%.4g), 1.759059 as 1.759, understating the guarantee.
func TestPATEExperimentTableRoundsUp(t *testing.T) {
	mech := ensemble.ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: ensemble.GNMax{Sigma2: 40}}
	released := 1.5
	r := pate.Result{Mechanism: mech.Name(), Queries: 10, Answered: 8, EpsReleased: &released, Delta: 1e-5}
	r.Smooth.Order = 8
	out := &patemnist.Outcome{Teachers: &teachers.Ensemble{Accuracy: []float64{0.9}, Meta: &votefile.Meta{}}, Queries: 10, Results: []pate.Result{r}}
	d := NewPATEExperiment("mnist", out, patemnist.Params{K: 1, Mechanisms: []ensemble.Mechanism{mech}}, time.Second)
	independent, dependent := 0.633104592146345, 1.7590592937015062
	d.Results[0].EpsIndependent, d.Results[0].EpsDependent, d.Results[0].EpsGuarantee = &independent, &dependent, 1.5553401
	var b strings.Builder
	if err := d.Write(&b, cliout.Table); err != nil {
		t.Fatal(err)
	}
	// The table may be cut into two at the terminal's width: each part's
	// header row names its columns.
	want := map[string]float64{"eps indep.": independent, "eps dep.": dependent, "eps guarantee": d.Results[0].EpsGuarantee}
	var header []string
	for _, line := range strings.Split(b.String(), "\n") {
		cells := strings.Split(line, "│")
		if len(cells) < 3 {
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch cells[1] {
		case "mechanism":
			header = cells
		case string(mech.Name()):
			for i, c := range cells {
				for name, v := range want {
					if i < len(header) && strings.HasPrefix(header[i], name) {
						got, err := strconv.ParseFloat(c, 64)
						if err != nil || got < v {
							t.Errorf("%s prints %q for %v: below it", header[i], c, v)
						}
						delete(want, name)
					}
				}
			}
		}
	}
	if len(want) > 0 {
		t.Fatalf("no column %v in\n%s", want, b.String())
	}
}
