package plan

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/param"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// TestPlanFixedTeachers: a plan for fixed private teachers follows their
// cap alone, as a release does (issue 68): K = 11 teachers (0.1, 1e-5) on
// shared data, RR at m = 3. At (2, 1e-8) per-query teachers fit labels by
// the composition, fixed ones none, and the count says why; at (1, 1e-3),
// which the cap meets at its delta, every label, in one run and on a new
// ledger; a plan of parameters is refused either way.
func TestPlanFixedTeachers(t *testing.T) {
	ctx := context.Background()
	p := constraints.Problem{K: 11, M: 3, Eps: 0.1, Delta: 1e-5, TargetDelta: 2.99997e-5}
	for _, tc := range []struct {
		name     string
		kind     provenance.Kind
		budget   accountant.Budget
		run      int // -1: every query; 0: none (an error); 1: some
		capTotal bool
	}{
		{"per-query teachers", provenance.PerQuery, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-8}}, 1, false},
		{"unstated: per-query", provenance.KindUnstated, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-8}}, 1, false},
		{"fixed, a budget below the cap", provenance.Fixed, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-8}}, 0, false},
		{"fixed, a budget the cap meets", provenance.Fixed, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 1, Delta: 1e-3}}, accountant.Unlimited, true},
	} {
		r := request(ensemble.RR{}.Name(), votefile.TwoClass, p, 2, tc.budget.Eps, tc.budget.Delta)
		r.Kind, r.Partition = tc.kind, provenance.SharedData
		pl, err := Make(ctx, r)
		c := pl.Count
		switch {
		case tc.run == 0:
			if err == nil || !errors.As(err, new(*param.Error)) || !strings.Contains(err.Error(), "not proved for fixed teachers") {
				t.Errorf("%s: %+v, %v; want no label and why", tc.name, c, err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.run == accountant.Unlimited && (c.Run != accountant.Unlimited || c.Ledger != accountant.Unlimited || c.Total.Cap == nil || !c.Total.Guarantee.Within(tc.budget.Guarantee)):
			t.Errorf("%s: run %d, ledger %d, total %+v; want every query by the cap", tc.name, c.Run, c.Ledger, c.Total)
		case tc.run == 1 && (c.Run < 1 || c.Total.Cap != nil):
			t.Errorf("%s: run %d by %s; want some by a composition", tc.name, c.Run, c.Total.Name())
		}
		// A plan of parameters for fixed teachers: the cap decides
		// whatever they are. (Per-query teachers' plan of parameters, a
		// search of its own, is TestParameters'.)
		if tc.kind != provenance.Fixed {
			continue
		}
		r.Queries = 20
		if _, err = Make(ctx, r); err == nil || !strings.Contains(err.Error(), "fixed models") {
			t.Errorf("%s: a plan of 20 queries: %v, want refused", tc.name, err)
		}
	}
}

// TestPlanUnknownKind: a kind of teachers of no name is refused, naming
// the kind, with the partition stated or not, as an unknown partition is:
// without a partition it was planned as per-query teachers.
func TestPlanUnknownKind(t *testing.T) {
	ctx := context.Background()
	p := constraints.NewOneVote(11, 0.5, 0)
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-5}}
	for _, part := range []provenance.Partition{provenance.PartitionUnstated, provenance.KeyedHash} {
		r := request(ensemble.OneVoteDaRRM{}.Name(), votefile.TwoClass, p, 2, budget.Eps, budget.Delta)
		r.Kind, r.Partition = 99, part
		_, err := Make(ctx, r)
		var se *param.SettingError
		if !errors.As(err, &se) || se.Name != "kind" {
			t.Errorf("kind 99 on %v: %v, want a setting error naming the kind", part, err)
		}
	}
}

// TestPlanPartitionKeepsRelation: a plan of teachers whose partition
// breaks the one-vote relation is refused, naming the partition, as every
// release of it is (provenance.Check): a count, a plan of queries and a
// comparison, of fixed teachers and of any whose partition is stated
// (per-query ones were planned); keyed-hash shares keep it.
func TestPlanPartitionKeepsRelation(t *testing.T) {
	ctx := context.Background()
	p := constraints.NewOneVote(11, 0.5, 0)
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 2, Delta: 1e-5}}
	proxy := Proxy{K: 11, Classes: 3, Counts: [][]int{{8, 2, 1}, {1, 9, 1}, {5, 4, 2}}}
	for _, kind := range []provenance.Kind{provenance.Fixed, provenance.PerQuery, provenance.KindUnstated} {
		for _, part := range []provenance.Partition{provenance.KeyedHash, provenance.FilePosition, provenance.SharedData} {
			holds := part == provenance.KeyedHash
			r := request(ensemble.OneVoteDaRRM{}.Name(), votefile.TwoClass, p, 2, budget.Eps, budget.Delta)
			r.Kind, r.Partition = kind, part
			_, count := Make(ctx, r)
			r.Queries = 5
			_, queries := Make(ctx, r)
			base := request(ensemble.GNMax{}.Name(), votefile.ManyClasses, constraints.Problem{K: 11, TargetDelta: 1e-5}, 3, budget.Eps, budget.Delta)
			base.Kind, base.Partition, base.Queries, base.Proxy = kind, part, 5, &proxy
			_, compared := Compare(ctx, base, []ensemble.Mechanism{ensemble.LNMax{}})
			for what, err := range map[string]error{"count": count, "plan of queries": queries, "comparison": compared} {
				var se *param.SettingError
				if refused := errors.As(err, &se) && se.Name == "partition" && se.Value == part.String(); refused == holds || holds && err != nil {
					t.Errorf("%v teachers on %v, %s: %v; want refused = %v", kind, part, what, err, !holds)
				}
			}
		}
	}
}
