//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/darrm/darrm/accountant"
	"github.com/darrm/darrm/cmd/darrm/internal/setup"
	"github.com/darrm/darrm/ensemble"
	"github.com/darrm/darrm/provenance"
	"github.com/darrm/darrm/votefile"
)

// checkFile writes the votes of an example release by mechanism m into
// path: n rows of K = 11 teachers with ids q1..qn, 0/1 votes or counts
// over 3 classes as m labels, after a metadata header of m's relation
// naming ensemble id (none when id is ""): teachers stated (0.1, 1e-5)-DP,
// or (0.1, 0)-DP for a mechanism of pure-DP teachers; fixed models, on
// shared data in the private-teachers relation, on keyed-hash shares in
// the one-vote relation. It returns the flags a release of the file
// needs besides m's example settings: without a header, the teachers'
// guarantee (for a mechanism that takes it) or the layout.
func checkFile(t *testing.T, path string, m setup.MechanismInfo, id string, n int) []string {
	t.Helper()
	delta := 1e-5
	if m.Name == (ensemble.DSub{}).Name() { // its teachers must be pure DP
		delta = 0
	}
	var b strings.Builder
	var flags []string
	if id != "" {
		meta := provenance.Binding{Ensemble: id, Teachers: provenance.Teachers{K: 11, Each: accountant.Guarantee{Eps: 0.1, Delta: delta}, Relation: m.Relation, Kind: provenance.Fixed, Partition: provenance.SharedData}}.Header(2, votefile.LayoutVotes)
		if m.Relation == accountant.OneVote {
			meta.Partition = provenance.KeyedHash.String()
		}
		if m.Input == votefile.ManyClasses {
			meta.Classes, meta.Layout = 3, votefile.LayoutCounts
		}
		head, err := meta.AppendHeader(nil, votefile.FormatCSV)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(head)
	} else if m.Input == votefile.ManyClasses {
		flags = []string{"--input-format", "counts"}
	} else if slices.Contains(m.Optional, "eps") {
		flags = []string{"--eps", "0.1", "--Delta", strconv.FormatFloat(delta, 'g', -1, 64)}
	}
	// The rows are appended without fmt: the SIGTERM check writes 100,000.
	row := []byte(b.String())
	for i := 1; i <= n; i++ {
		a := (7 * i) % 12
		row = strconv.AppendInt(append(row, 'q'), int64(i), 10)
		if m.Input == votefile.ManyClasses {
			for _, c := range []int{a, (11 - a) / 2, 11 - a - (11-a)/2} {
				row = strconv.AppendInt(append(row, ','), int64(c), 10)
			}
		} else {
			for j := range 11 {
				row = append(row, ',', byte('0'+min(1, max(0, a-j))))
			}
		}
		row = append(row, '\n')
	}
	if err := os.WriteFile(path, row, 0o644); err != nil {
		t.Fatal(err)
	}
	return flags
}

// TestEveryCheckOfEveryMechanism runs the checks of a release over the
// mechanisms of the registry, so that a mechanism registered later is
// checked without a line here. Every mechanism: a release onto a ledger
// with --out a symbolic link (its target replaced, the link kept), and a
// budget that stops the release (exit 4). The
// checks that depend on a mechanism only through its setting (the votes
// it takes, its relation, whether it is charged per draw) run for the
// first mechanism of each setting, a setting registered later included:
// a short write, whose labels are all charged (the sink's count and the
// ledger's settling, the same code for every mechanism of a setting); a
// vote file without a header on a ledger (refused); another ensemble's
// votes on the ledger (refused by its binding). The checks of the output
// file (a FIFO, a device, --out the ledger or the vote file) and SIGTERM
// do not depend on the mechanism: under -short they run for the
// registry's first mechanism only, and every release is of fewer queries
// (the short write's file-size limit shrinks with them, so that it still
// falls inside the labels).
func TestEveryCheckOfEveryMechanism(t *testing.T) {
	cache := t.TempDir()
	// Two runs of 8,000 labels of delta 3e-5 (m = 3, Delta = 1e-5) are
	// charged to one ledger: 0.48 of its delta, at most 0.5
	// (0.5, param.GuaranteeDelta).
	n, fileLimit := 8_000, "100" // 512-byte blocks: 51 kB of about 72 kB of labels
	if testing.Short() {
		n, fileLimit = 2_000, "16" // 8 kB of about 16 kB, above the ledger's own (its version-5 header and lines)
	}
	settings := map[string]bool{}
	for i, m := range testMechanisms().All() {
		fileChecks := i == 0 || !testing.Short()
		_, perDraw := setup.PerDraw(m)
		setting := fmt.Sprint(m.Input, m.Relation, perDraw)
		settingChecks := !settings[setting]
		settings[setting] = true
		t.Run(string(m.Name)+"/"+strings.ReplaceAll(m.Input.String(), " ", "-"), func(t *testing.T) {
			dir := t.TempDir()
			id := "checks-" + string(m.Name) + "-" + strconv.Itoa(int(m.Input))
			votes := filepath.Join(dir, "votes.csv")
			checkFile(t, votes, m, id, n)
			led := filepath.Join(dir, "checks.ledger")
			// The simple filter composes every mechanism's labels, those
			// without a zCDP curve too; a mechanism charged per draw needs
			// the Gaussian-DP filter, whose reserve for the discrete
			// Gaussian's tails, δ·2^-20/(1 + e^ε), vanishes at ε = 1e9.
			init := []string{"ledger", "init", led, "--votes", votes, "--budget-eps", "1e9", "--budget-delta", "0.5", "--filter", "simple"}
			if perDraw {
				init = []string{"ledger", "init", led, "--votes", votes, "--budget-eps", "80", "--budget-delta", "0.5", "--filter", "gdp-filter"}
			}
			if _, e, code := darrm(t, "", init...); code != 0 {
				t.Fatal(e)
			}
			release := append([]string{"aggregate", "--mechanism", string(m.Name), "--cache-dir", cache}, exampleFlags(t, m)...)
			labels := func(path string) int { return labelsIn(mustRead(t, path)) }

			// --out a symbolic link: its target is replaced, the link kept.
			target, link := filepath.Join(dir, "target.csv"), filepath.Join(dir, "link.csv")
			os.WriteFile(target, []byte("old"), 0o644)
			os.Symlink("target.csv", link)
			out, stderr, code := darrm(t, "", append(release, votes, "--out", link, "--format", "json", "--ledger", led)...)
			if st, err := os.Lstat(link); code != 0 || err != nil || st.Mode()&os.ModeSymlink == 0 || labels(target) != n {
				t.Fatalf("--out a link: exit %d, link kept %v: %s", code, err == nil && st.Mode()&os.ModeSymlink != 0, stderr)
			}
			var doc struct {
				PerQuery struct{ Eps, Delta float64 } `json:"per_query"`
				Cap      *struct{ Eps float64 }       `json:"cap"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil || !(doc.PerQuery.Eps > 0) {
				t.Fatalf("summary %v: %s", err, out)
			}

			if fileChecks {
				// --out a FIFO: written through, still a FIFO.
				fifo := filepath.Join(dir, "fifo")
				if err := syscall.Mkfifo(fifo, 0o600); err != nil {
					t.Fatal(err)
				}
				got := make(chan int)
				go func() {
					f, err := os.Open(fifo)
					if err != nil {
						got <- -1
						return
					}
					b, _ := io.ReadAll(f)
					f.Close()
					got <- labelsIn(b)
				}()
				if _, stderr, code := darrm(t, "", append(release, votes, "--out", fifo)...); code != 0 {
					t.Fatalf("--out a FIFO: exit %d: %s", code, stderr)
				}
				if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
					t.Error("--out a FIFO: the FIFO was replaced")
				} else if k := <-got; k != n {
					t.Errorf("--out a FIFO: its reader got %d labels", k)
				}

				// --out a device: a null device made here, never the machine's.
				dev := filepath.Join(dir, "null")
				if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
					t.Logf("no device of our own to write to (%v): that case is skipped", err)
				} else {
					if _, stderr, code := darrm(t, "", append(release, votes, "--out", dev)...); code != 0 {
						t.Errorf("--out a device: exit %d: %s", code, stderr)
					}
					if st, err := os.Lstat(dev); err != nil || st.Mode()&os.ModeCharDevice == 0 {
						t.Error("--out a device: the device was replaced")
					}
				}

				// --out the ledger, the vote file or its sidecar, which does
				// not exist yet (labels written there broke every later
				// read of the votes): refused,
				// nothing changed or made.
				before, beforeVotes := mustRead(t, led), mustRead(t, votes)
				sidecar := votes + ".meta.json"
				for out, want := range map[string]string{led: "is the ledger", votes: "is the vote file", sidecar: "is the sidecar of the vote file"} {
					if _, stderr, code := darrm(t, "", append(release, votes, "--ledger", led, "--out", out)...); code != exitUsage || !strings.Contains(stderr, want) {
						t.Errorf("--out %s: exit %d: %s", out, code, stderr)
					}
				}
				if _, err := os.Stat(sidecar); err == nil {
					t.Error("a refused --out made the vote file's sidecar")
				}
				if string(mustRead(t, led)) != string(before) || string(mustRead(t, votes)) != string(beforeVotes) {
					t.Error("a refused --out changed the ledger or the votes")
				}
			}

			if settingChecks {
				// A short write: every label of which a byte reached standard
				// output is charged, and the error says how many.
				short := filepath.Join(dir, "short.csv")
				f, err := os.Create(short)
				if err != nil {
					t.Fatal(err)
				}
				charged := recorded(t, led)
				cmd := inShell("ulimit -f "+fileLimit, append(release, votes, "--ledger", led)...)
				var e strings.Builder
				cmd.Stdout, cmd.Stderr = f, &e
				cmd.Start()
				code = waitExit(t, cmd)
				f.Close()
				left := labels(short)
				said := mayHaveReached.FindStringSubmatch(e.String())
				if code != exitFailure || left == 0 || said == nil || said[1] != strconv.Itoa(left) || recorded(t, led)-charged < left {
					t.Errorf("short write: exit %d, %d labels left, %d charged: %s", code, left, recorded(t, led)-charged, e.String())
				}

				// The votes without their header assert nothing of the
				// teachers: refused by every ledger, which is bound to an
				// ensemble, even with the partition asserted (a one-vote
				// mechanism needs it: without, the release refuses them
				// first).
				plain := filepath.Join(dir, "plain.csv")
				flags := checkFile(t, plain, m, "", 50)
				before := mustRead(t, led)
				asserts := [][]string{nil}
				if m.Relation == accountant.OneVote {
					asserts = append(asserts, []string{"--partition", "keyed-hash"})
				}
				for _, assert := range asserts {
					args := append(append(append(release, plain, "--ledger", led, "--out", filepath.Join(dir, "plain-labels.csv")), flags...), assert...)
					_, stderr, code = darrm(t, "", args...)
					if code != exitUsage || !strings.Contains(stderr, "has no metadata header") || string(mustRead(t, led)) != string(before) {
						t.Errorf("headerless votes on a ledger, %v: exit %d: %s", assert, code, stderr)
					}
				}

				// Another ensemble's votes: refused by the ledger's binding.
				other := filepath.Join(dir, "other.csv")
				checkFile(t, other, m, "another", 50)
				if _, stderr, code := darrm(t, "", append(release, other, "--ledger", led, "--out", filepath.Join(dir, "other-labels.csv"))...); code != exitUsage || !strings.Contains(stderr, "ensemble another (the ledger's: "+id+")") {
					t.Errorf("another ensemble: exit %d: %s", code, stderr)
				}

			}

			// A budget that allows two queries, or none when the cap is
			// smaller: the release stops with exit 4, its file holds the
			// answered labels. Its delta is that of two queries, below
			// which the cap's composition of the teachers has no room.
			budget := 2.5 * doc.PerQuery.Eps
			if doc.Cap != nil {
				budget = min(budget, doc.Cap.Eps/2)
			}
			stopped := filepath.Join(dir, "stopped.csv")
			out, stderr, code = darrm(t, "", append(release, votes, "--out", stopped, "--format", "json",
				"--budget-eps", strconv.FormatFloat(budget, 'g', -1, 64), "--budget-delta", strconv.FormatFloat(2.5*doc.PerQuery.Delta, 'g', -1, 64))...)
			var res struct {
				Released *int `json:"released"`
			}
			json.Unmarshal([]byte(out), &res)
			answered := res.Released
			if code != exitBudget || answered == nil || *answered >= n || labels(stopped) != *answered {
				t.Errorf("budget: exit %d, answered %v, %d labels: %s", code, answered, labels(stopped), stderr)
			}

			if !fileChecks {
				return
			}
			// SIGTERM while the labels are being written: exit 130, no file.
			sub := filepath.Join(dir, "term")
			os.Mkdir(sub, 0o755)
			checkFile(t, filepath.Join(sub, "in.csv"), m, id, 100_000)
			data := mustRead(t, filepath.Join(sub, "in.csv"))
			os.Remove(filepath.Join(sub, "in.csv"))
			cmd := child(append(release, "--out", filepath.Join(sub, "labels.csv"))...)
			stdin, _ := cmd.StdinPipe()
			var serr syncBuffer
			cmd.Stderr = &serr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go stdin.Write(data)
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && !tempHasData(cmd.Process.Pid, sub); time.Sleep(10 * time.Millisecond) {
			}
			cmd.Process.Signal(syscall.SIGTERM)
			code = waitExit(t, cmd)
			stdin.Close()
			if left := files(t, sub); code != exitInterrupted || len(left) != 0 {
				t.Errorf("SIGTERM: exit %d, files left %v: %s", code, left, serr.String())
			}
		})
	}
}
