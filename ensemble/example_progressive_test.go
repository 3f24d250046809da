package ensemble_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"slices"
	"strings"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/votefile"
)

// Progressive GNMax on votes like PATE's: 250 non-private teachers on
// keyed-hash shares, counted over 10 classes, each draw of noise charged
// to a Gaussian-DP filter of the budget (2, 1e-5) before it is drawn. A
// query of near-unanimous votes leaves at the first, noisiest level; a
// split one takes more draws, or none is released for it when its gap
// stays small down the ladder. The filter stops the run when the next
// query's draws might not fit, and the total to publish is its budget,
// however many queries it labelled.
func ExampleProgressiveGNMax() {
	meta := &votefile.Meta{Ensemble: "pate-progressive-example", K: 250, Classes: 10, Layout: votefile.LayoutCounts,
		Relation: "one-vote", Kind: "fixed", Partition: "keyed-hash",
		Teachers: []votefile.TeacherGroup{{Count: 250, Source: votefile.TeacherSource{Method: "none"}}}}
	var counts [][]int
	for q := range 2000 {
		switch q % 3 {
		case 0:
			counts = append(counts, []int{240, 5, 5, 0, 0, 0, 0, 0, 0, 0})
		case 1:
			counts = append(counts, []int{0, 0, 150, 100, 0, 0, 0, 0, 0, 0})
		default:
			counts = append(counts, []int{60, 40, 30, 30, 20, 20, 20, 10, 10, 10})
		}
	}
	votes, err := votefile.ReadRows(counts, meta)
	if err != nil {
		log.Fatal(err)
	}
	var labels bytes.Buffer
	out, err := ensemble.Release(context.Background(), ensemble.ReleaseSpec{
		Votes:     votes,
		Mechanism: ensemble.ProgressiveGNMax{Levels: []float64{100, 75, 56, 45}, Kappa: 1.2, GiveUp: 0.5},
		Budget:    &accountant.Budget{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-5}},
		Sink:      ensemble.LabelSink{Stdout: &labels},
		// A seed makes the example reproducible: its labels are not for
		// release.
		Random:  noise.NewSeededSource(1),
		Options: ensemble.ReleaseOptions{Experiment: true},
	})
	if err != nil {
		log.Fatal(err)
	}
	// The labels of the first three queries, after the file's header: a
	// withheld query's label is empty.
	rows := strings.Split(labels.String(), "\n")
	for _, row := range rows[slices.Index(rows, "id,label,answered"):][:4] {
		fmt.Println(row)
	}
	r := out.Result
	fmt.Printf("%d released (%d answered, %d withheld), %d not released: the filter was full\n", r.Released, r.Released-r.Withheld, r.Withheld, r.StoppedByBudget)
	fmt.Printf("%d draws, sum of mu^2 %.4f of the filter's mu_B^2 %.4f (analysis)\n", out.Draws, out.Mu2, out.MuB2)
	fmt.Printf("to publish: %v by %s\n", out.Publish.Guarantee, out.Publish.Name())
	// Output:
	// id,label,answered
	// 1,0,1
	// 2,,0
	// 3,,0
	// 696 released (224 answered, 472 withheld), 1304 not released: the filter was full
	// 1241 draws, sum of mu^2 0.2509 of the filter's mu_B^2 0.2516 (analysis)
	// to publish: (2, 1e-05)-DP by gdp-filter budget
}
