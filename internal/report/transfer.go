package report

import (
	"fmt"
	"io"

	"github.com/darrm/darrm/datasets"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/plural"
	"github.com/darrm/darrm/teachers"
	"github.com/darrm/darrm/transfer"
)

// Transfer is the document darrm transfer prints.
type Transfer struct {
	Dataset  string            `json:"dataset"`
	K        int               `json:"K"`
	Teachers TransferTeachers  `json:"teachers"`
	Results  []transfer.Result `json:"results"`
	Seed     uint64            `json:"seed"`
	Note     string            `json:"note"`
	Seconds  float64           `json:"seconds"`
}

// TransferTeachers describes both ensembles.
type TransferTeachers struct {
	Private    PrivateTeachers    `json:"private"`
	NonPrivate NonPrivateTeachers `json:"nonprivate"`
}

// PrivateTeachers are the DP-SGD teachers and their guarantee.
type PrivateTeachers struct {
	Eps          float64            `json:"eps"`
	Delta        float64            `json:"Delta"`
	Alpha        int                `json:"alpha"`
	Sigma        float64            `json:"sigma"`
	Clip         float64            `json:"clip"`
	Epochs       int                `json:"epochs"`
	SamplingRate float64            `json:"sampling_rate"`
	Steps        int                `json:"steps"`
	ShareSize    int                `json:"share_size"`
	Accuracy     []float64          `json:"accuracy"`
	AccuracyMean float64            `json:"accuracy_mean"`
	Agreement    transfer.Agreement `json:"agreement"`
	Cached       bool               `json:"cached"`
}

// NonPrivateTeachers are the SGD teachers GNMax uses.
type NonPrivateTeachers struct {
	Accuracy     []float64          `json:"accuracy"`
	AccuracyMean float64            `json:"accuracy_mean"`
	Agreement    transfer.Agreement `json:"agreement"`
	Cached       bool               `json:"cached"`
}

// NewTransfer is the document of the transfer experiment on dataset whose
// teachers t labelled queries from the public set test with the results
// res, the query draws and the noise seeded with seed.
func NewTransfer(dataset string, t *transfer.Teachers, test *datasets.Dataset, res []transfer.Result, seed uint64) Transfer {
	return Transfer{Dataset: dataset, K: t.Private.Config.K, Teachers: NewTransferTeachers(t, test), Results: res, Seed: seed,
		Note: "an experiment: accuracy of labels against the true labels; the query draws and the noise are seeded"}
}

// NewTransferTeachers describes the private and non-private ensembles of a
// transfer experiment, their votes on the public set test, and the private
// teachers' guarantee.
func NewTransferTeachers(t *transfer.Teachers, test *datasets.Dataset) TransferTeachers {
	priv, pub, g := t.Private, t.NonPrivate, t.Guarantee
	dp := priv.Config.DP
	return TransferTeachers{
		Private: PrivateTeachers{Eps: g.Eps, Delta: g.Delta, Alpha: t.Alpha, Sigma: dp.Sigma, Clip: dp.Clip,
			Epochs: dp.Epochs, SamplingRate: dp.Rate, Steps: dp.Steps(), ShareSize: priv.ShareSize,
			Accuracy: priv.Accuracy, AccuracyMean: transfer.Mean(priv.Accuracy), Agreement: transfer.Agree(priv.Votes(test)), Cached: t.Cached[0]},
		NonPrivate: NonPrivateTeachers{Accuracy: pub.Accuracy, AccuracyMean: transfer.Mean(pub.Accuracy), Agreement: transfer.Agree(pub.Votes(test)), Cached: t.Cached[1]},
	}
}

// Write renders the document in format f.
func (out Transfer) Write(w io.Writer, f cliout.Format) error {
	header := []string{"mechanism", "m", "queries", "accuracy_mean", "accuracy_std", "query_eps", "query_delta", "total_eps", "total_delta", "relation"}
	var rows [][]string
	for _, r := range out.Results {
		rows = append(rows, []string{r.Mechanism, cliout.Float(r.M), fmt.Sprint(r.Queries), cliout.Float(r.AccuracyMean), cliout.Float(r.AccuracyStd),
			cliout.Float(r.QueryEps), cliout.Float(r.QueryDelta), cliout.Float(r.TotalEps), cliout.Float(r.TotalDelta), r.Relation})
	}
	switch f {
	case cliout.JSON:
		return cliout.WriteJSON(w, out)
	case cliout.CSV:
		return cliout.WriteCSV(w, header, rows)
	}
	p, n := out.Teachers.Private, out.Teachers.NonPrivate
	fmt.Fprintf(w, "Private knowledge transfer on %s: K = %d teachers, %d training images each (%s)\n", out.Dataset, out.K, p.ShareSize, out.Note)
	fmt.Fprintf(w, "private teachers: DP-SGD, sigma = %g, clip = %g, %s, sampling rate %.4g (%s): each (%.4g, %g)-DP (alpha = %d); test accuracy %.3f; %.3f of votes agree with the majority, %.3f of images unanimous\n",
		p.Sigma, p.Clip, plural.Of(p.Epochs, "epoch", "epochs"), p.SamplingRate, plural.Of(p.Steps, "step", "steps"), p.Eps, p.Delta, p.Alpha, p.AccuracyMean, p.Agreement.WithMajority, p.Agreement.Unanimous)
	fmt.Fprintf(w, "non-private teachers (GNMax): SGD; test accuracy %.3f; %.3f of votes agree with the majority\n\n", n.AccuracyMean, n.Agreement.WithMajority)
	rows = rows[:0]
	for _, r := range out.Results {
		rows = append(rows, []string{r.Mechanism, fmt.Sprint(r.Queries), fmt.Sprintf("%.3f ± %.3f", r.AccuracyMean, r.AccuracyStd),
			fmt.Sprintf("(%.4g, %.3g)", r.QueryEps, r.QueryDelta), fmt.Sprintf("(%.4g, %.3g)", r.TotalEps, r.TotalDelta)})
	}
	if err := cliout.WriteTable(w, []string{"mechanism", "Q", "accuracy", "per query (eps, delta)", "total over Q (general composition)"}, rows); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "accuracy: mean ± std over the redraws of the queries; GNMax's guarantee is for the one-vote relation (non-private teachers on disjoint shares)\ntime: %.3g s\n", out.Seconds)
	return err
}

// Teachers is the document of darrm teachers train: an ensemble's dataset,
// privacy, share size and each teacher's test accuracy.
type Teachers struct{ *teachers.Ensemble }

// Write prints the document in format f, a row per teacher.
func (d Teachers) Write(w io.Writer, f cliout.Format) error {
	rows := make([]cliout.Record, len(d.Accuracy))
	for i, a := range d.Accuracy {
		rows[i] = cliout.Record{field("teacher", i), field("test_accuracy", a)}
	}
	m := d.Meta
	return cliout.WriteRecords(w, f, cliout.Record{field("dataset", d.Config.Dataset), field("private", d.Config.Private), field("share_size", d.ShareSize),
		field("ensemble", m.Ensemble), field("relation", m.Relation.String()), field("guarantee", TeacherGuarantee(m.Teachers[0]))}, rows)
}

// TeacherGuarantee says a group of teachers' guarantee and how it was
// obtained, as a vote file's header states them.
func TeacherGuarantee(g ensemble.TeacherGroup) string {
	switch g.Origin {
	case ensemble.NonPrivate:
		return "none (non-private teachers)"
	case ensemble.FromDPSGD:
		r := g.DPSGD
		return fmt.Sprintf("%v by DP-SGD: sigma %g, sampling rate %.6g, %d steps, %v conversion at delta = %g", g.Guarantee, r.Sigma, r.Q, r.Steps, r.Conversion, r.Delta)
	}
	return fmt.Sprintf("%v, stated", g.Guarantee)
}
