package docstest

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEnumValuesDocumented: `go doc PKG Type` prints a typed const block
// as its first name and "...", so a reader of the type sees one value of
// an enumeration. Each exported type's doc comment must therefore name
// every exported constant of that type.
func TestEnumValuesDocumented(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
			return filepath.SkipDir
		}
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, path, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, p := range pkgs {
			if p.Name == "main" {
				continue
			}
			rel, _ := filepath.Rel(root, path)
			for _, typ := range doc.New(p, rel, 0).Types {
				var names []string
				for _, c := range typ.Consts {
					for _, spec := range c.Decl.Specs {
						for _, n := range spec.(*ast.ValueSpec).Names {
							if n.IsExported() {
								names = append(names, n.Name)
							}
						}
					}
				}
				if len(names) < 2 {
					continue
				}
				checked++
				for _, n := range names {
					if regexp.MustCompile(`\b` + n + `\b`).MatchString(typ.Doc) {
						continue
					}
					t.Errorf("%s.%s: the type's doc comment does not name its value %s, which go doc ./%s %s does not show", rel, typ.Name, n, rel, typ.Name)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no enumerations found: the walk is broken")
	}
	t.Logf("%d enumerations checked", checked)
}
