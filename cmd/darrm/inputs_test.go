package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/internal/fixtures"
	"github.com/darrm/darrm/internal/statedir"
)

// kindFiles writes one file of each kind darrm writes into dir, each made
// by the command that makes it, and returns them by kind. Its ledger is
// recorded in a state folder of the test's own.
func kindFiles(t *testing.T, dir string) map[*setup.FileKind]string {
	t.Helper()
	t.Setenv(statedir.Env, t.TempDir())
	p := func(name string) string { return filepath.Join(dir, name) }
	gammaJSON, err := os.ReadFile(fixtures.Path("gamma-K11-m3.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p("g.json"), gammaJSON, 0o644)
	votes := voteFile(t, dir, 3, func(i int) int { return i })
	for _, args := range [][]string{
		{"aggregate", votes, "--gamma", p("g.json"), "--out", p("labels.csv"), "--seed", "1"},
		{"ledger", "init", p("k.ledger"), "--votes", votes, "--budget-eps", "5", "--budget-delta", "1e-3"},
		{"separate", p("g.json"), "--shard", "0/2", "--out", p("part0.json")},
	} {
		if _, e, code := darrm(t, "", args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, e)
		}
	}
	csv, e, code := darrm(t, "", "solve", "--K", "5", "--m", "2", "--no-cache", "--format", "csv")
	if code != 0 {
		t.Fatal(e)
	}
	os.WriteFile(p("g.csv"), []byte(csv), 0o644)
	compact := strings.Join(strings.Fields(string(gammaJSON)), "")
	os.WriteFile(p("compact.json"), []byte(compact+"\n"), 0o644)
	return map[*setup.FileKind]string{setup.KindVotes: votes, setup.KindLabels: p("labels.csv"), setup.KindLedger: p("k.ledger"),
		setup.KindGamma: p("g.json"), setup.KindShard: p("part0.json")}
}

// TestSniff: each of darrm's files is recognised as what it is, written
// as its command writes it (also a gamma as solve's CSV and as one line
// of JSON); vote files without a header and counts are not recognised
// (their readers read them).
func TestSniff(t *testing.T) {
	dir := t.TempDir()
	for want, path := range kindFiles(t, dir) {
		if got := setup.SniffPath(path); got != want {
			t.Errorf("%s: sniffed as %v, want %s", filepath.Base(path), got, want.Name)
		}
	}
	for name, want := range map[string]*setup.FileKind{"g.csv": setup.KindGamma, "compact.json": setup.KindGamma} {
		if got := setup.SniffPath(filepath.Join(dir, name)); got != want {
			t.Errorf("%s: sniffed as %v, want %s", name, got, want.Name)
		}
	}
	for _, s := range []string{"0,1,1\n", "id,t1,t2,t3\nq1,0,1,1\n", "[0,1,1]\n", "240,5,5\n", "\n\n  \n{\"id\":1,\"votes\":[0,1,1]}\n", "0.5 0.7 0.7 0.5\n", "", "{\n\"a\": [1,\n",
		// A row of JSON lines longer than what sniff looks at.
		"{\"id\":1,\"votes\":[" + strings.Repeat("0,", 40000) + "1]}\n"} {
		path := filepath.Join(dir, "x")
		os.WriteFile(path, []byte(s), 0o644)
		if got := setup.SniffPath(path); got != nil && !(got == setup.KindJSONDoc && strings.HasPrefix(s, "{\n")) {
			t.Errorf("%q: sniffed as %s", s, got.Name)
		}
	}
}

// TestWrongKindOfFile: each reader of a file refuses each of darrm's
// other files by what it is and says what reads it (exit 2), and reads
// its own kind; a file that does not exist is named by its flag or
// argument, with the existing names close to it.
func TestWrongKindOfFile(t *testing.T) {
	dir := t.TempDir()
	// A vote file given as votes is released: its gamma is solved into
	// this test's folder, not the user's cache.
	t.Setenv("DARRM_CACHE_DIR", filepath.Join(dir, "cache"))
	kinds := kindFiles(t, dir)
	readers := []struct {
		role    string
		accepts []*setup.FileKind
		args    func(path string) []string
	}{
		{"VOTES", []*setup.FileKind{setup.KindVotes}, func(p string) []string { return []string{"aggregate", p, "--out", filepath.Join(dir, "out.csv")} }},
		{"VOTES", []*setup.FileKind{setup.KindVotes}, func(p string) []string {
			return []string{"account", "pate", p, "--sigma2", "40", "--target-delta", "1e-5"}
		}},
		{"--votes", []*setup.FileKind{setup.KindVotes}, func(p string) []string {
			return []string{"ledger", "init", filepath.Join(dir, "new.ledger"), "--votes", p, "--budget-eps", "1", "--budget-delta", "1e-3"}
		}},
		{"--labels", []*setup.FileKind{setup.KindLabels}, func(p string) []string {
			return []string{"account", "pate", kinds[setup.KindVotes], "--labels", p, "--target-delta", "1e-5"}
		}},
		{"--gamma", []*setup.FileKind{setup.KindGamma, setup.KindShard}, func(p string) []string {
			return []string{"aggregate", kinds[setup.KindVotes], "--gamma", p, "--out", filepath.Join(dir, "out.csv")}
		}},
		{"GAMMA", []*setup.FileKind{setup.KindGamma, setup.KindShard}, func(p string) []string { return []string{"verify", p} }},
		{"PART", []*setup.FileKind{setup.KindShard}, func(p string) []string { return []string{"separate", "merge", p} }},
		{"FILE", []*setup.FileKind{setup.KindGamma}, func(p string) []string {
			return []string{"plot", "gamma", p, "--out", filepath.Join(dir, "fig.svg")}
		}},
		{"ledger", []*setup.FileKind{setup.KindLedger}, func(p string) []string { return []string{"ledger", "show", p} }},
		{"ledger", []*setup.FileKind{setup.KindLedger}, func(p string) []string {
			return []string{"aggregate", kinds[setup.KindVotes], "--ledger", p, "--out", filepath.Join(dir, "out.csv")}
		}},
	}
	for _, r := range readers {
		for kind, path := range kinds {
			args := r.args(path)
			_, stderr, code := darrm(t, "", args...)
			wrong := r.role + " " + path + " is " + kind.Name
			if accepted := containsKind(r.accepts, kind); accepted && strings.Contains(stderr, wrong) || !accepted && (code != exitUsage || !strings.Contains(stderr, wrong+", not ") || !strings.Contains(stderr, kind.Use)) {
				t.Errorf("%v: exit %d: %s", args, code, stderr)
			}
		}
		mistyped := filepath.Join(dir, "votes.cvs")
		if r.role == "ledger" || r.role == "FILE" {
			continue
		}
		args := r.args(mistyped)
		_, stderr, code := darrm(t, "", args...)
		want := r.role + " " + mistyped + ": no such file or directory; did you mean " + kinds[setup.KindVotes] + "?"
		if code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("%v: exit %d: %s, want %q", args, code, stderr, want)
		}
	}
	_, stderr, code := darrm(t, "", "ledger", "show", filepath.Join(dir, "k.ledgr"))
	if code != exitUsage || !strings.Contains(stderr, "did you mean "+kinds[setup.KindLedger]+"?") {
		t.Errorf("ledger show of a mistyped name: exit %d: %s", code, stderr)
	}
	// A JSON document spread over lines is no vote file, whatever it is.
	doc := filepath.Join(dir, "doc.json")
	os.WriteFile(doc, []byte("{\n  \"a\": 1\n}\n"), 0o644)
	_, stderr, code = darrm(t, "", "aggregate", doc)
	if code != exitUsage || !strings.Contains(stderr, "is a JSON document spread over several lines, not a vote file") {
		t.Errorf("aggregate of a JSON document: exit %d: %s", code, stderr)
	}
}

func containsKind(ks []*setup.FileKind, k *setup.FileKind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// TestCountsWithoutFlag: a counts file without a metadata header or
// --input-format counts is read as counts by aggregate and account pate,
// with a note, and gives the same result as with the flag; an ambiguous
// file is refused with the flags that settle it; a value that is no vote
// in a file that is not evidently counts names the flag.
func TestCountsWithoutFlag(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "counts.csv")
	os.WriteFile(path, []byte("240,5,5,0\n200,30,10,10\n90,80,50,30\n250,0,0,0\n"), 0o644)
	for _, cmd := range [][]string{
		{"account", "pate", path, "--sigma2", "40", "--target-delta", "1e-5", "--format", "json"},
		{"aggregate", path, "--mechanism", "gnmax", "--partition", "keyed-hash", "--sigma2", "40", "--delta", "1e-5", "--seed", "1", "--format", "json", "--out", filepath.Join(dir, "labels.csv")},
	} {
		auto, stderr, code := darrm(t, "", cmd...)
		if code != 0 || !strings.Contains(stderr, path+" holds vote counts, one column per class: read as counts") {
			t.Fatalf("%v: exit %d: %s", cmd, code, stderr)
		}
		flagged, stderr, code := darrm(t, "", append(cmd, "--input-format", "counts")...)
		if code != 0 || strings.Contains(stderr, "holds vote counts") {
			t.Fatalf("%v --input-format counts: exit %d: %s", cmd, code, stderr)
		}
		strip := regexp.MustCompile(`"(seconds|elapsed_seconds|queries_per_second)": [^,\n]*,?`)
		if a, f := strip.ReplaceAllString(auto, ""), strip.ReplaceAllString(flagged, ""); a != f {
			t.Errorf("%v: detected counts and --input-format counts differ:\n%s\n%s", cmd, a, f)
		}
	}
	for _, tc := range []struct {
		data string
		args []string
		want string
	}{
		{"17,0,1,1\n18,0,0,1\n", nil, "read both as an id followed by 0/1 votes and as vote counts"},
		{"0,1,2,0,1\n0,1,1,0,1\n", nil, `vote above 1 (not quoted: a vote file's counts are private): must be 0 or 1 (if the rows are vote counts, one column per class, read the file as counts: --input-format counts`},
		// One row is no evidence of counts: the typo is named where it is.
		{"1,0,2,1,0,1,0,1,1,0,1\n", nil, `counts.csv, line 1, column 3: vote above 1 (not quoted: a vote file's counts are private): must be 0 or 1`},
		{"0,1,2,0,1\n1,1,1,1,0\n", nil, `line 1, column 3: vote above 1 (not quoted: a vote file's counts are private): must be 0 or 1`},
		// Class labels with abstentions, read without their classes.
		{"0,1,-1,0,1\n1,1,0,-1,0\n", nil, `line 1, column 3: vote "-1": must be 0 or 1 (-1 is how class labels mark a teacher that did not vote: if the rows hold class labels, give --classes C)`},
		{"[0,1,-1,0,1]\n", nil, `vote 3: "-1": must be 0 or 1 (-1 is how class labels mark a teacher that did not vote: if the rows hold class labels, give --classes C)`},
		{"240,5,5,0\n200,30,10,10\n", []string{"--K", "249"}, `(if the rows are vote counts, one column per class, read the file as counts: --input-format counts`},
		// Under a K stated, counts may fall short of it (abstentions): they
		// are counts, which the two-class default mechanism refuses.
		{"240,5,5,0\n200,30,10,10\n", []string{"--K", "251"}, `--mechanism darrm labels two-class votes, not multi-class votes`},
	} {
		os.WriteFile(path, []byte(tc.data), 0o644)
		args := append([]string{"aggregate", path, "--eps", "0.1", "--Delta", "1e-5", "--out", filepath.Join(dir, "l.csv")}, tc.args...)
		if _, stderr, code := darrm(t, "", args...); code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q %v: exit %d: %s", tc.data, tc.args, code, stderr)
		}
	}
}

// TestDatasetCase: a data set named in any case is the data set, and
// outputs print its name as darrm spells it.
func TestDatasetCase(t *testing.T) {
	args := func(name string) []string {
		return []string{"shuffleg", "--task", "mean", "--dataset", name, "--n", "40", "--d", "5", "--epochs", "3", "--runs", "2", "--seed", "7", "--target-eps", "5", "--lr-grid", "0.1,0.01", "--format", "json"}
	}
	want, _, code := darrm(t, "", args("synthetic")...)
	if code != 0 {
		t.Fatalf("shuffleg: exit %d", code)
	}
	strip := regexp.MustCompile(`"[a-z_]*seconds[a-z_]*": [^,\n]*,?`)
	got, stderr, code := darrm(t, "", args("SYNTHETIC")...)
	if code != 0 || strip.ReplaceAllString(got, "") != strip.ReplaceAllString(want, "") || strings.Contains(got, "SYNTHETIC") {
		t.Errorf("--dataset SYNTHETIC: exit %d: %s\n%s", code, stderr, got)
	}
	// The data are not there, so each command stops at loading them: by
	// the data set's name as darrm spells it.
	t.Setenv("DARRM_DATA", t.TempDir())
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"transfer", "--dataset", "MNIST58"}, "dataset mnist58: file "},
		{[]string{"teachers", "train", "--dataset", "Fashion58"}, "dataset fashion58: file "},
		{[]string{"pate", "--dataset", "Fashion-MNIST"}, "dataset fashion-mnist: file "},
	} {
		if _, stderr, _ := darrm(t, "", tc.args...); !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: %s, want %q", tc.args, stderr, tc.want)
		}
	}
}

// TestMistypedFolderAndArguments: a mistyped --data-dir is named with the
// folder close to it, and an argument too many shows the usage line.
func TestMistypedFolderAndArguments(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "data"), 0o755)
	typo := filepath.Join(dir, "dta")
	_, stderr, code := darrm(t, "", "shuffleg", "--task", "mean", "--dataset", "mnist69", "--target-eps", "5", "--data-dir", typo)
	if code != exitUsage || !strings.Contains(stderr, "--data-dir "+typo+": folder "+typo+" does not exist; did you mean "+filepath.Join(dir, "data")+"?") {
		t.Errorf("--data-dir mistyped: exit %d: %s", code, stderr)
	}
	_, stderr, code = darrm(t, "", "aggregate", "votes.csv", "labels.csv")
	if code != exitUsage || !strings.Contains(stderr, "(usage: darrm aggregate [VOTES] [flags])") {
		t.Errorf("two arguments: exit %d: %s", code, stderr)
	}
}
