package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/experiments/datasets"
)

// small is a quick synthetic experiment for the CLI tests.
var small = []string{"shuffleg", "--task", "mean", "--dataset", "synthetic", "--n", "40", "--d", "5", "--epochs", "3", "--runs", "2", "--seed", "7"}

func TestShufflegJSON(t *testing.T) {
	code, out, stderr := runCLI(append(small, "--target-eps", "5", "--lr-grid", "0.1,0.01", "--format", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Results []map[string]any `json:"results"`
		Seeded  bool             `json:"seeded"`
		Notes   []string         `json:"notes"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(doc.Results) != 5 || !doc.Seeded {
		t.Fatalf("%d results, seeded %v", len(doc.Results), doc.Seeded)
	}
	for _, r := range doc.Results {
		for _, k := range []string{"algo", "final_loss_mean", "final_loss_std", "sigma", "eps", "delta", "lr"} {
			if _, ok := r[k]; !ok {
				t.Fatalf("result %v has no %q", r["algo"], k)
			}
		}
		eps := r["eps"].(float64)
		if r["algo"] == "public-only" {
			if r["sigma"].(float64) != 0 || eps != 0 {
				t.Errorf("public-only: sigma %v eps %v", r["sigma"], eps)
			}
		} else if eps > 5 || eps < 5*(1-1e-9) || r["sigma"].(float64) <= 0 {
			t.Errorf("%v: eps %v sigma %v, want the target 5", r["algo"], eps, r["sigma"])
		}
	}
	if !strings.Contains(strings.Join(doc.Notes, "\n"), "NOT for release") {
		t.Errorf("seeded output does not say it is not for release: %v", doc.Notes)
	}
}

// TestShufflegTableCurvesPlot: the table, the curves' CSV and the plot,
// an SVG (writing one as PNG is curveplot's tests').
func TestShufflegTableCurvesPlot(t *testing.T) {
	dir := t.TempDir()
	curves, plot := filepath.Join(dir, "c.csv"), filepath.Join(dir, "p.svg")
	code, out, stderr := runCLI(append(small, "--target-eps", "1", "--lr", "0.1", "--algorithm", "dp,interleaved", "--curves", curves, "--plot", plot, "--plot-metric", "excess")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"DP-RR", "Interleaved-RR", "paper", "not a private release"} {
		if !strings.Contains(unwrapped(out), want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(curves)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); len(lines) != 1+2*4 || !strings.HasPrefix(lines[0], "algo,label,epoch,loss_mean") {
		t.Fatalf("curves CSV: %d lines, header %q", len(lines), lines[0])
	}
	if b, err := os.ReadFile(plot); err != nil || !strings.Contains(string(b), "<svg") {
		t.Fatalf("plot: %v", err)
	}
	code, out, _ = runCLI(append(small, "--target-eps", "1", "--lr", "0.1", "--algorithm", "dp", "--format", "csv")...)
	if code != 0 || !strings.HasPrefix(out, "algo,label,epoch") {
		t.Fatalf("--format csv: exit %d, %q", code, out)
	}
}

func TestShufflegNonContractive(t *testing.T) {
	code, _, stderr := runCLI(append(small, "--target-eps", "5", "--lr", "1.5", "--algorithm", "dp")...)
	if code != exitUsage || !strings.Contains(stderr, "--allow-noncontractive") || !strings.Contains(stderr, "not contractive") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, out, stderr := runCLI(append(small, "--target-eps", "5", "--lr", "1.5", "--algorithm", "dp", "--allow-noncontractive")...)
	if code != 0 || !strings.Contains(out, "does NOT hold") || !strings.Contains(out, "(!)") {
		t.Fatalf("exit %d: %s%s", code, out, stderr)
	}
}

// TestShufflegNonContractiveRates: learning rates of which none may run,
// a fixed one or a whole grid above the contraction bound, are a usage
// error that names the flag, the rate and the bound, and says how to run
// them anyway (a grid exited 1 without naming --lr-grid).
func TestShufflegNonContractiveRates(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--lr", "1.5"}, "--lr: algorithm dp-shuffleg: learning rate 1.5 > 1 = 1/L*"},
		{[]string{"--lr-grid", "3,1.5"}, "--lr-grid: algorithm dp-shuffleg: learning rate 1.5 > 1 = 1/L*"},
	} {
		code, out, stderr := runCLI(append(small, append([]string{"--target-eps", "5", "--algorithm", "dp"}, tc.args...)...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "pass --allow-noncontractive") || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, out, stderr, tc.want)
		}
	}
}

func TestShufflegBadInput(t *testing.T) {
	dir := t.TempDir()
	plot := filepath.Join(dir, "never.png")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--target-eps", "0"}, "--target-eps = 0: must be a finite number > 0"},
		{[]string{"--target-eps", "-1"}, "--target-eps = -1"},
		{[]string{"--target-eps", "NaN"}, "--target-eps = NaN"},
		{[]string{"--target-eps", "Inf"}, "--target-eps = +Inf"},
		{[]string{"--target-eps", "1", "--target-delta", "1"}, "--target-delta = 1: must be in [0, 0.5]"},
		{[]string{"--target-eps", "1", "--target-delta", "0"}, "--target-delta = 0"},
		{[]string{"--target-eps", "1", "--p", "0"}, "--p = 0: must be in (0, 1]"},
		{[]string{"--target-eps", "1", "--p", "1.2"}, "--p = 1.2"},
		{[]string{"--target-eps", "1", "--clip", "Inf"}, "--clip = +Inf"},
		{[]string{"--target-eps", "1", "--runs", "0"}, "--runs = 0"},
		{[]string{"--target-eps", "1", "--algorithm", "dp,foo"}, `algorithm "foo"`},
		{[]string{"--target-eps", "1", "--order", "xx"}, `order "xx"`},
		{[]string{"--target-eps", "1", "--lr", "0.1", "--lr-grid", "0.1"}, "give one of them"},
		{[]string{"--target-eps", "1", "--lr-grid", "0.1,x"}, `--lr-grid: value "x"`},
		{[]string{"--target-eps", "1", "--lr", "-0.1"}, "--lr = -0.1"},
		{[]string{"--target-eps", "1", "--conversion", "best"}, `conversion "best"`},
		{[]string{"--target-eps", "1", "--plot", filepath.Join(dir, "x.gif")}, "must end in"},
		{[]string{"--target-eps", "1", "--lambda", "1"}, "--lambda 1: applies to the tasks ridge and lasso-logistic, not mean"},
		{[]string{"--target-eps", "1", "--alpha-rule", "table-4.3", "--conversion", "improved"}, "--alpha-rule table-4.3: Table 4.3's order is defined with the paper's conversion, not improved"},
		{[]string{"--target-eps", "1", "--format", "xml"}, "--format"},
		{[]string{"--target-eps", "1", "--p", "0.001", "--plot", plot}, "0 private"},
		{[]string{}, "--target-eps: give one eps (got 0)"},
	}
	for _, tc := range tests {
		code, out, stderr := runCLI(append(small, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
		if out != "" {
			t.Errorf("%v: printed %q on a usage error", tc.args, out)
		}
	}
	if _, err := os.Stat(plot); err == nil {
		t.Error("a plot file was written despite the error")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--task", "median", "--dataset", "synthetic"}, `--task "median"`},
		{[]string{"--task", "mean", "--dataset", "mnist"}, `dataset "mnist"`},
		{[]string{"--task", "lasso-logistic", "--dataset", "mnist69"}, "no construction"},
		{[]string{"--task", "mean", "--dataset", "mnist69", "--data-dir", dir}, "scripts/fetch-data.sh"},
		{[]string{"--task", "mean", "--dataset", "mnist69", "--n", "5"}, "--n 5: applies to the dataset synthetic only"},
		{[]string{"--task", "mean", "--dataset", "mnist69", "--d", "3"}, "--d 3: applies to the dataset synthetic only"},
		{[]string{"--task", "ridge", "--dataset", "diabetes", "--C", "3"}, "--C 3: applies to the task mean only"},
	} {
		code, _, stderr := runCLI(append([]string{"shuffleg", "--target-eps", "1"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestShufflegHelpListsCatalog keeps the help text's dataset list in step
// with the catalog.
func TestShufflegHelpListsCatalog(t *testing.T) {
	code, out, _ := runCLI("shuffleg", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, info := range datasets.Catalog() {
		if !strings.Contains(out, "\n  "+info.Name+" ") {
			t.Errorf("help does not list dataset %s", info.Name)
		}
	}
	if !strings.Contains(out, datasets.FetchScript) {
		t.Errorf("help does not name %s", datasets.FetchScript)
	}
}

// TestShufflegConversion checks that --conversion improved is used and
// named: the improved RDP conversion needs less noise for the same target.
func TestShufflegConversion(t *testing.T) {
	sigma := map[string]float64{}
	for _, conv := range []string{"paper", "improved"} {
		code, out, stderr := runCLI(append(small, "--target-eps", "5", "--lr", "0.1", "--algorithm", "dp", "--conversion", conv, "--format", "json")...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", conv, code, stderr)
		}
		var doc struct {
			Conversion string           `json:"conversion"`
			Results    []map[string]any `json:"results"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Conversion != conv {
			t.Errorf("conversion %q, want %q", doc.Conversion, conv)
		}
		sigma[conv] = doc.Results[0]["sigma"].(float64)
	}
	if !(sigma["improved"] < sigma["paper"]) {
		t.Errorf("sigma: improved %v, paper %v", sigma["improved"], sigma["paper"])
	}
}

// TestShufflegAlphaRule checks --alpha-rule: Table 4.3's order needs a
// little more noise than the exact minimiser, the report names the rule,
// and the rule is refused with the improved conversion.
func TestShufflegAlphaRule(t *testing.T) {
	sigma := map[string]float64{}
	for _, rule := range []string{"exact", "table-4.3"} {
		code, out, stderr := runCLI(append(small, "--target-eps", "5", "--lr", "0.1", "--algorithm", "dp-shuffleg", "--alpha-rule", rule, "--format", "json")...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", rule, code, stderr)
		}
		var doc struct {
			AlphaRule string           `json:"alpha_rule"`
			Results   []map[string]any `json:"results"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.AlphaRule != rule || strings.Contains(out, "seconds") {
			t.Errorf("alpha_rule %q, want %q; or the report holds a timing", doc.AlphaRule, rule)
		}
		sigma[rule] = doc.Results[0]["sigma"].(float64)
	}
	if !(sigma["table-4.3"] > sigma["exact"]) {
		t.Errorf("sigma: Table 4.3 %v, exact %v", sigma["table-4.3"], sigma["exact"])
	}
	for _, args := range [][]string{{"--alpha-rule", "table-4.3", "--conversion", "improved"}, {"--alpha-rule", "optimal"}} {
		code, _, stderr := runCLI(append(append(small, "--target-eps", "5", "--lr", "0.1"), args...)...)
		if code != exitUsage || !strings.Contains(stderr, "--alpha-rule") {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}
