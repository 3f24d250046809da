package docstest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestCitations(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string // "line pkg names scope"
	}{{
		name: "with their package, in prose and code spans",
		src:  "Call `alpha.NewPlan`, then alpha.Plan.Calibrate.\n`*alpha.Plan` and `beta.Bind(s)`; res.Gamma is a variable.\n",
		want: []string{"1 alpha NewPlan 0", "1 alpha Plan.Calibrate 0", "2 alpha Plan 0", "2 beta Bind 0", "2 res Gamma 0"},
	}, {
		name: "by path",
		src:  "gonum.org/v1/gonum/stat/distuv.Normal and `internal/enum.Table` and github.com/x/y/z.T.M\n",
		want: []string{"1 gonum.org/v1/gonum/stat/distuv Normal 0", "1 internal/enum Table 0", "1 github.com/x/y/z T.M 0"},
	}, {
		name: "a selector of something else is not a citation",
		src:  "x.alpha.Plan and 1alpha.Plan and -alpha.Plan\n",
	}, {
		name: "code blocks and comments are left out",
		src:  "```text\nalpha.Plan\n```\n<!-- alpha.Hidden -->\n<!-- two\nlines alpha.Hidden -->alpha.After\n````md\n```go\nalpha.X\n```\n````\n",
		want: []string{"6 alpha After 0"},
	}, {
		name: "a list item that names its package",
		src: "- **Package `beta`: the check.** `Check`, `*Stated`,\n  `Bind(s)`, `Stated{...}`, `Stated`, `go test`, `K`\n" +
			"- **Other.** `Check`\n\n- **GNMax (package `alpha`).** `Plan.N` and beta.Bind\n",
		want: []string{"1 beta Check 1", "1 beta Stated 1", "2 beta Bind 1", "2 beta Stated 1", "2 beta K 1",
			"5 beta Bind 0", "5 alpha Plan.N 5"},
	}, {
		name: "a paragraph that opens with its package, until a blank line or a heading",
		src:  "Package `alpha` (import `example.com/citemod/alpha`) has\n`Limit`.\n# `Heading`\n`Limit`\n\nPackage `beta`: `Bind`\n\n`Bind`\n",
		want: []string{"2 alpha Limit 1", "6 beta Bind 6"},
	}, {
		name: "tables of packages, not others",
		src:  "| package | provides |\n|---|---|\n| `alpha` | `NewPlan` |\n| `beta` | `Bind` and `Stated.Check` |\n\n| flag | x |\n|---|---|\n| `alpha` | `Nope` |\n",
		want: []string{"3 alpha NewPlan 3", "4 beta Bind 4", "4 beta Stated.Check 4"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range Citations("f.md", []byte(tc.src)) {
				if c.File != "f.md" {
					t.Errorf("citation %+v: file %q", c, c.File)
				}
				got = append(got, fmt.Sprintf("%d %s %s %d", c.Line, c.Pkg, strings.Join(c.Names, "."), c.Scope))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

var fixture struct {
	once sync.Once
	m    *Module
	err  error
}

// citemod loads the fixture module testdata/citemod.
func citemod(t *testing.T) *Module {
	t.Helper()
	fixture.once.Do(func() { fixture.m, fixture.err = LoadModule("testdata/citemod") })
	if fixture.err != nil {
		t.Fatal(fixture.err)
	}
	return fixture.m
}

func TestModuleCheck(t *testing.T) {
	m := citemod(t)
	for _, tc := range []struct {
		pkg, names string
		scope      int
		ours       bool
		err        []string // substrings of the error; none: no error
	}{
		{pkg: "alpha", names: "NewPlan", ours: true},
		{pkg: "alpha", names: "Plan.Calibrate", ours: true},
		{pkg: "alpha", names: "Plan.Teachers", ours: true}, // promoted from beta.Stated
		{pkg: "alpha", names: "Plan.Check", ours: true},
		{pkg: "alpha", names: "Plan.Stated.Teachers", ours: true},
		{pkg: "alpha", names: "Plan.Buf.Len", ours: true}, // a type of the standard library: not checked
		{pkg: "alpha", names: "Default.N", ours: true},
		{pkg: "alpha", names: "Runner.Run", ours: true},
		{pkg: "alpha", names: "TestPlan", ours: true},
		{pkg: "alpha", names: "ExampleNewPlan", ours: true},
		{pkg: "example.com/citemod/beta", names: "Bind", ours: true},
		{pkg: "one/dup", names: "One", ours: true},
		{pkg: "dup", names: "Two", ours: true},
		{pkg: "fmt", names: "Println"},
		{pkg: "stat/distuv", names: "Normal"},
		{pkg: "example.com/other", names: "X"},
		{pkg: "alpha", names: "NewPlans", ours: true, err: []string{"f.md:7: `text`: package alpha (example.com/citemod/alpha) has no NewPlans; nearest: NewPlan"}},
		{pkg: "alpha", names: "Hidden", ours: true, err: []string{"package alpha (example.com/citemod/alpha) has no Hidden (hidden is unexported)"}},
		{pkg: "alpha", names: "Bind", ours: true, err: []string{"has no Bind", "declared in beta.Bind"}},
		{pkg: "alpha", names: "Plan.Calibrat", ours: true, err: []string{"alpha.Plan has no field or method Calibrat; nearest: Calibrate"}},
		{pkg: "alpha", names: "Default.M", ours: true, err: []string{"alpha.Default (Plan) has no field or method M; nearest: N"}},
		{pkg: "alpha", names: "Plan.Secret", ours: true, err: []string{"alpha.Plan has no field or method Secret (secret is unexported)"}},
		{pkg: "alpha", names: "Plan.secret", ours: true, err: []string{"alpha.Plan.secret is not exported"}},
		{pkg: "alpha", names: "Limit.X", ours: true, err: []string{"alpha.Limit is a constant: it has no field or method X"}},
		{pkg: "alpha", names: "NewPlan.X", ours: true, err: []string{"alpha.NewPlan is a function or method"}},
		{pkg: "alpha", names: "TestPlan.X", ours: true, err: []string{"has no TestPlan"}},
		{pkg: "dup", names: "Three", ours: true, err: []string{"package dup (example.com/citemod/one/dup) has no Three", "none of the other packages named dup: two/dup"}},
		{pkg: "one/dupx", names: "One", ours: true, err: []string{"the module has no package one/dupx; nearest: one/dup"}},
		{pkg: "beta", names: "Check", scope: 3, ours: true},
		{pkg: "beta", names: "Teachers", scope: 3, ours: true},
		{pkg: "beta", names: "Stated.Check", scope: 3, ours: true},
		{pkg: "beta", names: "Nope", scope: 3, ours: true, err: []string{"f.md:7: `text` (written without its package: line 3 names package beta): package beta (example.com/citemod/beta) has no Nope, as a top-level name or as a field or method of one of its types"}},
		{pkg: "beta", names: "Teachers", ours: true, err: []string{"has no Teachers"}}, // with its package, a name is top-level
	} {
		c := Citation{File: "f.md", Line: 7, Text: "text", Pkg: tc.pkg, Names: strings.Split(tc.names, "."), Scope: tc.scope}
		ours, err := m.Check(c)
		if ours != tc.ours {
			t.Errorf("%s.%s: ours = %v, want %v", tc.pkg, tc.names, ours, tc.ours)
		}
		switch {
		case err == nil && len(tc.err) > 0:
			t.Errorf("%s.%s: no error, want %q", tc.pkg, tc.names, tc.err)
		case err != nil && len(tc.err) == 0:
			t.Errorf("%s.%s: %v", tc.pkg, tc.names, err)
		}
		for _, w := range tc.err {
			if err != nil && !strings.Contains(err.Error(), w) {
				t.Errorf("%s.%s: error %q does not say %q", tc.pkg, tc.names, err, w)
			}
		}
	}
}
