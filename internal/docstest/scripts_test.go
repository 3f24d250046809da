//go:build unix

package docstest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCheckToolchainSaysSo: scripts/check-toolchain.sh, which the README
// has a new user run, says in one line what it found when the toolchain
// is ready, rather than nothing. It runs only where gcc already links
// the libraries, so that the script installs nothing.
func TestCheckToolchainSaysSo(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "p.c")
	if err := os.WriteFile(src, []byte("int main(void){return 0;}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("gcc", src, "-o", filepath.Join(dir, "p"), "-lstdc++", "-lz", "-lm", "-ldl").Run(); err != nil {
		t.Skipf("gcc does not link -lstdc++ -lz here (%v): the script would install them", err)
	}
	cmd := exec.Command("bash", filepath.Join(repoRoot(t), "scripts", "check-toolchain.sh"))
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	out, err := cmd.Output()
	if lines := strings.Split(strings.TrimSpace(string(out)), "\n"); err != nil || len(lines) != 1 || !strings.Contains(lines[0], "ready to build darrm") {
		t.Errorf("scripts/check-toolchain.sh: %v, stdout %q; want one line saying the toolchain is ready", err, out)
	}
}

// TestReproduceKeepsItsGlobals: a function of scripts/reproduce.sh that
// reads into a variable (read, a for loop) declares it local or uses a
// name the script's top level does not: bash's variables are global unless
// declared local, so tables_queries' "while read -r table m data ..." set
// the data folder, data, to the empty string once its loop ended, and
// every later item that needs the data (transfer, fig-4.2) said "skipped:
// needs mnist-data/train-images-idx3-ubyte and 3 more in  (...)" with the
// data in place.
func TestReproduceKeepsItsGlobals(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(repoRoot(t), "scripts", "reproduce.sh"))
	if err != nil {
		t.Fatal(err)
	}
	name := `[A-Za-z_][A-Za-z0-9_]*`
	funcStart := regexp.MustCompile(`^(` + name + `)\(\) \{`)
	assigns := regexp.MustCompile(`^\s*((?:` + name + `=\S*\s*)+)`)
	reads := regexp.MustCompile(`\bread\s+(?:-r\s+)?((?:` + name + `\s*)+)`)
	fors := regexp.MustCompile(`\bfor\s+(` + name + `)\s+in\b`)
	locals := regexp.MustCompile(`^\s*local\s+(.*)`)
	bound := func(line string) []string { // names a read or a for loop sets
		var names []string
		if m := reads.FindStringSubmatch(line); m != nil {
			names = append(names, strings.Fields(m[1])...)
		}
		if m := fors.FindStringSubmatch(line); m != nil {
			names = append(names, m[1])
		}
		return names
	}
	globals := map[string]bool{}
	type use struct {
		fn, name string
		line     int
	}
	var uses []use
	fn, local := "", map[string]bool{}
	for i, line := range strings.Split(string(text), "\n") {
		switch {
		case fn == "" && funcStart.MatchString(line) && !strings.HasSuffix(line, "}"): // not a one-line function
			fn, local = funcStart.FindStringSubmatch(line)[1], map[string]bool{}
			continue
		case fn != "" && line == "}":
			fn = ""
			continue
		}
		if fn == "" {
			if m := assigns.FindStringSubmatch(line); m != nil {
				for _, a := range strings.Fields(m[1]) {
					n, _, _ := strings.Cut(a, "=")
					globals[n] = true
				}
			}
			for _, n := range bound(line) {
				globals[n] = true
			}
			continue
		}
		if m := locals.FindStringSubmatch(line); m != nil {
			for _, a := range strings.Fields(m[1]) {
				n, _, _ := strings.Cut(a, "=")
				local[n] = true
			}
		}
		for _, n := range bound(line) {
			if !local[n] {
				uses = append(uses, use{fn, n, i + 1})
			}
		}
	}
	if !globals["data"] {
		t.Fatalf("found no global data in scripts/reproduce.sh (globals %v): the test reads it wrong", globals)
	}
	for _, u := range uses {
		if globals[u.name] {
			t.Errorf("scripts/reproduce.sh:%d: %s sets the script's global %s (declare it local, or name it otherwise)", u.line, u.fn, u.name)
		}
	}
}

// TestReproduceSplicesByRename: scripts/reproduce.sh's splice replaces a
// table in a doc by a rename of the complete new file, so that an
// interrupt leaves the old doc or the new one, never a doc cut short where
// the copy stopped; the script's work folder is in the clone, so that the
// rename does not become a copy across file systems.
func TestReproduceSplicesByRename(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(repoRoot(t), "scripts", "reproduce.sh"))
	if err != nil {
		t.Fatal(err)
	}
	splice := regexp.MustCompile(`(?ms)^splice\(\) \{.*?^\}$`).Find(text)
	if splice == nil {
		t.Fatal("no function splice in scripts/reproduce.sh")
	}
	if !regexp.MustCompile(`(?m)^work=\$\(mktemp -d "\$PWD/`).Match(text) {
		t.Error(`scripts/reproduce.sh: its work folder is not made in the clone (work=$(mktemp -d "$PWD/...")): a move into docs/ may copy`)
	}
	dir := t.TempDir()
	doc, content := filepath.Join(dir, "doc.md"), filepath.Join(dir, "table.md")
	os.WriteFile(doc, []byte("a\n<!-- reproduce:t -->\nold\n<!-- /reproduce -->\nb\n"), 0o644)
	os.WriteFile(content, []byte("new\n"), 0o644)
	before, err := os.Stat(doc)
	if err != nil {
		t.Fatal(err)
	}
	script := "set -euo pipefail\nwork=" + dir + "\n" + string(splice) + "\nsplice \"$1\" t \"$2\"\n"
	if out, err := exec.Command("bash", "-c", script, "bash", doc, content).CombinedOutput(); err != nil {
		t.Fatalf("splice: %v: %s", err, out)
	}
	after, err := os.Stat(doc)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(doc); string(b) != "a\n<!-- reproduce:t -->\nnew\n<!-- /reproduce -->\nb\n" {
		t.Errorf("splice wrote %q", b)
	}
	if os.SameFile(before, after) {
		t.Error("splice rewrote the doc in place: an interrupt leaves it cut short")
	}
}
