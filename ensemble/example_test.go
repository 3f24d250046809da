package ensemble_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/gamma"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// The thesis' setting: K = 11 teachers, each (0.1, 1e-5)-DP; every label
// (3·0.1, 1-(1-1e-5)^3)-DP, the default delta for m = 3.
var (
	teachers = accountant.Guarantee{Eps: 0.1, Delta: 1e-5}
	target   = ensemble.Target{M: 3}
)

// DaRRM with gamma_opt from a file, for the thesis' setting.
func ExampleNew() {
	ctx := context.Background()
	// gamma_opt as darrm solve --K 11 --m 3 --format json wrote it.
	f, err := os.Open("../testdata/gamma-K11-m3.json")
	if err != nil {
		log.Fatal(err)
	}
	opt, err := gamma.ReadTable(f, 0)
	f.Close()
	if err != nil {
		log.Fatal(err)
	}
	// New certifies the gamma it will sample before anything else.
	m := ensemble.DaRRM{Target: target, Gamma: optimal.Source{Given: opt.Gamma}}
	l, _, err := ensemble.New(ctx, m, 11, 2, teachers, ensemble.Options{})
	if err != nil {
		log.Fatal(err)
	}
	d := l.(ensemble.Aggregator)
	fmt.Printf("%s: (%.2g, %.2g)-DP per label, certificate %v\n", d.Name(), d.Privacy().Eps, d.Privacy().Delta, d.Privacy().Certificate.Status)
	label, err := d.Aggregate([]byte{1, 1, 0, 1, 1, 1, 0, 1, 0, 1, 1}, noise.NewSource())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("label is a bit:", label <= 1)
	// Output:
	// darrm: (0.3, 3e-05)-DP per label, certificate certified
	// label is a bit: true
}

// Labels of 0/1 votes into a writer (here standard output), the first
// two queries released (the limit a budget would set).
func ExampleReleaseTo() {
	votes := "id,t1,t2,t3\nq1,1,1,0\nq2,0,0,1\nq3,1,1,1\n"
	pure := 0.0
	ctx := context.Background()
	sub, _, err := ensemble.New(ctx, ensemble.Subsample{Target: ensemble.Target{M: 1, Delta: pure}}, 3, 2, accountant.Guarantee{Eps: 0.5}, ensemble.Options{})
	if err != nil {
		log.Fatal(err)
	}
	in, err := votefile.Open("votes.csv", votefile.Options{In: strings.NewReader(votes)})
	if err != nil {
		log.Fatal(err)
	}
	// A seeded source makes the example reproducible, which a release
	// must opt into; private releases use noise.NewSource (crypto/rand).
	sink := ensemble.LabelSink{Stdout: os.Stdout, Format: votefile.FormatCSV}
	res, err := ensemble.ReleaseTo(ctx, in, sub, noise.NewSeededSource(1), sink, 2, ensemble.ReleaseOptions{Experiment: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("released %d, stopped by the budget %d\n", res.Released, res.StoppedByBudget)
	// Output:
	// # NOT FOR RELEASE: drawn from a seeded generator; anyone who knows the seed can remove the noise
	// # {"darrm-labels":1,"mechanism":"subsample","K":3,"classes":2,"relation":"private-teachers","eps":0.5,"delta":0,"teachers":{"eps":0.5,"Delta":0},"for_release":false}
	// id,label
	// q1,1
	// q2,0
	// released 2, stopped by the budget 1
}

func ExampleSimulate() {
	ctx := context.Background()
	// gamma_opt as darrm solve --K 11 --m 3 --format json wrote it.
	f, err := os.Open("../testdata/gamma-K11-m3.json")
	if err != nil {
		log.Fatal(err)
	}
	opt, err := gamma.ReadTable(f, 0)
	f.Close()
	if err != nil {
		log.Fatal(err)
	}
	var aggs []ensemble.Aggregator
	for _, m := range []ensemble.Mechanism{ensemble.DaRRM{Target: target, Gamma: optimal.Source{Given: opt.Gamma}}, ensemble.Subsample{Target: target}} {
		l, _, err := ensemble.New(ctx, m, 11, 2, teachers, ensemble.Options{})
		if err != nil {
			log.Fatal(err)
		}
		aggs = append(aggs, l.(ensemble.Aggregator))
	}
	p := make([]float64, 11)
	for i := range p {
		p[i] = 0.75
	}
	res, err := ensemble.Simulate(ctx, aggs, p, 100000, 1)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range res {
		fmt.Printf("%-9s exact agreement %.3f, measured in [%.3f, %.3f]\n", r.Name, r.Exact, r.Lo, r.Hi)
	}
	// Output:
	// darrm     exact agreement 0.954, measured in [0.953, 0.955]
	// subsample exact agreement 0.851, measured in [0.850, 0.854]
}

// ExampleNew_baselines builds the baselines, each held to the same
// per-label guarantee, as darrm simulate does.
func ExampleNew_baselines() {
	ctx := context.Background()
	// darrm and darrm-one-vote need a gamma: see ExampleNew.
	for _, m := range []ensemble.Mechanism{ensemble.Subsample{Target: target}, ensemble.RR{Target: target}, ensemble.GNMax{Target: target}} {
		agg, label, err := ensemble.New(ctx, m, 11, 2, teachers, ensemble.Options{})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s, eps %.2g per label: %s\n", agg.Name(), agg.Privacy().Eps, label)
	}
	// Output:
	// subsample, eps 0.3 per label: subsampling: majority of 3 of the 11 teachers, drawn without replacement (Algorithm 8)
	// rr, eps 0.3 per label: randomized response with p_const = 0.297476 (Algorithm 7, Lemma B.1.1, general composition)
	// gnmax, eps 0.3 per label: GNMax: Gaussian noise with sigma = 21.67 on the two class counts (grid search)
}

// Multi-class votes with their metadata header: 250 non-private teachers
// on keyed-hash shares, counts over 10 classes; labels released by
// Confident-GNMax, a withheld query marked. (A seeded source, as in a
// test: never for a release.)
func ExampleReleaseTo_multiClass() {
	votes := `# {"darrm-votes":1,"ensemble":"example","K":250,"classes":10,"layout":"counts","relation":"one-vote","kind":"fixed","partition":"keyed-hash","teachers":[{"count":250,"source":{"method":"none"}}]}
id,c0,c1,c2,c3,c4,c5,c6,c7,c8,c9
a,240,5,5,0,0,0,0,0,0,0
b,60,40,30,30,20,20,20,10,10,10
`
	in, err := votefile.Open("votes.csv", votefile.Options{In: strings.NewReader(votes)})
	if err != nil {
		log.Fatal(err)
	}
	m := ensemble.ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 40}}
	agg, _, err := ensemble.New(context.Background(), m, in.K(), in.Classes(), accountant.Guarantee{}, ensemble.Options{})
	if err != nil {
		log.Fatal(err)
	}
	sink := ensemble.LabelSink{Stdout: os.Stdout, Format: votefile.FormatCSV}
	res, err := ensemble.ReleaseTo(context.Background(), in, agg, noise.NewSeededSource(3), sink, -1, ensemble.ReleaseOptions{Experiment: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d released, %d withheld, each (%.3f, %g)-DP\n", res.Released, res.Withheld, agg.Privacy().Eps, agg.Privacy().Delta)
	// Output:
	// # NOT FOR RELEASE: drawn from a seeded generator; anyone who knows the seed can remove the noise
	// # {"darrm-labels":1,"mechanism":"confident-gnmax","K":250,"classes":10,"relation":"one-vote","partition":"keyed-hash","threshold":200,"sigma1":150,"sigma2":40,"noise":"discrete","eps":0.1732904520775151,"delta":0.00001,"ensemble":"example","abstain":true,"for_release":false}
	// id,label,answered
	// a,0,1
	// b,,0
	// 2 released, 1 withheld, each (0.173, 1e-05)-DP
}

// A ledgered release in one call: the thesis' votes (their metadata
// header states 11 fixed teachers on shared data, each (0.1, 1e-5)-DP),
// DaRRM with gamma_opt from a cache, a budget of (1, 1e-3) for this run,
// and a ledger that keeps the ensemble's total. The teachers' cap, the
// only bound of fixed teachers, is within the budget at its delta: every
// query is released, written and charged. A budget of (1, 1e-4), below
// the cap's delta, would allow none.
func ExampleRelease() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "darrm-example-release")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	votes, err := votefile.Open("../testdata/votes-K11.csv", votefile.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer votes.Close()
	// The ledger, bound to the ensemble the header states, with its own
	// budget across runs (darrm ledger init --votes).
	b, err := provenance.Check(votes.Meta(), provenance.Stated{})
	if err != nil {
		log.Fatal(err)
	}
	opts := ledger.Options{StateDir: filepath.Join(dir, "state")}
	led := filepath.Join(dir, "k11.ledger")
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 10, Delta: 1e-2}}
	filter, err := ledger.DefaultFilter(b, budget)
	if err != nil {
		log.Fatal(err)
	}
	header := ledger.NewHeader(b, budget, 1e-5, filter)
	if _, err := ledger.Create(ctx, led, header, opts); err != nil {
		log.Fatal(err)
	}
	gammas, err := cache.Open(filepath.Join(dir, "cache"))
	if err != nil {
		log.Fatal(err)
	}
	l, err := ledger.Open(ctx, led, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()

	out, err := ensemble.Release(ctx, ensemble.ReleaseSpec{
		Votes:      votes,
		Mechanism:  ensemble.DaRRM{Target: target, Gamma: optimal.Source{Cache: gammas, Prior: gamma.UniformPrior()}},
		Budget:     &accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1, Delta: 1e-3}},
		DeltaPrime: 1e-5,
		Ledger:     l,
		Sink:       ensemble.LabelSink{Path: filepath.Join(dir, "labels.csv"), Format: votefile.FormatCSV},
		// A seed makes the example reproducible: its labels are not for
		// release.
		Random:  noise.NewSeededSource(1),
		Options: ensemble.ReleaseOptions{Experiment: true},
	})
	if err != nil {
		log.Fatal(err) // a stop at the budget is no error: out.Result counts it
	}
	fmt.Println(out.Label)
	fmt.Printf("%d released, %d stopped by the budget, at (%.2g, %.2g)-DP each\n", out.Result.Released, out.Result.StoppedByBudget, out.Aggregator.Privacy().Eps, out.Aggregator.Privacy().Delta)
	fmt.Printf("the run's budget allows them by %s\n", out.Allows.Name())
	bal, err := l.Balance()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("ledger: (%.2g, %.2g) of its (10, 0.01) spent\n", bal.Total.Eps, bal.Total.Delta)
	fmt.Printf("to publish: %v by %s\n", out.Publish.Guarantee, out.Publish.Name())
	// Output:
	// DaRRM with gamma_opt (prior uniform), solved now
	// 20 released, 0 stopped by the budget, at (0.3, 3e-05)-DP each
	// the run's budget allows them by teachers' cap (optimal)
	// ledger: (1.1, 0.00012) of its (10, 0.01) spent
	// to publish: (0.501047, 0.01)-DP by teachers' cap (optimal)
}

// A ledgered release from votes held in memory: the votes with their
// ensemble's metadata header (votefile.ReadRows), a ledger for that
// ensemble with its budget (ledger.VotesHeader, ledger.Create), opened
// for the run (ledger.Open), and the release charged to it. The votes are
// PATE's: 250 non-private teachers on keyed-hash shares, counted over 10
// classes; Confident-GNMax labels them, withholding a query its threshold
// step does not answer (its noise, sigma1 = 150, is wide next to these
// margins). Every field of the spec left out takes its default: the kind
// of votes, the discrete noise, the labels' format (CSV).
func ExampleRelease_inMemory() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "darrm-example-memory")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	meta := &votefile.Meta{Ensemble: "pate-example", K: 250, Classes: 10, Layout: votefile.LayoutCounts,
		Relation: "one-vote", Kind: "fixed", Partition: "keyed-hash",
		Teachers: []votefile.TeacherGroup{{Count: 250, Source: votefile.TeacherSource{Method: "none"}}}}
	counts := [][]int{
		{240, 5, 5, 0, 0, 0, 0, 0, 0, 0},
		{60, 40, 30, 30, 20, 20, 20, 10, 10, 10},
		{3, 2, 225, 10, 0, 0, 5, 5, 0, 0},
	}
	// The records of the ledgers this user made, kept here in the
	// example's directory (by default, $XDG_STATE_HOME/darrm).
	opts := ledger.Options{StateDir: filepath.Join(dir, "state")}
	path := filepath.Join(dir, "pate.ledger")
	var labels bytes.Buffer

	votes, err := votefile.ReadRows(counts, meta)
	if err != nil {
		log.Fatal(err)
	}
	h, err := ledger.VotesHeader(meta, 2, 1e-5)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := ledger.Create(ctx, path, h, opts); err != nil {
		log.Fatal(err)
	}
	l, err := ledger.Open(ctx, path, opts)
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	out, err := ensemble.Release(ctx, ensemble.ReleaseSpec{
		Votes:     votes,
		Mechanism: ensemble.ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 40}},
		Ledger:    l,
		Sink:      ensemble.LabelSink{Stdout: &labels},
		// A seed makes the example reproducible: its labels are not for
		// release.
		Random:  noise.NewSeededSource(3),
		Options: ensemble.ReleaseOptions{Experiment: true},
	})
	if err != nil {
		log.Fatal(err)
	}
	// The header names the ledger the labels were charged to by its id,
	// which ledger.Create drew at random, and the line that
	// reserved them (line 2, after the ledger's header): their bytes and
	// its hash, which hold the time of the run.
	fmt.Print(regexp.MustCompile(`"ledger":"[0-9a-f]{32}"(.*)"ledger_size":\d+,"ledger_head":"[0-9a-f]{64}"`).ReplaceAllString(labels.String(),
		`"ledger":"<its id>"$1"ledger_size":<bytes>,"ledger_head":"<line 2's hash>"`))
	r := out.Result
	st, err := l.BalanceFor(out.Aggregator.Privacy().Spend)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d released (%d withheld), charged to the ledger by its %v\n", r.Released, r.Withheld, st.Composition)
	fmt.Printf("%d more such queries allowed in its budget %v\n", *st.QueriesLeft, st.Budget)
	fmt.Printf("to publish: %v by %s\n", out.Publish.Guarantee, out.Publish.Name())
	// Output:
	// # NOT FOR RELEASE: drawn from a seeded generator; anyone who knows the seed can remove the noise
	// # {"darrm-labels":1,"mechanism":"confident-gnmax","K":250,"classes":10,"relation":"one-vote","partition":"keyed-hash","threshold":200,"sigma1":150,"sigma2":40,"noise":"discrete","eps":0.1732904520775151,"delta":0.00001,"ensemble":"pate-example","abstain":true,"for_release":false,"ledger":"<its id>","ledger_lines":2,"ledger_size":<bytes>,"ledger_head":"<line 2's hash>"}
	// id,label,answered
	// 1,0,1
	// 2,,0
	// 3,,0
	// 3 released (2 withheld), charged to the ledger by its gdp-filter
	// 191 more such queries allowed in its budget (2, 1e-05)-DP
	// to publish: (2, 1e-05)-DP by gdp-filter budget
}
