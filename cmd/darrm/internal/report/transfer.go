package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/experiments/datasets"
	"github.com/darrm/darrm/experiments/teachers"
	"github.com/darrm/darrm/experiments/transfer"
	"github.com/darrm/darrm/internal/decimal"
	"github.com/darrm/darrm/internal/plural"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// Transfer is the document darrm transfer prints.
type Transfer struct {
	Dataset  string            `json:"dataset"`
	Setting  accountant.Shares `json:"setting"`
	K        int               `json:"K"`
	Teachers TransferTeachers  `json:"teachers"`
	Results  []transfer.Result `json:"results"`
	// Cap is the private teachers' cap on every total, and CapFrom the
	// number of queries from which it is each mechanism's total, and up
	// to which its noise buys privacy. SharedCap is the cap of teachers
	// of the same guarantee on shared data.
	Cap       *accountant.Cap      `json:"cap"`
	CapFrom   []transfer.Crossover `json:"cap_from"`
	SharedCap *accountant.Cap      `json:"cap_shared"`
	// DeltaPrime is the slack of the table's compositions.
	DeltaPrime float64 `json:"delta_prime"`
	Seed       uint64  `json:"seed"`
	Note       string  `json:"note"`
	Seconds    float64 `json:"seconds"`
	// EqualTotals compares darrm-one-vote, GNMax and RR at equal totals,
	// for each number of queries (transfer --budget-eps).
	EqualTotals []TransferEqual `json:"equal_totals,omitempty"`
}

// TransferTeachers describes both ensembles.
type TransferTeachers struct {
	Private    PrivateTeachers    `json:"private"`
	NonPrivate NonPrivateTeachers `json:"nonprivate"`
}

// PrivateTeachers are the DP-SGD teachers and their guarantee.
type PrivateTeachers struct {
	Eps          float64              `json:"eps"`
	Delta        float64              `json:"Delta"`
	Alpha        int                  `json:"alpha"`
	Sigma        float64              `json:"sigma"`
	Clip         float64              `json:"clip"`
	Epochs       int                  `json:"epochs"`
	SamplingRate float64              `json:"sampling_rate"`
	Steps        int                  `json:"steps"`
	Batch        float64              `json:"batch"`
	Filters      int                  `json:"filters"`
	LR           float64              `json:"lr"`
	Partition    provenance.Partition `json:"partition"`
	ShareSizes   []int                `json:"share_sizes"`
	Accuracy     []float64            `json:"accuracy"`
	AccuracyMean float64              `json:"accuracy_mean"`
	Agreement    transfer.Agreement   `json:"agreement"`
	Cached       bool                 `json:"cached"`
}

// NonPrivateTeachers are the SGD teachers GNMax uses, always on disjoint
// shares.
type NonPrivateTeachers struct {
	LR           float64            `json:"lr"`
	ShareSizes   []int              `json:"share_sizes"`
	Accuracy     []float64          `json:"accuracy"`
	AccuracyMean float64            `json:"accuracy_mean"`
	Agreement    transfer.Agreement `json:"agreement"`
	Cached       bool               `json:"cached"`
}

// NewTransfer is the document of the transfer experiment on dataset whose
// teachers t labelled queries from the public set test with the outcome
// res, the query draws and the noise seeded with seed.
func NewTransfer(dataset string, t *transfer.Teachers, test *datasets.Dataset, res *transfer.Outcome, seed uint64) Transfer {
	return Transfer{Dataset: dataset, Setting: t.Private.Config.Setting, K: t.Private.Config.K, Teachers: NewTransferTeachers(t, test),
		Results: res.Results, Cap: res.Cap, CapFrom: res.CapFrom, SharedCap: res.SharedCap, DeltaPrime: res.DeltaPrime, Seed: seed,
		Note: fmt.Sprintf("an experiment: accuracy of labels against the true labels; the query draws and the noise are seeded (seed %d)", seed)}
}

// NewTransferTeachers describes the private and non-private ensembles of a
// transfer experiment, their votes on the public set test, and the private
// teachers' guarantee.
func NewTransferTeachers(t *transfer.Teachers, test *datasets.Dataset) TransferTeachers {
	priv, pub, g := t.Private, t.NonPrivate, t.Guarantee
	dp := priv.Config.DP
	return TransferTeachers{
		Private: PrivateTeachers{Eps: g.Eps, Delta: g.Delta, Alpha: t.Alpha, Sigma: dp.Sigma, Clip: dp.Clip,
			Epochs: dp.Epochs, SamplingRate: dp.Rate, Steps: dp.Steps(), Batch: dp.Batch, Filters: priv.Config.Filters, LR: dp.LR,
			Partition: priv.Partition.Rule, ShareSizes: priv.ShareSizes,
			Accuracy: priv.Accuracy, AccuracyMean: transfer.Mean(priv.Accuracy), Agreement: transfer.Agree(priv.Votes(test)), Cached: t.Cached[0]},
		NonPrivate: NonPrivateTeachers{LR: pub.Config.LR, ShareSizes: pub.ShareSizes, Accuracy: pub.Accuracy, AccuracyMean: transfer.Mean(pub.Accuracy),
			Agreement: transfer.Agree(pub.Votes(test)), Cached: t.Cached[1]},
	}
}

// Write renders the document in format f. CSV has a row per result, with
// its mechanism's crossover (cap_from, noise_pays_up_to,
// noise_pays_up_to_shared).
func (out Transfer) Write(w io.Writer, f cliout.Format) error {
	header := []string{"mechanism", "m", "queries", "accuracy_mean", "accuracy_std", "query_eps", "query_delta", "composition_eps", "composition_delta",
		"total_eps", "total_delta", "total_method", "total_bound", "cap_from", "noise_pays", "noise_pays_up_to", "noise_pays_up_to_shared", "relation"}
	cross := map[string]transfer.Crossover{}
	for _, c := range out.CapFrom {
		cross[c.Mechanism] = c
	}
	var rows [][]string
	for _, r := range out.Results {
		c := cross[r.Mechanism]
		rows = append(rows, []string{r.Mechanism, cliout.Float(r.M), fmt.Sprint(r.Queries), cliout.Float(r.AccuracyMean), cliout.Float(r.AccuracyStd),
			cliout.Float(r.QueryEps), cliout.Float(r.QueryDelta), cliout.Float(r.CompositionEps), cliout.Float(r.CompositionDelta),
			cliout.Float(r.TotalEps), cliout.Float(r.TotalDelta), r.TotalMethod, r.TotalBound.String(), fmt.Sprint(c.CapFrom),
			fmt.Sprint(r.NoisePays), fmt.Sprint(c.NoisePaysUpTo), fmt.Sprint(c.SharedNoisePaysUpTo), r.Relation})
	}
	switch f {
	case cliout.JSON:
		return cliout.WriteJSON(w, out)
	case cliout.CSV:
		return cliout.WriteCSV(w, header, rows)
	}
	p, n := out.Teachers.Private, out.Teachers.NonPrivate
	lo, hi := 0, 0
	if len(p.ShareSizes) > 0 {
		lo, hi = slices.Min(p.ShareSizes), slices.Max(p.ShareSizes)
	}
	data := fmt.Sprintf("each on all %d training images", lo)
	if p.Partition != provenance.SharedData {
		data = fmt.Sprintf("on %v shares of %d to %d training images", p.Partition, lo, hi)
	}
	t := cliout.NewText(w)
	t.Line("Private knowledge transfer on %s, setting %v: K = %d teachers %s (%s)", out.Dataset, out.Setting, out.K, data, out.Note)
	t.Line("private teachers: DP-SGD, %s, learning rate %g, sigma = %g, clip = %g, %s, expected batch %g (sampling rate %.4g, %s): each %s-DP (alpha = %d) when one record is added or removed; test accuracy %.3f; %.3f of votes agree with the majority, %.3f of images unanimous",
		plural.Of(p.Filters, "filter", "filters"), p.LR, p.Sigma, p.Clip, plural.Of(p.Epochs, "epoch", "epochs"), p.Batch, p.SamplingRate, plural.Of(p.Steps, "step", "steps"),
		upPair(p.Eps, p.Delta), p.Alpha, p.AccuracyMean, p.Agreement.WithMajority, p.Agreement.Unanimous)
	t.Line("non-private teachers (GNMax): SGD on keyed-hash shares, learning rate %g; test accuracy %.3f; %.3f of votes agree with the majority", n.LR, n.AccuracyMean, n.Agreement.WithMajority)
	t.Line("")
	rows = rows[:0]
	perQuery := map[string]accountant.Guarantee{}
	for _, r := range out.Results {
		perQuery[r.Mechanism] = accountant.Guarantee{Eps: r.QueryEps, Delta: r.QueryDelta}
		rows = append(rows, []string{r.Mechanism, fmt.Sprint(r.Queries), fmt.Sprintf("%.3f ± %.3f", r.AccuracyMean, r.AccuracyStd),
			upPair(r.QueryEps, r.QueryDelta), upPair(r.TotalEps, r.TotalDelta) + " " + r.TotalMethod, r.TotalBound.String(), noiseBuys(r)})
	}
	t.Table([]string{"mechanism", "Q", "accuracy", "per query", "total, by", "bound", "noise buys"}, rows)
	if out.Cap != nil {
		t.Line("teachers' cap: %s %s; the total of the private teachers' labels is the cap alone: composing per-query guarantees is not proved for fixed teachers (the queries' composition, as analysis, in JSON and CSV: composition_eps, composition_delta)",
			upPair(out.Cap.Eps, out.Cap.Delta), t.Note(out.Cap.Reference()))
		for _, c := range out.CapFrom {
			g := perQuery[c.Mechanism]
			switch {
			case c.CapFrom == 0:
				t.Line("  %s: no cap (non-private teachers): the queries' composition at every Q, and its noise is all its privacy", c.Mechanism)
			case c.Mechanism == "majority":
				t.Line("  %s: no noise; the cap at every Q", c.Mechanism)
			case c.CapFrom == 1 && out.Cap.Eps <= g.Eps && out.Cap.Delta <= g.Delta:
				t.Line("  %s: the cap at every Q, below one label's %s: its noise buys no privacy, and the noise-free majority is as private", c.Mechanism, upPair(g.Eps, g.Delta))
			case c.CapFrom == 1:
				// Above in ε or in δ: not below, and, where the other is
				// below, not above either.
				than := "above"
				if out.Cap.Eps < g.Eps || out.Cap.Delta < g.Delta {
					than = "not below"
				}
				t.Line("  %s: the cap at every Q, %s one label's %s but the only bound proved for fixed teachers: its noise buys no privacy, and the noise-free majority is as private", c.Mechanism, than, upPair(g.Eps, g.Delta))
			default:
				t.Line("  %s: the queries' composition for Q <= %d, the cap from Q = %d: its noise buys privacy up to Q = %d, nothing after", c.Mechanism, c.CapFrom-1, c.CapFrom, c.NoisePaysUpTo)
			}
		}
		if slices.ContainsFunc(out.CapFrom, func(c transfer.Crossover) bool { return c.Mechanism == "darrm-opt" }) && out.SharedCap != nil {
			t.Line("DaRRM's noise (and RR's) pays off only for teachers that are a fresh mechanism per query (no cap), at every Q: "+
				"for fixed teachers the cap is the only bound, on disjoint shares and on shared data (their %d-fold composition %s) alike",
				out.K, upPair(out.SharedCap.Eps, out.SharedCap.Delta))
		}
	}
	t.Line("accuracy: mean ± std over the redraws of the queries; the majority has no noise, its per-query guarantee is the K-fold composition of the teachers; " +
		"the guarantees of GNMax and darrm-one-vote (DaRRM with the one-vote relation's gamma_opt) are for the one-vote relation (non-private teachers on disjoint shares); " +
		"the totals of GNMax and darrm-one-vote, whose labels are one bit each, are the exact composition of their labels' pairs of output probabilities at the general composition's delta; " +
		"those of the private teachers' mechanisms the cap, their only bound as fixed models")
	t.Line("this table compares at equal per-query guarantees, at which the totals differ (docs/transfer.md, \"Which bound wins\"); mechanisms compared at equal totals: --budget-eps")
	for _, e := range out.EqualTotals {
		e.write(t)
	}
	t.Line("time: %.3g s", out.Seconds)
	return t.Close()
}

// upPair prints a guarantee (eps, delta) for the table, its eps to four
// significant digits and its delta to three, each rounded up, as every
// table prints a bound: it never reads below the value JSON and CSV hold.
func upPair(eps, delta float64) string {
	return fmt.Sprintf("(%s, %s)", decimal.Format(eps, 4, true, 8), decimal.Format(delta, 3, true, 8))
}

// noiseBuys says what a result's noise buys at its Q.
func noiseBuys(r transfer.Result) string {
	switch {
	case r.Mechanism == "majority":
		return "(no noise)"
	case r.NoisePays:
		return "privacy"
	}
	return "nothing"
}

// Teachers is the document of darrm teachers train: an ensemble's dataset,
// privacy, setting and partition, and each teacher's share size and test
// accuracy.
type Teachers struct{ *teachers.Ensemble }

// Write prints the document in format f, a row per teacher.
func (d Teachers) Write(w io.Writer, f cliout.Format) error {
	rows := make([]cliout.Record, len(d.Accuracy))
	for i, a := range d.Accuracy {
		rows[i] = cliout.Record{field("teacher", i), field("share_size", d.ShareSizes[i]), field("test_accuracy", a)}
	}
	m := d.Meta
	head := cliout.Record{field("dataset", d.Config.Dataset), field("private", d.Config.Private),
		field("setting", d.Config.Setting.String()), field("partition", d.Partition.Rule.String()),
		field("ensemble", m.Ensemble), field("relation", m.Relation), field("guarantee", TeacherGuarantee(m.Teachers[0]))}
	if c := d.Config.Classes; c > 0 {
		head = append(head, field("classes", c), field("accuracy_on", fmt.Sprintf("the first %d test images (the queries)", d.Config.Queries)))
	}
	return cliout.WriteRecords(w, f, head, rows)
}

// TeacherGuarantee says a group of teachers' guarantee and how it was
// obtained, as a vote file's header states them.
func TeacherGuarantee(g votefile.TeacherGroup) string {
	if g.Eps == nil || g.Delta == nil {
		return "none (non-private teachers)"
	}
	guarantee := accountant.Guarantee{Eps: *g.Eps, Delta: *g.Delta}
	if r := g.Source; r.Method == "dp-sgd" && r.Sigma != nil && r.SamplingRate != nil && r.Steps != nil && r.Delta != nil {
		return fmt.Sprintf("%v by DP-SGD: sigma %g, sampling rate %.6g, %d steps, %s conversion at delta = %g", guarantee, *r.Sigma, *r.SamplingRate, *r.Steps, r.Conversion, *r.Delta)
	}
	return fmt.Sprintf("%v, stated", guarantee)
}

// Tune is the document of darrm teachers tune: the hyperparameters chosen
// on a data set's tuning task, those in use, and every trial.
type Tune struct {
	Dataset string           `json:"dataset"`
	Tasks   []string         `json:"tuning_tasks"`
	Chosen  transfer.Hyper   `json:"chosen"`
	InUse   transfer.Hyper   `json:"in_use"`
	Trials  []transfer.Trial `json:"trials"`
}

// Write prints the document in format f: the trials as rows (CSV, table)
// under the choice (table), or the whole document (JSON).
func (d Tune) Write(w io.Writer, f cliout.Format) error {
	if f == cliout.JSON {
		return cliout.WriteJSON(w, d)
	}
	rows := make([]cliout.Record, len(d.Trials))
	for i, t := range d.Trials {
		rows[i] = cliout.Record{field("stage", t.Stage), field("filters", t.Filters), field("lr", t.LR), field("accuracy_mean", t.Mean),
			field("accuracy_min", slices.Min(t.Accuracy)), field("accuracy_max", slices.Max(t.Accuracy))}
	}
	if err := cliout.WriteRecords(w, f, cliout.Record{field("dataset", d.Dataset), field("tuning_tasks", strings.Join(d.Tasks, " "))}, rows); err != nil || f == cliout.CSV {
		return err
	}
	say := func(h transfer.Hyper) string {
		return fmt.Sprintf("%d filters, learning rates %g (DP-SGD on a share), %g (DP-SGD on the whole set), %g (SGD)", h.Filters, h.LR, h.LRShared, h.LRNonPrivate)
	}
	t := cliout.NewText(w)
	t.Line("chosen on %s: %s", strings.Join(d.Tasks, ", "), say(d.Chosen))
	t.Line("in use for %s: %s", d.Dataset, say(d.InUse))
	return t.Close()
}
