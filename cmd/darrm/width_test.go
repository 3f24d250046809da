package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
	"github.com/darrm/darrm/internal/statedir"
)

// TestTableWidths runs a representative invocation of every command
// (small K, few queries) and checks that no line of its default output,
// the table, is wider than cliout.Width columns: long references and
// explanations are notes under the table, wide tables are split. The
// commands that train teachers (transfer, teachers, pate) run without
// -short only, as does the private teachers' comparison at equal totals
// (the one-vote comparison prints the same table) and simulate's (whose
// table TestSimulateEqualTotals checks under -short); teachers tune, which
// takes minutes, is left out (its trials are a table of records, its
// choice two wrapped lines).
func TestTableWidths(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(statedir.Env, t.TempDir())
	// The one-vote comparison at equal totals is TestSolveEqualTotals'
	// under -short: its compositions may still be in the process's memory.
	cache := sharedCache
	in := func(name string) string { return filepath.Join(dir, name) }
	gamma := filepath.Join("..", "..", "testdata", "gamma-K11-m3.json")
	votes := filepath.Join("..", "..", "testdata", "votes-K11.csv")
	oneVote := filepath.Join("..", "..", "testdata", "votes-K11-one-vote.csv")
	pateLabels := filepath.Join("..", "..", "testdata", "pate-teachers-labels-K25.npy")
	counts := countsFile(t, dir, "counts.csv", 30, func(i int) []int { return plurality(150+10*(i%10), i%10) })
	// Inputs of the commands that read another's output.
	for _, prep := range [][]string{
		{"separate", gamma, "--shard", "0/2", "--out", in("part{i}.json")},
		{"separate", gamma, "--shard", "1/2", "--out", in("part{i}.json")},
		{"ledger", "init", in("k11.ledger"), "--votes", votes, "--budget-eps", "10", "--budget-delta", "1e-3"},
		{"ledger", "init", in("empty.ledger"), "--ensemble", "empty-k11", "--K", "11", "--eps", "0.1", "--Delta", "1e-5", "--kind", "fixed", "--partition", "shared", "--budget-eps", "10", "--budget-delta", "1e-3"},
		{"aggregate", counts, "--mechanism", "confident-gnmax", "--threshold", "200", "--sigma1", "150", "--sigma2", "40", "--delta", "1e-5", "--out", in("c-labels.csv")},
	} {
		if _, stderr, code := darrm(t, "", prep...); code != 0 {
			t.Fatalf("%v: exit %d: %s", prep, code, stderr)
		}
	}
	solveJSON, stderr, code := darrm(t, "", "solve", "--K", "5", "--m", "2", "--Delta", "0", "--delta", "0", "--compare", "--cache-dir", cache, "--format", "json")
	if code != 0 {
		t.Fatalf("solve: exit %d: %s", code, stderr)
	}
	shufflegJSON, stderr, code := darrm(t, "", append(small, "--target-eps", "5", "--lr", "0.1", "--algorithm", "dp-shuffleg,interleaved", "--format", "json")...)
	if code != 0 {
		t.Fatalf("shuffleg: exit %d: %s", code, stderr)
	}
	os.WriteFile(in("solve.json"), []byte(solveJSON), 0o644)
	os.WriteFile(in("shuffleg.json"), []byte(shufflegJSON), 0o644)

	c := []string{"--cache-dir", cache}
	// The plan's table has the same rows at any count; under -short its
	// search is shorter (at 5 queries it ends at the simple composition).
	planQueries := "100"
	// The one-vote comparison's table has a row per mechanism at any
	// count; under -short it plans fewer queries (at 2 its search composes
	// a fifth of what it does at 3).
	equalQueries := "10"
	// The figure's format does not change what plot prints; under -short
	// it is an SVG (writing a PNG is most of plot's CPU, and the figure
	// package's tests', TestWriteGammas and TestSavePNG).
	figure := "g.png"
	if testing.Short() {
		planQueries, equalQueries, figure = "5", "2", "g.svg"
	}
	type run struct {
		name string
		args []string
		code int
	}
	runs := []run{
		{"solve", append([]string{"solve", "--K", "11", "--m", "3"}, c...), 0},
		{"solve --compare", append([]string{"solve", "--K", "11", "--m", "3", "--compare"}, c...), 0},
		{"solve --compare, one-vote at equal totals", append([]string{"solve", "--relation", "one-vote", "--K", "11", "--target-eps", "0.4", "--compare",
			"--actual", "0.75", "--budget-eps", "4", "--budget-delta", "1e-5", "--queries", equalQueries}, c...), 0},
		{"simulate", append([]string{"simulate", "--K", "5", "--m", "2", "--queries", "2000", "--seed", "1"}, c...), 0},
		{"verify", []string{"verify", gamma}, 0},
		{"separate", []string{"separate", gamma, "--shard", "0/2", "--out", in("again{i}.json")}, 0},
		{"separate merge", []string{"separate", "merge", in("part0.json"), in("part1.json")}, 0},
		{"aggregate", append([]string{"aggregate", oneVote, "--mechanism", "darrm-one-vote", "--target-eps", "0.3", "--delta", "1e-5", "--out", in("g.csv")}, c...), 0},
		{"account compose", []string{"account", "compose", "--step-eps", "0.1", "--step-delta", "1e-5", "--steps", "10", "--delta-prime", "0.1"}, 0},
		{"account queries", []string{"account", "queries", "--step-eps", "0.2676", "--step-delta", "3e-4", "--budget-eps", "10", "--budget-delta", "0.02", "--delta-prime", "1e-4", "--composition", "optimal"}, 0},
		{"account step-eps", []string{"account", "step-eps", "--budget-eps", "1", "--step-delta", "1e-6", "--steps", "100", "--composition", "optimal"}, 0},
		{"account gaussian", []string{"account", "gaussian", "--sigma", "5", "--steps", "100", "--target-delta", "1e-5", "--conversion", "improved"}, 0},
		{"account dpsgd", []string{"account", "dpsgd", "--sigma", "12", "--n", "1024", "--batch", "30", "--epochs", "5", "--target-delta", "1e-4", "--conversion", "improved"}, 0},
		{"account gnmax", []string{"account", "gnmax", "--target-eps", "0.2676,0.2556", "--target-delta", "3e-4"}, 0},
		{"account gnmax, tight", []string{"account", "gnmax", "--target-eps", "0.2654", "--target-delta", "3e-4", "--gnmax-search", "tight", "--K", "11"}, 0},
		{"account rr", []string{"account", "rr", "--K", "35", "--m", "6.4521", "--delta", "0.1001", "--rr-composition", "general", "--rr-delta-prime", "0.1"}, 0},
		{"account shuffleg", []string{"account", "shuffleg", "--algorithm", "all", "--target-eps", "1,5", "--target-delta", "1e-6", "--G", "10", "--epochs", "50", "--S", "25", "--n", "1000", "--nd", "500"}, 0},
		{"account shuffleg, sigma", []string{"account", "shuffleg", "--algorithm", "interleaved", "--sigma", "7", "--target-delta", "1e-6", "--G", "10", "--epochs", "50", "--n", "1000", "--nd", "500"}, 0},
		{"account pate", []string{"account", "pate", pateLabels, "--teachers-in-rows", "--classes", "10", "--sigma2", "4", "--threshold", "15", "--sigma1", "3", "--target-delta", "1e-5"}, 0},
		{"account pate --labels", []string{"account", "pate", counts, "--input-format", "counts", "--target-delta", "1e-5", "--labels", in("c-labels.csv")}, 0},
		{"plan", append([]string{"plan", "--mechanism", "darrm-one-vote", "--K", "11", "--queries", planQueries, "--budget-eps", "2", "--budget-delta", "1e-5"}, c...), 0},
		{"plan, the comparison on proxy votes", []string{"plan", "--votes", counts, "--input-format", "counts", "--votes-are", "public", "--queries", "30", "--K", "250", "--classes", "10",
			"--budget-eps", "2", "--budget-delta", "1e-5"}, 0},
		{"plan confident-gnmax", []string{"plan", "--mechanism", "confident-gnmax", "--K", "250", "--classes", "10", "--threshold", "200", "--sigma1", "150", "--sigma2", "40", "--budget-eps", "2", "--budget-delta", "1e-5"}, 0},
		{"ledger init", []string{"ledger", "init", in("new.ledger"), "--ensemble", "new-k11", "--K", "11", "--eps", "0.1", "--Delta", "1e-5", "--kind", "fixed", "--partition", "shared", "--budget-eps", "10", "--budget-delta", "1e-3"}, 0},
		{"ledger init, a declared use", []string{"ledger", "init", in("use.ledger"), "--ensemble", "use-k11", "--K", "11", "--relation", "one-vote", "--kind", "fixed", "--partition", "keyed-hash",
			"--budget-eps", "10", "--budget-delta", "1e-3", "--mechanism", "darrm-one-vote", "--target-eps", "0.1", "--queries", "100"}, 0},
		{"ledger show, no run", []string{"ledger", "show", in("empty.ledger")}, 0},
		{"aggregate charged to a ledger", append([]string{"aggregate", votes, "--m", "3", "--ledger", in("k11.ledger"), "--mechanism", "subsample", "--out", in("l.csv")}, c...), 0},
		{"ledger show", []string{"ledger", "show", in("k11.ledger")}, 0},
		{"ledger verify", []string{"ledger", "verify", in("k11.ledger")}, 0},
		{"ledger adopt", []string{"ledger", "adopt", in("k11.ledger")}, 0},
		{"ledger upgrade", []string{"ledger", "upgrade", in("k11.ledger")}, 0},
		{"shuffleg", append(small, "--target-eps", "5", "--lr", "0.1", "--algorithm", "all"), 0},
		{"plot gamma", []string{"plot", "gamma", "--out", in(figure), in("solve.json")}, 0},
		{"plot shuffleg", []string{"plot", "shuffleg", "--out", in("s.svg"), in("shuffleg.json")}, 0},
	}
	if !testing.Short() {
		fakeMNIST(t, 220, 60)
		runs = append(runs,
			// Under -short TestSimulateEqualTotals checks this table.
			run{"simulate at equal totals", append([]string{"simulate", "--K", "11", "--eps", "0.03", "--Delta", "1e-8", "--teachers", "0.75", "--queries", "2000",
				"--seed", "1", "--budget-eps", "4", "--budget-delta", "1e-5", "--budget-queries", "10", "--gnmax-search", "tight"}, c...), 0},
			run{"solve --compare, private teachers at equal totals", append([]string{"solve", "--K", "5", "--m", "2", "--compare", "--actual", "0.75",
				"--budget-eps", "4", "--budget-delta", "1e-4", "--queries", "10"}, c...), 0},
			run{"transfer", append([]string{"transfer", "--dataset", "mnist58", "--seed", "3", "--queries", "10", "--redraws", "2", "--budget-eps", "4", "--budget-delta", "1e-5"}, c...), 0},
			run{"teachers train", append([]string{"teachers", "train", "--dataset", "mnist58", "--K", "3", "--epochs", "1", "--seed", "1"}, c...), 0},
			run{"teachers vote", append([]string{"teachers", "vote", "--dataset", "mnist58", "--K", "3", "--epochs", "1", "--seed", "1", "--out", in("votes.csv")}, c...), 0})
	}
	for _, r := range runs {
		out, stderr, code := darrm(t, "", r.args...)
		if code != r.code {
			t.Errorf("%s: exit %d, want %d: %s", r.name, code, r.code, stderr)
			continue
		}
		checkWidths(t, r.name, out)
	}
	if testing.Short() {
		return
	}
	// darrm pate trains its own teachers on a ten-class set.
	syntheticMNIST(t)
	out, stderr, code := darrm(t, "", "pate", "--teachers", "12", "--cache-dir", cache, "--seed", "2")
	if code != 0 {
		t.Fatalf("pate: exit %d: %s", code, stderr)
	}
	for _, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > cliout.Width {
			t.Errorf("pate: a line of %d columns: %q", n, l)
		}
	}
}

// checkWidths reports an empty output and each line of out wider than
// cliout.Width columns.
func checkWidths(t *testing.T, name, out string) {
	t.Helper()
	if strings.TrimSpace(out) == "" {
		t.Errorf("%s: no output", name)
	}
	widest := 0
	for _, l := range strings.Split(out, "\n") {
		n := utf8.RuneCountInString(l)
		widest = max(widest, n)
		if n > cliout.Width {
			t.Errorf("%s: a line of %d columns: %q", name, n, l)
		}
	}
	t.Logf("%s: widest line %d columns", name, widest)
}

// TestErrorWidths drives long errors of real commands through darrm's
// printer: a list of settings, a path longer than a line, a rule with its
// reason. Every line of stderr fits cliout.Width columns, the message
// takes more than one line, and its words are those of the error, in
// order (joinError puts them on one line again).
func TestErrorWidths(t *testing.T) {
	dir := t.TempDir()
	votes := filepath.Join("..", "..", "testdata", "votes-K11.csv")
	// A path longer than a line, broken after its slashes (a single name
	// wider than a line stays whole: cliout.Wrap).
	deep := filepath.Join(dir, "a-folder-that-does-not-exist", "and-another-below-it", "and-a-third-one", "labels-of-the-release.csv")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"aggregate", votes, "--sigma2", "4", "--out", filepath.Join(dir, "l.csv")},
			"--sigma2 is not a setting of darrm on two-class votes, which takes --m, --eps, --Delta, --delta, --prior, --gamma, --no-solve"},
		{[]string{"aggregate", votes, "--out", deep}, "folder " + filepath.Dir(deep) + " does not exist (create it first)"},
		{[]string{"plan", "--mechanism", "gnmax", "--K", "250", "--classes", "10", "--sigma2", "40", "--budget-eps", "2", "--budget-delta", "0.9"},
			"must be in [0, 0.5]: above delta = 0.5, a guarantee allows publishing a record more often than not"},
	} {
		var out, errb bytes.Buffer
		code := runWith(testMemo, context.Background(), tc.args, strings.NewReader(""), &out, &errb)
		lines := strings.Split(strings.TrimSuffix(errb.String(), "\n"), "\n")
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n > cliout.Width {
				t.Errorf("%v: a line of %d columns: %q", tc.args, n, l)
			}
		}
		if code != exitUsage || len(lines) < 2 || !strings.Contains(joinError(errb.String()), tc.want) {
			t.Errorf("%v: exit %d, want %d and %q over several lines:\n%s", tc.args, code, exitUsage, tc.want, errb.String())
		}
	}
}
