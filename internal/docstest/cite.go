package docstest

import (
	"fmt"
	"regexp"
	"strings"
)

var (
	// qualifiedRE is a Go name with its package: pkg.Name, and the fields
	// or methods after it (pkg.Type.Method), the package written by its
	// name or by a path (internal/enum.Table,
	// gonum.org/v1/gonum/stat/distuv.Normal).
	qualifiedRE = regexp.MustCompile(`((?:[A-Za-z0-9_.~-]+/)+)?([a-z][a-z0-9_]*)\.([A-Z][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)`)
	// scopeRE is the opening of a paragraph or list item that names the
	// package of the names after it: "Package `x`" at its start, or
	// "package `x`" in its bold lead ("- **GNMax (package `noisymax`).**").
	scopeRE = regexp.MustCompile("^\\s*(?:(?:[-*+]|\\d+[.)])\\s+)?(?:\\*\\*[^*]*?\\b[Pp]ackage `([A-Za-z0-9_./-]+)`|[Pp]ackage `([A-Za-z0-9_./-]+)`)")
	// rowRE is a table row whose first cell is in backquotes: "| `x` | ...";
	// packageTableRE the header of a table of packages, whose rows are.
	rowRE          = regexp.MustCompile("^\\|\\s*`([A-Za-z0-9_./-]+)`\\s*\\|")
	packageTableRE = regexp.MustCompile(`^\|\s*package\s*\|`)
	// listItemRE opens a list item.
	listItemRE = regexp.MustCompile(`^\s*(?:[-*+]|\d+[.)])\s+`)
	// codeSpanRE is a code span on one line.
	codeSpanRE = regexp.MustCompile("`([^`]+)`")
	// unqualifiedRE is a code span that is a Go name without its package:
	// Name, Type.Member, with a leading * or & and trailing call
	// parentheses or composite-literal braces aside.
	unqualifiedRE = regexp.MustCompile(`^[*&]?([A-Z][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?:\(.*\)|\{.*\})?$`)
)

// Citations returns the Go names the Markdown file src cites outside its
// fenced code blocks and HTML comments (GoBlocks has those of ```go
// blocks):
//
//   - pkg.Name, pkg.Type.Member (a field or method, and so on down) and
//     path/pkg.Name, anywhere in the text. A pkg that is no package of
//     the module (another module's, the standard library's, a variable's
//     in prose: res.Gamma) is left to Module.Check, which skips it; one
//     preceded by a dot (x.pkg.Name) is a selector, not a citation.
//   - In a paragraph or list item that opens with "Package `x`" or whose
//     bold lead names "package `x`", and in a row of a table headed
//     "| package |" whose first cell is `x`, every code span that is a Go name written without its
//     package (Name, *Name, Name(), Name{...}, Type.Member), as x's.
//
// A paragraph ends at a blank line, a list item at the next item, a
// heading or a fence; a table row is one line.
func Citations(file string, src []byte) []Citation {
	lines := splitLines(src)
	var (
		out       []Citation
		seen      = map[string]bool{}
		fence     string
		comment   bool
		scope     string
		scopeLine int
		fresh     = true // the next line opens a paragraph
		table     bool   // the previous line is a table row
		packages  bool   // the table is one of packages
	)
	add := func(c Citation) {
		key := fmt.Sprintf("%d\x00%s\x00%s", c.Line, c.Pkg, c.Text)
		if !seen[key] {
			seen[key] = true
			out = append(out, c)
		}
	}
	for i, line := range lines {
		n := i + 1
		if fence != "" {
			if isClosingFence(line, fence) {
				fence, fresh = "", true
			}
			continue
		}
		if !comment {
			if m := fenceRE.FindStringSubmatch(line); m != nil && !(m[2][0] == '`' && strings.Contains(m[3], "`")) {
				fence, scope, table = m[2], "", false
				continue
			}
		}
		line, comment = stripComments(line, comment)
		t := strings.TrimSpace(line)
		if t == "" {
			if !comment {
				fresh, scope, table = true, "", false
			}
			continue
		}
		heading, row := strings.HasPrefix(t, "#"), strings.HasPrefix(t, "|")
		if row && !table {
			packages = packageTableRE.MatchString(t)
		}
		table = row
		if fresh || heading || row || listItemRE.MatchString(line) {
			scope, scopeLine = "", 0
			if m := scopeRE.FindStringSubmatch(line); m != nil {
				scope, scopeLine = m[1]+m[2], n
			} else if m := rowRE.FindStringSubmatch(line); m != nil && row && packages {
				scope, scopeLine = m[1], n
			}
		}
		fresh = heading || row
		for _, c := range qualified(line) {
			c.File, c.Line = file, n
			add(c)
		}
		if scope == "" {
			continue
		}
		for _, m := range codeSpanRE.FindAllStringSubmatch(line, -1) {
			u := unqualifiedRE.FindStringSubmatch(strings.TrimSpace(m[1]))
			if u == nil {
				continue
			}
			add(Citation{File: file, Line: n, Text: u[1], Pkg: scope, Names: strings.Split(u[1], "."), Scope: scopeLine})
		}
	}
	return out
}

// qualified returns the pkg.Name citations of one line of text (File and
// Line unset).
func qualified(text string) []Citation {
	var out []Citation
	for _, m := range qualifiedRE.FindAllStringSubmatchIndex(text, -1) {
		if m[0] > 0 && (isWord(text[m[0]-1]) || strings.IndexByte("./-~", text[m[0]-1]) >= 0) {
			continue
		}
		pkg := text[m[4]:m[5]]
		if m[2] >= 0 {
			pkg = text[m[2]:m[3]] + pkg
		}
		names := text[m[6]:m[7]]
		out = append(out, Citation{Text: text[m[0]:m[1]], Pkg: pkg, Names: strings.Split(names, ".")})
	}
	return out
}

func isWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// stripComments removes HTML comments from line, given whether one is
// open at its start, and says whether one is open at its end.
func stripComments(line string, open bool) (string, bool) {
	var b strings.Builder
	for {
		if open {
			end := strings.Index(line, "-->")
			if end < 0 {
				return b.String(), true
			}
			line, open = line[end+3:], false
			continue
		}
		start := strings.Index(line, "<!--")
		if start < 0 {
			b.WriteString(line)
			return b.String(), false
		}
		b.WriteString(line[:start])
		line, open = line[start+4:], true
	}
}

// splitLines splits a Markdown file into lines, as Parse does.
func splitLines(src []byte) []string {
	lines := strings.Split(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	return lines
}
