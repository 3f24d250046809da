package pate

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// countsReader writes counts as a counts file of K = 250 teachers over the
// classes of its first query (10 without one) with a header of relation
// rel and returns its reader.
func countsReader(t *testing.T, counts [][]int, rel accountant.Relation) votefile.Reader {
	t.Helper()
	classes := 10
	if len(counts) > 0 {
		classes = len(counts[0])
	}
	meta := provenance.Binding{Ensemble: "acct", Teachers: provenance.Teachers{K: 250, Relation: rel, Kind: provenance.Fixed, Partition: provenance.KeyedHash}}.Header(classes, votefile.LayoutCounts)
	if rel == accountant.PrivateTeachers {
		meta.Partition = provenance.SharedData.String()
		meta.Teachers = []votefile.TeacherGroup{provenance.StatedTeachers(250, accountant.Guarantee{Eps: 1, Delta: 1e-5})}
	}
	var b bytes.Buffer
	if err := votefile.WriteCounts(&b, meta, nil, counts); err != nil {
		t.Fatal(err)
	}
	in, err := votefile.Open("counts", votefile.Options{In: &b})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// releaseLabels releases labels of counts by m's mechanism, seeded, and
// returns the aggregator and the label file.
func releaseLabels(t *testing.T, m paperMech, counts [][]int) (ensemble.Labeler, bytes.Buffer) {
	t.Helper()
	agg, err := build(m.mech(), 250, 10)
	if err != nil {
		t.Fatal(err)
	}
	var labels bytes.Buffer
	sink := ensemble.LabelSink{Stdout: &labels, Format: votefile.FormatCSV}
	if _, err := ensemble.ReleaseTo(t.Context(), countsReader(t, counts, accountant.OneVote), agg, noise.NewSeededSource(2), sink, -1, ensemble.ReleaseOptions{Experiment: true}); err != nil {
		t.Fatal(err)
	}
	return agg, labels
}

// TestAccount: the realised account of a release is the account that
// pate.Label computes from its labels; votes in the private-teachers
// relation and settings other than the label file's are refused.
func TestAccount(t *testing.T) {
	counts, truth := syntheticCounts(60, 4)
	m := paperMechanisms()[0]
	_, labels := releaseLabels(t, m, counts)
	opts := func() AccountOptions {
		lr, err := votefile.NewLabelReader(bytes.NewReader(labels.Bytes()), "labels")
		if err != nil {
			t.Fatal(err)
		}
		return AccountOptions{Memo: ptrMemo, Mechanism: m.mech(), Delta: paperDelta, Conversion: accountant.PaperConversion, Labels: lr}
	}
	a, err := Account(t.Context(), countsReader(t, counts, accountant.OneVote), opts())
	if err != nil {
		t.Fatal(err)
	}
	if a.Result.Queries != 60 || a.Result.Answered < 1 || a.Result.Answered > 60 || !a.Realised || !(a.Result.Dependent.Eps <= a.Result.Independent.Eps) {
		t.Errorf("account %+v", a.Result)
	}
	// The same answers through pate.Label's account (the same seeded draws).
	res, err := Label(t.Context(), counts, 250, 10, truth, m.mech(), Labelling{Delta: paperDelta}, noise.NewSeededSource(2))
	if err != nil {
		t.Fatal(err)
	}
	if res.EpsIndependent == nil || res.EpsDependent == nil {
		t.Fatalf("Label of GNMax made no Rényi analysis: %+v", res)
	}
	if res.Answered != a.Result.Answered || *res.EpsIndependent != a.Result.Independent.Eps || *res.EpsDependent != a.Result.Dependent.Eps {
		t.Errorf("Label: %d answered, eps %v, %v; Account: %d, %v, %v", res.Answered, *res.EpsIndependent, *res.EpsDependent, a.Result.Answered, a.Result.Independent.Eps, a.Result.Dependent.Eps)
	}

	other := opts()
	m80 := m
	m80.GNMax.Sigma2 = 80
	other.Mechanism = m80.mech()
	if _, err := Account(t.Context(), countsReader(t, counts, accountant.OneVote), other); err == nil || !strings.Contains(err.Error(), "sigma2 = 80 given, but the label file's header states sigma2 = 40") {
		t.Errorf("sigma2 80 against labels at 40: %v", err)
	}
	var te *provenance.TeachersError
	if _, err := Account(t.Context(), countsReader(t, counts, accountant.PrivateTeachers), AccountOptions{Memo: ptrMemo, Mechanism: paperMechanisms()[1].mech(), Delta: paperDelta}); !errors.As(err, &te) || te.Field != "relation" {
		t.Errorf("votes in the private-teachers relation: %v", err)
	}
}

// TestAccountChecksHeaderOnce: Account compares with the votes' header
// its caller checked (AccountOptions.Header) and does not check it again
// (a header that would now fail the check is accounted), checks it itself
// when not given, and refuses the check of another header.
func TestAccountChecksHeaderOnce(t *testing.T) {
	counts, _ := syntheticCounts(20, 4)
	opts := AccountOptions{Memo: ptrMemo, Mechanism: paperMechanisms()[0].mech(), Delta: paperDelta}
	in := countsReader(t, counts, accountant.OneVote)
	h, err := provenance.CheckHeader(in.Meta())
	if err != nil {
		t.Fatal(err)
	}
	in.Meta().Relation = "no-such-relation"
	given := opts
	given.Header = h
	if _, err := Account(t.Context(), in, given); err != nil {
		t.Errorf("the header checked by the caller: %v (checked again?)", err)
	}
	if _, err := Account(t.Context(), in, opts); err == nil || !strings.Contains(err.Error(), `relation "no-such-relation"`) {
		t.Errorf("no header given: %v, want Account's check refusing the relation", err)
	}
	other := countsReader(t, counts, accountant.OneVote)
	if _, err := Account(t.Context(), other, given); err == nil || !strings.Contains(err.Error(), "AccountOptions.Header") {
		t.Errorf("the check of another header: %v, want refused naming AccountOptions.Header", err)
	}
}

// TestAccountRefusesContradictoryHeader: a label header whose settings do
// not give its own stated per-label (eps, delta) is damaged input (issue
// 40, item 3): sigma2 edited from 40 to 400 (which would report a tenth of
// the cost), sigma1 edited, or eps edited, each refused before any account,
// naming the field and both values.
func TestAccountRefusesContradictoryHeader(t *testing.T) {
	counts, _ := syntheticCounts(20, 4)
	m := paperMechanisms()[0]
	agg, labels := releaseLabels(t, m, counts)
	stated := strconv.FormatFloat(agg.Privacy().Eps, 'g', -1, 64)
	for _, tc := range []struct{ from, to, want string }{
		{`"sigma2":40`, `"sigma2":400`, "sigma2 = 400"},
		{`"sigma1":150`, `"sigma1":15`, "sigma1 = 15"},
		{`"eps":` + stated, `"eps":0.01`, "eps = 0.01"},
	} {
		edited := bytes.Replace(labels.Bytes(), []byte(tc.from), []byte(tc.to), 1)
		if bytes.Equal(edited, labels.Bytes()) {
			t.Fatalf("%s not in the labels", tc.from)
		}
		lr, err := votefile.NewLabelReader(bytes.NewReader(edited), "labels")
		if err != nil {
			t.Fatal(err)
		}
		// As darrm account pate does: the settings are the header's.
		s, err := ensemble.Mechanisms().FromHeader(lr.Meta())
		if err != nil {
			t.Fatal(err)
		}
		opts := AccountOptions{Memo: ptrMemo, Mechanism: s, Delta: paperDelta, Conversion: accountant.PaperConversion, Labels: lr}
		_, err = Account(t.Context(), countsReader(t, counts, accountant.OneVote), opts)
		var bad interface{ BadInput() bool }
		if !errors.As(err, &bad) || !bad.BadInput() || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "eps") {
			t.Errorf("%s -> %s: %v, want bad input naming %q and eps", tc.from, tc.to, err, tc.want)
		}
	}
}

// TestAccountAgainstLedger: with the releases a ledger records as the
// reference (issue 40, item 3), a label header that agrees with itself but
// not with any recorded release (sigma2 and eps both edited), of another
// ensemble, with more labels than the release charged, or charged to a
// ledger of another id (issue 55), is refused.
func TestAccountAgainstLedger(t *testing.T) {
	counts, _ := syntheticCounts(20, 4)
	m := paperMechanisms()[1] // gnmax alone: its eps follows from sigma2
	agg, labels := releaseLabels(t, m, counts)
	g := agg.Privacy().Guarantee
	forged, err := build(classMechanism(ensemble.GNMax{}.Name(), noisymax.Steps{Sigma2: 400, Noise: noisymax.DiscreteNoise}, paperDelta), 250, 10)
	if err != nil {
		t.Fatal(err)
	}
	self := bytes.Replace(labels.Bytes(), []byte(`"sigma2":40,`), []byte(`"sigma2":400,`), 1)
	self = bytes.Replace(self, []byte(`"eps":`+strconv.FormatFloat(g.Eps, 'g', -1, 64)), []byte(`"eps":`+strconv.FormatFloat(forged.Privacy().Eps, 'g', -1, 64)), 1)
	release := RecordedRelease{Mechanism: m.Name, PerQuery: g, Labels: 20}
	ids := [2]string{strings.Repeat("a", 32), strings.Repeat("b", 32)}
	charged := bytes.Replace(labels.Bytes(), []byte(`"for_release":`), []byte(`"ledger":"`+ids[0]+`","for_release":`), 1)
	for _, tc := range []struct {
		name   string
		file   []byte
		ledger Recorded
		ok     bool
	}{
		{"as released", labels.Bytes(), Recorded{Ledger: "L", Ensemble: "acct", Releases: []RecordedRelease{release}}, true},
		{"a header that agrees with itself, not with the ledger", self, Recorded{Ledger: "L", Ensemble: "acct", Releases: []RecordedRelease{release}}, false},
		{"another ensemble's ledger", labels.Bytes(), Recorded{Ledger: "L", Ensemble: "other", Releases: []RecordedRelease{release}}, false},
		{"fewer labels charged", labels.Bytes(), Recorded{Ledger: "L", Ensemble: "acct", Releases: []RecordedRelease{{Mechanism: m.Name, PerQuery: g, Labels: 19}}}, false},
		{"no release recorded", labels.Bytes(), Recorded{Ledger: "L", Ensemble: "acct"}, false},
		{"charged to this ledger", charged, Recorded{Ledger: "L", ID: ids[0], Ensemble: "acct", Releases: []RecordedRelease{release}}, true},
		{"charged to another ledger", charged, Recorded{Ledger: "L", ID: ids[1], Ensemble: "acct", Releases: []RecordedRelease{release}}, false},
	} {
		lr, err := votefile.NewLabelReader(bytes.NewReader(tc.file), "labels")
		if err != nil {
			t.Fatal(err)
		}
		s, err := ensemble.Mechanisms().FromHeader(lr.Meta())
		if err != nil {
			t.Fatal(err)
		}
		opts := AccountOptions{Memo: ptrMemo, Mechanism: s, Delta: paperDelta, Conversion: accountant.PaperConversion, Labels: lr, Recorded: &tc.ledger}
		_, err = Account(t.Context(), countsReader(t, counts, accountant.OneVote), opts)
		var bad interface{ BadInput() bool }
		if tc.ok != (err == nil) || (!tc.ok && (!errors.As(err, &bad) || !strings.Contains(err.Error(), "ledger L"))) {
			t.Errorf("%s: %v", tc.name, err)
		}
		if tc.ledger.ID == ids[1] && (err == nil || !strings.Contains(err.Error(), ids[0]) || !strings.Contains(err.Error(), ids[1])) {
			t.Errorf("%s: %v, want both ids", tc.name, err)
		}
	}
}

// TestTotalsAreTheRelease's: the totals of an account are those that the
// release of its queries reports (ensemble.Release, the library path of
// darrm aggregate): for a release its budget stopped, the account of its
// labels (the votes after the last one read and keyed, not accounted), the
// account of the same queries' votes without labels, and the release
// agree total by total; the realised cost (the GNMax step charged only
// where answered) is below the total to publish, and is not among them
// (issue 45).
func TestTotalsAreTheRelease(t *testing.T) {
	// Under -short 100 queries and a budget of eps 1, which stops the
	// release within them, rather than 300 and eps 2.
	queries, budgetEps := 300, 2.0
	if testing.Short() {
		queries, budgetEps = 100, 1
	}
	counts, _ := syntheticCounts(queries, 6)
	m := paperMechanisms()[0]
	var labels bytes.Buffer
	budget := accountant.Guarantee{Eps: budgetEps, Delta: paperDelta}
	done, err := ensemble.Release(t.Context(), ensemble.ReleaseSpec{
		Votes: countsReader(t, counts, accountant.OneVote), Mechanism: m.mech(),
		Budget: &accountant.Budget{Guarantee: budget}, DeltaPrime: accountant.DefaultDeltaPrime,
		Sink: ensemble.LabelSink{Stdout: &labels, Format: votefile.FormatCSV}, Random: noise.NewSeededSource(3), Options: ensemble.ReleaseOptions{Experiment: true}})
	if err != nil || done.Result.StoppedByBudget == 0 {
		t.Fatalf("release: %v, %+v: want stopped by its budget", err, done.Result)
	}
	n := done.Result.Released
	released, err := done.Account.Totals(nil)
	if err != nil {
		t.Fatal(err)
	}
	lr, err := votefile.NewLabelReader(bytes.NewReader(labels.Bytes()), "labels")
	if err != nil {
		t.Fatal(err)
	}
	opts := optionsOf(SmoothParams{})
	opts.Labels = lr
	realised := accountOf(t, countsReader(t, counts, accountant.OneVote), opts)
	whole := prepared(t, counts, SmoothParams{})
	expected := prepared(t, counts[:n], SmoothParams{})
	if realised.Queries() != n || realised.Unlabelled != queries-n || realised.Votes != whole.Votes || !realised.Realised {
		t.Fatalf("labels of %d of %d queries: accounted %d, unlabelled %d, key %.12s (the votes' %.12s)", n, queries, realised.Queries(), realised.Unlabelled, realised.Votes, whole.Votes)
	}
	for name, a := range map[string]*AccountResult{"labels": realised, "votes": expected} {
		got, err := a.totals()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(released) {
			t.Fatalf("%s: %d totals, the release's %d", name, len(got), len(released))
		}
		for i := range got {
			if got[i].Method != released[i].Method || got[i].Guarantee != released[i].Guarantee {
				t.Errorf("%s: total %d is %v, the release's %v", name, i, got[i], released[i])
			}
		}
	}
	exact := released[len(released)-1]
	if exact.Method != accountant.Exact || !exact.Guarantee.Within(budget) {
		t.Errorf("the release's exact total %v, budget %v", exact, budget)
	}
	if r := realised.Result.Independent.Eps; !(r < exact.Guarantee.Eps) {
		t.Errorf("realised cost %v not below the total %v: the test does not show the realised cost left out", r, exact.Guarantee.Eps)
	}
}

// TestAccountAbstentions: votes with abstaining teachers (rows summing to
// fewer than K under a header that states K) are accounted in the relation
// with abstentions, the data-dependent bound exactly noisymax's account
// of the same counts with Options.Abstain; counts read without a K that
// all sum to it are in the relation of teachers that all vote.
func TestAccountAbstentions(t *testing.T) {
	counts, _ := syntheticCounts(30, 9)
	for i, c := range counts {
		if i%3 == 1 {
			c[(i/3)%10] = max(0, c[(i/3)%10]-40) // up to 40 teachers abstained
		}
	}
	m := paperMechanisms()[0]
	opts := AccountOptions{Memo: ptrMemo, Mechanism: m.mech(), Delta: paperDelta, Conversion: accountant.PaperConversion}
	// votefile.WriteCounts writes rows of K votes only.
	meta := provenance.Binding{Ensemble: "acct", Teachers: provenance.Teachers{K: 250, Relation: accountant.OneVote, Kind: provenance.Fixed, Partition: provenance.KeyedHash}}.Header(10, votefile.LayoutCounts)
	file, err := meta.AppendHeader(nil, votefile.FormatCSV)
	if err != nil {
		t.Fatal(err)
	}
	in, err := votefile.Open("abstain", votefile.Options{In: bytes.NewReader(append(file, csvRows(counts)...))})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Account(t.Context(), in, opts)
	if err != nil {
		t.Fatal(err)
	}
	_, r := rdpAccountOf(t, m.GNMax, counts, rdpOptions{memo: testMemo, Abstain: true})
	if !got.Abstain || got.Result.Dependent != r.Dependent || got.Result.Independent != r.Independent || got.Smooth.Error != "" {
		t.Errorf("abstain %v, dependent %+v (noisymax %+v), independent %+v (%+v), smooth error %q", got.Abstain, got.Result.Dependent, r.Dependent, got.Result.Independent, r.Independent, got.Smooth.Error)
	}
	without, err := newRDPAccount(m.GNMax, 250, 10, rdpOptions{memo: testMemo})
	if err != nil {
		t.Fatal(err)
	}
	if err := without.add(counts[1], answerUnknown); err == nil || !strings.Contains(err.Error(), "must sum to K = 250") {
		t.Errorf("a row of fewer votes without abstentions: %v", err)
	}
	full, _ := syntheticCounts(5, 9)
	in, err = votefile.Open("full", votefile.Options{In: strings.NewReader(csvRows(full)), Layout: votefile.LayoutCounts})
	if err != nil {
		t.Fatal(err)
	}
	if all, err := Account(t.Context(), in, opts); err != nil || all.Abstain {
		t.Errorf("counts that sum to K without a K stated: abstain %v, %v", all != nil && all.Abstain, err)
	}
}

// csvRows returns counts as CSV rows, one a query.
func csvRows(counts [][]int) string {
	var b strings.Builder
	for _, c := range counts {
		for j, n := range c {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(n))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// totals returns the totals at the account's δ of everything it covers,
// each a valid bound, of which the caller publishes the one that the
// release's report chooses (that of aggregate): without a draw, those of
// a release of its queries as aggregate reports them (Release.Totals:
// every query charged in full, its noise composed exactly, or by RDP and
// the per-query compositions), the same whether or not the account is of
// the release's labels, since which queries were answered is not fixed
// before the run; with draws (AccountResult.Draws), one: the Rényi composition of the
// queries' data-independent curve and every draw (rdpTotal).
func (a *AccountResult) totals() ([]accountant.Total, error) {
	if len(a.Draws) == 0 {
		acc := a.Release
		if acc.Steps = a.Queries(); acc.Steps == 0 {
			return nil, nil
		}
		ts, err := acc.Totals(nil)
		if err != nil {
			return nil, nil
		}
		return ts, nil
	}
	t, err := a.drawsTotal()
	return []accountant.Total{t}, err
}

// TestAccountReleaseSteps: AccountResult.Release is the account of a
// release of the queries accounted, its Steps their number, as its
// comment says, for the GNMax family and LNMax alike: Steps was 0, so
// that its totals were those of no query.
func TestAccountReleaseSteps(t *testing.T) {
	counts, _ := syntheticCounts(12, 7)
	for _, tc := range []struct {
		name string
		mech ensemble.Mechanism
	}{
		{name: "gnmax", mech: paperMechanisms()[0].mech()},
		{name: "lnmax", mech: ensemble.LNMax{Scale: 50}},
	} {
		a, err := Account(t.Context(), countsReader(t, counts, accountant.OneVote), AccountOptions{Memo: ptrMemo, Mechanism: tc.mech, Delta: paperDelta})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if a.Queries() != len(counts) || a.Release.Steps != len(counts) {
			t.Errorf("%s: %d queries accounted, Release.Steps %d, want %d", tc.name, a.Queries(), a.Release.Steps, len(counts))
		}
	}
}

// nextCounter is a votefile.Reader that counts its Next calls.
type nextCounter struct {
	votefile.Reader
	next int
}

func (r *nextCounter) Next() bool { r.next++; return r.Reader.Next() }

// TestAccountCancelledManyClasses: Account stops at a done context within
// a query of many classes, each of whose bounds takes time in proportion
// to its classes (a tenth of a second at 500,000), not after 256 of them.
func TestAccountCancelledManyClasses(t *testing.T) {
	const classes, queries = 1 << 16, 8
	counts := make([][]int, queries)
	for i := range counts {
		counts[i] = make([]int, classes)
		counts[i][i] = 250
	}
	r := &nextCounter{Reader: countsReader(t, counts, accountant.OneVote)}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	m := paperMechanisms()[1]
	if _, err := Account(ctx, r, AccountOptions{Memo: ptrMemo, Mechanism: m.mech(), Delta: paperDelta, Conversion: accountant.PaperConversion}); !errors.Is(err, context.Canceled) || r.next != 1 {
		t.Errorf("Account on a cancelled context: %v after %d of %d queries; want context.Canceled after the first", err, r.next, queries)
	}
}
