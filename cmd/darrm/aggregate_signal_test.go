//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/ledger"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// TestSignalDuringRelease interrupts aggregate (SIGINT, then SIGTERM)
// while it waits for more votes on a pipe, with labels already drawn:
// with --out the labels are removed and no hidden file remains, and on
// Linux no other process could have opened them (while they were written
// the folder held no file but the ledger: O_TMPFILE), so the ledger
// settles at 0; elsewhere their temporary file had a name, and the ledger
// settles at the labels written to it. On standard output the labels
// already written stay, and the error and the ledger give one count of
// them: their exact count, or more where the signal abandoned a write
// that blocked. The ledger never records fewer labels than left the process.
func TestSignalDuringRelease(t *testing.T) {
	row := "1,1,1,1,1,1,0,0,0,0,0\n"
	for _, c := range []struct {
		name   string
		toFile bool
		sig    syscall.Signal
	}{{"--out file, SIGINT", true, syscall.SIGINT}, {"stdout, SIGTERM", false, syscall.SIGTERM}} {
		dir := t.TempDir()
		led := filepath.Join(dir, "k.ledger")
		// An ensemble of this run's own: the state folder outlives a run
		// (-count).
		ens := "k-" + c.sig.String() + "-" + filepath.Base(filepath.Dir(dir))
		// Teachers' Delta 1e-9: the ledger's simple filter allows far more
		// labels than the test sends, so the release never stops on it.
		if _, e, code := darrm(t, "", "ledger", "init", led, "--ensemble", ens, "--K", "11", "--eps", "0.1", "--Delta", "1e-9", "--kind", "per-query", "--partition", "shared", "--budget-eps", "1e6", "--budget-delta", "0.5"); code != 0 {
			t.Fatal(e)
		}
		args := []string{"aggregate", "--mechanism", "subsample", "--no-cache", "--ledger", led, "--eps", "0.1", "--Delta", "1e-9"}
		labels := filepath.Join(dir, "labels.csv")
		if c.toFile {
			args = append(args, "--out", labels)
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "GO_DARRM_MAIN=1")
		stdin, _ := cmd.StdinPipe()
		var stdout, stderr syncBuffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		head, err := (provenance.Binding{Ensemble: ens, Teachers: provenance.Teachers{K: 11, Each: accountant.Guarantee{Eps: 0.1, Delta: 1e-9}, Relation: accountant.PrivateTeachers, Kind: provenance.PerQuery, Partition: provenance.SharedData}}.Header(2, votefile.LayoutVotes)).AppendHeader(nil, votefile.FormatCSV)
		if err != nil {
			t.Fatal(err)
		}
		stdin.Write(head)
		io.WriteString(stdin, strings.Repeat(row, 100000))
		// Wait until labels have been drawn: a temporary file with content,
		// or labels on standard output.
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if c.toFile && tempHasData(cmd.Process.Pid, dir) || !c.toFile && stdout.Len() > 0 {
				break
			}
		}
		if named := files(t, dir); c.toFile && runtime.GOOS == "linux" && len(named) != 1 {
			t.Errorf("%s: while labels were written, the folder held %v: a file another process can open", c.name, named)
		}
		cmd.Process.Signal(c.sig)
		time.Sleep(100 * time.Millisecond)
		io.WriteString(stdin, strings.Repeat(row, 100000))
		stdin.Close()
		err = cmd.Wait()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitInterrupted {
			t.Fatalf("%s: %v, want exit %d: %s", c.name, err, exitInterrupted, stderr.String())
		}
		l, err := ledger.Open(context.Background(), led, ledger.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		recorded := l.Spent().Steps
		l.Close()
		delivered := labelsIn([]byte(stdout.String()))
		if c.toFile {
			if files := files(t, dir); len(files) != 1 || files[0] != "k.ledger" {
				t.Errorf("%s: files left behind: %v", c.name, files)
			}
			if runtime.GOOS == "linux" && recorded != 0 {
				t.Errorf("%s: no label left, the ledger records %d", c.name, recorded)
			}
			if runtime.GOOS != "linux" && recorded > 0 && !containsFlat(stderr.String(), "may have reached the temporary file") {
				t.Errorf("%s: %d labels recorded, and the error does not say why: %s", c.name, recorded, stderr.String())
			}
			continue
		}
		// A write that the signal abandoned while it blocked (a full pipe)
		// counts every byte it held as left: the error and the ledger then
		// say more labels than the reader got, never fewer.
		said := -1
		if m := regexp.MustCompile(`\((\d+) labels may have reached`).FindStringSubmatch(strings.Join(strings.Fields(stderr.String()), " ")); m != nil {
			said, _ = strconv.Atoi(m[1])
		}
		t.Logf("%s: %d labels delivered, %d recorded in the ledger, %d said", c.name, delivered, recorded, said)
		if delivered == 0 || recorded < delivered || said != recorded {
			t.Errorf("%s: %d labels delivered, %d recorded, %d said: %s", c.name, delivered, recorded, said, stderr.String())
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the concurrent reads of the test
// and writes of exec's copying goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// tempHasData reports whether the process pid writes a temporary file
// with content in dir: labels being written. On Linux it is found among
// the files the process has open (it has no name in dir: O_TMPFILE),
// elsewhere as a hidden file in dir.
func tempHasData(pid int, dir string) bool {
	var open []string
	if runtime.GOOS == "linux" {
		fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
		for _, fd := range fds {
			// A file without a name shows as dir/#INODE (deleted).
			target, err := os.Readlink(fd)
			base := filepath.Base(target)
			if err == nil && filepath.Dir(target) == dir && (strings.HasPrefix(base, "#") || strings.Contains(base, ".tmp-")) {
				open = append(open, fd)
			}
		}
	} else {
		open, _ = filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	}
	for _, f := range open {
		if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() && st.Size() > 0 {
			return true
		}
	}
	return false
}
