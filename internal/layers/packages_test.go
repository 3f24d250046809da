package layers

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// summaries returns each package's summary, the first sentence of its
// documentation without "Package name " (or "Command name ").
func summaries(t *testing.T) map[string]string {
	t.Helper()
	sum := map[string]string{}
	for _, l := range goList(t) {
		p, _ := rel(l.ImportPath)
		f := strings.SplitN(l.Doc, " ", 3)
		if len(f) < 3 || f[0] != "Package" && f[0] != "Command" {
			t.Errorf("%s: documentation %q does not start with Package or Command and its name", p, l.Doc)
			continue
		}
		sum[p] = f[2]
	}
	return sum
}

// packageRow is a row of a package table: "| `path` | summary | ...".
var packageRow = regexp.MustCompile("^\\| `([^`]+)` \\| (.*?) \\|")

// table returns the rows of the package table of file that starts with the
// line header: each package's second cell.
func table(t *testing.T, file, header string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(t), file))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "\n"+header+"\n")
	if !ok {
		t.Fatalf("%s: no table headed %q", file, header)
	}
	rows := map[string]string{}
	for i, line := range strings.Split(after, "\n") {
		if i == 0 {
			continue // the separator row
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		m := packageRow.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("%s: row %q does not start with a package in backquotes", file, line)
			continue
		}
		if _, dup := rows[m[1]]; dup {
			t.Errorf("%s: two rows for %s", file, m[1])
		}
		rows[m[1]] = m[2]
	}
	return rows
}

// TestPackageTables: README.md and docs/design.md list every package once,
// and each row says what the package's documentation says first: README's
// row is its summary, design's row starts with it (the design may add the
// details).
func TestPackageTables(t *testing.T) {
	sum := summaries(t)
	for _, tc := range []struct {
		file, header string
		exact        bool
	}{
		{"README.md", "| package | provides |", true},
		{"docs/design.md", "| package | job | thesis |", false},
	} {
		rows := table(t, tc.file, tc.header)
		for p, s := range sum {
			row, ok := rows[p]
			switch {
			case !ok:
				t.Errorf("%s: no row for package %s (%s)", tc.file, p, s)
			case tc.exact && row != s, !tc.exact && !strings.HasPrefix(row, s):
				t.Errorf("%s: the row of %s says %q, want the first sentence of its documentation, %q", tc.file, p, row, s)
			}
		}
		for p := range rows {
			if _, ok := sum[p]; !ok {
				t.Errorf("%s: a row for %s, which is not a package of the module", tc.file, p)
			}
		}
	}
}
