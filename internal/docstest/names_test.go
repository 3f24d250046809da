package docstest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// docSources returns the files whose Go the tests hold true, README.md and
// docs/*.md as TestDocs runs them, and their content.
func docSources(t *testing.T, root string) ([]string, map[string][]byte) {
	t.Helper()
	files, err := TrackedFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	docs := docFiles(files)
	if len(docs) == 0 {
		t.Fatal("no README.md or docs/*.md among the tracked files")
	}
	srcs := map[string][]byte{}
	for _, doc := range docs {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(doc)))
		if err != nil {
			t.Fatal(err)
		}
		srcs[doc] = src
	}
	return docs, srcs
}

// TestDocNames: every Go name of the module that README.md and docs/*.md
// cite exists (Citations says what counts as a citation, Module.Check
// which packages are the module's), and so does every one the module's
// overview cites (doc.go at its root, what go doc of the module prints).
// The names the ```go blocks use are looked up too, as far as the type
// checker can without the standard library (TestGoBlocks compiles them).
// It builds nothing, so go test -short runs it.
func TestDocNames(t *testing.T) {
	root := repoRoot(t)
	docs, srcs := docSources(t, root)
	m, err := LoadModule(root)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	check := func(c Citation) {
		ours, err := m.Check(c)
		if err != nil {
			t.Error(err)
		}
		if ours {
			checked++
		}
	}
	for _, doc := range docs {
		for _, c := range Citations(doc, srcs[doc]) {
			check(c)
		}
		blocks, err := ParseGo(doc, srcs[doc])
		if err != nil {
			t.Error(err)
		}
		for _, b := range blocks {
			if b.Skip != "" {
				continue
			}
			for _, c := range b.Citations() {
				check(c)
			}
			src, err := b.Source(doc, func(name string) (string, error) {
				if ps := m.byName[name]; len(ps) > 0 {
					return ps[0].path, nil
				}
				return name, nil // the standard library's, which the type checker leaves empty
			})
			if err != nil {
				t.Error(err)
				continue
			}
			for _, err := range m.NameErrors(src) {
				t.Errorf("%v (the ```go block at %s)", err, b.Pos())
			}
		}
	}
	overview, err := os.ReadFile(filepath.Join(root, "doc.go"))
	if err != nil {
		t.Fatalf("the module's overview: %v", err)
	}
	for _, c := range Citations("doc.go", overview) {
		check(c)
	}
	if checked == 0 {
		t.Fatal("no citation of the module's names found: the scan is broken")
	}
	t.Logf("%d citations of the module's names checked", checked)
}

// TestGoBlocks: every ```go block of README.md and docs/*.md compiles
// against the module, as a reader's program would: each in a package of
// its own in a module outside darrm's that requires it (replaced by the
// work tree), fragments wrapped as GoBlock.Source says. Compiler errors
// name the Markdown file and line. go test -short skips it.
func TestGoBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: compiling the docs' Go blocks builds the module")
	}
	root := repoRoot(t)
	docs, srcs := docSources(t, root)
	m, err := LoadModule(root)
	if err != nil {
		t.Fatal(err)
	}
	std, err := stdPackages(root)
	if err != nil {
		t.Fatal(err)
	}
	importPath := func(name string) (string, error) {
		switch ps := m.byName[name]; {
		case len(ps) == 1:
			return ps[0].path, nil
		case len(ps) > 1:
			return "", fmt.Errorf("%s names %d packages of the module: make the block a complete file with its imports", name, len(ps))
		}
		switch ps := std[name]; {
		case len(ps) == 1:
			return ps[0], nil
		case len(ps) > 1:
			return "", fmt.Errorf("%s names %s of the standard library: make the block a complete file with its imports", name, strings.Join(ps, " and "))
		}
		return "", fmt.Errorf("%s is no package of the module or the standard library: make the block a complete file with its imports", name)
	}

	dir := t.TempDir()
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	// The program's go.mod is the module's own, renamed, requiring the
	// module: with every requirement listed, the go command prunes the
	// module graph as it does for the module, and needs no go.mod that
	// the module's build did not (with only the module required, it walks
	// the requirements of modules without a go.mod of their own, such as
	// pgpassfile's testify, which GOPROXY=off cannot fetch).
	modLine := regexp.MustCompile(`(?m)^module \S+$`)
	if modLine.Find(goMod) == nil {
		t.Fatal("go.mod has no module line")
	}
	mod := fmt.Sprintf("%s\nrequire %s v0.0.0\n\nreplace %s => %s\n", modLine.ReplaceAll(goMod, []byte("module darrmdocs")), m.Path, m.Path, root)
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	n, skipped := 0, 0
	for _, doc := range docs {
		blocks, err := ParseGo(doc, srcs[doc])
		if err != nil {
			t.Error(err)
		}
		for _, b := range blocks {
			if b.Skip != "" {
				t.Logf("%s: skipped: %s", b.Pos(), b.Skip)
				skipped++
				continue
			}
			src, err := b.Source(filepath.Join(root, filepath.FromSlash(doc)), importPath)
			if err != nil {
				t.Error(strings.ReplaceAll(err.Error(), root+string(filepath.Separator), ""))
				continue
			}
			n++
			pkg := filepath.Join(dir, fmt.Sprintf("block%03d", n))
			if err := os.Mkdir(pkg, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(pkg, "block.go"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n == 0 {
		t.Logf("no ```go block to compile (%d skipped)", skipped)
		return
	}
	// As a reader builds it: a complete program is linked too (cgo
	// included), and the module's own go.mod and go.sum decide the
	// versions of its requirements, with nothing fetched.
	cmd := exec.Command("go", "build", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("the docs' Go blocks do not compile against the module (go build: %v):\n%s", err,
			strings.ReplaceAll(string(bytes.TrimSpace(out)), root+string(filepath.Separator), ""))
	}
	t.Logf("%d ```go blocks compiled, %d skipped", n, skipped)
}

// stdPackages returns the standard library's importable packages by name.
func stdPackages(root string) (map[string][]string, error) {
	cmd := exec.Command("go", "list", "std")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list std: %v%s", err, stderrOf(err))
	}
	byName := map[string][]string{}
	for _, p := range strings.Fields(string(out)) {
		elems := strings.Split(p, "/")
		if slices.Contains(elems, "internal") || slices.Contains(elems, "vendor") {
			continue
		}
		name := path.Base(p)
		if len(elems) > 1 && regexp.MustCompile(`^v[0-9]+$`).MatchString(name) {
			name = elems[len(elems)-2]
		}
		byName[name] = append(byName[name], p)
	}
	for _, ps := range byName {
		sort.Strings(ps)
	}
	return byName, nil
}
