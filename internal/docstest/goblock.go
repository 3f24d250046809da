package docstest

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// GoBlock is one ```go block of a Markdown file. Unmarked, it is a
// complete Go file (a package clause, its imports); a fragment is marked
// by an HTML comment on the line directly before the fence:
//
//	<!-- docs-test: fragment -->                          declarations, or statements
//	<!-- docs-test: fragment (ctx context.Context) -->    statements: the body of a function of that signature
//	<!-- docs-test: skip (reason) -->                     not compiled; the reason is reported
//
// A fragment's imports are those its package names need: the module's
// packages by name, then the standard library's.
type GoBlock struct {
	File     string
	Line     int      // the opening fence (1-based)
	Lines    []string // its content
	Fragment bool
	// Signature is the fragment's function's signature after "func _",
	// "(ctx context.Context, votes [][]int) error"; "" for declarations
	// or a function of no parameters.
	Signature string
	Skip      string // the reason, for a block marked skip
}

// Pos is the block's position, "file:line" of its opening fence.
func (b GoBlock) Pos() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

// goMarkerRE is a marker of a ```go block.
var goMarkerRE = regexp.MustCompile(`^<!--\s*docs-test:\s*(fragment|skip)\b\s*(.*?)\s*-->$`)

// ParseGo returns the ```go blocks of the Markdown file src. Every
// problem is an error "file:line: ...": a marker before a ```go fence
// that does not parse or has a signature that does not, a skip without
// its reason.
func ParseGo(file string, src []byte) ([]GoBlock, error) {
	lines := splitLines(src)
	var (
		blocks []GoBlock
		errs   []error
	)
	for i := 0; i < len(lines); i++ {
		m := fenceRE.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent, fence, info := len(m[1]), m[2], strings.TrimSpace(m[3])
		if fence[0] == '`' && strings.Contains(info, "`") {
			continue
		}
		tag, _, _ := strings.Cut(info, " ")
		tag = strings.ToLower(strings.Trim(tag, "{}."))
		start := i
		var content []string
		for i++; i < len(lines) && !isClosingFence(lines[i], fence); i++ {
			content = append(content, dedent(lines[i], indent))
		}
		if tag != "go" {
			continue
		}
		b := GoBlock{File: file, Line: start + 1, Lines: content}
		if start > 0 {
			if prev := strings.TrimSpace(lines[start-1]); strings.HasPrefix(prev, "<!--") && strings.Contains(prev, "docs-test") {
				if err := b.mark(prev); err != nil {
					errs = append(errs, fmt.Errorf("%s:%d: %v", file, start, err))
				}
			}
		}
		blocks = append(blocks, b)
	}
	return blocks, errors.Join(errs...)
}

// mark reads the block's marker.
func (b *GoBlock) mark(line string) error {
	m := goMarkerRE.FindStringSubmatch(line)
	if m == nil {
		return fmt.Errorf("malformed docs-test marker %q before a ```go block: want <!-- docs-test: fragment -->, <!-- docs-test: fragment (PARAMETERS) RESULTS --> or <!-- docs-test: skip (reason) -->", line)
	}
	rest := m[2]
	if m[1] == "skip" {
		if !strings.HasPrefix(rest, "(") || !strings.HasSuffix(rest, ")") || strings.TrimSpace(rest[1:len(rest)-1]) == "" {
			return fmt.Errorf("docs-test marker %q: skip needs a reason in parentheses", line)
		}
		b.Skip = strings.TrimSpace(rest[1 : len(rest)-1])
		return nil
	}
	if rest != "" && (!strings.HasPrefix(rest, "(") || !parses("package p; func _"+rest+" {}")) {
		return fmt.Errorf("docs-test marker %q: %q is not the signature of a function, (PARAMETERS) RESULTS", line, rest)
	}
	b.Fragment, b.Signature = true, rest
	return nil
}

// Source returns a Go file that compiles b: a complete file as written, a
// fragment wrapped in a package docblock (statements in a function "_"
// of its signature), with the imports that importPath gives for the
// package names it uses; a variable a fragment's statements declare at
// their top level counts as used, and a fragment's function with results
// needs no final return. Line directives map positions to the block's
// lines in docPath (the Markdown file as the compiler should name it).
func (b GoBlock) Source(docPath string, importPath func(name string) (string, error)) (string, error) {
	text := strings.Join(b.Lines, "\n") + "\n"
	at := fmt.Sprintf("//line %s:%d:1\n", docPath, b.Line+1)
	complete := startsWithPackage(text)
	switch {
	case complete && b.Fragment:
		return "", fmt.Errorf("%s: a complete Go file (it has a package clause) marked as a fragment: drop the marker", b.Pos())
	case complete:
		return at + text, nil
	case !b.Fragment:
		return "", fmt.Errorf("%s: a ```go block without a package clause: make it a complete file, or mark it <!-- docs-test: fragment --> (with the signature of the function it is the body of, if it uses parameters)", b.Pos())
	}
	decls := b.Signature == "" && parses("package docblock\n"+text)
	body, end := at+text, ""
	if !decls {
		sig := b.Signature
		if sig == "" {
			sig = "()"
		}
		body = "func _" + sig + " {\n" + body + "//line docs-test-wrapper:1\n"
		end = "}\n"
	}
	// The imports and the variables come from the file without imports,
	// whose positions are the block's own.
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", "package docblock\n"+body+end, 0)
	if err != nil {
		return "", fmt.Errorf("%s: the fragment parses neither as declarations nor as statements: %v", b.Pos(), err)
	}
	imports, err := fragmentImports(fset, f, importPath)
	if err != nil {
		return "", err
	}
	var src strings.Builder
	src.WriteString("package docblock\n\n")
	for _, imp := range imports {
		fmt.Fprintf(&src, "import %s\n", strconv.Quote(imp))
	}
	src.WriteString("\n" + body)
	if !decls {
		// Close the function: use the variables the statements declare
		// and, when it has results, end it where a return may be missing.
		fd := f.Decls[len(f.Decls)-1].(*ast.FuncDecl)
		for _, v := range declaredVars(fd.Body) {
			fmt.Fprintf(&src, "\t_ = %s\n", v)
		}
		if fd.Type.Results != nil {
			src.WriteString("\tpanic(\"unreachable\")\n")
		}
		src.WriteString(end)
	}
	return src.String(), nil
}

// startsWithPackage reports whether the first token of text is the
// keyword package.
func startsWithPackage(text string) bool {
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile("", -1, len(text)), []byte(text), nil, 0)
	_, tok, _ := s.Scan()
	return tok == token.PACKAGE
}

func parses(src string) bool {
	_, err := parser.ParseFile(token.NewFileSet(), "", src, parser.SkipObjectResolution)
	return err == nil
}

// declaredVars returns the variables the statements of body declare at
// its top level, in order.
func declaredVars(body *ast.BlockStmt) []string {
	var names []string
	seen := map[string]bool{"_": true}
	add := func(id *ast.Ident) {
		if !seen[id.Name] {
			seen[id.Name] = true
			names = append(names, id.Name)
		}
	}
	for _, s := range body.List {
		switch s := s.(type) {
		case *ast.AssignStmt:
			if s.Tok == token.DEFINE {
				for _, e := range s.Lhs {
					if id, ok := e.(*ast.Ident); ok {
						add(id)
					}
				}
			}
		case *ast.DeclStmt:
			if g, ok := s.Decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, spec := range g.Specs {
					for _, id := range spec.(*ast.ValueSpec).Names {
						add(id)
					}
				}
			}
		}
	}
	return names
}

// fragmentImports returns the import paths of the packages f names: the
// identifiers left unresolved in the file that are the left side of a
// selector.
func fragmentImports(fset *token.FileSet, f *ast.File, importPath func(string) (string, error)) ([]string, error) {
	unresolved := map[*ast.Ident]bool{}
	for _, id := range f.Unresolved {
		unresolved[id] = true
	}
	paths := map[string]bool{}
	var errs []error
	done := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok || !unresolved[id] || done[id.Name] {
			return true
		}
		done[id.Name] = true
		p, err := importPath(id.Name)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %v", fset.Position(id.Pos()), err))
			return true
		}
		paths[p] = true
		return true
	})
	var out []string
	for p := range paths {
		out = append(out, p)
	}
	sort.Strings(out)
	return out, errors.Join(errs...)
}

// Citations returns the pkg.Name citations of the block's comments.
func (b GoBlock) Citations() []Citation {
	text := strings.Join(b.Lines, "\n") + "\n"
	var s scanner.Scanner
	fset := token.NewFileSet()
	file := fset.AddFile("", -1, len(text))
	s.Init(file, []byte(text), func(token.Position, string) {}, scanner.ScanComments)
	var out []Citation
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		if tok != token.COMMENT {
			continue
		}
		first := fset.Position(pos).Line
		for i, l := range strings.Split(lit, "\n") {
			for _, c := range qualified(l) {
				c.File, c.Line = b.File, b.Line+first+i
				out = append(out, c)
			}
		}
	}
}

// NameErrors type-checks the file src (made by Source with docPath
// relative, so that positions name the Markdown file) against the
// module's packages, as Module loads them, and returns the errors that
// say a name does not exist or is not exported: what a rename leaves
// behind. Other errors need the compiler (the standard library and other
// modules are not loaded here).
func (m *Module) NameErrors(src string) []error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if err != nil {
		return []error{err}
	}
	var errs []error
	conf := types.Config{Importer: m, Error: func(err error) {
		msg := err.Error()
		if te, ok := err.(types.Error); ok {
			msg = te.Msg
		}
		if strings.Contains(msg, "undefined") || strings.Contains(msg, "not exported") || strings.Contains(msg, "unexported") {
			errs = append(errs, err)
		}
	}}
	conf.Check("docblock", fset, []*ast.File{f}, nil)
	return errs
}
