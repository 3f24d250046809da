//go:build unix

package atomicfile

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestTemporaryUnnamed: while an output is written, its temporary file
// has no name in the folder on Linux (O_TMPFILE), so that no other process
// (an indexer, a sync daemon, tail -f) can open it, and the output says
// its bytes are private; Commit gives it the target's name, with its
// permissions. Without O_TMPFILE (the fallback, taken elsewhere and when
// tryAnonymous is off), the temporary file is named, and the output says
// that what was written may have been read. Neither leaves a file behind
// on Abort.
func TestTemporaryUnnamed(t *testing.T) {
	for _, anonymous := range []bool{true, false} {
		tryAnonymous = anonymous
		dir := t.TempDir()
		path := filepath.Join(dir, "labels.csv")
		o, err := Create(context.Background(), path, 0o640)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := o.Write([]byte("id,label\nq1,1\n")); err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(dir)
		unnamed := anonymous && runtime.GOOS == "linux"
		if unnamed && (len(entries) != 0 || !o.Private()) {
			t.Errorf("O_TMPFILE: the folder holds %v while the output is written, private %v", entries, o.Private())
		}
		if !unnamed && (len(entries) != 1 || o.Private()) {
			t.Errorf("named fallback: the folder holds %v, private %v", entries, o.Private())
		}
		if err := o.Commit(); err != nil {
			t.Fatal(err)
		}
		if o.Private() {
			t.Errorf("anonymous %v: private after Commit named it", anonymous)
		}
		st, err := os.Stat(path)
		if err != nil || st.Mode().Perm() != 0o640 || read(t, path) != "id,label\nq1,1\n" {
			t.Errorf("anonymous %v: committed %v, %v", anonymous, st, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("anonymous %v: files left: %v", anonymous, entries)
		}
		o, err = Create(context.Background(), path, 0o640)
		if err != nil {
			t.Fatal(err)
		}
		o.Write([]byte("half"))
		o.Abort()
		if o.Private() != unnamed {
			t.Errorf("anonymous %v: private %v after Abort", anonymous, o.Private())
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 || read(t, path) != "id,label\nq1,1\n" {
			t.Errorf("anonymous %v: after Abort the folder holds %v", anonymous, entries)
		}
	}
	tryAnonymous = true
}
