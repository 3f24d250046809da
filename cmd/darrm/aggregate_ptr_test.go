package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/pate"
	"github.com/darrm/darrm/votefile"
)

// ptrCounts writes n queries of 250 teachers' counts over 10 classes, the
// largest count top to top + 9, to a file in dir with the ensemble's
// metadata header, and returns its path.
func ptrCounts(t testing.TB, dir, name string, n, top int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`# {"darrm-votes":1,"ensemble":"ptr-k250","K":250,"classes":10,"layout":"counts","relation":"one-vote","kind":"fixed","partition":"keyed-hash","teachers":[{"count":250,"source":{"method":"none"}}]}` + "\n")
	for i := 1; i <= n; i++ {
		v := top + i*7%10
		rest := (250 - v) / 9
		for c := range 10 {
			x := rest
			switch c {
			case i % 10:
				x = v
			case (i + 1) % 10:
				x = 250 - v - 8*rest
			}
			if c > 0 {
				b.WriteByte(',')
			}
			fmt.Fprint(&b, x)
		}
		b.WriteByte('\n')
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ptrFlags are the settings of a PTR release of the tests.
var ptrFlags = []string{"--mechanism", "confident-gnmax", "--threshold", "200", "--sigma1", "150", "--sigma2", "40", "--delta", "1e-5",
	"--budget-eps", "2", "--budget-delta", "1e-5", "--accounting", "ptr"}

// TestAggregatePTR: --accounting ptr on high-consensus votes passes its
// test and labels the proposal (every query, or the first --max-queries,
// the rest stopped as by a budget, exit 4), the label file's header
// stating the accounting and the total, the summary publishing that total
// by generalized PTR within the budget; on low-consensus votes of many
// queries the test fails: exit 4, no label file, and a message that says
// what was spent. Nothing printed is the bound tested, its sensitivity or
// the draw. A seeded release is reproduced by its seed.
func TestAggregatePTR(t *testing.T) {
	dir := t.TempDir()
	high := ptrCounts(t, dir, "high.csv", 40, 238)
	// The fallback of 600 queries at (2, 1e-5): pate.TestPTRFallback
	// checks the count.
	lowQueries, lowTop, fallback := 600, 75, 81
	if testing.Short() {
		// Under -short the test fails at a smaller size: 200 queries of
		// more consensus (the largest count 160 to 169, answered more
		// often), a third of the bounds and sensitivities to compute; the
		// fallback count is then the plan's (pate.PlanPTR).
		lowQueries, lowTop = 200, 160
		plan, err := pate.PlanPTR(testMemo, ensemble.ConfidentGNMax{Threshold: 200, Sigma1: 150, GNMax: ensemble.GNMax{Target: ensemble.Target{Delta: 1e-5}, Sigma2: 40}}, 10,
			pate.PTROptions{Budget: accountant.Guarantee{Eps: 2, Delta: 1e-5}, Queries: lowQueries, Fallback: true})
		if err != nil {
			t.Fatal(err)
		}
		fallback = plan.Fallback
	}
	low := ptrCounts(t, dir, "low.csv", lowQueries, lowTop)
	for _, tc := range []struct {
		name     string
		votes    string
		more     []string
		code     int
		released int
		fallback bool
	}{
		{name: "pass", votes: high, code: 0, released: 40},
		{name: "proposal", votes: high, more: []string{"--max-queries", "30"}, code: 0, released: 30},
		{name: "fail", votes: low, code: exitBudget},
		{name: "fallback", votes: low, more: []string{"--fallback"}, code: exitBudget, released: fallback, fallback: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "labels.csv")
			var runs []string
			for range 2 {
				args := append([]string{"aggregate", tc.votes, "--out", out, "--format", "json", "--seed", "7"}, append(ptrFlags, tc.more...)...)
				stdout, stderr, code := darrm(t, "", args...)
				if code != tc.code {
					t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr)
				}
				if regexp.MustCompile(`(?i)smooth|sensitivity|bound tested [0-9]|draw [0-9]`).MatchString(stdout + stderr) {
					t.Errorf("prints what the votes decide:\n%s%s", stdout, stderr)
				}
				if tc.released == 0 {
					if _, err := os.Stat(out); !os.IsNotExist(err) {
						t.Errorf("a failed test left a label file (%v)", err)
					}
					for _, want := range []string{"test FAILED", "no label released", "the test's own (", "NOT FOR RELEASE", "the test's outcome too, so no total to publish holds"} {
						if !strings.Contains(stderr, want) {
							t.Errorf("stderr lacks %q:\n%s", want, stderr)
						}
					}
					// The outcome's document, as for any other.
					var doc struct {
						Released int `json:"released"`
						PTR      *struct {
							Passed *bool `json:"passed"`
						} `json:"ptr"`
					}
					if decode(t, stdout, &doc); doc.Released != 0 || doc.PTR == nil || doc.PTR.Passed == nil || *doc.PTR.Passed {
						t.Errorf("a failed test's JSON: %s", stdout)
					}
					runs = append(runs, stderr)
					continue
				}
				var doc struct {
					Released     int `json:"released"`
					NotRequested int `json:"not_requested"`
					Publish      struct {
						Eps, Delta float64
						Method     string `json:"method"`
					} `json:"publish"`
					Totals []any `json:"totals"`
					PTR    *struct {
						Passed   bool `json:"passed"`
						Queries  int  `json:"queries_proposed"`
						Fallback int  `json:"fallback_queries"`
					} `json:"ptr"`
				}
				decode(t, stdout, &doc)
				switch {
				case tc.fallback:
					if doc.Released != tc.released || doc.PTR == nil || doc.PTR.Passed || doc.PTR.Queries != lowQueries || doc.PTR.Fallback != tc.released {
						t.Errorf("released %d, ptr %+v; want the test failed and its fallback's %d", doc.Released, doc.PTR, tc.released)
					}
				case doc.Released != tc.released || doc.PTR == nil || !doc.PTR.Passed || doc.PTR.Queries != tc.released || doc.NotRequested != 40-tc.released:
					t.Errorf("released %d, not requested %d, ptr %+v; want %d, passed, the rest not requested", doc.Released, doc.NotRequested, doc.PTR, tc.released)
				}
				if p := doc.Publish; p.Method != "generalized PTR" || p.Eps > 2 || p.Eps < 1.9 || p.Delta > 1e-5 || len(doc.Totals) != 0 {
					t.Errorf("publishes %+v with analysis totals %v, want generalized PTR's total within (2, 1e-5) alone", p, doc.Totals)
				}
				f, err := os.Open(out)
				if err != nil {
					t.Fatal(err)
				}
				lr, err := votefile.NewLabelReader(f, out)
				if err != nil {
					t.Fatal(err)
				}
				h := lr.Meta()
				// The total is the budget's own decimal, 2 (the conversion
				// it bounds is 1.9999999999999998).
				if h.Accounting != "ptr" || h.Total == nil || h.Total.Argument != "generalized PTR" || h.Total.Eps != 2 || h.Total.Eps != doc.Publish.Eps || h.Total.Delta != doc.Publish.Delta {
					t.Errorf("label header: accounting %q, total %+v; want ptr and %+v", h.Accounting, h.Total, doc.Publish)
				}
				if want := map[bool]int{true: lowQueries}[tc.fallback]; h.Total.FallbackOf != want {
					t.Errorf("label header: the fallback of %d queries, want %d", h.Total.FallbackOf, want)
				}
				n := 0
				for lr.Next() {
					n++
				}
				f.Close()
				if n != tc.released {
					t.Errorf("%d labels in the file, want %d", n, tc.released)
				}
				labels, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				runs = append(runs, string(labels))
			}
			if runs[0] != runs[1] {
				t.Errorf("the same seed gave two releases:\n%s\n%s", runs[0], runs[1])
			}
		})
	}
}

// TestAggregatePTRRefused: --accounting and --max-queries where they do
// not apply are refused before anything is written, naming the flag, the
// value and the rule (exit 2).
func TestAggregatePTRRefused(t *testing.T) {
	dir := t.TempDir()
	high := ptrCounts(t, dir, "high.csv", 40, 238)
	gnmax := []string{"--mechanism", "confident-gnmax", "--threshold", "200", "--sigma1", "150", "--sigma2", "40", "--delta", "1e-5"}
	budget := []string{"--budget-eps", "2", "--budget-delta", "1e-5"}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		args  []string
		stdin bool
		want  string
	}{
		{"no budget", cat(gnmax, []string{"--accounting", "ptr"}), false, "--accounting ptr needs --budget-eps and --budget-delta"},
		{"mechanism", cat([]string{"--mechanism", "lnmax", "--laplace-scale", "50"}, budget, []string{"--accounting", "ptr"}), false, "--accounting ptr with --mechanism lnmax: generalized PTR tests"},
		{"name", cat(gnmax, budget, []string{"--accounting", "rdp"}), false, `--accounting = "rdp": must be data-independent, ptr or gdp-filter`},
		{"max-queries 0 alone", cat(gnmax, budget, []string{"--max-queries", "0"}), false, "--max-queries = 0: must be >= 1"},
		{"fallback alone", cat(gnmax, budget, []string{"--fallback"}), false, "--fallback goes with --accounting ptr"},
		{"max-queries 0", cat(gnmax, budget, []string{"--accounting", "ptr", "--max-queries", "0"}), false, "--max-queries = 0: must be >= 1"},
		{"max-queries beyond", cat(gnmax, budget, []string{"--accounting", "ptr", "--max-queries", "41"}), false, "--max-queries = 41: must be at most the 40 queries of the votes"},
		{"stdin", cat(gnmax, budget, []string{"--accounting", "ptr"}), true, "--accounting ptr reads the votes twice"},
		// Below what the test alone is at any noise: refused at once (the
		// search for σ ran for hours before), naming the flag.
		{"budget below the test", cat(gnmax, []string{"--budget-eps", "0.01", "--budget-delta", "1e-5", "--accounting", "ptr"}), false, "--budget-eps = 0.01: must be at least 0.16"},
		{"no room for a proposal", cat(gnmax, []string{"--budget-eps", "0.25", "--budget-delta", "1e-5", "--accounting", "ptr"}), false, "--budget-eps = 0.25: leaves no room for a proposal"},
		{"sigma2 beyond the bound's conditions", cat([]string{"--mechanism", "confident-gnmax", "--threshold", "200", "--sigma1", "150", "--sigma2", "1e9", "--delta", "1e-5"}, budget, []string{"--accounting", "ptr"}), false, "--sigma2 1e+09: conditions C5 and C6 of the data-dependent bound fail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "labels.csv")
			args := []string{"aggregate", high}
			stdin := ""
			if tc.stdin {
				b, err := os.ReadFile(high)
				if err != nil {
					t.Fatal(err)
				}
				args, stdin = []string{"aggregate"}, string(b)
			}
			wantRefused(t, stdin, tc.want, out, append(args, append(tc.args, "--out", out)...)...)
		})
	}
}

// TestAggregatePTRLedger: a PTR release charges its ledger its total as
// one step, before its test: the ledger then has spent that total, the
// label file's header names the ledger, and a second release that the
// ledger's budget has no room for is refused with nothing drawn (exit 4).
func TestAggregatePTRLedger(t *testing.T) {
	dir := t.TempDir()
	high := ptrCounts(t, dir, "high.csv", 40, 238)
	led := filepath.Join(dir, "ptr.ledger")
	if _, stderr, code := darrm(t, "", "ledger", "init", led, "--ensemble", "ptr-k250", "--K", "250", "--relation", "one-vote", "--kind", "fixed",
		"--partition", "keyed-hash", "--budget-eps", "5", "--budget-delta", "2e-5"); code != 0 {
		t.Fatalf("ledger init: exit %d: %s", code, stderr)
	}
	out := filepath.Join(dir, "labels.csv")
	stdout, stderr, code := darrm(t, "", append([]string{"aggregate", high, "--out", out, "--ledger", led, "--format", "json"}, ptrFlags...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Ledger struct {
			Total struct{ Eps, Delta float64 } `json:"total"`
		} `json:"ledger"`
	}
	decode(t, stdout, &doc)
	if s := doc.Ledger.Total; s.Eps < 1.9 || s.Eps > 2 || s.Delta != 1e-5 {
		t.Errorf("the ledger spent %+v, want the PTR total within (2, 1e-5)", s)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lr, err := votefile.NewLabelReader(f, out)
	if err != nil {
		t.Fatal(err)
	}
	if h := lr.Meta(); h.Ledger == "" || h.Accounting != "ptr" {
		t.Errorf("label header: ledger %q, accounting %q", h.Ledger, h.Accounting)
	}
	// The summary counts further releases in the step the ledger charges
	// a PTR release, its total, not in the per-query step.
	second := filepath.Join(dir, "second.csv")
	stdout, stderr, code = darrm(t, "", append([]string{"aggregate", high, "--out", second, "--ledger", led}, ptrFlags...)...)
	if code != 0 || strings.Contains(stdout, "more such quer") || !strings.Contains(unwrapped(stdout), "0 more such releases by generalized PTR (each its total charged as one step)") {
		t.Errorf("second release: exit %d: %s%s\nwant exit 0 and no release more", code, stdout, stderr)
	}
	again := filepath.Join(dir, "again.csv")
	stdout, stderr, code = darrm(t, "", append([]string{"aggregate", high, "--out", again, "--ledger", led, "--format", "json"}, ptrFlags...)...)
	if code != exitBudget || !strings.Contains(stderr, "the 40 queries proposed not released: nothing drawn or charged, no label file written") {
		t.Errorf("third release: exit %d, %q; want %d, refused", code, stderr, exitBudget)
	}
	var stopped struct {
		StoppedByBudget int `json:"stopped_by_budget"`
		PTR             struct {
			Passed *bool `json:"passed"`
		} `json:"ptr"`
	}
	if decode(t, stdout, &stopped); stopped.StoppedByBudget != 40 || stopped.PTR.Passed != nil {
		t.Errorf("third release's JSON: %s; want the 40 queries stopped, no test drawn", stdout)
	}
	if _, err := os.Stat(again); !os.IsNotExist(err) {
		t.Errorf("a refused release left a label file (%v)", err)
	}
}

// TestPlanPTR: plan --accounting ptr on proxy votes proposes the most
// queries whose test passes there with probability 0.9 (fewer on votes
// of less consensus), prints the aggregate line that releases them, and
// refuses a mechanism PTR does not test and a plan it does not make.
func TestPlanPTR(t *testing.T) {
	dir := t.TempDir()
	// Each step of the search makes a plan (about a second of CPU; three
	// below ten queries at σ2 = 40, whose test's noise is wider). At σ2 =
	// 10 a query costs 16 times what it does at σ2 = 40, so that a few
	// queries of little consensus (the largest count 30 to 39 of 250)
	// already fail where seven of high consensus pass: the searches over
	// seven queries take three steps each, where 600 low-consensus
	// queries at σ2 = 40 took ten.
	n := 7
	if testing.Short() {
		// Under -short at a smaller size: four queries, whose searches
		// make three plans (of 2, 3 and 4 queries, the high-consensus
		// search's steps those of the other) where seven make five.
		n = 4
	}
	high := ptrCounts(t, dir, "high.csv", n, 238)
	mixed := ptrCounts(t, dir, "low.csv", n, 30)
	base := []string{"plan", "--mechanism", "confident-gnmax", "--K", "250", "--classes", "10", "--threshold", "200", "--sigma1", "150", "--sigma2", "10",
		"--budget-eps", "2", "--budget-delta", "1e-5", "--votes-are", "public", "--accounting", "ptr", "--format", "json"}
	queries := map[string]int{}
	for _, votes := range []string{high, mixed} {
		stdout, stderr, code := darrm(t, "", append(base, "--votes", votes)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", votes, code, stderr)
		}
		var doc struct {
			Queries   int     `json:"queries"`
			Pass      float64 `json:"pass_probability"`
			PublishEp float64 `json:"publish_eps"`
			Aggregate string  `json:"aggregate"`
		}
		decode(t, stdout, &doc)
		if doc.Pass < 0.9 || doc.PublishEp > 2 || !strings.Contains(doc.Aggregate, fmt.Sprintf("--accounting ptr --max-queries %d", doc.Queries)) {
			t.Errorf("%s: %+v", votes, doc)
		}
		queries[votes] = doc.Queries
	}
	if queries[high] != n || queries[mixed] < 1 || queries[mixed] >= n {
		t.Errorf("proposals %v: want every high-consensus query and some, not all, of the others", queries)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "--mechanism", "lnmax", "--K", "250", "--classes", "10", "--laplace-scale", "50", "--budget-eps", "2", "--budget-delta", "1e-5", "--accounting", "ptr"}, "--accounting ptr with --mechanism lnmax"},
		{append(append([]string{}, base...), "--votes", high, "--queries", "10"), "leave out --queries"},
		{[]string{"plan", "--K", "250", "--classes", "10", "--budget-eps", "2", "--budget-delta", "1e-5", "--votes", high, "--votes-are", "public", "--accounting", "ptr"}, "--accounting plans one mechanism"},
		{[]string{"plan", "--mechanism", "confident-gnmax", "--K", "250", "--classes", "10", "--threshold", "200", "--sigma1", "150", "--sigma2", "10",
			"--budget-eps", "0.01", "--budget-delta", "1e-5", "--votes", high, "--votes-are", "public", "--accounting", "ptr"}, "--budget-eps = 0.01: must be at least 0.16"},
	} {
		if _, stderr, code := darrm(t, "", tc.args...); code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}

// TestAccountPATEPTR: account pate --labels on a PTR release's labels
// publishes the total aggregate published, by generalized PTR, recomputed
// from the budget, the settings and the labels (not a composition of the
// labels, which misses the test); a header whose total or budget was
// edited, or that lacks its budget, is refused naming it (exit 2).
func TestAccountPATEPTR(t *testing.T) {
	dir := t.TempDir()
	high := ptrCounts(t, dir, "high.csv", 40, 238)
	out := filepath.Join(dir, "labels.csv")
	// TestAggregatePTR's proposal: the process has its plan already.
	stdout, stderr, code := darrm(t, "", append([]string{"aggregate", high, "--out", out, "--format", "json", "--max-queries", "30"}, ptrFlags...)...)
	if code != 0 {
		t.Fatalf("aggregate: exit %d, want 0: %s", code, stderr)
	}
	var agg struct {
		Publish struct{ Eps, Delta float64 } `json:"publish"`
	}
	decode(t, stdout, &agg)
	labels, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{name: "as published"},
		{name: "total edited", old: `"total":{"eps":`, new: `"total":{"eps":1.5,"was":`, want: `unknown key`},
		{name: "budget edited", old: `"budget_eps":2`, new: `"budget_eps":3`, want: "but a PTR release of its 30 labelled queries within the budget (3, 1e-05)-DP publishes"},
		{name: "no budget", old: `,"budget_eps":2,"budget_delta":0.00001`, new: ``, want: "accounting ptr without the budget its total was planned within"},
		// The total is the budget, whatever the proposal: a file cut
		// short publishes the same total, recomputed for its 29 labels.
		{name: "a label removed", old: "\n30,"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := out
			if tc.old != "" {
				if !strings.Contains(string(labels), tc.old) {
					t.Fatalf("the labels lack %q:\n%s", tc.old, labels)
				}
				file = filepath.Join(t.TempDir(), "edited.csv")
				edited := strings.Replace(string(labels), tc.old, tc.new, 1)
				if tc.new == "" && tc.old[0] == '\n' { // the last label goes
					edited = string(labels[:strings.Index(string(labels), tc.old)+1])
				}
				if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			stdout, stderr, code := darrm(t, "", "account", "pate", high, "--labels", file, "--target-delta", "1e-5", "--format", "json")
			if tc.want != "" {
				if code != exitUsage || !strings.Contains(stderr, tc.want) {
					t.Errorf("exit %d, %q; want %d and %q", code, stderr, exitUsage, tc.want)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var doc struct {
				Eps    float64 `json:"eps_guarantee"`
				Delta  float64 `json:"delta_guarantee"`
				Method string  `json:"guarantee_method"`
				What   string  `json:"guarantee"`
			}
			decode(t, stdout, &doc)
			labelled := "30 labelled queries"
			if tc.old != "" {
				labelled = "29 labelled queries"
			}
			if doc.Eps != agg.Publish.Eps || doc.Delta != agg.Publish.Delta || doc.Method != "generalized PTR" || !strings.Contains(doc.What, labelled+" as a whole, its test included") {
				t.Errorf("publishes (%v, %v) by %q (%s); want aggregate's (%v, %v) by generalized PTR", doc.Eps, doc.Delta, doc.Method, doc.What, agg.Publish.Eps, agg.Publish.Delta)
			}
		})
	}
}

// TestAggregatePTRDeclaredUse: a PTR release on a ledger whose declared
// use (ledger init --mechanism, or --schedule) is of labels is refused
// before the ledger is charged, naming --accounting ptr and the rule
// (exit 2, no label file, nothing spent), where a release of the declared
// labels on it still goes.
func TestAggregatePTRDeclaredUse(t *testing.T) {
	dir := t.TempDir()
	high := ptrCounts(t, dir, "high.csv", 40, 238)
	gnmax := []string{"--mechanism", "confident-gnmax", "--threshold", "200", "--sigma1", "150", "--sigma2", "40", "--delta", "1e-5"}
	schedule := filepath.Join(dir, "schedule")
	if err := os.WriteFile(schedule, []byte(strings.Join(gnmax, " ")+" --queries 50\n"+strings.Join(gnmax, " ")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		use  []string
		want string
	}{
		{"mechanism", gnmax, "the ledger's use is declared (1645 confident-gnmax labels of (0.173291, 1e-05)-DP"},
		{"schedule", []string{"--schedule", schedule}, "the ledger's use is declared (run 1 of a schedule of 2 runs, 50 confident-gnmax labels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			led := filepath.Join(t.TempDir(), "declared.ledger")
			if _, stderr, code := darrm(t, "", append([]string{"ledger", "init", led, "--votes", high, "--budget-eps", "6", "--budget-delta", "1e-4", "--replace"}, tc.use...)...); code != 0 {
				t.Fatalf("ledger init: exit %d: %s", code, stderr)
			}
			out := filepath.Join(t.TempDir(), "labels.csv")
			_, stderr, code := darrm(t, "", append([]string{"aggregate", high, "--out", out, "--ledger", led}, ptrFlags...)...)
			for _, want := range []string{"--accounting ptr with --ledger " + led, tc.want, "a release by generalized PTR is charged its total, (2, 1e-05)-DP, as one step, which that use does not hold: charge it to a ledger whose use declares it (ledger init --accounting ptr)"} {
				if code != exitUsage || !strings.Contains(stderr, want) {
					t.Errorf("exit %d, %q; want %d and %q", code, stderr, exitUsage, want)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a refused release left a label file (%v)", err)
			}
			stdout, stderr, code := darrm(t, "", "ledger", "show", led, "--format", "json")
			var doc struct {
				Spent float64 `json:"spent_eps"`
			}
			if decode(t, stdout, &doc); code != 0 || doc.Spent != 0 {
				t.Errorf("ledger show: exit %d, spent %v, want nothing: %s", code, doc.Spent, stderr)
			}
			if _, stderr, code := darrm(t, "", append([]string{"aggregate", high, "--out", out, "--ledger", led}, gnmax...)...); code != 0 {
				t.Errorf("the declared labels: exit %d: %s", code, stderr)
			}
		})
	}
}

// ptrUseRun is a run of a ledger's declared use, as its file records it.
type ptrUseRun struct {
	Mechanism  string
	Accounting string
	Queries    int
	Labels     int
	Budget     struct{ Eps, Delta float64 }
	Step       struct {
		Kind       string
		Eps, Delta float64
	}
}

// ptrUseHeader reads the declared use of the ledger file path, as its
// first line records it.
func ptrUseHeader(t *testing.T, path string) []ptrUseRun {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(data), "\n")
	var line struct{ Header struct{ Use []ptrUseRun } }
	decode(t, first, &line)
	return line.Header.Use
}

// optimalFits reports whether k steps, each (eps, delta)-DP, fit the
// budget (budgetEps, budgetDelta) by their exact composition (Kairouz, Oh
// and Viswanath 2015, Thm 3.3), computed here on its own: the k-fold
// randomized response's hockey-stick divergence at budgetEps, each term
// C(k,l)·p0^(k-l)·p1^l·(1 - e^(budgetEps - (k-2l)·eps)) summed directly
// from the log-gamma function, and the steps' deltas as 1 - (1-delta)^k.
func optimalFits(k int, eps, delta, budgetEps, budgetDelta float64) bool {
	logP0, logP1 := -math.Log1p(math.Exp(-eps)), -math.Log1p(math.Exp(eps))
	lk, _ := math.Lgamma(float64(k + 1))
	sum := 0.0
	for l := 0; l <= k; l++ {
		loss := float64(k-2*l) * eps
		if loss <= budgetEps {
			break
		}
		ll, _ := math.Lgamma(float64(l + 1))
		lkl, _ := math.Lgamma(float64(k - l + 1))
		sum += math.Exp(lk-ll-lkl+float64(k-l)*logP0+float64(l)*logP1) * -math.Expm1(budgetEps-loss)
	}
	return 1-math.Pow(1-delta, float64(k))*(1-sum) <= budgetDelta
}

// TestLedgerInitPTRUse: ledger init --accounting ptr declares releases by
// generalized PTR, each one step of the total it publishes, and counts
// the most such totals that fit the budget by their exact composition,
// as optimalFits finds them on its own (more than basic composition's
// budget/eps). Settings that do not apply are refused, naming the flag.
func TestLedgerInitPTRUse(t *testing.T) {
	dir := t.TempDir()
	high := ptrCounts(t, dir, "high.csv", 40, 238)
	gnmax := []string{"--mechanism", "confident-gnmax", "--threshold", "200", "--sigma1", "150", "--sigma2", "40", "--delta", "1e-5"}
	uses := []struct {
		release, budget [2]string
	}{
		{[2]string{"0.5", "1e-7"}, [2]string{"10", "1e-4"}},
		{[2]string{"1", "1e-7"}, [2]string{"30", "1e-4"}},
	}
	if testing.Short() {
		// Under -short one declared use of the two, the same checks of
		// the same path: the plan of a release within 0.5, whose test
		// needs the most noise, is the costlier.
		uses = uses[1:]
	}
	for _, tc := range uses {
		t.Run(tc.release[0]+"_"+tc.budget[0], func(t *testing.T) {
			led := filepath.Join(t.TempDir(), "ptr.ledger")
			args := append([]string{"ledger", "init", led, "--votes", high, "--budget-eps", tc.budget[0], "--budget-delta", tc.budget[1], "--replace"}, gnmax...)
			stdout, stderr, code := darrm(t, "", append(args, "--accounting", "ptr", "--max-queries", "30", "--release-eps", tc.release[0], "--release-delta", tc.release[1], "--share", "alice=0.5")...)
			if code != 0 {
				t.Fatalf("ledger init: exit %d: %s", code, stderr)
			}
			use := ptrUseHeader(t, led)
			if len(use) != 1 {
				t.Fatalf("use %+v, want one run", use)
			}
			u := use[0]
			relEps, _ := strconv.ParseFloat(tc.release[0], 64)
			relDelta, _ := strconv.ParseFloat(tc.release[1], 64)
			budEps, _ := strconv.ParseFloat(tc.budget[0], 64)
			budDelta, _ := strconv.ParseFloat(tc.budget[1], 64)
			if u.Accounting != "ptr" || u.Queries != 30 || u.Budget.Eps != relEps || u.Budget.Delta != relDelta || u.Step.Kind != "approx" || u.Step.Eps > relEps || u.Step.Delta > relDelta {
				t.Fatalf("use %+v, want PTR releases of 30 queries within (%v, %v), each an approx step within it", u, relEps, relDelta)
			}
			want := 0
			for optimalFits(want+1, u.Step.Eps, u.Step.Delta, budEps, budDelta) {
				want++
			}
			if u.Labels != want || want <= int(budEps/relEps) {
				t.Errorf("the use counts %d releases; the exact composition allows %d (basic composition %d)", u.Labels, want, int(budEps/relEps))
			}
			if w := "exact:"; !strings.Contains(stdout, w) || !strings.Contains(stdout, fmt.Sprintf("allows %d releases", want)) {
				t.Errorf("ledger init says\n%s\nwant %q and %d releases", stdout, w, want)
			}
			// The use counts releases: its share and its total say so, not labels.
			if out := strings.Join(strings.Fields(stdout), " "); !strings.Contains(out, fmt.Sprintf("of its declared use's %d releases", want)) || strings.Contains(out, "labels it allows") {
				t.Errorf("ledger init says\n%s\nwant the share counted in releases, and no labels in the total's why", stdout)
			}
		})
	}
	// A schedule names PTR releases on a line of their own, as init does.
	schedule := filepath.Join(dir, "schedule")
	line := strings.Join(gnmax, " ")
	if err := os.WriteFile(schedule, []byte(line+" --accounting ptr --max-queries 30 --release-eps 2 --release-delta 1e-5 --queries 2\n"+line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sled := filepath.Join(t.TempDir(), "schedule.ledger")
	// Under -short at a smaller size: a budget of 5, whose labels after
	// the two releases are about 70, not 800, a shorter count to search.
	scheduleEps := "8"
	if testing.Short() {
		scheduleEps = "5"
	}
	if _, stderr, code := darrm(t, "", "ledger", "init", sled, "--votes", high, "--budget-eps", scheduleEps, "--budget-delta", "1e-4", "--replace", "--schedule", schedule); code != 0 {
		t.Fatalf("ledger init --schedule: exit %d: %s", code, stderr)
	}
	if use := ptrUseHeader(t, sled); len(use) != 2 || use[0].Accounting != "ptr" || use[0].Labels != 2 || use[0].Queries != 30 || use[1].Accounting != "" || use[1].Labels < 1 {
		t.Errorf("the schedule's use: %+v, want 2 PTR releases, then labels", use)
	}
	led := filepath.Join(t.TempDir(), "bad.ledger")
	base := append([]string{"ledger", "init", led, "--votes", high, "--budget-eps", "8", "--budget-delta", "1e-4", "--replace"}, gnmax...)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no proposal", append(slices.Clone(base), "--accounting", "ptr", "--release-eps", "2", "--release-delta", "1e-5"), "give --max-queries, --release-eps and --release-delta"},
		{"max-queries alone", append(slices.Clone(base), "--max-queries", "30"), "--max-queries goes with --accounting ptr"},
		{"accounting", append(slices.Clone(base), "--accounting", "whole"), `--accounting = "whole": must be data-independent or ptr`},
		{"mechanism", []string{"ledger", "init", led, "--votes", high, "--budget-eps", "8", "--budget-delta", "1e-4", "--mechanism", "lnmax", "--laplace-scale", "50",
			"--accounting", "ptr", "--max-queries", "30", "--release-eps", "2", "--release-delta", "1e-5"}, "--accounting ptr with --mechanism lnmax: generalized PTR tests"},
		{"release delta", append(slices.Clone(base), "--accounting", "ptr", "--max-queries", "30", "--release-eps", "2", "--release-delta", "0"), "--release-delta"},
		{"release eps below the test", append(slices.Clone(base), "--accounting", "ptr", "--max-queries", "30", "--release-eps", "0.01", "--release-delta", "1e-5"), "--release-eps = 0.01: must be at least 0.16"},
		{"no mechanism", []string{"ledger", "init", led, "--votes", high, "--budget-eps", "8", "--budget-delta", "1e-4", "--accounting", "ptr"}, "--accounting describes the labels the ledger will pay for"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantRefused(t, "", tc.want, led, tc.args...)
		})
	}
}

// TestAggregatePTRUse: on a ledger declared for PTR releases (ledger init
// --accounting ptr), a release of other settings is refused before any
// charge, naming the flag that differs and the use (exit 2, no label
// file, nothing spent), as is a release per query; the release of the
// declared settings is charged one step, the very total it publishes.
func TestAggregatePTRUse(t *testing.T) {
	dir := t.TempDir()
	high := ptrCounts(t, dir, "high.csv", 40, 238)
	gnmax := []string{"--mechanism", "confident-gnmax", "--threshold", "200", "--sigma1", "150", "--sigma2", "40", "--delta", "1e-5"}
	led := filepath.Join(dir, "ptr.ledger")
	if _, stderr, code := darrm(t, "", append(append([]string{"ledger", "init", led, "--votes", high, "--budget-eps", "8", "--budget-delta", "1e-4", "--replace"}, gnmax...),
		"--accounting", "ptr", "--max-queries", "30", "--release-eps", "2", "--release-delta", "1e-5")...); code != 0 {
		t.Fatalf("ledger init: exit %d: %s", code, stderr)
	}
	use := ptrUseHeader(t, led)[0]
	spent := func() (float64, []struct {
		Queries    int
		Eps, Delta float64
	}) {
		t.Helper()
		stdout, stderr, code := darrm(t, "", "ledger", "show", led, "--format", "json")
		var doc struct {
			Spent float64 `json:"spent_eps"`
			Rows  []struct {
				Queries    int
				Eps, Delta float64
			}
		}
		if decode(t, stdout, &doc); code != 0 {
			t.Fatalf("ledger show: exit %d: %s", code, stderr)
		}
		return doc.Spent, doc.Rows
	}
	const declared = "the ledger charges only its declared use, 4 confident-gnmax PTR releases of the first 30 queries within (2, 1e-05)-DP"
	ptr := func(eps, sigma2, queries string) []string {
		return []string{"--mechanism", "confident-gnmax", "--threshold", "200", "--sigma1", "150", "--sigma2", sigma2, "--delta", "1e-5",
			"--budget-eps", eps, "--budget-delta", "1e-5", "--accounting", "ptr", "--max-queries", queries}
	}
	// A refused release is planned before its refusal, which names the
	// plan's total where the rest agree: the proposal and the budget
	// that differ are ones whose plans the package's other tests make
	// (TestAggregatePTR's 40 queries, TestAccountPATEPTR's eps 3), each
	// a second of CPU made once.
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"max-queries", ptr("2", "40", "40"), []string{"--max-queries 40, where the use's proposal is 30", declared}},
		{"budget", ptr("3", "40", "30"), []string{"--budget-eps 3, where the use's releases are each within eps 2", declared}},
		{"sigma2", ptr("2", "50", "30"), []string{"--sigma2 50, where the use's is 40", declared}},
		{"per query", gnmax, []string{"a release of confident-gnmax labels of (0.173291, 1e-05)-DP is refused: the ledger charges only its declared use, 4 confident-gnmax PTR releases"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "labels.csv")
			_, stderr, code := darrm(t, "", append([]string{"aggregate", high, "--out", out, "--ledger", led}, tc.args...)...)
			for _, want := range tc.want {
				if code != exitUsage || !strings.Contains(stderr, want) {
					t.Errorf("exit %d, %q; want %d and %q", code, stderr, exitUsage, want)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a refused release left a label file (%v)", err)
			}
			if s, rows := spent(); s != 0 || len(rows) != 0 {
				t.Errorf("a refused release spent %v in %d runs", s, len(rows))
			}
		})
	}
	out := filepath.Join(t.TempDir(), "labels.csv")
	stdout, stderr, code := darrm(t, "", append([]string{"aggregate", high, "--out", out, "--ledger", led, "--format", "json"}, ptr("2", "40", "30")...)...)
	if code != 0 { // 30 of the 40 queries, as asked: the rest not requested
		t.Fatalf("the declared release: exit %d, want 0: %s", code, stderr)
	}
	var doc struct {
		Released int `json:"released"`
		PTR      *struct {
			Passed bool `json:"passed"`
		} `json:"ptr"`
	}
	if decode(t, stdout, &doc); doc.PTR == nil || !doc.PTR.Passed || doc.Released != 30 {
		t.Fatalf("the declared release: %s", stdout)
	}
	// The total it published is in its label file's header, the step the
	// ledger charged once, and the use's step; what the ledger spent is
	// that step stated at the ledger's delta, no more.
	labels, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Accounting string `json:"accounting"`
		Total      struct{ Eps, Delta float64 }
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(string(labels), "# "), "\n")
	decode(t, first, &meta)
	s, rows := spent()
	if meta.Accounting != "ptr" || len(rows) != 1 || rows[0].Queries != 1 || rows[0].Eps != meta.Total.Eps || rows[0].Delta != meta.Total.Delta ||
		use.Step.Eps != meta.Total.Eps || use.Step.Delta != meta.Total.Delta || !(s > 0 && s <= meta.Total.Eps) {
		t.Errorf("the ledger charged %+v (spent %v) for a release that published (%v, %v) by %q; the use's step is (%v, %v)",
			rows, s, meta.Total.Eps, meta.Total.Delta, meta.Accounting, use.Step.Eps, use.Step.Delta)
	}
}

// wantRefused runs darrm with args and fails unless it is refused as bad
// input (exit 2) with a message containing want and leaves nothing at
// path, the file the command would have written.
func wantRefused(t *testing.T, stdin, want, path string, args ...string) {
	t.Helper()
	_, stderr, code := darrm(t, stdin, args...)
	if code != exitUsage || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, %q; want %d and %q", code, stderr, exitUsage, want)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a refused command left %s (%v)", path, err)
	}
}
