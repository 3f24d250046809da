package report

import (
	"fmt"
	"io"
	"time"

	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/pate"
)

// PATEExperiment is the document of darrm pate.
type PATEExperiment struct {
	Dataset  string       `json:"dataset"`
	Teachers PATETeachers `json:"teachers"`
	// Queries is the number of public queries (the first half of the
	// test set); Holdout the images the student is tested on.
	Queries int             `json:"queries"`
	Holdout int             `json:"holdout"`
	Results []PATEMechanism `json:"results"`
	Student *PATEStudent    `json:"student,omitempty"`
	// NotForPublication lists the fields computed from the votes without
	// a private release: the data-dependent ε and the order it is taken
	// at, and eps_released, whose smooth-sensitivity parameters are
	// chosen from the votes as the PATE authors choose them.
	NotForPublication []string   `json:"not_for_publication"`
	Randomness        Randomness `json:"randomness"`
	ForRelease        bool       `json:"for_release"`
	Seconds           float64    `json:"seconds"`
}

// PATETeachers describes the teacher ensemble.
type PATETeachers struct {
	K            int     `json:"K"`
	AccuracyMean float64 `json:"accuracy_mean"`
	// Ensemble is the id of the metadata header; Cached says the teachers
	// came from the cache.
	Ensemble string `json:"ensemble"`
	Cached   bool   `json:"cached"`
	Filters  int    `json:"filters"`
	Epochs   int    `json:"epochs"`
}

// PATEStudent is the student trained on one mechanism's answered
// queries, and its accuracy on the held-out half of the test set.
type PATEStudent struct {
	Mechanism string  `json:"mechanism"`
	Queries   int     `json:"queries"`
	Accuracy  float64 `json:"accuracy"`
}

// NewPATEExperiment is the document of the experiment's outcome out, run
// on dataset with p, which took elapsed.
func NewPATEExperiment(dataset string, out *pate.Outcome, p pate.Params, elapsed time.Duration) PATEExperiment {
	e := out.Teachers
	var mean float64
	for _, a := range e.Accuracy {
		mean += a / float64(len(e.Accuracy))
	}
	d := PATEExperiment{Dataset: dataset, Queries: out.Queries, Holdout: out.Holdout,
		Teachers:          PATETeachers{K: e.Config.K, AccuracyMean: mean, Ensemble: e.Meta.Ensemble, Cached: out.Cached, Filters: e.Config.Filters, Epochs: e.Config.Epochs},
		NotForPublication: PATENotForPublication, Randomness: Randomness{Source: "crypto/rand"}, ForRelease: p.Seed == nil, Seconds: elapsed.Seconds()}
	if p.Seed != nil {
		d.Randomness = Randomness{Source: "seeded ChaCha8 (math/rand/v2)", Seed: p.Seed, Note: NotForRelease}
	}
	for i, r := range out.Results {
		d.Results = append(d.Results, NewPATEMechanism(p.Mechanisms[i], r))
	}
	if s := out.Student; s != nil {
		d.Student = &PATEStudent{Mechanism: s.Mechanism, Queries: s.Queries, Accuracy: s.Accuracy}
	}
	return d
}

// PATEMechanism is one mechanism's row of the experiment.
type PATEMechanism struct {
	Mechanism      string   `json:"mechanism"`
	Threshold      *float64 `json:"threshold,omitempty"`
	Sigma1         *float64 `json:"sigma1,omitempty"`
	Sigma2         float64  `json:"sigma2"`
	Queries        int      `json:"queries"`
	Answered       int      `json:"answered"`
	Accuracy       float64  `json:"accuracy"`
	EpsIndependent float64  `json:"eps_data_independent"`
	EpsDependent   float64  `json:"eps_data_dependent"`
	Order          float64  `json:"order"`
	EpsReleased    *float64 `json:"eps_released"`
	SSError        string   `json:"smooth_sensitivity_error,omitempty"`
	Delta          float64  `json:"delta"`
}

// NewPATEMechanism is the row of the result r of mechanism m.
func NewPATEMechanism(m pate.Mechanism, r pate.Result) PATEMechanism {
	row := PATEMechanism{Mechanism: r.Mechanism, Sigma2: m.Sigma2, Queries: r.Queries, Answered: r.Answered, Accuracy: r.Accuracy,
		EpsIndependent: r.EpsIndependent, EpsDependent: r.EpsDependent, Order: r.Order, EpsReleased: r.EpsReleased, SSError: r.SSError, Delta: r.Delta}
	if m.Confident() {
		row.Threshold, row.Sigma1 = &m.Threshold, &m.Sigma1
	}
	return row
}

// PATENotForPublication are the fields of PATEExperiment's results that are
// functions of the votes without a private release.
var PATENotForPublication = []string{"eps_data_dependent", "order", "eps_released"}

// pate2018 is PATE 2018's MNIST row of Table 2 (Confident-GNMax, T = 200,
// σ1 = 150, σ2 = 40, 250 teachers, δ = 1e-5), for the table's comparison.
const pate2018 = "PATE 2018, Table 2 (MNIST, Confident-GNMax T = 200, sigma1 = 150, sigma2 = 40, delta = 1e-5): 286 queries answered, eps = 1.97, student accuracy 98.5% (non-private baseline 99.2%)"

// Write prints the document in format f.
func (d PATEExperiment) Write(w io.Writer, f cliout.Format) error {
	switch f {
	case cliout.JSON:
		return cliout.WriteJSON(w, d)
	case cliout.CSV:
		header := []string{"K", "teachers_accuracy_mean", "mechanism", "queries", "answered", "accuracy", "eps_data_independent", "eps_data_dependent", "eps_released", "delta", "student_accuracy"}
		var rows [][]string
		for _, r := range d.Results {
			student := ""
			if d.Student != nil && d.Student.Mechanism == r.Mechanism {
				student = cliout.Float(d.Student.Accuracy)
			}
			rows = append(rows, []string{fmt.Sprint(d.Teachers.K), cliout.Float(d.Teachers.AccuracyMean), r.Mechanism, fmt.Sprint(r.Queries), fmt.Sprint(r.Answered), cliout.Float(r.Accuracy),
				cliout.Float(r.EpsIndependent), cliout.Float(r.EpsDependent), optFloat(r.EpsReleased), cliout.Float(r.Delta), student})
		}
		return cliout.WriteCSV(w, header, rows)
	}
	if d.Randomness.Note != "" {
		fmt.Fprintf(w, "*** %s ***\n", d.Randomness.Note)
	}
	cached := "trained"
	if d.Teachers.Cached {
		cached = "from the cache"
	}
	fmt.Fprintf(w, "teachers: %d on keyed-hash shares of %s's training set (%s, %d filters, %d epochs), mean accuracy %.4f on the queries; ensemble %s\n",
		d.Teachers.K, d.Dataset, cached, d.Teachers.Filters, d.Teachers.Epochs, d.Teachers.AccuracyMean, d.Teachers.Ensemble)
	fmt.Fprintf(w, "queries: the first %d test images; the student is tested on the other %d\n", d.Queries, d.Holdout)
	var rows [][]string
	for _, r := range d.Results {
		ssr := "- (" + r.SSError + ")"
		if r.EpsReleased != nil {
			ssr = g6(*r.EpsReleased)
		}
		rows = append(rows, []string{r.Mechanism, fmt.Sprint(r.Answered), g6(r.Accuracy), g6(r.EpsIndependent), g6(r.EpsDependent), ssr})
	}
	if err := cliout.WriteTable(w, []string{"mechanism", "answered", "label accuracy", "eps data-independent", "eps data-dependent", "eps released (smooth sensitivity)"}, rows); err != nil {
		return err
	}
	fmt.Fprintf(w, "eps at delta = %g, realised (the GNMax step charged where it answered); data-dependent eps and the smooth-sensitivity parameters are functions of the votes: not for publication\n", d.Results[0].Delta)
	if s := d.Student; s != nil {
		fmt.Fprintf(w, "student: trained on the %d queries %s answered, accuracy %.4f on the held-out half (its guarantee is the labels')\n", s.Queries, s.Mechanism, s.Accuracy)
	}
	fmt.Fprintf(w, "beside %s\n", pate2018)
	_, err := fmt.Fprintf(w, "time: %.3g s\n", d.Seconds)
	return err
}

func optFloat(p *float64) string {
	if p == nil {
		return ""
	}
	return cliout.Float(*p)
}
