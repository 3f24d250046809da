package docstest

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// repoRoot is the folder of go.mod above the test's folder.
func repoRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = parent
	}
}

// docFiles returns README.md and then docs/*.md (not below docs/), sorted.
func docFiles(files []string) []string {
	var docs []string
	for _, f := range files {
		if dir, name := path.Split(f); dir == "docs/" && strings.HasSuffix(name, ".md") {
			docs = append(docs, f)
		}
	}
	sort.Strings(docs)
	for _, f := range files {
		if f == "README.md" {
			docs = append([]string{f}, docs...)
		}
	}
	return docs
}

// TestDocsSayNoProvenance: the docs say what darrm does and why, not how
// it was made: no audit or review that found a fault, which a reader
// cannot look up (the facts, what went wrong and by how much, stay).
// PostgreSQL's setting audit.off, which the SQL names, is not one.
func TestDocsSayNoProvenance(t *testing.T) {
	root := repoRoot(t)
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append(files, filepath.Join(root, "README.md"))
	word := regexp.MustCompile(`(?i)\b(audit|audits|auditor|round (one|two|three|four|five|six|seven|eight|nine|ten|[0-9]+))\b`)
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(text), "\n") {
			if m := word.FindString(strings.ReplaceAll(line, "audit.off", "")); m != "" {
				t.Errorf("%s:%d: %q: say what happens, not who found it", filepath.Base(f), i+1, m)
			}
		}
	}
}
