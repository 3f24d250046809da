package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/statedir"
)

// pateSidecar is the metadata header of 250 non-private teachers on
// keyed-hash shares voting among 10 classes, teachers x queries.
const pateSidecar = `{"darrm-votes":1,"ensemble":"pate-k250","K":250,"classes":10,"layout":"votes","relation":"one-vote","kind":"fixed","partition":"keyed-hash","teachers":[{"count":250,"source":{"method":"none"}}],"orientation":"teachers-in-rows"}`

// TestSidecarLedger: NumPy votes (teachers x queries, with abstentions)
// whose header is a sidecar beside them are bound to a ledger by ledger
// init and released on it by aggregate, with no CSV rewrite; the release
// says which file its header came from, and the ledger's total is the
// release's total to publish. Without the sidecar every ledger refuses
// them; a sidecar of other teachers, or a second header, is refused.
func TestSidecarLedger(t *testing.T) {
	t.Setenv(statedir.Env, t.TempDir())
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	labels, _ := pateVotes(250, 120, 10, 0.05)
	writeNPY(t, p("votes.npy"), labels)
	release := []string{"aggregate", p("votes.npy"), "--mechanism", "confident-gnmax", "--threshold", "150", "--sigma1", "100", "--sigma2", "40", "--delta", "1e-5", "--ledger", p("pate.ledger"), "--out", p("labels.npy"), "--format", "json"}

	// No header: ledger init and a release on a ledger are refused.
	if _, e, code := darrm(t, "", "ledger", "init", p("pate.ledger"), "--votes", p("votes.npy"), "--teachers-in-rows", "--classes", "10", "--K", "250", "--budget-eps", "2", "--budget-delta", "1e-5"); code != exitUsage || !strings.Contains(e, "has no metadata header: state it in a sidecar") ||
		!containsFlat(e, "instead of --votes, give the ensemble's parameters as flags (--ensemble, --K, --eps, --Delta, --kind, --partition)") {
		t.Fatalf("ledger init without a header: exit %d: %s", code, e)
	}
	if err := os.WriteFile(p("votes.npy.meta.json"), []byte(pateSidecar+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, e, code := darrm(t, "", "ledger", "init", p("pate.ledger"), "--votes", p("votes.npy"), "--budget-eps", "2", "--budget-delta", "1e-5",
		"--mechanism", "confident-gnmax", "--threshold", "150", "--sigma1", "100", "--sigma2", "40", "--queries", "120")
	if code != 0 || !containsFlat(out, "bound to ensemble pate-k250: K = 250") || !containsFlat(e, "metadata header from "+p("votes.npy.meta.json")+" (the sidecar beside the votes") {
		t.Fatalf("ledger init from the sidecar: exit %d: %s%s", code, out, e)
	}
	out, e, code = darrm(t, "", release...)
	if code != 0 {
		t.Fatalf("release on the ledger: exit %d: %s", code, e)
	}
	var doc struct {
		HeaderFile string `json:"votes_header_file"`
		Released   int    `json:"released"`
		Publish    struct {
			Source     string
			Eps, Delta float64
		} `json:"publish"`
		Ledger struct {
			PublishEps   float64 `json:"publish_eps"`
			PublishDelta float64 `json:"publish_delta"`
		} `json:"ledger"`
	}
	decode(t, out, &doc)
	if doc.HeaderFile != p("votes.npy.meta.json") || doc.Released != 120 || doc.Publish.Source != "ledger" {
		t.Errorf("release: %s", out)
	}
	show, e, code := darrm(t, "", "ledger", "show", p("pate.ledger"), "--format", "json")
	var st struct {
		PublishEps   float64 `json:"publish_eps"`
		PublishDelta float64 `json:"publish_delta"`
	}
	if code != 0 || json.Unmarshal([]byte(show), &st) != nil || st.PublishEps != doc.Publish.Eps || st.PublishDelta != doc.Publish.Delta {
		t.Errorf("the ledger's total (%v, %v) is not the release's (%v, %v): %s%s", st.PublishEps, st.PublishDelta, doc.Publish.Eps, doc.Publish.Delta, show, e)
	}

	// --meta names a header elsewhere: one of other teachers is refused
	// by the ledger, naming the difference; a header the release's
	// mechanism contradicts is refused before any label.
	other := strings.Replace(pateSidecar, "pate-k250", "another-k250", 1)
	if err := os.WriteFile(p("other.json"), []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, e, code := darrm(t, "", append(release, "--meta", p("other.json"))...); code != exitUsage || !strings.Contains(e, "another-k250") {
		t.Errorf("a sidecar of other teachers: exit %d: %s", code, e)
	}
	private := strings.Replace(strings.Replace(pateSidecar, `"relation":"one-vote"`, `"relation":"private-teachers"`, 1), `{"method":"none"}`, `{"method":"stated"},"eps":1,"Delta":0`, 1)
	if err := os.WriteFile(p("private.json"), []byte(private), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, e, code := darrm(t, "", append(release, "--meta", p("private.json"))...); code != exitUsage || !strings.Contains(e, "the teachers' relation: one-vote given by the confident-gnmax mechanism") {
		t.Errorf("a private-teachers sidecar: exit %d: %s", code, e)
	}
	// A label file is never written over the sidecar.
	if _, e, code := darrm(t, "", "aggregate", p("votes.npy"), "--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-5", "--out", p("votes.npy.meta.json")); code != exitUsage || !strings.Contains(e, "sidecar") {
		t.Errorf("--out over the sidecar: exit %d: %s", code, e)
	}
	if b, _ := os.ReadFile(p("votes.npy.meta.json")); string(b) != pateSidecar+"\n" {
		t.Error("the sidecar was changed")
	}
}

// TestLedgerInitReads: ledger init reads every input aggregate reads, with
// the flags aggregate takes: a CSV matrix of class labels a row per
// teacher and counts, their header in a sidecar; and the flags that say
// how to read the votes go with --votes only.
func TestLedgerInitReads(t *testing.T) {
	t.Setenv(statedir.Env, t.TempDir())
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	labels, counts := pateVotes(250, 40, 10, 0.05)
	writeCSV(t, p("labels-tq.csv"), labels)
	writeCSV(t, p("counts.csv"), counts)
	counted := strings.Replace(strings.Replace(pateSidecar, `"layout":"votes"`, `"layout":"counts"`, 1), `,"orientation":"teachers-in-rows"`, ``, 1)
	for i, tc := range []struct {
		votes, meta string
		args        []string
	}{
		{"labels-tq.csv", pateSidecar, nil},
		{"labels-tq.csv", strings.Replace(pateSidecar, `,"orientation":"teachers-in-rows"`, ``, 1), []string{"--teachers-in-rows"}},
		{"counts.csv", counted, nil},
	} {
		if err := os.WriteFile(p("h.json"), []byte(tc.meta), 0o644); err != nil {
			t.Fatal(err)
		}
		led := p(fmt.Sprintf("%d.ledger", i))
		args := append([]string{"ledger", "init", led, "--votes", p(tc.votes), "--meta", p("h.json"), "--budget-eps", "2", "--budget-delta", "1e-5", "--replace"}, tc.args...)
		if out, e, code := darrm(t, "", args...); code != 0 || !containsFlat(out, "bound to ensemble pate-k250") {
			t.Errorf("%s: exit %d: %s%s", tc.votes, code, out, e)
		}
	}
	if _, e, code := darrm(t, "", "ledger", "init", p("x.ledger"), "--ensemble", "x", "--K", "11", "--relation", "one-vote", "--kind", "fixed", "--partition", "keyed-hash",
		"--budget-eps", "1", "--budget-delta", "1e-5", "--teachers-in-rows"); code != exitUsage || !strings.Contains(e, "--teachers-in-rows says how to read the --votes file") {
		t.Errorf("a reading flag without --votes: exit %d: %s", code, e)
	}
}
