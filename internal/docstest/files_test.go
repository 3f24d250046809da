package docstest

import (
	"os"
	"path"
	"path/filepath"
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
