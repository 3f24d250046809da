package ensemble

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/noise"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// stepLedger is a fakeLedger that records the step and the limit a run
// begins with.
type stepLedger struct {
	fakeLedger
	step  accountant.Spend
	limit int
	full  bool // no room left: Begin allows none
}

func (l *stepLedger) Begin(_ context.Context, _ provenance.MechanismName, _ provenance.Binding, step accountant.Spend, limit int) (int, error) {
	l.step, l.limit = step, limit
	if l.full {
		return 0, nil
	}
	return limit, nil
}

// TestReleaseAccounted: a release accounted as a whole is refused with a
// budget, a total δ, MaxQueries, no test or no query; its test runs after the
// ledger's one charge of its total and before any label: a failed test
// writes nothing and is ErrTestFailed, a test's error is the accounting
// step's, and a pass labels the first Queries queries (the rest not
// requested, and no error) under a header that states the accounting and
// the total, which Release publishes. A ledger with no room for the
// total stops it before the test, an outcome and no error: nothing
// drawn, written or charged, its queries counted as stopped.
func TestReleaseAccounted(t *testing.T) {
	total := accountant.Total{Guarantee: accountant.Guarantee{Eps: 1.5, Delta: 1e-5}, Argument: "an argument", ArgumentSource: "a proof"}
	errTest := errors.New("test broke")
	for _, tc := range []struct {
		name     string
		queries  int
		budget   bool
		max      int
		test     func(context.Context) (bool, error)
		want     error
		released int
		noLedger bool
		full     bool
	}{
		{name: "pass", queries: 3, test: func(context.Context) (bool, error) { return true, nil }, released: 3},
		{name: "pass all", queries: 5, test: func(context.Context) (bool, error) { return true, nil }, released: 5, noLedger: true},
		{name: "fail", queries: 3, test: func(context.Context) (bool, error) { return false, nil }, want: ErrTestFailed},
		{name: "ledger full", queries: 3, full: true, test: func(context.Context) (bool, error) { return true, nil }},
		{name: "test error", queries: 3, test: func(context.Context) (bool, error) { return false, errTest }, want: errTest},
		{name: "budget", queries: 3, budget: true, test: func(context.Context) (bool, error) { return true, nil }},
		{name: "max queries", queries: 3, max: 2, test: func(context.Context) (bool, error) { return true, nil }},
		{name: "no test", queries: 3},
		{name: "no query", test: func(context.Context) (bool, error) { return true, nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta := provenance.Binding{Ensemble: "acc", Teachers: provenance.Teachers{K: 5, Relation: accountant.OneVote, Kind: provenance.Fixed, Partition: provenance.KeyedHash}}.Header(3, votefile.LayoutCounts)
			in, err := votefile.ReadRows([][]int{{5, 0, 0}, {0, 5, 0}, {4, 1, 0}, {0, 0, 5}, {1, 1, 3}}, meta)
			if err != nil {
				t.Fatal(err)
			}
			var labels bytes.Buffer
			led := &stepLedger{full: tc.full}
			tested := false
			s := ReleaseSpec{Votes: in, Mechanism: GNMax{Target: Target{Delta: 1e-5}, Sigma2: 2, Noise: noisymax.DiscreteNoise},
				Sink: LabelSink{Stdout: &labels, Format: votefile.FormatCSV}, Random: noise.NewSeededSource(1), Options: ReleaseOptions{Experiment: true}, Ledger: led,
				Accounted: &Accounted{Accounting: "whole", Queries: tc.queries, Total: total}}
			if tc.noLedger {
				s.Ledger = nil
			}
			if tc.test != nil {
				s.Accounted.Test = func(ctx context.Context) (bool, error) {
					if !tc.noLedger && (led.limit != 1 || len(led.reserves) != 1 || led.step.Kind != accountant.ApproxStep(total.Guarantee).Kind || led.step.Guarantee != total.Guarantee) {
						t.Errorf("tested before the ledger's one charge of the total: step %+v, limit %d, reserves %v", led.step, led.limit, led.reserves)
					}
					tested = true
					return tc.test(ctx)
				}
			}
			s.MaxQueries = tc.max
			if tc.budget {
				s.Budget = &accountant.Budget{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-5}}
			}
			out, err := Release(context.Background(), s)
			if tc.test == nil || tc.budget || tc.max != 0 || tc.queries == 0 {
				var re *ReleaseError
				if !errors.As(err, &re) || re.Step != StepAccounting || tested || labels.Len() != 0 {
					t.Errorf("error %v, tested %v, wrote %q: want refused at accounting before anything", err, tested, labels.String())
				}
				return
			}
			if !errors.Is(err, tc.want) || tc.want == nil && err != nil {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if tc.full && (tested || labels.Len() != 0 || len(led.reserves) != 0 || out.Result != (ReleaseResult{StoppedByBudget: tc.queries})) {
				t.Errorf("a full ledger: tested %v, wrote %q, reserves %v, result %+v; want nothing but the %d stopped", tested, labels.String(), led.reserves, out.Result, tc.queries)
			}
			if out.Result.Released != tc.released || (tc.released == 0) != (labels.Len() == 0) {
				t.Errorf("released %d, wrote %d bytes; want %d", out.Result.Released, labels.Len(), tc.released)
			}
			if tc.released > 0 && (out.Result.StoppedByBudget != 0 || out.Result.NotRequested != 5-tc.released) {
				t.Errorf("%+v: want the %d queries after the proposal not requested, none stopped", out.Result, 5-tc.released)
			}
			if tc.released == 0 {
				return
			}
			if !strings.Contains(labels.String(), `"accounting":"whole","total":{"eps":1.5,"delta":0.00001,"argument":"an argument"}`) {
				t.Errorf("header lacks the accounting and the total:\n%s", labels.String())
			}
			switch {
			case tc.noLedger && (out.Publish.Argument != total.Argument || out.Publish.Guarantee != total.Guarantee):
				t.Errorf("publishes %+v, want the total %+v", out.Publish, total)
			case !tc.noLedger && (len(led.reserves) != 1 || len(led.settles) != 1):
				t.Errorf("ledger reserves %v, settles %v: want the one charge alone", led.reserves, led.settles)
			}
		})
	}
}
