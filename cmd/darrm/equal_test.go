package main

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// equalRow is a row of a comparison at equal totals, as its JSON says it.
type equalRow struct {
	Name      string  `json:"name"`
	Mechanism string  `json:"mechanism"`
	Planned   string  `json:"planned"`
	Value     float64 `json:"value"`
	Publish   struct {
		Source    string  `json:"source"`
		Eps       float64 `json:"eps"`
		Delta     float64 `json:"delta"`
		Method    string  `json:"method"`
		Reference string  `json:"reference"`
		DeltaFrom string  `json:"delta_from"`
	} `json:"publish"`
	NoFit    string `json:"no_fit"`
	Accuracy []struct {
		Actual string  `json:"actual"`
		Value  float64 `json:"value"`
	} `json:"accuracy"`
}

// equalDoc is solve's comparisons at equal totals.
type equalDoc struct {
	EqualTotals []struct {
		BudgetEps   float64    `json:"budget_eps"`
		BudgetDelta float64    `json:"budget_delta"`
		Queries     int        `json:"queries"`
		Rows        []equalRow `json:"mechanisms"`
		Winners     []struct {
			By       string `json:"by"`
			Winner   string `json:"winner"`
			RunnerUp string `json:"runner_up"`
		} `json:"winners"`
	} `json:"equal_totals"`
}

// TestSolveEqualTotals: solve --compare at equal totals maps its flags to
// the library's comparison (plan.CompareAtTotals, whose numbers plan's
// tests check) and prints it: each total within the budget with its
// theorem, gamma_opt the winner, and in the one-vote relation at 100
// queries (11 teachers right with probability 0.75, a total of (4, 1e-5))
// docs/transfer.md's accuracies, GNMax planned by the exact composition
// of the bit it releases (sigma2 at most 13.9, its accuracy within 0.003
// of DaRRM's); darrm plan with GNMax's planned sigma2 counts the queries
// (by its own count), and 5% less noise fewer. Under -short only the
// one-vote case runs, at 2 queries, whose compositions are short, and its
// numbers are not checked: the private teachers' comparison and the
// accuracies are plan's tests' (ExampleCompareAtTotals at 10 queries,
// TestCompareAtTotalsHundred at 100 in the full run).
func TestSolveEqualTotals(t *testing.T) {
	cache := sharedCache
	cases := []struct {
		name     string
		args     []string
		budget   [2]float64
		queries  int
		accuracy []float64 // Pr[label = 1] at 0.75 of each row
	}{
		{"one-vote", []string{"--relation", "one-vote", "--K", "11", "--target-eps", "0.4"}, [2]float64{4, 1e-5}, 100, []float64{0.611, 0.610, 0.522}},
		{"private teachers", []string{"--K", "11", "--m", "3"}, [2]float64{2, 2e-4}, 10, nil},
	}
	if testing.Short() {
		cases = cases[:1]
		cases[0].queries, cases[0].accuracy = 2, nil
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			budget := []string{"--budget-eps", fmt.Sprint(tc.budget[0]), "--budget-delta", fmt.Sprint(tc.budget[1]), "--composition", "optimal", "--delta-prime", "0.01"}
			args := append(append([]string{"solve", "--compare", "--actual", "0.75", "--format", "json", "--cache-dir", cache, "--queries", fmt.Sprint(tc.queries)}, tc.args...), budget...)
			out, e, code := darrm(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, e)
			}
			// Each total is the accountant's choice at the budget's delta,
			// so the hidden --composition and --delta-prime are accepted and
			// said to change nothing (--delta-prime said nothing).
			for _, fl := range []string{"--composition", "--delta-prime"} {
				if !strings.Contains(unwrapped(e), fl+" changes nothing here") {
					t.Errorf("%s given, stderr %q: want a note that it changes nothing", fl, e)
				}
			}
			var doc equalDoc
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.EqualTotals) != 1 {
				t.Fatalf("%d comparisons, want 1", len(doc.EqualTotals))
			}
			cmp, q := doc.EqualTotals[0], tc.queries
			if cmp.Queries != q || cmp.BudgetEps != tc.budget[0] || cmp.BudgetDelta != tc.budget[1] {
				t.Errorf("%d queries in (%v, %v), want %d in %v", cmp.Queries, cmp.BudgetEps, cmp.BudgetDelta, q, tc.budget)
			}
			if len(cmp.Winners) != 1 || cmp.Winners[0].Winner != "gamma_opt" {
				t.Errorf("Q %d: winners %+v, want gamma_opt", q, cmp.Winners)
			}
			for j, r := range cmp.Rows {
				if r.NoFit != "" || r.Publish.Eps > tc.budget[0] || r.Publish.Delta > tc.budget[1] || r.Publish.Method == "" || r.Publish.Reference == "" || r.Publish.DeltaFrom != "budget" {
					t.Errorf("Q %d %s: total (%v, %v) by %q (%q), no fit %q: want within %v, with its theorem", q, r.Name, r.Publish.Eps, r.Publish.Delta, r.Publish.Method, r.Publish.Reference, r.NoFit, tc.budget)
				}
				if len(r.Accuracy) != 1 || tc.accuracy != nil && math.Abs(r.Accuracy[0].Value-tc.accuracy[j]) > 5e-4 {
					t.Errorf("Q %d %s: accuracy %+v, want one (row %d of %v)", q, r.Name, r.Accuracy, j, tc.accuracy)
				}
				if r.Name != "gnmax" {
					continue
				}
				if r.Planned != "sigma2" || r.Publish.Method != "exact" || tc.accuracy != nil && (r.Value > 13.9 || math.Abs(r.Accuracy[0].Value-cmp.Rows[0].Accuracy[0].Value) > 0.003) {
					t.Errorf("Q %d gnmax: %s %v, total by %s, accuracy %+v: want sigma2 <= 13.9 by the exact composition of its bit, within 0.003 of %+v", q, r.Planned, r.Value, r.Publish.Method, r.Accuracy, cmp.Rows[0].Accuracy)
				}
				checkPlanned(t, tc.args, budget, q, r)
			}
		})
	}
}

// checkPlanned counts with darrm plan the queries r's planned value buys,
// and those of the value 5% more generous: at least q, and fewer.
func checkPlanned(t *testing.T, problem, budget []string, q int, r equalRow) {
	t.Helper()
	generous := r.Value * 1.05
	if r.Planned == "sigma2" {
		generous = r.Value / 1.05
	}
	var args []string
	switch r.Planned {
	case "target-eps":
		args = []string{"--K", "11"}
	case "sigma2":
		args = []string{"--K", "11", "--classes", "2", "--delta", "1e-5"}
	default:
		args = problem
	}
	checks := []struct {
		value float64
		fits  bool
	}{{r.Value, true}, {generous, false}}
	if r.Planned == "m" && generous > 11 {
		// m planned at K = 11, the top of its range: nothing more generous
		// exists to refuse.
		checks = checks[:1]
	}
	for _, v := range checks {
		out, e, code := darrm(t, "", append(append(append([]string{"plan", "--format", "json", "--mechanism", r.Mechanism}, args...), budget...), "--"+r.Planned, fmt.Sprint(v.value))...)
		if code != 0 {
			t.Fatalf("plan %s %s %v: exit %d: %s", r.Mechanism, r.Planned, v.value, code, e)
		}
		if run := int(number(t, decodeJSON(t, out), "run_queries")); (run >= q) != v.fits {
			t.Errorf("%s with %s %v: darrm plan counts %d queries; planned for %d, want fits = %v", r.Mechanism, r.Planned, v.value, run, q, v.fits)
		}
	}
}

// TestEqualTotalsFlags: a comparison at equal totals needs its budget, its
// queries and, in solve, --compare; CSV, which holds one comparison (in
// solve a gamma file), does not hold it.
func TestEqualTotalsFlags(t *testing.T) {
	solve := []string{"solve", "--K", "11", "--m", "3", "--no-cache", "--compare"}
	simulate := []string{"simulate", "--K", "11", "--m", "3", "--no-cache", "--queries", "100"}
	budget := []string{"--budget-eps", "2", "--budget-delta", "1e-4"}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"solve no queries", append(solve, budget...)},
		{"solve no budget-delta", append(solve, "--budget-eps", "2", "--queries", "10")},
		{"solve no compare", append([]string{"solve", "--K", "11", "--no-cache", "--queries", "10"}, budget...)},
		{"solve zero queries", append(append(solve, "--queries", "0"), budget...)},
		{"solve csv", append(append(solve, "--queries", "10", "--format", "csv"), budget...)},
		{"solve negative budget", append(solve, "--budget-eps", "-1", "--budget-delta", "1e-4", "--queries", "10")},
		{"simulate no budget-queries", append(simulate, budget...)},
		{"simulate budget-delta 1", append(simulate, "--budget-eps", "1", "--budget-delta", "1", "--budget-queries", "10")},
		{"simulate no budget-eps", append(simulate, "--budget-delta", "1e-4", "--budget-queries", "10")},
		{"simulate csv", append(append(simulate, "--budget-queries", "10", "--format", "csv"), budget...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, e, code := darrm(t, "", tc.args...)
			if code != 2 || out != "" || e == "" {
				t.Errorf("exit %d, stdout %q, stderr %q: want exit 2, an error and no output", code, out, e)
			}
		})
	}
}

// simEqualDoc is simulate's comparisons at equal totals.
type simEqualDoc struct {
	EqualTotals []struct {
		Queries int `json:"queries"`
		Rows    []struct {
			equalRow
			Relation string  `json:"relation"`
			Exact    float64 `json:"exact_agreement"`
			LabelOne float64 `json:"exact_label_one"`
		} `json:"mechanisms"`
		Winners []struct {
			By     string  `json:"by"`
			Winner string  `json:"winner"`
			Value  float64 `json:"value"`
		} `json:"winners"`
	} `json:"equal_totals"`
}

// TestSimulateEqualTotals: simulate at equal totals plans each mechanism
// as darrm plan does (GNMax's value counts the queries by darrm plan's
// count, 5% more generous it does not; the other plans are plan's tests'),
// every total is within the budget with its theorem, and each relation's
// winner has the highest exact agreement. The budget is of 30 queries,
// 10 under -short (the exact composition's cost grows with the count).
// Under -short one mechanism of the private teachers, darrm, is planned
// beside the two of the one-vote relation (each plan a search of its
// own; subsampling's and randomized response's are plan's tests', and
// TestSimulateEqualTotalsNoFit's), and the same comparison as a table
// (its plans then the process's answers already) has no line wider than
// cliout.Width, as TestTableWidths checks without -short.
func TestSimulateEqualTotals(t *testing.T) {
	problem := []string{"--K", "11", "--eps", "0.03", "--Delta", "1e-8"}
	budget := []string{"--budget-eps", "4", "--budget-delta", "1e-5", "--composition", "optimal", "--gnmax-search", "tight"}
	args := []string{"simulate", "--teachers", "0.75", "--queries", "2000", "--seed", "1", "--cache-dir", t.TempDir()}
	if testing.Short() {
		args = append(args, "--budget-queries", "10", "--mechanisms", "darrm,gnmax,darrm-one-vote")
	} else {
		args = append(args, "--budget-queries", "30")
	}
	args = append(append(args, problem...), budget...)
	out, e, code := darrm(t, "", slices.Concat(args, []string{"--format", "json"})...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	if testing.Short() {
		table, e, code := darrm(t, "", args...)
		if code != 0 {
			t.Fatalf("table: exit %d: %s", code, e)
		}
		checkWidths(t, "simulate at equal totals", table)
	}
	var doc simEqualDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.EqualTotals) != 1 {
		t.Fatalf("%d comparisons, want 1", len(doc.EqualTotals))
	}
	for _, cmp := range doc.EqualTotals {
		best := map[string]float64{}
		for _, r := range cmp.Rows {
			r.Name = r.Mechanism
			if r.NoFit != "" || r.Publish.Eps > 4 || r.Publish.Delta > 1e-5 || r.Publish.Method == "" || r.Publish.Reference == "" {
				t.Errorf("Q %d %s: total (%v, %v) by %q, no fit %q: want within (4, 1e-5), with its theorem", cmp.Queries, r.Mechanism, r.Publish.Eps, r.Publish.Delta, r.Publish.Method, r.NoFit)
			}
			if !(r.LabelOne > 0.5 && r.LabelOne < 1) {
				t.Errorf("Q %d %s: Pr[label = 1] = %v with teachers right with probability 0.75", cmp.Queries, r.Mechanism, r.LabelOne)
			}
			best[r.Relation] = math.Max(best[r.Relation], r.Exact)
			if r.Mechanism == "gnmax" {
				if r.Publish.Method != "exact" {
					t.Errorf("Q %d gnmax: total by %s, want the exact composition of its bit", cmp.Queries, r.Publish.Method)
				}
				checkPlanned(t, problem, budget, cmp.Queries, r.equalRow)
			}
		}
		if len(cmp.Winners) != len(best) {
			t.Errorf("Q %d: %d winners for %d relations", cmp.Queries, len(cmp.Winners), len(best))
		}
		for _, w := range cmp.Winners {
			found := false
			for rel, v := range best {
				found = found || w.Value == v && w.By == "exact agreement, "+rel+" relation"
			}
			if !found {
				t.Errorf("Q %d: winner %+v is not the best of its relation (%v)", cmp.Queries, w, best)
			}
		}
	}
}

// TestTransferEqualTotals: darrm transfer --budget-eps on a small fake
// MNIST compares darrm-one-vote, GNMax and RR at equal totals (at 10
// queries; transfer's own tests plan more): every total within the budget
// by its theorem, GNMax's planned value fits by darrm plan's count and 5%
// more generous does not, and the winner has the highest mean accuracy;
// the table says which comparison is which. Under -short the fake MNIST
// is smaller and the comparison of 2 queries (the assertions hold at any
// size).
func TestTransferEqualTotals(t *testing.T) {
	queries := 10
	if testing.Short() {
		// Under -short at a smaller size: fewer images, and 2 queries,
		// whose search at equal totals composes a fifth of what 3 do.
		fakeMNIST(t, 110, 30)
		queries = 2
	} else {
		fakeMNIST(t, 660, 120)
	}
	cache := t.TempDir()
	budget := []string{"--budget-eps", "4", "--budget-delta", "1e-5", "--composition", "optimal"}
	args := append([]string{"transfer", "--dataset", "mnist58", "--seed", "3", "--queries", strconv.Itoa(queries), "--redraws", "2", "--cache-dir", cache, "--format", "json"}, budget...)
	out, e, code := darrm(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	var doc struct {
		EqualTotals []struct {
			Queries int `json:"queries"`
			Rows    []struct {
				equalRow
				AccuracyMean float64 `json:"accuracy_mean"`
			} `json:"mechanisms"`
			Winners []struct {
				Winner string  `json:"winner"`
				Value  float64 `json:"value"`
			} `json:"winners"`
		} `json:"equal_totals"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.EqualTotals) != 1 {
		t.Fatalf("%d comparisons, want 1", len(doc.EqualTotals))
	}
	for _, cmp := range doc.EqualTotals {
		if cmp.Queries != queries || len(cmp.Rows) != 3 {
			t.Fatalf("Q %d with %d mechanisms, want %d with 3", cmp.Queries, len(cmp.Rows), queries)
		}
		best := -1.0
		for _, r := range cmp.Rows {
			if r.NoFit != "" || r.Publish.Eps > 4 || r.Publish.Delta > 1e-5 || r.Publish.Method == "" || r.Publish.Reference == "" {
				t.Errorf("Q %d %s: total (%v, %v) by %q, no fit %q", cmp.Queries, r.Mechanism, r.Publish.Eps, r.Publish.Delta, r.Publish.Method, r.NoFit)
			}
			best = math.Max(best, r.AccuracyMean)
			if r.Mechanism == "gnmax" {
				checkPlanned(t, nil, budget, cmp.Queries, r.equalRow)
			}
		}
		if len(cmp.Winners) != 1 || cmp.Winners[0].Value != best {
			t.Errorf("Q %d: winners %+v, want the best mean accuracy %v", cmp.Queries, cmp.Winners, best)
		}
	}
	table, e, code := darrm(t, "", append([]string{"transfer", "--dataset", "mnist58", "--seed", "3", "--queries", strconv.Itoa(queries), "--redraws", "2", "--cache-dir", cache}, budget...)...)
	if code != 0 {
		t.Fatalf("table: exit %d: %s", code, e)
	}
	for _, want := range []string{"compares at equal per-query guarantees", "Comparison at equal totals", "total by exact: ", "over " + strconv.Itoa(queries) + " queries, by mean accuracy: "} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

// TestSimulateEqualTotalsNoFit: mechanisms whose per-query delta, over 100
// queries, exceeds the budget's fit nothing (darrm and subsampling, charged
// the teachers' delta): each is shown in its own relation with why, while
// darrm-one-vote (pure) wins its relation, beside GNMax, whose bit
// composes exactly within the budget's delta too, and randomized response
// wins its own: its label mixes the majority with a fair coin, so the
// pairs that describe it have p_const times the majority's delta, and they
// fit. Under -short the budget is (1, 1e-5) for 2 queries, over which
// darrm's and subsampling's delta exceed it still, and which randomized
// response's and GNMax's plans count with one transform between them (at
// (4, 1e-5) for 10 queries they took eighteen).
func TestSimulateEqualTotalsNoFit(t *testing.T) {
	eps, queries := "4", "100"
	if testing.Short() {
		eps, queries = "1", "2"
	}
	out, e, code := darrm(t, "", "simulate", "--K", "11", "--format", "json", "--queries", "500", "--seed", "2", "--cache-dir", t.TempDir(),
		"--budget-eps", eps, "--budget-delta", "1e-5", "--budget-queries", queries)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	var doc simEqualDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.EqualTotals) != 1 {
		t.Fatalf("%d comparisons, want 1", len(doc.EqualTotals))
	}
	want := map[string]string{"darrm": "private-teachers", "subsample": "private-teachers", "rr": "private-teachers", "gnmax": "one-vote", "darrm-one-vote": "one-vote"}
	for _, r := range doc.EqualTotals[0].Rows {
		fits := r.Mechanism == "darrm-one-vote" || r.Mechanism == "rr" || r.Mechanism == "gnmax"
		if r.Relation != want[r.Mechanism] || (r.NoFit == "") != fits || !fits && !strings.Contains(r.NoFit, "budget-delta 1e-05") {
			t.Errorf("%s: relation %s, no fit %q: want relation %s, fits %v", r.Mechanism, r.Relation, r.NoFit, want[r.Mechanism], fits)
		}
	}
	winners := map[string]string{}
	for _, w := range doc.EqualTotals[0].Winners {
		winners[w.By] = w.Winner
	}
	if winners["exact agreement, private-teachers relation"] != "rr" || winners["exact agreement, one-vote relation"] != "darrm-one-vote" {
		t.Errorf("winners %v: want rr among the private teachers, darrm-one-vote in the one-vote relation", winners)
	}
}
