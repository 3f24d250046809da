//go:build unix

package cli

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCheckOutput refuses an output that leads to a protected file by any
// name (the same path, another spelling, a hard link, a symbolic link) and
// one that would replace a file a protected folder owns; other files, new
// files in such a folder, devices and standard output pass.
func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	os.WriteFile(p("ledger"), []byte("l"), 0o644)
	os.WriteFile(p("votes.csv"), []byte("v"), 0o644)
	os.Link(p("ledger"), p("hardlink"))
	os.Symlink("ledger", p("symlink"))
	os.MkdirAll(p("cache/sub"), 0o755)
	os.WriteFile(p("cache/entry.json"), []byte("e"), 0o644)
	os.WriteFile(p("cache/sub/teacher.json"), []byte("t"), 0o644)
	os.Symlink("cache", p("cachelink"))
	owns := func(rel string) bool { return rel == "entry.json" || strings.HasPrefix(rel, "sub/") }
	protect := []Protected{
		{What: "the ledger", Path: p("ledger")},
		{What: "the vote file", Path: p("votes.csv")},
		{What: "the cache", Path: p("cache"), Dir: true, Owns: owns},
		{What: "missing", Path: p("missing")},
		{What: "stdin", Path: Std},
	}
	for _, tc := range []struct {
		out  string
		want string // in the error; "" passes
	}{
		{p("ledger"), "is the ledger"},
		{filepath.Join(dir, ".", "sub", "..", "ledger"), "is the ledger"},
		{p("hardlink"), "is the ledger"},
		{p("symlink"), "is the ledger"},
		{p("votes.csv"), "is the vote file"},
		{p("cache/entry.json"), "is a file of the cache"},
		{p("cachelink/entry.json"), "is a file of the cache"},
		{p("cache/sub/teacher.json"), "is a file of the cache"},
		{p("cache/sub/new.json"), "is a file of the cache"},
		{p("cache/labels.csv"), ""},
		{p("cache"), "directory"},
		{p("labels.csv"), ""},
		{"/dev/null", ""},
		{Std, ""},
	} {
		err := CheckOutput("out", tc.out, protect...)
		if tc.want == "" && err != nil || tc.want != "" && (!IsUsage(err) || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckOutput(%s): %v, want %q", tc.out, err, tc.want)
		}
	}
}

// TestIsStdoutFile: a path to the file that standard output writes to
// (as /dev/stdout is) is recognised, through wrapping writers.
func TestIsStdoutFile(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := &checkedWriter{w: f}
	if !IsStdoutFile(f.Name(), w) || IsStdoutFile("/dev/null", w) || IsStdoutFile(Std, w) {
		t.Error("IsStdoutFile")
	}
}

// TestNear: a path that does not exist is answered with the existing
// paths close to it, at the first component that does not exist, spelt
// as the path is; a path close to nothing has none.
func TestNear(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	os.MkdirAll(p("testdata"), 0o755)
	os.WriteFile(p("testdata/votes-K11.csv"), nil, 0o644)
	os.WriteFile(p("testdata/Labels.csv"), nil, 0o644)
	os.WriteFile(p("labels.csv"), nil, 0o644)
	for _, tc := range []struct {
		path string
		want []string
	}{
		{p("testdata/votes-K11.cvs"), []string{p("testdata/votes-K11.csv")}},
		{p("testdata/votes-K11"), []string{p("testdata/votes-K11.csv")}},
		{p("testdat/votes-K11.csv"), []string{p("testdata/votes-K11.csv")}},
		{p("testdata/labels.csv"), []string{p("testdata/Labels.csv")}},
		{p("testdat/nothing.csv"), nil},
		{p("zzz/yyy"), nil},
		{p("lables.csv"), []string{p("labels.csv")}},
	} {
		if got := Near(tc.path); !slices.Equal(got, tc.want) {
			t.Errorf("Near(%s) = %q, want %q", tc.path, got, tc.want)
		}
	}
	t.Chdir(dir)
	if got := Near("testdata/votes-K11.cvs"); !slices.Equal(got, []string{"testdata/votes-K11.csv"}) {
		t.Errorf("Near of a relative path = %q, want it relative", got)
	}
}

// TestMissingFiles: an input that does not exist and an output whose
// folder does not exist are usage errors that name the path and suggest
// close ones, without the system call's name.
func TestMissingFiles(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "out"), 0o755)
	os.WriteFile(filepath.Join(dir, "votes.csv"), nil, 0o644)
	_, err := OpenInputContext(context.Background(), nil, nil, filepath.Join(dir, "votes.cvs"))
	want := filepath.Join(dir, "votes.cvs") + ": no such file or directory; did you mean " + filepath.Join(dir, "votes.csv") + "?"
	if !IsUsage(err) || err.Error() != want || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenInputContext of a mistyped name: %v, want %q", err, want)
	}
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "otu", "l.csv"), "--out " + filepath.Join(dir, "otu", "l.csv") + ": folder " + filepath.Join(dir, "otu") + " does not exist (create it first); did you mean " + filepath.Join(dir, "out") + "?"},
		{filepath.Join(dir, "none", "sub", "l.csv"), "folder " + filepath.Join(dir, "none", "sub") + " does not exist"},
		{filepath.Join(dir, "votes.csv", "l.csv"), filepath.Join(dir, "votes.csv") + " is not a folder"},
	} {
		err := CheckOutput("out", tc.path)
		if !IsUsage(err) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), ".tmp") {
			t.Errorf("CheckOutput(%s) = %v, want %q", tc.path, err, tc.want)
		}
	}
	if err := CheckOutputNamed("LEDGER", filepath.Join(dir, "otu", "k.ledger")); !IsUsage(err) || !strings.HasPrefix(err.Error(), "LEDGER ") {
		t.Errorf("CheckOutputNamed: %v", err)
	}
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "out"), ""},
		{"", ""},
		{filepath.Join(dir, "otu"), "--data-dir " + filepath.Join(dir, "otu") + ": folder " + filepath.Join(dir, "otu") + " does not exist; did you mean " + filepath.Join(dir, "out") + "?"},
		{filepath.Join(dir, "votes.csv"), filepath.Join(dir, "votes.csv") + " is not a folder"},
	} {
		err := CheckFolder("data-dir", tc.path)
		if tc.want == "" && err != nil || tc.want != "" && (!IsUsage(err) || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckFolder(%q) = %v, want %q", tc.path, err, tc.want)
		}
	}
}
