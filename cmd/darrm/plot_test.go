package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestPlotGamma draws two solve results of one problem under two priors
// (one column, Figure B.7) and a third problem, and checks the rows it
// prints; bad input writes no figure. The figure is an SVG: writing a
// gamma figure as PNG, most of the CPU here, is the figure package's
// tests' (TestWriteGammas, TestSavePNG).
func TestPlotGamma(t *testing.T) {
	dir := t.TempDir()
	var inputs []string
	for i, args := range [][]string{{"--m", "2"}, {"--m", "2", "--prior", "tp"}, {"--m", "3"}} {
		out, errOut, code := darrm(t, "", append([]string{"solve", "--K", "5", "--Delta", "0", "--delta", "0", "--no-cache", "--compare", "--format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("solve %v: exit %d: %s", args, code, errOut)
		}
		name := filepath.Join(dir, "s"+string(rune('0'+i))+".json")
		if err := os.WriteFile(name, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, name)
	}
	fig := filepath.Join(dir, "g.svg")
	out, errOut, code := darrm(t, "", append([]string{"plot", "gamma", "--out", fig, "--expected", "--format", "csv"}, inputs...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// Each solve has gamma_opt, gamma_Sub, gamma_DSub and RR (Delta = 0).
	if len(lines) != 1+3*4 || !strings.Contains(lines[0], "mechanism,objective,surrogate_error") || !strings.Contains(lines[5], ",tp,opt,") {
		t.Errorf("rows:\n%s", out)
	}
	// A Monte Carlo error comes with its standard error, as solve prints
	// it (the columns had the means alone).
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(rows[0], "stderr U(0,1)")
	if col < 0 || slices.Index(rows[0], "error U(0,1)") != col-1 {
		t.Fatalf("no stderr U(0,1) beside error U(0,1): %v", rows[0])
	}
	for _, r := range rows[1:] {
		mean, _ := strconv.ParseFloat(r[col-1], 64)
		if se, err := strconv.ParseFloat(r[col], 64); err != nil || !(se >= 0 && se < 0.01) || mean > 0 && se == 0 {
			t.Errorf("error U(0,1) %s: stderr %q, want a Monte Carlo standard error", r[col-1], r[col])
		}
	}
	if b, err := os.ReadFile(fig); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("figure: %v", err)
	}
	notSolve := filepath.Join(dir, "x.json")
	os.WriteFile(notSolve, []byte(`{"results": []}`), 0o644)
	for name, args := range map[string][]string{
		"not a solve result": {"--out", filepath.Join(dir, "a.png"), notSolve},
		"not JSON":           {"--out", filepath.Join(dir, "b.png"), fig},
		"no --out":           {inputs[0]},
		"bad extension":      {"--out", filepath.Join(dir, "c.gif"), inputs[0]},
		"--cols 0":           {"--out", filepath.Join(dir, "d.png"), "--cols", "0", inputs[0]},
	} {
		_, errOut, code := darrm(t, "", append([]string{"plot", "gamma"}, args...)...)
		if code != exitUsage {
			t.Errorf("%s: exit %d: %s", name, code, errOut)
		}
	}
	for _, f := range files(t, dir) {
		if f != "g.svg" && !strings.HasSuffix(f, ".json") {
			t.Errorf("a failed plot left %s behind", f)
		}
	}
}

// TestPlotShuffleg draws two shuffleg reports as one figure and checks the
// rows it prints.
func TestPlotShuffleg(t *testing.T) {
	dir := t.TempDir()
	var inputs []string
	for _, eps := range []string{"1", "5"} {
		code, out, stderr := runCLI(append(small, "--target-eps", eps, "--lr", "0.1", "--algorithm", "dp-shuffleg,interleaved", "--format", "json")...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		name := filepath.Join(dir, "eps"+eps+".json")
		os.WriteFile(name, []byte(out), 0o644)
		inputs = append(inputs, name)
	}
	fig := filepath.Join(dir, "c.svg")
	code, out, stderr := runCLI(append([]string{"plot", "shuffleg", "--out", fig, "--plot-metric", "excess", "--format", "csv"}, inputs...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 1+2*2 || !strings.Contains(lines[1], "synthetic,false,mean,1,") {
		t.Errorf("rows:\n%s", out)
	}
	if b, err := os.ReadFile(fig); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("figure: %v", err)
	}
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, []byte(`{"task": "mean"}`), 0o644)
	if code, _, stderr := runCLI("plot", "shuffleg", "--out", filepath.Join(dir, "x.png"), empty); code != exitUsage || !strings.Contains(stderr, "not the output of darrm shuffleg") {
		t.Errorf("a report without results: exit %d: %s", code, stderr)
	}
}

// TestPlotGammaReverifies tampers with a solve result (gamma_opt replaced
// by the exact majority, its stored certificate left saying certified) and
// checks that the figure's rows report the status computed in this run
// (an SVG figure, as in TestPlotGamma).
func TestPlotGammaReverifies(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := darrm(t, "", "solve", "--K", "5", "--m", "2", "--Delta", "0", "--delta", "0", "--no-cache", "--compare", "--format", "json")
	if code != 0 {
		t.Fatalf("solve: exit %d: %s", code, errOut)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	doc["gamma"] = []float64{1, 1, 1, 1, 1, 1}
	b, _ := json.Marshal(doc)
	name := filepath.Join(dir, "tampered.json")
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = darrm(t, "", "plot", "gamma", "--out", filepath.Join(dir, "g.svg"), "--format", "csv", name)
	if code != 0 {
		t.Fatalf("plot: exit %d: %s", code, errOut)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, ",opt,") && !strings.HasSuffix(line, ",violated") {
			t.Errorf("gamma_opt replaced by the majority is drawn as %q, want violated", line)
		}
	}
}
