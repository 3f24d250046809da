package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/report"
	"github.com/darrm/darrm/internal/statedir"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// TestLedgerAcrossRuns charges two releases of the same teachers to one
// ledger: the second is cut at what the budget has left (exit 4), the
// ledger shows both, a GNMax release cannot use a private-teachers ledger,
// a corrupted last line releases nothing, and ledger verify finds an older
// line corrupted (which a release, reading from the line its record
// vouches for, does not read).
func TestLedgerAcrossRuns(t *testing.T) {
	dir := t.TempDir()
	led := filepath.Join(dir, "teachers.ledger")
	if _, e, code := darrm(t, "", "ledger", "init", led, "--ensemble", "k11", "--K", "11", "--eps", "0.1", "--Delta", "1e-5", "--kind", "per-query", "--partition", "shared", "--budget-eps", "2", "--budget-delta", "1e-3"); code != 0 {
		t.Fatal(e)
	}
	head, err := (provenance.Binding{Ensemble: "k11", Teachers: provenance.Teachers{K: 11, Each: accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, Relation: accountant.PrivateTeachers, Kind: provenance.PerQuery, Partition: provenance.SharedData}}.Header(2, votefile.LayoutVotes)).AppendHeader(nil, votefile.FormatCSV)
	if err != nil {
		t.Fatal(err)
	}
	plain := strings.Repeat("1,1,1,1,1,1,0,0,0,0,0\n", 6)
	votes := string(head) + plain
	args := append([]string{"aggregate", "--mechanism", "subsample", "--no-cache", "--ledger", led, "--format", "json"}, stated...)
	first := filepath.Join(dir, "a.csv")
	out, errOut, code := darrm(t, votes, append(args, "--out", first)...)
	if code != 0 {
		t.Fatalf("first release: exit %d: %s", code, errOut)
	}
	var doc struct {
		report.Aggregate
		Totals []map[string]any `json:"totals"`
	}
	decode(t, out, &doc)
	if doc.Answered != 6 || doc.Ledger == nil || doc.Ledger.QueriesLeft == nil || *doc.Ledger.QueriesLeft < 1 || *doc.Ledger.QueriesLeft >= 6 {
		t.Fatalf("first release: answered %d, ledger %+v", doc.Answered, doc.Ledger)
	}
	left := *doc.Ledger.QueriesLeft
	second := filepath.Join(dir, "b.csv")
	_, errOut, code = darrm(t, votes, append(args, "--out", second)...)
	if code != exitBudget {
		t.Fatalf("second release: exit %d, want %d: %s", code, exitBudget, errOut)
	}
	b, _ := os.ReadFile(second)
	if n := labelsIn(b); n != left {
		t.Errorf("second release wrote %d labels, the ledger allowed %d", n, left)
	}
	out, errOut, code = darrm(t, "", "ledger", "show", led, "--format", "csv")
	if code != 0 || strings.Count(out, "\n") != 3 || !strings.Contains(out, "subsample") {
		t.Errorf("ledger show: exit %d:\n%s%s", code, out, errOut)
	}
	_, errOut, code = darrm(t, plain, append([]string{"aggregate", "--mechanism", "gnmax", "--partition", "keyed-hash", "--ledger", led, "--out", filepath.Join(dir, "g.csv")}, stated...)...)
	if code != exitUsage || !strings.Contains(errOut, "cannot share a budget") {
		t.Errorf("gnmax on a private-teachers ledger: exit %d: %s", code, errOut)
	}
	if out, errOut, code := darrm(t, "", "ledger", "verify", led); code != 0 || !strings.Contains(out, "record") {
		t.Errorf("ledger verify: exit %d:\n%s%s", code, out, errOut)
	}
	raw, _ := os.ReadFile(led)
	os.WriteFile(led, []byte(strings.Replace(string(raw), `"queries":6`, `"queries":1`, 1)), 0o644)
	if _, errOut, code := darrm(t, "", "ledger", "verify", led); code != exitUsage || !strings.Contains(errOut, "line 2: sha256") {
		t.Errorf("ledger verify of an older line edited: exit %d: %s", code, errOut)
	}
	i := strings.LastIndex(string(raw), fmt.Sprintf(`"queries":%d`, left))
	os.WriteFile(led, []byte(string(raw[:i])+`"queries":0`+string(raw[i+len(`"queries":0`):])), 0o644)
	third := filepath.Join(dir, "c.csv")
	_, errOut, code = darrm(t, votes, append(args, "--out", third)...)
	if code != exitUsage || !strings.Contains(errOut, "sha256") {
		t.Errorf("corrupted ledger: exit %d: %s", code, errOut)
	}
	for _, f := range []string{third, filepath.Join(dir, "g.csv")} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was written", f)
		}
	}
}

// TestLedgerBinding: ledger init binds the ensemble of a vote file's
// header (or of flags); a release of other teachers against it, or
// against a version-1 ledger, is refused with exit 2, no labels and no
// charge; a cap within the budget makes every release free.
func TestLedgerBinding(t *testing.T) {
	dir := t.TempDir()
	votes := voteFile(t, dir, 20, func(i int) int { return i % 12 })
	raw, _ := os.ReadFile(votes)
	write := func(name, from, to string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(strings.Replace(string(raw), from, to, 1)), 0o644)
		return p
	}
	other := write("other.csv", `"ensemble":"stated-k11"`, `"ensemble":"someone-else"`)
	keyed := write("keyed.csv", `"partition":"shared"`, `"partition":"keyed-hash"`)
	plain := plainVoteFile(t, t.TempDir(), 20, func(i int) int { return i % 12 })
	led := filepath.Join(dir, "k.ledger")
	if _, e, code := darrm(t, "", "ledger", "init", led, "--votes", votes, "--budget-eps", "100", "--budget-delta", "0.5"); code != 0 {
		t.Fatal(e)
	}
	out, _, code := darrm(t, "", "ledger", "show", led, "--format", "csv")
	if code != 0 || !strings.Contains(out, ",5,stated-k11,private-teachers,11,0.1,1e-05,fixed,shared,") {
		t.Errorf("ledger show: exit %d\n%s", code, out)
	}
	v1 := filepath.Join(dir, "v1.ledger")
	head := `{"version":1,"ensemble":"stated-k11","relation":"private-teachers","budget":{"Eps":100,"Delta":0.5},"delta_prime":0.00001,"created":"2025-01-01T00:00:00Z"}`
	sum := sha256.Sum256([]byte(head))
	os.WriteFile(v1, []byte(`{"header":`+head+`,"sha256":"`+hex.EncodeToString(sum[:])+`"}`+"\n"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"another ensemble", []string{other, "--ledger", led}, []string{"ensemble someone-else (the ledger's: stated-k11)"}},
		{"other teachers, no header", []string{plain, "--ledger", led, "--eps", "1", "--Delta", "1e-5"}, []string{"eps 1 (the ledger's: 0.1)"}},
		{"another partition", []string{keyed, "--ledger", led}, []string{"partition keyed-hash (the ledger's: shared)"}},
		{"version 1", []string{votes, "--ledger", v1}, []string{"version 1", "no longer reads"}},
	} {
		before, _ := os.ReadFile(tc.args[2])
		labels := filepath.Join(dir, "labels.csv")
		_, stderr, code := darrm(t, "", append([]string{"aggregate", "--no-cache", "--mechanism", "subsample", "--out", labels}, tc.args...)...)
		if code != exitUsage {
			t.Errorf("%s: exit %d, want 2: %s", tc.name, code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: %q lacks %q", tc.name, stderr, w)
			}
		}
		if after, _ := os.ReadFile(tc.args[2]); string(after) != string(before) {
			t.Errorf("%s: the ledger changed", tc.name)
		}
		if _, err := os.Stat(labels); err == nil {
			t.Errorf("%s: labels written", tc.name)
		}
	}
	if _, stderr, code := darrm(t, "", "ledger", "show", v1); code != exitUsage || !strings.Contains(stderr, "no longer reads") {
		t.Errorf("ledger show of a version 1 ledger: exit %d: %s", code, stderr)
	}
	// The same teachers without a header: nothing ties the labels to the
	// ledger's teachers, whose cap would bound them: refused, saying how
	// to go on.
	before, _ := os.ReadFile(led)
	if _, stderr, code := darrm(t, "", "aggregate", plain, "--eps", "0.1", "--Delta", "1e-5", "--no-cache", "--mechanism", "subsample", "--ledger", led, "--out", filepath.Join(dir, "p.csv")); code != exitUsage ||
		!strings.Contains(stderr, "has no metadata header") || !strings.Contains(stderr, "put the ensemble's metadata header on the vote file's first line") {
		t.Errorf("headerless release on a capped ledger: exit %d: %s", code, stderr)
	}
	if after, _ := os.ReadFile(led); string(after) != string(before) {
		t.Error("a refused headerless release changed the ledger")
	}
	// Disjoint keyed-hash shares: the cap (0.1, 1e-5) is within the budget,
	// so every release is free.
	free := filepath.Join(dir, "free.ledger")
	if _, e, code := darrm(t, "", "ledger", "init", free, "--votes", keyed, "--budget-eps", "0.1", "--budget-delta", "1e-5", "--replace"); code != 0 {
		t.Fatal(e)
	}
	for range 3 {
		out, stderr, code := darrm(t, "", "aggregate", keyed, "--m", "3", "--no-cache", "--mechanism", "subsample", "--ledger", free, "--out", filepath.Join(dir, "f.csv"), "--format", "json")
		var d struct {
			report.Aggregate
			Totals []map[string]any `json:"totals"`
		}
		decode(t, out, &d)
		if code != 0 || d.Answered != 20 || d.Ledger == nil || !d.Ledger.Free || d.Ledger.QueriesLeft != nil || d.Ledger.Total != (accountant.Guarantee{Eps: 0.1, Delta: 1e-5}) || d.Ledger.Bound != accountant.TeachersBound {
			t.Fatalf("free release: exit %d, ledger %+v: %s", code, d.Ledger, stderr)
		}
	}
	out, _, _ = darrm(t, "", "ledger", "show", free)
	if !strings.Contains(out, "every further release from these teachers is free") {
		t.Errorf("ledger show does not say releases are free:\n%s", out)
	}
	// ledger init's own checks.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--votes", votes, "--K", "9"}, "K: 9 given, but the vote file's metadata header states 11"},
		{[]string{"--votes", votes, "--eps", "1"}, "eps: 1 given, but the vote file's metadata header states 0.1"},
		{[]string{"--votes", votes, "--kind", "per-query"}, "kind: per-query given, but the vote file's metadata header states fixed"},
		{[]string{"--votes", plain}, "has no metadata header"},
		{[]string{"--ensemble", "e", "--K", "11", "--eps", "0.1", "--Delta", "1e-5", "--partition", "shared"}, "--kind"},
		{[]string{"--ensemble", "e", "--K", "11", "--Delta", "1e-5", "--kind", "fixed", "--partition", "shared"}, "--eps"},
		{[]string{"--ensemble", "e", "--K", "10", "--eps", "0.1", "--Delta", "1e-5", "--kind", "fixed", "--partition", "shared"}, "K = 10: must be odd"},
		{[]string{"--ensemble", "e", "--K", "11", "--eps", "0.1", "--Delta", "1e-5", "--kind", "fixed", "--partition", "random"}, "partition \"random\""},
	} {
		p := filepath.Join(t.TempDir(), "x.ledger")
		_, stderr, code := darrm(t, "", append([]string{"ledger", "init", p, "--budget-eps", "1", "--budget-delta", "1e-3"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("ledger init %v: exit %d, %q lacks %q", tc.args, code, stderr, tc.want)
		}
		if _, err := os.Stat(p); err == nil {
			t.Errorf("ledger init %v: wrote a ledger", tc.args)
		}
	}
}

// resignHeader edits the header line of the ledger at path (its first
// line) and redoes that line's hash alone, as in issue 40: no other line,
// no record touched.
func resignHeader(t *testing.T, path, from, to string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := strings.Cut(string(raw), "\n")
	var ln struct {
		Prev   string          `json:"prev"`
		Header json.RawMessage `json:"header"`
		SHA256 string          `json:"sha256"`
	}
	if err := json.Unmarshal([]byte(first), &ln); err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(ln.Header), from, to, 1)
	if edited == string(ln.Header) || len(edited) != len(ln.Header) {
		t.Fatalf("the edit %q -> %q changes nothing, or the length", from, to)
	}
	h := sha256.New()
	fmt.Fprintf(h, "darrm-ledger/%d\n\nheader\n%s", ledger.Version, edited)
	line := strings.Replace(strings.Replace(first, string(ln.Header), edited, 1), ln.SHA256, hex.EncodeToString(h.Sum(nil)), 1)
	if err := os.WriteFile(path, []byte(line+"\n"+rest), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLedgerHeaderResigned: the ledger's header edited (the budget raised
// from 2 to 9) and re-signed on its own is refused by the next release
// (exit 2, no labels, no charge), not only by ledger verify (issue 40).
func TestLedgerHeaderResigned(t *testing.T) {
	dir := t.TempDir()
	led := filepath.Join(dir, "teachers.ledger")
	if _, e, code := darrm(t, "", "ledger", "init", led, "--ensemble", "k11-resigned", "--K", "11", "--eps", "0.1", "--Delta", "1e-5", "--kind", "per-query", "--partition", "shared", "--budget-eps", "2", "--budget-delta", "1e-3", "--delta-prime", "1e-4"); code != 0 {
		t.Fatal(e)
	}
	head, err := (provenance.Binding{Ensemble: "k11-resigned", Teachers: provenance.Teachers{K: 11, Each: accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, Relation: accountant.PrivateTeachers, Kind: provenance.PerQuery, Partition: provenance.SharedData}}.Header(2, votefile.LayoutVotes)).AppendHeader(nil, votefile.FormatCSV)
	if err != nil {
		t.Fatal(err)
	}
	votes := string(head) + strings.Repeat("1,1,1,1,1,1,0,0,0,0,0\n", 6)
	args := append([]string{"aggregate", "--mechanism", "subsample", "--no-cache", "--ledger", led}, stated...)
	if _, errOut, code := darrm(t, votes, append(args, "--out", filepath.Join(dir, "a.csv"))...); code != 0 && code != exitBudget {
		t.Fatalf("first release: exit %d: %s", code, errOut)
	}
	before := recorded(t, led)
	resignHeader(t, led, `"budget":{"eps":2,`, `"budget":{"eps":9,`)
	out := filepath.Join(dir, "b.csv")
	_, errOut, code := darrm(t, votes, append(args, "--out", out)...)
	if code != exitUsage || !strings.Contains(errOut, "line 2: the chain is broken") {
		t.Errorf("release after the header was re-signed: exit %d, want %d: %s", code, exitUsage, errOut)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("labels were written")
	}
	if _, errOut, code := darrm(t, "", "ledger", "verify", led); code != exitUsage {
		t.Errorf("ledger verify: exit %d: %s", code, errOut)
	}
	raw, _ := os.ReadFile(led)
	if n := strings.Count(string(raw), "\n"); n != 1+2 || before < 1 {
		t.Errorf("the ledger has %d lines after the refusal, %d labels before", n, before)
	}
}

// TestLedgerUpgradeDamaged: ledger upgrade of a ledger of the current
// version that is damaged reports the damage (exit 2), not "nothing to
// upgrade".
func TestLedgerUpgradeDamaged(t *testing.T) {
	dir := t.TempDir()
	votes := smallVotes(t, dir, 5)
	led := newLedgerFile(t, dir, "upgrade-damaged", votes)
	if _, e, code := darrm(t, "", "ledger", "upgrade", led); code != 0 {
		t.Fatalf("upgrade of a sound current ledger: exit %d: %s", code, e)
	}
	if _, e, code := darrm(t, "", append([]string{"aggregate", votes, "--mechanism", "subsample", "--m", "1", "--no-cache", "--ledger", led, "--out", filepath.Join(dir, "l.csv")}, binding3[2:6]...)...); code != 0 {
		t.Fatal(e)
	}
	raw, _ := os.ReadFile(led)
	os.WriteFile(led, []byte(strings.Replace(string(raw), `"queries":5`, `"queries":1`, 1)), 0o644)
	out, errOut, code := darrm(t, "", "ledger", "upgrade", led)
	if code != exitUsage || !strings.Contains(errOut, "sha256 does not match") || strings.Contains(out, "nothing to upgrade") {
		t.Errorf("upgrade of a damaged current ledger: exit %d:\n%s%s", code, out, errOut)
	}
}

// TestStateDirRelative: the red team's rollback (issue 55) with the folder
// of the records relative, whether it comes from DARRM_STATE_DIR,
// XDG_STATE_HOME or HOME: release from sub1/, restore an older copy of
// the ledger, release from sub2/. A relative folder would name another
// record of the ledger from each working directory, so that the second
// release passed and the first one's labels were forgotten: every release
// and init is refused (exit 2, naming the variable and its value) before
// anything is charged or written. With HOME absolute, the same steps keep
// one record, and the second release is refused as an older copy.
func TestStateDirRelative(t *testing.T) {
	for _, c := range []struct{ name, state, xdg, home, want string }{
		{"DARRM_STATE_DIR", "state", "", "", `DARRM_STATE_DIR = "state"`},
		{"XDG_STATE_HOME", "", "xdg", "", `XDG_STATE_HOME = "xdg"`},
		{"HOME", "", "", "relhome", `HOME = "relhome"`},
		{"absolute", "", "", "", ""}, // the rollback is found
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			votes := smallVotes(t, dir, 5)
			home := filepath.Join(dir, "home")
			t.Setenv("HOME", home)
			t.Setenv(statedir.Env, "")
			t.Setenv("XDG_STATE_HOME", "")
			led := newLedgerFile(t, dir, "relative-state", votes)
			old, err := os.ReadFile(led)
			if err != nil {
				t.Fatal(err)
			}
			t.Setenv(statedir.Env, c.state)
			t.Setenv("XDG_STATE_HOME", c.xdg)
			if c.home != "" {
				t.Setenv("HOME", c.home)
			}
			release := func(sub string) (string, int) {
				wd := filepath.Join(dir, sub)
				os.Mkdir(wd, 0o755)
				t.Chdir(wd)
				out := filepath.Join(dir, sub+".csv")
				_, e, code := darrm(t, "", append([]string{"aggregate", votes, "--mechanism", "subsample", "--m", "1", "--no-cache", "--ledger", led, "--out", out}, binding3[2:6]...)...)
				if _, err := os.Stat(out); (err == nil) != (code == 0) {
					t.Errorf("from %s/: exit %d, labels written: %v", sub, code, err == nil)
				}
				if n := files(t, wd); len(n) != 0 {
					t.Errorf("from %s/: wrote %v in the working directory", sub, n)
				}
				return e, code
			}
			e1, code1 := release("sub1")
			if err := os.WriteFile(led, old, 0o644); err != nil {
				t.Fatal(err)
			}
			e2, code2 := release("sub2")
			if got, _ := os.ReadFile(led); !bytes.Equal(got, old) {
				t.Errorf("the restored ledger was charged:\n%s", got)
			}
			if c.want == "" {
				if code1 != 0 || code2 != exitUsage || !strings.Contains(e2, "older copy was restored") {
					t.Errorf("HOME absolute: exit %d then %d: %s%s", code1, code2, e1, e2)
				}
				return
			}
			for _, r := range []struct {
				e    string
				code int
			}{{e1, code1}, {e2, code2}} {
				if r.code != exitUsage || !strings.Contains(r.e, c.want) || !strings.Contains(r.e, "absolute") {
					t.Errorf("release: exit %d: %s", r.code, r.e)
				}
			}
			other := filepath.Join(dir, "other.ledger")
			if _, e, code := darrm(t, "", append([]string{"ledger", "init", other, "--ensemble", "relative-state-2", "--budget-eps", "1", "--budget-delta", "1e-3"}, binding3...)...); code != exitUsage || !strings.Contains(e, c.want) {
				t.Errorf("ledger init: exit %d: %s", code, e)
			}
			if _, err := os.Stat(other); err == nil {
				t.Error("ledger init wrote the ledger")
			}
		})
	}
}

// TestLedgerNonPrivateTeachers: a ledger of a one-vote ensemble is made
// from flags without --eps and --Delta (its teachers need no guarantee),
// says so in init's line and in ledger show rather than "eps = 0", binds
// what --votes of such an ensemble binds (a release from its votes is
// charged to it), while private teachers still need their (eps, Delta).
func TestLedgerNonPrivateTeachers(t *testing.T) {
	dir := t.TempDir()
	led := filepath.Join(dir, "pate.ledger")
	out, e, code := darrm(t, "", "ledger", "init", led, "--ensemble", "testdata-votes-K11-one-vote", "--K", "11", "--relation", "one-vote",
		"--kind", "fixed", "--partition", "keyed-hash", "--budget-eps", "20", "--budget-delta", "1e-3", "--filter", "simple")
	if code != 0 || !strings.Contains(out, "non-private teachers (one-vote relation)") {
		t.Fatalf("ledger init, one-vote, no --eps: exit %d: %s%s", code, out, e)
	}
	show, _, code := darrm(t, "", "ledger", "show", led)
	if code != 0 || !strings.Contains(show, "teachers_eps   │ non-private teachers (one-vote relation)") {
		t.Errorf("ledger show: exit %d:\n%s", code, show)
	}
	votes := filepath.Join("..", "..", "testdata", "votes-K11-one-vote.csv")
	if _, e, code := darrm(t, "", "aggregate", votes, "--mechanism", "darrm-one-vote", "--target-eps", "0.3", "--delta", "1e-5", "--cache-dir", dir,
		"--ledger", led, "--out", filepath.Join(dir, "labels.csv")); code != 0 {
		t.Errorf("a release from the ensemble's votes on its ledger: exit %d: %s", code, e)
	}
	if _, e, code := darrm(t, "", "ledger", "init", filepath.Join(dir, "private.ledger"), "--ensemble", "k11", "--K", "11",
		"--kind", "fixed", "--partition", "shared", "--budget-eps", "20", "--budget-delta", "1e-3"); code != exitUsage || !strings.Contains(e, "--eps is required") {
		t.Errorf("ledger init of private teachers without --eps: exit %d: %s", code, e)
	}
}

// TestLedgerInitNonPrivate: a ledger of non-private two-class teachers
// binds no teachers' guarantee unless one is given (the guarantee GNMax
// releases are then calibrated to); a release of the ensemble at any
// calibration is charged to the former, in the one-vote relation.
func TestLedgerInitNonPrivate(t *testing.T) {
	dir := t.TempDir()
	votes := filepath.Join(dir, "sgd.csv")
	head := `# {"darrm-votes":1,"ensemble":"onecheck-ledger-sgd","K":3,"classes":2,"layout":"votes","relation":"one-vote","kind":"fixed","partition":"keyed-hash","teachers":[{"count":3,"source":{"method":"none"}}]}` + "\n"
	if err := os.WriteFile(votes, []byte(head+"1,0,1\n0,0,1\n1,1,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	led := filepath.Join(dir, "sgd.ledger")
	// Two-class GNMax's labels are known by their (eps, delta): the
	// simple filter composes them.
	out, stderr, code := darrm(t, "", "ledger", "init", led, "--votes", votes, "--budget-eps", "5", "--budget-delta", "1e-3", "--filter", "simple")
	if code != 0 || !strings.Contains(out, "K = 3, non-private teachers (one-vote relation), relation one-vote") {
		t.Fatalf("ledger init: exit %d: %s%s", code, out, stderr)
	}
	for _, eps := range []string{"0.5", "1"} {
		if _, stderr, code := darrm(t, "", "aggregate", votes, "--mechanism", "gnmax", "--eps", eps, "--Delta", "1e-5", "--m", "1", "--no-cache",
			"--ledger", led, "--out", filepath.Join(dir, "labels.csv")); code != 0 {
			t.Errorf("gnmax at eps %s: exit %d: %s", eps, code, stderr)
		}
	}
	out, _, _ = darrm(t, "", "ledger", "show", led, "--format", "json")
	var show struct {
		TotalEps float64 `json:"spent_eps"`
	}
	// The simple filter charges each label at its pure point, the largest
	// loss of the release's one-bit pairs, when that costs less of the
	// budget than its (eps, delta) (issue 57): 3 labels of each release,
	// below the 4.5 of their guarantees. A line holds the pairs by their
	// digest and states the point it charges, which must be below its
	// guarantee's eps with delta 0 (a pure point of a bit that is
	// (eps, 1e-5)-DP).
	raw, err := os.ReadFile(led)
	if err != nil {
		t.Fatal(err)
	}
	var want float64
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n")[1:] {
		var line struct {
			Spend struct {
				Eps     float64 `json:"eps"`
				Queries int     `json:"queries"`
				Final   bool    `json:"final"`
				Digest  string  `json:"bits_sha256"`
				Charge  struct {
					Point *accountant.Guarantee `json:"point"`
				} `json:"charge"`
			} `json:"spend"`
		}
		if err := json.Unmarshal([]byte(l), &line); err != nil || len(line.Spend.Digest) != 64 || line.Spend.Charge.Point == nil {
			t.Fatalf("a spend line without its one-bit pairs' digest or its charge's point: %v: %s", err, l)
		}
		if p := *line.Spend.Charge.Point; !(p.Eps > 0 && p.Eps < line.Spend.Eps && p.Delta == 0) {
			t.Errorf("a label of eps %v charged at %v: want a pure point below its eps", line.Spend.Eps, p)
		}
		if line.Spend.Final {
			want += float64(line.Spend.Queries) * line.Spend.Charge.Point.Eps
		}
	}
	if decode(t, out, &show); !(want < 4.5 && show.TotalEps >= want && show.TotalEps <= want*(1+1e-9)) {
		t.Errorf("ledger show after releases at eps 0.5 and 1 of 3 queries each: total eps %v, want the pure points' %v (< 4.5)", show.TotalEps, want)
	}
	calibrated := filepath.Join(dir, "calibrated.ledger")
	out, stderr, code = darrm(t, "", "ledger", "init", calibrated, "--votes", votes, "--eps", "0.5", "--Delta", "1e-5", "--budget-eps", "5", "--budget-delta", "1e-3", "--replace")
	if code != 0 || !strings.Contains(out, "K = 3, eps = 0.5, Delta = 1e-05, relation one-vote") {
		t.Fatalf("ledger init with a calibration: exit %d: %s%s", code, out, stderr)
	}
}

// appendForged appends to the ledger at path a spend line made from its
// line n (1-based; 0 for the last) by edit, chained to the last line
// with its own hash, as issue 46's red team did: no record edit, no
// chain rewritten.
func appendForged(t *testing.T, path string, n int, edit func(map[string]any)) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ls := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if n == 0 {
		n = len(ls)
	}
	var last, from struct {
		Spend  map[string]any `json:"spend"`
		SHA256 string         `json:"sha256"`
	}
	if json.Unmarshal([]byte(ls[len(ls)-1]), &last) != nil || json.Unmarshal([]byte(ls[n-1]), &from) != nil {
		t.Fatal("not a ledger's lines")
	}
	edit(from.Spend)
	spend, _ := json.Marshal(from.Spend)
	h := sha256.New()
	fmt.Fprintf(h, "darrm-ledger/%d\n%s\nspend\n%s", ledger.Version, last.SHA256, spend)
	line := fmt.Sprintf(`{"prev":%q,"spend":%s,"sha256":%q}`+"\n", last.SHA256, spend, hex.EncodeToString(h.Sum(nil)))
	if err := os.WriteFile(path, append(raw, line...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLedgerForgedLines: issue 46's forgery (the last run repeated with
// "queries":0,"final":true, chained with its own hash) and its variants
// (a final line duplicated, the last run's count lowered, a line of a
// finished run copied to the end with the totals made to fit) are
// refused by ledger verify, naming the line (exit 2), and by the next
// release, which writes no label and charges nothing (exit 2). Before
// the fix verify reported the lower total and the release went on.
func TestLedgerForgedLines(t *testing.T) {
	for _, c := range []struct {
		name   string
		from   int // the line copied: 0 for the last
		edit   func(map[string]any)
		reason string
	}{
		{"the last run forgotten", 0, func(s map[string]any) { s["queries"], s["final"] = 0, true }, "after its final line"},
		{"a final line duplicated", 0, func(map[string]any) {}, "after its final line"},
		{"a count lowered", 0, func(s map[string]any) { s["queries"] = 1 }, "after its final line"},
		{"a line of a finished run", 3, nil, "which ended before line 6"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			led := filepath.Join(dir, "teachers.ledger")
			ensemble := "k11-forged-" + strings.ReplaceAll(c.name, " ", "-")
			if _, e, code := darrm(t, "", "ledger", "init", led, "--ensemble", ensemble, "--K", "11", "--eps", "0.1", "--Delta", "1e-5", "--kind", "per-query", "--partition", "shared", "--budget-eps", "5", "--budget-delta", "1e-3"); code != 0 {
				t.Fatal(e)
			}
			head, err := (provenance.Binding{Ensemble: ensemble, Teachers: provenance.Teachers{K: 11, Each: accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, Relation: accountant.PrivateTeachers, Kind: provenance.PerQuery, Partition: provenance.SharedData}}.Header(2, votefile.LayoutVotes)).AppendHeader(nil, votefile.FormatCSV)
			if err != nil {
				t.Fatal(err)
			}
			votes := string(head) + strings.Repeat("1,1,1,1,1,1,0,0,0,0,0\n", 3)
			args := append([]string{"aggregate", "--mechanism", "subsample", "--m", "1", "--no-cache", "--ledger", led}, stated...)
			for _, out := range []string{"a.csv", "b.csv"} {
				if _, e, code := darrm(t, votes, append(args, "--out", filepath.Join(dir, out))...); code != 0 {
					t.Fatal(e)
				}
			}
			before := recorded(t, led)
			if c.edit == nil {
				// The totals made to fit: those of both runs, so that only
				// the run's identity is wrong.
				l, err := ledger.Open(t.Context(), led, ledger.Options{ReadOnly: true})
				if err != nil {
					t.Fatal(err)
				}
				spent := l.Spent()
				l.Close()
				b, _ := json.Marshal(spent)
				c.edit = func(s map[string]any) { s["prior"] = json.RawMessage(b) }
			}
			appendForged(t, led, c.from, c.edit)
			forged, _ := os.ReadFile(led)
			if out, e, code := darrm(t, "", "ledger", "verify", led); code != exitUsage || !strings.Contains(e, "line 6: ") || !strings.Contains(e, c.reason) {
				t.Errorf("ledger verify: exit %d:\n%s%s", code, out, e)
			}
			out := filepath.Join(dir, "c.csv")
			_, e, code := darrm(t, votes, append(args, "--out", out)...)
			if c.from != 0 {
				// A release reads only the lines after the one its record
				// vouches for: the copied line adds its labels to the
				// total, which is never lowered.
				l, err := ledger.Open(t.Context(), led, ledger.Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				if n := l.Spent().Steps; code != 0 || n != before+3+3 {
					t.Errorf("release after a copied line: exit %d, %d labels counted, %d before: %s", code, n, before, e)
				}
				return
			}
			if code != exitUsage || !strings.Contains(e, "line 6: ") || !strings.Contains(e, c.reason) {
				t.Errorf("release: exit %d: %s", code, e)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("labels were written")
			}
			if after, _ := os.ReadFile(led); string(after) != string(forged) {
				t.Error("the release changed the ledger")
			}
		})
	}
}

// TestLedgerInitFilterChoice: ledger init with the labels declared (a
// mechanism with its per-query settings, or a per-query (eps, delta),
// and the labels expected) shows what each filter allows of them and
// keeps the one that allows more, unless --filter names one (issue 47);
// a --mechanism declared is kept as the ledger's use, composed exactly
// (filter exact), unless --filter names a filter (issue 57).
// Four pure labels at 0.2 on a one-vote ledger: 0.8 by simple
// composition, 1.89738 at delta 1e-6 by the zCDP filter, which still
// allows more at budget (8, 1e-6) (52 against 39), and fewer at (3, 1e-5)
// (11 against 14). A use that cannot be declared so is refused (exit 2,
// naming the flag) and no ledger is made. The filters compose per-query
// guarantees: private teachers here are a fresh mechanism per query;
// fixed ones have their cap alone, and a budget it does not meet is
// refused before any count (issue 68).
func TestLedgerInitFilterChoice(t *testing.T) {
	dir := t.TempDir()
	oneVote := []string{"--K", "11", "--relation", "one-vote", "--kind", "fixed", "--partition", "keyed-hash"}
	private := []string{"--K", "11", "--eps", "0.1", "--Delta", "1e-5", "--kind", "per-query", "--partition", "shared"}
	fixedPrivate := []string{"--K", "11", "--eps", "0.1", "--Delta", "1e-5", "--kind", "fixed", "--partition", "shared"}
	b8 := []string{"--budget-eps", "8", "--budget-delta", "1e-6"}
	b3 := []string{"--budget-eps", "3", "--budget-delta", "1e-5"}
	pure := []string{"--mechanism", "darrm-one-vote", "--target-eps", "0.2", "--queries", "4", "--cache-dir", filepath.Join(dir, "cache")}
	join := func(parts ...[]string) []string { return slices.Concat(parts...) }
	for i, c := range []struct {
		name string
		args []string
		want accountant.Method
		out  []string // what stdout or the error must say
		code int
	}{
		// Issue 57: each open filter has a part of simple composition of
		// pure points beside it, so that 0.2-DP labels get their basic
		// composition's count (40 at eps 8) from every one of them.
		{"pure labels, (8, 1e-6)", join(oneVote, b8, pure), accountant.Exact, []string{"exact: allows 62 labels",
			"gdp-filter(1e-06) or simple(0): allows 40 labels", "zcdp-filter(1e-06) or simple(0): allows 52 labels; the 4 expected spend (1.89738, 1e-06), within the budget",
			"simple(1e-06): allows 40 labels; the 4 expected spend (0.8, 0)", "kept: exact, the use declared"}, 0},
		{"pure labels, (3, 1e-5)", join(oneVote, b3, pure), accountant.Exact, []string{"zcdp-filter(1e-05) or simple(0): allows 15 labels; the 4 expected spend (1.69274, 1e-05)",
			"simple(1e-05): allows 15 labels", "kept: exact, the use declared", "its declared use composed exactly, as one run"}, 0},
		{"named by --filter", join(oneVote, b8, pure, []string{"--filter", "zcdp-filter"}), accountant.ZCDPFilter,
			[]string{"kept: zcdp-filter(1e-06) or simple(0), named by --filter (rdp-filter(1e-06, order 5) or simple(0) allows more)"}, 0},
		{"named by --filter, as many", join(oneVote, b3, pure, []string{"--filter", "zcdp-filter"}), accountant.ZCDPFilter,
			[]string{"kept: zcdp-filter(1e-05) or simple(0), named by --filter; a ledger's filter"}, 0},
		{"confident-gnmax", join(oneVote, []string{"--budget-eps", "2", "--budget-delta", "1e-5", "--mechanism", "confident-gnmax", "--classes", "10", "--sigma1", "150", "--sigma2", "40", "--threshold", "200", "--queries", "300"}), accountant.Exact,
			[]string{"confident-gnmax labels", "exact: allows 194 labels", "gdp-filter(1e-05) or simple(0): allows 194 labels", "zcdp-filter(1e-05) or simple(0): allows 167 labels", "simple(1e-05): allows 1 label;"}, 0},
		{"fixed private teachers, a budget below their cap", join(fixedPrivate, b3, []string{"--step-eps", "0.3", "--step-delta", "1e-7"}), 0,
			[]string{"the teachers are fixed models, whose releases only their cap (1.08795, 0.000119994) bounds", "composing per-query guarantees is not proved for fixed teachers"}, exitUsage},
		{"approximate labels", join(private, b3, []string{"--step-eps", "0.3", "--step-delta", "1e-7"}), accountant.Simple,
			[]string{"zcdp-filter(1e-05) or simple(0): cannot hold them", "advanced-filter(1e-05, slack 5e-06) or simple(0): allows 3 labels", "simple(1e-05): allows 10 labels"}, 0},
		// A filter named for labels it cannot hold would make a ledger
		// that refuses every one of them, its filter fixed for good: no
		// ledger is made, as plan makes no plan for it.
		{"named by --filter, cannot hold them", join(private, b3, []string{"--step-eps", "0.3", "--step-delta", "1e-7", "--filter", "zcdp-filter"}), 0,
			[]string{"--filter zcdp-filter cannot hold the labels declared (labels of (0.3, 1e-07)-DP each)", "simple(1e-05) allows the most"}, exitUsage},
		{"gnmax, named advanced-filter", join(oneVote, []string{"--budget-eps", "2", "--budget-delta", "1e-5", "--mechanism", "gnmax", "--classes", "10", "--sigma2", "40", "--delta", "1e-5", "--filter", "advanced-filter"}), 0,
			[]string{"--filter advanced-filter cannot hold the labels declared (gnmax labels", "gdp-filter(1e-05) or simple(0) allows the most"}, exitUsage},
		{"private teachers, pure labels", join(private, b3, []string{"--step-eps", "0.05"}), accountant.RenyiFilter, []string{"labels of (0.05, 0)-DP each", "zcdp-filter(1e-05) or simple(0): allows 179 labels",
			"rdp-filter(1e-05, order 8) or simple(0): allows 182 labels", "simple(1e-05): allows 59 labels"}, 0},
		// Issue 55: more labels than the accountant counts fit the zCDP
		// filter: it allows the most, and is kept.
		{"gnmax at sigma2 1e9", join(oneVote, b3, []string{"--mechanism", "gnmax", "--classes", "10", "--sigma2", "1e9"}), accountant.Exact,
			[]string{"zcdp-filter(1e-05) or simple(0): allows 2^53 labels or more", "simple(1e-05): allows 1 label", "kept: exact, the use declared"}, 0},
		{"step eps 1e-10", join(oneVote, b3, []string{"--step-eps", "1e-10"}), accountant.GDPFilter, []string{"zcdp-filter(1e-05) or simple(0): allows 2^53 labels or more",
			"simple(1e-05): allows 29999999999 labels", "kept: gdp-filter(1e-05) or simple(0), it allows the most"}, 0},
		{"darrm-one-vote at 1e-10", join(oneVote, b3, []string{"--mechanism", "darrm-one-vote", "--target-eps", "1e-10", "--cache-dir", filepath.Join(dir, "cache")}), accountant.Exact,
			[]string{"zcdp-filter(1e-05) or simple(0): allows 2^53 labels or more", "kept: exact, the use declared"}, 0},
		// Every filter allows as many: the first listed is kept.
		{"both beyond the count", join(private, b3, []string{"--step-eps", "1e-17"}), accountant.GDPFilter, []string{"zcdp-filter(1e-05) or simple(0): allows 2^53 labels or more",
			"simple(1e-05): allows 2^53 labels or more", "kept: gdp-filter(1e-05) or simple(0), it allows the most labels (the first listed of those that allow as many)"}, 0},
		// Issue 55: the declared label's parameters are named as the flags
		// that gave them, in the range every command holds them to.
		{"step eps 1e-300", join(oneVote, b3, []string{"--step-eps", "1e-300"}), accountant.GDPFilter, []string{"zcdp-filter(1e-05) or simple(0): allows 2^53 labels or more",
			"simple(1e-05): allows 2^53 labels or more"}, 0},
		{"step eps 1e308", join(oneVote, b3, []string{"--step-eps", "1e308"}), 0, []string{"--step-eps = 1e+308: too large"}, exitUsage},
		{"step delta 0.7", join(oneVote, b3, []string{"--step-eps", "0.1", "--step-delta", "0.7"}), 0, []string{"--step-delta = 0.7: must be in [0, 0.5]"}, exitUsage},
		{"budget delta 0.9", join(oneVote, []string{"--budget-eps", "3", "--budget-delta", "0.9"}), 0, []string{"--budget-delta = 0.9: must be in [0, 0.5]"}, exitUsage},
		{"no labels declared", join(oneVote, b3, []string{"--queries", "4"}), 0, []string{"--queries describes the labels"}, exitUsage},
		{"mechanism and step", join(oneVote, b3, pure, []string{"--step-eps", "0.1"}), 0, []string{"--mechanism and --step-eps exclude each other"}, exitUsage},
		{"no target eps", join(oneVote, b3, []string{"--mechanism", "darrm-one-vote"}), 0, []string{"give one --target-eps"}, exitUsage},
		{"another relation", join(private, b3, []string{"--mechanism", "gnmax", "--classes", "3", "--sigma2", "40"}), 0, []string{"gnmax releases in the one-vote relation"}, exitUsage},
		{"another mechanism's setting", join(private, b3, []string{"--mechanism", "rr", "--m", "3", "--queries", "4", "--prior", "tp"}), 0, []string{"--prior is a setting of darrm, darrm-one-vote, which this run does not include (--mechanism)"}, exitUsage},
		{"step eps 0", join(private, b3, []string{"--step-eps", "0"}), 0, []string{"--step-eps = 0"}, exitUsage},
		{"queries beyond count", join(private, b3, []string{"--step-eps", "0.1", "--queries", "1000000000000000000"}), 0, []string{"--queries = 1000000000000000000: must be an integer in [1, 9007199254740992]"}, exitUsage},
		{"budget eps 0", join(private, []string{"--budget-eps", "0", "--budget-delta", "1e-5", "--step-eps", "0.1"}), 0, []string{"--budget-eps = 0: must be a finite number > 0"}, exitUsage},
	} {
		led := filepath.Join(dir, fmt.Sprintf("%d.ledger", i))
		out, stderr, code := darrm(t, "", append([]string{"ledger", "init", led, "--ensemble", fmt.Sprintf("choice-%d", i)}, c.args...)...)
		said := out + stderr
		for _, w := range c.out {
			if !strings.Contains(unwrapped(said), unwrapped(w)) {
				t.Errorf("%s: %q not said:\n%s", c.name, w, said)
			}
		}
		if code != c.code {
			t.Errorf("%s: exit %d, want %d: %s", c.name, code, c.code, stderr)
		}
		if c.code != 0 {
			if _, err := os.Stat(led); err == nil {
				t.Errorf("%s: a ledger was made", c.name)
			}
			continue
		}
		l, err := ledger.Open(t.Context(), led, ledger.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		if f := l.Header().Filter; f != c.want {
			t.Errorf("%s: the ledger's filter is %v, want %v", c.name, f, c.want)
		}
		l.Close()
	}
}

// TestOneRangePerParameter: every privacy parameter that several
// commands take has one rule, checked by one function (setup.CheckFlagRules, the
// library's check of it), so that every command refuses the same values in
// the same words, naming the flag, the value and the rule (exit 2), and
// takes the edges of the range (issue 55: ledger init took --budget-delta
// 0.9 where plan refused it; solve took --delta 0.7, account gaussian
// --target-delta 0.7; the solver said "[Delta, 1)" where others said
// "[0, 0.5]"; plan refused a budget that aggregate and a ledger take).
// Where a command adds a rule of its own (DaRRM's delta >= Delta, an odd
// K for two-class votes, a delta > 0 to convert Renyi DP, m <= K, a
// threshold within K + 10·sigma1), it names it in the same words wherever
// it applies.
func TestOneRangePerParameter(t *testing.T) {
	dir := t.TempDir()
	votes := smallVotes(t, dir, 3)
	classVotes := filepath.Join(dir, "votes10.csv")
	os.WriteFile(classVotes, []byte(`# {"darrm-votes":1,"ensemble":"range-classes","K":4,"classes":10,"layout":"votes","relation":"one-vote","kind":"fixed","partition":"keyed-hash","teachers":[{"count":4,"source":{"method":"none"}}]}`+
		"\n"+strings.Repeat("3,3,7,9\n", 5)), 0o644)
	gammaFile := filepath.Join(dir, "gamma.json")
	os.WriteFile(gammaFile, []byte("[0, 0.5, 0.5, 0]\n"), 0o644)
	ledgers := 0
	led := func(extra ...string) []string {
		ledgers++
		return append([]string{"ledger", "init", filepath.Join(dir, fmt.Sprintf("range%d.ledger", ledgers)), "--ensemble", fmt.Sprintf("range-%d", ledgers),
			"--K", "3", "--relation", "private-teachers", "--eps", "0.1", "--Delta", "1e-5", "--kind", "fixed", "--partition", "keyed-hash"}, extra...)
	}
	budget := []string{"--budget-eps", "2", "--budget-delta", "1e-5"}
	// The commands, each as it runs without the flag tested (which is
	// appended, and as the last given, wins).
	cmds := map[string]func() []string{
		"solve": func() []string { return []string{"solve", "--K", "3", "--m", "1", "--no-cache"} },
		"solve one-vote": func() []string {
			return []string{"solve", "--K", "3", "--relation", "one-vote", "--target-eps", "0.3", "--delta", "1e-5", "--no-cache"}
		},
		"solve totals": func() []string {
			return append([]string{"solve", "--K", "3", "--m", "1", "--no-cache", "--compare", "--queries", "10"}, budget...)
		},
		"verify": func() []string { return []string{"verify", gammaFile, "--K", "3", "--m", "1"} },
		"verify one-vote": func() []string {
			return []string{"verify", gammaFile, "--relation", "one-vote", "--target-eps", "0.3", "--delta", "1e-5"}
		},
		"separate": func() []string {
			return []string{"separate", gammaFile, "--K", "3", "--m", "1", "--shard", "0/1", "--out", filepath.Join(dir, "part.json")}
		},
		"account rr": func() []string { return []string{"account", "rr", "--K", "3", "--m", "1"} },
		"simulate":   func() []string { return []string{"simulate", "--K", "3", "--m", "1", "--no-cache", "--queries", "10"} },
		"plan": func() []string {
			return append([]string{"plan", "--mechanism", "darrm", "--K", "3", "--m", "1", "--no-cache"}, budget...)
		},
		"plan one-vote": func() []string {
			return append([]string{"plan", "--mechanism", "darrm-one-vote", "--K", "3", "--target-eps", "0.3", "--delta", "1e-5", "--no-cache"}, budget...)
		},
		"plan gnmax": func() []string {
			return append([]string{"plan", "--mechanism", "gnmax", "--K", "4", "--classes", "10", "--sigma2", "40", "--delta", "1e-5"}, budget...)
		},
		"plan confident": func() []string {
			return append([]string{"plan", "--mechanism", "confident-gnmax", "--K", "4", "--classes", "10", "--threshold", "3", "--sigma1", "150", "--sigma2", "40", "--delta", "1e-5"}, budget...)
		},
		"plan lnmax": func() []string {
			return append([]string{"plan", "--mechanism", "lnmax", "--K", "4", "--classes", "10", "--laplace-scale", "20"}, budget...)
		},
		"aggregate": func() []string {
			return []string{"aggregate", votes, "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--no-cache", "--out", filepath.Join(dir, "labels.csv")}
		},
		"aggregate budget": func() []string {
			return append([]string{"aggregate", votes, "--mechanism", "subsample", "--m", "1", "--eps", "0.1", "--Delta", "1e-5", "--no-cache", "--out", filepath.Join(dir, "labels.csv")}, budget...)
		},
		"aggregate one-vote": func() []string {
			return []string{"aggregate", votes, "--mechanism", "darrm-one-vote", "--target-eps", "0.3", "--delta", "1e-5", "--partition", "keyed-hash", "--no-cache", "--out", filepath.Join(dir, "labels.csv")}
		},
		"aggregate confident": func() []string {
			return []string{"aggregate", classVotes, "--mechanism", "confident-gnmax", "--threshold", "3", "--sigma1", "150", "--sigma2", "40", "--delta", "1e-5", "--out", filepath.Join(dir, "labels10.csv")}
		},
		"aggregate lnmax": func() []string {
			return []string{"aggregate", classVotes, "--mechanism", "lnmax", "--laplace-scale", "20", "--out", filepath.Join(dir, "labels10.csv")}
		},
		"ledger init": func() []string {
			return led(append([]string{"--mechanism", "darrm", "--m", "1", "--no-cache"}, budget...)...)
		},
		"ledger init steps": func() []string {
			return led(append([]string{"--step-eps", "0.1", "--step-delta", "0", "--queries", "10"}, budget...)...)
		},
		"ledger init one-vote": func() []string {
			return append(led(budget...), "--relation", "one-vote", "--mechanism", "darrm-one-vote", "--target-eps", "0.3", "--delta", "1e-5", "--no-cache")
		},
		"ledger init confident": func() []string {
			ledgers++
			return append([]string{"ledger", "init", filepath.Join(dir, fmt.Sprintf("range%d.ledger", ledgers)), "--votes", classVotes, "--replace", "--mechanism", "confident-gnmax",
				"--threshold", "3", "--sigma1", "150", "--sigma2", "40", "--delta", "1e-5"}, budget...)
		},
		"ledger init lnmax": func() []string {
			ledgers++
			return append([]string{"ledger", "init", filepath.Join(dir, fmt.Sprintf("range%d.ledger", ledgers)), "--votes", classVotes, "--replace", "--mechanism", "lnmax", "--laplace-scale", "20"}, budget...)
		},
		"sidecar": func() []string {
			return []string{"sidecar", votes, "--out", filepath.Join(dir, "range.meta.json"), "--replace", "--ensemble", "range", "--relation", "private-teachers", "--kind", "fixed",
				"--partition", "keyed-hash", "--K", "3", "--eps", "0.1", "--Delta", "1e-5"}
		},
		"account compose":  func() []string { return []string{"account", "compose", "--step-eps", "0.1", "--steps", "10"} },
		"account queries":  func() []string { return append([]string{"account", "queries", "--step-eps", "0.1"}, budget...) },
		"account step-eps": func() []string { return []string{"account", "step-eps", "--budget-eps", "1", "--steps", "10"} },
		"account gaussian": func() []string {
			return []string{"account", "gaussian", "--sigma", "5", "--steps", "100", "--target-delta", "1e-5"}
		},
		"account dpsgd": func() []string {
			return []string{"account", "dpsgd", "--sigma", "1.1", "--sampling-rate", "0.01", "--steps", "100", "--target-delta", "1e-5"}
		},
		"account gnmax": func() []string {
			return []string{"account", "gnmax", "--target-eps", "0.2676", "--target-delta", "1e-5"}
		},
		"account shuffleg": func() []string {
			return []string{"account", "shuffleg", "--algorithm", "dp-shuffleg", "--target-eps", "1", "--target-delta", "1e-5", "--G", "10", "--epochs", "5"}
		},
		"account pate": func() []string {
			return []string{"account", "pate", classVotes, "--threshold", "3", "--sigma1", "150", "--sigma2", "40", "--target-delta", "1e-5"}
		},
		"account pate lnmax": func() []string {
			return []string{"account", "pate", classVotes, "--laplace-scale", "20", "--target-delta", "1e-5"}
		},
		// Commands that need a data set: the flags are checked before it
		// is read.
		"shuffleg": func() []string {
			return []string{"shuffleg", "--task", "mean", "--dataset", "mnist69", "--target-eps", "5", "--target-delta", "1e-6"}
		},
		"transfer": func() []string {
			return append([]string{"transfer", "--dataset", "mnist58", "--queries", "10"}, budget...)
		},
		"teachers train": func() []string { return []string{"teachers", "train", "--dataset", "mnist58"} },
		"teachers tune":  func() []string { return []string{"teachers", "tune", "--dataset", "mnist58"} },
		"pate":           func() []string { return []string{"pate", "--dataset", "mnist"} },
	}
	const (
		positive = "must be a finite number > 0"
		delta    = "must be in [0, 0.5]: above delta = 0.5, a guarantee allows publishing a record more often than not"
		slack    = "must be in (0, 1)"
		teachers = "must be an integer >= 1"
		count    = "must be an integer in [1, 9007199254740992]"
		odd      = "must be odd for two-class votes (the majority of an even number of votes can tie)"
	)
	// Under -short at a smaller size: the edges taken by plan, ledger init
	// and a budgeted aggregate are given teachers of eps 1, whose
	// compositions within the budget are of fewer labels (6 where 588 at
	// delta 0.5).
	var okShort map[string][]string
	if testing.Short() {
		eps1 := []string{"--eps", "1"}
		okShort = map[string][]string{"plan": eps1, "ledger init": eps1, "aggregate budget": eps1}
	}
	problem := []string{"solve", "verify", "separate", "account rr", "simulate", "plan", "aggregate", "ledger init"}
	oneVote := []string{"solve one-vote", "verify one-vote", "aggregate one-vote", "plan one-vote", "ledger init one-vote", "account gnmax", "account shuffleg", "shuffleg"}
	rdp := []string{"account gaussian", "account dpsgd", "account gnmax", "account shuffleg", "account pate"}
	classes := []string{"aggregate confident", "plan confident", "ledger init confident", "account pate"}
	lnmax := []string{"aggregate lnmax", "plan lnmax", "ledger init lnmax", "account pate lnmax"}
	totals := []string{"solve totals", "simulate", "plan", "aggregate", "ledger init", "transfer"}
	for _, p := range []struct {
		flag string
		cmds []string
		// bad are the values refused, each with the value as the error
		// states it and the rule it breaks; ok, those taken.
		bad [][3]string
		ok  []string
	}{
		{"eps", append(problem, "sidecar"), [][3]string{{"0", "0", positive}, {"NaN", "NaN", positive}, {"+Inf", "+Inf", positive}, {"-1", "-1", positive}}, nil},
		{"Delta", append(problem, "sidecar"), [][3]string{{"0.7", "0.7", delta}, {"-1e-9", "-1e-09", delta}, {"1", "1", delta}, {"NaN", "NaN", delta}}, nil},
		{"delta", problem, [][3]string{{"0.7", "0.7", delta}, {"-1e-9", "-1e-09", delta}, {"NaN", "NaN", delta},
			// DaRRM's problem's own rule, after the shared one; a given 0
			// is a delta, not the default that leaving it out gives.
			{"1e-9", "1e-09", "must be >= Delta = 1e-05: DaRRM's problem holds a release to at least its teachers' delta"},
			{"0", "0", "must be >= Delta = 1e-05: DaRRM's problem holds a release to at least its teachers' delta"}}, nil},
		{"delta", []string{"plan gnmax", "aggregate confident", "ledger init confident"}, [][3]string{{"0.7", "0.7", delta}, {"0", "0", "must be > 0 to convert Renyi DP"}}, nil},
		{"target-eps", oneVote, [][3]string{{"0", "0", positive}, {"-1", "-1", positive}, {"NaN", "NaN", positive}, {"0.3,0", "0", positive}}, nil},
		{"target-delta", append(rdp, "shuffleg", "account pate lnmax"), [][3]string{{"0.7", "0.7", delta}, {"1", "1", delta}, {"NaN", "NaN", delta}}, nil},
		{"target-delta", append(rdp, "account pate lnmax"), [][3]string{{"0", "0", "must be > 0 to convert Renyi DP to (eps, delta)-DP"}}, []string{"0.5"}},
		{"delta-prime", append(totals, "account compose", "account queries", "account step-eps"), [][3]string{{"0", "0", slack}, {"1", "1", slack}, {"NaN", "NaN", slack}}, nil},
		{"rr-delta-prime", []string{"solve", "simulate", "plan", "aggregate", "ledger init", "account rr"}, [][3]string{{"0", "0", slack}, {"1", "1", slack}}, nil},
		{"budget-eps", append(totals, "account queries", "account step-eps"), [][3]string{{"0", "0", positive}, {"NaN", "NaN", positive}, {"+Inf", "+Inf", positive}}, nil},
		// A budget within which more than 2^53 labels fit allows the most
		// the accountant counts, in a plan as in a release and a ledger.
		{"budget-eps", []string{"plan", "plan gnmax", "aggregate budget", "ledger init"}, nil, []string{"1e308"}},
		{"budget-delta", append(totals, "account queries"), [][3]string{{"0.9", "0.9", delta}, {"-1e-9", "-1e-09", delta}, {"1", "1", delta}}, nil},
		{"budget-delta", []string{"plan", "aggregate budget", "ledger init", "account queries"}, nil, []string{"0.5"}},
		{"step-eps", []string{"ledger init steps", "account compose", "account queries"}, [][3]string{{"0", "0", positive}, {"NaN", "NaN", positive}}, nil},
		{"step-delta", []string{"account compose", "account queries", "account step-eps"}, [][3]string{{"0.7", "0.7", delta}, {"NaN", "NaN", delta}}, []string{"0.5"}},
		// Since version 5 ledger init refuses labels that no filter of its
		// budget holds, so 0.5 is in range there but refused by the budget
		// (below), not by this rule.
		{"step-delta", []string{"ledger init steps"}, [][3]string{{"0.7", "0.7", delta}, {"NaN", "NaN", delta}}, nil},
		{"sigma", []string{"account gaussian", "account dpsgd", "teachers train", "teachers tune"}, [][3]string{{"0", "0", positive}, {"NaN", "NaN", positive}}, nil},
		{"sigma1", classes, [][3]string{{"0", "0", positive}, {"NaN", "NaN", positive}, {"0.1", "0.1", "must be in [0.5, 1e+15] for discrete Gaussian noise"}}, nil},
		{"sigma2", append(classes, "plan gnmax"), [][3]string{{"0", "0", positive}, {"-1", "-1", positive}, {"1e16", "1e+16", "must be in [0.5, 1e+15] for discrete Gaussian noise"}}, nil},
		{"sigma-ss", []string{"account pate", "pate"}, [][3]string{{"0", "0", positive}, {"-2", "-2", positive}}, nil},
		{"laplace-scale", lnmax, [][3]string{{"0", "0", positive}, {"NaN", "NaN", positive}, {"1e308", "1e+308", "must be in [0.02, 1e+15] (discrete Laplace noise"}, {"0.01", "0.01", "must be in [0.02, 1e+15] (discrete Laplace noise"}}, nil},
		{"threshold", classes, [][3]string{{"-1", "-1", "must be in [0, K + 10·sigma1] = [0, 1504]"}, {"NaN", "NaN", "must be a finite number"}}, []string{"0"}},
		{"m", problem, [][3]string{{"0", "0", "must be in [1, K] = [1, 3]"}, {"4", "4", "must be in [1, K] = [1, 3]"}, {"NaN", "NaN", "must be in [1, K] = [1, 3]"}}, nil},
		{"K", append(problem, "sidecar", "account gnmax", "account pate", "teachers train", "teachers tune", "plan gnmax"), [][3]string{{"0", "0", teachers}, {"-1", "-1", teachers}}, nil},
		{"K", []string{"solve", "account rr", "simulate", "plan", "ledger init"}, [][3]string{{"2", "2", odd}}, nil},
		{"queries", []string{"solve totals", "simulate", "plan gnmax", "ledger init steps", "transfer"}, [][3]string{{"0", "0", count}, {"9007199254740993", "9007199254740993", count}}, nil},
		{"steps", []string{"account compose", "account step-eps", "account gaussian", "account dpsgd"}, [][3]string{{"0", "0", count}, {"-1", "-1", count}}, nil},
		// Also where no parallel work runs to check it (class counts).
		{"workers", []string{"solve", "plan gnmax", "plan lnmax", "aggregate confident", "ledger init lnmax"}, [][3]string{{"-1", "-1", "must be in [0, 1024] (0: all cores)"}}, nil},
	} {
		for _, name := range p.cmds {
			cmd, ok := cmds[name]
			if !ok {
				t.Fatalf("no command %q", name)
			}
			for _, b := range p.bad {
				_, e, code := darrm(t, "", append(cmd(), "--"+p.flag, b[0])...)
				if want := fmt.Sprintf("--%s = %s: %s", p.flag, b[1], b[2]); code != exitUsage || !strings.Contains(unwrapped(e), want) {
					t.Errorf("%s --%s %s: exit %d: %s\nwant exit 2 and %q", name, p.flag, b[0], code, e, want)
				}
			}
			for _, v := range p.ok {
				if _, e, code := darrm(t, "", append(append(cmd(), okShort[name]...), "--"+p.flag, v)...); code != 0 && code != exitBudget {
					t.Errorf("%s --%s %s: exit %d: %s", name, p.flag, v, code, e)
				}
			}
		}
	}
	if _, e, code := darrm(t, "", append(cmds["ledger init steps"](), "--step-delta", "0.5")...); code != exitUsage || strings.Contains(e, delta) || !strings.Contains(e, "--budget-delta = 1e-05: no filter holds one label of (0.1, 0.5)-DP") {
		t.Errorf("ledger init steps --step-delta 0.5: exit %d: %s\nwant exit 2 for the budget, not the range", code, e)
	}
}

// TestLedgerInitOverExisting: ledger init onto a file that exists, a
// vote file or another ensemble's ledger, exits 2 with what is there and
// what to do (issue 55: exit 1 and a raw "open: file exists"), and leaves
// it as it was.
func TestLedgerInitOverExisting(t *testing.T) {
	dir := t.TempDir()
	votes := smallVotes(t, dir, 3)
	other := newLedgerFile(t, dir, "over-existing", votes)
	for _, c := range []struct{ path, want string }{
		{votes, "exists already and is a file that is not a ledger"},
		{other, "exists already: a ledger of ensemble over-existing"},
	} {
		before, _ := os.ReadFile(c.path)
		_, e, code := darrm(t, "", append([]string{"ledger", "init", c.path, "--ensemble", "over-existing-2", "--budget-eps", "1", "--budget-delta", "1e-5"}, binding3...)...)
		if code != exitUsage || !strings.Contains(unwrapped(e), c.want) || !strings.Contains(unwrapped(e), "name a new file") {
			t.Errorf("init onto %s: exit %d: %s", c.path, code, e)
		}
		if after, _ := os.ReadFile(c.path); string(after) != string(before) {
			t.Errorf("%s changed", c.path)
		}
	}
}

// TestLedgerInitVotesHeader: ledger init --votes reads what aggregate
// reads of the votes' header, in the file or in a sidecar, their classes
// and layout among it, and resolves --mechanism for those votes as
// aggregate does (issue 55: gnmax on 10-class votes failed with "--K =
// 250: must be odd", the two-class GNMax's check); a two-class mechanism
// on them is refused as aggregate refuses it.
func TestLedgerInitVotesHeader(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "votes10.csv")
	var rows strings.Builder
	rows.WriteString(`# {"darrm-votes":1,"ensemble":"header-classes","K":4,"classes":10,"layout":"votes","relation":"one-vote","kind":"fixed","partition":"keyed-hash","teachers":[{"count":4,"source":{"method":"none"}}]}` + "\n")
	for range 5 {
		rows.WriteString("3,3,7,9\n")
	}
	os.WriteFile(csv, []byte(rows.String()), 0o644)
	npy := filepath.Join(dir, "labels.npy")
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pate-teachers-labels-K25.npy"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(npy, raw, 0o644)
	os.WriteFile(votefile.SidecarPath(npy), []byte(`{"darrm-votes":1,"ensemble":"sidecar-classes","K":25,"classes":10,"layout":"votes","orientation":"teachers-in-rows","relation":"one-vote","kind":"fixed","partition":"keyed-hash","teachers":[{"count":25,"source":{"method":"none"}}]}`), 0o644)
	budget := []string{"--budget-eps", "2", "--budget-delta", "1e-5"}
	for i, c := range []struct {
		votes string
		args  []string
		want  string
		code  int
	}{
		{csv, []string{"--mechanism", "gnmax", "--sigma2", "40"}, "gnmax labels", 0},
		{csv, []string{"--mechanism", "confident-gnmax", "--threshold", "3", "--sigma1", "150", "--sigma2", "40"}, "confident-gnmax labels", 0},
		{csv, []string{"--mechanism", "lnmax", "--laplace-scale", "20"}, "lnmax labels", 0},
		{npy, []string{"--mechanism", "gnmax", "--sigma2", "40"}, "gnmax labels", 0},
		{csv, []string{"--mechanism", "darrm-one-vote", "--target-eps", "0.3"}, "darrm-one-vote labels two-class votes, not multi-class votes", exitUsage},
		// A label that neither a filter nor the use composed exactly
		// holds: said of the label, not of a count of none.
		{csv, []string{"--mechanism", "gnmax", "--sigma2", "0.5"}, "--budget-eps = 2: no filter holds one label of (17.5723, 1e-05)-DP", exitUsage},
	} {
		led := filepath.Join(dir, fmt.Sprintf("h%d.ledger", i))
		args := append(append([]string{"ledger", "init", led, "--votes", c.votes, "--replace"}, budget...), c.args...)
		out, e, code := darrm(t, "", args...)
		if code != c.code || !strings.Contains(unwrapped(out+e), c.want) {
			t.Errorf("%v: exit %d: %s%s\nwant %q", c.args, code, out, e, c.want)
		}
	}
}

// TestLedgerInitFilterTable: ledger init's lines of what each filter
// allows are a table within 100 columns: a row too long for one line
// wraps in its text column, the filters' names padded to one width on
// every row (issue 55: the wrapped row lost its padding).
func TestLedgerInitFilterTable(t *testing.T) {
	t.Setenv(statedir.Env, t.TempDir())
	led := filepath.Join(t.TempDir(), "table.ledger")
	// Labels so cheap that every filter allows more than the accountant
	// counts: every row is longer than a line.
	out, e, code := darrm(t, "", "ledger", "init", led, "--ensemble", "filter-table", "--K", "3", "--relation", "one-vote", "--kind", "fixed",
		"--partition", "keyed-hash", "--budget-eps", "3", "--budget-delta", "1e-5", "--step-eps", "1e-20", "--queries", "1000000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	// The first row is the first candidate's (accountant.Budget.OpenFilters);
	// its text column is where the others' must start too.
	lines := strings.Split(out, "\n")
	start := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "  gdp-filter(") })
	end := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "  kept:") })
	if start < 0 || end < start+10 {
		t.Fatalf("no five filter rows of two lines each:\n%s", out)
	}
	column := strings.Index(lines[start], "allows ")
	for _, l := range lines[start:end] {
		row := len(l) > column && strings.TrimSpace(l[:column]) != "" && strings.HasPrefix(l[column:], "allows ")
		more := len(l) > column+2 && strings.TrimSpace(l[:column+2]) == "" && l[column+2] != ' '
		if len(l) > 100 || !row && !more {
			t.Errorf("a line out of the table's columns (%d wide): %q\n%s", len(l), l, out)
		}
	}
}

// TestLedgerFirstReleaseChooses: a ledger open to any use that names no
// filter and declares no labels says that its first release chooses the
// filter; RR's labels choose the Rényi filter, which allows more of them
// than simple composition of the budget's delta, and ledger show names it.
// The teachers are a fresh mechanism per query: fixed ones have their cap
// alone, which the budget does not meet (issue 68).
func TestLedgerFirstReleaseChooses(t *testing.T) {
	dir := t.TempDir()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "votes-K11.csv"))
	if err != nil {
		t.Fatal(err)
	}
	votes := filepath.Join(dir, "votes-per-query.csv")
	if err := os.WriteFile(votes, []byte(strings.Replace(string(raw), `"kind":"fixed"`, `"kind":"per-query"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	allowed := func(name string, filter ...string) (int, string) {
		led := filepath.Join(dir, name)
		out, e, code := darrm(t, "", append([]string{"ledger", "init", led, "--votes", votes, "--budget-eps", "4", "--budget-delta", "1e-6", "--replace"}, filter...)...)
		if code != 0 {
			t.Fatal(e)
		}
		if chooses := strings.Contains(unwrapped(out), "its first release chooses"); chooses != (len(filter) == 0) {
			t.Errorf("%s: init says the first release chooses: %v:\n%s", name, chooses, out)
		}
		out, e, code = darrm(t, "", "aggregate", votes, "--mechanism", "rr", "--m", "3", "--ledger", led, "--out", filepath.Join(dir, name+".csv"), "--format", "json")
		var doc report.Aggregate
		decode(t, out, &doc)
		if code != 0 || doc.Ledger == nil || doc.Ledger.QueriesLeft == nil {
			t.Fatalf("%s: exit %d: %s", name, code, e)
		}
		if doc.Ledger.FilterChosen != (len(filter) == 0) {
			t.Errorf("%s: the release says it chose the ledger's filter: %v", name, doc.Ledger.FilterChosen)
		}
		show, _, _ := darrm(t, "", "ledger", "show", led, "--format", "json")
		var s struct {
			Composition string `json:"composition"`
		}
		decode(t, show, &s)
		return doc.Released + *doc.Ledger.QueriesLeft, s.Composition
	}
	simple, by := allowed("simple.ledger", "--filter", "simple")
	if by != "simple" {
		t.Errorf("--filter simple: composition %q", by)
	}
	chosen, by := allowed("chosen.ledger")
	if by != "rdp-filter" || chosen <= simple {
		t.Errorf("the first release chose %q, allowing %d RR labels; simple composition allows %d", by, chosen, simple)
	}
}

// TestLedgerRefusedBeforeSolve: a ledger that a run refuses whatever it
// releases (bound to other teachers, retired, missing), and a ledger init
// refused whatever its use (a file there, a ledger of the ensemble
// recorded), are refused before gamma_opt is solved, which takes minutes
// at a large K: nothing is solved, so nothing is cached.
func TestLedgerRefusedBeforeSolve(t *testing.T) {
	dir := t.TempDir()
	head, err := (provenance.Binding{Ensemble: "k11", Teachers: provenance.Teachers{K: 11, Each: accountant.Guarantee{Eps: 0.1, Delta: 1e-5}, Relation: accountant.PrivateTeachers, Kind: provenance.PerQuery, Partition: provenance.SharedData}}.Header(2, votefile.LayoutVotes)).AppendHeader(nil, votefile.FormatCSV)
	if err != nil {
		t.Fatal(err)
	}
	votes := string(head) + "1,1,1,1,1,1,0,0,0,0,0\n"
	init := func(name, ensemble string, more ...string) string {
		led := filepath.Join(dir, name)
		if _, e, code := darrm(t, "", append([]string{"ledger", "init", led, "--ensemble", ensemble, "--K", "11", "--eps", "0.1", "--Delta", "1e-5", "--kind", "per-query", "--partition", "shared", "--budget-eps", "2", "--budget-delta", "1e-3"}, more...)...); code != 0 {
			t.Fatal(e)
		}
		return led
	}
	retired := init("retired.ledger", "k11")
	init("new.ledger", "k11", "--replace")
	labels := filepath.Join(dir, "labels.csv")
	use := []string{"ledger", "init", "--K", "11", "--eps", "0.1", "--Delta", "1e-5", "--kind", "per-query", "--partition", "shared", "--budget-eps", "2", "--budget-delta", "1e-3", "--mechanism", "darrm", "--m", "3", "--queries", "10", "--ensemble"}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"another ensemble", []string{"aggregate", "--m", "3", "--ledger", init("other.ledger", "k13"), "--out", labels}, "cannot share a budget"},
		{"retired", []string{"aggregate", "--m", "3", "--ledger", retired, "--out", labels}, "no release may charge a retired ledger"},
		{"missing", []string{"aggregate", "--m", "3", "--ledger", filepath.Join(dir, "missing.ledger"), "--out", labels}, "no such file"},
		{"init over a file", append(use, "k17", retired), "exists already"},
		{"init of a second ledger", append(use, "k11", filepath.Join(dir, "second.ledger")), "A second ledger would give the ensemble its budget again"},
	} {
		cache := filepath.Join(dir, "cache-"+strings.ReplaceAll(c.name, " ", "-"))
		_, errOut, code := darrm(t, votes, append(c.args, "--cache-dir", cache)...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d: %s", c.name, code, errOut)
		}
		// The gamma tables; the folder may keep the run's one-bit answers.
		if solved, _ := filepath.Glob(filepath.Join(cache, "*.json")); len(solved) > 0 {
			t.Errorf("%s: gamma_opt solved before the ledger was refused", c.name)
		}
	}
}
