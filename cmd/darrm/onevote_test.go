package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
)

// TestSolveOneVote: solve in the one-vote relation echoes the relation
// and the release's budget, certifies, caches under its own key, compares
// GNMax and RR, and verify certifies its JSON without being told the
// relation.
func TestSolveOneVote(t *testing.T) {
	dir := t.TempDir()
	args := []string{"solve", "--relation", "one-vote", "--K", "11", "--target-eps", "0.3", "--delta", "1e-5", "--cache-dir", dir}
	out, errOut, code := darrm(t, "", append(args, "--format", "json", "--compare")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		K              int
		M              float64 `json:"m"`
		Eps            float64 `json:"eps"`
		Delta          float64 `json:"Delta"`
		TargetDelta    float64 `json:"delta"`
		Relation       string  `json:"relation"`
		Objective, Gap float64
		UpperBound     float64 `json:"upper_bound"`
		Certificate    struct{ Status, Relation string }
		Compare        []struct{ Name string }
		NotCompared    []struct{ Name string } `json:"not_compared"`
	}
	decode(t, out, &doc)
	if doc.Relation != "one-vote" || doc.M != 1 || doc.Eps != 0.3 || doc.Delta != 0 || doc.TargetDelta != 1e-5 {
		t.Errorf("problem echoed as %+v", doc)
	}
	if doc.Certificate.Status != "certified" || doc.Certificate.Relation != "one-vote" || doc.Gap > 1e-9 || doc.Objective < 0.524 || doc.Objective > 0.5244 {
		t.Errorf("certificate %+v, utility %v, gap %v", doc.Certificate, doc.Objective, doc.Gap)
	}
	if len(doc.Compare) != 2 || doc.Compare[0].Name != "gnmax" || doc.Compare[1].Name != "rr" || len(doc.NotCompared) != 2 {
		t.Errorf("compared %+v, not compared %+v", doc.Compare, doc.NotCompared)
	}
	if n := len(gammaEntries(t, dir)); n != 1 {
		t.Fatalf("cache holds %d entries, want 1", n)
	}
	// The private-teachers problem with the same numbers is another entry.
	if _, errOut, code := darrm(t, "", "solve", "--K", "11", "--m", "1", "--eps", "0.3", "--Delta", "0", "--delta", "1e-5", "--cache-dir", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if n := len(gammaEntries(t, dir)); n != 2 {
		t.Errorf("cache holds %d entries, want 2: the relations share a key", n)
	}
	table, _, code := darrm(t, "", args...)
	if code != 0 || !strings.Contains(table, "one-vote relation") || !strings.Contains(table, "from the cache") || !strings.Contains(table, "44 inequalities") {
		t.Errorf("cached solve: exit %d\n%s", code, table)
	}
	if out, errOut, code := darrm(t, out, "verify"); code != 0 || !strings.Contains(out, "CERTIFIED") || !strings.Contains(out, "one-vote") {
		t.Errorf("verify of solve's JSON: exit %d\n%s%s", code, out, errOut)
	}
	// The same gamma in the private-teachers relation at m = 1 is a
	// problem of its own, which it does not meet.
	if out, _, code := darrm(t, out, "verify", "--relation", "private-teachers", "--m", "1", "--eps", "0.3", "--Delta", "0"); code != exitNotCertified {
		t.Errorf("verify in the other relation: exit %d, want %d\n%s", code, exitNotCertified, out)
	}
	// A plain list of numbers needs the relation and the budget.
	if out, errOut, code := darrm(t, "0.5 0.1 0.1 0.5", "verify", "--relation", "one-vote", "--target-eps", "1"); code != 0 || !strings.Contains(out, "CERTIFIED") {
		t.Errorf("verify of a list: exit %d\n%s%s", code, out, errOut)
	}
	if out, _, code := darrm(t, "1 0.1 0.1 1", "verify", "--relation", "one-vote", "--target-eps", "1"); code != exitNotCertified || !strings.Contains(out, "VIOLATED") {
		t.Errorf("verify of a gamma above the budget: exit %d\n%s", code, out)
	}
}

func TestSolveOneVoteBadInput(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		args []string
		want string
	}{
		{"solve", []string{"--relation", "one-vote", "--K", "11"}, "needs the release's eps: give --target-eps"},
		{"solve", []string{"--relation", "one-vote", "--K", "11", "--target-eps", "0.3", "--m", "3"}, "--m is a teacher's guarantee"},
		{"solve", []string{"--relation", "one-vote", "--K", "11", "--target-eps", "0.3", "--eps", "0.1"}, "--eps is a teacher's guarantee"},
		{"solve", []string{"--relation", "one-vote", "--K", "11", "--target-eps", "0.3", "--Delta", "1e-5"}, "--Delta is a teacher's guarantee"},
		{"solve", []string{"--relation", "one-vote", "--K", "11", "--target-eps", "0.3,0.5"}, "--target-eps: 2 values"},
		{"solve", []string{"--relation", "one-vote", "--K", "11", "--target-eps", "0"}, "--target-eps = 0"},
		{"solve", []string{"--relation", "one-vote", "--K", "11", "--target-eps", "NaN"}, "--target-eps = NaN"},
		{"solve", []string{"--relation", "one-vote", "--K", "10", "--target-eps", "0.3"}, "--K = 10"},
		{"solve", []string{"--relation", "one-vote", "--K", "11", "--target-eps", "0.3", "--delta", "1"}, "--delta = 1"},
		{"solve", []string{"--relation", "one-vote", "--K", "11", "--target-eps", "0.3", "--compare", "--sub-size", "3"}, "--sub-size sets a baseline"},
		{"solve", []string{"--relation", "two-votes", "--K", "11"}, "relation \"two-votes\""},
		{"solve", []string{"--K", "11", "--target-eps", "0.3"}, "--target-eps is the release's eps in the one-vote relation"},
		{"verify", []string{"--relation", "one-vote"}, "give --target-eps"},
	} {
		dir := t.TempDir()
		args := append([]string{tc.cmd}, tc.args...)
		if tc.cmd == "solve" {
			args = append(args, "--cache-dir", dir)
		}
		_, errOut, code := darrm(t, "0.5 0.1 0.1 0.5", args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s %v: exit %d, %q; want exit %d mentioning %q", tc.cmd, tc.args, code, errOut, exitUsage, tc.want)
		}
		if f := files(t, dir); len(f) != 0 {
			t.Errorf("%v: bad input left files behind: %v", tc.args, f)
		}
	}
}

// oneVoteVotes writes n queries of K = 11 non-private teachers on
// keyed-hash shares (a one-vote header; none when header is false) into
// path, their vote counts running over 0..11, and returns each row's count.
func oneVoteVotes(t *testing.T, path string, n int, header bool) []int {
	t.Helper()
	var b strings.Builder
	if header {
		b.WriteString(`# {"darrm-votes":1,"ensemble":"non-private-k11","K":11,"classes":2,"layout":"votes","relation":"one-vote","kind":"fixed","partition":"keyed-hash","teachers":[{"count":11,"source":{"method":"none"}}]}` + "\n")
	}
	counts := make([]int, n)
	for i := range n {
		l := (5 * i) % 12
		counts[i] = l
		fmt.Fprintf(&b, "q%d", i+1)
		for j := range 11 {
			fmt.Fprintf(&b, ",%d", min(1, max(0, l-j)))
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return counts
}

// TestAggregateOneVote releases with darrm-one-vote from the votes of
// non-private teachers: the labels' agreement with the majority is the
// one the certified gamma gives exactly (seeded), the labels and the
// summary state the relation and no teacher guarantee, the profile's total
// is below the optimal composition of the guarantee, a ledger of those
// teachers is charged like GNMax's, and a budget under optimal
// composition counts with the profile.
func TestAggregateOneVote(t *testing.T) {
	dir := t.TempDir()
	const n = 20000
	votes := filepath.Join(dir, "votes.csv")
	counts := oneVoteVotes(t, votes, n, true)
	led := filepath.Join(dir, "k11.ledger")
	// Labels at delta > 0 have no zCDP curve: the simple filter.
	if _, e, code := darrm(t, "", "ledger", "init", led, "--votes", votes, "--budget-eps", "1e6", "--budget-delta", "0.5", "--filter", "simple"); code != 0 {
		t.Fatal(e)
	}
	labels := filepath.Join(dir, "labels.csv")
	release := []string{"aggregate", votes, "--mechanism", "darrm-one-vote", "--target-eps", "0.3", "--delta", "1e-5", "--cache-dir", dir}
	out, errOut, code := darrm(t, "", append(release, "--out", labels, "--seed", "7", "--format", "json", "--ledger", led)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Mechanism string
		Relation  string
		M         float64 `json:"m"`
		Eps       float64 `json:"eps"`
		Delta     float64 `json:"Delta"`
		Target    float64 `json:"delta"`
		EpsSource string  `json:"eps_source"`
		Gamma     []float64
		PerQuery  struct {
			Eps, Delta float64
			Relation   string
		} `json:"per_query"`
		Totals []struct {
			Method       string
			Eps, Delta   float64
			ProfilePoint *struct{ Eps, Delta float64 } `json:"profile_point"`
		}
		Answered int `json:"answered"`
	}
	decode(t, out, &doc)
	if doc.Mechanism != "darrm-one-vote" || doc.Relation != "one-vote" || doc.M != 1 || doc.Eps != 0.3 || doc.Delta != 0 || doc.Target != 1e-5 || doc.EpsSource != "flags" ||
		doc.PerQuery.Eps != 0.3 || doc.PerQuery.Delta != 1e-5 || doc.PerQuery.Relation != "one-vote" || doc.Answered != n {
		t.Errorf("summary %+v", doc)
	}
	// The gamma sampled is gamma_opt of the one-vote problem.
	sol, _, _ := darrm(t, "", "solve", "--relation", "one-vote", "--K", "11", "--target-eps", "0.3", "--delta", "1e-5", "--cache-dir", dir, "--format", "json")
	var opt struct{ Gamma []float64 }
	decode(t, sol, &opt)
	if fmt.Sprint(opt.Gamma) != fmt.Sprint(doc.Gamma) {
		t.Errorf("sampled gamma %v, gamma_opt %v", doc.Gamma, opt.Gamma)
	}
	// Agreement with the majority: measured against the exact expectation.
	b := mustRead(t, labels)
	head, _, _ := strings.Cut(string(b), "\n")
	for _, line := range strings.Split(string(b), "\n")[:2] {
		if strings.HasPrefix(line, "# {") {
			head = line
		}
	}
	if !strings.Contains(head, `"mechanism":"darrm-one-vote"`) || !strings.Contains(head, `"relation":"one-vote"`) || strings.Contains(head, `"teachers"`) {
		t.Errorf("label header %s", head)
	}
	var agree int
	var mean, variance float64
	i := 0
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") || line == "id,label" {
			continue
		}
		_, label, _ := strings.Cut(line, ",")
		l := counts[i]
		majority := "0"
		if 2*l > 11 {
			majority = "1"
		}
		if label == majority {
			agree++
		}
		p := (1 + doc.Gamma[l]) / 2
		mean += p
		variance += p * (1 - p)
		i++
	}
	if i != n {
		t.Fatalf("%d labels, want %d", i, n)
	}
	if z := (float64(agree) - mean) / math.Sqrt(variance); math.Abs(z) > 4 {
		t.Errorf("%d of %d labels agree with the majority, exact expectation %.1f (z = %.2f)", agree, n, mean, z)
	}
	// The profile total: the same delta as optimal composition's, a
	// smaller eps, composed at a point of the profile.
	var optimal, profile *struct {
		Method       string
		Eps, Delta   float64
		ProfilePoint *struct{ Eps, Delta float64 } `json:"profile_point"`
	}
	for i := range doc.Totals {
		switch doc.Totals[i].Method {
		case "optimal":
			optimal = &doc.Totals[i]
		case "profile":
			profile = &doc.Totals[i]
		}
	}
	if optimal == nil || profile == nil || profile.Delta != optimal.Delta || !(profile.Eps < optimal.Eps) || profile.ProfilePoint == nil || profile.ProfilePoint.Delta >= 1e-5 {
		t.Errorf("totals %+v", doc.Totals)
	}
	if got := recorded(t, led); got != n {
		t.Errorf("ledger charged %d queries, want %d", got, n)
	}
	// A budget under optimal composition counts with the profile: more
	// queries than the guarantee's own optimal composition allows.
	budget := []string{"--budget-eps", "5", "--budget-delta", "0.01", "--composition", "optimal", "--out", filepath.Join(dir, "b.csv"), "--format", "json"}
	out, _, code = darrm(t, "", append(release, budget...)...)
	var stopped struct {
		Budget struct {
			MaxQueries int `json:"max_queries"`
		}
		Answered int `json:"answered"`
	}
	decode(t, out, &stopped)
	steps, _ := (accountant.Composition{Method: accountant.Optimal, DeltaPrime: accountant.DefaultDeltaPrime}).MaxSteps(accountant.Guarantee{Eps: 0.3, Delta: 1e-5}, accountant.Budget{Guarantee: accountant.Guarantee{Eps: 5, Delta: 0.01}})
	if code != exitBudget || stopped.Answered != stopped.Budget.MaxQueries || stopped.Budget.MaxQueries <= steps {
		t.Errorf("budget (5, 0.01): exit %d, %d answered of %d allowed; optimal composition of (0.3, 1e-5) allows %d", code, stopped.Answered, stopped.Budget.MaxQueries, steps)
	}
	// The table says which point of the profile it composed, and that the
	// teachers' guarantee plays no part.
	table, _, code := darrm(t, "", append(release, "--out", filepath.Join(dir, "t.csv"), "--analysis")...)
	for _, want := range []string{"│ profile ", "of the point (0.300079, 0) of the per-query privacy profile", "not necessarily private (one-vote relation)", "their own guarantee plays no part"} {
		if code != 0 || !strings.Contains(unwrapped(table), want) {
			t.Errorf("table (exit %d) lacks %q:\n%s", code, want, table)
		}
	}
	// Votes without a header assert nothing: a one-vote release of its
	// own needs the partition asserted, one that keeps the relation, and
	// its label header states it.
	plain := filepath.Join(dir, "plain.csv")
	oneVoteVotes(t, plain, 30, false)
	p := filepath.Join(dir, "p.csv")
	for _, assert := range [][]string{nil, {"--partition", "file-position"}, {"--partition", "shared"}} {
		if _, errOut, code := darrm(t, "", append([]string{"aggregate", plain, "--mechanism", "darrm-one-vote", "--target-eps", "0.3", "--cache-dir", dir, "--out", p}, assert...)...); code != exitUsage || !strings.Contains(errOut, "partition") {
			t.Errorf("headerless votes, %v: exit %d: %s", assert, code, errOut)
		}
	}
	if _, errOut, code := darrm(t, "", "aggregate", plain, "--mechanism", "darrm-one-vote", "--target-eps", "0.3", "--partition", "keyed-hash", "--cache-dir", dir, "--out", p); code != 0 || !strings.Contains(readLinesAll(t, p)[0], `"partition":"keyed-hash"`) {
		t.Errorf("headerless votes, --partition keyed-hash: exit %d: %s", code, errOut)
	}
}

// TestAggregateOneVoteRefused: darrm-one-vote refuses votes of private
// teachers, the teachers' flags, a missing eps and a gamma of the other
// relation, and darrm a one-vote gamma, each naming where the value came
// from, with exit 2 and no labels.
func TestAggregateOneVoteRefused(t *testing.T) {
	dir := t.TempDir()
	votes := filepath.Join(dir, "votes.csv")
	oneVoteVotes(t, votes, 10, true)
	oneVoteGamma := filepath.Join(dir, "g.json")
	out, _, code := darrm(t, "", "solve", "--relation", "one-vote", "--K", "11", "--target-eps", "0.3", "--cache-dir", dir, "--format", "json")
	if code != 0 {
		t.Fatal(out)
	}
	os.WriteFile(oneVoteGamma, []byte(out), 0o644)
	private := filepath.Join("..", "..", "testdata", "votes-K11.csv")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"private teachers' votes", []string{private, "--mechanism", "darrm-one-vote", "--target-eps", "0.3"}, "metadata header states private-teachers: the one-vote relation needs that one record changes at most one teacher's vote"},
		{"no eps", []string{votes, "--mechanism", "darrm-one-vote"}, "darrm-one-vote needs the release's eps: give --target-eps"},
		{"teachers' eps", []string{votes, "--mechanism", "darrm-one-vote", "--target-eps", "0.3", "--eps", "0.1"}, "--eps is not a setting of darrm-one-vote"},
		{"m", []string{votes, "--mechanism", "darrm-one-vote", "--target-eps", "0.3", "--m", "3"}, "--m is not a setting of darrm-one-vote"},
		{"two eps", []string{votes, "--mechanism", "darrm-one-vote", "--target-eps", "0.3,0.5"}, "--target-eps: 2 values"},
		{"eps 0", []string{votes, "--mechanism", "darrm-one-vote", "--target-eps", "0"}, "--target-eps = 0"},
		{"delta 1", []string{votes, "--mechanism", "darrm-one-vote", "--target-eps", "0.3", "--delta", "1"}, "--delta = 1"},
		{"target-eps for darrm", []string{private, "--target-eps", "0.3"}, "--target-eps is not a setting of darrm"},
		{"private gamma", []string{votes, "--mechanism", "darrm-one-vote", "--gamma", filepath.Join("..", "..", "testdata", "gamma-K11-m3.json")}, "is a gamma for the private-teachers relation"},
		{"one-vote gamma for darrm", []string{private, "--gamma", oneVoteGamma}, "is a gamma for the one-vote relation"},
	} {
		labels := filepath.Join(dir, "labels.csv")
		_, errOut, code := darrm(t, "", append(append([]string{"aggregate"}, tc.args...), "--cache-dir", dir, "--out", labels)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "--Delta =") {
			t.Errorf("%s: exit %d, %q; want exit %d mentioning %q", tc.name, code, errOut, exitUsage, tc.want)
		}
		if _, err := os.Stat(labels); err == nil {
			t.Errorf("%s: labels written", tc.name)
		}
	}
}
