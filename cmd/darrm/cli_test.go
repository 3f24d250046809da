package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cache"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/constraints"
	"github.com/darrm/darrm/gamma"
)

// darrm runs the CLI in-process. Its stderr has the error that ends it
// on one line again (joinError), so that a test matches the message's
// words wherever the printer broke its lines; TestErrorWidths checks the
// lines as printed.
func darrm(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ownState(t)
	var out, errb bytes.Buffer
	code = runWith(testMemo, context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return out.String(), joinError(errb.String()), code
}

// testMemo is the memo of the runs of darrm: the compositions, certificates
// and plans that many tests ask again are made once per test binary, as
// one run's memo makes them once; what each run keeps on disk is its own
// cache folder's (runWith).
var testMemo = new(accountant.Memo)

// joinError undoes, in stderr, the wrapping of the error that ends it
// (cli.Execute prints it last, from a line "darrm: ", its continuation
// lines indented two spaces, cliout.Wrap): each continuation line is
// joined to the line before, after a space, or with none after a path
// broken at a slash. Where the lines broke depends on the length of the
// temporary folders' names, so a phrase matched in the printed lines
// would pass or fail by chance.
func joinError(stderr string) string {
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	start := -1
	for i := len(lines) - 1; i >= 0 && start < 0; i-- {
		if strings.HasPrefix(lines[i], "darrm: ") {
			start = i
		}
	}
	if start < 0 {
		return stderr
	}
	out := slices.Clone(lines[:start+1])
	for _, l := range lines[start+1:] {
		rest, ok := strings.CutPrefix(l, "  ")
		if !ok || strings.HasPrefix(rest, " ") {
			out = append(out, l)
			continue
		}
		if last := &out[len(out)-1]; strings.HasSuffix(*last, "/") {
			*last += rest
		} else {
			*last += " " + rest
		}
	}
	return strings.Join(out, "\n") + "\n"
}

func files(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// gammaEntries returns the gamma entries of the cache folder dir: its
// files but the folder of one-bit answers (onebit), which a run fills
// from its memo, the one that every test's runs share (testMemo).
func gammaEntries(t *testing.T, dir string) []string {
	t.Helper()
	return slices.DeleteFunc(files(t, dir), func(name string) bool { return name == "onebit" })
}

// unwrapped returns a summary printed as text with its lines joined and
// its runs of spaces made one: a search for a phrase finds it wherever
// the text wrapped it (cliout.Wrap).
func unwrapped(s string) string { return strings.Join(strings.Fields(s), " ") }

// containsFlat reports whether s holds want once the line breaks and
// indents of wrapped text are gone from both, spaces included: text wraps
// a long path after a slash, where unwrapped would leave a space.
func containsFlat(s, want string) bool {
	flat := func(x string) string { return strings.Join(strings.Fields(x), "") }
	return strings.Contains(flat(s), flat(want))
}

func decode(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, s)
	}
}

func TestSolveJSONAndCache(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := darrm(t, "", "solve", "--K", "11", "--m", "3", "--format", "json", "--cache-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc map[string]any
	decode(t, out, &doc)
	for _, k := range []string{"K", "m", "eps", "Delta", "delta", "prior", "gamma", "objective", "surrogate_error", "certificate", "seconds", "cached"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	cert := doc["certificate"].(map[string]any)
	for _, k := range []string{"max_f", "budget", "ratio", "worst_counts", "configs_checked"} {
		if _, ok := cert[k]; !ok {
			t.Errorf("certificate lacks %q", k)
		}
	}
	if r := cert["ratio"].(float64); r > 1 {
		t.Errorf("ratio %v > 1", r)
	}
	if doc["eps"].(float64) != 0.1 || doc["Delta"].(float64) != 1e-5 || doc["delta_is_default"] != true {
		t.Errorf("defaults not echoed: eps %v Delta %v delta default %v", doc["eps"], doc["Delta"], doc["delta_is_default"])
	}
	if n := len(doc["gamma"].([]any)); n != 12 {
		t.Errorf("gamma has %d values, want 12", n)
	}
	if doc["cached"] != false {
		t.Error("first solve reported cached")
	}
	if len(gammaEntries(t, dir)) != 1 {
		t.Fatalf("cache holds %v, want one entry", files(t, dir))
	}
	out2, _, code := darrm(t, "", "solve", "--K", "11", "--m", "3", "--format", "json", "--cache-dir", dir)
	var doc2 map[string]any
	decode(t, out2, &doc2)
	if code != 0 || doc2["cached"] != true {
		t.Fatalf("second solve: exit %d, cached %v", code, doc2["cached"])
	}
	g1, _ := json.Marshal(doc["gamma"])
	g2, _ := json.Marshal(doc2["gamma"])
	if !bytes.Equal(g1, g2) {
		t.Errorf("cached gamma %s differs from solved %s", g2, g1)
	}
}

func TestSolveBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--K", "10", "--m", "3"}, "K = 10"},
		{[]string{"--K", "0", "--m", "1"}, "K = 0"},
		{[]string{"--K", "11", "--m", "12"}, "m = 12"},
		{[]string{"--K", "11", "--m", "0.5"}, "m = 0.5"},
		{[]string{"--K", "11", "--m", "3", "--eps", "0"}, "eps = 0"},
		{[]string{"--K", "11", "--m", "3", "--eps", "NaN"}, "eps = NaN"},
		{[]string{"--K", "11", "--m", "3", "--eps", "-1"}, "eps = -1"},
		{[]string{"--K", "11", "--m", "3", "--Delta", "-0.1"}, "Delta = -0.1"},
		{[]string{"--K", "11", "--m", "3", "--delta", "1e-6"}, "delta = 1e-06"},
		{[]string{"--K", "11", "--m", "3", "--delta", "1"}, "delta = 1"},
		{[]string{"--K", "11", "--m", "3", "--prior", "0.3"}, "prior"},
		{[]string{"--K", "11", "--m", "3", "--format", "xml"}, "--format"},
		{[]string{"--K", "11", "--m", "3", "--plot", "out.jpg"}, ".png or .svg"},
		{[]string{"--m", "3"}, "--K is required"},
		{[]string{"--K", "11", "--workers", "-3"}, "--workers = -3"},
		{[]string{"--K", "11", "extra"}, "no arguments"},
		{[]string{"--K", "eleven", "--m", "3"}, `--K: "eleven" is not a whole number in base 10`},
		{[]string{"--K", "11", "--m", "3", "--compare", "--rr-composition", "advanced"}, "--rr-composition"},
		{[]string{"--K", "11", "--m", "3", "--compare", "--sub-size", "12"}, "--sub-size = 12"},
		{[]string{"--K", "11", "--m", "3", "--compare", "--rr-composition", "general", "--rr-delta-prime", "0"}, "--rr-delta-prime = 0: must be in (0, 1)"},
		// The comparison's settings without it would be dropped unread.
		{[]string{"--K", "11", "--m", "3", "--sub-size", "2"}, "--sub-size sets the comparison with the baselines: give --compare"},
		{[]string{"--K", "11", "--m", "3", "--actual", "0.5"}, "--actual sets the comparison"},
		{[]string{"--K", "11", "--m", "3", "--rr-composition", "simple"}, "--rr-composition sets the comparison"},
	} {
		dir := t.TempDir()
		plotDir := t.TempDir()
		args := append([]string{"solve", "--cache-dir", dir}, tc.args...)
		for i, a := range args {
			if a == "out.jpg" {
				args[i] = filepath.Join(plotDir, a)
			}
		}
		_, errOut, code := darrm(t, "", args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d", tc.args, code, exitUsage)
		}
		if !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: error %q does not mention %q", tc.args, errOut, tc.want)
		}
		if f := append(files(t, dir), files(t, plotDir)...); len(f) != 0 {
			t.Errorf("%v: bad input left files behind: %v", tc.args, f)
		}
	}
}

func TestSolveRecomputesCorruptCache(t *testing.T) {
	dir := t.TempDir()
	if _, e, code := darrm(t, "", "solve", "--K", "5", "--m", "2", "--cache-dir", dir); code != 0 {
		t.Fatal(e)
	}
	entry := filepath.Join(dir, gammaEntries(t, dir)[0])
	b, _ := os.ReadFile(entry)
	os.WriteFile(entry, b[:len(b)/3], 0o644) // a torn write
	out, errOut, code := darrm(t, "", "solve", "--K", "5", "--m", "2", "--cache-dir", dir, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "corrupt") || !strings.Contains(errOut, "recomputing") {
		t.Errorf("corrupt entry not reported: %q", errOut)
	}
	var doc map[string]any
	decode(t, out, &doc)
	if doc["cached"] != false {
		t.Error("a corrupt entry was used")
	}
	// The entry was replaced by a valid one.
	_, errOut, _ = darrm(t, "", "solve", "--K", "5", "--m", "2", "--cache-dir", dir, "--format", "json")
	if strings.Contains(errOut, "corrupt") {
		t.Errorf("entry still corrupt after recomputation: %s", errOut)
	}
}

func TestSolveNoCacheAndEnv(t *testing.T) {
	dir := t.TempDir()
	if _, e, code := darrm(t, "", "solve", "--K", "5", "--m", "2", "--cache-dir", dir, "--no-cache"); code != 0 {
		t.Fatal(e)
	}
	if len(files(t, dir)) != 0 {
		t.Error("--no-cache wrote a cache entry")
	}
	env := t.TempDir()
	t.Setenv("DARRM_CACHE_DIR", env)
	if _, e, code := darrm(t, "", "solve", "--K", "5", "--m", "2"); code != 0 {
		t.Fatal(e)
	}
	if len(gammaEntries(t, env)) != 1 {
		t.Errorf("DARRM_CACHE_DIR not used: %v", files(t, env))
	}
}

func TestSolveCompareAndPlot(t *testing.T) {
	dir := t.TempDir()
	plot := filepath.Join(t.TempDir(), "g.svg")
	out, errOut, code := darrm(t, "", "solve", "--K", "11", "--m", "3", "--Delta", "0", "--cache-dir", dir, "--compare", "--plot", plot, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Objective float64 `json:"objective"`
		Compare   []struct {
			Name        string  `json:"name"`
			Objective   float64 `json:"objective"`
			Certificate struct {
				Ratio  float64 `json:"ratio"`
				Status string  `json:"status"`
			} `json:"certificate"`
			Errors []struct{ Actual string } `json:"expected_errors"`
		} `json:"compare"`
	}
	decode(t, out, &doc)
	if strings.Contains(out, "not_compared") {
		t.Error("pure DP: a baseline is reported as not compared")
	}
	names := map[string]bool{}
	for _, m := range doc.Compare {
		names[m.Name] = true
		if m.Certificate.Status == "" || m.Certificate.Ratio == 0 {
			t.Errorf("%s has no certificate", m.Name)
		}
		if len(m.Errors) != 3 {
			t.Errorf("%s: %d expected errors, want 3", m.Name, len(m.Errors))
		}
		if m.Certificate.Status == "certified" && m.Objective > doc.Objective*(1+1e-9) {
			t.Errorf("certified %s has objective %v > gamma_opt's %v", m.Name, m.Objective, doc.Objective)
		}
	}
	if !names["sub"] || !names["dsub"] || !names["rr"] {
		t.Errorf("compare has %v, want sub, dsub and rr", names)
	}
	b, err := os.ReadFile(plot)
	if err != nil || !bytes.Contains(b, []byte("<svg")) {
		t.Errorf("plot not written as SVG: %v", err)
	}
	// With Delta > 0, gamma_DSub is left out, and the output says so.
	table, _, code := darrm(t, "", "solve", "--K", "11", "--m", "3", "--cache-dir", dir, "--compare")
	if code != 0 || !strings.Contains(table, "gamma_sub") || !strings.Contains(table, "certificate") {
		t.Errorf("table output lacks the comparison:\n%s", table)
	}
	if !strings.Contains(table, "gamma_dsub: not compared: Theorem 3.5.1") {
		t.Errorf("table output does not say why gamma_DSub is left out:\n%s", table)
	}
	// One output prints delta one way: its description's rounding up.
	deltas := map[string]bool{}
	for _, m := range regexp.MustCompile(`\bdelta = ([0-9.]+e-[0-9]+)`).FindAllStringSubmatch(table, -1) {
		deltas[m[1]] = true
	}
	if len(deltas) != 1 || !deltas["2.99998e-05"] {
		t.Errorf("delta printed as %v, want once as 2.99998e-05 (rounded up):\n%s", deltas, table)
	}
	out, _, _ = darrm(t, "", "solve", "--K", "11", "--m", "3", "--cache-dir", dir, "--compare", "--format", "json")
	var approx struct {
		NotCompared []struct{ Name, Reason string } `json:"not_compared"`
	}
	decode(t, out, &approx)
	if len(approx.NotCompared) != 1 || approx.NotCompared[0].Name != "dsub" || !strings.Contains(approx.NotCompared[0].Reason, "Delta = 1e-05") {
		t.Errorf("not_compared = %+v, want dsub with its reason", approx.NotCompared)
	}
}

func TestSolveCSV(t *testing.T) {
	out, _, code := darrm(t, "", "solve", "--K", "5", "--m", "2", "--no-cache", "--format", "csv")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 8 || !strings.HasPrefix(lines[0], `# {"K":5,"m":2,`) || lines[1] != "l,gamma_opt" {
		t.Errorf("CSV output:\n%s", out)
	}
}

// TestSolveVerifiesAsSolved: solve's JSON and CSV, piped to verify with
// no flag repeated, are certified for the problem they were solved for
// (not verify's defaults), and solve's table, whose gamma is rounded, is
// refused as what it is.
func TestSolveVerifiesAsSolved(t *testing.T) {
	dir := t.TempDir()
	for _, problem := range [][]string{
		{"--K", "11", "--m", "4", "--Delta", "1e-6"},
		{"--K", "11", "--m", "2", "--eps", "0.2", "--delta", "3e-5"},
		{"--K", "11", "--relation", "one-vote", "--target-eps", "0.3", "--delta", "1e-5"},
	} {
		var want struct {
			M, Eps, Delta float64
			TargetDelta   float64 `json:"delta"`
		}
		solved, e, code := darrm(t, "", append([]string{"solve", "--cache-dir", dir, "--format", "json"}, problem...)...)
		if code != 0 {
			t.Fatalf("solve %v: exit %d: %s", problem, code, e)
		}
		decode(t, solved, &want)
		for _, format := range []string{"json", "csv"} {
			out, _, _ := darrm(t, "", append([]string{"solve", "--cache-dir", dir, "--format", format}, problem...)...)
			got, e, code := darrm(t, out, "verify", "--format", "json")
			var doc struct {
				M, Eps, Delta float64
				TargetDelta   float64 `json:"delta"`
				Certificate   struct{ Status string }
			}
			if code == 0 {
				decode(t, got, &doc)
			}
			if code != 0 || doc.Certificate.Status != "certified" || doc.M != want.M || doc.Eps != want.Eps || doc.Delta != want.Delta || doc.TargetDelta != want.TargetDelta {
				t.Errorf("solve %v --format %s | verify: exit %d, %+v, want certified for %+v\n%s%s", problem, format, code, doc, want, got, e)
			}
		}
		table, _, _ := darrm(t, "", append([]string{"solve", "--cache-dir", dir}, problem...)...)
		if _, e, code := darrm(t, table, "verify"); code != exitUsage || !strings.Contains(e, "solve's table, which rounds gamma") || !strings.Contains(e, "--format json or --format csv") {
			t.Errorf("solve %v | verify: exit %d, %q; want refused as solve's table", problem, code, e)
		}
	}
}

func TestVerify(t *testing.T) {
	solved, _, _ := darrm(t, "", "solve", "--K", "11", "--m", "3", "--no-cache", "--format", "json")
	if _, e, code := darrm(t, solved, "verify"); code != 0 {
		t.Errorf("verify of solve's output: exit %d: %s", code, e)
	}
	// The same gamma at a smaller allowance is not private.
	if out, _, code := darrm(t, solved, "verify", "--m", "2", "--delta", "2e-5"); code != exitNotCertified || !strings.Contains(out, "VIOLATED") {
		t.Errorf("verify at m = 2: exit %d, want %d\n%s", code, exitNotCertified, out)
	}
	// gamma = 1 at m = 1 is not private.
	ones := strings.Repeat("1 ", 12)
	if _, _, code := darrm(t, ones, "verify", "--m", "1"); code != exitNotCertified {
		t.Errorf("verify of gamma = 1 at m = 1: exit %d, want %d", code, exitNotCertified)
	}
	path := filepath.Join(t.TempDir(), "g.txt")
	os.WriteFile(path, []byte("0.1 0.1 0.1 0.1"), 0o644)
	out, _, code := darrm(t, "", "verify", path, "--m", "1", "--format", "json")
	var doc struct {
		Certificate struct{ Status string } `json:"certificate"`
	}
	decode(t, out, &doc)
	if code != 0 || doc.Certificate.Status != "certified" {
		t.Errorf("verify of a small constant gamma: exit %d, %+v", code, doc)
	}
	for _, tc := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"1 0.5 0.4 1", []string{"--m", "1"}, "symmetric"},
		{"1 2 2 1", []string{"--m", "1"}, "gamma(1) = 2"},
		{"1 0.5 0.5 1", []string{"--m", "1", "--K", "5"}, "gamma has 4 values, want K+1 = 6 (one for each vote count l = 0..5), for --K 5"},
		{"0.5 0.7 0.3", []string{"--m", "1", "--K", "11"}, "gamma has 3 values, want K+1 = 12 (one for each vote count l = 0..11), for --K 11"},
		{"\x00\x89PNG\r\n\x1a\n" + strings.Repeat("\x1b[2J", 50), []string{"--m", "1"}, "binary data"},
		{"1 0.5 0.5 1", []string{"--m", "9"}, "m = 9"},
		{"", []string{"--m", "1"}, "empty"},
		{"1 0.5 0.5 1", []string{"--m", "1", "/no/such/file"}, "no such file"},
		// K beyond the certificate's limit names where it came from: the
		// gamma's length, or --K (it named --K either way).
		{strings.Repeat("0.5 ", 2004), []string{"--m", "1"}, "K of the gamma of standard input (its 2004 values) = 2003: must be <= 2001 when Delta > 0"},
		{strings.Repeat("0.5 ", 2004), []string{"--m", "1", "--K", "2003"}, "--K = 2003: must be <= 2001 when Delta > 0"},
	} {
		_, errOut, code := darrm(t, tc.stdin, append([]string{"verify"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("verify %v <<< %.40q: exit %d, %q; want exit %d mentioning %q", tc.args, tc.stdin, code, errOut, exitUsage, tc.want)
		}
	}
	// A release takes K from its votes, and says so.
	var wide strings.Builder
	for i := range 2002 {
		fmt.Fprintf(&wide, "t%d,", i)
	}
	wide.WriteString("t2002\n" + strings.TrimSuffix(strings.Repeat("1,", 2003), ",") + "\n")
	votes := filepath.Join(t.TempDir(), "wide.csv")
	if err := os.WriteFile(votes, []byte(wide.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, e, code := darrm(t, "", "aggregate", votes, "--eps", "0.1", "--Delta", "1e-5", "--m", "3", "--out", filepath.Join(t.TempDir(), "l.csv")); code != exitUsage || !strings.Contains(unwrapped(e), "K of the votes of "+votes+" = 2003: must be <= 2001") {
		t.Errorf("aggregate of 2003 teachers' votes: exit %d, %q", code, e)
	}
}

// TestTamperedCacheEntry replaces a cached gamma by the exact majority and
// re-signs the entry (valid checksum, the old certificate): solve must
// report it, recompute it and print a certificate computed in this run;
// aggregate --no-solve, which cannot recompute, must refuse it and name
// the file.
func TestTamperedCacheEntry(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--K", "11", "--m", "3", "--cache-dir", dir}
	if _, e, code := darrm(t, "", append([]string{"solve"}, args...)...); code != 0 {
		t.Fatal(e)
	}
	d, err := cache.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	key := cache.Key{Problem: constraints.Problem{K: 11, M: 3, Eps: 0.1, Delta: 1e-5, TargetDelta: constraints.DefaultTargetDelta(1e-5, 3)}, Prior: "uniform"}
	tamper := func() {
		e, err := d.Get(key)
		if err != nil {
			t.Fatal(err)
		}
		e.Gamma = slices.Repeat([]float64{1}, 12)
		if err := d.Put(e); err != nil {
			t.Fatal(err)
		}
	}
	tamper()
	votes := strings.Repeat("1,1,1,1,1,1,0,0,0,0,0\n", 3)
	_, errOut, code := darrm(t, votes, append(append([]string{"aggregate", "--no-solve"}, args[2:]...), stated...)...)
	if code == 0 || !strings.Contains(errOut, d.Path(key)) {
		t.Errorf("aggregate --no-solve with a tampered entry: exit %d: %s", code, errOut)
	}
	out, errOut, code := darrm(t, "", append([]string{"solve", "--format", "json"}, args...)...)
	if code != 0 || !strings.Contains(errOut, d.Path(key)) || !strings.Contains(errOut, "recomputing") {
		t.Fatalf("solve with a tampered entry: exit %d: %s", code, errOut)
	}
	var doc report.Solve
	decode(t, out, &doc)
	if doc.Cached || !doc.CertifiedNow || doc.Certificate.Status != gamma.Certified || doc.Gamma[0] == 1 {
		t.Errorf("solve served cached=%v certified_now=%v status=%v gamma(0)=%v", doc.Cached, doc.CertifiedNow, doc.Certificate.Status, doc.Gamma[0])
	}
	out, _, _ = darrm(t, "", append([]string{"solve"}, args...)...)
	if !strings.Contains(out, "certificate (computed in this run): CERTIFIED") {
		t.Errorf("solve's table does not say the certificate was computed in this run:\n%s", out)
	}
}

// TestMistypes: a mistyped command is an unknown command whatever flags
// follow it, and a mistyped flag names the flag meant; both exit 2.
func TestMistypes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"solvee"}, `unknown command "solvee" for "darrm"; did you mean "solve"?`},
		{[]string{"solvee", "--K", "11"}, `unknown command "solvee" for "darrm"; did you mean "solve"?`},
		{[]string{"teachers", "trian", "--dataset", "mnist58"}, `unknown command "trian" for "darrm teachers"; did you mean "train"?`},
		{[]string{"solve", "--k", "11"}, `unknown flag --k for "darrm solve"; did you mean --K?`},
		{[]string{"aggregate", "--mechanizm", "rr"}, `did you mean --mechanism?`},
		// The spellings of the project's first days are mistypes too.
		{[]string{"shuffleg", "--algo", "dp"}, `unknown flag --algo for "darrm shuffleg"; did you mean --algorithm?`},
		{[]string{"account", "compose", "--k", "3"}, `unknown flag --k for "darrm account compose"`},
		{[]string{"solve", "--rr-method", "general"}, `unknown flag --rr-method for "darrm solve"`},
	} {
		_, stderr, code := darrm(t, "", tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
