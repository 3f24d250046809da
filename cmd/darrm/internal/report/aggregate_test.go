package report

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/cmd/darrm/internal/resolve"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/statedir"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// TestNewAggregate summarises releases: the per-label guarantee, totals
// only when labels were answered, a budget that stopped the release,
// GNMax's sigma, a seed, and the ledger's state after the release.
func TestNewAggregate(t *testing.T) {
	p := constraints.Problem{K: 3, M: 1, Eps: 0.5, Delta: 1e-5, TargetDelta: 1e-5}
	teachers, target := accountant.Guarantee{Eps: 0.5, Delta: 1e-5}, ensemble.Target{M: 1, Delta: p.TargetDelta}
	rr := build(t, ensemble.RR{Target: target, Composition: accountant.Composition{Method: accountant.General, DeltaPrime: 1e-5}}, 3, 2, teachers)
	gn := build(t, ensemble.GNMax{Target: target, Search: noisymax.GNMaxGrid}, 3, 2, teachers)
	votes, err := votefile.Open("votes.csv", votefile.Options{In: strings.NewReader("1,0,1\n")})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "l.ledger")
	t.Setenv(statedir.Env, t.TempDir())
	b := provenance.Binding{Ensemble: "e", Teachers: provenance.Teachers{K: 3, Each: accountant.Guarantee{Eps: 0.5, Delta: 1e-5}, Relation: accountant.PrivateTeachers, Kind: provenance.PerQuery, Partition: provenance.SharedData}}
	if _, err := ledger.Create(context.Background(), path, ledger.NewHeader(b, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 10, Delta: 1e-3}}, 1e-5, accountant.Filter{Parts: []accountant.FilterPart{{Method: accountant.Simple, Delta: 1e-3}}}), ledger.Options{}); err != nil {
		t.Fatal(err)
	}
	led, err := ledger.Open(context.Background(), path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	if _, err := led.Begin(context.Background(), "rr", b, rr.Privacy().Spend, -1); err != nil {
		t.Fatal(err)
	}
	st, err := led.BalanceFor(rr.Privacy().Spend)
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(7)
	for _, tc := range []struct {
		name   string
		agg    ensemble.Labeler
		res    ensemble.ReleaseResult
		budget *accountant.Budget
		maxQ   int
		seed   *uint64
		led    *ledger.Balance
	}{
		{name: "rr", agg: rr, res: ensemble.ReleaseResult{Released: 4}},
		{name: "nothing answered", agg: rr},
		{name: "stopped by a budget", agg: rr, res: ensemble.ReleaseResult{Released: 2, StoppedByBudget: 3}, budget: &accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1, Delta: 1e-3}}, maxQ: 2},
		{name: "gnmax, seeded", agg: gn, res: ensemble.ReleaseResult{Released: 1}, seed: &seed},
		{name: "charged to a ledger", agg: rr, res: ensemble.ReleaseResult{Released: 1}, led: &st},
	} {
		done := releasedBy(t, tc.agg, provenance.Binding{}, tc.res)
		done.Account.Budget, done.MaxQueries = tc.budget, tc.maxQ
		out := NewAggregate(Release{Released: done, Problem: resolve.Resolved{Problem: p}, Mechanism: provenance.MechanismName(tc.name), Input: "votes.csv", Output: "-",
			Votes: votes, Sink: ensemble.LabelSink{Format: votefile.FormatCSV}, Seed: tc.seed, LedgerPath: path, LedgerStatus: tc.led, Elapsed: time.Second})
		priv := tc.agg.Privacy()
		switch {
		case out.K != 3 || out.InputFormat != "csv" || out.OutputFormat != "csv" || out.PerQuery.Eps != priv.Eps || out.PerQuery.Relation != priv.Relation.String():
			t.Errorf("%s: %+v", tc.name, out)
		// rr's label is described by its pairs: the exact total follows
		// the three compositions of its guarantee.
		case (len(out.Totals) >= 3) != (tc.res.Released > 0) || tc.res.Released > 0 && out.Totals[0].Guarantee.Eps != simpleEps(t, priv.Guarantee, tc.res.Released) ||
			tc.agg == rr && tc.res.Released > 0 && (len(out.Totals) != 4 || out.Totals[3].Name() != "exact"):
			t.Errorf("%s: totals %v for %d labels", tc.name, out.Totals, tc.res.Released)
		case out.QueriesPerSecond != float64(tc.res.Released+tc.res.StoppedByBudget) || out.Answered != tc.res.Released || out.StoppedByBudget != tc.res.StoppedByBudget ||
			out.Queries != tc.res.Released+tc.res.StoppedByBudget || out.Released != tc.res.Released || out.Withheld != 0:
			t.Errorf("%s: %d answered, %d not, %v queries/s", tc.name, out.Answered, out.StoppedByBudget, out.QueriesPerSecond)
		case tc.budget != nil && !out.Budget.Stopped:
			t.Errorf("%s: budget %+v not stopped", tc.name, out.Budget)
		case (out.Sigma2 != nil) != (tc.agg == gn) || out.M == nil || *out.M != p.M || out.Noise != nil || out.Classes != 2:
			t.Errorf("%s: sigma2 %v, m %v, noise %v, %d classes", tc.name, out.Sigma2, out.M, out.Noise, out.Classes)
		case out.ForRelease != (tc.seed == nil) || tc.seed != nil && (*out.Randomness.Seed != seed || out.Randomness.Note != NotForRelease):
			t.Errorf("%s: for release %t, randomness %+v", tc.name, out.ForRelease, out.Randomness)
		case (out.Ledger != nil) != (tc.led != nil) || tc.led != nil && (out.Ledger.Path != path || out.Ledger.Ensemble != "e"):
			t.Errorf("%s: ledger %+v", tc.name, out.Ledger)
		}
	}
}

// TestAggregateLedgerUnits: the ledger's room after a release charged per
// draw is stated in the units it charges and as the queries, every draw
// taken, that they hold at least; after any other release, in queries.
func TestAggregateLedgerUnits(t *testing.T) {
	rr := build(t, ensemble.RR{Target: ensemble.Target{M: 1, Delta: 1e-5}}, 3, 2, accountant.Guarantee{Eps: 0.5, Delta: 1e-5})
	votes, err := votefile.Open("votes.csv", votefile.Options{In: strings.NewReader("1,0,1\n")})
	if err != nil {
		t.Fatal(err)
	}
	left := 250
	for _, tc := range []struct {
		units      int
		text, json string
	}{
		{0, "250 more such queries allowed", `"query_units":null`},
		{100, "250 more units of its charge allowed, room for at least 2 more queries (every draw taken", `"query_units":100`},
	} {
		done := releasedBy(t, rr, provenance.Binding{}, ensemble.ReleaseResult{Released: 1})
		done.QueryUnits = tc.units
		out := NewAggregate(Release{Released: done, Mechanism: "rr", Input: "votes.csv", Output: "-", Votes: votes, Sink: ensemble.LabelSink{Format: votefile.FormatCSV},
			LedgerPath: "l.ledger", LedgerStatus: &ledger.Balance{Ensemble: "e", QueriesLeft: &left}})
		var text, js strings.Builder
		if err := out.Write(&text, cliout.Table); err != nil {
			t.Fatal(err)
		}
		if err := out.Write(&js, cliout.JSON); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(strings.Fields(text.String()), " "); !strings.Contains(got, tc.text) {
			t.Errorf("%d units a query: the text says %q, want %q", tc.units, got, tc.text)
		}
		if got := strings.Join(strings.Fields(js.String()), ""); !strings.Contains(got, tc.json) {
			t.Errorf("%d units a query: the JSON says %s, want %s", tc.units, got, tc.json)
		}
	}
}

// TestAggregateGNMaxTeachers: the summary of a two-class GNMax release,
// calibrated to m·eps of a teachers' (eps, Delta), does not call its
// teachers private: in its one-vote relation they need not be.
func TestAggregateGNMaxTeachers(t *testing.T) {
	p := constraints.Problem{K: 3, M: 1, Eps: 0.5, Delta: 1e-5, TargetDelta: 1e-5}
	gn := build(t, ensemble.GNMax{Target: ensemble.Target{M: 1, Delta: p.TargetDelta}, Search: noisymax.GNMaxGrid}, 3, 2, accountant.Guarantee{Eps: 0.5, Delta: 1e-5})
	votes, err := votefile.Open("votes.csv", votefile.Options{In: strings.NewReader("1,0,1\n")})
	if err != nil {
		t.Fatal(err)
	}
	out := NewAggregate(Release{Released: releasedBy(t, gn, provenance.Binding{}, ensemble.ReleaseResult{Released: 1}), Problem: resolve.Resolved{Problem: p}, Mechanism: "gnmax",
		Input: "votes.csv", Output: "-", Votes: votes, Sink: ensemble.LabelSink{Format: votefile.FormatCSV}})
	var text strings.Builder
	if err := out.Write(&text, cliout.Table); err != nil {
		t.Fatal(err)
	}
	_, votesLine, _ := strings.Cut(text.String(), "\nvotes: ")
	if votesLine, _, _ = strings.Cut(votesLine, "\n"); !strings.HasSuffix(votesLine, "K = 3 teachers, not necessarily private (one-vote relation)") {
		t.Errorf("the votes' line: %q", votesLine)
	}
}

// TestAggregateReadsBack: a release's summary decodes from its own JSON,
// a total composed from a point of the profile (method "profile") among
// its totals, and states each total as the accountant writes it.
func TestAggregateReadsBack(t *testing.T) {
	p := constraints.Problem{K: 11, M: 1, Eps: 0.1, TargetDelta: 1e-5, Relation: accountant.OneVote}
	gn := build(t, ensemble.GNMax{Target: ensemble.Target{M: 1, Delta: p.TargetDelta}, Search: noisymax.GNMaxTight}, 11, 2, accountant.Guarantee{Eps: 0.1})
	votes, err := votefile.Open("votes.csv", votefile.Options{In: strings.NewReader("1,0,1,1,0,1,1,0,1,1,0\n")})
	if err != nil {
		t.Fatal(err)
	}
	done := releasedBy(t, gn, provenance.Binding{}, ensemble.ReleaseResult{Released: 20})
	out := NewAggregate(Release{Released: done, Problem: resolve.Resolved{Problem: p}, Mechanism: "gnmax", Input: "votes.csv", Output: "-", Votes: votes,
		Sink: ensemble.LabelSink{Format: votefile.FormatCSV}, Elapsed: time.Second})
	if !slices.ContainsFunc(out.Totals, func(t Total) bool { return t.Name() == "profile" && t.Point != nil }) {
		t.Fatalf("no total of a point of the profile among %+v", out.Totals)
	}
	// Every key of a total is there, null where it has no value; the
	// values are the accountant's.
	ts, err := done.Account.Totals(nil)
	if err != nil {
		t.Fatal(err)
	}
	var got, want []map[string]any
	gb, _ := json.Marshal(out.Totals)
	wb, _ := json.Marshal(ts)
	if json.Unmarshal(gb, &got) != nil || json.Unmarshal(wb, &want) != nil || len(got) != len(want) {
		t.Fatalf("totals as stated:\n%s\nas the accountant writes them:\n%s", gb, wb)
	}
	for i := range want {
		for k, v := range want[i] {
			if !reflect.DeepEqual(got[i][k], v) {
				t.Errorf("total %d: %s = %v, the accountant's %v", i, k, got[i][k], v)
			}
		}
	}
	for _, key := range []string{`"profile_point":null`, `"delta_prime":null`, `"error":""`} {
		if got, _ := json.Marshal(out.Totals); !strings.Contains(string(got), key) {
			t.Errorf("totals %s: no %s", got, key)
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	var back Aggregate
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("the summary does not read back: %v", err)
	}
	if again, _ := json.Marshal(back); string(again) != string(b) {
		t.Errorf("read back, the summary says\n%s\nnot\n%s", again, b)
	}
}

// TestNewSummary: a release of multi-class votes is summarised as a
// two-class one is, from the same Release, in the same schema: its
// settings and noise, the queries withheld, totals without a cap, and no
// two-class problem.
func TestNewSummary(t *testing.T) {
	in, err := votefile.Open("counts.csv", votefile.Options{In: strings.NewReader("4,3,3\n"), Layout: votefile.LayoutCounts})
	if err != nil {
		t.Fatal(err)
	}
	g := build(t, ensemble.ConfidentGNMax{Threshold: 8, Sigma1: 2, GNMax: ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 2}}, 10, 3, accountant.Guarantee{})
	// the binding a release makes of headerless votes (provenance.Check)
	rel := g.Privacy().Relation
	b, err := provenance.Check(in.Meta(), provenance.Stated{K: g.K(), Classes: g.Classes(), Relation: &rel, Partition: provenance.KeyedHash, Release: true})
	if err != nil {
		t.Fatal(err)
	}
	done := releasedBy(t, g, b, ensemble.ReleaseResult{Released: 5, Withheld: 2, StoppedByBudget: 1})
	out := NewAggregate(Release{Released: done, Mechanism: "confident-gnmax", Input: "counts.csv", Output: "-", Votes: in,
		Sink: ensemble.LabelSink{Format: votefile.FormatCSV}, Elapsed: time.Second})
	switch {
	case out.Queries != 6 || out.Released != 5 || out.Answered != 3 || out.Withheld != 2 || out.StoppedByBudget != 1:
		t.Errorf("counts %+v", out)
	case out.Threshold == nil || *out.Threshold != 8 || *out.Sigma1 != 2 || *out.Sigma2 != 2 || out.Scale != nil || out.Layout != "counts" || out.Classes != 3 || out.Noise == nil:
		t.Errorf("settings %+v", out)
	case out.M != nil || out.Eps != nil || out.Relation != nil || out.EpsSource != nil || out.Gamma != nil || out.Certificate != nil:
		t.Errorf("a two-class problem in a multi-class summary: %+v", out)
	case len(out.Totals) != 5 || out.Totals[3].Name() != "rdp" || out.Totals[4].Name() != "exact" || out.Cap != nil || out.CapNote == "" || out.Totals[0].Bound != accountant.QueriesBound:
		t.Errorf("totals %+v, cap %v %q", out.Totals, out.Cap, out.CapNote)
	case out.Publish.source() != "run" || out.Publish.method() != "exact" || !out.Publish.known() || out.Publish.Guarantee.Eps != out.Totals[4].Guarantee.Eps || out.TotalsRole == "":
		t.Errorf("publish %+v, totals role %q: want the run's exact total", out.Publish, out.TotalsRole)
	}
}

// TestReleaseStopped: a release its budget stopped says how far it got,
// with the rows the threshold step withheld counted as released but not
// answered; one the budget did not stop says nothing.
func TestReleaseStopped(t *testing.T) {
	for _, tc := range []struct {
		res  ensemble.ReleaseResult
		want string
	}{
		{ensemble.ReleaseResult{Released: 10}, ""},
		{ensemble.ReleaseResult{Released: 2, StoppedByBudget: 8}, "released 2 of 10 queries, 8 not released; labels.csv holds the 2 released"},
		{ensemble.ReleaseResult{Released: 3, StoppedByBudget: 7, Withheld: 1}, "released 3 of 10 queries (2 answered, 1 withheld by the threshold step), 7 not released; labels.csv holds the 3 released"},
		{ensemble.ReleaseResult{Released: 0, StoppedByBudget: 1}, "released 0 of 1 query, 1 not released; labels.csv holds the 0 released"},
	} {
		if got := (Release{Output: "labels.csv", Released: ensemble.Released{Result: tc.res}}).Stopped(); got != tc.want {
			t.Errorf("%+v: Stopped() = %q, want %q", tc.res, got, tc.want)
		}
	}
}

// simpleEps is the ε of n steps of g composed simply, the first of the
// totals a release prints.
func simpleEps(t *testing.T, g accountant.Guarantee, n int) float64 {
	t.Helper()
	tot, err := accountant.Composition{Method: accountant.Simple}.Compose(g, n)
	if err != nil {
		t.Fatal(err)
	}
	return tot.Eps
}

// releasedBy returns what a release of agg from the teachers b binds did
// when it released res (ensemble.Release): its account, with slack 1e-5,
// and its total to publish.
func releasedBy(t *testing.T, agg ensemble.Labeler, b provenance.Binding, res ensemble.ReleaseResult) ensemble.Released {
	t.Helper()
	acc, note, err := agg.Privacy().Account(b, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	acc.Steps = res.Released
	done := ensemble.Released{Aggregator: agg, Account: acc, CapNote: note, Result: res}
	if res.Released > 0 {
		if done.Publish, err = acc.Publish(nil); err != nil {
			t.Fatal(err)
		}
	}
	return done
}

// build returns the aggregator of m for k teachers, each teachers-DP,
// over classes classes (ensemble.New).
func build(t *testing.T, m ensemble.Mechanism, k, classes int, teachers accountant.Guarantee) ensemble.Labeler {
	t.Helper()
	l, _, err := ensemble.New(context.Background(), m, k, classes, teachers, ensemble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestAggregatePTRTime: the time of a release by generalized PTR, whose
// test's bound walks over the votes, is marked not for publication in
// JSON and in the table; a release without the test leaves it unmarked.
func TestAggregatePTRTime(t *testing.T) {
	in, err := votefile.Open("counts.csv", votefile.Options{In: strings.NewReader("4,3,3\n"), Layout: votefile.LayoutCounts})
	if err != nil {
		t.Fatal(err)
	}
	g := build(t, ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 2}, 10, 3, accountant.Guarantee{})
	rel := g.Privacy().Relation
	b, err := provenance.Check(in.Meta(), provenance.Stated{K: g.K(), Classes: g.Classes(), Relation: &rel, Partition: provenance.KeyedHash, Release: true})
	if err != nil {
		t.Fatal(err)
	}
	passed := true
	for _, ptr := range []*PTR{nil, {BudgetEps: 2, BudgetDelta: 1e-5, Queries: 1, Passed: &passed}} {
		done := releasedBy(t, g, b, ensemble.ReleaseResult{Released: 1})
		out := NewAggregate(Release{Released: done, Mechanism: "gnmax", Input: "counts.csv", Output: "-", Votes: in,
			Sink: ensemble.LabelSink{Format: votefile.FormatCSV}, Elapsed: time.Second, PTR: ptr})
		var text strings.Builder
		if err := out.Write(&text, cliout.Table); err != nil {
			t.Fatal(err)
		}
		marked := slices.Contains(out.NotForPublication, "seconds") && slices.Contains(out.NotForPublication, "queries_per_second")
		timeLine := regexp.MustCompile(`(?m)^time: .*$`).FindString(text.String())
		if want := ptr != nil; marked != want || strings.Contains(timeLine, "not for publication") != want {
			t.Errorf("PTR %t: not for publication %v, %q", want, out.NotForPublication, timeLine)
		}
	}
}
