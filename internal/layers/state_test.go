package layers

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// typed is a package of the library (the module but cmd/), parsed and
// type-checked from its files, tests left out.
type typed struct {
	path  string // relative to the module
	fset  *token.FileSet
	files []*ast.File
	info  *types.Info
	pkg   *types.Package
	// shipped says that darrm's code links it: a public package, or one
	// that a package of the library or of the command imports. The rest
	// (internal/docstest, internal/pgtest, ...) serve the tests alone.
	shipped bool
}

// library is the library's packages, type-checked once for the tests
// against the export data of their imports (go list -export, listModule).
var library = sync.OnceValues(typeCheck)

// typedLibrary returns the library's packages (library).
func typedLibrary(t *testing.T) []typed {
	t.Helper()
	pkgs, err := library()
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

func typeCheck() ([]typed, error) {
	listedPkgs, err := listModule()
	if err != nil {
		return nil, err
	}
	exports := map[string]string{}
	imports := map[string][]string{}
	var ours []listedPkg
	for _, p := range listedPkgs {
		exports[p.ImportPath] = p.Export
		imports[p.ImportPath] = p.Imports
		if rel, ok := rel(p.ImportPath); ok && p.Module != nil && p.Module.Path == module && rel != "." && !strings.HasPrefix(rel, "cmd/") {
			ours = append(ours, p)
		}
	}
	// What darrm's code links: every public package and the command, and
	// what they import.
	shipped := map[string]bool{}
	var visit func(string)
	visit = func(path string) {
		if shipped[path] {
			return
		}
		shipped[path] = true
		for _, i := range imports[path] {
			visit(i)
		}
	}
	for path := range imports {
		if r, ok := rel(path); ok && (strings.HasPrefix(r, "cmd/") || !strings.HasPrefix(r, "internal/")) {
			visit(path)
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	var pkgs []typed
	for _, p := range ours {
		r, _ := rel(p.ImportPath)
		tp := typed{path: r, shipped: shipped[p.ImportPath], fset: fset, info: &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}, Types: map[ast.Expr]types.TypeAndValue{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}}
		for _, name := range slices.Concat(p.GoFiles, p.CgoFiles) {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			tp.files = append(tp.files, f)
		}
		conf := types.Config{Importer: imp, FakeImportC: true, Error: func(error) {}}
		tp.pkg, _ = conf.Check(p.ImportPath, fset, tp.files, tp.info)
		pkgs = append(pkgs, tp)
	}
	return pkgs, nil
}

// TestNoGlobalState: no package-level variable of the library that darrm
// links is changed after its declaration, but in an init function: what a computation keeps for the next call lives in
// a value its caller holds and passes (accountant.Memo), never in the
// process. A variable is changed where it (or a field or element of it,
// or what it points to) is assigned, incremented, sent to, cleared or
// deleted from, has its address taken, or calls a method with a pointer
// receiver.
func TestNoGlobalState(t *testing.T) {
	for _, p := range typedLibrary(t) {
		if !p.shipped {
			continue // the tests' own helpers
		}
		global := func(e ast.Expr) *types.Var {
			for {
				switch x := e.(type) {
				case *ast.ParenExpr:
					e = x.X
				case *ast.SelectorExpr:
					if id, ok := x.X.(*ast.Ident); ok {
						if _, isPkg := p.info.Uses[id].(*types.PkgName); isPkg {
							e = x.Sel
							continue
						}
					}
					e = x.X
				case *ast.IndexExpr:
					e = x.X
				case *ast.IndexListExpr:
					e = x.X
				case *ast.StarExpr:
					e = x.X
				case *ast.SliceExpr:
					e = x.X
				case *ast.Ident:
					v, ok := p.info.Uses[x].(*types.Var)
					if ok && v.Pkg() != nil && v.Parent() == v.Pkg().Scope() {
						return v
					}
					return nil
				default:
					return nil
				}
			}
		}
		for _, f := range p.files {
			report := func(at ast.Node, e ast.Expr, how string) {
				if v := global(e); v != nil {
					t.Errorf("%s: package-level %s.%s %s after its declaration: keep it in a value the caller holds",
						p.fset.Position(at.Pos()), v.Pkg().Name(), v.Name(), how)
				}
			}
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.Name == "init" {
					continue
				}
				ast.Inspect(d, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.AssignStmt:
						if n.Tok != token.DEFINE {
							for _, l := range n.Lhs {
								report(n, l, "is assigned")
							}
						}
					case *ast.RangeStmt:
						if n.Tok == token.ASSIGN {
							for _, l := range []ast.Expr{n.Key, n.Value} {
								if l != nil {
									report(n, l, "is assigned")
								}
							}
						}
					case *ast.IncDecStmt:
						report(n, n.X, "is incremented")
					case *ast.SendStmt:
						report(n, n.Chan, "is sent to")
					case *ast.UnaryExpr:
						if n.Op == token.AND {
							report(n, n.X, "has its address taken")
						}
					case *ast.CallExpr:
						if id, ok := ast.Unparen(n.Fun).(*ast.Ident); ok && len(n.Args) > 0 {
							if b, ok := p.info.Uses[id].(*types.Builtin); ok && (b.Name() == "delete" || b.Name() == "clear" || b.Name() == "copy") {
								report(n, n.Args[0], "is changed by "+b.Name())
							}
						}
						sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr)
						if !ok {
							break
						}
						s := p.info.Selections[sel]
						if s == nil || s.Kind() != types.MethodVal {
							break
						}
						if sig, ok := s.Obj().Type().(*types.Signature); ok && sig.Recv() != nil {
							if _, ptr := sig.Recv().Type().(*types.Pointer); ptr {
								report(n, sel.X, "calls "+sel.Sel.Name+", a method with a pointer receiver,")
							}
						}
					}
					return true
				})
			}
		}
	}
}

// TestNoStoredContext: no struct of the library holds a context.Context: a context is passed to the call it governs
// (the context package's rule), never kept for calls to come.
func TestNoStoredContext(t *testing.T) {
	for _, p := range typedLibrary(t) {
		if p.path == "internal/ctxio" {
			// An io.Reader or io.Writer that stops at a context's end: Read
			// and Write take no context, so the adapter holds the one of
			// the call that made it (as net/http's Request does).
			continue
		}
		for _, f := range p.files {
			ast.Inspect(f, func(n ast.Node) bool {
				st, ok := n.(*ast.StructType)
				if !ok {
					return true
				}
				for _, fld := range st.Fields.List {
					if tv, ok := p.info.Types[fld.Type]; ok && types.TypeString(tv.Type, nil) == "context.Context" {
						t.Errorf("%s: a struct holds a context.Context: pass it to the calls instead", p.fset.Position(fld.Pos()))
					}
				}
				return true
			})
		}
	}
}

// TestLogOfSubnormals: the library takes logarithms by outward.Ln, never
// by math.Log or math.Log10, which on amd64 return about -709.09 for every
// subnormal x (golang/go#56600): a δ of 1e-320 then gave an ε below the
// bound at that δ, and the Gaussian-DP filter let a budget of ε above 709
// take twice the μ² it allows. Ln itself is the one call of math.Log.
func TestLogOfSubnormals(t *testing.T) {
	for _, p := range typedLibrary(t) {
		for _, f := range p.files {
			ast.Inspect(f, func(n ast.Node) bool {
				if fd, ok := n.(*ast.FuncDecl); ok && p.path == "internal/outward" && fd.Name.Name == "Ln" && fd.Recv == nil {
					return false
				}
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if fn, ok := p.info.Uses[sel.Sel].(*types.Func); ok && fn.Pkg() != nil && fn.Pkg().Path() == "math" && (fn.Name() == "Log" || fn.Name() == "Log10") {
					t.Errorf("%s: math.%s: take outward.Ln, right for subnormal arguments", p.fset.Position(sel.Pos()), fn.Name())
				}
				return true
			})
		}
	}
}
