package layers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// module is the import path of darrm's module.
const module = "github.com/darrm/darrm"

// layers are darrm's packages from the bottom up, as docs/design.md draws
// them ("Packages and layering"). A package may import packages of its own
// layer and of the layers below, never of a layer above.
var layers = []struct {
	name string
	pkgs []string
}{
	{"low-level helpers", []string{"internal/ctxio", "internal/atomicfile", "internal/bigmath", "internal/plural", "internal/enum", "internal/roots", "internal/outward", "internal/decimal", "internal/param", "internal/peek", "internal/tally", "internal/docstest", "internal/layers", "internal/pgtest", "internal/quotetest", "internal/cachedir", "internal/statedir"}},
	{"vote and label files", []string{"votefile"}},
	{"numerics", []string{"noise", "internal/discrete", "internal/poissonbinom", "internal/lp"}},
	{"privacy and the noise function", []string{"accountant", "noisymax", "constraints", "gamma", "cache", "optimal", "internal/fixtures"}},
	{"release metadata", []string{"provenance"}},
	{"releases and training", []string{"ensemble", "ledger", "pate", "shuffleg", "plan"}},
	{"experiments", []string{"experiments/nn", "experiments/datasets", "experiments/dpsgd", "experiments/teachers", "experiments/transfer", "experiments/patemnist", "experiments/shuffleexp"}},
	{"presentation", []string{"cmd/darrm/internal/cli", "cmd/darrm/internal/cliout", "cmd/darrm/internal/figure", "cmd/darrm/internal/curveplot", "cmd/darrm/internal/report", "cmd/darrm/internal/resolve", "cmd/darrm/internal/shard", "cmd/darrm/internal/outputs", "cmd/darrm/internal/setup"}},
	{"the command", []string{"cmd/darrm"}},
	{"the overview", []string{"."}},
}

// apart are layers whose packages may not import those of a lower layer
// all the same: a file format knows no privacy, and the numerics, the
// accountant and the solver read no vote files.
var apart = []struct{ from, to, why string }{
	{"numerics", "vote and label files", "the numerics read no vote files"},
	{"privacy and the noise function", "vote and label files", "accounting and the solver read no vote files"},
}

// callerOpens are packages that must not link a package of their own
// layer: the caller opens the ledger and loads γ_opt and hands the release
// or the account an interface or the data it read, so that a GNMax release
// or a PATE account links neither pgx nor HiGHS (docs/design.md).
var callerOpens = []struct{ from, to string }{
	{"ensemble", "ledger"},
	{"ensemble", "optimal"},
	{"pate", "ledger"},
	{"pate", "optimal"},
}

// testOnly are packages that tests alone import: internal/fixtures builds
// the gammas of the repository's testdata/ and so sits above the helpers
// beside it in internal/, which no package's code may then lean on.
var testOnly = map[string]bool{"internal/fixtures": true}

// root returns the module's folder.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// listed is what go list says of a package of the module.
type listed struct {
	ImportPath, Doc string
	Imports, Deps   []string
}

// goList returns what go list says of every package of the module: the
// packages that ./... matches of the one list that library type-checks
// (listModule).
func goList(t *testing.T) []listed {
	t.Helper()
	all, err := listModule()
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []listed
	for _, p := range all {
		if !p.DepOnly {
			pkgs = append(pkgs, listed{ImportPath: p.ImportPath, Doc: p.Doc, Imports: p.Imports, Deps: p.Deps})
		}
	}
	return pkgs
}

// listedPkg is what go list -export -deps says of a package: of the
// module (DepOnly false, as ./... matches) or one it imports.
type listedPkg struct {
	ImportPath, Doc, Export, Dir string
	GoFiles, CgoFiles            []string
	Imports, Deps                []string
	Module                       *struct{ Path string }
	DepOnly                      bool
}

// listModule is what go list says of the module's packages and of every
// package they import, with their export data, listed once for the
// tests: each list loads the whole module (0.2 s of CPU without -export,
// 0.4 s with), and the layers and the type checks read the same list.
var listModule = sync.OnceValues(func() ([]listedPkg, error) {
	dir, err := filepath.Abs("../..")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("go", "list", "-export", "-deps", "-json=ImportPath,Doc,Export,Dir,GoFiles,CgoFiles,Imports,Deps,Module,DepOnly", "./...")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export: %v\n%s", err, stderr.String())
	}
	var pkgs []listedPkg
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p listedPkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list -export: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
})

// rel returns a darrm import path relative to the module ("." for the
// module's own package, the overview), and whether it is one.
func rel(path string) (string, bool) {
	if path == module {
		return ".", true
	}
	return strings.CutPrefix(path, module+"/")
}

// TestLayers: every package of the module has a layer, and its code
// imports only packages of its layer or below, but for the layers kept
// apart, and no package for tests only. Tests may reach higher (the
// docs test looks for the data sets an example needs).
func TestLayers(t *testing.T) {
	layer := map[string]int{}
	for i, l := range layers {
		for _, p := range l.pkgs {
			if _, dup := layer[p]; dup {
				t.Errorf("%s is in two layers", p)
			}
			layer[p] = i
		}
	}
	seen := map[string]bool{}
	for _, l := range goList(t) {
		p, _ := rel(l.ImportPath)
		seen[p] = true
		i, ok := layer[p]
		if !ok {
			t.Errorf("package %s has no layer: add it to layers and to the diagram of docs/design.md", p)
			continue
		}
		for _, imp := range l.Imports {
			q, ours := rel(imp)
			if !ours {
				continue
			}
			if testOnly[q] {
				t.Errorf("%s imports %s, which is for tests only", p, q)
			}
			j, ok := layer[q]
			if ok && j > i {
				t.Errorf("%s (%s) imports %s (%s), a layer above it", p, layers[i].name, q, layers[j].name)
			}
			for _, a := range apart {
				if ok && layers[i].name == a.from && layers[j].name == a.to {
					t.Errorf("%s (%s) imports %s (%s): %s", p, a.from, q, a.to, a.why)
				}
			}
		}
	}
	for p := range layer {
		if !seen[p] {
			t.Errorf("layers names %s, which is not a package of the module", p)
		}
	}
}

// TestCallerOpens: the packages of callerOpens link none of the packages
// their callers open for them, through any import.
func TestCallerOpens(t *testing.T) {
	deps := map[string]map[string]bool{}
	for _, l := range goList(t) {
		p, _ := rel(l.ImportPath)
		deps[p] = map[string]bool{}
		for _, d := range l.Deps {
			if q, ours := rel(d); ours {
				deps[p][q] = true
			}
		}
	}
	for _, c := range callerOpens {
		switch d, ok := deps[c.from]; {
		case !ok:
			t.Errorf("callerOpens names %s, which is not a package of the module", c.from)
		case d[c.to]:
			t.Errorf("%s links %s: its caller opens %s and hands it what it needs", c.from, c.to, c.to)
		}
	}
}
