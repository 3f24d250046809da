//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/darrm/darrm/internal/pgtest"
)

// TestAggregateServerStopped: the server of a release's PostgreSQL ledger
// stops while the release waits for votes on standard input: the release
// ends at once, with exit status 1 (a failure, not an interrupt) and an
// error that says the connection was lost, and leaves no label file; a
// release started while the server is down fails at once.
func TestAggregateServerStopped(t *testing.T) {
	if testing.Short() {
		t.Skip("a server of its own to stop: without -short")
	}
	dir := t.TempDir()
	srv := pgtest.NewServer(t)
	db := srv.DB(t)
	u := db + "?ledger=k3"
	votes := smallVotes(t, dir, 5)
	newLedgerFile(t, dir, "stopped", votes) // the ensemble's header on the votes
	if _, stderr, code := darrm(t, "", append([]string{"ledger", "init", u, "--ensemble", "stopped", "--budget-eps", "1e9", "--budget-delta", "0.5", "--replace"}, binding3...)...); code != 0 {
		t.Fatal(stderr)
	}
	head, err := os.ReadFile(votes)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "labels.csv")
	cmd := child("aggregate", "-", "--ledger", u, "--out", out, "--mechanism", "subsample", "--m", "1")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	// The header and a row, then nothing: the release waits for more.
	fmt.Fprintf(in, "%s", strings.SplitAfter(string(head), "\n")[0]+"1,1,0\n")
	waitIdle(t, db)
	srv.Stop(t)
	stopped := time.Now()
	code := waitExitWithin(t, cmd, time.Minute)
	said := joinError(stderr.String())
	t.Logf("the release ended %v after the server stopped: %s", time.Since(stopped), said)
	if code != 1 || !strings.Contains(said, "the connection to its server was lost during this run") || strings.Contains(said, "interrupted") {
		t.Errorf("exit %d: %s", code, said)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a label file was left")
	}
	_, e, code := darrm(t, "", "aggregate", votes, "--ledger", u, "--out", out, "--mechanism", "subsample", "--m", "1")
	if code != 1 || !strings.Contains(e, "no server accepts connections") {
		t.Errorf("a release while the server is down: exit %d: %s", code, e)
	}
}

// waitIdle waits until a session of the database at db holds a ledger's
// lock and has waited idle for a while: a release that reads its votes.
func waitIdle(t *testing.T, db string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	for start := time.Now(); time.Since(start) < time.Minute; time.Sleep(20 * time.Millisecond) {
		var n int
		err := conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
			WHERE l.locktype = 'advisory' AND l.granted AND a.state = 'idle' AND a.state_change < now() - interval '200 ms'`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
	}
	t.Fatal("no release held the ledger within a minute")
}
