package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// rechain rewrites the spend lines of the ledger at path with edit
// applied to each (by line number from 2) and the chain hashed again, as
// someone who knows the format could: a line that names the line holding
// its pairs names where that line now ends.
func rechain(t *testing.T, path string, edit func(n int, spend map[string]any)) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ls := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	var head struct {
		SHA256 string `json:"sha256"`
	}
	if err := json.Unmarshal([]byte(ls[0]), &head); err != nil {
		t.Fatal(err)
	}
	prev := head.SHA256
	ends := []int64{0, int64(len(ls[0])) + 1}
	for i := 1; i < len(ls); i++ {
		var ln struct {
			Spend map[string]any `json:"spend"`
		}
		dec := json.NewDecoder(strings.NewReader(ls[i]))
		dec.UseNumber() // every number as written: a line's length is where the next begins
		if err := dec.Decode(&ln); err != nil {
			t.Fatal(err)
		}
		edit(i+1, ln.Spend)
		if at, ok := ln.Spend["bits_at"].(map[string]any); ok {
			n, _ := at["line"].(json.Number).Int64()
			at["end"] = ends[n]
		}
		spend, _ := json.Marshal(ln.Spend)
		h := sha256.New()
		fmt.Fprintf(h, "darrm-ledger/%d\n%s\nspend\n%s", ledger.Version, prev, spend)
		sum := hex.EncodeToString(h.Sum(nil))
		ls[i] = fmt.Sprintf(`{"prev":%q,"spend":%s,"sha256":%q}`, prev, spend, sum)
		prev = sum
		ends = append(ends, ends[i]+int64(len(ls[i]))+1)
	}
	if err := os.WriteFile(path, []byte(strings.Join(ls, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLedgerOneBitChargeEdited: issue 67's edit. A DaRRM release (a
// one-bit release, described by its pairs of output probabilities)
// charged to a ledger, its lines' charge lowered from eps 0.3 to 0.001
// and the chain hashed again, is refused by ledger verify and ledger
// show, naming the line and the charge it should be (exit 2), where it
// verified before and the spend read 0.004; the ledger as the release
// left it verifies.
func TestLedgerOneBitChargeEdited(t *testing.T) {
	dir := t.TempDir()
	led := filepath.Join(dir, "teachers.ledger")
	votes := filepath.Join("..", "..", "testdata", "votes-K11.csv")
	if _, e, code := darrm(t, "", "ledger", "init", led, "--votes", votes, "--budget-eps", "4", "--budget-delta", "1e-3", "--filter", "simple", "--replace"); code != 0 {
		t.Fatal(e)
	}
	if _, e, code := darrm(t, "", "aggregate", votes, "--mechanism", "darrm", "--m", "3", "--no-cache", "--ledger", led, "--out", filepath.Join(dir, "labels.csv")); code != 0 {
		t.Fatal(e)
	}
	if out, e, code := darrm(t, "", "ledger", "verify", led); code != 0 {
		t.Fatalf("ledger verify: exit %d:\n%s%s", code, out, e)
	}
	rechain(t, led, func(n int, s map[string]any) {
		p, _ := s["charge"].(map[string]any)["point"].(map[string]any)
		if _, pairs := s["bits_sha256"]; !pairs || p == nil || p["eps"] != json.Number("0.3") {
			t.Fatalf("line %d: %v: want a one-bit release charged eps 0.3 by simple composition", n, s)
		}
		p["eps"] = json.Number("0.001")
	})
	for _, cmd := range []string{"verify", "show"} {
		out, e, code := darrm(t, "", "ledger", cmd, led)
		if code != exitUsage || out != "" || !strings.Contains(e, "line 2: ") || !strings.Contains(e, `is not the one the filter simple(0.001) charges its step, {"eps":0.3,"delta":`) || !strings.Contains(e, `"point":{"eps":0.3,`) {
			t.Errorf("ledger %s of the ledger edited: exit %d:\n%s%s", cmd, code, out, e)
		}
	}
}

// mulAdd is x*y + z as written, which a build that fuses multiply-adds
// compiles to one operation, rounded once.
//
//go:noinline
func mulAdd(x, y, z float64) float64 { return x*y + z }

// fusesMulAdd reports whether this build fuses multiply-adds, as Go's
// specification allows (arm64; amd64 at GOAMD64=v3): (1+2^-30)² is
// 1 + 2^-29 + 2^-60, which one rounding keeps and two lose.
func fusesMulAdd() bool {
	const x = 1 + 0x1p-30
	return mulAdd(x, x, -(1+0x1p-29)) != 0
}

// TestLedgerOpenProfilePoint: issue 68's case. On a ledger open to any
// use held by simple composition at (8, 1e-8), DaRRM labels of K = 11
// private teachers (0.05, 1e-9), m = 2, each (0.1, 2e-9)-DP, are charged
// at the point of their privacy profile fixed before the run at which
// the most of them fit: 12 labels, where their guarantee allowed 5 (a
// declared use allows 79). A release of 13 writes 12 and is cut (exit
// 4), and the ledger verifies; the lines' point lowered to delta 1e-10,
// the chain hashed again, fails verify naming the charge it should be.
// plan --filter simple counts the same 12 beside the declared use's 79.
func TestLedgerOpenProfilePoint(t *testing.T) {
	dir := t.TempDir()
	out, e, code := darrm(t, "", "plan", "--mechanism", "darrm", "--K", "11", "--eps", "0.05", "--Delta", "1e-9", "--m", "2", "--budget-eps", "8", "--budget-delta", "1e-8", "--filter", "simple", "--no-cache", "--format", "json")
	var p struct {
		Run    int `json:"run_queries"`
		Ledger int `json:"ledger_queries"`
	}
	decode(t, out, &p)
	// A build that fuses multiply-adds (arm64, GOAMD64=v3) solves a
	// gamma_opt within the solver's tolerance of this one (1e-12), whose
	// least probabilities, near 1e-12, move by some percent, and the
	// declared use's count with them: 81 at GOAMD64=v3.
	runOK := p.Run == 79 || fusesMulAdd() && p.Run >= 75 && p.Run <= 85
	if code != 0 || !runOK || p.Ledger != 12 {
		t.Errorf("plan: exit %d, %d in a run and %d on an open ledger, want 79 and 12: %s", code, p.Run, p.Ledger, e)
	}
	led := filepath.Join(dir, "open.ledger")
	if _, e, code := darrm(t, "", "ledger", "init", led, "--ensemble", "k11-issue68", "--K", "11", "--eps", "0.05", "--Delta", "1e-9", "--kind", "per-query", "--partition", "shared", "--budget-eps", "8", "--budget-delta", "1e-8", "--filter", "simple"); code != 0 {
		t.Fatal(e)
	}
	head, err := (provenance.Binding{Ensemble: "k11-issue68", Teachers: provenance.Teachers{K: 11, Each: accountant.Guarantee{Eps: 0.05, Delta: 1e-9}, Relation: accountant.PrivateTeachers, Kind: provenance.PerQuery, Partition: provenance.SharedData}}.Header(2, votefile.LayoutVotes)).AppendHeader(nil, votefile.FormatCSV)
	if err != nil {
		t.Fatal(err)
	}
	votes := string(head) + strings.Repeat("1,1,1,1,1,1,0,0,0,0,0\n", 13)
	out, e, code = darrm(t, votes, "aggregate", "--mechanism", "darrm", "--m", "2", "--eps", "0.05", "--Delta", "1e-9", "--no-cache", "--ledger", led, "--out", filepath.Join(dir, "labels.csv"), "--format", "json")
	var doc report.Aggregate
	decode(t, out, &doc)
	if code != exitBudget || doc.Released != 12 || doc.Ledger == nil || doc.Ledger.QueriesLeft == nil || *doc.Ledger.QueriesLeft != 0 {
		t.Fatalf("13 labels on the open ledger: exit %d, released %d, ledger %+v: %s", code, doc.Released, doc.Ledger, e)
	}
	if out, e, code := darrm(t, "", "ledger", "verify", led); code != 0 {
		t.Fatalf("ledger verify: exit %d:\n%s%s", code, out, e)
	}
	rechain(t, led, func(n int, s map[string]any) {
		p, _ := s["charge"].(map[string]any)["point"].(map[string]any)
		if p == nil || p["eps"] != json.Number("0.6666666666666666") {
			t.Fatalf("line %d: %v: want a DaRRM label charged eps 8/12", n, s)
		}
		p["delta"] = json.Number("1e-10")
	})
	if out, e, code := darrm(t, "", "ledger", "verify", led); code != exitUsage || out != "" || !strings.Contains(e, "line 2: ") || !strings.Contains(e, `is not the one the filter simple(1e-08) charges its step`) {
		t.Errorf("ledger verify of the ledger edited: exit %d:\n%s%s", code, out, e)
	}
}
