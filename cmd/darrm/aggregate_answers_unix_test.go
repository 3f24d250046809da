//go:build unix

package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/statedir"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// TestBudgetAnswersKept: a budgeted release of DaRRM labels keeps the
// answers of its count's exact composition in the cache (its folder
// onebit, authenticated by the secret answers.key of the state folder, 32
// bytes private to the user), and a release asked again, in a new process,
// reads them: the same count and total as composing afresh (--no-cache),
// which writes nothing to the cache, and nothing written again.
func TestBudgetAnswersKept(t *testing.T) {
	dir, cache, state := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv(statedir.Env, state)
	head, err := provenance.Binding{Ensemble: "k11", Teachers: provenance.Teachers{K: 11, Each: accountant.Guarantee{Eps: 0.1, Delta: 1e-9}, Relation: accountant.PrivateTeachers, Kind: provenance.PerQuery, Partition: provenance.SharedData}}.Header(2, votefile.LayoutVotes).AppendHeader(nil, votefile.FormatCSV)
	if err != nil {
		t.Fatal(err)
	}
	votes := filepath.Join(dir, "votes.csv")
	if err := os.WriteFile(votes, append(head, strings.Repeat("1,1,0,1,0,1,1,0,1,1,0\n", 30)...), 0o644); err != nil {
		t.Fatal(err)
	}
	type result struct {
		Released int `json:"released"`
		Budget   struct {
			MaxQueries int `json:"max_queries"`
		} `json:"budget"`
		Publish struct {
			Method     string
			Eps, Delta float64
		} `json:"publish"`
	}
	// Under -short at a smaller size: a budget of eps 1, which stops
	// after 3 labels where 2 stops after 7.
	budgetEps, released := "2", 7
	if testing.Short() {
		budgetEps, released = "1", 3
	}
	release := func(more ...string) result {
		t.Helper()
		args := append([]string{"aggregate", votes, "--budget-eps", budgetEps, "--budget-delta", "1e-5", "--format", "json", "--out", filepath.Join(dir, "labels.csv")}, more...)
		var out, e bytes.Buffer
		cmd := child(args...)
		cmd.Stdout, cmd.Stderr = &out, &e
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		code := waitExit(t, cmd)
		var r result
		if decode(t, out.String(), &r); code != exitBudget || r.Released != released || r.Budget.MaxQueries != released || r.Publish.Method != "exact" {
			t.Fatalf("%v: exit %d, %+v: %s", more, code, r, e.String())
		}
		return r
	}
	fresh := release("--no-cache")
	if _, err := os.Stat(filepath.Join(cache, "onebit")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("--no-cache: the cache has a folder onebit (%v)", err)
	}
	release("--cache-dir", cache)
	files, _ := filepath.Glob(filepath.Join(cache, "onebit", "*.json"))
	st, err := os.Stat(filepath.Join(state, "answers.key"))
	if len(files) != 1 || err != nil || st.Mode().Perm() != 0o600 || st.Size() != 32 {
		t.Fatalf("kept answers %v, secret %v (%v)", files, st, err)
	}
	kept, err := os.Stat(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if again := release("--cache-dir", cache); again != fresh {
		t.Errorf("from the kept answers %+v, composing %+v", again, fresh)
	}
	// A process that composed anything would have replaced the file.
	if now, err := os.Stat(files[0]); err != nil || !os.SameFile(now, kept) {
		t.Errorf("a release that asked only what was kept wrote its answers again (%v)", err)
	}
}
