package docstest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Module is the Go code of one module, type-checked from source without
// function bodies: what a document may cite of it. Packages of other
// modules and of the standard library are not loaded (an import of one is
// an empty package to the type checker), so that loading takes no build;
// a name reached through one of their types is not checked.
type Module struct {
	Path   string // the module path
	fset   *token.FileSet
	pkgs   map[string]*modPkg // by import path
	byName map[string][]*modPkg
	sorted []*modPkg // by import path
	top    map[string]bool
}

// modPkg is one package of the module.
type modPkg struct {
	path, rel, name string
	files           []string // its Go files, cgo's included (absolute)
	testFiles       []string // its _test.go files, both packages (absolute)
	types           *types.Package
	// tests holds the top-level names its test files declare, nil until a
	// citation asks for a name its types lack (testNames): parsing every
	// test file of the module took half of LoadModule's CPU.
	tests    map[string]bool
	checking bool
}

// listed is what go list says of a package.
type listed struct {
	ImportPath, Name, Dir     string
	GoFiles, CgoFiles         []string
	TestGoFiles, XTestGoFiles []string
	Module                    *struct{ Path string }
	Error                     *struct{ Err string }
}

// LoadModule lists the packages of the module at root with go list and
// type-checks them from source.
func LoadModule(root string) (*Module, error) {
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Name,Dir,GoFiles,CgoFiles,TestGoFiles,XTestGoFiles,Module,Error", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list ./... in %s: %v: %s", root, err, bytes.TrimSpace(stderr.Bytes()))
	}
	m := &Module{fset: token.NewFileSet(), pkgs: map[string]*modPkg{}, byName: map[string][]*modPkg{}, top: map[string]bool{}}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var l listed
		if err := dec.Decode(&l); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list ./... in %s: %v", root, err)
		}
		if l.Error != nil {
			return nil, fmt.Errorf("go list: %s: %s", l.ImportPath, l.Error.Err)
		}
		if l.Module == nil {
			return nil, fmt.Errorf("go list: %s is in no module", l.ImportPath)
		}
		if m.Path == "" {
			m.Path = l.Module.Path
		}
		p := &modPkg{path: l.ImportPath, name: l.Name, rel: "."}
		if l.ImportPath != m.Path {
			p.rel = strings.TrimPrefix(l.ImportPath, m.Path+"/")
		}
		for _, f := range append(append([]string{}, l.GoFiles...), l.CgoFiles...) {
			p.files = append(p.files, filepath.Join(l.Dir, f))
		}
		for _, f := range append(append([]string{}, l.TestGoFiles...), l.XTestGoFiles...) {
			p.testFiles = append(p.testFiles, filepath.Join(l.Dir, f))
		}
		m.pkgs[p.path] = p
		m.byName[p.name] = append(m.byName[p.name], p)
		m.sorted = append(m.sorted, p)
		m.top[strings.SplitN(p.rel, "/", 2)[0]] = true
	}
	if len(m.sorted) == 0 {
		return nil, fmt.Errorf("go list ./... in %s lists no packages", root)
	}
	sort.Slice(m.sorted, func(i, j int) bool { return m.sorted[i].path < m.sorted[j].path })
	for _, p := range m.sorted {
		if _, err := m.check(p); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Import implements types.Importer for the module's packages; any other
// path is an error, which makes the type checker go on with an empty
// package in its place.
func (m *Module) Import(path string) (*types.Package, error) {
	p, ok := m.pkgs[path]
	if !ok {
		return nil, errors.New("not a package of the module")
	}
	return m.check(p)
}

// check type-checks p (and the packages of the module it imports) once.
// Type errors are ignored: those that matter fail the module's own build.
func (m *Module) check(p *modPkg) (*types.Package, error) {
	if p.types != nil {
		return p.types, nil
	}
	if p.checking {
		return nil, fmt.Errorf("import cycle through %s", p.path)
	}
	p.checking = true
	defer func() { p.checking = false }()
	var files []*ast.File
	for _, f := range p.files {
		af, err := parser.ParseFile(m.fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, af)
	}
	conf := types.Config{Importer: m, IgnoreFuncBodies: true, FakeImportC: true, Error: func(error) {}}
	p.types, _ = conf.Check(p.path, m.fset, files, nil)
	return p.types, nil
}

// testNames returns the top-level names p's test files declare, parsing
// them at the first call.
func (m *Module) testNames(p *modPkg) (map[string]bool, error) {
	if p.tests != nil {
		return p.tests, nil
	}
	tests := map[string]bool{}
	for _, f := range p.testFiles {
		af, err := parser.ParseFile(m.fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, name := range declared(af) {
			tests[name] = true
		}
	}
	p.tests = tests
	return tests, nil
}

// declared returns the names f declares at package level (not methods).
func declared(f *ast.File) []string {
	var names []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				names = append(names, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					names = append(names, s.Name.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names = append(names, n.Name)
					}
				}
			}
		}
	}
	return names
}

// Citation is a Go name a document cites: Names[0] of package Pkg, then
// the fields or methods Names[1:] reached from it (Type.Method,
// Type.Field.Field, Var.Method).
type Citation struct {
	File string
	Line int
	Text string // as written
	// Pkg is the package as written: its name ("votefile"), a path in the
	// module ("internal/enum", "github.com/darrm/darrm/ledger") or a path
	// of another module ("gonum.org/v1/gonum/stat/distuv").
	Pkg   string
	Names []string
	// Scope, for a name written without its package, is the line of the
	// paragraph, list item or table row that names the package; 0 when
	// the name is written with it.
	Scope int
}

func (c Citation) pos() string { return fmt.Sprintf("%s:%d", c.File, c.Line) }

// Check says whether c is a name of the module (ours) and, if so, an
// error when it does not exist: it says why and offers the nearest names
// that do, and the packages that have the name. A package written by its
// name is the module's when a package of the module has that name; written
// by a path, when the path is in the module (its module path, or a
// relative path whose first element is a top-level folder of the
// module's packages). A name written without its package is looked up in
// the package its paragraph names, as a top-level name, a field or method
// of one of the package's types, or a name of its tests.
func (m *Module) Check(c Citation) (ours bool, err error) {
	cands, ours, err := m.packages(c.Pkg)
	if !ours || err != nil {
		return ours, m.wrap(c, err)
	}
	var first error
	for _, p := range cands {
		err := m.resolve(p, c.Names, c.Scope != 0)
		if err == nil {
			return true, nil
		}
		if first == nil {
			first = err
		}
	}
	if len(cands) > 1 {
		var paths []string
		for _, p := range cands {
			paths = append(paths, p.rel)
		}
		first = fmt.Errorf("%v (and in none of the other packages named %s: %s)", first, c.Pkg, strings.Join(paths[1:], ", "))
	}
	return true, m.wrap(c, first)
}

func (m *Module) wrap(c Citation, err error) error {
	if err == nil {
		return nil
	}
	where := ""
	if c.Scope != 0 {
		where = fmt.Sprintf(" (written without its package: line %d names package %s)", c.Scope, c.Pkg)
	}
	return fmt.Errorf("%s: `%s`%s: %v", c.pos(), c.Text, where, err)
}

// packages returns the module's packages that pkg, as written, may name.
func (m *Module) packages(pkg string) ([]*modPkg, bool, error) {
	if !strings.Contains(pkg, "/") {
		ps := m.byName[pkg]
		return ps, len(ps) > 0, nil
	}
	rel := pkg
	switch {
	case pkg == m.Path:
		rel = "."
	case strings.HasPrefix(pkg, m.Path+"/"):
		rel = strings.TrimPrefix(pkg, m.Path+"/")
	case !m.top[strings.SplitN(pkg, "/", 2)[0]]:
		return nil, false, nil
	}
	full := m.Path
	if rel != "." {
		full += "/" + rel
	}
	if p, ok := m.pkgs[full]; ok {
		return []*modPkg{p}, true, nil
	}
	var near []string
	for _, p := range m.sorted {
		near = append(near, p.rel)
	}
	return nil, true, fmt.Errorf("the module has no package %s%s", rel, nearest(rel, near, "; nearest: "))
}

// resolve looks names up in p: names[0] at the package's top level (or,
// for a name written without its package, as a field or method of one of
// its types), then each next name as a field or method of the previous
// one's type.
func (m *Module) resolve(p *modPkg, names []string, unqualified bool) error {
	scope := p.types.Scope()
	obj := scope.Lookup(names[0])
	if obj == nil {
		tests, err := m.testNames(p)
		if err != nil {
			return err
		}
		if tests[names[0]] && len(names) == 1 {
			return nil // a test, an example or a test helper, cited as evidence
		}
		if unqualified && len(names) == 1 {
			if m.member(p, names[0]) {
				return nil
			}
		}
		what := "has no " + names[0]
		if unqualified {
			what += ", as a top-level name or as a field or method of one of its types"
		}
		if low := unexported(names[0]); scope.Lookup(low) != nil {
			what += " (" + low + " is unexported)"
		}
		return fmt.Errorf("package %s (%s) %s%s%s", p.name, p.path, what,
			nearest(names[0], exported(scope), "; nearest: "), m.elsewhere(p, names[0]))
	}
	if !obj.Exported() {
		return fmt.Errorf("%s.%s is not exported", p.name, names[0])
	}
	cited := p.name + "." + names[0]
	for _, sel := range names[1:] {
		var t types.Type
		switch o := obj.(type) {
		case *types.TypeName, *types.Var:
			t = o.Type()
		case *types.Func:
			return fmt.Errorf("%s is a function or method: it has no field or method %s", cited, sel)
		default:
			return fmt.Errorf("%s is a %s: it has no field or method %s", cited, kind(obj), sel)
		}
		if !typed(t) {
			return nil // a type of another module or of the standard library: not checked
		}
		next, _, _ := types.LookupFieldOrMethod(t, true, p.types, sel)
		if next == nil {
			of := ""
			if _, isType := obj.(*types.TypeName); !isType {
				of = " (" + types.TypeString(t, types.RelativeTo(p.types)) + ")"
			}
			hint := ""
			if low, _, _ := types.LookupFieldOrMethod(t, true, p.types, unexported(sel)); low != nil && sel != unexported(sel) {
				hint = " (" + unexported(sel) + " is unexported)"
			}
			return fmt.Errorf("%s%s has no field or method %s%s%s", cited, of, sel, hint, nearest(sel, members(t), "; nearest: "))
		}
		if !next.Exported() {
			return fmt.Errorf("%s.%s is not exported", cited, sel)
		}
		obj = next
		cited += "." + sel
	}
	return nil
}

// unexported returns name with its first letter in lower case.
func unexported(name string) string {
	if name == "" {
		return name
	}
	return strings.ToLower(name[:1]) + name[1:]
}

// typed reports whether t is known: a type of the module, not of a
// package the loader left empty.
func typed(t types.Type) bool {
	for {
		switch u := t.(type) {
		case *types.Pointer:
			t = u.Elem()
			continue
		case *types.Basic:
			return u.Kind() != types.Invalid
		}
		return true
	}
}

// member reports whether an exported type of p has an exported field or
// method name.
func (m *Module) member(p *modPkg, name string) bool {
	scope := p.types.Scope()
	for _, n := range scope.Names() {
		tn, ok := scope.Lookup(n).(*types.TypeName)
		if !ok || !tn.Exported() {
			continue
		}
		if obj, _, _ := types.LookupFieldOrMethod(tn.Type(), true, p.types, name); obj != nil && obj.Exported() {
			return true
		}
	}
	return false
}

// elsewhere names the other packages of the module that declare name.
func (m *Module) elsewhere(p *modPkg, name string) string {
	var has []string
	for _, q := range m.sorted {
		if q == p {
			continue
		}
		if o := q.types.Scope().Lookup(name); o != nil && o.Exported() {
			has = append(has, q.name+"."+name)
			if q.rel != q.name {
				has[len(has)-1] += " (" + q.rel + ")"
			}
		}
	}
	if len(has) == 0 {
		return ""
	}
	return "; declared in " + strings.Join(has, ", ")
}

// exported returns the exported names of a scope.
func exported(s *types.Scope) []string {
	var names []string
	for _, n := range s.Names() {
		if token.IsExported(n) {
			names = append(names, n)
		}
	}
	return names
}

// members returns the exported fields and methods of t and *t.
func members(t types.Type) []string {
	seen := map[string]bool{}
	var names []string
	add := func(n string) {
		if token.IsExported(n) && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	if _, isPtr := t.(*types.Pointer); !isPtr && !types.IsInterface(t) {
		t = types.NewPointer(t)
	}
	ms := types.NewMethodSet(t)
	for i := range ms.Len() {
		add(ms.At(i).Obj().Name())
	}
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if s, ok := t.Underlying().(*types.Struct); ok {
		for f := range s.Fields() {
			add(f.Name())
		}
	}
	return names
}

func kind(o types.Object) string {
	switch o.(type) {
	case *types.Const:
		return "constant"
	case *types.Var:
		return "variable"
	case *types.Func:
		return "function"
	case *types.TypeName:
		return "type"
	}
	return "name"
}

// nearest returns up to three of names closest to name by edit distance
// (ignoring case), within half of name's length, after prefix; "" if none
// is that close.
func nearest(name string, names []string, prefix string) string {
	type scored struct {
		name string
		d    int
	}
	var close []scored
	limit := max(2, len(name)/2)
	for _, n := range names {
		if d := editDistance(strings.ToLower(name), strings.ToLower(n)); d <= limit && n != name {
			close = append(close, scored{n, d})
		}
	}
	if len(close) == 0 {
		return ""
	}
	sort.Slice(close, func(i, j int) bool {
		if close[i].d != close[j].d {
			return close[i].d < close[j].d
		}
		return close[i].name < close[j].name
	})
	var out []string
	for i := 0; i < len(close) && i < 3; i++ {
		out = append(out, close[i].name)
	}
	return prefix + strings.Join(out, ", ")
}

// editDistance is the Levenshtein distance between a and b, by bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c = 1 + min(prev[j-1], prev[j], cur[j-1])
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
