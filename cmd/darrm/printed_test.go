package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/statedir"
)

// printedVotes are the votes of one kind that the printed-command tests
// plan on and release: a proxy and the private votes, the flags that read
// them (as plan takes them for --votes), and whether they have a
// metadata header.
type printedVotes struct {
	name, proxy, private string
	read                 []string
	header               bool
}

// pateKinds writes the votes of 250 teachers over 10 classes in every
// layout darrm reads, high consensus (a PTR test passes), the proxy of
// 20 queries and the private votes of 30 (a plan on the proxy tests its
// bound at each size it searches: 40 and 60 cost a third more CPU, and a
// printed line runs the same at any size): counts as CSV with a metadata
// header and without, counts as NumPy without one, class labels as CSV
// with a header (a query per row, 3% abstaining) and as NumPy (teachers
// in rows, 3% abstaining) with a sidecar and without one.
func pateKinds(t *testing.T, dir string) []printedVotes {
	t.Helper()
	const header = `# {"darrm-votes":1,"ensemble":"printed-k250","K":250,"classes":10,"layout":"%s","relation":"one-vote","kind":"fixed","partition":"keyed-hash","teachers":[{"count":250,"source":{"method":"none"}}]}`
	counts := func(name string, n, top int) [][]int64 {
		b, err := os.ReadFile(ptrCounts(t, dir, name, n, top))
		if err != nil {
			t.Fatal(err)
		}
		var rows [][]int64
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
			var r []int64
			for _, f := range strings.Split(l, ",") {
				var x int64
				fmt.Sscan(f, &x)
				r = append(r, x)
			}
			rows = append(rows, r)
		}
		return rows
	}
	// labels spreads each query's counts over the teachers, about 3% of
	// the votes abstaining, more on some queries than others:
	// queries x teachers.
	labels := func(rows [][]int64) [][]int64 {
		out := make([][]int64, len(rows))
		for q, r := range rows {
			for c, n := range r {
				for range n {
					l := int64(c)
					if (len(out[q])*7+q)%(29+q%5) == 0 {
						l = -1
					}
					out[q] = append(out[q], l)
				}
			}
		}
		return out
	}
	write := func(name, head string, rows [][]int64) string {
		path := filepath.Join(dir, name)
		writeCSV(t, path, rows)
		if head != "" {
			b, _ := os.ReadFile(path)
			if err := os.WriteFile(path, append([]byte(head+"\n"), b...), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return path
	}
	npy := func(name string, rows [][]int64, sidecar bool) string {
		path := filepath.Join(dir, name)
		writeNPY(t, path, rows)
		if sidecar {
			if _, e, code := darrm(t, "", "sidecar", path, "--classes", "10", "--teachers-in-rows", "--ensemble", "printed-k250",
				"--relation", "one-vote", "--kind", "fixed", "--partition", "keyed-hash"); code != 0 {
				t.Fatalf("sidecar %s: %s", name, e)
			}
		}
		return path
	}
	proxy, private := counts("proxy.csv", 20, 236), counts("private.csv", 30, 238)
	headless := []string{"--kind", "fixed", "--partition", "keyed-hash"}
	return []printedVotes{
		{"counts CSV with a header", filepath.Join(dir, "proxy.csv"), filepath.Join(dir, "private.csv"), []string{"--input-format", "counts"}, true},
		{"counts CSV", write("proxy-bare.csv", "", proxy), write("private-bare.csv", "", private), append([]string{"--input-format", "counts"}, headless...), false},
		{"counts NumPy", npy("proxy-counts.npy", proxy, false), npy("private-counts.npy", private, false), append([]string{"--input-format", "counts"}, headless...), false},
		{"labels CSV with a header", write("proxy-labels.csv", fmt.Sprintf(header, "votes"), labels(proxy)), write("private-labels.csv", fmt.Sprintf(header, "votes"), labels(private)), nil, true},
		{"labels NumPy with a sidecar", npy("proxy-labels.npy", transposed(labels(proxy)), true), npy("private-labels.npy", transposed(labels(private)), true), nil, true},
		{"labels NumPy", npy("proxy-bare.npy", transposed(labels(proxy)), false), npy("private-bare.npy", transposed(labels(private)), false), append([]string{"--teachers-in-rows"}, headless...), false},
	}
}

// shellWords splits a command line that darrm printed into its words as
// a POSIX shell does for the quoting darrm uses (shellWord): words
// separated by blanks, single-quoted strings, and a backslash before a
// line break that continues the line.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	line = strings.ReplaceAll(line, "\\\n", " ")
	var words []string
	var w strings.Builder
	in, quoted := false, false
	for _, r := range line {
		switch {
		case quoted && r == '\'':
			quoted = false
		case quoted:
			w.WriteRune(r)
		case r == '\'':
			quoted, in = true, true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			if strings.ContainsRune("\\\"$`;&|<>()*?", r) {
				t.Fatalf("%q: a character the test does not read as a shell would: %q", line, r)
			}
			w.WriteRune(r)
			in = true
		}
	}
	if quoted {
		t.Fatalf("%q: an unterminated quote", line)
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// runPrinted runs the command line darrm printed, with its placeholders
// (VOTES, LEDGER) replaced, and requires exit 0.
func runPrinted(t *testing.T, line string, files map[string]string) string {
	t.Helper()
	words := shellWords(t, line)
	if len(words) < 2 || words[0] != "darrm" {
		t.Fatalf("printed %q: not a darrm command", line)
	}
	for i, w := range words {
		if f, ok := files[w]; ok {
			words[i] = f
		}
	}
	stdout, stderr, code := darrm(t, "", words[1:]...)
	if code != 0 {
		t.Fatalf("the printed command %q, run as printed on %v: exit %d: %s", line, files, code, stderr)
	}
	return stdout
}

// printedInTable returns the command a table printed after its heading
// line that starts with lead: its lines, each but the last ended by a
// backslash.
func printedInTable(t *testing.T, table, lead string) string {
	t.Helper()
	i := strings.Index(table, "\n"+lead)
	if i < 0 {
		t.Fatalf("no %q in\n%s", lead, table)
	}
	rest := table[i+1:]
	rest = rest[strings.IndexByte(rest, '\n')+1:]
	var lines []string
	for _, l := range strings.Split(rest, "\n") {
		lines = append(lines, l)
		if !strings.HasSuffix(l, "\\") {
			break
		}
	}
	return strings.Join(lines, "\n")
}

// planLine runs darrm plan with args and returns the command it prints
// under key in its JSON, after checking that its table prints the same
// words after its line that starts with lead (printedInTable).
func planLine(t *testing.T, args []string, key, lead string) string {
	t.Helper()
	stdout, stderr, code := darrm(t, "", append(args, "--format", "json")...)
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("plan's JSON %v: %s", err, stdout)
	}
	line, _ := doc[key].(string)
	if line == "" {
		t.Fatalf("plan's JSON has no %s: %s", key, stdout)
	}
	table, stderr, code := darrm(t, "", args...)
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, stderr)
	}
	printed := printedInTable(t, table, lead)
	words := shellWords(t, printed)
	if got := strings.Join(words, " "); got != line {
		t.Errorf("the table prints\n%s\nwhich reads %q, the JSON %q", printed, got, line)
	}
	if key == "ledger_init" {
		// A declared use releases only at its settings to the last
		// digit: the table states each number as the line does (queries
		// aside: an analyst's, where the line declares the team's).
		for i := 0; i+1 < len(words); i++ {
			name, ok := strings.CutPrefix(words[i], "--")
			if _, err := strconv.ParseFloat(words[i+1], 64); !ok || err != nil || name == "queries" {
				continue
			}
			row := regexp.MustCompile(`│ ` + regexp.QuoteMeta(strings.ReplaceAll(name, "-", "_")) + ` +│ (\S+) +│`).FindStringSubmatch(table)
			if row != nil && row[1] != words[i+1] {
				t.Errorf("the table states %s = %s, its ledger init --%s %s", name, row[1], name, words[i+1])
			}
		}
	}
	return line
}

// TestPrintedCommandsRun: every command plan prints for the user to run
// next runs as printed on the votes it was planned for, pasted from the
// table (its lines continued) or taken from the JSON, with the
// placeholders replaced: the aggregate line of a PTR proposal for each
// mechanism it plans and each layout of votes (CSV and NumPy, counts and
// class labels, with a metadata header and without), and the ledger init
// of a plan for a new ledger for each mechanism, whose votes must have a
// header.
func TestPrintedCommandsRun(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(statedir.Env, filepath.Join(dir, "state"))
	kinds := pateKinds(t, dir)
	budget := []string{"--budget-eps", "2", "--budget-delta", "1e-5"}
	mechanisms := map[string][]string{
		"confident-gnmax": {"--mechanism", "confident-gnmax", "--threshold", "200", "--sigma1", "150", "--sigma2", "40"},
		"gnmax":           {"--mechanism", "gnmax", "--sigma2", "40"},
	}
	t.Run("ptr", func(t *testing.T) {
		for _, k := range kinds {
			for name, mech := range mechanisms {
				if testing.Short() && name == "gnmax" && k.name != "labels NumPy" {
					continue // the layouts under -short with one mechanism; gnmax on one
				}
				t.Run(k.name+"/"+name, func(t *testing.T) {
					args := append([]string{"plan", "--K", "250", "--classes", "10", "--votes", k.proxy, "--votes-are", "public", "--accounting", "ptr"}, mech...)
					args = append(append(args, budget...), k.read...)
					line := planLine(t, args, "aggregate", "To release them")
					out := filepath.Join(t.TempDir(), "labels.csv")
					t.Chdir(filepath.Dir(out))
					runPrinted(t, line, map[string]string{"VOTES": k.private})
					if _, err := os.Stat(out); err != nil {
						t.Errorf("the printed aggregate wrote no labels: %v", err)
					}
				})
			}
		}
	})
	t.Run("progressive", func(t *testing.T) {
		for _, k := range kinds {
			if testing.Short() && k.name != "labels NumPy" {
				continue // its search takes seconds: one layout under -short
			}
			t.Run(k.name, func(t *testing.T) {
				args := append([]string{"plan", "--K", "250", "--classes", "10", "--votes", k.proxy, "--votes-are", "public", "--mechanism", "progressive-gnmax", "--min-agreement", "0.5"}, budget...)
				line := planLine(t, append(args, k.read...), "aggregate", "To release them")
				out := filepath.Join(t.TempDir(), "labels.csv")
				t.Chdir(filepath.Dir(out))
				runPrinted(t, line, map[string]string{"VOTES": k.private})
				if _, err := os.Stat(out); err != nil {
					t.Errorf("the printed aggregate wrote no labels: %v", err)
				}
			})
		}
	})
	t.Run("ledger", func(t *testing.T) {
		one := []string{"--queries", "20", "--for", "ledger"}
		// The thesis' votes of teachers that are a fresh mechanism per
		// query, whose guarantees compose.
		b, err := os.ReadFile("../../testdata/votes-K11.csv")
		if err != nil {
			t.Fatal(err)
		}
		perQuery := filepath.Join(dir, "votes-K11-per-query.csv")
		if err := os.WriteFile(perQuery, []byte(strings.Replace(string(b), `"kind":"fixed"`, `"kind":"per-query"`, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		twoClass := printedVotes{private: perQuery}
		for _, tc := range []struct {
			name  string
			votes printedVotes
			args  []string
		}{
			{"gnmax, counts", kinds[0], append([]string{"--mechanism", "gnmax", "--K", "250", "--classes", "10"}, one...)},
			// One query at (2, 1e-5): sigma2 2.82, a label of (2.53, 1e-5) by
			// its RDP, which no filter holds; its use composed exactly does.
			{"gnmax, one query", kinds[0], []string{"--mechanism", "gnmax", "--K", "250", "--classes", "10", "--queries", "1", "--for", "ledger"}},
			{"lnmax, labels with a header", kinds[3], append([]string{"--mechanism", "lnmax", "--K", "250", "--classes", "10"}, one...)},
			{"confident-gnmax, NumPy labels", kinds[4], append([]string{"--mechanism", "confident-gnmax", "--K", "250", "--classes", "10", "--votes", kinds[4].proxy, "--votes-are", "public"}, one...)},
			{"gnmax with shares, NumPy labels", kinds[4], append([]string{"--mechanism", "gnmax", "--K", "250", "--classes", "10", "--share", "alice=0.5", "--share", "bob=0.5", "--analyst", "alice"}, one...)},
			{"darrm", twoClass, append([]string{"--mechanism", "darrm", "--K", "11", "--budget-eps", "8", "--budget-delta", "1e-3"}, one...)},
			{"rr", twoClass, append([]string{"--mechanism", "rr", "--K", "11", "--budget-eps", "8", "--budget-delta", "1e-3"}, one...)},
			{"subsample", twoClass, append([]string{"--mechanism", "subsample", "--K", "11", "--budget-eps", "8", "--budget-delta", "1e-3"}, one...)},
			// TestPlanBoundsRoundedUp's plan, whose search (about a second
			// of CPU) the shared memo (testMemo) then answers here.
			{"darrm-one-vote", printedVotes{private: "../../testdata/votes-K11-one-vote.csv"}, append([]string{"--mechanism", "darrm-one-vote", "--K", "11", "--budget-eps", "1", "--budget-delta", "1e-5"}, one...)},
		} {
			// Under -short one two-class mechanism's plan for a ledger
			// (each searches its parameter under exact composition, some
			// seconds of CPU): darrm's; rr and subsample print their line
			// by the same path.
			if testing.Short() && (tc.name == "rr" || tc.name == "subsample" || tc.name == "lnmax, labels with a header") {
				continue
			}
			t.Run(tc.name, func(t *testing.T) {
				// A record of its own: each case makes a ledger of an
				// ensemble another case has one of too.
				t.Setenv(statedir.Env, t.TempDir())
				args := append([]string{"plan"}, tc.args...)
				if !strings.Contains(strings.Join(args, " "), "--budget-eps") {
					args = append(args, budget...)
				}
				args = append(args, tc.votes.read...)
				line := planLine(t, args, "ledger_init", "To make the ledger")
				if regexp.MustCompile(`\bVOTES\b`).FindAllString(line, -1) == nil {
					t.Errorf("ledger init %q names no VOTES", line)
				}
				runPrinted(t, line, map[string]string{"LEDGER": filepath.Join(t.TempDir(), "new.ledger"), "VOTES": tc.votes.private})
			})
		}
	})
}

// TestPrintedLineReadsVotesAsPlanDid: a plan on counts that have no
// metadata header, read as counts without --input-format or --classes (a
// CSV file by its start, a NumPy array by default), prints an aggregate
// line that says --input-format counts: the --classes it states would
// alone read the votes as class labels, and the printed line failed.
func TestPrintedLineReadsVotesAsPlanDid(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(statedir.Env, filepath.Join(dir, "state"))
	for _, k := range pateKinds(t, dir) {
		if k.name != "counts CSV" && k.name != "counts NumPy" {
			continue
		}
		t.Run(k.name, func(t *testing.T) {
			line := planLine(t, []string{"plan", "--votes", k.proxy, "--votes-are", "public", "--kind", "fixed", "--partition", "keyed-hash",
				"--mechanism", "progressive-gnmax", "--min-agreement", "0.5", "--budget-eps", "2", "--budget-delta", "1e-5"}, "aggregate", "To release them")
			out := t.TempDir()
			t.Chdir(out)
			runPrinted(t, line, map[string]string{"VOTES": k.private})
			if _, err := os.Stat(filepath.Join(out, "labels.csv")); err != nil {
				t.Errorf("the printed aggregate wrote no labels: %v", err)
			}
		})
	}
}
