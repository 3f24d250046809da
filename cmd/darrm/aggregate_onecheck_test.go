package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/votefile"
)

// TestOneCheck: aggregate, account pate and ledger init refuse what
// contradicts a vote file's metadata header through the one check of
// every release (provenance.Check): exit 2, an error that names the field,
// the header's value, the value given and the rule, and no output. (The
// library's release and teachers vote are tested in their packages:
// teachers vote writes the header of teachers it loads, whose header is
// recomputed on load, so no command line can make them contradict it.)
func TestOneCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	k11 := filepath.Join("..", "..", "testdata", "votes-K11.csv")
	counts := countsFile(t, dir, "counts.csv", 3, func(i int) []int { return plurality(200, i%10) })
	privateCounts := write("private.csv", pateHeader(t, 251, 10, votefile.LayoutCounts, accountant.PrivateTeachers, votefile.FormatCSV)+"206,5,5,5,5,5,5,5,5,5\n")
	sgdHeader := `# {"darrm-votes":1,"ensemble":"onecheck-sgd","K":3,"classes":2,"layout":"votes","relation":"one-vote","kind":"fixed","partition":"keyed-hash","teachers":[{"count":3,"source":{"method":"none"}}]}` + "\n"
	sgd := write("sgd.csv", sgdHeader+"1,0,1\n0,0,1\n1,1,1\n")
	out := filepath.Join(dir, "out")
	init := func(votes string, args ...string) []string {
		return append([]string{"ledger", "init", out, "--votes", votes, "--budget-eps", "1", "--budget-delta", "1e-3"}, args...)
	}
	const states = ", but the vote file's metadata header states "
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"aggregate: a one-vote mechanism on private teachers", []string{"aggregate", k11, "--mechanism", "gnmax", "--no-cache", "--out", out},
			"the teachers' relation: one-vote given by the gnmax mechanism" + states + "private-teachers: the one-vote relation needs that one record changes at most one teacher's vote"},
		{"aggregate: another eps", []string{"aggregate", k11, "--eps", "1", "--no-cache", "--out", out},
			"the teachers' eps: 1 given" + states + "0.1: a value given must equal the header's (leave it out to use the header's)"},
		{"aggregate: other classes", []string{"aggregate", counts, "--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-5", "--classes", "3", "--out", out},
			"the ensemble's classes: 3 given" + states + "10"},
		{"account pate: private teachers", []string{"account", "pate", privateCounts, "--sigma2", "40", "--target-delta", "1e-5"},
			"the teachers' relation: one-vote given by the gnmax mechanism" + states + "private-teachers"},
		{"account pate: other classes", []string{"account", "pate", counts, "--sigma2", "40", "--target-delta", "1e-5", "--classes", "5"},
			"the ensemble's classes: 5 given" + states + "10"},
		{"ledger init: one-vote on private teachers", init(k11, "--relation", "one-vote"),
			"the teachers' relation: one-vote given" + states + "private-teachers: the one-vote relation needs"},
		{"ledger init: private-teachers on one-vote teachers", init(sgd, "--relation", "private-teachers"),
			"the teachers' relation: private-teachers given" + states + "one-vote: the private-teachers relation needs every teacher's (eps, Delta)"},
		{"ledger init: eps for non-private multi-class teachers", init(counts, "--eps", "0.1", "--Delta", "1e-5"),
			"the teachers' eps: 0.1 given" + states + "none (non-private teachers): no mechanism for multi-class votes in the one-vote relation is calibrated to a teachers' guarantee"},
		{"ledger init: Delta for non-private multi-class teachers", init(counts, "--Delta", "1e-5"),
			"the teachers' Delta: 1e-05 given" + states + "none (non-private teachers)"},
		{"ledger init: half a calibration", init(sgd, "--Delta", "1e-5"),
			"the teachers' eps: the vote file's metadata header states none (non-private teachers): the guarantee a release is calibrated to needs eps with Delta"},
		{"ledger init: another eps", init(k11, "--eps", "0.2"), "the teachers' eps: 0.2 given" + states + "0.1"},
		{"ledger init: another Delta", init(k11, "--Delta", "0"), "the teachers' Delta: 0 given" + states + "1e-05"},
		{"ledger init: another ensemble", init(k11, "--ensemble", "other"), "the ensemble id: other given" + states + "testdata-votes-K11"},
		{"ledger init: another K", init(counts, "--K", "251"), "the ensemble's K: 251 given" + states + "250"},
		{"ledger init: another kind", init(k11, "--kind", "per-query"), "the teachers' kind: per-query given" + states + "fixed"},
		{"ledger init: another partition", init(k11, "--partition", "keyed-hash"), "the teachers' partition: keyed-hash given" + states + "shared"},
	} {
		stdout, stderr, code := darrm(t, "", tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.name, code, stdout, stderr, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%s: wrote %s", tc.name, out)
		}
	}
}

// TestOneHeaderCheck: the command checks a vote file's metadata header
// once, where it opens the votes (VoteFlags.OpenVotes: provenance.CheckHeader),
// and every later comparison (the teachers' guarantee, the binding of a
// release or a ledger) is with that check (CheckedHeader), which a
// release takes (ensemble.ReleaseSpec.Header) and does not check again
// (ensemble's TestReleaseChecksHeaderOnce). So the command's calls of the
// check are these and no other: a check that comes back in a second
// place (or a second call in one of these) fails here.
func TestOneHeaderCheck(t *testing.T) {
	want := map[string]string{
		"internal/setup/votes.go: (*VoteFlags).OpenVotes: CheckHeader": "the one check of the votes a command reads",
		"sidecar.go: (*sidecarFlags).write: Check":                     "the header a sidecar is written with, made from flags, before it is written",
		"ledger_init.go: (*ledgerInitFlags).binding: Check":            "ledger init's ensemble from flags, without votes (provenance.Check(nil, ...))",
	}
	got := map[string]int{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			name := fn.Name.Name
			if fn.Recv != nil {
				name = "(" + types.ExprString(fn.Recv.List[0].Type) + ")." + name
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "provenance" && (sel.Sel.Name == "CheckHeader" || sel.Sel.Name == "Check") {
					got[fmt.Sprintf("%s: %s: %s", filepath.ToSlash(path), name, sel.Sel.Name)]++
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for site, n := range got {
		if want[site] == "" || n > 1 {
			t.Errorf("%s checks a vote file's header %d times: compare with the check made where the votes were opened (VoteFlags.CheckedHeader, CheckedHeader.Check)", site, n)
		}
	}
	for site, why := range want {
		if got[site] == 0 {
			t.Errorf("%s (%s) no longer checks a header: update the test", site, why)
		}
	}
}
