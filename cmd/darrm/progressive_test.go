package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/statedir"
	"github.com/darrm/darrm/votefile"
)

// TestProgressiveCommands: plan --mechanism progressive-gnmax on proxy
// votes prints an aggregate line that runs as pasted (VOTES replaced),
// whose labels state the mechanism, its settings and the filter's budget,
// which the release publishes and account pate --labels publishes again,
// refusing a header edited to another budget; confident-gnmax charged when
// drawn (--accounting gdp-filter) is its one-level form; bad settings, and
// a budget whose filter holds no query, are refused naming their flag.
func TestProgressiveCommands(t *testing.T) {
	t.Setenv(statedir.Env, t.TempDir())
	dir := t.TempDir()
	votes := countsFile(t, dir, "votes.csv", 400, func(i int) []int { return plurality(90+(i*37)%161, i%10) })
	proxy := countsFile(t, dir, "proxy.csv", 400, func(i int) []int { return plurality(90+(i*53)%161, (i*3)%10) })
	budget := []string{"--budget-eps", "2", "--budget-delta", "1e-5"}
	out, e, code := darrm(t, "", append([]string{"plan", "--mechanism", "progressive-gnmax", "--votes", proxy, "--votes-are", "public", "--format", "json"}, budget...)...)
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, e)
	}
	doc := decodeJSON(t, out)
	line, _ := doc["aggregate"].(string)
	if !strings.HasPrefix(line, "darrm aggregate VOTES ") || number(t, doc, "expected_answered") <= 0 || number(t, doc, "low_consensus_agreement") < number(t, doc, "low_consensus_baseline") {
		t.Fatalf("plan: %s", out)
	}
	labels := filepath.Join(dir, "labels.csv")
	var args []string
	for _, w := range strings.Fields(line)[1:] {
		switch w {
		case "VOTES":
			w = votes
		case "labels.csv":
			w = labels
		}
		args = append(args, w)
	}
	out, e, code = darrm(t, "", append(args, "--seed", "1", "--format", "json")...)
	if code != 0 && code != 4 {
		t.Fatalf("%v: exit %d: %s", args, code, e)
	}
	sum := decodeJSON(t, out)
	pub, _ := sum["publish"].(map[string]any)
	if number(t, sum, "answered") < 1 || pub == nil || pub["eps"] != 2.0 || pub["delta"] != 1e-5 || sum["filter"] == nil {
		t.Fatalf("summary: %s", out)
	}
	// The filter's μ_B² is that of a μ-GDP mechanism (2, 1e-5)-DP by Dong,
	// Roth and Su's curve, less a sliver of δ set aside for the discrete
	// Gaussian's tails; the run used some of it and no more.
	filter, _ := sum["filter"].(map[string]any)
	if spent, muB2, ref := number(t, filter, "mu2_spent"), number(t, filter, "mu2_budget"), gdpMu(2, 1e-5); !(spent > 0 && spent <= muB2 && muB2 <= ref*ref && muB2 > 0.999*ref*ref) {
		t.Errorf("filter: mu^2 spent %v of mu_B^2 %v, want within mu^2 = %v of (2, 1e-5): %s", spent, muB2, ref*ref, out)
	}
	b, err := os.ReadFile(labels)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"mechanism":"progressive-gnmax"`, `"levels":[`, `"kappa":`, `"accounting":"gdp-filter"`, `"total":{"eps":2,"delta":0.00001,"argument":"gdp-filter budget","budget_eps":2,"budget_delta":0.00001}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("label header lacks %s:\n%.600s", want, b)
		}
	}
	out, e, code = darrm(t, "", "account", "pate", votes, "--labels", labels, "--target-delta", "1e-5", "--format", "json")
	if acc := decodeJSON(t, out); code != 0 || acc["eps_guarantee"] != 2.0 || acc["delta_guarantee"] != 1e-5 || acc["guarantee_method"] != "gdp-filter budget" {
		t.Fatalf("account pate: exit %d: %s %s", code, out, e)
	}
	// Another δ than the budget's is refused, naming the flag: it was
	// reported at the budget's δ, silently.
	if _, e, code := darrm(t, "", "account", "pate", votes, "--labels", labels, "--target-delta", "1e-6"); code != 2 || !containsFlat(e, "--target-delta") || !containsFlat(e, "must be the delta of the Gaussian-DP filter's budget, 1e-05") {
		t.Errorf("account pate --target-delta 1e-6 of labels held to (2, 1e-5): exit %d: %s", code, e)
	}
	edited := filepath.Join(dir, "edited.csv")
	if err := os.WriteFile(edited, []byte(strings.Replace(string(b), `"budget_eps":2`, `"budget_eps":3`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, e, code := darrm(t, "", "account", "pate", votes, "--labels", edited, "--target-delta", "1e-5"); code != 2 || !containsFlat(e, "the header does not describe this release") {
		t.Errorf("an edited budget: exit %d: %s", code, e)
	}
	// A header edited throughout, budget, total and per-query guarantee
	// together: that of a release of the same settings on a budget too
	// small for the draws of these labels' rows.
	small := filepath.Join(dir, "small.csv")
	smallArgs := append([]string(nil), args...)
	for i, a := range smallArgs {
		if a == "--budget-eps" {
			smallArgs[i+1] = "0.5"
		}
		if a == labels {
			smallArgs[i] = small
		}
	}
	if _, e, code := darrm(t, "", append(smallArgs, "--seed", "1")...); code != 0 && code != 4 {
		t.Fatalf("%v: exit %d: %s", smallArgs, code, e)
	}
	if _, e, code := darrm(t, "", "account", "pate", votes, "--labels", small, "--target-delta", "1e-5"); code != 0 {
		t.Fatalf("account pate of the release on (0.5, 1e-5): exit %d: %s", code, e)
	}
	sb, err := os.ReadFile(small)
	if err != nil {
		t.Fatal(err)
	}
	header := func(b []byte) string { return strings.SplitAfterN(string(b), "\n", 3)[1] }
	if err := os.WriteFile(edited, []byte(strings.Replace(string(b), header(b), header(sb), 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, e, code := darrm(t, "", "account", "pate", votes, "--labels", edited, "--target-delta", "1e-5"); code != 2 || !containsFlat(e, "the budget is not the one its release was held to") {
		t.Errorf("a header edited throughout to the budget (0.5, 1e-5): exit %d: %s", code, e)
	}
	// Confident-GNMax charged when drawn.
	charged := filepath.Join(dir, "charged.csv")
	if _, e, code := darrm(t, "", append([]string{"aggregate", votes, "--mechanism", "confident-gnmax", "--threshold", "200", "--sigma1", "150", "--sigma2", "40", "--delta", "1e-5",
		"--accounting", "gdp-filter", "--seed", "1", "--out", charged}, budget...)...); code != 0 && code != 4 {
		t.Fatalf("confident-gnmax --accounting gdp-filter: exit %d: %s", code, e)
	}
	if b, _ := os.ReadFile(charged); !strings.Contains(string(b), `"levels":[40],"kappa":0,"threshold":200,"sigma1":150`) {
		t.Errorf("charged when drawn: %.400s", b)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--levels", "40,50", "--kappa", "1"}, "--levels"},
		{[]string{"--levels", "40,x", "--kappa", "1"}, "--levels"},
		{[]string{"--levels", "80,40", "--kappa", "-1"}, "--kappa"},
		{[]string{"--levels", "80,40", "--kappa", "1", "--give-up", "2"}, "--give-up"},
		{[]string{"--levels", "80,40", "--kappa", "1", "--threshold", "100"}, "--threshold"},
		{[]string{"--levels", "80,40"}, "--kappa is required"},
		{[]string{"--levels", "80,40", "--kappa", "1", "--accounting", "data-independent"}, "charged per draw"},
		{[]string{"--levels", "80,40", "--kappa", "1", "--sigma2", "40"}, "--sigma2 is not a setting of progressive-gnmax"},
	} {
		args := append([]string{"aggregate", votes, "--mechanism", "progressive-gnmax", "--out", filepath.Join(dir, "bad.csv")}, tc.args...)
		if !strings.Contains(strings.Join(tc.args, " "), "required") {
			args = append(args, budget...)
		}
		if _, e, code := darrm(t, "", args...); code != 2 || !containsFlat(e, tc.want) {
			t.Errorf("%v: exit %d: %s", tc.args, code, e)
		}
	}
	if _, e, code := darrm(t, "", "aggregate", votes, "--mechanism", "progressive-gnmax", "--levels", "80,40", "--kappa", "1", "--out", filepath.Join(dir, "bad.csv")); code != 2 || !containsFlat(e, "--mechanism progressive-gnmax needs --budget-eps and --budget-delta") {
		t.Errorf("no budget: exit %d: %s", code, e)
	}
	// A budget whose filter holds no query: at eps 100 the share of delta
	// for the discrete Gaussian's tails is under nine draws' tails.
	if _, e, code := darrm(t, "", "aggregate", votes, "--mechanism", "progressive-gnmax", "--levels", "80,71,63,56,50,44,39,35", "--kappa", "1.45",
		"--threshold", "200", "--sigma1", "200", "--budget-eps", "100", "--budget-delta", "1e-5", "--out", filepath.Join(dir, "bad.csv")); code != 2 || !containsFlat(e, "--budget-eps = 100") || !containsFlat(e, "tails") {
		t.Errorf("a budget that holds no query: exit %d: %s", code, e)
	}
	if _, e, code := darrm(t, "", "aggregate", votes, "--mechanism", "progressive-gnmax", "--levels", "80,40", "--kappa", "1",
		"--budget-eps", "2", "--budget-delta", "0", "--out", filepath.Join(dir, "bad.csv")); code != 2 || !containsFlat(e, "--budget-delta = 0") {
		t.Errorf("a budget of delta 0: exit %d: %s", code, e)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.csv")); err == nil {
		t.Error("a refused release wrote labels")
	}
}

// TestProgressiveLedger: a release charged per draw to a ledger open to
// any use is charged in units reserved before the draws and publishes the
// ledger's budget; a declared use of it is refused at ledger init, saying
// why, and a ledger whose filter has no Gaussian-DP part refuses it.
func TestProgressiveLedger(t *testing.T) {
	t.Setenv(statedir.Env, t.TempDir())
	dir := t.TempDir()
	votes := countsFile(t, dir, "votes.csv", 300, func(i int) []int { return plurality(120+i%130, i%10) })
	budget := []string{"--budget-eps", "2", "--budget-delta", "1e-5"}
	mech := []string{"--mechanism", "progressive-gnmax", "--levels", "80,60,45", "--kappa", "1.2", "--give-up", "0.5"}
	led := filepath.Join(dir, "open.ledger")
	if _, e, code := darrm(t, "", append([]string{"ledger", "init", led, "--votes", votes, "--filter", "gdp-filter"}, budget...)...); code != 0 {
		t.Fatal(e)
	}
	labels := filepath.Join(dir, "labels.csv")
	out, e, code := darrm(t, "", append(append([]string{"aggregate", votes, "--ledger", led, "--out", labels, "--format", "json"}, mech...), budget...)...)
	if code != 0 && code != 4 {
		t.Fatalf("exit %d: %s", code, e)
	}
	sum := decodeJSON(t, out)
	if pub, _ := sum["publish"].(map[string]any); pub == nil || pub["eps"] != 2.0 {
		t.Errorf("publish: %s", out)
	}
	b, _ := os.ReadFile(led)
	if lines := strings.Count(string(b), "\n"); lines < 3 || lines > 4+int(number(t, sum, "released"))/32 {
		t.Errorf("%d ledger lines for %v queries", lines, sum["released"])
	}
	if _, e, code := darrm(t, "", "account", "pate", votes, "--labels", labels, "--target-delta", "1e-5", "--ledger", led); code != 0 {
		t.Errorf("account pate --ledger: exit %d: %s", code, e)
	}
	if _, e, code := darrm(t, "", append(append([]string{"ledger", "init", filepath.Join(dir, "use.ledger"), "--votes", votes}, mech...), budget...)...); code != 2 || !containsFlat(e, "a fixed count cannot count an adaptive run") {
		t.Errorf("a declared use: exit %d: %s", code, e)
	}
	t.Setenv(statedir.Env, t.TempDir()) // another analyst's record: one ledger per ensemble in each
	zcdp := filepath.Join(dir, "zcdp.ledger")
	if _, e, code := darrm(t, "", append([]string{"ledger", "init", zcdp, "--votes", votes, "--filter", "zcdp-filter"}, budget...)...); code != 0 {
		t.Fatal(e)
	}
	if _, e, code := darrm(t, "", append(append([]string{"aggregate", votes, "--ledger", zcdp, "--out", filepath.Join(dir, "z.csv")}, mech...), budget...)...); code == 0 || code == 4 || !containsFlat(e, "gdp-filter") {
		t.Errorf("a zcdp-filter ledger: exit %d: %s", code, e)
	}
}

// gdpMu returns the μ of the μ-GDP mechanism that is (eps, delta)-DP and
// no more: δ(ε) = Φ(-ε/μ + μ/2) - e^ε·Φ(-ε/μ - μ/2) (Dong, Roth and Su
// 2022, Corollary 2.13), which rises with μ, solved by bisection.
func gdpMu(eps, delta float64) float64 {
	phi := func(x float64) float64 { return math.Erfc(-x/math.Sqrt2) / 2 }
	lo, hi := 1e-3, 50.0
	for range 200 {
		mu := (lo + hi) / 2
		if phi(-eps/mu+mu/2)-math.Exp(eps)*phi(-eps/mu-mu/2) > delta {
			hi = mu
		} else {
			lo = mu
		}
	}
	return lo
}

// TestProgressiveLabelFileWitnessesDraws: the label file of a release
// charged per draw witnesses what its labels' draws cost, exactly, not
// their number nor a floor. Its run's lines count units of the draws'
// charge (about 10^-6 of μ² each), so a settlement of as many units as
// the file has labels, written by hand after the run was killed past its
// reservation, lowered the run to almost nothing while its label file,
// given as a witness, vouched for it (the ninth audit of issue 87: 143
// labels delivered where one run's 80 were allowed); a floor from its
// labels' first draws still let a settlement of half the draws' cost
// pass (102 where about 70). Now each row states the units its run's
// draws had taken (the units column), and the last row's are the
// witness's: ledger verify and a release refuse a settlement one unit
// below them, and accept one at them; the file cut after a row (a
// stream cut) witnesses that row's units.
func TestProgressiveLabelFileWitnessesDraws(t *testing.T) {
	t.Setenv(statedir.Env, t.TempDir())
	t.Setenv("DARRM_WITNESS_DIR", "")
	dir := t.TempDir()
	votes := countsFile(t, dir, "votes.csv", 300, func(i int) []int { return plurality(120+i%130, i%10) })
	budget := []string{"--budget-eps", "0.5", "--budget-delta", "1e-5"}
	// unitsOf returns the label file's labels and each row's units.
	unitsOf := func(t *testing.T, path string) []int {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		lr, err := votefile.NewLabelReader(f, path)
		if err != nil {
			t.Fatal(err)
		}
		if m := lr.Meta(); m == nil || !m.LedgerUnits {
			t.Fatalf("%s: header %+v does not say that its rows state units", path, m)
		}
		var units []int
		for lr.Next() {
			units = append(units, lr.Row().Units)
		}
		if err := lr.Err(); err != nil {
			t.Fatal(err)
		}
		return units
	}
	for _, c := range []struct {
		name string
		mech []string
	}{
		{"progressive-gnmax", []string{"--mechanism", "progressive-gnmax", "--levels", "80,60,45", "--kappa", "1.2", "--give-up", "0.5", "--threshold", "150", "--sigma1", "120"}},
		{"confident-gnmax charged per draw", []string{"--mechanism", "confident-gnmax", "--threshold", "200", "--sigma1", "150", "--sigma2", "40", "--delta", "1e-5", "--accounting", "gdp-filter"}},
		{"gnmax charged per draw", []string{"--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-5", "--accounting", "gdp-filter"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(statedir.Env, t.TempDir())
			led := filepath.Join(t.TempDir(), "open.ledger")
			if _, e, code := darrm(t, "", append([]string{"ledger", "init", led, "--votes", votes, "--filter", "gdp-filter"}, budget...)...); code != 0 {
				t.Fatal(e)
			}
			labels := filepath.Join(dir, c.name+".csv")
			if _, e, code := darrm(t, "", append(append([]string{"aggregate", votes, "--ledger", led, "--out", labels}, c.mech...), budget...)...); code != 0 && code != 4 {
				t.Fatalf("exit %d: %s", code, e)
			}
			if _, e, code := darrm(t, "", "ledger", "verify", led, "--witness", labels); code != 0 {
				t.Fatalf("the run's own settlement, with its label file: exit %d: %s", code, e)
			}
			raw, err := os.ReadFile(led)
			if err != nil {
				t.Fatal(err)
			}
			units := unitsOf(t, labels)
			n := len(units)
			if n < 3 {
				t.Fatalf("%d labels released", n)
			}
			// The run killed after its reservation: its settlement never
			// written (the honest one settled the last row's units).
			ls := strings.SplitAfter(string(raw), "\n")
			if !strings.Contains(ls[len(ls)-2], fmt.Sprintf(`"queries":%d,"final":true`, units[n-1])) {
				t.Fatalf("the run settled %s, its last row states %d units", ls[len(ls)-2], units[n-1])
			}
			killed := []byte(strings.Join(ls[:len(ls)-2], ""))
			// A stream cut after its second row: that row's units.
			b, err := os.ReadFile(labels)
			if err != nil {
				t.Fatal(err)
			}
			cut := filepath.Join(dir, c.name+"-cut.csv")
			if err := os.WriteFile(cut, []byte(strings.Join(strings.SplitAfter(string(b), "\n")[:4], "")), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv(statedir.Env, t.TempDir()) // an analyst with no record: the witness alone can tell
			for _, f := range []struct {
				witness       string
				labels, units int
			}{{labels, n, units[n-1]}, {cut, 2, units[1]}} {
				for _, settled := range []int{f.units, f.units - 1, f.labels} {
					if err := os.WriteFile(led, killed, 0o644); err != nil {
						t.Fatal(err)
					}
					appendForged(t, led, 0, func(s map[string]any) { s["queries"], s["final"] = settled, true })
					name := fmt.Sprintf("%d labels of %d units, settled at %d", f.labels, f.units, settled)
					if _, e, code := darrm(t, "", "ledger", "verify", led); code != 0 {
						t.Fatalf("%s, without the witness (a file cannot tell who wrote it): exit %d: %s", name, code, e)
					}
					_, e, code := darrm(t, "", "ledger", "verify", led, "--witness", f.witness)
					if settled == f.units {
						if code != 0 {
							t.Errorf("%s: ledger verify --witness: exit %d: %s", name, code, e)
						}
						continue
					}
					if code != exitUsage || !containsFlat(e, fmt.Sprintf("counts %d units of run", settled)) || !containsFlat(e, fmt.Sprintf("but the %d labels of that label file cost at least %d units", f.labels, f.units)) {
						t.Errorf("%s: ledger verify --witness: exit %d: %s", name, code, e)
					}
					out := filepath.Join(dir, c.name+"-more.csv")
					if _, e, code := darrm(t, "", append(append([]string{"aggregate", votes, "--ledger", led, "--out", out, "--witness", f.witness}, c.mech...), budget...)...); code != exitUsage || !containsFlat(e, "the run's count was lowered after its labels left") {
						t.Errorf("%s: a release given the label file: exit %d: %s", name, code, e)
					}
					if _, err := os.Stat(out); err == nil {
						t.Errorf("%s: a release on the lowered ledger wrote labels", name)
					}
				}
			}
		})
	}
}
