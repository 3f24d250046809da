package main

import (
	"strings"
	"testing"
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
	if n := len(files(t, dir)); n != 1 {
		t.Fatalf("cache holds %d entries, want 1", n)
	}
	// The private-teachers problem with the same numbers is another entry.
	if _, errOut, code := darrm(t, "", "solve", "--K", "11", "--m", "1", "--eps", "0.3", "--Delta", "0", "--delta", "1e-5", "--cache-dir", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if n := len(files(t, dir)); n != 2 {
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
