package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/darrm/darrm/internal/statedir"
)

// TestAggregatePublish: the summary of a release opens with the total to
// publish, at the budget's delta (the case: 10 one-vote labels at
// (0.15, 1e-6), K = 9, budget (1.6, 1e-6), published at 1e-6 by the exact
// composition, not at 2e-5 by the profile's optimal composition at
// delta'), or at --total-delta without a budget; no line of the table is
// wider than 100 columns, for two-class and many-class releases, with a
// budget, a ledger or a seed; darrm and confident-gnmax write the same
// keys for the counts, the budget and the total to publish.
func TestAggregatePublish(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(statedir.Env, t.TempDir())
	var oneVote strings.Builder
	for i := range 10 {
		fmt.Fprintf(&oneVote, "q%d", i)
		for j := range 9 {
			fmt.Fprintf(&oneVote, ",%d", (i+j)%2)
		}
		oneVote.WriteByte('\n')
	}
	k9 := filepath.Join(dir, "k9.csv")
	os.WriteFile(k9, []byte(oneVote.String()), 0o644)
	votes := voteFile(t, dir, 20, func(i int) int { return i % 12 })
	counts := countsFile(t, dir, "counts.csv", 30, func(i int) []int { return plurality(150+10*(i%10), i%10) })
	led := filepath.Join(dir, "k11.ledger")
	if _, stderr, code := darrm(t, "", "ledger", "init", led, "--votes", votes, "--budget-eps", "10", "--budget-delta", "1e-3"); code != 0 {
		t.Fatal(stderr)
	}
	out := func(name string) []string { return []string{"--out", filepath.Join(dir, name), "--cache-dir", dir} }
	oneVoteArgs := append([]string{"aggregate", k9, "--mechanism", "darrm-one-vote", "--target-eps", "0.15", "--delta", "1e-6", "--partition", "keyed-hash"}, out("k9-labels.csv")...)
	budget := []string{"--budget-eps", "1.6", "--budget-delta", "1e-6"}
	confident := append([]string{"aggregate", counts, "--mechanism", "confident-gnmax", "--threshold", "200", "--sigma1", "150", "--sigma2", "40", "--delta", "1e-5"}, out("c-labels.csv")...)
	type publish struct {
		Eps, Delta *float64
		Method     string
		DeltaFrom  string `json:"delta_from"`
		Note       *string
	}
	k25 := filepath.Join(dir, "k25.csv")
	os.WriteFile(k25, []byte(strings.Repeat("1,0,1,1,0,1,1,0,1,1,0,1,1,0,1,1,0,1,1,0,1,1,0,1,1\n", 20)), 0o644)
	for _, tc := range []struct {
		name      string
		args      []string
		code      int
		method    string // of the total to publish ("": any)
		delta     float64
		deltaFrom string
		note      string // what the total says of the exact composition out of reach ("": it is exact)
	}{
		{"one-vote, budget", append(slices.Clone(oneVoteArgs), budget...), 0, "exact", 1e-6, "budget", ""},
		{"one-vote, --total-delta", append(slices.Clone(oneVoteArgs), "--total-delta", "1e-8"), 0, "", 1e-8, "total-delta", ""},
		{"one-vote, a pure total", append(slices.Clone(oneVoteArgs), "--total-delta", "0"), 0, "profile", 0, "total-delta", ""},
		{"darrm, ledger", append([]string{"aggregate", votes, "--m", "3", "--ledger", led}, out("l.csv")...), 0, "teachers' cap (optimal)", 1e-3, "ledger-budget", ""},
		{"darrm, ledger, seeded", append([]string{"aggregate", votes, "--m", "3", "--ledger", led, "--seed", "5"}, out("ls.csv")...), 0, "teachers' cap (optimal)", 1e-3, "ledger-budget", ""},
		{"subsample, seeded", append([]string{"aggregate", votes, "--m", "3", "--mechanism", "subsample", "--seed", "3"}, out("s.csv")...), 0, "", -1, "default", ""},
		{"confident-gnmax, budget", append(slices.Clone(confident), "--budget-eps", "0.5", "--budget-delta", "1e-5"), exitBudget, "exact", 1e-5, "budget", ""},
		// Subsampling 3 of 25 teachers: its pairs at more corner multisets
		// than are listed, so the exact composition is out of reach.
		{"subsample K = 25, budget", append([]string{"aggregate", k25, "--mechanism", "subsample", "--m", "3", "--eps", "0.1", "--Delta", "1e-9",
			"--budget-eps", "8", "--budget-delta", "1e-6"}, out("k25-labels.csv")...), 0, "optimal", 1e-6, "budget", "exact composition out of reach: the label's pairs at"},
	} {
		table, stderr, code := darrm(t, "", tc.args...)
		if code != tc.code {
			t.Fatalf("%s: exit %d, want %d: %s", tc.name, code, tc.code, stderr)
		}
		lines := strings.Split(table, "\n")
		first := slices.IndexFunc(lines, func(l string) bool { return !strings.HasPrefix(l, "***") && !strings.HasPrefix(l, "  ") })
		// A seeded release's total is the mechanism's with secret noise,
		// which its labels lack: not to publish.
		lead := "TO PUBLISH: ("
		if slices.Contains(tc.args, "--seed") {
			lead = "NOT TO PUBLISH (seeded): ("
		}
		if first < 0 || !strings.HasPrefix(lines[first], lead) {
			t.Errorf("%s: the summary does not open with %q:\n%s", tc.name, lead, table)
		}
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n > 100 {
				t.Errorf("%s: a line of %d columns: %q", tc.name, n, l)
			}
		}
		js, _, _ := darrm(t, "", append(tc.args, "--format", "json")...)
		var doc struct {
			Publish           publish
			PerQuery          struct{ Delta float64 } `json:"per_query"`
			Answered          int
			NotForPublication []string `json:"not_for_publication"`
		}
		decode(t, js, &doc)
		if seeded := slices.Contains(tc.args, "--seed"); slices.Contains(doc.NotForPublication, "publish") != seeded {
			t.Errorf("%s: not_for_publication %v: publish listed is not %v, whether the release was seeded", tc.name, doc.NotForPublication, seeded)
		}
		p := doc.Publish
		want := tc.delta
		if want < 0 {
			want = 1 // the default: checked in package accountant
		}
		if p.Eps == nil || *p.Delta > want || tc.method != "" && p.Method != tc.method || p.DeltaFrom != tc.deltaFrom {
			t.Errorf("%s: publish %+v (eps %v, delta %v), want delta <= %g by %q", tc.name, p, p.Eps, p.Delta, want, tc.method)
		}
		if p.Note == nil || tc.note == "" && *p.Note != "" || tc.note != "" && !strings.HasPrefix(*p.Note, tc.note) {
			t.Errorf("%s: publish.note %v, want %q", tc.name, p.Note, tc.note)
		} else if tc.note != "" && !strings.Contains(unwrapped(table), "note: "+*p.Note+"; the total is a looser bound that holds") {
			t.Errorf("%s: the text does not say %q:\n%s", tc.name, *p.Note, table)
		}
		if strings.HasPrefix(tc.name, "one-vote, budget") && *p.Eps > 1.6 {
			t.Errorf("%s: eps %v outside the budget", tc.name, *p.Eps)
		}
	}
	if _, stderr, code := darrm(t, "", append(append(slices.Clone(oneVoteArgs), budget...), "--total-delta", "1e-8")...); code != exitUsage || !strings.Contains(stderr, "--total-delta") {
		t.Errorf("--total-delta with a budget: exit %d: %s", code, stderr)
	}
	if _, stderr, code := darrm(t, "", append(slices.Clone(oneVoteArgs), "--total-delta", "0.7")...); code != exitUsage || !strings.Contains(stderr, "--total-delta") {
		t.Errorf("--total-delta 0.7: exit %d: %s", code, stderr)
	}

	// One schema for every mechanism: the same keys for the counts, the
	// budget and the total to publish.
	keys := func(args []string) (top, pub, bud []string) {
		js, stderr, _ := darrm(t, "", append(args, "--format", "json")...)
		var d map[string]json.RawMessage
		decode(t, js, &d)
		var p, b map[string]any
		json.Unmarshal(d["publish"], &p)
		json.Unmarshal(d["budget"], &b)
		if p == nil || b == nil {
			t.Fatalf("no publish or budget in %s\n%s", js, stderr)
		}
		for _, k := range []string{"queries", "released", "answered", "withheld", "stopped_by_budget", "publish", "budget", "totals", "totals_role"} {
			if _, ok := d[k]; ok {
				top = append(top, k)
			}
		}
		for k := range p {
			pub = append(pub, k)
		}
		for k := range b {
			bud = append(bud, k)
		}
		slices.Sort(pub)
		slices.Sort(bud)
		return top, pub, bud
	}
	dt, dp, db := keys(append([]string{"aggregate", votes, "--m", "3", "--budget-eps", "1", "--budget-delta", "1e-4"}, out("d.csv")...))
	ct, cp, cb := keys(append(slices.Clone(confident), "--budget-eps", "0.5", "--budget-delta", "1e-5"))
	if len(dt) != 9 || !slices.Equal(dt, ct) || !slices.Equal(dp, cp) || !slices.Equal(db, cb) {
		t.Errorf("darrm's keys %v, publish %v, budget %v; confident-gnmax's %v, %v, %v", dt, dp, db, ct, cp, cb)
	}
}

// TestCapLineSaysWhichToQuote: when the total to publish is the teachers'
// cap at another delta than the cap line's own, the cap line says so, so
// that the two pairs on one screen do not read as two totals.
func TestCapLineSaysWhichToQuote(t *testing.T) {
	dir := t.TempDir()
	table, stderr, code := darrm(t, "", "aggregate", filepath.Join("..", "..", "testdata", "votes-K11.csv"), "--m", "3", "--out", filepath.Join(dir, "labels.csv"), "--cache-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	s := unwrapped(table)
	if !strings.Contains(s, "TO PUBLISH: (") || !strings.Contains(s, "by teachers' cap") || !strings.Contains(s, "; the total to publish, (") || !strings.Contains(s, "is this cap at the default delta") {
		t.Errorf("the cap line does not say which pair to quote:\n%s", table)
	}
}
