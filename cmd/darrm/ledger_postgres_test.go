package main

import (
	"encoding/json"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/darrm/darrm/internal/pgtest"
	"github.com/darrm/darrm/internal/statedir"
	"github.com/darrm/darrm/ledger"
)

// TestLedgerInPostgres: every command that takes a ledger takes a
// PostgreSQL URL (ledger init, show, verify, adopt, upgrade, export,
// import; aggregate --ledger and account pate --ledger), with the same
// totals as a file ledger's; the URL's password is in no output, error or
// file (label headers, records of ledgers and of draws), where *** stands
// for it; a bad URL, a database or ledger that does not exist and a wrong
// password are bad input (exit 2), a server down a failure (exit 1).
func TestLedgerInPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server (about 2 s of CPU): without -short; the ledger package's tests of the store run with it")
	}
	// Two users: one releases on the PostgreSQL ledger, the other on a
	// file ledger of the same ensemble, which she then imports.
	state, other := t.TempDir(), t.TempDir()
	t.Setenv(statedir.Env, state)
	dir := t.TempDir()
	db := pgtest.DB(t)
	p, err := url.Parse(db)
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := p.User.Password()
	at := func(name string) string { return db + "?ledger=" + name }
	var said []string
	run := func(want int, args ...string) (string, string) {
		t.Helper()
		out, stderr, code := darrm(t, "", args...)
		said = append(said, out, stderr)
		if code != want {
			t.Errorf("darrm %s: exit %d, want %d: %s", redacted(args), code, want, stderr)
		}
		return out, stderr
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "votes-K11.csv"))
	if err != nil {
		t.Fatal(err)
	}
	votes := filepath.Join(dir, "votes.csv")
	if err := os.WriteFile(votes, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "k11.ledger")
	u := at("k11")
	for i, led := range []string{file, u} {
		t.Setenv(statedir.Env, []string{other, state}[i])
		run(0, "ledger", "init", led, "--votes", votes, "--budget-eps", "10", "--budget-delta", "1e-3")
		run(0, "aggregate", votes, "--ledger", led, "--out", filepath.Join(dir, "labels.csv"))
		run(0, "aggregate", votes, "--ledger", led, "--format", "json", "--out", filepath.Join(dir, "labels.jsonl"))
	}
	spent := func(led string) [3]any {
		t.Helper()
		out, _ := run(0, "ledger", "verify", led, "--format", "json")
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatal(err)
		}
		return [3]any{v["spent_eps"], v["runs"], v["lines"]}
	}
	pg := spent(u)
	t.Setenv(statedir.Env, other)
	if f := spent(file); pg != f || pg[1] != 2.0 {
		t.Errorf("PostgreSQL: spent, runs, lines %v; the file: %v", pg, f)
	}
	t.Setenv(statedir.Env, state)
	run(0, "ledger", "show", u)
	run(0, "ledger", "verify", u)
	run(0, "ledger", "verify", u, "--format", "json")
	run(0, "ledger", "adopt", u)
	if out, _ := run(0, "ledger", "upgrade", u); !strings.Contains(out, "nothing to upgrade") || !strings.Contains(out, "has darrm's guard against DDL") {
		t.Errorf("ledger upgrade of a PostgreSQL ledger (its schema made by the tests' superuser): %s", out)
	}
	// A wait longer than the server's lock_timeout takes, and an analyst
	// who is not the database user, are refused naming their flags.
	if _, stderr := run(2, "aggregate", votes, "--ledger", u, "--lock-timeout", "600h", "--out", filepath.Join(dir, "no.csv")); !strings.Contains(stderr, "--lock-timeout = 600h0m0s: must be at most") {
		t.Errorf("--lock-timeout 600h on PostgreSQL: %s", stderr)
	}
	if _, stderr := run(2, "aggregate", votes, "--ledger", u, "--analyst", "bob", "--out", filepath.Join(dir, "no.csv")); !strings.Contains(stderr, `--analyst = "bob": the analyst of a run on a ledger in PostgreSQL is the database user`) {
		t.Errorf("--analyst of another user on PostgreSQL: %s", stderr)
	}
	exported := filepath.Join(dir, "exported.ledger")
	run(0, "ledger", "export", u, exported)
	// An archive: the ledger's lines and an end line, charged by no one,
	// and not imported again where the ledger is live.
	if e := spent(exported); e[0] != pg[0] || e[1] != pg[1] || e[2] != pg[2].(float64)+1 {
		t.Errorf("the export: spent, runs, lines %v; the ledger %v and an end line", e, pg)
	}
	if _, stderr := run(2, "aggregate", votes, "--ledger", exported, "--out", filepath.Join(dir, "refused.csv")); !strings.Contains(stderr, "is a copy of a ledger exported from") {
		t.Errorf("a release on an export: %s", stderr)
	}
	t.Setenv(statedir.Env, t.TempDir())
	if _, stderr := run(2, "ledger", "import", exported, at("again")); !strings.Contains(stderr, "already, as ledger k11") {
		t.Errorf("an export imported where its ledger is live: %s", stderr)
	}
	// The file ledger of the same ensemble moves into a database of its
	// own: the first holds a live ledger of it.
	t.Setenv(statedir.Env, other)
	run(2, "ledger", "import", file, at("moved"))
	moved := pgtest.DB(t) + "?ledger=moved"
	run(0, "ledger", "import", file, moved)
	run(0, "aggregate", votes, "--ledger", moved, "--out", filepath.Join(dir, "moved.csv"))
	run(2, "aggregate", votes, "--ledger", file, "--out", filepath.Join(dir, "refused.csv"))
	t.Setenv(statedir.Env, state)

	// A draw of account pate, charged to a one-vote ledger.
	pate := countsFile(t, dir, "pate.csv", 10, func(i int) []int { return plurality(150+i*2, i%10) })
	run(0, "ledger", "init", at("pate"), "--votes", pate, "--budget-eps", "50", "--budget-delta", "1e-3", "--filter", "simple")
	run(0, append([]string{"account", "pate", pate, "--target-delta", "1e-5", "--format", "json", "--release-estimate", "--ledger", at("pate")}, confident...)...)

	// Refusals, each in one line, without the password.
	with := func(edit func(*url.URL)) string {
		q, _ := url.Parse(u)
		edit(q)
		return q.String()
	}
	for _, c := range []struct {
		location, want string
		code           int
	}{
		{at("unknown"), "has no ledger named unknown", 2},
		{db, "add ?ledger=NAME to the URL", 2},
		{with(func(q *url.URL) { q.Path = "/nowhere" }), "database nowhere does not exist", 2},
		{with(func(q *url.URL) { q.User = url.UserPassword(q.User.Username(), pw+"x") }), "refused the password of user", 2},
		{with(func(q *url.URL) { q.Host = "127.0.0.1:1" }), "no server accepts connections", 1},
	} {
		for _, args := range [][]string{{"ledger", "show", c.location}, {"aggregate", votes, "--ledger", c.location, "--out", filepath.Join(dir, "no.csv")}} {
			if _, stderr := run(c.code, args...); !strings.Contains(stderr, c.want) {
				t.Errorf("darrm %s: %s, want %q", redacted(args), stderr, c.want)
			}
		}
	}

	for i, s := range said {
		if strings.Contains(s, pw) {
			t.Errorf("output %d shows the password: %s", i, s)
		}
	}
	if !strings.Contains(strings.Join(said, ""), ":***@") {
		t.Error("no output names a PostgreSQL ledger")
	}
	for _, root := range []string{dir, state, other} {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if b, err := os.ReadFile(path); err != nil || strings.Contains(string(b), pw) {
				t.Errorf("%s holds the password (%v)", path, err)
			}
			return nil
		})
	}
}

// redacted is a command line as a test says it: a URL without its
// password.
func redacted(args []string) string {
	r := make([]string, len(args))
	for i, a := range args {
		r[i] = ledger.Redact(a)
	}
	return strings.Join(r, " ")
}
