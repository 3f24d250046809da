//go:build unix

package cli

import (
	"os"
	"path/filepath"
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
