//go:build unix

package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/darrm/darrm/cmd/darrm/internal/cliout"
)

// TestFIFONotice: an input that is a FIFO no process writes says, after
// fifoNotice, that it waits and what stops it, in lines of at most
// cliout.Width columns, and still ends when its
// context does; a FIFO whose writer comes at once says nothing and is
// read (a run on a FIFO that no process wrote waited in silence).
func TestFIFONotice(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "votes.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), fifoNotice+500*time.Millisecond)
	defer cancel()
	var notices bytes.Buffer
	if _, err := OpenInputContext(ctx, nil, &notices, fifo); err == nil {
		t.Fatal("a FIFO with no writer opened")
	}
	if want := fifo + ": waiting for a process to open it for writing (a FIFO); SIGINT or SIGTERM stops"; !strings.Contains(strings.Join(strings.Fields(notices.String()), " "), want) {
		t.Errorf("notices %q, want %q", notices.String(), want)
	}
	for _, line := range strings.Split(strings.TrimSuffix(notices.String(), "\n"), "\n") {
		if n := utf8.RuneCountInString(line); n > cliout.Width {
			t.Errorf("a line of %d columns: %q", n, line)
		}
	}

	// Another FIFO: the first one's open, abandoned at the context's end,
	// still waits in the system, and a writer could meet it instead.
	notices.Reset()
	fifo = filepath.Join(dir, "written.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			w.WriteString("0,1\n")
			w.Close()
		}
	}()
	r, err := OpenInputContext(context.Background(), nil, &notices, fifo)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	r.Close()
	if string(b) != "0,1\n" || notices.Len() != 0 {
		t.Errorf("a FIFO written at once: read %q, notices %q", b, notices.String())
	}
}

// TestFIFOInputClosed: closing an input read from a FIFO ends the
// goroutine that read it for its context (ctxio), which otherwise waited
// for another read as long as the process ran: one for each FIFO or
// device read, in a program that runs commands in process. The minute is
// a hang's limit, not a timing.
func TestFIFOInputClosed(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "votes.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	go func() {
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.WriteString("0,1\n")
			w.Close()
		}
	}()
	r, err := OpenInputContext(context.Background(), nil, nil, fifo)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(r); string(b) != "0,1\n" || err != nil {
		t.Fatalf("read %q, %v", b, err)
	}
	r.Close()
	if n := ctxioLoops(t, "ctxio.(*Reader).loop"); n > 0 {
		t.Errorf("%d goroutines still read for a closed input", n)
	}
}

// ctxioLoops returns how many goroutines run fn once those that end have
// ended, within a minute.
func ctxioLoops(t *testing.T, fn string) int {
	t.Helper()
	n := 0
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		buf := make([]byte, 1<<20)
		if n = strings.Count(string(buf[:runtime.Stack(buf, true)]), fn); n == 0 {
			break
		}
	}
	return n
}
