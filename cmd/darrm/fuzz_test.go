package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/quotetest"
	"github.com/darrm/darrm/internal/statedir"
)

// fuzzCommands are the commands that read a document a user gives on
// standard input, as FuzzStdin runs them: a gamma and its problem to
// certify (verify; separate, one shard of it) and votes to release
// (aggregate, seeded: an experiment's labels).
var fuzzCommands = []func(dir string) []string{
	func(string) []string { return []string{"verify"} },
	func(dir string) []string {
		return []string{"separate", "--shard", "0/2", "--out", filepath.Join(dir, "part.json")}
	},
	func(dir string) []string {
		return []string{"aggregate", "--seed", "1", "--out", filepath.Join(dir, "labels.csv"), "--no-cache"}
	},
}

// FuzzStdin: whatever document a command reads from standard input, it
// ends with exit status 0 (done), 2 (bad input) or 3 (a gamma not
// certified), never a panic or a failure (exit 1: an internal error, or
// I/O, of which a temporary folder has none); and a document it refuses
// leaves no output file, its error quoting a few bytes of it
// (quotetest.Check). The seeds are the testdata's gamma and votes,
// each given to every command; each command does its work on its own
// (the gamma certified, one shard separated, the votes released).
func FuzzStdin(f *testing.F) {
	testdata, err := filepath.Abs(filepath.Join("..", "..", "testdata"))
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []struct {
		name    string
		command int
	}{{"gamma-K11-m3.json", 0}, {"gamma-K11-m3.json", 1}, {"votes-K11.csv", 2}, {"votes-K11-one-vote.csv", -1}} {
		b, err := os.ReadFile(filepath.Join(testdata, seed.name))
		if err != nil {
			f.Fatal(err)
		}
		for i := range fuzzCommands {
			f.Add(uint8(i), b)
		}
		if seed.command >= 0 {
			var out, errb bytes.Buffer
			args := fuzzCommands[seed.command](f.TempDir())
			if code := runWith(testMemo, context.Background(), args, bytes.NewReader(b), &out, &errb); code != 0 {
				f.Fatalf("darrm %v < %s: exit %d\n%s", args, seed.name, code, errb.String())
			}
		}
	}
	uncertified := []byte(`{"K": 11, "m": 3, "eps": 0.1, "Delta": 1e-5, "gamma": [1,1,1,1,1,1,1,1,1,1,1,1]}`)
	if code := runWith(testMemo, context.Background(), fuzzCommands[0](""), bytes.NewReader(uncertified), io.Discard, io.Discard); code != 3 {
		f.Fatalf("darrm verify of a gamma that is not private: exit %d, want 3", code)
	}
	for i := range fuzzCommands {
		f.Add(uint8(i), uncertified)
		f.Add(uint8(i), []byte("K,m,eps,Delta\n11,3,0.1,1e-5\nl,gamma\n0,1\n1,1\n"))
	}
	f.Add(uint8(2), []byte(strings.Repeat("9", 200)+",1,0\n0,1,1\n"))
	f.Fuzz(func(t *testing.T, cmd uint8, data []byte) {
		dir := t.TempDir()
		args := fuzzCommands[int(cmd)%len(fuzzCommands)](dir)
		_, stderr, code := darrm(t, string(data), args...)
		if code != 0 && code != 2 && code != 3 {
			t.Fatalf("darrm %v: exit %d on %q\n%s", args, code, data, stderr)
		}
		if code == 2 {
			quotetest.Check(t, stderr, data, 2000)
			if left := files(t, dir); len(left) != 0 {
				t.Errorf("darrm %v refused its input (exit 2) and left %v\n%s", args, left, stderr)
			}
		}
	})
}

// fileCommands are the commands that read a file a user names, as
// FuzzFile runs them on the file in and writes into dir: solve's
// documents to draw (plot gamma), a shard's part to combine (separate
// merge), PATE's teachers' labels (to account, account pate; to label by
// GNMax, aggregate, seeded; to plan on as public proxy votes, plan
// --votes; to state their header, sidecar), a ledger to show and to
// verify, and the schedule of a new ledger's runs (ledger init
// --schedule).
var fileCommands = []func(in, dir, counts string) []string{
	func(in, dir, _ string) []string {
		return []string{"plot", "gamma", in, "--out", filepath.Join(dir, "figure.svg")}
	},
	func(in, _, _ string) []string { return []string{"separate", "merge", in} },
	func(in, _, _ string) []string {
		return []string{"account", "pate", in, "--sigma2", "40", "--target-delta", "1e-5", "--classes", "10", "--teachers-in-rows"}
	},
	func(in, dir, _ string) []string {
		return []string{"aggregate", in, "--mechanism", "gnmax", "--sigma2", "40", "--delta", "1e-5", "--classes", "10", "--teachers-in-rows",
			"--partition", "keyed-hash", "--seed", "1", "--out", filepath.Join(dir, "labels.csv")}
	},
	func(in, _, _ string) []string {
		return []string{"plan", "--votes", in, "--votes-are", "public", "--K", "25", "--classes", "10", "--teachers-in-rows",
			"--queries", "100", "--budget-eps", "2", "--budget-delta", "1e-5", "--no-cache"}
	},
	func(in, dir, _ string) []string {
		return []string{"sidecar", in, "--ensemble", "x", "--relation", "one-vote", "--kind", "fixed", "--partition", "keyed-hash",
			"--classes", "10", "--teachers-in-rows", "--out", filepath.Join(dir, "votes.meta.json")}
	},
	func(in, _, _ string) []string { return []string{"ledger", "show", in} },
	func(in, _, _ string) []string { return []string{"ledger", "verify", in} },
	func(in, dir, _ string) []string {
		scheduled++ // a new ensemble each time: one ledger to each
		return []string{"ledger", "init", filepath.Join(dir, "scheduled.ledger"), "--ensemble", fmt.Sprintf("fuzz-%d", scheduled),
			"--K", "250", "--classes", "10", "--relation", "one-vote", "--kind", "fixed", "--partition", "keyed-hash",
			"--budget-eps", "20", "--budget-delta", "1e-3", "--schedule", in}
	},
	// A label file's header states how its labels were made, a PTR
	// release's its budget: the account recomputes the plan from it.
	func(in, _, counts string) []string {
		return []string{"account", "pate", counts, "--labels", in, "--target-delta", "1e-5"}
	},
}

// crossed returns the commands, of n, that a seed made for command i is
// given to in the corpus: every command, as a fuzzer starts from. Under
// -short, none, where the target is not fuzzing: the seed's run on
// command i, before, checked more than the target does (exit 0, where the
// target allows a refusal), and the cross product runs each command many
// times more on another's input, which it mostly refuses (in the CLI,
// some seconds of CPU), and runs without -short; the regression seeds,
// added one by one, run. Fuzzing under -short starts from command i's
// seeds.
func crossed(i, n int) []int {
	if testing.Short() {
		if fuzzing() {
			return []int{i}
		}
		return nil
	}
	all := make([]int, n)
	for j := range all {
		all[j] = j
	}
	return all
}

// fuzzing reports whether go test was asked to fuzz (-fuzz).
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// scheduled counts the ledgers FuzzFile declares a schedule for, and
// those FuzzFlags makes.
var scheduled int

// FuzzFile: whatever file a command reads, it ends with exit status 0, 2
// (bad input) or 3 (a certificate merged that is not certified), never a
// panic or a failure (exit 1), and a file it refuses leaves no output,
// its error quoting a few bytes of it (quotetest.Check).
// The seeds are the documents each command reads, made by darrm (solve
// --compare's JSON, one part of a certificate of one shard, a ledger with
// a release charged, the labels of a release by PTR), the testdata's
// (PATE's teachers' labels) or written here (a schedule of three runs,
// one of releases by PTR), each given to every command.
func FuzzFile(f *testing.F) {
	// Its own records, so that its ledger of the testdata's ensemble is
	// not a second one beside another test's.
	f.Setenv(statedir.Env, f.TempDir())
	dir := f.TempDir()
	made := func(args ...string) []byte {
		var out, errb bytes.Buffer
		if code := runWith(testMemo, context.Background(), args, strings.NewReader(""), &out, &errb); code != 0 {
			f.Fatalf("darrm %v: exit %d\n%s", args, code, errb.String())
		}
		return out.Bytes()
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	gammaFile, err := filepath.Abs(filepath.Join("..", "..", "testdata", "gamma-K11-m3.json"))
	if err != nil {
		f.Fatal(err)
	}
	labels, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pate-teachers-labels-K25.npy"))
	if err != nil {
		f.Fatal(err)
	}
	votes := filepath.Join(filepath.Dir(gammaFile), "votes-K11.csv")
	ledgerFile := filepath.Join(dir, "k11.ledger")
	made("ledger", "init", ledgerFile, "--votes", votes, "--budget-eps", "10", "--budget-delta", "1e-3")
	made("aggregate", votes, "--ledger", ledgerFile, "--seed", "1", "--out", filepath.Join(dir, "labels.csv"), "--no-cache")
	made("separate", gammaFile, "--shard", "0/1", "--out", filepath.Join(dir, "part.json"))
	ledger := read("k11.ledger")
	counts := ptrCounts(f, dir, "counts.csv", 40, 238)
	confident := []string{"aggregate", counts, "--mechanism", "confident-gnmax", "--threshold", "200", "--sigma1", "150", "--sigma2", "40", "--delta", "1e-5", "--seed", "1"}
	made(append(confident, "--accounting", "ptr", "--budget-eps", "2", "--budget-delta", "1e-5", "--out", filepath.Join(dir, "ptr.csv"))...)
	made(append(confident, "--out", filepath.Join(dir, "confident.csv"))...)
	// seeds[i] is a document that fileCommands[i] reads.
	seeds := [][]byte{
		made("solve", "--K", "11", "--m", "3", "--compare", "--format", "json", "--no-cache"),
		read("part.json"),
		labels,
		labels,
		labels,
		labels,
		ledger,
		ledger,
		[]byte("--mechanism gnmax --sigma2 40 --delta 1e-5 --queries 20\n" +
			"--mechanism confident-gnmax --threshold 200 --sigma1 150 --sigma2 40 --delta 1e-5 --accounting ptr --max-queries 30 --release-eps 2 --release-delta 1e-5 --queries 2\n" +
			"# the rest\n--mechanism confident-gnmax --threshold 200 --sigma1 150 --sigma2 40 --delta 1e-5\n"),
		read("ptr.csv"),
	}
	for i, b := range seeds {
		in := filepath.Join(dir, "seed")
		if err := os.WriteFile(in, b, 0o644); err != nil {
			f.Fatal(err)
		}
		args := fileCommands[i](in, f.TempDir(), counts)
		if code := runWith(testMemo, context.Background(), args, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
			f.Fatalf("darrm %v on its seed: exit %d", args, code)
		}
		for _, j := range crossed(i, len(fileCommands)) {
			f.Add(uint8(j), b)
		}
	}
	f.Add(uint8(len(fileCommands)-1), read("confident.csv"))
	// A PTR release's header within a budget the test alone exceeds: its
	// plan searched for hours.
	f.Add(uint8(len(fileCommands)-1), bytes.Replace(read("ptr.csv"), []byte(`"budget_eps":2,`), []byte(`"budget_eps":0.01,`), 1))
	// A part whose count of multisets is a long string.
	f.Add(uint8(1), regexp.MustCompile(`"Configs": [0-9]+`).ReplaceAll(read("part.json"), []byte(`"Configs": "`+strings.Repeat("x", 200)+`"`)))
	f.Fuzz(func(t *testing.T, cmd uint8, data []byte) {
		in := filepath.Join(t.TempDir(), "input")
		if err := os.WriteFile(in, data, 0o644); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		args := fileCommands[int(cmd)%len(fileCommands)](in, dir, counts)
		_, stderr, code := darrm(t, "", args...)
		if code != 0 && code != 2 && code != 3 {
			t.Fatalf("darrm %v: exit %d on %q\n%s", args, code, data, stderr)
		}
		if code == 2 {
			quotetest.Check(t, stderr, data, 2000)
		}
		if left := files(t, dir); code == 2 && len(left) != 0 {
			t.Errorf("darrm %v refused its input (exit 2) and left %v\n%s", args, left, stderr)
		}
	})
}

// flagCommands are commands of numbers alone, as FuzzFlags runs them
// with three of their flags' values a, b and c: a composition, GNMax's
// calibration, a plan, DP-SGD's accounting, a release by generalized
// PTR, whose settings decide the plan before any vote counts, a
// smooth-sensitivity draw, Gaussian mechanisms composed, the queries and
// the step that fit a budget, randomized response's calibration, a
// ledger's budget and its declared use, and a plan by PTR (on the class
// counts of votes, a file of 40 queries).
var flagCommands = []func(votes, a, b, c string) []string{
	func(_, a, b, c string) []string {
		return []string{"account", "compose", "--step-eps", a, "--step-delta", b, "--steps", c, "--delta-prime", "0.1"}
	},
	func(_, a, b, _ string) []string {
		return []string{"account", "gnmax", "--target-eps", a, "--target-delta", b}
	},
	func(_, a, b, c string) []string {
		return []string{"plan", "--mechanism", "gnmax", "--K", a, "--classes", b, "--queries", c, "--budget-eps", "2", "--budget-delta", "1e-5", "--no-cache"}
	},
	func(_, a, b, c string) []string {
		return []string{"account", "dpsgd", "--sigma", a, "--n", b, "--batch", c, "--epochs", "5", "--target-delta", "1e-4"}
	},
	func(votes, a, b, c string) []string {
		return []string{"aggregate", votes, "--mechanism", "confident-gnmax", "--threshold", "200", "--sigma1", "150", "--sigma2", a, "--delta", "1e-5",
			"--accounting", "ptr", "--budget-eps", b, "--budget-delta", c, "--out", "-", "--seed", "1"}
	},
	func(votes, a, b, c string) []string {
		return []string{"account", "pate", votes, "--threshold", "200", "--sigma1", "150", "--sigma2", a, "--target-delta", "1e-5",
			"--ss-order", b, "--sigma-ss", c, "--release-estimate", "--seed", "1"}
	},
	func(_, a, b, c string) []string {
		return []string{"account", "gaussian", "--sigma", a, "--steps", b, "--target-delta", c, "--conversion", "improved"}
	},
	func(_, a, b, c string) []string {
		return []string{"account", "queries", "--step-eps", a, "--step-delta", b, "--budget-eps", c, "--budget-delta", "0.02", "--composition", "optimal"}
	},
	func(_, a, b, c string) []string {
		return []string{"account", "step-eps", "--budget-eps", a, "--step-delta", b, "--steps", c, "--composition", "optimal"}
	},
	func(_, a, b, c string) []string {
		return []string{"account", "rr", "--K", a, "--m", b, "--delta", c, "--rr-composition", "general"}
	},
	func(votes, a, b, c string) []string {
		scheduled++ // ledger init makes a new file: one name each
		return []string{"ledger", "init", filepath.Join(filepath.Dir(votes), fmt.Sprintf("fuzz-%d.ledger", scheduled)), "--votes", votes, "--budget-eps", a, "--budget-delta", b,
			"--mechanism", "confident-gnmax", "--threshold", "200", "--sigma1", "150", "--sigma2", "40", "--delta", "1e-5", "--queries", c, "--replace"}
	},
	func(votes, a, b, c string) []string {
		return []string{"plan", "--mechanism", "confident-gnmax", "--K", "250", "--classes", "10", "--threshold", "200", "--sigma1", "150", "--sigma2", a,
			"--accounting", "ptr", "--budget-eps", b, "--budget-delta", c, "--votes", votes, "--votes-are", "public"}
	},
}

// FuzzFlags: whatever numbers a command of numbers is given, it answers
// or refuses them naming a flag (exit 0 or 2; a release by PTR whose test
// failed, 4), never panicking or failing (exit 1). The seeds are each
// command's documented example.
func FuzzFlags(f *testing.F) {
	votes := ptrCounts(f, f.TempDir(), "counts.csv", 40, 238)
	for i, seed := range [][3]string{{"0.1", "1e-5", "10"}, {"0.2676", "3e-4", ""}, {"250", "10", "1000"}, {"12", "1024", "30"}, {"40", "2", "1e-5"}, {"40", "20", "10"},
		{"5", "100", "1e-5"}, {"0.2676", "3e-4", "10"}, {"1", "1e-6", "100"}, {"35", "6.4521", "0.1001"}, {"10", "1e-4", "100"}, {"10", "2", "1e-5"}} {
		args := flagCommands[i](votes, seed[0], seed[1], seed[2])
		if code := runWith(testMemo, context.Background(), args, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
			f.Fatalf("darrm %v: exit %d", args, code)
		}
		for _, j := range crossed(i, len(flagCommands)) {
			f.Add(uint8(j), seed[0], seed[1], seed[2])
		}
	}
	f.Add(uint8(0), "NaN", "-0", "1e308")
	f.Add(uint8(2), "1", "0", "1")        // refused by the multi-class check, which named no flag
	f.Add(uint8(4), "40", "0.01", "1e-5") // searched σ for hours
	f.Add(uint8(4), "1e5", "2", "1e-5")   // C5 and C6 fail: exit 1, no flag named
	f.Add(uint8(5), "40", "1e6", "1e15")  // a deviation beyond the lattice sampler: exit 1
	f.Fuzz(func(t *testing.T, cmd uint8, a, b, c string) {
		args := flagCommands[int(cmd)%len(flagCommands)](votes, a, b, c)
		_, stderr, code := darrm(t, "", args...)
		// A release by PTR whose test fails labels nothing: exit 4.
		if code != 0 && code != 2 && !(code == 4 && args[0] == "aggregate") {
			t.Fatalf("darrm %q: exit %d\n%s", args, code, stderr)
		}
		if code == 2 && !strings.Contains(stderr, "--") {
			t.Errorf("darrm %q: refused without naming a flag:\n%s", args, stderr)
		}
	})
}
