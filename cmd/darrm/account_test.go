package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// runCLI runs darrm in-process and returns the exit code, stdout and stderr.
func runCLI(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := runWith(testMemo, context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), joinError(stderr.String())
}

func decodeJSON(t *testing.T, out string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("output is not a JSON object: %v\n%s", err, out)
	}
	return v
}

func number(t *testing.T, v map[string]any, key string) float64 {
	t.Helper()
	x, ok := v[key].(float64)
	if !ok {
		t.Fatalf("field %q = %#v is not a number", key, v[key])
	}
	return x
}

// TestAccountComposeScript checks the form scripts depend on: numeric "eps"
// and "delta" totals (Table B.1, M = 10).
func TestAccountComposeScript(t *testing.T) {
	code, out, errOut := runCLI("account", "compose", "--step-eps", "0.1", "--step-delta", "1e-5", "--steps", "10",
		"--delta-prime", "0.1", "--composition", "general", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	v := decodeJSON(t, out)
	if eps := number(t, v, "eps"); fmt.Sprintf("%.4f", eps/0.1) != "6.4521" {
		t.Errorf("eps = %v, want m = eps/0.1 = 6.4521", eps)
	}
	if delta := number(t, v, "delta"); fmt.Sprintf("%.4f", delta) != "0.1001" {
		t.Errorf("delta = %v, want 0.1001", delta)
	}
	if ref, _ := v["reference"].(string); !strings.Contains(ref, "Theorem 3.3.3") {
		t.Errorf("reference = %q, want Theorem 3.3.3", ref)
	}
}

func TestAccountComposeMethods(t *testing.T) {
	var eps [3]float64
	for i, m := range []string{"simple", "general", "optimal"} {
		code, out, errOut := runCLI("account", "compose", "--step-eps", "0.2676", "--step-delta", "3e-4", "--steps", "100",
			"--delta-prime", "1e-4", "--composition", m, "--format", "json")
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", m, code, errOut)
		}
		eps[i] = number(t, decodeJSON(t, out), "eps")
	}
	if !(eps[2] < eps[1] && eps[1] < eps[0]) {
		t.Errorf("optimal %v, general %v, simple %v", eps[2], eps[1], eps[0])
	}
	if fmt.Sprintf("%.3f", eps[1]) != "15.044" {
		t.Errorf("general eps = %v, Table 3.2 prints 15.044", eps[1])
	}
}

// TestAccountGNMaxScript checks the other script form, for both methods.
func TestAccountGNMaxScript(t *testing.T) {
	for _, tt := range []struct{ method, sigma, lambda string }{
		{"grid", "21.46", "62.31"},
		{"exact", "21.46", "62.12"},
	} {
		code, out, errOut := runCLI("account", "gnmax", "--target-eps", "0.2676", "--target-delta", "3e-4", "--gnmax-search", tt.method, "--format", "json")
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", tt.method, code, errOut)
		}
		v := decodeJSON(t, out)
		if s := number(t, v, "sigma"); fmt.Sprintf("%.2f", s) != tt.sigma {
			t.Errorf("%s: sigma = %v, want %s", tt.method, s, tt.sigma)
		}
		if l := number(t, v, "lambda"); fmt.Sprintf("%.2f", l) != tt.lambda {
			t.Errorf("%s: lambda = %v, want %s", tt.method, l, tt.lambda)
		}
	}
}

// TestAccountGNMaxTight: the tight calibration for the thesis' target
// needs about a third of the grid's noise, and needs --K and no RDP
// options.
func TestAccountGNMaxTight(t *testing.T) {
	code, out, errOut := runCLI("account", "gnmax", "--target-eps", "0.2654", "--target-delta", "3e-4", "--gnmax-search", "tight", "--K", "11", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	v := decodeJSON(t, out)
	if s := number(t, v, "sigma"); fmt.Sprintf("%.4f", s) != "7.7258" || number(t, v, "K") != 11 {
		t.Errorf("sigma = %v, want 7.7258:\n%s", s, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--gnmax-search", "tight"}, "needs --K"},
		{[]string{"--gnmax-search", "tight", "--K", "11", "--conversion", "improved"}, "--conversion"},
		{[]string{"--gnmax-search", "tight", "--K", "11", "--plot", filepath.Join(t.TempDir(), "b8.png")}, "--plot"},
		{[]string{"--K", "11"}, "tight only"},
		{[]string{"--gnmax-search", "tight", "--K", "0"}, "--K = 0"},
	} {
		code, _, errOut := runCLI(append([]string{"account", "gnmax", "--target-eps", "0.2654", "--target-delta", "3e-4"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d: %s", tc.args, code, errOut)
		}
	}
}

func TestAccountFormats(t *testing.T) {
	args := []string{"account", "rr", "--K", "35", "--eps", "0.1", "--Delta", "1e-5", "--m", "6.4521", "--delta", "0.1001", "--rr-delta-prime", "0.1"}
	code, out, errOut := runCLI(append(args, "--format", "csv")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rec, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rec) != 2 {
		t.Fatalf("CSV: %v, %d records\n%s", err, len(rec), out)
	}
	col := map[string]string{}
	for i, k := range rec[0] {
		col[k] = rec[1][i]
	}
	var tau, lambda, pc float64
	if _, err := fmt.Sscan(col["tau"], &tau); err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscan(col["lambda"], &lambda); err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscan(col["p_const"], &pc); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%.4f %.4f", tau, lambda) != "14.0328 0.1003" || !(pc > 0 && pc <= 1) {
		t.Errorf("CSV tau %v lambda %v p_const %v", tau, lambda, pc)
	}
	code, out, errOut = runCLI(args...)
	if code != exitOK || !strings.Contains(out, "Lemma B.1.1") || !strings.Contains(out, "p_const") {
		t.Errorf("table: exit %d, %s\n%s", code, errOut, out)
	}
}

// TestAccountShuffleG checks the calibration table's structure: three rows
// per (algorithm, eps), the improved conversion below the paper's, and that
// the reverse direction reproduces the target.
func TestAccountShuffleG(t *testing.T) {
	code, out, errOut := runCLI("account", "shuffleg", "--algorithm", "all", "--target-eps", "1,5,10", "--target-delta", "1e-6",
		"--G", "10", "--epochs", "50", "--S", "25", "--n", "1000", "--nd", "500", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var v struct {
		Rows []struct {
			Algorithm  string  `json:"algorithm"`
			Eps        float64 `json:"eps"`
			Conversion string  `json:"conversion"`
			AlphaRule  string  `json:"alpha_rule"`
			Sigma      float64 `json:"sigma"`
			Ratio      float64 `json:"ratio"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Rows) != 4*3*3 {
		t.Fatalf("%d rows, want 36", len(v.Rows))
	}
	for _, r := range v.Rows {
		if r.Conversion == "improved" && !(r.Ratio < 1) {
			t.Errorf("%s eps=%v: improved ratio %v", r.Algorithm, r.Eps, r.Ratio)
		}
	}
	interleaved := v.Rows[len(v.Rows)-2] // eps = 10, paper, exact alpha
	code, out, errOut = runCLI("account", "shuffleg", "--algorithm", "interleaved", "--sigma", fmt.Sprint(interleaved.Sigma),
		"--target-delta", "1e-6", "--G", "10", "--epochs", "50", "--n", "1000", "--nd", "500", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var back struct {
		Rows []struct {
			Eps float64 `json:"eps"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &back); err != nil {
		t.Fatal(err)
	}
	if got := back.Rows[0].Eps; got > 10 || got < 10*(1-1e-9) {
		t.Errorf("eps at the calibrated sigma %v = %v, want 10", interleaved.Sigma, got)
	}
}

// TestAccountBadInput checks that bad input exits with code 2, names the
// flag, the value and the rule, and prints nothing on stdout.
func TestAccountBadInput(t *testing.T) {
	tests := []struct {
		args []string
		want []string // substrings of the error
	}{
		{[]string{"compose", "--step-eps", "0", "--steps", "3"}, []string{"--step-eps", "0", "> 0"}},
		{[]string{"compose", "--step-eps", "-0.5", "--steps", "3"}, []string{"--step-eps", "-0.5", "> 0"}},
		{[]string{"compose", "--step-eps", "NaN", "--steps", "3"}, []string{"--step-eps", "NaN"}},
		{[]string{"compose", "--step-eps", "Inf", "--steps", "3"}, []string{"--step-eps", "+Inf"}},
		{[]string{"compose", "--step-eps", "0.1", "--step-delta", "1", "--steps", "3"}, []string{"--step-delta", "1", "[0, 0.5]"}},
		{[]string{"compose", "--step-eps", "0.1", "--step-delta", "-1e-9", "--steps", "3"}, []string{"--step-delta", "[0, 0.5]"}},
		{[]string{"compose", "--step-eps", "0.1", "--steps", "0"}, []string{"--steps = 0: must be an integer in [1, "}},
		{[]string{"compose", "--step-eps", "0.1", "--steps", "3", "--composition", "general", "--delta-prime", "0"}, []string{"--delta-prime", "0", "(0, 1)"}},
		{[]string{"compose", "--step-eps", "0.1", "--steps", "3", "--composition", "optimal", "--delta-prime", "1"}, []string{"--delta-prime", "1", "(0, 1)"}},
		{[]string{"compose", "--step-eps", "0.1", "--steps", "3", "--composition", "advanced"}, []string{"--composition", "advanced", "simple, general, optimal"}},
		{[]string{"compose", "--step-eps", "0.1", "--steps", "3", "--format", "yaml"}, []string{"--format", "yaml"}},
		{[]string{"compose", "--steps", "3"}, []string{"--step-eps is required"}},
		{[]string{"compose", "frobnicate"}, []string{"no arguments"}},
		{[]string{"queries", "--step-eps", "0.1", "--budget-eps", "0", "--composition", "simple"}, []string{"--budget-eps", "0"}},
		{[]string{"step-eps", "--budget-eps", "Inf", "--steps", "3", "--composition", "simple"}, []string{"--budget-eps", "+Inf"}},
		{[]string{"step-eps", "--budget-eps", "5e-324", "--steps", "10", "--step-delta", "1e-7"}, []string{"--budget-eps = 5e-324", "over 10 steps"}},
		{[]string{"step-eps", "--budget-eps", "5e-324", "--steps", "10", "--composition", "simple"}, []string{"--budget-eps = 5e-324", "over 10 steps"}},
		{[]string{"gaussian", "--sigma", "0", "--steps", "1", "--target-delta", "1e-5"}, []string{"--sigma", "0", "> 0"}},
		{[]string{"gaussian", "--sigma", "-2", "--steps", "1", "--target-delta", "1e-5"}, []string{"--sigma", "-2"}},
		{[]string{"gaussian", "--sigma", "1", "--steps", "1", "--target-delta", "1e-5", "--alpha", "1"}, []string{"--alpha", "1", "> 1"}},
		{[]string{"gaussian", "--sigma", "1", "--steps", "1", "--target-delta", "1e-5", "--alpha", "0.5"}, []string{"--alpha", "0.5", "> 1"}},
		{[]string{"gaussian", "--sigma", "1", "--steps", "3", "--target-delta", "1e-5", "--alpha", "NaN"}, []string{"--alpha = NaN", "> 1"}},
		{[]string{"gaussian", "--sigma", "1", "--steps", "3", "--target-delta", "1e-5", "--alpha", "-1"}, []string{"--alpha = -1", "> 1"}},
		// --alpha 0 was taken for no --alpha, the order that minimises ε.
		{[]string{"gaussian", "--sigma", "1", "--steps", "3", "--target-delta", "1e-5", "--alpha", "0"}, []string{"--alpha = 0", "> 1"}},
		// Overflows of what the flags make, said of the flag, not of
		// --rdp or --sigma.
		{[]string{"gaussian", "--sigma", "5", "--steps", "100", "--target-delta", "1e-5", "--alpha", "1e308"}, []string{"--alpha = 1e+308", "overflows"}},
		{[]string{"gaussian", "--sigma", "5", "--steps", "100", "--target-delta", "1e-5", "--sensitivity", "1e308"}, []string{"--sensitivity = 1e+308", "overflows"}},
		{[]string{"shuffleg", "--algorithm", "interleaved", "--target-delta", "1e-6", "--G", "10", "--epochs", "5", "--n", "100", "--nd", "50", "--sigma", "1e-320"}, []string{"--sigma = 1e-320", "zCDP slope"}},
		{[]string{"gaussian", "--sigma", "1", "--steps", "1", "--target-delta", "0"}, []string{"--target-delta = 0", "must be > 0 to convert Renyi DP"}},
		{[]string{"gaussian", "--sigma", "1", "--target-delta", "1e-5"}, []string{"--steps is required"}},
		{[]string{"gnmax", "--target-eps", "0.2676", "--target-delta", "3e-4", "--gnmax-search", "grid", "--conversion", "improved"}, []string{"--gnmax-search grid"}},
		{[]string{"gnmax", "--target-eps", "NaN", "--target-delta", "3e-4"}, []string{"--target-eps", "NaN"}},
		{[]string{"gnmax", "--target-eps", "1e308", "--target-delta", "3e-4", "--gnmax-search", "exact"}, []string{"--target-eps = 1e+308", "too large"}},
		{[]string{"shuffleg", "--algorithm", "pub-priv", "--target-eps", "1", "--target-delta", "1e-6", "--G", "10", "--epochs", "50", "--S", "50"}, []string{"--S", "50"}},
		{[]string{"shuffleg", "--algorithm", "interleaved", "--target-eps", "1", "--target-delta", "1e-6", "--G", "10", "--epochs", "50", "--n", "10", "--nd", "0"}, []string{"--nd", "0"}},
		{[]string{"shuffleg", "--algorithm", "public-only", "--target-eps", "1", "--target-delta", "1e-6", "--G", "10", "--epochs", "50"}, []string{"--algorithm", "public-only"}},
		{[]string{"shuffleg", "--target-eps", "1", "--sigma", "5", "--target-delta", "1e-6", "--G", "10", "--epochs", "50"}, []string{"exactly one"}},
		{[]string{"shuffleg", "--sigma", "0", "--target-delta", "1e-6", "--G", "10", "--epochs", "50"}, []string{"--sigma", "0"}},
		// --G was refused as "clip", with exit 1.
		{[]string{"shuffleg", "--target-eps", "1", "--target-delta", "1e-6", "--G", "NaN", "--epochs", "5"}, []string{"--G = NaN", "finite clipping norm > 0"}},
		{[]string{"shuffleg", "--target-eps", "1", "--target-delta", "1e-6", "--G", "1e200", "--epochs", "5"}, []string{"--G = 1e+200", "must be in [1e-150, 1e150]"}},
		{[]string{"shuffleg", "--target-eps", "1", "--target-delta", "1e-6", "--G", "10", "--epochs", "5", "--algorithm="}, []string{"--algorithm", "empty"}},
		// Flags no algorithm named reads, and an algorithm named twice,
		// were accounted as given: ignored, or a row each.
		{[]string{"shuffleg", "--target-eps", "1", "--target-delta", "1e-6", "--G", "10", "--epochs", "5", "--S", "3"}, []string{"--S", "priv-pub and pub-priv"}},
		{[]string{"shuffleg", "--target-eps", "1", "--target-delta", "1e-6", "--G", "10", "--epochs", "5", "--algorithm", "priv-pub", "--nd", "3"}, []string{"--n and --nd", "interleaved"}},
		{[]string{"shuffleg", "--target-eps", "1", "--target-delta", "1e-6", "--G", "10", "--epochs", "5", "--algorithm", "all,dp"}, []string{"--algorithm", "dp-shuffleg is named twice"}},
		// One epoch leaves no switch: it said "--S = 0: must be ... in [1, 0]".
		{[]string{"shuffleg", "--target-eps", "1", "--target-delta", "1e-6", "--G", "10", "--epochs", "1", "--algorithm", "all"}, []string{"--epochs = 1", "must be >= 2"}},
		{[]string{"rr", "--K", "0", "--m", "1", "--rr-composition", "simple"}, []string{"--K", "0"}},
		{[]string{"rr", "--K", "11", "--Delta", "1.5", "--m", "1", "--rr-composition", "simple"}, []string{"--Delta", "1.5"}},
		{[]string{"rr", "--K", "2001", "--eps", "60", "--Delta", "0.5", "--m", "2001"}, []string{"--delta (not given: its default 1-(1-Delta)^m) = 1"}},
		{[]string{"rr", "--m", "1"}, []string{"--K is required"}},
		{[]string{"frobnicate"}, []string{"unknown command", "frobnicate"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(append([]string{"account"}, tt.args...)...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d (stderr %q)", code, exitUsage, errOut)
			}
			if out != "" {
				t.Errorf("stdout not empty: %q", out)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q does not contain %q", errOut, w)
				}
			}
		})
	}
}

// TestAccountGNMaxPlot: --plot draws the figure of the targets, and
// refuses a format it cannot write. Under -short the figure is an SVG:
// encoding a PNG is most of the run's CPU, and figure's TestWriteGNMax
// writes this figure as one.
func TestAccountGNMaxPlot(t *testing.T) {
	dir := t.TempDir()
	fig := filepath.Join(dir, "b8.png")
	if testing.Short() {
		fig = filepath.Join(dir, "b8.svg")
	}
	code, _, errOut := runCLI("account", "gnmax", "--target-eps", "0.2676,0.2556", "--target-delta", "3e-4", "--plot", fig, "--mark-lambda", "34.31,35.74")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if st, err := os.Stat(fig); err != nil || st.Size() == 0 {
		t.Errorf("figure: %v", err)
	}
	if code, _, _ := runCLI("account", "gnmax", "--target-eps", "0.2676", "--target-delta", "3e-4", "--plot", filepath.Join(dir, "b8.pdf")); code != exitUsage {
		t.Errorf(".pdf: exit %d", code)
	}
}

func TestAccountDPSGD(t *testing.T) {
	out, errOut, code := darrm(t, "", "account", "dpsgd", "--sigma", "2.5", "--sampling-rate", "0.01", "--steps", "50", "--target-delta", "1e-5", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc map[string]any
	decode(t, out, &doc)
	eps, _ := doc["eps"].(float64)
	if _, ok := doc["alpha"].(float64); !ok || !(eps > 0) || doc["delta"] != 1e-5 {
		t.Errorf("JSON %v", doc)
	}
	// --epochs is epochs·n/batch steps, rounded up.
	out, _, _ = darrm(t, "", "account", "dpsgd", "--sigma", "12", "--n", "1024", "--batch", "30", "--epochs", "5", "--target-delta", "1e-4", "--format", "json")
	decode(t, out, &doc)
	if doc["steps"] != 171.0 {
		t.Errorf("5 epochs of 1024 at batch 30: %v steps, want 171", doc["steps"])
	}
	for _, args := range [][]string{
		{"--sigma", "1", "--target-delta", "1e-5", "--steps", "10"},                                        // no rate
		{"--sigma", "1", "--target-delta", "1e-5", "--sampling-rate", "0.1", "--n", "10", "--steps", "10"}, // both rates
		{"--sigma", "1", "--target-delta", "1e-5", "--sampling-rate", "1.5", "--steps", "10"},              // q > 1
		{"--sigma", "1", "--target-delta", "1e-5", "--n", "10", "--batch", "20", "--steps", "10"},          // batch > n
		{"--sigma", "1", "--target-delta", "1e-5", "--sampling-rate", "0.1", "--epochs", "2"},              // epochs without n
		{"--sigma", "-1", "--target-delta", "1e-5", "--sampling-rate", "0.1", "--steps", "10"},             // sigma < 0
	} {
		if _, errOut, code := darrm(t, "", append([]string{"account", "dpsgd"}, args...)...); code != exitUsage {
			t.Errorf("%v: exit %d: %s", args, code, errOut)
		}
	}
}

// TestFlagSpelledElsewhere: a flag that another command spells otherwise
// is answered with this command's spelling (issue 46: account pate
// --delta, whose delta is --target-delta).
func TestFlagSpelledElsewhere(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"account", "pate", "--delta", "1e-5"}, "did you mean --target-delta?"},
		{[]string{"account", "queries", "--eps", "1"}, "did you mean one of --step-eps, --budget-eps?"},
	} {
		if _, stderr, code := darrm(t, "", c.args...); code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %s", c.args, code, stderr)
		}
	}
}

// TestAccountQueriesTotalWithinBudget: the total account queries prints
// for its count is within the budget, by the composition that fits: a
// count that fits by simple composition alone printed the total of the
// composition asked for, above the budget's delta (optimal's (0.99937,
// 1.0999945e-05) for 10 steps of (0.1, 1e-6) in (10, 1e-5)).
func TestAccountQueriesTotalWithinBudget(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		method string
	}{
		{[]string{"--step-eps", "0.1", "--step-delta", "1e-6", "--budget-eps", "10", "--budget-delta", "1e-5", "--delta-prime", "1e-6", "--composition", "optimal"}, "simple"},
		{[]string{"--step-eps", "0.1", "--step-delta", "1e-7", "--budget-eps", "2", "--budget-delta", "1e-5", "--delta-prime", "1e-6", "--composition", "optimal"}, "optimal"},
		{[]string{"--step-eps", "0.1", "--step-delta", "1e-7", "--budget-eps", "2", "--budget-delta", "1e-5", "--delta-prime", "1e-6", "--composition", "general"}, "general"},
	} {
		out, e, code := darrm(t, "", append([]string{"account", "queries", "--format", "json"}, tc.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, e)
		}
		doc := decodeJSON(t, out)
		if doc["method"] != tc.method || number(t, doc, "eps") > number(t, doc, "budget_eps") || number(t, doc, "delta") > number(t, doc, "budget_delta") || number(t, doc, "queries") < 1 {
			t.Errorf("%v: %s, want a total within the budget by %s", tc.args, out, tc.method)
		}
	}
}

// TestAccountQueriesColumns checks that account queries writes the same
// CSV columns whether or not a query fits the budget: a sweep of budgets
// concatenates its rows under one header. No query fits (0.1, 0.02) at
// 0.2676 a query; 43 fit (10, 0.02).
func TestAccountQueriesColumns(t *testing.T) {
	var headers [][]string
	for _, budget := range []string{"0.1", "10"} {
		code, out, errOut := runCLI("account", "queries", "--step-eps", "0.2676", "--step-delta", "3e-4",
			"--budget-eps", budget, "--budget-delta", "0.02", "--format", "csv")
		if code != exitOK {
			t.Fatalf("budget %s: exit %d: %s", budget, code, errOut)
		}
		rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil || len(rows) != 2 {
			t.Fatalf("budget %s: %d rows, %v:\n%s", budget, len(rows), err, out)
		}
		headers = append(headers, rows[0])
	}
	if !slices.Equal(headers[0], headers[1]) {
		t.Errorf("columns differ: no query fits: %q; 43 fit: %q", headers[0], headers[1])
	}
}
