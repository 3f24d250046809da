package ledger

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/internal/pgtest"
	"github.com/darrm/darrm/internal/statedir"
	"github.com/darrm/darrm/provenance"
)

// TestPGServerStopped: the server of a run's ledger stops mid-run (a fast
// shut-down, which ends every session): the run hears at once that its
// connection was lost (Options.Lost); its settlement is refused, so the
// labels it reserved stay charged; a run started while the server is down fails
// at once, naming the server; once the server is back, the ledger holds
// the reservation and takes the next run.
func TestPGServerStopped(t *testing.T) {
	if testing.Short() {
		t.Skip("a server of its own to stop: without -short")
	}
	srv := pgtest.NewServer(t)
	u := newPG(t, srv.DB(t), "fault", accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	heard := make(chan error, 1)
	bk := Options{Lost: func(err error) { heard <- err }}
	l, allowed, err := openRun(ctx, bk, u, "darrm", unique0(t, u), accountant.ApproxStep(step), 10)
	if err != nil || allowed != 10 {
		t.Fatalf("%d allowed: %v", allowed, err)
	}
	if err := l.Reserve(ctx, 3); err != nil {
		t.Fatal(err)
	}
	srv.Stop(t)
	stopped := time.Now()
	select {
	case err := <-heard:
		t.Logf("the run heard %v after the server stopped: %v", time.Since(stopped), err)
		if !strings.Contains(fmt.Sprint(err), "the connection to its server was lost during this run") {
			t.Errorf("lost: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the run did not hear that its server stopped")
	}
	var lost interface{ ConnectionLost() bool }
	if err := l.Settle(ctx, 2); !errors.As(err, &lost) {
		t.Errorf("a settlement after the server stopped: %v", err)
	}
	l.Close()
	if _, err := book.forRun(ctx, u); err == nil || !strings.Contains(err.Error(), "no server accepts connections") || isBad(err) {
		t.Errorf("a run while the server is down: %v", err)
	}
	srv.Start(t)
	if spent, _, _ := readAll(t, u); spent.Steps != 3 {
		t.Errorf("after the server came back: %d labels charged, want the 3 reserved", spent.Steps)
	}
	spendOn(t, book, u, 1, 1)
}

// unique0 returns the binding of the ledger at location.
func unique0(t *testing.T, location string) provenance.Binding {
	t.Helper()
	l, err := book.readOnly(ctx, location)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return binding(t, l)
}

// proxy forwards TCP connections to a server, and cuts the connection
// that carries a write of a ledger line (appendSQL), once: before the
// statement reaches the server (the write never happened), or after the
// server has answered it (it committed, but its answer is lost).
type proxy struct {
	ln   net.Listener
	mu   sync.Mutex
	cut  string // "before", "after" or "" (forward)
	cuts int
}

func newProxy(t *testing.T, server string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", server)
			if err != nil {
				c.Close()
				continue
			}
			lose := make(chan struct{})
			go p.back(s, c, lose)
			go p.forward(c, s, lose)
		}
	}()
	return p
}

// forward copies what the client c sends to the server s, cutting the
// connection at the write the proxy is armed for: at once, or (closing
// lose) when the server's answer comes.
func (p *proxy) forward(c, s net.Conn, lose chan struct{}) {
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			p.mu.Lock()
			cut := p.cut
			if cut != "" && bytes.Contains(buf[:n], []byte("INSERT INTO darrm.lines")) {
				p.cut, p.cuts = "", p.cuts+1
			} else {
				cut = ""
			}
			p.mu.Unlock()
			switch cut {
			case "before":
				c.Close()
				s.Close()
				return
			case "after":
				close(lose)
			}
			if _, err := s.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			s.Close()
			return
		}
	}
}

// back copies what the server s answers to the client c, until lose is
// closed: then the answer is dropped and both are cut.
func (p *proxy) back(s, c net.Conn, lose chan struct{}) {
	buf := make([]byte, 64<<10)
	for {
		n, err := s.Read(buf)
		select {
		case <-lose:
			c.Close()
			s.Close()
			return
		default:
		}
		if n > 0 {
			if _, err := c.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			c.Close()
			return
		}
	}
}

func (p *proxy) arm(cut string) {
	p.mu.Lock()
	p.cut = cut
	p.mu.Unlock()
}

// testPGWriteRetried: a connection lost in the middle of a write of a
// line is retried, not shown: on a new connection, which takes the
// ledger's lock again, the line is written when it never reached the
// server, and found written, not written twice, when the server had
// committed it and its answer was lost.
func testPGWriteRetried(t *testing.T, location string) {
	db := mustParse(t, location)
	p := newProxy(t, db.Host)
	via := *db
	via.Host = p.ln.Addr().String()
	u := newPG(t, via.String(), "retried", accountant.Budget{Guarantee: accountant.Guarantee{Eps: 50, Delta: 1e-2}})
	for _, cut := range []string{"before", "after"} {
		before, _, _ := readAll(t, u)
		l, _, err := openRun(ctx, book, u, "darrm", unique0(t, u), accountant.ApproxStep(step), -1)
		if err != nil {
			t.Fatal(err)
		}
		p.arm(cut)
		if err := l.Reserve(ctx, 2); err != nil {
			t.Errorf("cut %s: the reservation: %v", cut, err)
		}
		if err := l.Settle(ctx, 2); err != nil {
			t.Errorf("cut %s: the settlement: %v", cut, err)
		}
		l.Close()
		after, _, lines := readAll(t, u)
		if p.cuts == 0 || after.Steps != before.Steps+2 {
			t.Errorf("cut %s (%d cuts): %d labels counted, want %d", cut, p.cuts, after.Steps, before.Steps+2)
		}
		t.Logf("cut %s: %d lines", cut, lines)
		p.cuts = 0
	}
}

// pgHelper is the process of testPGConcurrentProcesses
// (GO_LEDGER_PG=url,n): it releases up to n labels on the ledger at url,
// one at a time, each reserved before it is printed ("released i"), with
// the records in a state folder of its own (DARRM_STATE_DIR), as a run on
// another machine would.
func pgHelper(spec string) int {
	location, n, _ := strings.Cut(spec, ",")
	want, _ := strconv.Atoi(n)
	l, err := book.forRun(ctx, location)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer l.Close()
	b, _ := l.Header().binding()
	allowed := 0
	if err = l.begin(ctx, "darrm", b, accountant.ApproxStep(step)); err == nil {
		allowed, err = l.allowance(accountant.ApproxStep(step), want)
	}
	w := bufio.NewWriter(os.Stdout)
	for i := 1; i <= allowed && err == nil; i++ {
		if err = l.Reserve(ctx, i); err == nil {
			fmt.Fprintf(w, "released %d\n", i)
			err = w.Flush()
		}
	}
	if err == nil {
		err = l.Settle(ctx, allowed)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// testPGConcurrentProcesses: ten processes, each with records of its own
// (as on ten machines), release labels one at a time on one PostgreSQL
// ledger whose budget allows fewer than they ask for; three are killed
// (SIGKILL) in the middle of their run: the first three to print the
// label each was to be killed at, early in its run (the processes that
// the budget leaves with fewer labels are never the ones killed, so a
// kill always lands on a process still running, however busy the
// machine). Together they stay within the
// budget, which they spend to its end, the ledger counts every label any
// of them printed (charged >= delivered), every other process ends
// without an error, and the ledger verifies.
func testPGConcurrentProcesses(t *testing.T, db string) {
	budget := accountant.Budget{Guarantee: accountant.Guarantee{Eps: 60, Delta: 1e-2}}
	want, each := 200, 30
	if testing.Short() {
		budget, want, each = accountant.Budget{Guarantee: accountant.Guarantee{Eps: 24, Delta: 1e-2}}, 80, 12
	}
	maxQ, err := (accountant.Composition{Method: accountant.Simple, DeltaPrime: 1e-5}).MaxSteps(step, budget)
	if err != nil || maxQ != want {
		t.Fatalf("the budget allows %d labels (%v), want %d", maxQ, err, want)
	}
	u := newPG(t, db, "shared", budget)
	const procs, victims = 10, 3
	var (
		mu        sync.Mutex
		delivered int
		issued    int // kills sent
		killed    int // kills that ended a process
		wg        sync.WaitGroup
	)
	for i := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		home := t.TempDir()
		cmd.Env = append(os.Environ(), "GO_LEDGER_PG="+u+","+strconv.Itoa(each), statedir.Env+"="+home, "HOME="+home)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// In the first half of its run, so that the kill lands before the
		// process ends.
		killAt := 2 + rand.IntN(each/2-2)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := bufio.NewScanner(out)
			n, victim := 0, false
			for sc.Scan() {
				n++
				mu.Lock()
				if n == killAt && issued < victims {
					issued++
					victim = true
					cmd.Process.Signal(syscall.SIGKILL)
				}
				mu.Unlock()
			}
			err := cmd.Wait()
			mu.Lock()
			delivered += n
			if victim && err != nil {
				killed++
			}
			mu.Unlock()
			if !victim && err != nil {
				t.Errorf("process %d: %v: %s", i, err, stderr.String())
			}
		}()
	}
	wg.Wait()
	// A victim may still have ended before its kill landed (its lines
	// read after it exited): the run tests kills only if one was killed.
	if killed == 0 {
		t.Fatalf("none of the %d processes killed was killed before it ended (%d kills sent)", victims, issued)
	}
	l, err := Options{StateDir: t.TempDir()}.readOnly(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	bal, err := l.Balance()
	total := bal.Total
	charged := l.Spent().Steps
	t.Logf("%d processes (%d killed): %d labels delivered, %d charged, %d allowed; total %v of %v", procs, killed, delivered, charged, maxQ, total, budget)
	switch {
	case err != nil:
		t.Error(err)
	case total.Eps > budget.Eps || total.Delta > budget.Delta || charged > maxQ:
		t.Errorf("%d labels charged, total %v: over the budget %v (%d labels)", charged, total, budget, maxQ)
	case charged < delivered:
		t.Errorf("%d labels delivered, %d charged", delivered, charged)
	case charged != maxQ:
		t.Errorf("%d labels charged: the budget's %d were not spent", charged, maxQ)
	}
}
