package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/experiments/patemnist"
	"github.com/darrm/darrm/internal/decimal"
	"github.com/darrm/darrm/pate"
	"github.com/darrm/darrm/provenance"
)

// PATEExperiment is the document of darrm pate.
type PATEExperiment struct {
	Dataset  string       `json:"dataset"`
	Teachers PATETeachers `json:"teachers"`
	// Queries is the number of public queries (the first half of the
	// test set); Holdout the images the student is tested on.
	Queries int `json:"queries"`
	Holdout int `json:"holdout"`
	// AnsweredTarget is the number of answers each mechanism stopped at
	// (darrm pate --answered), nil when every query was asked.
	AnsweredTarget *int            `json:"answered_target,omitempty"`
	Results        []PATEMechanism `json:"results"`
	Student        *PATEStudent    `json:"student,omitempty"`
	// PATE2018 is the PATE paper's row the experiment reproduces.
	PATE2018 PATEPaperRow `json:"pate_2018"`
	// NotForPublication lists the fields computed from the votes (their
	// keys, which are unique in the document): the teachers' accuracy,
	// the data-dependent ε and the order it is taken at, and the
	// smooth-sensitivity release when its parameters are chosen from the
	// votes; Publication says in one line what may be published.
	//
	// Publish names the one total each row publishes (eps_guarantee, a
	// bound; Guarantee its theorem), "" when none may be (the
	// hyperparameters were tuned on this run's private data: TunedOn);
	// Analysis the other totals, parts or estimates of it.
	Publish           string     `json:"publish"`
	Guarantee         string     `json:"guarantee"`
	Analysis          []string   `json:"analysis"`
	TunedOn           string     `json:"tuned_on"`
	EpsReleasedIs     string     `json:"eps_released_is"`
	NotForPublication []string   `json:"not_for_publication"`
	Publication       string     `json:"publication"`
	Randomness        Randomness `json:"randomness"`
	ForRelease        bool       `json:"for_release"`
	Seconds           float64    `json:"seconds"`
}

// PATETeachers describes the teacher ensemble.
type PATETeachers struct {
	K int `json:"K"`
	// AccuracyMean is the teachers' mean accuracy on the queries, a
	// function of their votes: not for publication.
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
	Mechanism provenance.MechanismName `json:"mechanism"`
	Queries   int                      `json:"queries"`
	Accuracy  float64                  `json:"accuracy"`
}

// PATEPaperRow is the PATE paper's Table 2 row for MNIST: Confident-GNMax
// with 250 teachers, T = 200, σ1 = 150, σ2 = 40, at δ = 1e-5.
type PATEPaperRow struct {
	Source          string  `json:"source"`
	Answered        int     `json:"answered"`
	Eps             float64 `json:"eps"`
	StudentAccuracy float64 `json:"student_accuracy"`
	// Baseline is the accuracy of a non-private model.
	Baseline float64 `json:"non_private_accuracy"`
	Note     string  `json:"note"`
}

// pate2018 is PATE 2018's MNIST row of Table 2.
var pate2018 = PATEPaperRow{Source: "Papernot et al. 2018, Table 2 (MNIST, 250 teachers, Confident-GNMax T = 200, sigma1 = 150, sigma2 = 40, delta = 1e-5)",
	Answered: 286, Eps: 1.97, StudentAccuracy: 0.985, Baseline: 0.992,
	Note: "the paper's data-dependent eps by its one-sided Theorem 6, continuous noise; its student adds semi-supervised learning on the unanswered queries"}

// NewPATEExperiment is the document of the experiment's outcome out, run
// on dataset with p, which took elapsed.
func NewPATEExperiment(dataset string, out *patemnist.Outcome, p patemnist.Params, elapsed time.Duration) PATEExperiment {
	e := out.Teachers
	var mean float64
	for _, a := range e.Accuracy {
		mean += a / float64(len(e.Accuracy))
	}
	d := PATEExperiment{Dataset: dataset, Queries: out.Queries, Holdout: out.Holdout, PATE2018: pate2018,
		Teachers:   PATETeachers{K: e.Config.K, AccuracyMean: mean, Ensemble: e.Meta.Ensemble, Cached: out.Cached, Filters: e.Config.Filters, Epochs: e.Config.Epochs},
		Randomness: randomnessOf(p.Seed), ForRelease: p.Seed == nil, Seconds: elapsed.Seconds()}
	if p.Answered > 0 {
		d.AnsweredTarget = &p.Answered
	}
	fromVotes := false
	for i, r := range out.Results {
		d.Results = append(d.Results, NewPATEMechanism(p.Mechanisms[i], r))
		fromVotes = fromVotes || r.Smooth.FromVotes
	}
	if s := out.Student; s != nil {
		d.Student = &PATEStudent{Mechanism: s.Mechanism, Queries: s.Queries, Accuracy: s.Accuracy}
	}
	// The ensemble id hashes the teachers' parameters, and the time taken
	// grows with the smooth-sensitivity analysis' walk over the votes:
	// both are functions of the private data.
	d.NotForPublication = []string{"accuracy_mean", "ensemble", "eps_data_dependent", "order", "seconds"}
	d.Analysis = []string{"eps_data_independent", "eps_released"}
	d.Publish, d.TunedOn, d.EpsReleasedIs = "eps_guarantee", patemnist.TunedOn, epsReleasedIs
	d.Guarantee = "each row's eps_guarantee is a bound at delta on its labels, chosen as for every release: every query asked charged both steps, answered or not " +
		"(with --answered, a Renyi filter whose budget is fixed before the run: the threshold step on every query it may ask, the GNMax step on the answers it stops at; Feldman and Zrnic 2021), " +
		"its Renyi DP (Papernot et al. 2018, Proposition 8; the discrete Gaussian's, Canonne, Kamath and Steinke 2020) composed with the smooth-sensitivity draw when its parameters were fixed without the votes " +
		"(GNSS: the Renyi divergence of its two Gaussians at the worst pair of neighbours a beta-smooth sensitivity allows, added at each order up to the draw's: Mironov 2017, Proposition 1), converted by Canonne-Kamath-Steinke 2020 Prop. 12; " +
		"a row without a draw, every query asked, takes the total aggregate publishes for its labels (the exact composition of the queries' noise)"
	released := "eps_released (an estimate of the data-dependent cost, not a bound, which may be published only as such)"
	tuned := dataset == patemnist.TunedOn
	switch {
	case tuned:
		d.NotForPublication = append(d.NotForPublication, "ss_order", "beta", "sigma_ss", "eps_guarantee", "eps_data_independent", "eps_released", "smooth_sensitivity_error")
		d.Publish, d.Analysis = "", []string{}
		d.Publication = "publish no eps of this run: the teachers' hyperparameters and the data-free rule's smooth-sensitivity constants were tuned on " + patemnist.TunedOn +
			", this run's private data, so neither the teachers (each a function of its share only, which the one-vote relation needs) nor the release's parameters were fixed without it (tuning on private data is itself a release: Papernot and Steinke 2022); run on mnist for a guarantee"
	case fromVotes:
		d.NotForPublication = append(d.NotForPublication, "ss_order", "beta", "sigma_ss", "eps_released", "smooth_sensitivity_error")
		d.Analysis = []string{"eps_data_independent"}
		d.Publication = "publish each mechanism's eps_guarantee as the guarantee of its labels (a bound: guarantee), with the answered counts and the labels' and the student's accuracy; eps_released's smooth-sensitivity parameters were chosen from the votes (--ss-parameters from-votes): not for publication, and eps_guarantee does not cover it"
	default:
		d.Publication = "publish each mechanism's eps_guarantee as the guarantee of its labels (a bound: guarantee), with the answered counts and the labels' and the student's accuracy (the released labels against the public queries' true labels); eps_data_independent and " + released + " are analysis, not the guarantee"
	}
	for _, r := range d.Results {
		if r.Levels != nil {
			d.Publication += fmt.Sprintf("; %s's eps_guarantee is the budget of the Gaussian-DP filter that each of its draws was charged to before it was drawn (Smith and Thakurta 2022), which stopped its run when the next query's draws might not fit; it has no data-dependent or released value", r.Mechanism)
		}
	}
	d.Publication += "; eps_data_independent, eps_data_dependent and eps_released are realised costs (the threshold step charged on every query asked, the GNMax step only where it answered, summed after the fact): analysis, no guarantee; the mechanisms label the same votes, so publishing the labels of both costs both guarantees, composed"
	if p.Directions == pate.OneSided {
		d.Publication += "; the data-dependent values, released ones too, are one-sided (the PATE paper's Theorem 6 as stated): no differential-privacy guarantee"
	}
	if !d.ForRelease {
		// As a seeded aggregate's total: the noise is the seed's, so the
		// labels and what the smooth-sensitivity draw released are the
		// votes' to whoever knows it.
		for _, k := range []string{"eps_guarantee", "eps_released"} {
			if !slices.Contains(d.NotForPublication, k) {
				d.NotForPublication = append(d.NotForPublication, k)
			}
		}
		d.Analysis = slices.DeleteFunc(d.Analysis, func(k string) bool { return k == "eps_released" })
		d.Publication = "a seeded run (--seed) is an experiment: anyone who knows the seed removes its noise, so neither its labels nor eps_guarantee or eps_released may be published; without --seed: " + d.Publication
	}
	return d
}

// PATEMechanism is one mechanism's row of the experiment.
type PATEMechanism struct {
	Mechanism provenance.MechanismName `json:"mechanism"`
	Threshold *float64                 `json:"threshold,omitempty"`
	Sigma1    *float64                 `json:"sigma1,omitempty"`
	Sigma2    float64                  `json:"sigma2"`
	// Levels, Kappa and GiveUp are progressive GNMax's (darrm pate
	// --mechanism progressive-gnmax), whose Sigma2 is 0; its
	// EpsGuarantee is its Gaussian-DP filter's budget.
	Levels []float64 `json:"levels,omitempty"`
	Kappa  *float64  `json:"kappa,omitempty"`
	GiveUp *float64  `json:"give_up,omitempty"`
	// Queries counts the queries asked, Answered those answered;
	// Reached says whether the answers reached darrm pate --answered.
	Queries        int      `json:"queries"`
	Answered       int      `json:"answered"`
	Reached        bool     `json:"reached"`
	Accuracy       float64  `json:"accuracy"`
	Directions     string   `json:"directions"`
	EpsIndependent *float64 `json:"eps_data_independent"`
	EpsDependent   *float64 `json:"eps_data_dependent"`
	Order          *float64 `json:"order"`
	SSOrder        *float64 `json:"ss_order"`
	Beta           *float64 `json:"beta"`
	SigmaSS        *float64 `json:"sigma_ss"`
	EpsReleased    *float64 `json:"eps_released"`
	EpsGuarantee   float64  `json:"eps_guarantee"`
	SSError        string   `json:"smooth_sensitivity_error,omitempty"`
	Delta          float64  `json:"delta"`
}

// NewPATEMechanism is the row of the result r of the mechanism whose
// settings are m (ensemble.Mechanism's GNMax).
func NewPATEMechanism(m ensemble.Mechanism, r pate.Result) PATEMechanism {
	s := settingsOf(m)
	row := PATEMechanism{Mechanism: r.Mechanism, Sigma2: valueOf(s.Sigma2), Levels: s.Levels, Kappa: s.Kappa, GiveUp: s.GiveUp, Queries: r.Queries, Answered: r.Answered, Reached: r.Reached, Accuracy: r.Accuracy,
		Directions: r.Directions.String(), EpsIndependent: r.EpsIndependent, EpsDependent: r.EpsDependent, Order: r.Order, EpsReleased: r.EpsReleased, EpsGuarantee: r.Publish.Guarantee.Eps, SSError: r.SSError, Delta: r.Delta}
	row.Threshold, row.Sigma1 = s.Threshold, s.Sigma1
	if ss := r.Smooth; ss.Order != 0 {
		row.SSOrder = &ss.Order
		if r.EpsReleased != nil {
			row.Beta, row.SigmaSS = &ss.Beta, &ss.Sigma
		}
	}
	return row
}

// Write prints the document in format f.
func (d PATEExperiment) Write(w io.Writer, f cliout.Format) error {
	switch f {
	case cliout.JSON:
		return cliout.WriteJSON(w, d)
	case cliout.CSV:
		header := []string{"K", "teachers_accuracy_mean", "ensemble", "mechanism", "queries", "answered", "reached", "accuracy", "directions", "eps_data_independent", "eps_data_dependent", "order",
			"ss_order", "beta", "sigma_ss", "eps_released", "eps_guarantee", "smooth_sensitivity_error", "delta", "student_accuracy", "seconds", "publish", "analysis", "tuned_on", "eps_released_is", "not_for_publication", "publication"}
		// The CSV's column of the teachers' accuracy is teachers_accuracy_mean.
		nfp := strings.ReplaceAll(strings.Join(d.NotForPublication, " "), "accuracy_mean", "teachers_accuracy_mean")
		var rows [][]string
		for _, r := range d.Results {
			student := ""
			if d.Student != nil && d.Student.Mechanism == r.Mechanism {
				student = cliout.Float(d.Student.Accuracy)
			}
			rows = append(rows, []string{fmt.Sprint(d.Teachers.K), cliout.Float(d.Teachers.AccuracyMean), d.Teachers.Ensemble, string(r.Mechanism), fmt.Sprint(r.Queries), fmt.Sprint(r.Answered), fmt.Sprint(r.Reached),
				cliout.Float(r.Accuracy), r.Directions, optFloat(r.EpsIndependent), optFloat(r.EpsDependent), optFloat(r.Order),
				optFloat(r.SSOrder), optFloat(r.Beta), optFloat(r.SigmaSS), optFloat(r.EpsReleased), cliout.Float(r.EpsGuarantee), r.SSError, cliout.Float(r.Delta), student, cliout.Float(d.Seconds),
				d.Publish, strings.Join(d.Analysis, " "), d.TunedOn, d.EpsReleasedIs, nfp, d.Publication})
		}
		return cliout.WriteCSV(w, header, rows)
	}
	t := cliout.NewText(w)
	d.Randomness.write(t)
	private := func(key, s string) string {
		if slices.Contains(d.NotForPublication, key) {
			return s + " *"
		}
		return s
	}
	cached := "trained"
	if d.Teachers.Cached {
		cached = "from the cache"
	}
	t.Line("teachers: %d on keyed-hash shares of %s's training set (%s, %d filters, %d epochs); %s %s; %s %.4f",
		d.Teachers.K, d.Dataset, cached, d.Teachers.Filters, d.Teachers.Epochs, private("ensemble", "ensemble"), d.Teachers.Ensemble, private("accuracy_mean", "mean accuracy on the queries"), d.Teachers.AccuracyMean)
	asked := fmt.Sprintf("every one of the first %d test images", d.Queries)
	if d.AnsweredTarget != nil {
		asked = fmt.Sprintf("the first %d test images in order, until %d are answered", d.Queries, *d.AnsweredTarget)
	}
	t.Line("queries: %s; the student is tested on the other %d", asked, d.Holdout)
	var rows [][]string
	for _, r := range d.Results {
		released := "-"
		if r.EpsReleased != nil {
			released = fmt.Sprintf("%.4g", *r.EpsReleased)
		}
		// The ε bounds are rounded up, as every table prints a total: four
		// digits that never read below the value (eps_released, an
		// estimate, to the nearest).
		bound := func(x float64) string { return decimal.Format(x, 4, true, 8) }
		independent, dependent := "-", "-"
		if r.EpsIndependent != nil {
			independent, dependent = bound(*r.EpsIndependent), bound(*r.EpsDependent)
		}
		student := ""
		if d.Student != nil && d.Student.Mechanism == r.Mechanism {
			student = fmt.Sprintf("%.4f", d.Student.Accuracy)
		}
		answered := fmt.Sprint(r.Answered)
		if !r.Reached {
			answered += " (all there were)"
		}
		rows = append(rows, []string{string(r.Mechanism), fmt.Sprint(r.Queries), answered, fmt.Sprintf("%.4f", r.Accuracy), independent, dependent, released,
			bound(r.EpsGuarantee), student})
	}
	p := d.PATE2018
	rows = append(rows, []string{"PATE 2018", "", fmt.Sprint(p.Answered), "", "", fmt.Sprintf("%g", p.Eps), "", "", fmt.Sprintf("%.4f", p.StudentAccuracy)})
	// The data-dependent columns say when they are one-sided bounds, the
	// released one that it is an estimate; the one total to publish says
	// so.
	dep, rel := "eps dep.", "eps rel. (estimate)"
	if d.Results[0].Directions == pate.OneSided.String() {
		dep, rel = "eps dep. (one-sided)", "eps rel. (estimate, one-sided)"
	}
	guar := "eps guarantee"
	if d.Publish != "" && d.ForRelease {
		guar += " (publish)"
	}
	header := []string{"mechanism", "asked", "answered", "label acc.", private("eps_data_independent", "eps indep."), private("eps_data_dependent", dep), private("eps_released", rel), private("eps_guarantee", guar), "student"}
	t.Table(header, rows)
	t.Line("* %s", notForPublication)
	t.Line("eps at delta = %g, data-dependent in %s direction(s); eps released by smooth sensitivity, its parameters %s:",
		d.Results[0].Delta, d.Results[0].Directions, d.ssChoice())
	for _, r := range d.Results {
		if r.SSError != "" {
			t.Line("  %s: none released: %s: %s", r.Mechanism, private("smooth_sensitivity_error", "error"), r.SSError)
		} else {
			t.Line("  %s: %s %s, %s %s, %s %s", r.Mechanism, private("ss_order", "order"), g6(*r.SSOrder), private("beta", "beta"), g6(*r.Beta), private("sigma_ss", "sigma_ss"), g6(*r.SigmaSS))
		}
	}
	t.Line("%s", d.Publication)
	if d.Publish != "" {
		t.Line("guarantee: %s", d.Guarantee)
	}
	t.Line("PATE 2018: %s: eps %g, %s", p.Source, p.Eps, p.Note)
	t.Line("columns: label accuracy against the true labels, eps at delta = %g (independent, data-dependent, released by smooth sensitivity: an estimate, not a bound; the guarantee), the student's accuracy", d.Results[0].Delta)
	if s := d.Student; s != nil {
		t.Line("student: trained on the %d queries %s answered, tested on the held-out half (post-processing of the labels: their guarantee)", s.Queries, s.Mechanism)
	}
	t.Line("%s: %.3g s", private("seconds", "time"), d.Seconds)
	return t.Close()
}

// ssChoice says how the smooth-sensitivity parameters were chosen.
func (d PATEExperiment) ssChoice() string {
	switch {
	case d.TunedOn == d.Dataset:
		return "the flags, else darrm's data-free rule, whose constants were set on " + d.TunedOn + " votes: this run's private data, so not fixed without them"
	case slices.Contains(d.NotForPublication, "ss_order"):
		return "chosen from the votes, as the PATE authors do"
	}
	return "fixed without the votes: the flags, else darrm's data-free rule (its constants set on " + d.TunedOn + ", not this run's data)"
}

func optFloat(p *float64) string {
	if p == nil {
		return ""
	}
	return cliout.Float(*p)
}
