package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/experiments/datasets"
	"github.com/darrm/darrm/internal/statedir"
	"github.com/darrm/darrm/pate"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// pateHeader is the metadata header of a PATE ensemble: k non-private
// teachers on keyed-hash shares voting among c classes, in layout l and
// relation rel.
func pateHeader(t *testing.T, k, c int, l votefile.Layout, rel accountant.Relation, f votefile.Format) string {
	t.Helper()
	m := provenance.Binding{Ensemble: fmt.Sprintf("pate-k%d", k), Teachers: provenance.Teachers{K: k, Relation: rel, Kind: provenance.Fixed, Partition: provenance.KeyedHash}}.Header(c, l)
	if rel == accountant.PrivateTeachers {
		m.Partition = provenance.SharedData.String()
		m.Teachers = []votefile.TeacherGroup{provenance.StatedTeachers(k, accountant.Guarantee{Eps: 0.5, Delta: 1e-5})}
	}
	b, err := m.AppendHeader(nil, f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// countsFile writes a counts file of K = 250 teachers over 10 classes with
// the PATE header, ids q1..qn, and row i's counts from row(i), into dir.
func countsFile(t *testing.T, dir, name string, n int, row func(i int) []int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(pateHeader(t, 250, 10, votefile.LayoutCounts, accountant.OneVote, votefile.FormatCSV))
	b.WriteString("id,c0,c1,c2,c3,c4,c5,c6,c7,c8,c9\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "q%d", i)
		for _, x := range row(i) {
			fmt.Fprintf(&b, ",%d", x)
		}
		b.WriteByte('\n')
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// plurality is a row of 250 votes: top to class top, the rest spread
// evenly over the other nine classes.
func plurality(top, class int) []int {
	row := make([]int, 10)
	row[class] = top
	for j := range 250 - top {
		row[(class+1+j%9)%10]++
	}
	return row
}

var confident = []string{"--threshold", "200", "--sigma1", "150", "--sigma2", "40"}

func TestAccountPATE(t *testing.T) {
	t.Setenv(statedir.Env, t.TempDir())
	dir := t.TempDir()
	votes := countsFile(t, dir, "votes.csv", 40, func(i int) []int { return plurality(150+i*2, i%10) })
	out, stderr, code := darrm(t, "", append([]string{"account", "pate", votes, "--target-delta", "1e-5", "--format", "json", "--seed", "3", "--release-estimate"}, confident...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var d map[string]any
	decode(t, out, &d)
	for _, k := range []string{"queries", "expected_answered", "eps_data_independent", "eps_data_dependent", "order", "beta", "smooth_sensitivity", "sigma_ss", "eps_released", "not_for_publication"} {
		if d[k] == nil {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if d["queries"].(float64) != 40 || d["teachers"].(float64) != 250 || d["classes"].(float64) != 10 {
		t.Errorf("queries %v teachers %v classes %v", d["queries"], d["teachers"], d["classes"])
	}
	ind, dep := d["eps_data_independent"].(float64), d["eps_data_dependent"].(float64)
	if !(dep < ind) {
		t.Errorf("data-dependent %v not below data-independent %v", dep, ind)
	}
	// The data-independent bound from its formula: 40 queries at
	// lambda/40² + lambda/(2·150²), the best order of darrm's default
	// grid (1.25, 1.5, 1.75, 2 to 100 by 0.5, then 40 orders spaced
	// geometrically to 1000, rounded to 0.01: docs/pate.md).
	orders := []float64{1.25, 1.5, 1.75}
	for x := 2.0; x <= 100; x += 0.5 {
		orders = append(orders, x)
	}
	for j := 1; j <= 40; j++ {
		orders = append(orders, math.Round(100*math.Pow(10, float64(j)/40)*100)/100)
	}
	want := 1e300
	for _, o := range orders {
		e, _ := accountant.PaperConversion.ConvertRDP(40*o*(1/1600.0+1/45000.0), o, 1e-5)
		want = min(want, e)
	}
	if ind < want || ind > want*(1+1e-12) {
		t.Errorf("eps_data_independent %v, formula %v", ind, want)
	}
	// By default the smooth-sensitivity parameters are darrm's data-free
	// rule's: they may be published, the data-dependent values and the
	// expected number of answers may not, nor what a seeded draw released
	// (anyone who knows the seed removes its noise; a draw from
	// crypto/rand, below, may be published as an estimate), and the
	// output says that its costs are expected ones.
	nfp := d["not_for_publication"].([]any)
	for _, k := range []string{"eps_data_dependent", "order", "smooth_sensitivity", "noise_deviation", "expected_answered", "rdp_released", "eps_released"} {
		if !slices.Contains(nfp, any(k)) {
			t.Errorf("not_for_publication %v lacks %s", nfp, k)
		}
	}
	for _, k := range []string{"ss_order", "beta", "sigma_ss", "ss_margin", "gnss_rdp"} {
		if slices.Contains(nfp, any(k)) || d[k] == nil {
			t.Errorf("data-free parameters: %s = %v, not_for_publication %v", k, d[k], nfp)
		}
	}
	if d["ss_parameters"] != "data-free" || d["cost"] != "expected" || d["directions"] != "both" ||
		!strings.Contains(d["publication"].(string), "publish eps_guarantee at delta_guarantee as the guarantee") || !strings.Contains(d["publication"].(string), "no run's guarantee") {
		t.Errorf("ss_parameters %v, cost %v, directions %v, publication %q", d["ss_parameters"], d["cost"], d["directions"], d["publication"])
	}
	// The PATE authors' choice from the votes: everything it chose is
	// marked, and so is the release. --delta is the release's delta here
	// as in aggregate.
	out, stderr, code = darrm(t, "", append([]string{"account", "pate", votes, "--target-delta", "1e-5", "--format", "json", "--seed", "3", "--release-estimate", "--ss-parameters", "from-votes"}, confident...)...)
	if code != 0 {
		t.Fatalf("from-votes: exit %d: %s", code, stderr)
	}
	var v map[string]any
	decode(t, out, &v)
	for _, k := range []string{"ss_order", "beta", "sigma_ss", "ss_margin", "gnss_rdp", "rdp_released", "eps_released", "smooth_sensitivity_error"} {
		if !slices.Contains(v["not_for_publication"].([]any), any(k)) {
			t.Errorf("from-votes: not_for_publication %v lacks %s", v["not_for_publication"], k)
		}
	}
	if v["ss_parameters"] != "from-votes" || v["eps_data_independent"] != d["eps_data_independent"] || v["delta"] != 1e-5 {
		t.Errorf("from-votes: ss_parameters %v, eps_data_independent %v (default %v), delta %v", v["ss_parameters"], v["eps_data_independent"], d["eps_data_independent"], v["delta"])
	}

	// A release, then its realised cost: withheld queries marked, the
	// GNMax step charged only where answered.
	labels := filepath.Join(dir, "labels.csv")
	if _, stderr, code := darrm(t, "", append([]string{"aggregate", votes, "--mechanism", "confident-gnmax", "--delta", "1e-5", "--out", labels, "--seed", "4"}, confident...)...); code != 0 {
		t.Fatalf("aggregate: exit %d: %s", code, stderr)
	}
	answered := 0
	for i, l := range readLines(t, labels)[1:] {
		f := strings.Split(l, ",")
		if len(f) != 3 || f[0] != fmt.Sprintf("q%d", i+1) || (f[2] == "1") != (f[1] != "") {
			t.Fatalf("label row %q", l)
		}
		if f[2] == "1" {
			answered++
		}
	}
	if answered == 0 || answered == 40 {
		t.Fatalf("%d of 40 answered: the votes should leave some below the threshold", answered)
	}
	out, stderr, code = darrm(t, "", append([]string{"account", "pate", votes, "--target-delta", "1e-5", "--format", "json", "--labels", labels, "--ss-order", "20", "--beta", "0.02", "--sigma-ss", "10", "--release-estimate"}, confident...)...)
	if code != 0 {
		t.Fatalf("realised: exit %d: %s", code, stderr)
	}
	var r map[string]any
	decode(t, out, &r)
	if r["answered"].(float64) != float64(answered) || r["expected_answered"].(float64) != float64(answered) {
		t.Errorf("answered %v expected %v, want %d", r["answered"], r["expected_answered"], answered)
	}
	if slices.Contains(r["not_for_publication"].([]any), any("eps_released")) || r["eps_released"] == nil || r["ss_order"] != 20.0 || r["beta"] != 0.02 || r["sigma_ss"] != 10.0 {
		t.Errorf("fixed GNSS parameters: %v %v %v, not for publication %v", r["ss_order"], r["beta"], r["sigma_ss"], r["not_for_publication"])
	}
	if r["cost"] != "realised" || slices.Contains(r["not_for_publication"].([]any), any("expected_answered")) || strings.Contains(r["publication"].(string), "expected") {
		t.Errorf("realised: cost %v, not for publication %v, publication %q", r["cost"], r["not_for_publication"], r["publication"])
	}

	// The table reads at 100 columns: no empty rows, texts numbered
	// notes below it, wrapped.
	table, stderr, code := darrm(t, "", append([]string{"account", "pate", votes, "--target-delta", "1e-5", "--seed", "3", "--release-estimate"}, confident...)...)
	if code != 0 {
		t.Fatalf("table: exit %d: %s", code, stderr)
	}
	for _, l := range strings.Split(table, "\n") {
		if utf8.RuneCountInString(l) > 100 || strings.HasPrefix(l, "│") && regexp.MustCompile(`│\s+│`).MatchString(l[:strings.LastIndex(l, "│")]) {
			t.Errorf("line wider than 100 or an empty row: %q", l)
		}
	}
	if !strings.Contains(table, "eps_data_dependent (expected)") || !regexp.MustCompile(`│ publication +│ \[\d+\]`).MatchString(table) ||
		!strings.Contains(unwrapped(table), "] publish eps_guarantee at delta_guarantee as the guarantee") || strings.Count(table, "NOT FOR RELEASE") != 1 {
		t.Errorf("table:\n%s", table)
	}

	// lnmax: the data-independent guarantee only.
	out, stderr, code = darrm(t, "", "account", "pate", votes, "--laplace-scale", "20", "--target-delta", "1e-5", "--format", "json")
	if code != 0 {
		t.Fatalf("lnmax: exit %d: %s", code, stderr)
	}
	var l map[string]any
	decode(t, out, &l)
	vf, err := votefile.Open(votes, votefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer vf.Close()
	acct, err := pate.Account(context.Background(), vf, pate.AccountOptions{Mechanism: ensemble.LNMax{Scale: 20},
		Delta: 1e-5, Conversion: accountant.PaperConversion})
	if err != nil {
		t.Fatal(err)
	}
	lm := acct.LNMax
	if e := l["eps_data_independent"].(float64); e != lm.Eps || e > 4 || l["eps_data_dependent"] != nil || l["mechanism"] != "lnmax" {
		t.Errorf("lnmax: eps %v (want %v, at most the pure 40·0.1), dependent %v, mechanism %v", e, lm.Eps, l["eps_data_dependent"], l["mechanism"])
	}
}

// Every bad input to account pate and to a multi-class aggregate exits 2
// with an error that names it, prints nothing and leaves no file.
func TestPATEBadInput(t *testing.T) {
	dir := t.TempDir()
	votes := countsFile(t, dir, "votes.csv", 5, func(i int) []int { return plurality(200, i%10) })
	write := func(name, content string) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	head := pateHeader(t, 250, 10, votefile.LayoutCounts, accountant.OneVote, votefile.FormatCSV)
	row := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(plurality(200, 0))), ","), "[]")
	private := write("private.csv", pateHeader(t, 251, 10, votefile.LayoutCounts, accountant.PrivateTeachers, votefile.FormatCSV)+"206,5,5,5,5,5,5,5,5,5\n")
	classes := write("classes.csv", pateHeader(t, 5, 3, votefile.LayoutVotes, accountant.OneVote, votefile.FormatCSV)+"0,1,2,2,1\n")
	shortLabels := write("short.csv", "id,label,answered\nq1,3,1\n")
	badLabels := write("bad.csv", "id,label,answered\nq1,3,0\nq2,,0\nq3,,0\nq4,,0\nq5,,0\n")
	otherIDs := write("ids.csv", "id,label,answered\nx1,,0\nq2,,0\nq3,,0\nq4,,0\nq5,,0\n")
	acct := func(args ...string) []string {
		return append([]string{"account", "pate", "--target-delta", "1e-5"}, args...)
	}
	agg := func(args ...string) []string {
		return append([]string{"aggregate", "--out", filepath.Join(dir, "labels.csv")}, args...)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"no sigma2", acct(votes), []string{"--sigma2 is required"}},
		{"threshold alone", acct(votes, "--sigma2", "40", "--threshold", "200"), []string{"--sigma1 is required"}},
		{"sigma1 0", acct(votes, "--sigma2", "40", "--threshold", "200", "--sigma1", "0"), []string{"--sigma1 = 0"}},
		{"sigma2 negative", acct(votes, "--sigma2", "-1"), []string{"sigma2", "-1"}},
		{"sigma2 NaN", acct(votes, "--sigma2", "NaN"), []string{"sigma2", "NaN"}},
		{"laplace and sigma2", acct(votes, "--sigma2", "40", "--laplace-scale", "20"), []string{"--sigma2 is not a setting of lnmax", "(--sigma2 is a setting of gnmax, confident-gnmax)"}},
		// A Laplace scale implies lnmax even beside a threshold step's settings.
		{"laplace and threshold", acct(votes, "--threshold", "200", "--sigma1", "150", "--laplace-scale", "20"), []string{"--threshold is not a setting of lnmax", "(--threshold is a setting of confident-gnmax, progressive-gnmax)"}},
		{"laplace 0", acct(votes, "--laplace-scale", "0"), []string{"laplace-scale", "0"}},
		{"lnmax labels", acct(votes, "--laplace-scale", "20", "--labels", shortLabels), []string{"--labels: lnmax is accounted data-independently only"}},
		{"order 1", acct(votes, "--sigma2", "40", "--orders", "1,2"), []string{"--orders", "1"}},
		{"delta 0", []string{"account", "pate", votes, "--sigma2", "40", "--target-delta", "0"}, []string{"--target-delta", "0"}},
		{"delta missing", []string{"account", "pate", votes, "--sigma2", "40"}, []string{"--target-delta"}},
		{"beta alone from the votes", acct(votes, "--sigma2", "40", "--beta", "0.01", "--ss-parameters", "from-votes"), []string{"--ss-parameters from-votes chooses --beta and --sigma-ss together"}},
		{"ss parameters", acct(votes, "--sigma2", "40", "--ss-parameters", "fixed"), []string{"--ss-parameters", "must be data-free or from-votes"}},
		{"ss order 1", acct(votes, "--sigma2", "40", "--ss-order", "1"), []string{"--ss-order = 1: must be > 1"}},
		{"beta 0", acct(votes, "--sigma2", "40", "--beta", "0"), []string{"--beta = 0: must be > 0"}},
		{"sigma ss negative", acct(votes, "--sigma2", "40", "--sigma-ss", "-2"), []string{"--sigma-ss = -2: must be a finite number > 0"}},
		{"beta too large", acct(votes, "--sigma2", "40", "--ss-order", "20", "--beta", "0.1"), []string{"--ss-order = 20", "1/(2·beta)"}},
		{"directions", acct(votes, "--sigma2", "40", "--directions", "reverse"), []string{"--directions", "both, one-sided"}},
		{"lnmax directions", acct(votes, "--laplace-scale", "20", "--directions", "one-sided"), []string{"--directions: lnmax is accounted data-independently only"}},
		{"noise", acct(votes, "--sigma2", "40", "--noise", "uniform"), []string{"--noise"}},
		{"labels without rows", acct(append([]string{votes, "--labels", write("none.csv", "id,label,answered\n")}, confident...)...), []string{"no labels after the header row"}},
		{"labels beyond the votes", acct(append([]string{votes, "--labels", write("long.csv", "id,label,answered\nq1,,0\nq2,,0\nq3,,0\nq4,,0\nq5,,0\nq6,,0\n")}, confident...)...), []string{"more rows than the votes have queries"}},
		{"seed without a draw", acct(votes, "--sigma2", "40", "--seed", "1"), []string{"--seed seeds the smooth-sensitivity draw of --release-estimate"}},
		{"ledger for nothing", acct(votes, "--sigma2", "40", "--ledger", filepath.Join(dir, "none.ledger")), []string{"--ledger is the reference of --labels and is charged for --release-estimate"}},
		{"lnmax draw", acct(votes, "--laplace-scale", "20", "--release-estimate"), []string{"--release-estimate: lnmax is accounted data-independently only"}},
		// A deviation of 2^62 lattice steps or more is not drawn: the
		// analysis says so, where the draw failed (exit 1).
		{"sigma ss beyond the lattice", acct(votes, "--sigma2", "40", "--ss-order", "1e6", "--beta", "1e-7", "--sigma-ss", "1e15", "--release-estimate", "--seed", "1"), []string{"no smooth-sensitivity release to draw"}},
		{"labels answered without label", acct(append([]string{votes, "--labels", badLabels}, confident...)...), []string{"line 2", "a label must be given exactly when the query was answered"}},
		{"labels of other votes", acct(append([]string{votes, "--labels", otherIDs}, confident...)...), []string{"ids.csv, line 2", `id "x1"`, `has id "q1"`}},
		{"labels missing", acct(append([]string{votes, "--labels", filepath.Join(dir, "none.csv")}, confident...)...), []string{"none.csv"}},
		{"counts sum", acct(write("sum.csv", head+row+"\n1,2,3,250,0,0,0,0,0,0\n"), "--sigma2", "40"), []string{"line 3", "counts sum to more than K = 250 teachers (as the metadata header, line 1, states)"}},
		{"K negative", acct(votes, "--sigma2", "40", "--K", "-3"), []string{"--K = -3: must be an integer >= 1"}},
		{"K contradicts header", acct(votes, "--sigma2", "40", "--K", "251"), []string{"--K = 251 but", "has K = 250 teachers"}},
		{"counts short of K without K", acct(write("short.csv", "250,0,0\n249,1,0\n200,0,0\n"), "--sigma2", "40", "--input-format", "counts"), []string{"line 3", "counts do not sum to K = 250", "--K"}},
		{"negative count", acct(write("neg.csv", head+strings.Replace(row, "200", "-200", 1)+"\n"), "--sigma2", "40"), []string{"line 2, column 1", "must be a non-negative integer"}},
		{"classes contradict header", acct(votes, "--sigma2", "40", "--classes", "5"), []string{"classes: 5 given, but the vote file's metadata header states 10", "(--classes)"}},
		{"counts against class indices", acct(classes, "--sigma2", "40", "--input-format", "counts"), []string{"--input-format counts contradicts the metadata header", "layout votes"}},
		{"empty", acct(write("e.csv", ""), "--sigma2", "40"), []string{"empty file"}},
		{"header only", acct(write("h.csv", head), "--sigma2", "40"), []string{"no votes after the metadata header"}},
		{"binary data", acct(write("b.bin", "\x89PNG\r\n\x1a\n\x00"), "--sigma2", "40"), []string{"binary"}},

		{"darrm on counts", agg(votes, "--mechanism", "darrm"), []string{"--mechanism darrm labels two-class votes, not multi-class votes", "gnmax, confident-gnmax, lnmax"}},
		{"rr on class indices", agg(classes, "--mechanism", "rr"), []string{"--mechanism rr labels two-class votes, not multi-class votes", "gnmax, confident-gnmax, lnmax"}},
		{"private-teachers header", agg(private, "--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-5"), []string{"relation", "private-teachers", "one-vote"}},
		{"eps given", agg(votes, "--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-5", "--eps", "1"), []string{"--eps is not a setting of gnmax on multi-class votes", "--eps is a setting of darrm, subsample, dsub, rr, gnmax on two-class votes: votes of 0 and 1, read without --classes"}},
		{"m given", agg(votes, "--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-5", "--m", "3"), []string{"--m is not a setting of gnmax on multi-class votes"}},
		{"gnmax without delta", agg(votes, "--mechanism", "gnmax", "--sigma2", "40"), []string{"--delta is required"}},
		{"lnmax with delta", agg(votes, "--mechanism", "lnmax", "--laplace-scale", "20", "--delta", "1e-5"), []string{"--delta is not a setting of lnmax on multi-class votes, which takes --laplace-scale (--delta is a setting of gnmax, confident-gnmax)"}},
		{"lnmax with sigma2", agg(votes, "--mechanism", "lnmax", "--laplace-scale", "20", "--sigma2", "40"), []string{"--sigma2 is not a setting of lnmax"}},
		{"confident without threshold", agg(votes, "--mechanism", "confident-gnmax", "--sigma2", "40", "--sigma1", "150", "--delta", "1e-5"), []string{"--threshold is required"}},
		{"gnmax with threshold", agg(votes, "--mechanism", "gnmax", "--sigma2", "40", "--threshold", "200", "--sigma1", "150", "--delta", "1e-5"), []string{"--threshold is not a setting of gnmax on multi-class votes, which takes --sigma2, --delta"}},
		{"K mismatch", agg(votes, "--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-5", "--K", "251"), []string{"--K = 251", "K = 250 teachers"}},
		{"bad row", agg(write("sum.csv", head+row+"\n1,2,3,250,0,0,0,0,0,0\n"), "--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-5"), []string{"line 3", "counts sum to more than K = 250"}},
		{"lone budget", agg(votes, "--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-5", "--budget-eps", "1"), []string{"go together"}},
		{"classes contradict", agg(votes, "--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-5", "--classes", "3"), []string{"classes: 3 given, but the vote file's metadata header states 10"}},
		{"sigma2 on 0/1 votes", agg(voteFile(t, t.TempDir(), 3, func(int) int { return 6 }), "--sigma2", "40"), []string{"--sigma2 is not a setting of darrm on two-class votes", "--sigma2 is a setting of gnmax, confident-gnmax on multi-class votes"}},
		{"darrm on --classes 2", agg(write("two.csv", "0,1,1\n1,1,0\n"), "--classes", "2", "--queries-in-rows", "--eps", "0.1", "--Delta", "1e-5"), []string{"--mechanism darrm labels two-class votes", "0/1 votes are read without --classes", "darrm sidecar VOTES --classes 2"}},
		{"confident on 0/1 votes", agg(voteFile(t, t.TempDir(), 3, func(int) int { return 6 }), "--mechanism", "confident-gnmax"), []string{"--mechanism confident-gnmax labels multi-class votes, not two-class votes", "--input-format counts, --classes C"}},
	} {
		stdout, stderr, code := darrm(t, "", tc.args...)
		if code != exitUsage {
			t.Errorf("%s: exit %d, want 2; stderr %s", tc.name, code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr %q lacks %q", tc.name, stderr, w)
			}
		}
		if stdout != "" {
			t.Errorf("%s: stdout %q", tc.name, stdout)
		}
		if left := files(t, dir); len(left) != 1 {
			t.Errorf("%s: left %v behind", tc.name, left)
		}
	}
}

// A multi-class release prints nothing derived from the votes: with the
// threshold out of reach every query is withheld, and every byte of every
// output (labels, summary, stderr) is the same for votes with opposite
// pluralities and different counts; with GNMax the labels differ but the
// summary does not; account pate's publishable fields do not either.
func TestPATENeverPrintsCounts(t *testing.T) {
	dir := t.TempDir()
	// Under -short fewer queries: each of the 18 accounts charges every
	// query at every order.
	n := 30
	if testing.Short() {
		n = 10
	}
	files := []string{
		countsFile(t, dir, "a.csv", n, func(i int) []int { return plurality(250, 0) }),
		countsFile(t, dir, "b.csv", n, func(i int) []int { return plurality(100, 9) }),
		countsFile(t, dir, "c.csv", n, func(i int) []int { return plurality(26+i, i%10) }),
	}
	timing := regexp.MustCompile(`(?m)^time: .*$|"(seconds|queries_per_second)": [^,\n]*`)
	same := func(what string, outs []string) {
		t.Helper()
		for i := 1; i < len(outs); i++ {
			if outs[i] != outs[0] {
				t.Errorf("%s depends on the votes:\n%s\n---\n%s", what, outs[0], outs[i])
			}
		}
	}
	for _, format := range []string{"table", "json", "csv"} {
		var labels, summaries, errs []string
		for _, v := range files {
			out := filepath.Join(dir, "labels.csv")
			stdout, stderr, code := darrm(t, "", "aggregate", v, "--mechanism", "confident-gnmax", "--threshold", "1750", "--sigma1", "150", "--sigma2", "40",
				"--delta", "1e-5", "--seed", "7", "--out", out, "--format", format)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			b, _ := os.ReadFile(out)
			labels = append(labels, string(b))
			summaries = append(summaries, strings.ReplaceAll(timing.ReplaceAllString(stdout, ""), v, "VOTES"))
			errs = append(errs, strings.ReplaceAll(timing.ReplaceAllString(stderr, ""), v, "VOTES"))
		}
		same("withheld labels ("+format+")", labels)
		same("summary ("+format+")", summaries)
		same("stderr ("+format+")", errs)
		if !strings.Contains(labels[0], fmt.Sprintf("q%d,,0\n", n)) {
			t.Errorf("withheld query not marked: %q", labels[0][len(labels[0])-20:])
		}
		for _, mech := range [][]string{{"--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-5"}, {"--mechanism", "lnmax", "--laplace-scale", "20"}} {
			summaries = nil
			for _, v := range files {
				stdout, stderr, code := darrm(t, "", append([]string{"aggregate", v, "--seed", "7", "--out", filepath.Join(dir, "l.csv"), "--format", format}, mech...)...)
				if code != 0 {
					t.Fatalf("%v: exit %d: %s", mech, code, stderr)
				}
				summaries = append(summaries, strings.ReplaceAll(timing.ReplaceAllString(stdout, ""), v, "VOTES"))
			}
			same(mech[1]+" summary ("+format+")", summaries)
		}
	}
	// account pate, with the smooth-sensitivity parameters of the
	// data-free rule, given in part, or fixed: every field outside
	// not_for_publication, other than the release itself, is the same
	// (the order, the margin that reveals it, an error that names it),
	// in JSON and in the table.
	for _, ss := range [][]string{nil, {"--beta", "0.01"}, {"--ss-order", "20", "--beta", "0.02", "--sigma-ss", "10"}} {
		for _, format := range []string{"json", "table"} {
			var pub []string
			for _, v := range files {
				out, stderr, code := darrm(t, "", append(append([]string{"account", "pate", v, "--target-delta", "1e-5", "--format", format, "--seed", "1", "--release-estimate"}, confident...), ss...)...)
				if code != 0 {
					t.Fatalf("account pate: exit %d: %s", code, stderr)
				}
				if format == "table" {
					var keep []string
					nfp := regexp.MustCompile(`not for publication\s*│`)
					for _, l := range strings.Split(out, "\n") {
						if !nfp.MatchString(l) && !strings.Contains(l, "_released") {
							keep = append(keep, l)
						}
					}
					pub = append(pub, strings.Join(keep, "\n"))
					continue
				}
				var d map[string]any
				decode(t, out, &d)
				for _, k := range d["not_for_publication"].([]any) {
					delete(d, k.(string))
				}
				delete(d, "rdp_released")
				delete(d, "eps_released")
				b, _ := json.Marshal(d)
				pub = append(pub, string(b))
			}
			same(fmt.Sprintf("account pate's publishable fields (%v, %s)", ss, format), pub)
		}
	}
}

// ledger init --votes binds a PATE ensemble from its header (no teachers'
// guarantee, K = 250); a release from other teachers is refused.
func TestPATELedger(t *testing.T) {
	dir := t.TempDir()
	votes := countsFile(t, dir, "votes.csv", 10, func(i int) []int { return plurality(240, i%10) })
	led := filepath.Join(dir, "pate.ledger")
	if _, stderr, code := darrm(t, "", "ledger", "init", led, "--votes", votes, "--budget-eps", "5", "--budget-delta", "1e-3"); code != 0 {
		t.Fatalf("ledger init: exit %d: %s", code, stderr)
	}
	args := []string{"--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-7", "--ledger", led, "--format", "json", "--out", filepath.Join(dir, "l.csv")}
	out, stderr, code := darrm(t, "", append([]string{"aggregate", votes}, args...)...)
	if code != 0 {
		t.Fatalf("release: exit %d: %s", code, stderr)
	}
	var d map[string]any
	decode(t, out, &d)
	if d["ledger"] == nil || d["released"].(float64) != 10 {
		t.Errorf("ledger %v released %v", d["ledger"], d["released"])
	}
	raw, _ := os.ReadFile(votes)
	other := filepath.Join(dir, "other.csv")
	os.WriteFile(other, []byte(strings.Replace(string(raw), `"ensemble":"pate-k250"`, `"ensemble":"another"`, 1)), 0o644)
	if _, stderr, code := darrm(t, "", append([]string{"aggregate", other}, args...)...); code != exitUsage || !strings.Contains(stderr, "ensemble another (the ledger's: pate-k250)") {
		t.Errorf("another ensemble: exit %d: %s", code, stderr)
	}
	if _, stderr, code := darrm(t, "", "ledger", "init", filepath.Join(dir, "x.ledger"), "--votes", votes, "--eps", "1", "--Delta", "1e-5", "--budget-eps", "2", "--budget-delta", "1e-5"); code != exitUsage || !strings.Contains(stderr, "non-private teachers") {
		t.Errorf("ledger init with --eps on non-private teachers: exit %d: %s", code, stderr)
	}
}

// syntheticMNIST writes a small ten-class set in MNIST's IDX files into a
// data folder, as mnist and as fashion-mnist, and points darrm at it
// ($DARRM_DATA).
func syntheticMNIST(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	// Under -short fewer training images, the teachers' training is
	// shorter; the test set, whose first half are the queries, is the same.
	train := 1500
	if testing.Short() {
		train = 150
	}
	m := datasets.SyntheticClasses(train, 200, 10, 3)
	write := func(name string, dims []uint32, data []byte) {
		b := []byte{0, 0, 8, byte(len(dims))}
		for _, d := range dims {
			b = binary.BigEndian.AppendUint32(b, d)
		}
		if err := os.MkdirAll(filepath.Join(dir, "mnist-data"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "mnist-data", name), append(b, data...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []struct {
		prefix string
		im     *datasets.Images
	}{{"train", m.Train}, {"t10k", m.Test}} {
		labels := make([]byte, s.im.Len())
		for i, l := range s.im.Labels {
			labels[i] = byte(l)
		}
		write(s.prefix+"-images-idx3-ubyte", []uint32{uint32(s.im.Len()), 28, 28}, s.im.Pixels)
		write(s.prefix+"-labels-idx1-ubyte", []uint32{uint32(s.im.Len())}, labels)
	}
	// The same images as Fashion-MNIST (read gzipped or not).
	if err := os.MkdirAll(filepath.Join(dir, "fashion-mnist"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"} {
		if err := os.Link(filepath.Join(dir, "mnist-data", f), filepath.Join(dir, "fashion-mnist", f+".gz")); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(datasets.EnvDir, dir)
}

// darrm pate on a synthetic set: the JSON fields, the teachers
// cached for a second run (and shared with teachers vote --classes, whose
// counts account pate and aggregate read), bad input exiting 2. Under
// -short the ensemble has 3 teachers, not 12 (the keys and the cache are
// the same at any K).
func TestPATEExperiment(t *testing.T) {
	syntheticMNIST(t)
	cache := t.TempDir()
	teachers := "12"
	if testing.Short() {
		teachers = "3"
	}
	args := []string{"pate", "--teachers", teachers, "--student", "--format", "json", "--cache-dir", cache, "--seed", "2"}
	out, stderr, code := darrm(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var d struct {
		Teachers struct {
			K            *int     `json:"K"`
			AccuracyMean *float64 `json:"accuracy_mean"`
			Cached       bool     `json:"cached"`
		} `json:"teachers"`
		Results []map[string]any `json:"results"`
		Student *struct {
			Accuracy *float64 `json:"accuracy"`
		} `json:"student"`
		NotForPublication []string `json:"not_for_publication"`
		ForRelease        bool     `json:"for_release"`
	}
	decode(t, out, &d)
	if d.Teachers.K == nil || strconv.Itoa(*d.Teachers.K) != teachers || d.Teachers.AccuracyMean == nil || d.Teachers.Cached || d.Student == nil || d.Student.Accuracy == nil || d.ForRelease {
		t.Fatalf("JSON %s", out)
	}
	if len(d.Results) != 2 || d.Results[0]["mechanism"] != "confident-gnmax" || d.Results[1]["mechanism"] != "gnmax" {
		t.Fatalf("results %v", d.Results)
	}
	for _, r := range d.Results {
		for _, k := range []string{"queries", "answered", "accuracy", "eps_data_independent", "eps_data_dependent", "eps_released", "delta"} {
			if _, ok := r[k]; !ok {
				t.Errorf("%v lacks %s", r["mechanism"], k)
			}
		}
		if r["queries"].(float64) != 100 || r["delta"].(float64) != 1e-5 {
			t.Errorf("queries %v delta %v", r["queries"], r["delta"])
		}
	}
	// Seeded: what the draws released is the votes' to whoever knows the
	// seed (report.TestPATEExperimentSeeded checks a run without one).
	if !slices.Contains(d.NotForPublication, "accuracy_mean") || !slices.Contains(d.NotForPublication, "eps_data_dependent") || !slices.Contains(d.NotForPublication, "eps_released") {
		t.Errorf("not_for_publication %v", d.NotForPublication)
	}
	out2, stderr, code := darrm(t, "", args...)
	if code != 0 || !strings.Contains(out2, `"cached": true`) {
		t.Errorf("second run: exit %d, %s", code, stderr)
	}
	// Progressive GNMax is charged per draw, with no Rényi analysis: its
	// row leaves those columns empty, where it printed 0, read as no
	// cost.
	prog, stderr, code := darrm(t, "", "pate", "--teachers", teachers, "--format", "json", "--cache-dir", cache, "--seed", "2", "--mechanism", "progressive-gnmax", "--levels", "2,1.5", "--kappa", "0.5", "--give-up", "0.5", "--threshold", "2", "--sigma1", "2", "--budget-eps", "8", "--budget-delta", "1e-5")
	var p struct {
		Results []map[string]any `json:"results"`
	}
	if code != 0 {
		t.Fatalf("progressive-gnmax: exit %d: %s", code, stderr)
	}
	decode(t, prog, &p)
	for _, r := range p.Results {
		for _, k := range []string{"eps_data_independent", "eps_data_dependent", "order"} {
			if v, ok := r[k]; !ok || v != nil {
				t.Errorf("progressive-gnmax: %s = %v, want null", k, v)
			}
		}
	}
	// Stopping at 5 answers, beside PATE 2018's row, in every format.
	var a struct {
		AnsweredTarget *int             `json:"answered_target"`
		Results        []map[string]any `json:"results"`
		PATE2018       map[string]any   `json:"pate_2018"`
		Publication    string           `json:"publication"`
	}
	out3, stderr, code := darrm(t, "", "pate", "--teachers", teachers, "--format", "json", "--cache-dir", cache, "--seed", "2", "--answered", "5")
	if code != 0 {
		t.Fatalf("--answered 5: exit %d: %s", code, stderr)
	}
	decode(t, out3, &a)
	if a.AnsweredTarget == nil || *a.AnsweredTarget != 5 || a.PATE2018["answered"] != 286.0 || a.PATE2018["eps"] != 1.97 || !strings.Contains(a.Publication, "publish each mechanism's eps_guarantee") {
		t.Errorf("--answered 5: target %v, PATE 2018 %v, publication %q", a.AnsweredTarget, a.PATE2018, a.Publication)
	}
	for _, r := range a.Results {
		if r["answered"] != 5.0 || r["reached"] != true || r["queries"].(float64) < 5 || r["eps_released"] == nil || r["ss_order"] == nil {
			t.Errorf("--answered 5: %v", r)
		}
	}
	table, stderr, code := darrm(t, "", "pate", "--teachers", teachers, "--cache-dir", cache, "--seed", "2", "--answered", "5")
	if code != 0 || !strings.Contains(table, "│ PATE 2018 ") || !strings.Contains(table, "eps dep. *") || !strings.Contains(table, "* not for publication") ||
		!strings.Contains(table, "mean accuracy on the queries *") || strings.Count(table+stderr, "NOT FOR RELEASE") != 1 || !strings.Contains(table, "seed 2") {
		t.Errorf("table: exit %d\n%s\nstderr %s", code, table, stderr)
	}
	csv, _, _ := darrm(t, "", "pate", "--teachers", teachers, "--cache-dir", cache, "--seed", "2", "--answered", "5", "--format", "csv")
	if lines := strings.Split(csv, "\n"); !strings.Contains(lines[0], "not_for_publication,publication") || !strings.Contains(lines[1], "teachers_accuracy_mean ensemble eps_data_dependent order seconds") {
		t.Errorf("csv %s", csv)
	}
	votes := filepath.Join(t.TempDir(), "counts.csv")
	if _, stderr, code := darrm(t, "", "teachers", "vote", "--dataset", "mnist", "--classes", "10", "--K", teachers, "--seed", "2", "--cache-dir", cache, "--out", votes); code != 0 || strings.Contains(stderr, "training") {
		t.Fatalf("teachers vote --classes: exit %d (it should load darrm pate's teachers): %s", code, stderr)
	}
	if _, stderr, code := darrm(t, "", "account", "pate", votes, "--sigma2", "2", "--target-delta", "1e-5"); code != 0 {
		t.Errorf("account pate on the teachers' counts: exit %d: %s", code, stderr)
	}
	if _, stderr, code := darrm(t, "", "aggregate", votes, "--mechanism", "gnmax", "--sigma2", "2", "--delta", "1e-5", "--out", filepath.Join(t.TempDir(), "l.csv")); code != 0 {
		t.Errorf("aggregate on the teachers' counts: exit %d: %s", code, stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"pate", "--teachers", "0"}, "--teachers = 0"},
		{[]string{"pate", "--answered", "0"}, "--answered = 0: must be >= 1"},
		{[]string{"pate", "--directions", "one"}, "--directions"},
		{[]string{"pate", "--ss-parameters", "from-votes", "--sigma-ss", "3"}, "--ss-parameters from-votes chooses --beta and --sigma-ss together"},
		{[]string{"pate", "--dataset", "cifar"}, "must be mnist or fashion-mnist"},
		{[]string{"teachers", "vote", "--dataset", "mnist", "--classes", "5", "--cache-dir", cache}, "--classes 5: mnist has 10 classes"},
		{[]string{"teachers", "vote", "--dataset", "mnist", "--classes", "10", "--sigma", "2", "--cache-dir", cache}, "--sigma: the teachers of --classes are PATE's"},
	} {
		stdout, stderr, code := darrm(t, "", tc.args...)
		if code != exitUsage || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q lacks %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

// darrm pate marks what it prints (issue 40 item 11, issue 35): one total
// to publish per mechanism (eps_guarantee), the released eps an estimate;
// the ensemble id and the time marked; the vote-chosen smooth-sensitivity
// parameters marked in the table too; every key the CSV lists as not for
// publication one of its columns; one-sided columns named so; and on
// fashion-mnist, on which the hyperparameters were tuned, no eps to
// publish and no claim that anything was fixed without the votes. Under
// -short the ensemble has 3 teachers, not 12 (the marks hold at any K).
func TestPATEExperimentMarks(t *testing.T) {
	syntheticMNIST(t)
	cache := t.TempDir()
	teachers := "12"
	if testing.Short() {
		teachers = "3"
	}
	run := func(args ...string) string {
		t.Helper()
		out, stderr, code := darrm(t, "", append([]string{"pate", "--teachers", teachers, "--cache-dir", cache, "--seed", "2", "--answered", "5"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return out
	}
	var d struct {
		Results           []map[string]any `json:"results"`
		Publish           string           `json:"publish"`
		Analysis          []string         `json:"analysis"`
		NotForPublication []string         `json:"not_for_publication"`
		Publication       string           `json:"publication"`
	}
	js := run("--format", "json")
	decode(t, js, &d)
	if !strings.Contains(js, `"eps_released_is": "an estimate of the data-dependent cost, not a bound`) {
		t.Errorf("the JSON does not say eps_released is an estimate")
	}
	// A seeded run: its noise is the seed's, so neither eps_guarantee nor
	// eps_released may be published (report.TestPATEExperimentSeeded
	// checks a run without a seed).
	if d.Publish != "eps_guarantee" || slices.Contains(d.Analysis, "eps_released") || !slices.Contains(d.Analysis, "eps_data_independent") ||
		!slices.Contains(d.NotForPublication, "ensemble") || !slices.Contains(d.NotForPublication, "seconds") || !slices.Contains(d.NotForPublication, "eps_guarantee") ||
		!strings.Contains(d.Publication, "an estimate of the data-dependent cost, not a bound") || !strings.Contains(d.Publication, "a seeded run (--seed)") {
		t.Errorf("publish %q, analysis %v, not for publication %v, publication %q", d.Publish, d.Analysis, d.NotForPublication, d.Publication)
	}
	// eps_guarantee composes at least the asked queries' data-independent
	// Rényi DP (ρ·λ: the GNMax step on every answer, the threshold step on
	// every query) and converts it by the improved conversion: it is at
	// least that Rényi DP's ε by the same conversion (eps_data_independent
	// converts by the paper's, which can be larger).
	for _, r := range d.Results {
		g, ok := r["eps_guarantee"].(float64)
		if !ok {
			t.Errorf("%v: eps_guarantee %v", r["mechanism"], r["eps_guarantee"])
			continue
		}
		if r["eps_data_independent"] == nil {
			continue
		}
		s2 := r["sigma2"].(float64)
		rho := r["answered"].(float64) / (s2 * s2)
		if s1, ok := r["sigma1"].(float64); ok {
			rho += r["queries"].(float64) / (2 * s1 * s1)
		}
		if floor, _, err := accountant.ImprovedConversion.RhoToDP(rho, r["delta"].(float64)); err != nil || g < floor {
			t.Errorf("%v: eps_guarantee %v below %v (%v), the queries' data-independent eps by its conversion", r["mechanism"], g, floor, err)
		}
	}
	table := run()
	for _, want := range []string{"ensemble *", "time *:", "eps rel. (estimate) *", "eps guarantee *", "guarantee: each row's eps_guarantee is a bound"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "(publish)") {
		t.Errorf("a seeded run's table marks a total to publish:\n%s", table)
	}
	if table := run("--ss-parameters", "from-votes", "--ss-order", "8"); !strings.Contains(table, "order * ") || !strings.Contains(table, "beta * ") || !strings.Contains(table, "sigma_ss * ") {
		t.Errorf("from-votes: the parameters chosen from the votes are not marked:\n%s", table)
	}
	if table := run("--ss-parameters", "from-votes"); !strings.Contains(table, "none released: error *: ") {
		t.Errorf("from-votes: the error that names the order chosen from the votes is not marked:\n%s", table)
	}
	if table := run("--directions", "one-sided"); !strings.Contains(table, "eps dep. (one-sided) *") || !strings.Contains(table, "eps rel. (estimate, one-sided)") {
		t.Errorf("one-sided: the columns do not say so:\n%s", table)
	}
	for _, extra := range [][]string{nil, {"--ss-parameters", "from-votes"}, {"--dataset", "fashion-mnist"}} {
		out := run(append([]string{"--format", "csv"}, extra...)...)
		if !strings.Contains(out, "an estimate of the data-dependent cost, not a bound") {
			t.Errorf("%v: the CSV does not say eps_released is an estimate", extra)
		}
		rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil || len(rows) < 2 {
			t.Fatalf("%v: CSV %v: %q", extra, err, out)
		}
		header := rows[0]
		nfp := rows[1][slices.Index(header, "not_for_publication")]
		for _, k := range strings.Fields(nfp) {
			if !slices.Contains(header, k) {
				t.Errorf("%v: the CSV lists %s as not for publication but has no such column: %v", extra, k, header)
			}
		}
	}
	decode(t, run("--format", "json", "--dataset", "fashion-mnist"), &d)
	for _, k := range []string{"eps_guarantee", "eps_data_independent", "eps_released", "ss_order", "beta", "sigma_ss"} {
		if !slices.Contains(d.NotForPublication, k) {
			t.Errorf("fashion-mnist: not_for_publication %v lacks %s", d.NotForPublication, k)
		}
	}
	if d.Publish != "" || !strings.Contains(d.Publication, "tuned on fashion-mnist") {
		t.Errorf("fashion-mnist: publish %q, publication %q", d.Publish, d.Publication)
	}
	if table := run("--dataset", "fashion-mnist"); strings.Contains(table, "fixed without the votes") || strings.Contains(table, "(publish)") {
		t.Errorf("fashion-mnist: the table claims parameters fixed without the votes or a total to publish:\n%s", table)
	}
}

// TestAccountPATEChecks: account pate runs the checks of a release. Votes
// whose header states private teachers on shared data (the
// private-teachers relation) are refused, as aggregate refuses them, with
// or without labels; a label file states how its labels were made, and
// account pate takes its mechanism and settings from it: flags may repeat
// them, and one that contradicts them exits 2 naming both values.
func TestAccountPATEChecks(t *testing.T) {
	dir := t.TempDir()
	votes := countsFile(t, dir, "votes.csv", 30, func(i int) []int { return plurality(150+3*i, i%10) })
	shared := filepath.Join(dir, "shared.csv")
	raw, _ := os.ReadFile(votes)
	os.WriteFile(shared, []byte(strings.Replace(string(raw), pateHeader(t, 250, 10, votefile.LayoutCounts, accountant.OneVote, votefile.FormatCSV),
		pateHeader(t, 250, 10, votefile.LayoutCounts, accountant.PrivateTeachers, votefile.FormatCSV), 1)), 0o644)
	acct := func(args ...string) []string {
		return append([]string{"account", "pate", "--target-delta", "1e-5", "--format", "json"}, args...)
	}
	for _, args := range [][]string{acct(shared, "--sigma2", "40"), acct(append([]string{shared, "--seed", "1", "--release-estimate"}, confident...)...), acct(shared, "--laplace-scale", "20")} {
		if out, stderr, code := darrm(t, "", args...); code != exitUsage || !strings.Contains(stderr, "relation") || !strings.Contains(stderr, "private-teachers") || out != "" {
			t.Errorf("%v: exit %d: %s%s", args, code, out, stderr)
		}
	}

	labels := filepath.Join(dir, "labels.csv")
	if _, stderr, code := darrm(t, "", "aggregate", votes, "--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-5", "--out", labels); code != 0 {
		t.Fatalf("aggregate: exit %d: %s", code, stderr)
	}
	head := readLinesAll(t, labels)[0]
	if !strings.HasPrefix(head, `# {"darrm-labels":1,"mechanism":"gnmax","K":250,"classes":10,"relation":"one-vote","partition":"keyed-hash","sigma2":40,"noise":"discrete","eps":`) ||
		!strings.Contains(head, `"ensemble":"pate-k250"`) {
		t.Errorf("label file header %s", head)
	}
	want, stderr, code := darrm(t, "", acct(votes, "--labels", labels, "--ss-order", "20", "--beta", "0.02", "--sigma-ss", "10", "--seed", "1", "--release-estimate")...)
	if code != 0 {
		t.Fatalf("settings from the header: exit %d: %s", code, stderr)
	}
	var d map[string]any
	decode(t, want, &d)
	if d["mechanism"] != "gnmax" || d["sigma2"] != 40.0 || d["noise"] != "discrete" {
		t.Errorf("settings from the header: %v %v %v", d["mechanism"], d["sigma2"], d["noise"])
	}
	if got, _, code := darrm(t, "", acct(votes, "--labels", labels, "--sigma2", "40", "--noise", "discrete", "--ss-order", "20", "--beta", "0.02", "--sigma-ss", "10", "--seed", "1", "--release-estimate")...); code != 0 || got != want {
		t.Errorf("settings repeated: exit %d, a different account", code)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--sigma2", "80"}, []string{"--sigma2 = 80 given", "sigma2 = 40"}},
		{[]string{"--noise", "continuous"}, []string{"--noise = continuous given", "noise = discrete"}},
		{[]string{"--threshold", "200", "--sigma1", "150"}, []string{"--threshold = 200 given", "made by gnmax, which has no threshold"}},
		{[]string{"--laplace-scale", "20"}, []string{"--laplace-scale = 20 given", "made by gnmax"}},
	} {
		if out, stderr, code := darrm(t, "", acct(append([]string{votes, "--labels", labels}, tc.args...)...)...); code != exitUsage || out != "" {
			t.Errorf("%v: exit %d: %s", tc.args, code, stderr)
		} else {
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("%v: %q lacks %q", tc.args, stderr, w)
				}
			}
		}
	}
}

// TestAccountPATEAnyThreshold: account pate --labels accounts the labels
// of every threshold aggregate accepts, from 0 (the threshold plan may
// choose) to K + 10·sigma1, by the header's settings alone or with the
// threshold repeated, and reports the threshold the labels were made with.
func TestAccountPATEAnyThreshold(t *testing.T) {
	dir := t.TempDir()
	votes := countsFile(t, dir, "votes.csv", 20, func(i int) []int { return plurality(150+3*i, i%10) })
	for _, threshold := range []string{"0", "0.5", "200", "1750"} {
		labels := filepath.Join(dir, "labels-"+threshold+".csv")
		if _, stderr, code := darrm(t, "", "aggregate", votes, "--mechanism", "confident-gnmax", "--threshold", threshold, "--sigma1", "150", "--sigma2", "40", "--delta", "1e-5", "--out", labels); code != 0 {
			t.Fatalf("threshold %s: aggregate: exit %d: %s", threshold, code, stderr)
		}
		for _, extra := range [][]string{nil, {"--threshold", threshold}} {
			args := append([]string{"account", "pate", votes, "--labels", labels, "--target-delta", "1e-5", "--format", "json"}, extra...)
			out, stderr, code := darrm(t, "", args...)
			if code != 0 {
				t.Errorf("threshold %s %v: exit %d: %s", threshold, extra, code, stderr)
				continue
			}
			var d map[string]any
			decode(t, out, &d)
			if want, _ := strconv.ParseFloat(threshold, 64); d["mechanism"] != "confident-gnmax" || d["threshold"] != want {
				t.Errorf("threshold %s %v: accounted %v with threshold %v", threshold, extra, d["mechanism"], d["threshold"])
			}
		}
		if _, stderr, code := darrm(t, "", "account", "pate", votes, "--labels", labels, "--target-delta", "1e-5", "--threshold", "1"); code != exitUsage || !strings.Contains(stderr, "header states threshold = "+threshold) {
			t.Errorf("threshold %s, --threshold 1: exit %d: %s", threshold, code, stderr)
		}
	}
}

// readLinesAll returns every line of a file, comment lines included.
func readLinesAll(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// TestAccountPATEReference: with --noise continuous and --directions
// one-sided, account pate's data-dependent ε is the PATE authors':
// the reference values were computed by research/pate_2018/core.py of
// tensorflow/privacy (compute_logq_gaussian, rdp_gaussian,
// compute_logpr_answered, compute_rdp_threshold and
// compute_eps_from_delta; the threshold step in full, the GNMax step times
// its probability of answering) on these ten queries at the orders 2, 5,
// 10, 20, 40 and 60. Bounding both directions, darrm's default, costs more,
// and says so.
func TestAccountPATEReference(t *testing.T) {
	rows := [][]int{
		{250, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {240, 10, 0, 0, 0, 0, 0, 0, 0, 0}, {230, 5, 5, 5, 5, 0, 0, 0, 0, 0},
		{200, 30, 10, 10, 0, 0, 0, 0, 0, 0}, {180, 40, 10, 10, 10, 0, 0, 0, 0, 0}, {150, 100, 0, 0, 0, 0, 0, 0, 0, 0},
		{120, 60, 30, 20, 10, 10, 0, 0, 0, 0}, {90, 80, 50, 30, 0, 0, 0, 0, 0, 0}, {60, 50, 40, 30, 20, 20, 10, 10, 5, 5},
		{245, 1, 1, 1, 1, 1, 0, 0, 0, 0},
	}
	votes := countsFile(t, t.TempDir(), "votes.csv", len(rows), func(i int) []int { return rows[i-1] })
	for _, tc := range []struct {
		name                       string
		args                       []string
		dependent, order           float64
		independent, independentAt float64
	}{
		{"confident-gnmax", confident, 0.30200035756817223, 60, 0.5540921059394077, 40},
		{"gnmax", []string{"--sigma2", "40"}, 0.4234708781180516, 40, 0.5452032170505199, 40},
	} {
		args := append([]string{"account", "pate", votes, "--noise", "continuous", "--orders", "2,5,10,20,40,60", "--target-delta", "1e-5", "--format", "json"}, tc.args...)
		var one, both map[string]any
		for _, c := range []struct {
			extra []string
			into  *map[string]any
		}{{[]string{"--directions", "one-sided"}, &one}, {nil, &both}} {
			out, stderr, code := darrm(t, "", append(args, c.extra...)...)
			if code != 0 {
				t.Fatalf("%s %v: exit %d: %s", tc.name, c.extra, code, stderr)
			}
			decode(t, out, c.into)
		}
		if got := one["eps_data_dependent"].(float64); math.Abs(got-tc.dependent) > 1e-12*tc.dependent || one["order"] != tc.order {
			t.Errorf("%s one-sided: eps_data_dependent %.17g at %v, the authors' %.17g at %v", tc.name, got, one["order"], tc.dependent, tc.order)
		}
		if got := one["eps_data_independent"].(float64); math.Abs(got-tc.independent) > 1e-12*tc.independent || one["order_data_independent"] != tc.independentAt {
			t.Errorf("%s: eps_data_independent %.17g at %v, the authors' %.17g at %v", tc.name, got, one["order_data_independent"], tc.independent, tc.independentAt)
		}
		if one["directions"] != "one-sided" || !strings.Contains(one["publication"].(string), "no differential-privacy guarantee") {
			t.Errorf("%s one-sided: directions %v, publication %q", tc.name, one["directions"], one["publication"])
		}
		if both["directions"] != "both" || !(both["eps_data_dependent"].(float64) > one["eps_data_dependent"].(float64)) {
			t.Errorf("%s: both directions %v (%v), one-sided %v", tc.name, both["eps_data_dependent"], both["directions"], one["eps_data_dependent"])
		}
	}
}

// A smooth-sensitivity draw is a release of the votes (issue 45): account
// pate draws nothing unasked; --release-estimate draws, records and
// counts one; the same votes reordered, as JSON lines without a header or
// as a NumPy array, with other settings, get no free draw (exit 2, nothing
// recorded) but count the recorded one; a later draw needs a ledger, which
// is charged its GNSS cost first (exit 4 when the budget cannot take it,
// nothing drawn); the total covers every draw; a seeded draw is an
// experiment, neither recorded nor charged.
func TestAccountPATEDraws(t *testing.T) {
	state := t.TempDir()
	t.Setenv(statedir.Env, state)
	dir := t.TempDir()
	// Under -short fewer queries: each of the 25 accounts charges every
	// query at every order, and what is checked is the draws' records.
	rows := make([][]int, 40)
	if testing.Short() {
		rows = rows[:10]
	}
	for i := range rows {
		rows[i] = plurality(150+(i+1)*2, (i+1)%10)
	}
	votes := countsFile(t, dir, "votes.csv", len(rows), func(i int) []int { return rows[i-1] })
	var jl strings.Builder
	for i := len(rows) - 1; i >= 0; i-- {
		b, _ := json.Marshal(rows[i])
		fmt.Fprintf(&jl, "%s\n", b)
	}
	bare := filepath.Join(dir, "reversed.jsonl")
	os.WriteFile(bare, []byte(jl.String()), 0o644)
	var npy bytes.Buffer
	if err := votefile.WriteCountsNPY(&npy, append(slices.Clone(rows[len(rows)/2:]), rows[:len(rows)/2]...)); err != nil {
		t.Fatal(err)
	}
	asNPY := filepath.Join(dir, "rotated.npy")
	os.WriteFile(asNPY, npy.Bytes(), 0o644)
	led := filepath.Join(dir, "pate.ledger")
	if _, stderr, code := darrm(t, "", "ledger", "init", led, "--votes", votes, "--budget-eps", "5", "--budget-delta", "1e-3", "--filter", "simple"); code != 0 {
		t.Fatalf("ledger init: exit %d: %s", code, stderr)
	}
	account := func(file string, extra ...string) (map[string]any, string, int) {
		t.Helper()
		args := append([]string{"account", "pate", file, "--target-delta", "1e-5", "--format", "json"}, confident...)
		if !strings.HasSuffix(file, ".npy") {
			args = append(args, "--input-format", "counts")
		}
		out, stderr, code := darrm(t, "", append(args, extra...)...)
		var d map[string]any
		if code == 0 {
			decode(t, out, &d)
		}
		return d, stderr, code
	}
	recorded := func() int {
		t.Helper()
		n := 0
		filepath.WalkDir(filepath.Join(state, "pate-draws"), func(path string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(path, ".json") {
				n++
			}
			return nil
		})
		return n
	}

	undrawn, stderr, code := account(votes)
	if code != 0 || undrawn["draw"] != "none" || undrawn["eps_released"] != nil || recorded() != 0 {
		t.Fatalf("no flag: exit %d, draw %v, eps_released %v, %d recorded: %s", code, undrawn["draw"], undrawn["eps_released"], recorded(), stderr)
	}
	first, stderr, code := account(votes, "--release-estimate")
	if code != 0 {
		t.Fatalf("--release-estimate: exit %d: %s", code, stderr)
	}
	if first["draw"] != "new" || first["eps_released"] == nil || first["draws_recorded"] != 1.0 || recorded() != 1 ||
		!(first["eps_guarantee"].(float64) > undrawn["eps_guarantee"].(float64)) || !strings.Contains(first["guarantee"].(string), "1 smooth-sensitivity draw on these votes") {
		t.Fatalf("first draw: draw %v, eps_released %v, draws_recorded %v (%d files), eps_guarantee %v (no draw: %v), guarantee %q",
			first["draw"], first["eps_released"], first["draws_recorded"], recorded(), first["eps_guarantee"], undrawn["eps_guarantee"], first["guarantee"])
	}
	// No free draw on the same votes, whatever their file and the settings;
	// each counts the draw recorded.
	for _, run := range []struct {
		file  string
		extra []string
	}{
		{votes, nil}, {bare, nil}, {asNPY, nil}, {votes, []string{"--target-delta", "1.0000001e-6"}}, {bare, []string{"--conversion", "improved"}},
		{asNPY, []string{"--ss-order", "20", "--beta", "0.02", "--sigma-ss", "10"}}, {votes, []string{"--directions", "one-sided"}},
	} {
		if _, stderr, code := account(run.file, append(run.extra, "--release-estimate")...); code != exitUsage || !strings.Contains(stderr, "give --ledger") {
			t.Errorf("%s %v: a second draw without a ledger: exit %d: %s", run.file, run.extra, code, stderr)
		}
		d, stderr, code := account(run.file, run.extra...)
		if code != 0 || d["draws_recorded"] != 1.0 || !strings.Contains(d["guarantee"].(string), "1 smooth-sensitivity draw") {
			t.Errorf("%s %v: exit %d, draws_recorded %v, guarantee %v: %s", run.file, run.extra, code, d["draws_recorded"], d["guarantee"], stderr)
		}
		if run.extra == nil && (d["draw"] != "recorded" || d["eps_released"] != first["eps_released"] || d["eps_guarantee"] != first["eps_guarantee"]) {
			t.Errorf("%s: draw %v, eps_released %v (first %v), eps_guarantee %v (first %v)", run.file, d["draw"], d["eps_released"], first["eps_released"], d["eps_guarantee"], first["eps_guarantee"])
		}
	}
	if n := recorded(); n != 1 {
		t.Errorf("%d draws recorded after the refused ones", n)
	}
	if n := len(readLinesAll(t, led)); n != 1 {
		t.Errorf("no draw charged, yet %d ledger lines", n)
	}
	// A later draw with a ledger: charged its GNSS cost first, and counted.
	redrawn, stderr, code := account(votes, "--release-estimate", "--ledger", led)
	if code != 0 {
		t.Fatalf("--release-estimate --ledger: exit %d: %s", code, stderr)
	}
	cost, _ := accountant.PaperConversion.ConvertRDP(first["gnss_rdp"].(float64), first["ss_order"].(float64), 1e-5)
	if redrawn["draw"] != "new" || redrawn["draw_charged_eps"] != cost || redrawn["draw_charged_delta"] != 1e-5 || redrawn["draws_recorded"] != 2.0 ||
		redrawn["ledger_spent_eps"] == nil || !(redrawn["eps_guarantee"].(float64) > first["eps_guarantee"].(float64)) ||
		!strings.Contains(redrawn["guarantee"].(string), "2 smooth-sensitivity draws") {
		t.Errorf("charged draw: draw %v, charged %v (GNSS cost %v) %v, draws %v, ledger total %v, eps_guarantee %v (one draw: %v), guarantee %q", redrawn["draw"],
			redrawn["draw_charged_eps"], cost, redrawn["draw_charged_delta"], redrawn["draws_recorded"], redrawn["ledger_spent_eps"], redrawn["eps_guarantee"], first["eps_guarantee"], redrawn["guarantee"])
	}
	if n := len(readLinesAll(t, led)); n != 3 {
		t.Errorf("a charged draw: %d ledger lines, want the header, a reservation and its settlement", n)
	}
	if latest, _, _ := account(votes); latest["eps_guarantee"] != redrawn["eps_guarantee"] || latest["draws_recorded"] != 2.0 {
		t.Errorf("after the charged draw: eps_guarantee %v (want %v), draws_recorded %v", latest["eps_guarantee"], redrawn["eps_guarantee"], latest["draws_recorded"])
	}
	// A budget that cannot take another draw: exit 4, nothing drawn or
	// recorded (the same counts under another ensemble's header, whose
	// ledger is small).
	raw, _ := os.ReadFile(votes)
	renamed := filepath.Join(dir, "renamed.csv")
	os.WriteFile(renamed, []byte(strings.Replace(string(raw), `"ensemble":"pate-k250"`, `"ensemble":"another"`, 1)), 0o644)
	small := filepath.Join(dir, "small.ledger")
	if _, stderr, code := darrm(t, "", "ledger", "init", small, "--votes", renamed, "--budget-eps", "0.1", "--budget-delta", "1e-3", "--filter", "simple"); code != 0 {
		t.Fatalf("ledger init: exit %d: %s", code, stderr)
	}
	if _, stderr, code := account(renamed, "--release-estimate", "--ledger", small); code != exitBudget || !strings.Contains(stderr, "nothing drawn") || recorded() != 2 {
		t.Errorf("over budget: exit %d, %d recorded: %s", code, recorded(), stderr)
	}
	// A seeded draw is an experiment: counted, neither recorded nor
	// charged; --seed draws nothing without --release-estimate.
	seeded, _, _ := account(votes, "--seed", "5", "--release-estimate")
	if seeded["draw"] != "seeded" || seeded["draw_record"] != nil || recorded() != 2 || !strings.Contains(seeded["guarantee"].(string), "3 smooth-sensitivity draws") {
		t.Errorf("seeded: draw %v, record %v, %d recorded, guarantee %v", seeded["draw"], seeded["draw_record"], recorded(), seeded["guarantee"])
	}
	// A witness of another ensemble's ledger: refused before the draw,
	// naming it; nothing drawn, recorded or charged.
	cp := filepath.Join(dir, "small.checkpoint")
	if _, stderr, code := darrm(t, "", "ledger", "checkpoint", small, "--out", cp); code != 0 {
		t.Fatalf("ledger checkpoint: exit %d: %s", code, stderr)
	}
	if _, stderr, code := account(votes, "--release-estimate", "--ledger", led, "--witness", cp); code != exitUsage || !strings.Contains(stderr, "witness "+cp) ||
		recorded() != 2 || len(readLinesAll(t, led)) != 3 {
		t.Errorf("--witness of another ensemble: exit %d, %d recorded, %d ledger lines: %s", code, recorded(), len(readLinesAll(t, led)), stderr)
	}
	for _, bad := range [][]string{{"--seed", "1"}, {"--seed", "1", "--release-estimate", "--ledger", led}, {"--ledger", led}, {"--witness", cp}} {
		if _, stderr, code := account(votes, bad...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d: %s", bad, code, exitUsage, stderr)
		}
	}
}

// account pate prints the total to publish that aggregate prints for the
// same labels, by the same theorem (issue 45): a release its budget
// stopped, accounted from its labels, with and without the ledger it was
// charged to (whose total, as ledger show prints it, is then the one);
// the realised cost is analysis, and nothing is drawn.
func TestAccountPATEPublishesTheRelease(t *testing.T) {
	state := t.TempDir()
	t.Setenv(statedir.Env, state)
	dir := t.TempDir()
	// Under -short a third of the queries and half the budget, which
	// stops the release at 55 of them (194 of 300 at (2, 1e-5)): each
	// account charges every query at every order.
	n, budget := 300, "2"
	if testing.Short() {
		n, budget = 100, "1"
	}
	votes := countsFile(t, dir, "votes.csv", n, func(i int) []int { return plurality(100+(i*37)%150, i%10) })
	aggregate := func(extra ...string) (map[string]any, string, int) {
		t.Helper()
		labels := filepath.Join(t.TempDir(), "labels.csv")
		out, stderr, code := darrm(t, "", append(append([]string{"aggregate", votes, "--mechanism", "confident-gnmax", "--delta", "1e-5", "--out", labels, "--format", "json"}, confident...), extra...)...)
		if code != 0 && code != exitBudget {
			t.Fatalf("aggregate %v: exit %d: %s", extra, code, stderr)
		}
		var d map[string]any
		decode(t, out, &d)
		return d["publish"].(map[string]any), labels, code
	}
	account := func(labels string, extra ...string) map[string]any {
		t.Helper()
		out, stderr, code := darrm(t, "", append([]string{"account", "pate", votes, "--labels", labels, "--target-delta", "1e-5", "--format", "json"}, extra...)...)
		if code != 0 {
			t.Fatalf("account pate %v: exit %d: %s", extra, code, stderr)
		}
		var d map[string]any
		decode(t, out, &d)
		return d
	}
	same := func(what string, pub, d map[string]any) {
		t.Helper()
		if pub["eps"] == nil || d["eps_guarantee"] != pub["eps"] || d["delta_guarantee"] != pub["delta"] || d["guarantee_method"] != pub["method"] ||
			!strings.Contains(d["guarantee"].(string), pub["reference"].(string)) || d["publish"] != "eps_guarantee" {
			t.Errorf("%s: account pate publishes %v at %v by %v (%q), aggregate %v at %v by %v", what, d["eps_guarantee"], d["delta_guarantee"], d["guarantee_method"], d["guarantee"], pub["eps"], pub["delta"], pub["method"])
		}
	}
	pub, labels, code := aggregate("--budget-eps", budget, "--budget-delta", "1e-5")
	if code != exitBudget {
		t.Errorf("budget (%s, 1e-5): exit %d: the budget should stop the release", budget, code)
	}
	d := account(labels)
	same("budget ("+budget+", 1e-5)", pub, d)
	if b, _ := strconv.ParseFloat(budget, 64); pub["method"] != "exact" || pub["eps"].(float64) > b {
		t.Errorf("aggregate publishes %v by %v", pub["eps"], pub["method"])
	}
	// The realised cost is analysis. It is not always below the total:
	// it is PATE's Rényi sum over the queries answered, which the draws
	// decide, and the total the exact composition of every query.
	if _, ok := d["eps_data_independent"].(float64); !ok || !slices.Contains(d["analysis"].([]any), any("eps_data_independent")) ||
		d["cost"] != "realised" || !strings.Contains(d["publication"].(string), "odometer") || d["unlabelled"] == nil {
		t.Errorf("realised %v (total %v), analysis %v, cost %v, unlabelled %v, publication %q", d["eps_data_independent"], d["eps_guarantee"], d["analysis"], d["cost"], d["unlabelled"], d["publication"])
	}
	if d["draw"] != "none" || d["eps_released"] != nil {
		t.Errorf("drawn unasked: draw %v, eps_released %v", d["draw"], d["eps_released"])
	}
	if _, err := os.Stat(filepath.Join(state, "pate-draws")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("account pate wrote a record of draws without a draw: %v", err)
	}

	// Charged to a ledger: its total, the one ledger show prints.
	led := filepath.Join(dir, "pate.ledger")
	if _, stderr, code := darrm(t, "", "ledger", "init", led, "--votes", votes, "--budget-eps", "4", "--budget-delta", "1e-4"); code != 0 {
		t.Fatalf("ledger init: exit %d: %s", code, stderr)
	}
	pub, labels, _ = aggregate("--ledger", led)
	show, stderr, code := darrm(t, "", "ledger", "show", led, "--format", "json")
	if code != 0 {
		t.Fatalf("ledger show: exit %d: %s", code, stderr)
	}
	var l map[string]any
	decode(t, show, &l)
	d = account(labels, "--ledger", led)
	same("ledger", pub, d)
	if pub["source"] != "ledger" || d["eps_guarantee"] != l["publish_eps"] || d["delta_guarantee"] != l["publish_delta"] {
		t.Errorf("ledger: account pate %v at %v, ledger show %v at %v, aggregate's from %v", d["eps_guarantee"], d["delta_guarantee"], l["publish_eps"], l["publish_delta"], pub["source"])
	}
}

// account pate marks one total to publish, a bound with its theorem, and
// every other total as analysis or not for publication; eps_released says
// it is an estimate, not a bound, in every format (issue 35; issue 40
// item 7).
func TestAccountPATEOnePublished(t *testing.T) {
	t.Setenv(statedir.Env, t.TempDir())
	votes := countsFile(t, t.TempDir(), "votes.csv", 40, func(i int) []int { return plurality(150+i*2, i%10) })
	for _, mech := range [][]string{confident, {"--sigma2", "40"}, {"--laplace-scale", "20"}} {
		lnmax := mech[0] == "--laplace-scale"
		for _, format := range []string{"json", "csv", "table"} {
			args := append([]string{"account", "pate", votes, "--target-delta", "1e-5", "--format", format}, mech...)
			if !lnmax {
				args = append(args, "--release-estimate", "--seed", "1")
			}
			out, stderr, code := darrm(t, "", args...)
			if code != 0 {
				t.Fatalf("%v %s: exit %d: %s", mech, format, code, stderr)
			}
			if !lnmax && !strings.Contains(out, "an estimate of the data-dependent cost, not a bound") {
				t.Errorf("%v %s: eps_released not said to be an estimate:\n%s", mech, format, out)
			}
			switch format {
			case "table":
				if strings.Count(out, "PUBLISH") != 1 || !regexp.MustCompile(`eps_guarantee\s+│ [0-9.]+\s+│ PUBLISH: the guarantee`).MatchString(out) {
					t.Errorf("%v: the table does not mark eps_guarantee, and only it, to publish:\n%s", mech, out)
				}
				// Named an estimate; drawn from the seed, not for
				// publication (its noise is the seed's).
				if !lnmax && !regexp.MustCompile(`eps_released \(estimate[^│]*│[^│]*│ not for publication`).MatchString(out) {
					t.Errorf("%v: eps_released not marked as an estimate drawn from the seed:\n%s", mech, out)
				}
			case "json":
				var d map[string]any
				decode(t, out, &d)
				marked := map[string]bool{d["publish"].(string): true}
				for _, k := range append(d["analysis"].([]any), d["not_for_publication"].([]any)...) {
					marked[k.(string)] = true
				}
				for k, v := range d {
					if strings.HasPrefix(k, "eps_") && k != "eps_released_is" && v != nil && !marked[k] {
						t.Errorf("%v: %s is neither the one to publish, analysis nor marked not for publication", mech, k)
					}
				}
				if d["publish"] != "eps_guarantee" || d["delta_guarantee"] != 1e-5 || !strings.Contains(d["guarantee"].(string), "a bound at delta_guarantee") {
					t.Errorf("%v: publish %v at %v, guarantee %v", mech, d["publish"], d["delta_guarantee"], d["guarantee"])
				}
			}
		}
	}
}

// account pate takes votes with abstaining teachers (issue 55): a NumPy
// matrix of class labels with -1, the same matrix as CSV, and their counts
// under --K, each accounted in the relation with abstentions (abstain;
// neighbours a vote added, removed or moved), with the same account
// whatever the file. Counts that all sum to K and state no K are in the
// relation of teachers that all vote; the same counts under --K get a
// bound no smaller (over more neighbours). A release from the votes with
// abstentions says so in its label header, and its labels are accounted
// in that relation, with the total aggregate published, even from counts
// read without --K.
func TestAccountPATEAbstentions(t *testing.T) {
	t.Setenv(statedir.Env, t.TempDir())
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	k, q := 250, 40
	labels, counts := pateVotes(k, q, 10, 0.1)
	writeNPY(t, p("abstain.npy"), labels)
	writeCSV(t, p("abstain-qt.csv"), transposed(labels))
	writeCSV(t, p("abstain-counts.csv"), counts)
	_, full := pateVotes(k, q, 10, 0)
	writeCSV(t, p("full-counts.csv"), full)
	account := func(args ...string) map[string]any {
		t.Helper()
		// Flags given later win: args may set another --target-delta.
		out, stderr, code := darrm(t, "", append(append([]string{"account", "pate", "--target-delta", "1e-5", "--format", "json"}, confident...), args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var d map[string]any
		decode(t, out, &d)
		return d
	}
	keys := []string{"eps_data_independent", "eps_data_dependent", "order", "smooth_sensitivity", "eps_guarantee", "teachers", "queries"}
	base := account(p("abstain-counts.csv"), "--input-format", "counts", "--K", "250")
	if base["abstain"] != true || !strings.Contains(base["neighbours"].(string), "a vote added, removed or moved") || base["teachers"] != 250.0 || base["smooth_sensitivity_error"] != nil {
		t.Errorf("counts under --K: abstain %v, neighbours %q, teachers %v, error %v", base["abstain"], base["neighbours"], base["teachers"], base["smooth_sensitivity_error"])
	}
	for _, args := range [][]string{{p("abstain.npy"), "--teachers-in-rows", "--classes", "10"}, {p("abstain-qt.csv"), "--queries-in-rows", "--classes", "10"}} {
		d := account(args...)
		for _, key := range append(keys, "abstain", "neighbours") {
			if d[key] != base[key] {
				t.Errorf("%v: %s = %v, the counts under --K give %v", args, key, d[key], base[key])
			}
		}
	}
	all := account(p("full-counts.csv"), "--input-format", "counts")
	stated := account(p("full-counts.csv"), "--input-format", "counts", "--K", "250")
	if all["abstain"] != false || !strings.Contains(all["neighbours"].(string), "every teacher voting") || stated["abstain"] != true {
		t.Errorf("counts that sum to K: abstain %v (%q), under --K %v", all["abstain"], all["neighbours"], stated["abstain"])
	}
	for _, key := range []string{"eps_data_dependent", "smooth_sensitivity"} {
		if !(stated[key].(float64) >= all[key].(float64)) {
			t.Errorf("%s: %v with abstentions allowed, below %v without", key, stated[key], all[key])
		}
	}

	out, stderr, code := darrm(t, "", append([]string{"aggregate", p("abstain.npy"), "--teachers-in-rows", "--classes", "10", "--mechanism", "confident-gnmax", "--delta", "1e-5",
		"--partition", "keyed-hash", "--seed", "4", "--out", p("labels.csv"), "--format", "json"}, confident...)...)
	if code != 0 {
		t.Fatalf("aggregate: exit %d: %s", code, stderr)
	}
	var rel map[string]any
	decode(t, out, &rel)
	pub := rel["publish"].(map[string]any)
	if b, _ := os.ReadFile(p("labels.csv")); !strings.Contains(string(b), `"abstain":true`) {
		t.Fatalf("the label header does not say that teachers could abstain:\n%.300s", b)
	}
	for _, args := range [][]string{{p("abstain.npy"), "--teachers-in-rows", "--classes", "10"}, {p("abstain-counts.csv"), "--input-format", "counts", "--K", "250"}} {
		d := account(append(args, "--labels", p("labels.csv"), "--target-delta", fmt.Sprint(pub["delta"]))...)
		if d["abstain"] != true || d["cost"] != "realised" || d["eps_guarantee"] != pub["eps"] || d["delta_guarantee"] != pub["delta"] || d["guarantee_method"] != pub["method"] {
			t.Errorf("%v with labels: abstain %v, cost %v, eps_guarantee %v at %v by %v; aggregate published %v at %v by %v", args, d["abstain"], d["cost"],
				d["eps_guarantee"], d["delta_guarantee"], d["guarantee_method"], pub["eps"], pub["delta"], pub["method"])
		}
	}
	// Labels of a release that allowed abstentions, accounted from counts
	// read without them (every row sums to K): the release's relation.
	if _, stderr, code := darrm(t, "", append([]string{"aggregate", p("full-counts.csv"), "--input-format", "counts", "--K", "250", "--mechanism", "confident-gnmax", "--delta", "1e-5",
		"--partition", "keyed-hash", "--seed", "4", "--out", p("full-labels.csv")}, confident...)...); code != 0 {
		t.Fatalf("aggregate: exit %d: %s", code, stderr)
	}
	if d := account(p("full-counts.csv"), "--input-format", "counts", "--labels", p("full-labels.csv")); d["abstain"] != true {
		t.Errorf("labels whose header says abstain, votes read without K: abstain %v", d["abstain"])
	}
}

// On a ledger every smooth-sensitivity draw is charged (issue 55): the
// record of draws knows the votes' exact rows, so the votes with a row
// dropped, or repeated, are other votes to it, and a first draw on each
// needs no ledger; with --ledger each draw, the first on its rows too, is
// charged, and the ledger's spend grows by every draw's cost.
func TestAccountPATEDrawsOnALedger(t *testing.T) {
	state := t.TempDir()
	t.Setenv(statedir.Env, state)
	dir := t.TempDir()
	rows := make([][]int, 10)
	for i := range rows {
		rows[i] = plurality(150+(i+1)*2, (i+1)%10)
	}
	votes := countsFile(t, dir, "votes.csv", len(rows), func(i int) []int { return rows[i-1] })
	dropped := countsFile(t, dir, "dropped.csv", len(rows)-1, func(i int) []int { return rows[i-1] })
	repeated := countsFile(t, dir, "repeated.csv", len(rows)+1, func(i int) []int { return rows[min(i, len(rows))-1] })
	led := filepath.Join(dir, "pate.ledger")
	if _, stderr, code := darrm(t, "", "ledger", "init", led, "--votes", votes, "--budget-eps", "50", "--budget-delta", "1e-3", "--filter", "simple"); code != 0 {
		t.Fatalf("ledger init: exit %d: %s", code, stderr)
	}
	draw := func(file string, extra ...string) map[string]any {
		t.Helper()
		out, stderr, code := darrm(t, "", append(append([]string{"account", "pate", file, "--target-delta", "1e-5", "--format", "json", "--release-estimate"}, confident...), extra...)...)
		if code != 0 {
			t.Fatalf("%s %v: exit %d: %s", file, extra, code, stderr)
		}
		var d map[string]any
		decode(t, out, &d)
		return d
	}
	spent := func() float64 {
		t.Helper()
		out, stderr, code := darrm(t, "", "ledger", "show", led, "--format", "json")
		if code != 0 {
			t.Fatalf("ledger show: exit %d: %s", code, stderr)
		}
		var l map[string]any
		decode(t, out, &l)
		return l["spent_eps"].(float64)
	}
	lines := len(readLinesAll(t, led))
	before := spent()
	var charged float64
	for i, file := range []string{votes, dropped, repeated, votes} {
		d := draw(file, "--ledger", led)
		first := i < 3
		if d["draw"] != "new" || d["draw_charged_eps"] == nil || d["draw_ledger"] == nil || (first && d["draws_recorded"] != 1.0) ||
			!strings.Contains(d["draw_note"].(string), "only a ledger (--ledger, charged for each draw) counts every draw") {
			t.Errorf("%s, draw %d: draw %v, charged %v to %v, draws_recorded %v, note %q", file, i+1, d["draw"], d["draw_charged_eps"], d["draw_ledger"], d["draws_recorded"], d["draw_note"])
		}
		charged += d["draw_charged_eps"].(float64)
		lines += 2 // a reservation and its settlement
		if n := len(readLinesAll(t, led)); n != lines {
			t.Errorf("%s, draw %d: %d ledger lines, want %d: the draw was not charged", file, i+1, n, lines)
		}
	}
	if got := spent() - before; !(got >= charged*(1-1e-9)) {
		t.Errorf("the ledger's spend grew by %v over four draws that cost %v", got, charged)
	}
	// Without a ledger the record stops a second draw on the same rows,
	// not a first one on rows it has not seen: the limit the draw's note
	// and docs/pate.md state.
	if _, stderr, code := darrm(t, "", append([]string{"account", "pate", votes, "--target-delta", "1e-5", "--release-estimate"}, confident...)...); code != exitUsage || !strings.Contains(stderr, "give --ledger") {
		t.Errorf("a third draw on the votes without a ledger: exit %d: %s", code, stderr)
	}
	other := countsFile(t, dir, "other.csv", len(rows)-2, func(i int) []int { return rows[i-1] })
	if d := draw(other); d["draw"] != "new" || d["draw_charged_eps"] != nil {
		t.Errorf("a first draw on two rows fewer without a ledger: draw %v, charged %v", d["draw"], d["draw_charged_eps"])
	}
}

// TestAccountPATEGuaranteeNote: where the exact composition of the
// queries is out of reach for the total to publish (here the bound of its
// evaluation's error is above delta = 1e-100), account pate says so in
// guarantee_note, as aggregate's publish.note does; an exact total has none
// (issue 55).
func TestAccountPATEGuaranteeNote(t *testing.T) {
	votes := countsFile(t, t.TempDir(), "votes.csv", 10, func(i int) []int { return plurality(200, i%10) })
	for _, c := range []struct{ delta, note string }{{"1e-5", ""}, {"1e-100", "exact composition out of reach: the bound of its evaluation's error"}} {
		out, stderr, code := darrm(t, "", "account", "pate", votes, "--sigma2", "40", "--target-delta", c.delta, "--format", "json")
		if code != 0 {
			t.Fatalf("delta %s: exit %d: %s", c.delta, code, stderr)
		}
		var d map[string]any
		decode(t, out, &d)
		note, _ := d["guarantee_note"].(string)
		if c.note == "" && (d["guarantee_method"] != "exact" || d["guarantee_note"] != nil) || c.note != "" && !strings.HasPrefix(note, c.note) {
			t.Errorf("delta %s: %v by %v, guarantee_note %q, want %q", c.delta, d["eps_guarantee"], d["guarantee_method"], note, c.note)
		}
	}
}
