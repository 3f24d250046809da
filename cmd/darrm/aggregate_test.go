package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/internal/fixtures"
	"github.com/darrm/darrm/internal/statedir"
	"github.com/darrm/darrm/noisymax"
	"github.com/darrm/darrm/optimal"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// statedHeader is the metadata header of a vote file of k teachers stated
// (0.1, 1e-5)-DP, fixed models on shared data, in format f.
func statedHeader(t *testing.T, k int, f votefile.Format) string {
	t.Helper()
	m := provenance.Binding{Ensemble: "stated-k" + fmt.Sprint(k), Teachers: provenance.Teachers{K: k, Each: accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, Relation: accountant.PrivateTeachers, Kind: provenance.Fixed, Partition: provenance.SharedData}}.Header(2, votefile.LayoutVotes)
	b, err := m.AppendHeader(nil, f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// stated are the flags that state teachers (0.1, 1e-5)-DP, for vote files
// without a metadata header.
var stated = []string{"--eps", "0.1", "--Delta", "1e-5"}

// voteFile writes n rows of K = 11 votes with ids q1..qn, after a metadata
// header of teachers stated (0.1, 1e-5)-DP; row i has 1-votes as given by
// ones(i).
func voteFile(t *testing.T, dir string, n int, ones func(i int) int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(statedHeader(t, 11, votefile.FormatCSV))
	b.WriteString("id,t1,t2,t3,t4,t5,t6,t7,t8,t9,t10,t11\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "q%d", i)
		for j := range 11 {
			v := 0
			if j < ones(i) {
				v = 1
			}
			fmt.Fprintf(&b, ",%d", v)
		}
		b.WriteByte('\n')
	}
	path := filepath.Join(dir, "votes.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readLines returns the lines of a label file but its comment lines (its
// metadata header, the mark of a seeded release).
func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines
}

// labelsIn counts the labels of which a byte is in CSV labels b: the
// lines after the comment lines and the header row, a label cut part-way
// included.
func labelsIn(b []byte) int {
	n := 0
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			n++
		}
	}
	return max(n-1, 0)
}

func TestAggregateEveryMechanism(t *testing.T) {
	dir := t.TempDir()
	votes := voteFile(t, dir, 40, func(i int) int { return i % 12 })
	// GNMax is private in the one-vote relation: its vote file says so.
	raw, _ := os.ReadFile(votes)
	oneVote := filepath.Join(dir, "one-vote.csv")
	os.WriteFile(oneVote, []byte(strings.Replace(strings.Replace(string(raw), `"private-teachers"`, `"one-vote"`, 1), `"shared"`, `"keyed-hash"`, 1)), 0o644)
	for _, mech := range []string{"darrm", "subsample", "rr", "gnmax"} {
		out := filepath.Join(dir, mech+".csv")
		votes := votes
		if mech == "gnmax" {
			votes = oneVote
		}
		stdout, stderr, code := darrm(t, "", "aggregate", votes, "--m", "3", "--mechanism", mech, "--out", out, "--format", "json", "--cache-dir", dir)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", mech, code, stderr)
		}
		var doc report.Aggregate
		decode(t, stdout, &doc)
		if string(doc.Mechanism) != mech || doc.K != 11 || doc.Answered != 40 || !doc.ForRelease || doc.Randomness.Source != "crypto/rand" || !doc.IDColumn || !doc.Header {
			t.Errorf("%s: summary %+v", mech, doc)
		}
		if doc.PerQuery.Eps != 0.3 || *doc.Eps != 0.1 || doc.PerQuery.Delta != constraints.DefaultTargetDelta(1e-5, 3) || doc.PerQuery.Source == "" {
			t.Errorf("%s: per-query guarantee %+v", mech, doc.PerQuery)
		}
		// darrm, subsample, rr and gnmax describe their label by its pairs
		// of output probabilities, which add the exact composition at the
		// total's δ, 1-(1-δ)^40·(1-δ'); gnmax, as darrm-one-vote, by points
		// of its profile too, which add their optimal composition (the
		// summary decodes as report.Aggregate with it).
		want := map[string]int{"darrm": 4, "subsample": 4, "rr": 4, "gnmax": 5}[mech]
		var ts struct {
			Totals []struct {
				Method string
				Eps    *float64
			}
		}
		decode(t, stdout, &ts)
		if len(ts.Totals) != want || len(doc.Totals) != want || ts.Totals[1].Method != "general" || ts.Totals[1].Eps == nil || want == 4 && ts.Totals[3].Method != "exact" {
			t.Errorf("%s: totals %+v", mech, ts.Totals)
		}
		lines := readLines(t, out)
		if len(lines) != 41 || lines[0] != "id,label" {
			t.Fatalf("%s: %d lines, header %q", mech, len(lines), lines[0])
		}
		label := regexp.MustCompile(`^q(\d+),[01]$`)
		for i, l := range lines[1:] {
			if m := label.FindStringSubmatch(l); m == nil || m[1] != fmt.Sprint(i+1) {
				t.Errorf("%s: line %d = %q", mech, i+2, l)
			}
		}
		if strings.Contains(stderr, "NOT FOR RELEASE") {
			t.Errorf("%s: a crypto/rand run says not for release", mech)
		}
	}
}

func TestAggregateSeededAndFormats(t *testing.T) {
	dir := t.TempDir()
	votes := statedHeader(t, 3, votefile.FormatJSONL) + "{\"id\":\"a\",\"votes\":[1,1,0]}\n{\"id\":5,\"votes\":[0,0,1]}\n"
	args := []string{"aggregate", "--m", "1", "--seed", "42", "--mechanism", "subsample", "--cache-dir", dir}
	out1, err1, code1 := darrm(t, votes, args...)
	out2, _, code2 := darrm(t, votes, args...)
	if code1 != 0 || code2 != 0 {
		t.Fatalf("exit %d, %d: %s", code1, code2, err1)
	}
	if out1 != out2 {
		t.Errorf("seeded runs differ:\n%s\n%s", out1, out2)
	}
	// The labels file itself says NOT FOR RELEASE, in a comment line.
	if !regexp.MustCompile(`^# NOT FOR RELEASE[^\n]*\n# \{"darrm-labels":1,[^\n]*"for_release":false\}\n\{"id":"a","label":[01]\}\n\{"id":5,"label":[01]\}\n$`).MatchString(out1) {
		t.Errorf("JSON lines labels %q", out1)
	}
	if strings.Count(err1, "NOT FOR RELEASE") != 1 || !strings.Contains(err1, "seed 42") {
		t.Errorf("a seeded run must say NOT FOR RELEASE once, with its seed, in the summary:\n%s", err1)
	}
	out, errOut, code := darrm(t, votes, append(args, "--format", "json", "--out-format", "csv")...)
	if code != 0 || !strings.HasPrefix(out, "# NOT FOR RELEASE: drawn from a seeded generator; anyone who knows the seed can remove the noise\n# {") || !strings.Contains(out, "}\nid,label\na,") {
		t.Fatalf("exit %d, labels %q: %s", code, out, errOut)
	}
	var doc struct {
		report.Aggregate
		Totals []map[string]any `json:"totals"`
	}
	decode(t, errOut[strings.Index(errOut, "{"):], &doc)
	if doc.ForRelease || doc.Randomness.Seed == nil || *doc.Randomness.Seed != 42 || !strings.Contains(doc.Randomness.Note, "NOT FOR RELEASE") {
		t.Errorf("seeded summary: for_release %v, randomness %+v", doc.ForRelease, doc.Randomness)
	}
	out, _, code = darrm(t, votes, append(args, "--format", "csv")...)
	if code != 0 || !strings.Contains(out, `{"id":5,`) {
		t.Errorf("exit %d, %q", code, out)
	}
}

func TestAggregateBadInput(t *testing.T) {
	dir := t.TempDir()
	good := voteFile(t, t.TempDir(), 5, func(int) int { return 7 })
	write := func(name, content string) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	row := "1,0,1,1,0,1,0,0,1,1,0\n"
	zeros := write("zeros.txt", "0 0 0 0 0 0 0 0 0 0 0 0\n")
	one := write("one.txt", "1 1 1 1 1 1 1 1 1 1 1 1\n")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"ragged row", []string{write("r.csv", row+row+"1,0,1\n"+row)}, 2, []string{"r.csv, line 3", "3 columns, want 11"}},
		{"vote 2", []string{write("v.csv", row+"1,0,1,1,0,2,0,0,1,1,0\n")}, 2, []string{"v.csv, line 2, column 6", `vote above 1 (not quoted: a vote file's counts are private)`}},
		{"empty file", []string{write("e.csv", "")}, 2, []string{"e.csv", "empty file"}},
		{"binary", []string{write("b.bin", "\x89PNG\r\n\x1a\n\x00\x00")}, 2, []string{"b.bin, line 1", "binary"}},
		{"not a vote file", []string{write("p.txt", "Hello,\nworld\n")}, 2, []string{"p.txt, line 2", "not a CSV or JSON lines vote file"}},
		{"bad JSON line", []string{write("j.jsonl", "[1,0,1]\n[1,0,x]\n")}, 2, []string{"j.jsonl, line 2, column 6", `vote 3: "x"`}},
		{"missing file", []string{filepath.Join(dir, "none.csv")}, 2, []string{"no such file"}},
		{"K mismatch", []string{good, "--K", "9"}, 2, []string{"--K = 9", "K = 11 teachers"}},
		{"even K", []string{write("k.csv", "1,0\n")}, 2, []string{"must be odd"}},
		{"unknown mechanism", []string{good, "--mechanism", "best"}, 2, []string{"--mechanism \"best\""}},
		{"lone budget", []string{good, "--budget-eps", "1"}, 2, []string{"go together"}},
		{"bad budget", []string{good, "--budget-eps", "-1", "--budget-delta", "0.1"}, 2, []string{"--budget-eps = -1: must be a finite number > 0"}},
		{"bad out format", []string{good, "--out-format", "xml"}, 2, []string{"--out-format"}},
		{"bad delta'", []string{good, "--delta-prime", "0"}, 2, []string{"--delta-prime = 0"}},
		{"dsub needs pure DP", []string{good, "--mechanism", "dsub"}, 2, []string{"Theorem 3.5.1 needs pure-DP teachers, Delta = 0"}},
		{"gnmax needs delta", []string{write("plain.csv", row+row), "--mechanism", "gnmax", "--Delta", "0", "--delta", "0"}, 2, []string{"delta"}},
		{"no gamma cached", []string{good, "--no-solve"}, 2, []string{"--no-solve", "no gamma_opt for K=11 m=3", "darrm solve"}},
		{"gamma not certified", []string{good, "--gamma", one}, 3, []string{"violated"}},
		{"gamma wrong K", []string{good, "--gamma", write("g5.txt", "0 0 0 0 0 0")}, 2, []string{"K = 5"}},
		{"gamma for another mechanism", []string{good, "--gamma", zeros, "--mechanism", "rr"}, 2, []string{"--gamma is not a setting of rr", "(--gamma is a setting of darrm, darrm-one-vote)"}},
	} {
		out := filepath.Join(dir, "labels.csv")
		args := append(append([]string{"aggregate"}, stated...), tc.args...)
		args = append(args, "--m", "3")
		args = append(args, "--out", out, "--cache-dir", t.TempDir())
		stdout, stderr, code := darrm(t, "", args...)
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d; stderr %s", tc.name, code, tc.code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr %q lacks %q", tc.name, stderr, w)
			}
		}
		if stdout != "" {
			t.Errorf("%s: stdout %q", tc.name, stdout)
		}
		if left := files(t, dir); len(left) > 0 {
			t.Errorf("%s: left %v behind", tc.name, left)
		}
	}
}

// TestAggregateUnknownMechanism: an unknown --mechanism is answered with
// the names there are, and no advice on reading multi-class votes, which
// is for a mechanism of the other kind of votes.
func TestAggregateUnknownMechanism(t *testing.T) {
	votes := voteFile(t, t.TempDir(), 3, func(int) int { return 7 })
	_, stderr, code := darrm(t, "", "aggregate", votes, "--mechanism", "best", "--out", filepath.Join(t.TempDir(), "l.csv"))
	if code != exitUsage || !containsFlat(stderr, `--mechanism "best": must be one of`) || containsFlat(stderr, "--input-format counts") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// plainVoteFile is voteFile without the metadata header: the teachers
// are then stated by flags (stated), and no teacher-level cap applies.
func plainVoteFile(t *testing.T, dir string, n int, ones func(i int) int) string {
	t.Helper()
	path := voteFile(t, dir, n, ones)
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, b[strings.IndexByte(string(b), '\n')+1:], 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestAggregateBudgetStopsExactly checks that the number of answered
// queries is the largest that the accountant's function that holds a run
// to its budget allows (accountant.Account.Fits on DaRRM's description:
// its guarantee's compositions and the exact composition of its label's
// pairs, at the budget's delta), for teachers without a cap: Fits holds
// at the count answered (when there is one) and not at one more (when
// the file has more). Fits is monotone in the count, so that is the
// count a scan of every count up to the first that does not fit finds,
// at two compositions instead of one per count (the release made them
// already: the accountant keeps them).
func TestAggregateBudgetStopsExactly(t *testing.T) {
	dir := t.TempDir()
	votes := plainVoteFile(t, dir, 60, func(i int) int { return 3 + i%6 })
	g, err := fixtures.GammaK11M3()
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := ensemble.New(context.Background(), ensemble.DaRRM{Target: ensemble.Target{M: 3}, Gamma: optimal.Source{Given: g}}, 11, 2, accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, ensemble.Options{Memo: testMemo})
	if err != nil {
		t.Fatal(err)
	}
	step := d.Privacy().Spend
	for _, tc := range []struct {
		method string
		budget accountant.Guarantee
	}{
		{"general", accountant.Guarantee{Eps: 4, Delta: 1e-3}},
		{"simple", accountant.Guarantee{Eps: 2.5, Delta: 1e-2}},
		{"optimal", accountant.Guarantee{Eps: 3, Delta: 1e-3}},
		{"general", accountant.Guarantee{Eps: 8, Delta: 1e-2}},   // room for all 60
		{"simple", accountant.Guarantee{Eps: 0.01, Delta: 1e-6}}, // not even one
	} {
		fits := func(k int) bool {
			ok, err := (accountant.Account{Step: step, Steps: k, Budget: &accountant.Budget{Guarantee: tc.budget}}).Fits(testMemo)
			if err != nil {
				t.Fatalf("%s %v: fits %d: %v", tc.method, tc.budget, k, err)
			}
			return ok
		}
		out := filepath.Join(dir, "labels.csv")
		stdout, stderr, code := darrm(t, "", append([]string{"aggregate", votes, "--m", "3", "--out", out, "--format", "json", "--cache-dir", dir,
			"--composition", tc.method, "--budget-eps", fmt.Sprint(tc.budget.Eps), "--budget-delta", fmt.Sprint(tc.budget.Delta)}, stated...)...)
		if code != 0 && code != exitBudget {
			t.Fatalf("%s %v: exit %d: %s", tc.method, tc.budget, code, stderr)
		}
		var doc struct {
			report.Aggregate
			Totals []map[string]any `json:"totals"`
		}
		decode(t, stdout, &doc)
		want := doc.Answered
		if want < 0 || want > 60 || want > 0 && !fits(want) || want < 60 && fits(want+1) {
			t.Fatalf("%s %v: answered %d, not the most that fit the budget", tc.method, tc.budget, want)
		}
		wantCode := exitBudget
		if want == 60 {
			wantCode = 0
		}
		if code != wantCode {
			t.Fatalf("%s %v: exit %d, want %d: %s", tc.method, tc.budget, code, wantCode, stderr)
		}
		lines := readLines(t, out)
		if doc.StoppedByBudget != 60-want || len(lines) != want+1 || doc.Budget == nil || doc.Budget.Stopped != (want < 60) {
			t.Errorf("%s %v: answered %d (stopped by the budget %d, %d label lines, budget %+v), want %d", tc.method, tc.budget, doc.Answered, doc.StoppedByBudget, len(lines)-1, doc.Budget, want)
		}
		if want > 0 && !strings.HasPrefix(lines[want], fmt.Sprintf("q%d,", want)) {
			t.Errorf("%s: last label line %q, want query %d", tc.method, lines[want], want)
		}
		if want < 60 && !strings.Contains(stderr, fmt.Sprintf("released %d of 60 queries", want)) {
			t.Errorf("%s: stderr %q", tc.method, stderr)
		}
	}
}

// TestAggregateNeverPrintsMajority runs DaRRM with gamma = 0 (every label
// a fair coin, which certifies at any budget) on vote files with opposite
// majorities and different vote counts: with the same seed every byte of
// output, labels, summary and errors, must be the same, so nothing derived
// from the votes reaches any output.
func TestAggregateNeverPrintsMajority(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero.txt")
	if err := os.WriteFile(zero, []byte(strings.Repeat("0 ", 12)), 0o644); err != nil {
		t.Fatal(err)
	}
	file := func(ones int, tail string) string {
		var b strings.Builder
		for i := range 300 {
			fmt.Fprintf(&b, "q%d", i)
			for j := range 11 {
				fmt.Fprintf(&b, ",%d", map[bool]int{true: 1, false: 0}[j < ones])
			}
			b.WriteByte('\n')
		}
		return b.String() + tail
	}
	timing := regexp.MustCompile(`(?m)^time: .*$|"(seconds|queries_per_second)": [^,\n]*`)
	for _, format := range []string{"table", "json", "csv"} {
		for _, tail := range []string{"", "q300,1,1,1\n"} {
			var outs, errs []string
			for _, ones := range []int{11, 0, 6, 5} {
				stdout, stderr, code := darrm(t, file(ones, tail), append([]string{"aggregate", "--m", "3", "--gamma", zero, "--seed", "5", "--format", format}, stated...)...)
				if (code == 0) != (tail == "") {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				outs = append(outs, stdout)
				errs = append(errs, timing.ReplaceAllString(stderr, ""))
			}
			for i := 1; i < len(outs); i++ {
				if outs[i] != outs[0] || errs[i] != errs[0] {
					t.Errorf("format %s, tail %q: output depends on the votes:\n%s\n%s\n---\n%s\n%s", format, tail, outs[0], errs[0], outs[i], errs[i])
				}
			}
		}
	}
}

func TestSimulateCommand(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := darrm(t, "", "simulate", "--K", "11", "--m", "3", "--format", "json", "--cache-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc report.Simulate
	decode(t, stdout, &doc)
	var names []string
	byName := map[string]report.SimResult{}
	for _, r := range doc.Results {
		names = append(names, string(r.Mechanism))
		byName[string(r.Mechanism)] = r
		if r.Lo > r.Exact+0.01 || r.Hi < r.Exact-0.01 || r.Agreement < r.Lo || r.Agreement > r.Hi || r.Eps != doc.Results[0].Eps || r.Delta != doc.Results[0].Delta {
			t.Errorf("%s: %+v", r.Mechanism, r)
		}
	}
	if fmt.Sprint(names) != "[darrm subsample rr gnmax darrm-one-vote]" || doc.Queries != 100000 || !strings.Contains(doc.Note, "not a private release") {
		t.Errorf("mechanisms %v, queries %d, note %q", names, doc.Queries, doc.Note)
	}
	// darrm is ranked within its relation only: gnmax and darrm-one-vote
	// are private in the one-vote relation, another promise.
	if fmt.Sprint(doc.Above) != "[subsample rr]" || byName["gnmax"].Relation != accountant.OneVote || byName["darrm-one-vote"].Relation != accountant.OneVote || byName["rr"].Relation != accountant.PrivateTeachers {
		t.Errorf("darrm above %v; relations %v", doc.Above, byName)
	}
	// In the one-vote relation, at the same per-query guarantee, DaRRM's
	// gamma_opt beats GNMax.
	if ov, gn := byName["darrm-one-vote"], byName["gnmax"]; !(ov.Lo > gn.Hi) {
		t.Errorf("darrm-one-vote %+v not above gnmax %+v", ov, gn)
	}
	stdout, _, code = darrm(t, "", "simulate", "--K", "5", "--m", "2", "--Delta", "0", "--delta", "0", "--queries", "1000", "--teachers", "0.9,0.8,0.7,0.6,0.5", "--cache-dir", dir)
	if code != 0 || !strings.Contains(stdout, "dsub") || strings.Contains(stdout, "gnmax") || !strings.Contains(stdout, "not a private release") {
		t.Errorf("pure DP run: exit %d\n%s", code, stdout)
	}
	for _, bad := range [][]string{
		{"--teachers", "U(1,0)"}, {"--teachers", "0.1,0.2"}, {"--queries", "0"}, {"--mechanisms", "darrm,best"}, {"--format", "xml"},
	} {
		if _, stderr, code := darrm(t, "", append([]string{"simulate", "--K", "11", "--m", "3", "--cache-dir", dir}, bad...)...); code != 2 {
			t.Errorf("%v: exit %d: %s", bad, code, stderr)
		}
	}
	// A mechanism's setting given where no mechanism compared takes it
	// would be dropped unread: refused, as aggregate refuses it.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--mechanisms", "darrm", "--rr-composition", "simple"}, "--rr-composition is a setting of rr, which this run does not include (--mechanisms)"},
		{[]string{"--mechanisms", "rr,subsample", "--prior", "tp"}, "--prior is a setting of darrm, darrm-one-vote, which this run"},
		{[]string{"--Delta", "0", "--delta", "0", "--gnmax-search", "tight"}, "--gnmax-search is a setting of gnmax, which this run"},
	} {
		if _, stderr, code := darrm(t, "", append([]string{"simulate", "--K", "11", "--m", "3", "--queries", "10", "--cache-dir", dir}, c.args...)...); code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want 2 with %q: %s", c.args, code, c.want, stderr)
		}
	}
}

func TestAggregateOutputSafety(t *testing.T) {
	dir := t.TempDir()
	votes := voteFile(t, dir, 5, func(int) int { return 6 })
	before, _ := os.ReadFile(votes)
	if _, stderr, code := darrm(t, "", "aggregate", votes, "--m", "3", "--out", votes, "--cache-dir", dir); code != 2 || !strings.Contains(stderr, "is the vote file") {
		t.Errorf("--out = input: exit %d, %s", code, stderr)
	}
	if after, _ := os.ReadFile(votes); string(after) != string(before) {
		t.Error("the vote file changed")
	}
	// Labels that reached stdout before a malformed row stay written; the
	// error says how many, since their privacy is spent, and the exit
	// status is not 2. Labels still buffered are dropped.
	small := "1,1,1\n1,0,0\n1,1\n"
	stdout, stderr, code := darrm(t, small, append([]string{"aggregate", "--m", "1", "--mechanism", "subsample", "--cache-dir", dir}, stated...)...)
	if code != 2 || !strings.Contains(stderr, "line 3") || strings.Contains(stderr, "may have reached") || stdout != "" {
		t.Errorf("small file: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	large := strings.Repeat("1\n", 100000) + "2\n"
	stdout, stderr, code = darrm(t, large, append([]string{"aggregate", "--m", "1", "--mechanism", "subsample", "--cache-dir", dir}, stated...)...)
	written := labelsIn([]byte(stdout))
	// Exit 1, not 2: exit 2 says nothing was written.
	if code != 1 || written < 1000 || !strings.Contains(stderr, fmt.Sprintf("%d labels may have reached standard output", written)) {
		t.Errorf("large file: exit %d, %d labels on stdout, stderr %s", code, written, stderr)
	}
}

// TestAggregateTeachersFromHeader: a release takes the teachers' (eps,
// Delta) from the vote file's metadata header; flags may repeat it but not
// contradict it; without a header both must be given; every refusal exits
// 2, writes no labels and charges no ledger.
func TestAggregateTeachersFromHeader(t *testing.T) {
	dir := t.TempDir()
	rows := "id,t1,t2,t3,t4,t5\nq1,1,1,1,0,0\nq2,0,0,1,0,1\n"
	header := func(relation, partition, teachers string) string {
		return fmt.Sprintf(`# {"darrm-votes":1,"ensemble":"e5","K":5,"classes":2,"layout":"votes","relation":%q,"kind":"fixed","partition":%q,"teachers":[%s]}`+"\n", relation, partition, teachers)
	}
	stated := func(count int, eps, delta string) string {
		return fmt.Sprintf(`{"count":%d,"eps":%s,"Delta":%s,"source":{"method":"stated"}}`, count, eps, delta)
	}
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	eps1 := file("eps1.csv", header("private-teachers", "shared", stated(5, "1", "0.0001"))+rows)
	eps1JSONL := file("eps1.jsonl", strings.TrimPrefix(header("private-teachers", "shared", stated(5, "1", "0.0001")), "# ")+"[1,1,1,0,0]\n[0,0,1,0,1]\n")
	mixed := file("mixed.csv", header("private-teachers", "keyed-hash", stated(2, "0.5", "0.00001")+","+stated(3, "0.25", "0.0001"))+rows)
	nonPrivate := file("sgd.csv", header("one-vote", "keyed-hash", `{"count":5,"source":{"method":"none"}}`)+rows)
	plain := file("plain.csv", rows)
	led := filepath.Join(dir, "k.ledger")
	if _, e, code := darrm(t, "", "ledger", "init", led, "--votes", eps1, "--budget-eps", "100", "--budget-delta", "0.5"); code != 0 {
		t.Fatal(e)
	}
	ledgerBefore, _ := os.ReadFile(led)
	type doc struct {
		report.Aggregate
		Totals []map[string]any `json:"totals"`
	}
	for _, tc := range []struct {
		name      string
		args      []string
		eps, dlt  float64
		source    string
		differ    bool
		wantErr   []string
		mechanism string
	}{
		{name: "header eps 1, no flags", args: []string{eps1}, eps: 1, dlt: 1e-4, source: "header"},
		{name: "JSON lines header", args: []string{eps1JSONL}, eps: 1, dlt: 1e-4, source: "header"},
		{name: "flags repeat the header", args: []string{eps1, "--eps", "1", "--Delta", "1e-4"}, eps: 1, dlt: 1e-4, source: "header"},
		{name: "different teachers: the common bound", args: []string{mixed}, eps: 0.5, dlt: 1e-4, source: "header", differ: true},
		{name: "no header, flags", args: []string{plain, "--eps", "0.2", "--Delta", "0"}, eps: 0.2, dlt: 0, source: "flags"},
		{name: "non-private teachers, flags", args: []string{nonPrivate, "--eps", "0.2", "--Delta", "1e-5"}, eps: 0.2, dlt: 1e-5, source: "flags", mechanism: "gnmax"},
		{name: "--eps contradicts", args: []string{eps1, "--eps", "0.1"}, wantErr: []string{"eps: 0.1 given", "header states 1"}},
		{name: "--Delta contradicts", args: []string{eps1, "--Delta", "1e-5"}, wantErr: []string{"Delta: 1e-05 given", "header states 0.0001"}},
		{name: "--eps contradicts the common bound", args: []string{mixed, "--eps", "0.25"}, wantErr: []string{"0.25 given", "states 0.5", "common bound"}},
		{name: "no header, no flags", args: []string{plain}, wantErr: []string{"eps and Delta", "no metadata header", "--eps, --Delta"}},
		{name: "no header, no --Delta", args: []string{plain, "--eps", "0.1"}, wantErr: []string{"teachers' Delta", "no metadata header"}},
		{name: "non-private teachers, no flags", args: []string{nonPrivate}, wantErr: []string{"non-private teachers"}, mechanism: "gnmax"},
		{name: "relation of the mechanism", args: []string{eps1}, wantErr: []string{"relation: one-vote given by the gnmax mechanism", "states private-teachers"}, mechanism: "gnmax"},
		{name: "relation, the other way", args: []string{nonPrivate, "--eps", "0.1", "--Delta", "1e-5"}, wantErr: []string{"relation: private-teachers given by the subsample mechanism", "states one-vote"}, mechanism: "subsample"},
	} {
		mech := tc.mechanism
		if mech == "" {
			mech = "rr"
		}
		out := filepath.Join(dir, "labels.csv")
		args := append([]string{"aggregate", "--m", "1", "--mechanism", mech, "--no-cache", "--out", out, "--format", "json"}, tc.args...)
		if tc.wantErr != nil {
			args = append(args, "--ledger", led)
		}
		stdout, stderr, code := darrm(t, "", args...)
		if tc.wantErr != nil {
			if code != exitUsage || stdout != "" {
				t.Errorf("%s: exit %d, stdout %q, want exit 2: %s", tc.name, code, stdout, stderr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(stderr, w) {
					t.Errorf("%s: %q lacks %q", tc.name, stderr, w)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s: labels written", tc.name)
			}
			if after, _ := os.ReadFile(led); string(after) != string(ledgerBefore) {
				t.Errorf("%s: the ledger changed:\n%s", tc.name, after)
			}
			continue
		}
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, code, stderr)
		}
		var d doc
		decode(t, stdout, &d)
		if *d.Eps != tc.eps || *d.Delta != tc.dlt || *d.EpsSource != tc.source || *d.TeachersDiffer != tc.differ || d.PerQuery.Eps != tc.eps || (d.VotesHeader == nil) != (tc.source == "flags" && mech != "gnmax") {
			t.Errorf("%s: eps %v, Delta %v from %v (differ %v), per query %v; want %v, %v from %s", tc.name, *d.Eps, *d.Delta, *d.EpsSource, *d.TeachersDiffer, d.PerQuery, tc.eps, tc.dlt, tc.source)
		}
		os.Remove(out)
	}
}

// TestAggregateTeacherCap: every total of a release from fixed teachers is
// the teachers' cap, their only bound (composing per-query guarantees is
// not proved for fixed teachers), with the composition kept beside it;
// the budget's query limit is every query when the cap meets the budget
// and none, saying why, when it does not. Per-query teachers get no cap
// and keep the composition.
func TestAggregateTeacherCap(t *testing.T) {
	dir := t.TempDir()
	base := voteFile(t, dir, 20, func(i int) int { return i % 12 })
	raw, _ := os.ReadFile(base)
	file := func(name, from, to string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(strings.Replace(string(raw), from, to, 1)), 0o644)
		return p
	}
	keyed := file("keyed.csv", `"partition":"shared"`, `"partition":"keyed-hash"`)
	perQuery := file("per-query.csv", `"kind":"fixed"`, `"kind":"per-query"`)
	shared, _ := accountant.TeacherCap(accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, 11, accountant.Shared, 1e-5)
	type doc struct {
		report.Aggregate
		Totals []struct {
			Method  string                `json:"method"`
			Eps     float64               `json:"eps"`
			Delta   float64               `json:"delta"`
			Bound   string                `json:"total_bound"`
			Queries *accountant.Guarantee `json:"queries"`
		} `json:"totals"`
		Cap *struct {
			Eps, Delta float64
			Rule       string `json:"rule"`
		} `json:"cap"`
		Budget *struct {
			MaxQueries int  `json:"max_queries"`
			Unlimited  bool `json:"unlimited"`
			AllowedBy  *struct {
				Method string `json:"method"`
			} `json:"allowed_by"`
			Why string `json:"why"`
		} `json:"budget"`
	}
	for _, tc := range []struct {
		name    string
		votes   string
		budget  []string
		code    int
		cap     *accountant.Guarantee // nil: no cap
		rule    string
		bound   string // of every total
		answer  int
		maxQ    int
		noCapIs string
	}{
		{name: "disjoint: the teachers' own guarantee", votes: keyed, cap: &accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, rule: "parallel", bound: "teachers", answer: 20},
		{name: "shared: 11-fold composition", votes: base, cap: &shared.Guarantee, rule: "optimal", bound: "teachers", answer: 20},
		{name: "per-query teachers", votes: perQuery, bound: "queries", answer: 20, noCapIs: "fresh mechanism per query"},
		{name: "budget within the cap: unlimited", votes: keyed, budget: []string{"--budget-eps", "0.1", "--budget-delta", "1e-5"}, cap: &accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, rule: "parallel", bound: "teachers", answer: 20, maxQ: -1},
		// At the budget's delta 1e-3 the shared cap is (0.814268, 1e-3):
		// within the budget, though the cap shown (at delta') is not.
		{name: "budget within the cap at its delta: unlimited", votes: base, budget: []string{"--budget-eps", "1", "--budget-delta", "1e-3"}, cap: &shared.Guarantee, rule: "optimal", bound: "teachers", answer: 20, maxQ: -1},
		// Below the cap's delta: no label (3 by the queries' composition
		// before it was dropped for fixed teachers); per-query teachers
		// keep those 3.
		{name: "budget below the cap: no label", votes: base, budget: []string{"--budget-eps", "1", "--budget-delta", "1e-4"}, code: exitBudget, cap: &shared.Guarantee, rule: "optimal", bound: "teachers", answer: 0, maxQ: 0},
		{name: "per-query teachers: the queries decide", votes: perQuery, budget: []string{"--budget-eps", "1", "--budget-delta", "1e-4"}, code: exitBudget, bound: "queries", answer: 3, maxQ: 3, noCapIs: "fresh mechanism per query"},
	} {
		out := filepath.Join(dir, "labels.csv")
		stdout, stderr, code := darrm(t, "", append([]string{"aggregate", tc.votes, "--m", "3", "--cache-dir", dir, "--out", out, "--format", "json"}, tc.budget...)...)
		if code != tc.code {
			t.Fatalf("%s: exit %d, want %d: %s", tc.name, code, tc.code, stderr)
		}
		var d doc
		decode(t, stdout, &d)
		if d.Answered != tc.answer || (d.Cap == nil) != (tc.cap == nil) || tc.cap != nil && (d.Cap.Eps != tc.cap.Eps || d.Cap.Delta != tc.cap.Delta || d.Cap.Rule != tc.rule) || tc.cap == nil && !strings.Contains(d.CapNote, tc.noCapIs) {
			t.Errorf("%s: %d answered, cap %+v (%s)", tc.name, d.Answered, d.Cap, d.CapNote)
		}
		step := accountant.Guarantee{Eps: d.PerQuery.Eps, Delta: d.PerQuery.Delta}
		for i, tot := range d.Totals {
			if tot.Method == "exact" {
				// The exact composition of DaRRM's label pairs: capped
				// as the others are.
				if tot.Bound != tc.bound || tot.Queries == nil || tc.bound == "teachers" && (tot.Eps != tc.cap.Eps || tot.Delta != tc.cap.Delta) {
					t.Errorf("%s: exact total %+v (queries %v), bound %s", tc.name, tot, tot.Queries, tc.bound)
				}
				continue
			}
			q, err := accountant.Composition{Method: accountant.Method(i), DeltaPrime: 1e-5}.Compose(step, d.Answered)
			want := q
			if tc.bound == "teachers" {
				want = *tc.cap
			}
			if err != nil || tot.Bound != tc.bound || tot.Eps != want.Eps || tot.Delta != want.Delta || tot.Queries == nil || *tot.Queries != q {
				t.Errorf("%s: %s total %+v (queries %v), want %v bound %s", tc.name, tot.Method, tot, tot.Queries, want, tc.bound)
			}
		}
		if tc.budget != nil && (d.Budget == nil || d.Budget.MaxQueries != tc.maxQ || d.Budget.Unlimited != (tc.maxQ == -1) || (d.Budget.AllowedBy == nil) != (tc.maxQ == 0) ||
			d.Budget.AllowedBy != nil && strings.HasPrefix(d.Budget.AllowedBy.Method, "teachers' cap") != (tc.maxQ == -1) ||
			(tc.maxQ == 0) != strings.Contains(d.Budget.Why, "composing per-query guarantees is not proved for fixed teachers")) {
			t.Errorf("%s: budget %+v", tc.name, d.Budget)
		}
	}
}

// TestFixedTeachersNoComposition: issue 68's case. K = 11 fixed private
// teachers (0.1, 1e-5) on shared data at a budget of (2, 1e-8): RR's
// labels compose by their pure point to 27 within it (5 at (1.50015, 0)),
// which fixed teachers were allowed before; the cap, their only bound,
// needs delta >= 1.1e-4, so no label, and the summary, ledger init's
// refusal and plan say why. The same votes from teachers that are a
// fresh mechanism per query keep the composition; a budget the cap meets
// allows every label of fixed teachers.
func TestFixedTeachersNoComposition(t *testing.T) {
	dir := t.TempDir()
	// Records of its own: the ledger it makes is of the ensemble of
	// testdata/votes-K11.csv, which other tests' ledgers are too.
	t.Setenv(statedir.Env, t.TempDir())
	raw, err := os.ReadFile("../../testdata/votes-K11.csv")
	if err != nil {
		t.Fatal(err)
	}
	fixed := filepath.Join(dir, "fixed.csv")
	perQuery := filepath.Join(dir, "per-query.csv")
	os.WriteFile(fixed, raw, 0o644)
	os.WriteFile(perQuery, []byte(strings.Replace(string(raw), `"kind":"fixed"`, `"kind":"per-query"`, 1)), 0o644)
	why := "composing per-query guarantees is not proved for fixed teachers"
	for _, tc := range []struct {
		name, votes  string
		budget       []string
		code, answer int
		says         string
	}{
		{"fixed, a budget below the cap", fixed, []string{"--budget-eps", "2", "--budget-delta", "1e-8"}, exitBudget, 0, why},
		{"per-query teachers", perQuery, []string{"--budget-eps", "2", "--budget-delta", "1e-8"}, 0, 20, "allows 27 queries"},
		{"fixed, a budget the cap meets", fixed, []string{"--budget-eps", "1", "--budget-delta", "1e-3"}, 0, 20, "allows every query: the teachers' cap"},
	} {
		out := filepath.Join(dir, "labels.csv")
		stdout, stderr, code := darrm(t, "", append([]string{"aggregate", tc.votes, "--mechanism", "rr", "--m", "3", "--out", out}, tc.budget...)...)
		text := unwrapped(stdout)
		released := fmt.Sprintf("%d of 20 queries released", tc.answer)
		if tc.answer == 0 {
			released = "none of 20 queries released"
		}
		if code != tc.code || !strings.Contains(text, tc.says) || !strings.Contains(text, released) ||
			tc.answer == 0 && !strings.Contains(text, "kind per-query") {
			t.Errorf("%s: exit %d, want %d:\n%s%s", tc.name, code, tc.code, stdout, stderr)
		}
	}
	led := filepath.Join(dir, "k11.ledger")
	_, stderr, code := darrm(t, "", "ledger", "init", led, "--votes", fixed, "--budget-eps", "2", "--budget-delta", "1e-8")
	if _, err := os.Stat(led); code != exitUsage || !strings.Contains(unwrapped(stderr), why) || err == nil {
		t.Errorf("ledger init below the cap: exit %d, ledger made %v: %s", code, err == nil, stderr)
	}
	stdout, stderr, code := darrm(t, "", "ledger", "init", led, "--votes", perQuery, "--budget-eps", "2", "--budget-delta", "1e-8", "--replace")
	if code != 0 {
		t.Errorf("ledger init of per-query teachers: exit %d: %s%s", code, stdout, stderr)
	}
}

// TestAggregateGNMaxTight: --gnmax-search tight releases GNMax's bit with
// the noise of its exact curve for the file's K, far below the grid's.
func TestAggregateGNMaxTight(t *testing.T) {
	dir := t.TempDir()
	raw, _ := os.ReadFile(voteFile(t, dir, 40, func(i int) int { return i % 12 }))
	votes := filepath.Join(dir, "one-vote.csv")
	os.WriteFile(votes, []byte(strings.Replace(strings.Replace(string(raw), `"private-teachers"`, `"one-vote"`, 1), `"shared"`, `"keyed-hash"`, 1)), 0o644)
	sigma := map[string]float64{}
	for _, search := range []string{"grid", "tight"} {
		stdout, stderr, code := darrm(t, "", "aggregate", votes, "--m", "3", "--mechanism", "gnmax",
			"--gnmax-search", search, "--out", filepath.Join(dir, search+".csv"), "--format", "json", "--no-cache")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", search, code, stderr)
		}
		var doc report.Aggregate
		decode(t, stdout, &doc)
		if doc.Sigma2 == nil || doc.Answered != 40 || !strings.Contains(doc.Label, "("+search+" search)") {
			t.Fatalf("%s: %+v", search, doc)
		}
		sigma[search] = *doc.Sigma2
	}
	want, err := noisymax.GNMaxSigmaTight(accountant.Guarantee{Eps: 0.3, Delta: constraints.DefaultTargetDelta(1e-5, 3)}, 11)
	if err != nil {
		t.Fatal(err)
	}
	if got := sigma["tight"]; got < want || got > want*(1+1e-6) || !(got < sigma["grid"]/2) {
		t.Errorf("tight sigma %v, accountant %v, grid %v", got, want, sigma["grid"])
	}
}

// A seeded release says NOT FOR RELEASE once, with its seed; a summary
// gives a rate of queries only for a release that took a second or more;
// a mechanism without a threshold step does not speak of one.
func TestAggregateSummaryLines(t *testing.T) {
	dir := t.TempDir()
	votes := statedHeader(t, 3, votefile.FormatJSONL) + "{\"id\":\"a\",\"votes\":[1,1,0]}\n{\"id\":5,\"votes\":[0,0,1]}\n"
	for _, out := range []string{"", filepath.Join(dir, "l.jsonl")} {
		args := []string{"aggregate", "--m", "1", "--seed", "42", "--mechanism", "subsample", "--cache-dir", dir}
		if out != "" {
			args = append(args, "--out", out)
		}
		stdout, stderr, code := darrm(t, votes, args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		summary := stdout + stderr
		if strings.Count(summary, "NOT FOR RELEASE: --seed") != 1 || !strings.Contains(summary, "*** seed 42: NOT FOR RELEASE") || strings.Contains(summary, "queries/s") {
			t.Errorf("--out %q: stdout %q stderr %q", out, stdout, stderr)
		}
	}
	counts := filepath.Join(dir, "c.csv")
	os.WriteFile(counts, []byte("240,5,5\n200,30,20\n"), 0o644)
	stdout, stderr, code := darrm(t, "", "aggregate", counts, "--input-format", "counts", "--partition", "keyed-hash", "--mechanism", "lnmax", "--laplace-scale", "20", "--out", filepath.Join(dir, "ln.csv"))
	if code != 0 || strings.Contains(stdout, "threshold") || !strings.Contains(unwrapped(stdout), "2 of 2 queries released, every") {
		t.Errorf("lnmax: exit %d\n%s%s", code, stdout, stderr)
	}
}

// Every privacy bound of a release's summary, and of ledger show, is
// printed rounded up, so that one value reads the same wherever it
// appears: the per-query delta 1-(1-1e-5)^3 and the teachers' cap of the
// K = 11 example; the ledger's line says that the cap is what was spent,
// as ledger show does, not the composition of the queries (it said
// "spent so far (10, 0.000982208)-DP ..., within the teachers' cap (1.08795,
// 0.000119994)-DP", where 10 is not within 1.08795).
func TestBoundsRoundedOneWay(t *testing.T) {
	dir := t.TempDir()
	led := filepath.Join(dir, "k11.ledger")
	votes := filepath.Join("..", "..", "testdata", "votes-K11.csv")
	if _, stderr, code := darrm(t, "", "ledger", "init", led, "--votes", votes, "--budget-eps", "10", "--budget-delta", "1e-3"); code != 0 {
		t.Fatalf("ledger init: exit %d: %s", code, stderr)
	}
	var out string
	for i := range 2 {
		stdout, stderr, code := darrm(t, "", "aggregate", votes, "--ledger", led, "--out", filepath.Join(dir, fmt.Sprintf("l%d.csv", i)), "--cache-dir", dir)
		if code != 0 {
			t.Fatalf("aggregate: exit %d: %s", code, stderr)
		}
		out = stdout
	}
	show, stderr, code := darrm(t, "", "ledger", "show", led)
	if code != 0 {
		t.Fatalf("ledger show: exit %d: %s", code, stderr)
	}
	for _, s := range []string{out, show} {
		if strings.Contains(s, "2.99997e-05") || strings.Contains(s, "0.000119993") || !strings.Contains(s, "0.000119994") {
			t.Errorf("a bound rounded down, or the cap missing:\n%s", s)
		}
	}
	if !strings.Contains(out, "2.99998e-05") || !strings.Contains(unwrapped(out), "spent so far (1.08795, 0.000119994)-DP, the teachers' cap (its queries compose to (10, 0.000982208)-DP by its filter, advanced-filter)") {
		t.Errorf("summary:\n%s", out)
	}
}

// TestBudgetStopWithheld: when a budget stops a confident-gnmax release
// whose threshold step withheld some queries, the error on stderr counts
// them as the summary does: released, of which answered and withheld.
func TestBudgetStopWithheld(t *testing.T) {
	dir := t.TempDir()
	votes := filepath.Join(dir, "counts.csv")
	os.WriteFile(votes, []byte(strings.Repeat("250,0\n125,125\n", 3)+strings.Repeat("250,0\n", 6)), 0o644)
	stdout, stderr, code := darrm(t, "", "aggregate", votes, "--mechanism", "confident-gnmax", "--input-format", "counts", "--threshold", "200",
		"--sigma1", "20", "--sigma2", "40", "--delta", "1e-5", "--seed", "1", "--budget-eps", "0.5", "--budget-delta", "1e-4",
		"--partition", "keyed-hash", "--format", "json", "--out", filepath.Join(dir, "labels.csv"))
	var doc report.Aggregate
	decode(t, stdout, &doc)
	if code != exitBudget || doc.Withheld == 0 || doc.StoppedByBudget == 0 {
		t.Fatalf("exit %d, %d withheld, %d stopped: want a budget stop after withheld queries: %s", code, doc.Withheld, doc.StoppedByBudget, stderr)
	}
	want := fmt.Sprintf("released %d of %d queries (%d answered, %d withheld by the threshold step), %d not released",
		doc.Released, doc.Queries, doc.Answered, doc.Withheld, doc.StoppedByBudget)
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr %q, want %q (the summary's counts)", stderr, want)
	}
}

// exampleFlags returns the flags of m's example release, each setting as
// its flag (the rest comes from the votes and their header).
func exampleFlags(t *testing.T, m setup.MechanismInfo) []string {
	t.Helper()
	example := map[provenance.MechanismName][]string{
		"darrm-one-vote": {"--target-eps", "0.3", "--delta", "1e-5"}, "confident-gnmax": {"--threshold", "200", "--sigma1", "150", "--sigma2", "40", "--delta", "1e-5"},
		"lnmax": {"--laplace-scale", "20"},
		// Charged per draw to its filter, whose budget holds 8,000 queries.
		"progressive-gnmax": {"--levels", "20,15", "--kappa", "1", "--budget-eps", "80", "--budget-delta", "0.1"}}[m.Name]
	switch {
	case m.Input == votefile.ManyClasses && m.Name == (ensemble.GNMax{}).Name():
		example = []string{"--sigma2", "40", "--delta", "1e-5"}
	case example == nil:
		example = []string{"--m", "3"}
	}
	return example
}

// TestSettingFlags: every setting of every mechanism is given by a flag
// of darrm aggregate, once in what it needs and takes; the table holds
// every mechanism of the library, in its order.
func TestSettingFlags(t *testing.T) {
	fs := newAggregateCmd(testMechanisms()).Flags()
	for _, m := range testMechanisms().All() {
		seen := map[string]bool{}
		for _, name := range m.Flags() {
			if seen[name] {
				t.Errorf("%s on %v: --%s twice", m.Name, m.Input, name)
			}
			seen[name] = true
			if fs.Lookup(name) == nil {
				t.Errorf("%s on %v: the setting %q has no flag of aggregate", m.Name, m.Input, name)
			}
		}
	}
	for _, in := range []votefile.Input{votefile.TwoClass, votefile.ManyClasses} {
		var names, want []provenance.MechanismName
		for _, m := range testMechanisms().All() {
			if m.Input == in {
				names = append(names, m.Name)
			}
		}
		for _, m := range ensemble.Mechanisms().On(in) {
			want = append(want, m.Name())
		}
		if !slices.Equal(names, want) {
			t.Errorf("the table's mechanisms of %v %v, the library's %v", in, names, want)
		}
	}
}

// TestAggregateNoneReleased: a release that a spent ledger stops before
// its first label says that none was released, where it said "0 of 20
// queries released, every one answered".
func TestAggregateNoneReleased(t *testing.T) {
	t.Setenv(statedir.Env, t.TempDir())
	dir := t.TempDir()
	votes := countsFile(t, dir, "votes.csv", 20, func(i int) []int { return plurality(200, i%10) })
	led := filepath.Join(dir, "l.ledger")
	if _, e, code := darrm(t, "", "ledger", "init", led, "--votes", votes, "--budget-eps", "0.3", "--budget-delta", "1e-5"); code != 0 {
		t.Fatal(e)
	}
	release := []string{"aggregate", votes, "--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-6", "--ledger", led}
	if _, e, code := darrm(t, "", append(release, "--out", filepath.Join(dir, "a.csv"))...); code != exitBudget {
		t.Fatalf("the first release: exit %d: %s", code, e)
	}
	out, e, code := darrm(t, "", append(release, "--out", filepath.Join(dir, "b.csv"))...)
	if code != exitBudget || !containsFlat(out+e, "none of 20 queries released; STOPPED by the budget: 20 not released") || containsFlat(out+e, "every one answered") {
		t.Errorf("a release on a spent ledger: exit %d: %s%s", code, out, e)
	}
}

// TestAggregateVacuousTotal: a total to publish whose delta is above 1/2
// says that it guarantees nothing, and what to give instead; one below
// says no such thing. Of fixed teachers it names their cap, which holds
// however many queries, where it said to release fewer.
func TestAggregateVacuousTotal(t *testing.T) {
	fixed := filepath.Join("..", "..", "testdata", "votes-K11.csv")
	perQuery := filepath.Join(t.TempDir(), "per-query.csv")
	b, err := os.ReadFile(fixed)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(perQuery, bytes.Replace(b, []byte(`"kind":"fixed"`), []byte(`"kind":"per-query"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		votes, queries string
		vacuous        bool
		advice         string
	}{
		{fixed, "5", true, "give --total-delta; the teachers are fixed, and their cap, (1.08795, 0.000119994)-DP, bounds every release from them, however many queries"},
		{fixed, "1", false, ""},
		{perQuery, "5", true, "give --budget-eps and --budget-delta, or release fewer queries"},
	} {
		// A memo of its own: the one-bit answers of rr's composition
		// stay out of the memo that other tests save to their caches.
		var out, e bytes.Buffer
		args := []string{"aggregate", tc.votes, "--mechanism", "rr", "--m", "3", "--delta", "0.4", "--max-queries", tc.queries, "--out", filepath.Join(t.TempDir(), "l.csv"), "--cache-dir", t.TempDir()}
		code := runWith(new(accountant.Memo), context.Background(), args, strings.NewReader(""), &out, &e)
		if code != 0 || containsFlat(out.String(), "VACUOUS: a delta above 1/2 guarantees nothing") != tc.vacuous || !containsFlat(out.String(), tc.advice) {
			t.Errorf("%s, %s queries at delta 0.4 each: exit %d, vacuous said %v, want %v (%q): %s%s", filepath.Base(tc.votes), tc.queries, code, !tc.vacuous, tc.vacuous, tc.advice, out.String(), e.String())
		}
	}
}

// TestSimulateMechanismsOnce: a mechanism named twice in --mechanisms, or
// none, is refused (exit 2, naming the flag) before any is built: a
// repeat was built, run and printed again, and 20,000 of them held
// simulate past SIGTERM until the watchdog, at 480 MB.
func TestSimulateMechanismsOnce(t *testing.T) {
	code, out, errOut := runCLI("simulate", "--K", "11", "--m", "3", "--queries", "10", "--seed", "1", "--mechanisms", "rr,darrm,rr")
	if code != exitUsage || out != "" || !strings.Contains(errOut, `--mechanisms "rr": given twice`) {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit %d naming --mechanisms \"rr\" given twice", code, out, errOut, exitUsage)
	}
	// Given empty, it ran every mechanism.
	code, out, errOut = runCLI("simulate", "--K", "11", "--m", "3", "--queries", "10", "--seed", "1", "--mechanisms=")
	if code != exitUsage || out != "" || !strings.Contains(errOut, "--mechanisms is empty") {
		t.Errorf("--mechanisms=: exit %d, stdout %q, stderr %q; want exit %d saying it is empty", code, out, errOut, exitUsage)
	}
}

// TestAggregateNoQueryFits: a budget that fits not even one query says
// which per-query guarantee did not fit, and where to find the budget
// that would (plan), not only that none fit.
func TestAggregateNoQueryFits(t *testing.T) {
	dir := t.TempDir()
	// No metadata header: the teachers' guarantee is the flags', with no
	// cap, so the budget's test is the per-query guarantee's.
	votes := filepath.Join(dir, "votes.csv")
	if err := os.WriteFile(votes, []byte(strings.Repeat("1,1,1,1,1,1,0,0,0,0,0\n", 5)), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := darrm(t, "", "aggregate", votes, "--eps", "0.1", "--Delta", "1e-5", "--m", "3", "--out", filepath.Join(dir, "labels.csv"),
		"--cache-dir", dir, "--budget-eps", "2", "--budget-delta", "1e-5")
	if code != exitBudget {
		t.Fatalf("exit %d, want %d: %s", code, exitBudget, stderr)
	}
	if s := unwrapped(stdout + stderr); !strings.Contains(s, "allows no query: not even one, (0.3, ") || !strings.Contains(s, "darrm plan with these settings gives the smallest budget that fits one") {
		t.Errorf("no per-query guarantee or plan named: %s", s)
	}
}
