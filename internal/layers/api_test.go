package layers

import (
	"bytes"
	"go/types"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// internalIn returns the first type of an internal package that t names
// (through pointers, containers, signatures and type arguments), "" when
// none.
func internalIn(t types.Type, seen map[types.Type]bool) string {
	if seen[t] {
		return ""
	}
	seen[t] = true
	named := func(o *types.TypeName) string {
		if o.Pkg() != nil && strings.Contains(o.Pkg().Path()+"/", "/internal/") {
			return o.Pkg().Path() + "." + o.Name()
		}
		return ""
	}
	switch t := t.(type) {
	case *types.Alias:
		if s := named(t.Obj()); s != "" {
			return s
		}
		return internalIn(types.Unalias(t), seen)
	case *types.Named:
		if s := named(t.Obj()); s != "" {
			return s
		}
		for i := 0; i < t.TypeArgs().Len(); i++ {
			if s := internalIn(t.TypeArgs().At(i), seen); s != "" {
				return s
			}
		}
	case *types.Pointer:
		return internalIn(t.Elem(), seen)
	case *types.Slice:
		return internalIn(t.Elem(), seen)
	case *types.Array:
		return internalIn(t.Elem(), seen)
	case *types.Chan:
		return internalIn(t.Elem(), seen)
	case *types.Map:
		if s := internalIn(t.Key(), seen); s != "" {
			return s
		}
		return internalIn(t.Elem(), seen)
	case *types.Signature:
		for _, tu := range []*types.Tuple{t.Params(), t.Results()} {
			for i := 0; i < tu.Len(); i++ {
				if s := internalIn(tu.At(i).Type(), seen); s != "" {
					return s
				}
			}
		}
	case *types.Struct:
		for i := 0; i < t.NumFields(); i++ {
			if f := t.Field(i); f.Exported() || f.Embedded() {
				if s := internalIn(f.Type(), seen); s != "" {
					return s
				}
			}
		}
	case *types.Interface:
		for i := 0; i < t.NumMethods(); i++ {
			if s := internalIn(t.Method(i).Type(), seen); s != "" {
				return s
			}
		}
	}
	return ""
}

// TestNoInternalInAPI: no exported name of a public package of the
// library, nor an exported field or method of one, has a type of an
// internal package in its declaration: a user could not name it, and go
// doc would not document it.
func TestNoInternalInAPI(t *testing.T) {
	for _, p := range typedLibrary(t) {
		if strings.HasPrefix(p.path, "internal/") || p.pkg == nil {
			continue
		}
		scope := p.pkg.Scope()
		for _, name := range scope.Names() {
			o := scope.Lookup(name)
			if !o.Exported() {
				continue
			}
			check := func(what string, typ types.Type) {
				if s := internalIn(typ, map[types.Type]bool{}); s != "" {
					t.Errorf("%s.%s: %s names %s, an internal type", p.path, name, what, s)
				}
			}
			tn, isType := o.(*types.TypeName)
			if !isType {
				check("its type", o.Type())
				continue
			}
			if tn.IsAlias() {
				check("the alias", types.Unalias(tn.Type()))
				continue
			}
			nt, ok := tn.Type().(*types.Named)
			if !ok {
				continue
			}
			check("its underlying type", nt.Underlying())
			for i := 0; i < nt.NumMethods(); i++ {
				if m := nt.Method(i); m.Exported() {
					check("method "+m.Name(), m.Type())
				}
			}
		}
	}
}

// maxFileLines bounds a file of the library: one concern per file.
const maxFileLines = 800

// TestFileSize: no file of the library (cmd/ and tests left out) is over
// maxFileLines lines.
func TestFileSize(t *testing.T) {
	for _, p := range typedLibrary(t) {
		for _, f := range p.files {
			name := p.fset.Position(f.Pos()).Filename
			if strings.HasSuffix(name, filepath.Join("ledger", "postgres.go")) {
				continue // issue 87 splits it
			}
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if n := bytes.Count(b, []byte("\n")); n > maxFileLines {
				t.Errorf("%s: %d lines, more than %d: split it by concern", name, n, maxFileLines)
			}
		}
	}
}
