package docstest

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

func TestParseGo(t *testing.T) {
	src := "```go\npackage main\n```\n" +
		"<!-- docs-test: fragment -->\n```go\nx := 1\n```\n" +
		"<!-- docs-test: fragment (ctx context.Context, v [][]int) error -->\n```go\nreturn nil\n```\n" +
		"<!-- docs-test: skip (another module's API) -->\n```go\nfoo.Bar()\n```\n" +
		"<!-- docs-test: skip -->\n```go\na\n```\n" +
		"<!-- docs-test: slow -->\n```go\nb\n```\n" +
		"<!-- docs-test: fragment ctx -->\n```go\nc\n```\n" +
		"```sh\necho not go\n```\n  ```go\n  indented\n  ```\n"
	blocks, err := ParseGo("f.md", []byte(src))
	var got []string
	for _, b := range blocks {
		got = append(got, fmt.Sprintf("%d %v %q %q %q", b.Line, b.Fragment, b.Signature, b.Skip, strings.Join(b.Lines, "|")))
	}
	want := []string{
		`1 false "" "" "package main"`,
		`5 true "" "" "x := 1"`,
		`9 true "(ctx context.Context, v [][]int) error" "" "return nil"`,
		`13 false "" "another module's API" "foo.Bar()"`,
		`17 false "" "" "a"`,
		`21 false "" "" "b"`,
		`25 false "" "" "c"`,
		`31 false "" "" "indented"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("blocks\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, w := range []string{"f.md:16: docs-test marker", "skip needs a reason", "f.md:20: malformed docs-test marker", "f.md:24:", "is not the signature of a function"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v does not say %q", err, w)
		}
	}
	// The sh blocks' parser leaves the markers of ```go blocks alone.
	if _, err := Parse("f.md", []byte(src)); err != nil {
		t.Errorf("Parse: %v", err)
	}
}

func TestGoBlockSource(t *testing.T) {
	imports := func(name string) (string, error) {
		switch name {
		case "alpha", "beta":
			return "example.com/citemod/" + name, nil
		case "context", "fmt":
			return name, nil
		}
		return "", fmt.Errorf("%s is no package", name)
	}
	for _, tc := range []struct {
		name  string
		block GoBlock
		want  []string // substrings of the source, in order
		err   string
	}{{
		name:  "a complete file as written",
		block: GoBlock{Line: 10, Lines: []string{"// A program.", "package main", "", "func main() {}"}},
		want:  []string{"//line f.md:11:1\n// A program.\npackage main\n"},
	}, {
		name: "statements in a function of the signature, with their imports and variables",
		block: GoBlock{Line: 3, Fragment: true, Signature: "(ctx context.Context, n int) error", Lines: []string{
			"p, err := alpha.NewPlan(n)", "var s beta.Stated", "if err != nil {", "\tinner := 1", "\treturn err", "}", "fmt.Println(p, s)"}},
		want: []string{"package docblock\n\n", `import "context"`, `import "example.com/citemod/alpha"`, `import "example.com/citemod/beta"`, `import "fmt"`,
			"func _(ctx context.Context, n int) error {\n//line f.md:4:1\np, err := alpha.NewPlan(n)\n", "//line docs-test-wrapper:1\n",
			"\t_ = p\n\t_ = err\n\t_ = s\n\tpanic(\"unreachable\")\n}\n"},
	}, {
		name:  "declarations",
		block: GoBlock{Line: 3, Fragment: true, Lines: []string{"type T struct{ P alpha.Plan }", "func (T) M() {}"}},
		want:  []string{"package docblock\n\n", `import "example.com/citemod/alpha"`, "\n//line f.md:4:1\ntype T struct"},
	}, {
		name:  "statements of a function of no parameters",
		block: GoBlock{Line: 3, Fragment: true, Lines: []string{"x := alpha.Limit"}},
		want:  []string{"func _() {\n", "\t_ = x\n}\n"},
	}, {
		name:  "a fragment not marked",
		block: GoBlock{File: "f.md", Line: 3, Lines: []string{"x := 1"}},
		err:   "f.md:3: a ```go block without a package clause",
	}, {
		name:  "a complete file marked as a fragment",
		block: GoBlock{File: "f.md", Line: 3, Fragment: true, Lines: []string{"package p"}},
		err:   "f.md:3: a complete Go file (it has a package clause) marked as a fragment",
	}, {
		name:  "a package the imports do not know",
		block: GoBlock{File: "f.md", Line: 3, Fragment: true, Lines: []string{"x := 1", "y := gonum.Sum(x)"}},
		err:   "f.md:5:6: gonum is no package",
	}, {
		name:  "a fragment that does not parse",
		block: GoBlock{File: "f.md", Line: 3, Fragment: true, Lines: []string{"x := := 1"}},
		err:   "f.md:3: the fragment parses neither as declarations nor as statements",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := tc.block.Source("f.md", imports)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rest := src
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("source\n%s\ndoes not have, in order, %q", src, w)
				}
				rest = rest[i+len(w):]
			}
			if _, err := parser.ParseFile(token.NewFileSet(), "", src, 0); err != nil {
				t.Errorf("source\n%s\ndoes not parse: %v", src, err)
			}
		})
	}
}

func TestNameErrors(t *testing.T) {
	m := citemod(t)
	b := GoBlock{File: "f.md", Line: 20, Fragment: true, Signature: "(ctx context.Context)", Lines: []string{
		"p, err := alpha.NewPlan(1)",
		"x, err := p.Calibrat(2) // a typo",
		"fmt.Println(ctx, beta.Nope, err, alpha.Plan{}.secret)",
		"var r alpha.Runner = nil",
		"_ = r.Run()",
	}}
	src, err := b.Source("f.md", func(name string) (string, error) {
		if name == "alpha" || name == "beta" {
			return "example.com/citemod/" + name, nil
		}
		return name, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	errs := m.NameErrors(src)
	got := errors.Join(errs...)
	for _, w := range []string{"f.md:22:", "p.Calibrat undefined", "f.md:23:", "undefined: beta.Nope", "secret"} {
		if got == nil || !strings.Contains(got.Error(), w) {
			t.Errorf("errors %v do not say %q", got, w)
		}
	}
	if len(errs) != 3 {
		t.Errorf("%d errors, want 3 (the standard library's names are not checked): %v", len(errs), got)
	}
}

func TestGoBlockCitations(t *testing.T) {
	b := GoBlock{File: "f.md", Line: 4, Lines: []string{"x := alpha.NotThis // see beta.Bind", "/* and", "   alpha.Plan.N */"}}
	var got []string
	for _, c := range b.Citations() {
		got = append(got, fmt.Sprintf("%s:%d %s", c.File, c.Line, c.Text))
	}
	if want := "f.md:5 beta.Bind\nf.md:7 alpha.Plan.N"; strings.Join(got, "\n") != want {
		t.Errorf("citations\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}
}
