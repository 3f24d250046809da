package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"codeberg.org/sbinet/npyio/npy"
)

// pateVotes returns the class labels of k teachers on q queries over c
// classes (teachers x queries, PATE's published layout), most teachers
// agreeing on each query, with a share abstain of them -1, and the
// queries' vote counts.
func pateVotes(k, q, c int, abstain float64) (labels [][]int64, counts [][]int64) {
	rng := rand.New(rand.NewPCG(1, 2))
	labels = make([][]int64, k)
	counts = make([][]int64, q)
	truth := make([]int64, q)
	for j := range q {
		truth[j] = int64(rng.IntN(c))
		counts[j] = make([]int64, c)
	}
	for i := range k {
		labels[i] = make([]int64, q)
		for j := range q {
			l := truth[j]
			if rng.Float64() < 0.4 {
				l = int64(rng.IntN(c))
			}
			if rng.Float64() < abstain {
				labels[i][j] = -1
				continue
			}
			labels[i][j] = l
			counts[j][l]++
		}
	}
	return labels, counts
}

func writeNPY(t *testing.T, path string, v any) {
	t.Helper()
	var b bytes.Buffer
	if err := npy.Write(&b, v); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeCSV[T any](t *testing.T, path string, rows [][]T) {
	t.Helper()
	var b strings.Builder
	for _, r := range rows {
		for j, v := range r {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprint(&b, v)
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func transposed(rows [][]int64) [][]int64 {
	out := make([][]int64, len(rows[0]))
	for j := range out {
		for _, r := range rows {
			out[j] = append(out[j], r[j])
		}
	}
	return out
}

// TestNPYSameLabels: with one seed, the labels are the same whether the
// votes come as CSV counts, NumPy int64 or float64 counts, or a NumPy
// (teachers, queries) label matrix; and with 10% of the votes -1, the
// same as those of the counts without them, as CSV with --K 250.
func TestNPYSameLabels(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	// Under -short fewer queries: the files are written by reflection,
	// value by value, and read nine times.
	k, q, c := 250, 400, 10
	if testing.Short() {
		q = 100
	}
	labels, counts := pateVotes(k, q, c, 0)
	floats := make([][]float64, q)
	for j, r := range counts {
		for _, n := range r {
			floats[j] = append(floats[j], float64(n))
		}
	}
	writeCSV(t, p("counts.csv"), counts)
	writeNPY(t, p("counts-i8.npy"), counts)
	writeNPY(t, p("counts-f8.npy"), floats)
	writeNPY(t, p("labels.npy"), labels)
	writeCSV(t, p("labels-qt.csv"), transposed(labels))
	writeCSV(t, p("labels-tq.csv"), labels)
	abstain, abstainCounts := pateVotes(k, q, c, 0.1)
	writeNPY(t, p("abstain.npy"), abstain)
	writeCSV(t, p("abstain-qt.csv"), transposed(abstain))
	writeCSV(t, p("abstain-tq.csv"), abstain)
	writeCSV(t, p("abstain-counts.csv"), abstainCounts)

	release := []string{"--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-5", "--seed", "7", "--partition", "keyed-hash"}
	aggregate := func(out string, args ...string) []string {
		t.Helper()
		out = p("out-" + out)
		_, stderr, code := darrm(t, "", append(append([]string{"aggregate"}, args...), append(release, "--out", out)...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return readLines(t, out)
	}
	want := aggregate("csv.csv", p("counts.csv"))
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"npy int64 counts", []string{p("counts-i8.npy")}},
		{"npy float64 counts", []string{p("counts-f8.npy")}},
		{"npy teachers x queries labels", []string{p("labels.npy"), "--teachers-in-rows", "--classes", "10"}},
		{"csv queries x teachers labels", []string{p("labels-qt.csv"), "--queries-in-rows", "--classes", "10"}},
		{"csv teachers x queries labels", []string{p("labels-tq.csv"), "--teachers-in-rows", "--classes", "10"}},
	} {
		if got := aggregate(tc.name+".csv", tc.args...); !slices.Equal(got, want) {
			t.Errorf("%s: labels differ from those of the CSV counts", tc.name)
		}
	}
	want = aggregate("abstain-counts.csv", p("abstain-counts.csv"), "--K", "250")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"npy labels with -1", []string{p("abstain.npy"), "--teachers-in-rows", "--classes", "10"}},
		{"csv labels with -1", []string{p("abstain-qt.csv"), "--queries-in-rows", "--classes", "10"}},
		{"csv teachers x queries labels with -1", []string{p("abstain-tq.csv"), "--teachers-in-rows", "--classes", "10"}},
	} {
		if got := aggregate(tc.name+".csv", tc.args...); !slices.Equal(got, want) {
			t.Errorf("%s: labels differ from those of the counts without the abstentions", tc.name)
		}
	}
	b, _ := os.ReadFile(p("out-npy labels with -1.csv"))
	if !strings.Contains(string(b), `"abstain":true`) {
		t.Errorf("the label header does not say that teachers could abstain:\n%.300s", b)
	}

	// The labels as NumPy: the same classes, in the queries' order.
	aggregate("labels-out.npy", p("counts-i8.npy"))
	raw, err := os.ReadFile(p("out-labels-out.npy"))
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	if err := npy.Read(bytes.NewReader(raw), &got); err != nil {
		t.Fatal(err)
	}
	var fromCSV []int64
	for _, r := range readLines(t, p("out-csv.csv"))[1:] {
		if f := strings.Split(r, ","); len(f) == 3 {
			var l int64
			fmt.Sscan(f[1], &l)
			fromCSV = append(fromCSV, l)
		}
	}
	if len(got) != q || !slices.Equal(got, fromCSV) {
		t.Errorf("NumPy labels %v..., want %v...", got[:min(5, len(got))], fromCSV[:min(5, len(fromCSV))])
	}
}

// TestNPYBadInput: a fractional count, a truncated file, a label matrix
// without its orientation or read as counts (its -1s pointed at
// --classes) and a NumPy file read as 0/1 votes exit 2,
// with the value, position and rule, and leave no label file.
func TestNPYBadInput(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	labels, counts := pateVotes(25, 40, 10, 0)
	frac := make([][]float64, len(counts))
	for j, r := range counts {
		for _, n := range r {
			frac[j] = append(frac[j], float64(n))
		}
	}
	frac[3][2] += 0.5
	writeNPY(t, p("frac.npy"), frac)
	writeNPY(t, p("counts.npy"), counts)
	raw, _ := os.ReadFile(p("counts.npy"))
	os.WriteFile(p("trunc.npy"), raw[:len(raw)-13], 0o644)
	writeNPY(t, p("labels.npy"), labels)
	writeCSV(t, p("labels-tq.csv"), labels)
	abstaining, _ := pateVotes(25, 40, 10, 0.3)
	writeNPY(t, p("abstaining.npy"), abstaining)
	release := []string{"--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-5", "--seed", "7", "--partition", "keyed-hash"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"fractional count", []string{p("frac.npy")}, "element [3, 2] = " + fmt.Sprint(frac[3][2]) + " (query 4, count of class 2): a vote count must be a whole number"},
		{"truncated", []string{p("trunc.npy")}, "NumPy file truncated: the header states shape (40, 10) of <i8"},
		{"label matrix without an orientation", []string{p("labels.npy"), "--classes", "10"}, "a matrix of class labels, shape (25, 40), without a metadata header: state which axis holds the teachers, --teachers-in-rows (a row per teacher, the layout of PATE's published votes) or --queries-in-rows (a row per query)"},
		{"label matrix read as counts", []string{p("labels.npy")}, "if the array holds class labels, one per teacher, give --classes C with its orientation, --teachers-in-rows (the layout of PATE's published votes) or --queries-in-rows"},
		{"label matrix with -1 read as counts", []string{p("abstaining.npy")}, "-1 is no count: it is how class labels mark a teacher that did not vote; if the array holds class labels, one per teacher, give --classes C with its orientation, --teachers-in-rows"},
		{"CSV label matrix without an orientation", []string{p("labels-tq.csv"), "--classes", "10"}, "a matrix of class labels without a metadata header: state which axis holds the teachers, --teachers-in-rows"},
		{"both orientations", []string{p("labels-tq.csv"), "--classes", "10", "--teachers-in-rows", "--queries-in-rows"}, "--teachers-in-rows and --queries-in-rows: give one"},
		{"--teachers-in-rows on counts", []string{p("labels-tq.csv"), "--input-format", "counts", "--teachers-in-rows"}, "--teachers-in-rows reads class labels (--classes C)"},
		{"two-class mechanism", []string{p("counts.npy"), "--mechanism", "darrm"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := p("out-" + strings.ReplaceAll(tc.name, " ", "-") + ".csv")
			args := append([]string{"aggregate"}, tc.args...)
			if tc.want != "" {
				args = append(args, release...)
			}
			_, stderr, code := darrm(t, "", append(args, "--out", out)...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a label file was written: %v", err)
			}
		})
	}
}

// TestNPYLabelsAccounted: account pate of a release's labels as NumPy,
// with the settings as flags (a NumPy file has no header), equals that
// of the same release's CSV labels, whose header states them; but for
// what the CSV header alone can say, that the seeded release's labels are
// not for release (publish, publication, warning).
func TestNPYLabelsAccounted(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	labels, _ := pateVotes(25, 60, 10, 0)
	writeNPY(t, p("votes.npy"), labels)
	votes := []string{p("votes.npy"), "--teachers-in-rows", "--classes", "10"}
	settings := []string{"--threshold", "15", "--sigma1", "4", "--sigma2", "2"}
	for _, out := range []string{"labels.csv", "labels.npy"} {
		args := append(append(append([]string{"aggregate"}, votes...), settings...), "--mechanism", "confident-gnmax", "--delta", "1e-5", "--seed", "3", "--partition", "keyed-hash", "--out", p(out))
		if _, stderr, code := darrm(t, "", args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", out, code, stderr)
		}
	}
	account := func(args ...string) string {
		t.Helper()
		stdout, stderr, code := darrm(t, "", append(append([]string{"account", "pate"}, votes...), append(args, "--target-delta", "1e-5", "--seed", "1", "--release-estimate", "--format", "json")...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return regexp.MustCompile(`"(seconds|elapsed_seconds|publish|publication|warning)": [^\n]*\n`).ReplaceAllString(stdout, "")
	}
	fromCSV := account("--labels", p("labels.csv"))
	if fromNPY := account(append([]string{"--labels", p("labels.npy")}, settings...)...); fromNPY != fromCSV {
		t.Errorf("the account of the NumPy labels differs from that of the CSV labels:\n%s\n%s", fromNPY, fromCSV)
	}
}

// TestNPYOrientation: a matrix of class labels needs its orientation
// stated, whatever its shape, and a stated one is trusted: 250 x 100
// labels without a flag are refused naming both flags (they were read
// silently as 250 queries of 100 teachers, whatever the real layout);
// 250 x 200 with --teachers-in-rows are 200 queries of 250 teachers (they
// were refused as looking the other way round).
func TestNPYOrientation(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	wide, _ := pateVotes(250, 100, 10, 0)
	tall, _ := pateVotes(250, 200, 10, 0)
	writeNPY(t, p("250x100.npy"), wide)
	writeNPY(t, p("250x200.npy"), tall)
	release := []string{"--classes", "10", "--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-5", "--seed", "7", "--partition", "keyed-hash", "--format", "json"}
	_, stderr, code := darrm(t, "", append([]string{"aggregate", p("250x100.npy"), "--out", p("wide.csv")}, release...)...)
	if code != 2 || !strings.Contains(stderr, "--teachers-in-rows") || !strings.Contains(stderr, "--queries-in-rows") {
		t.Errorf("250 x 100 without an orientation: exit %d, %s", code, stderr)
	}
	for _, c := range []struct {
		file, flag string
		k, queries int
	}{{"250x200.npy", "--teachers-in-rows", 250, 200}, {"250x100.npy", "--queries-in-rows", 100, 250}} {
		stdout, stderr, code := darrm(t, "", append([]string{"aggregate", p(c.file), c.flag, "--out", p("labels.csv")}, release...)...)
		var doc struct{ K, Queries int }
		if code != 0 {
			t.Fatalf("%s %s: exit %d, %s", c.file, c.flag, code, stderr)
		}
		decode(t, stdout, &doc)
		if doc.K != c.k || doc.Queries != c.queries {
			t.Errorf("%s %s: K = %d, %d queries; want K = %d, %d queries", c.file, c.flag, doc.K, doc.Queries, c.k, c.queries)
		}
	}
}
