// Package docstest runs the shell examples of darrm's Markdown documentation
// as written: every fenced block tagged sh in README.md and docs/*.md, in
// order within its file, with bash from the root of a fresh copy of the
// repository, and reports a block that fails, times out, changes a file of
// the repository, leaves a file git does not ignore, would go on past a
// failure when pasted into a shell, or names a path shared with the
// reader's own files (/tmp, the home folder). A block is marked by an HTML
// comment on the line directly before it:
//
//	<!-- docs-test: data -->           needs scripts/fetch-data.sh's data; runs when they are present
//	<!-- docs-test: slow -->           takes more than ~30 s; runs only on request
//	<!-- docs-test: slow data -->      both: runs on request when the data are present
//	<!-- docs-test: skip (reason) -->  never runs; the reason is reported
//
// The test that drives it is TestDocs in this package. TestDocNames and
// TestGoBlocks hold the Go the documentation shows true: the names it
// cites (Citations, Module) and its ```go blocks (GoBlock).
package docstest

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// Marker says when a block runs: Run (no marker, the zero value), a set
// of Data and Slow, or Skip alone.
type Marker int

const (
	// Run (no marker) blocks always run.
	Run Marker = 0
	// Data blocks run only when the data of scripts/fetch-data.sh are
	// present, with DARRM_DATA pointing at them.
	Data Marker = 1 << iota
	// Slow blocks run only on request.
	Slow
	// Skip blocks never run.
	Skip
)

func (m Marker) String() string {
	if m == Run {
		return "run"
	}
	var kinds []string
	for _, k := range []struct {
		m    Marker
		name string
	}{{Data, "data"}, {Slow, "slow"}, {Skip, "skip"}} {
		if m&k.m != 0 {
			kinds = append(kinds, k.name)
		}
	}
	return strings.Join(kinds, " ")
}

// Block is one ```sh block of a Markdown file.
type Block struct {
	File   string   // the file, as given to Parse
	Line   int      // line number of the opening fence (1-based)
	Marker Marker   // when it runs
	Reason string   // the marker's parenthesised reason, if any
	Lines  []string // the block's content, one entry per line
}

// Pos is the block's position, "file:line" of its opening fence.
func (b Block) Pos() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

// LineOf returns the file line of the block's i-th content line (0-based).
func (b Block) LineOf(i int) int { return b.Line + 1 + i }

// Text is the block's content with a final newline.
func (b Block) Text() string { return strings.Join(b.Lines, "\n") + "\n" }

var (
	// A marker: the whole line is the comment; the kinds (data, slow, both,
	// or skip) are separated by spaces or commas; an optional reason
	// follows in parentheses (required for skip).
	markerRE = regexp.MustCompile(`^<!--\s*docs-test:\s*([a-z][a-z ,]*?)\s*(?:\((.*)\))?\s*-->$`)
	// An opening or closing code fence (CommonMark: up to three spaces of
	// indentation, three or more backticks or tildes, then the info string).
	fenceRE = regexp.MustCompile("^( {0,3})(`{3,}|~{3,})(.*)$")
)

// shellTags are info strings of blocks that look like shell but would not
// be run: the convention is sh for what runs, console or text for the rest.
var shellTags = map[string]bool{"bash": true, "shell": true, "zsh": true, "shell-session": true, "sh-session": true}

// Parse returns the ```sh blocks of the Markdown file src, named file in
// positions and errors. Every problem is an error "file:line: ...": a
// docs-test marker that does not parse, names an unknown kind, lacks the
// reason skip requires, or is not on the line directly before a ```sh
// fence; a fence tagged bash, shell or zsh (which would silently not run);
// an unterminated fence. The blocks are returned even when there are errors.
func Parse(file string, src []byte) ([]Block, error) {
	lines := strings.Split(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	var (
		blocks []Block
		errs   []error
	)
	errf := func(line int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", file, line, fmt.Sprintf(format, args...)))
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if strings.Contains(strings.ToLower(line), "docs-test") && strings.HasPrefix(strings.TrimSpace(line), "<!--") {
			if i+1 < len(lines) && fenceTag(lines[i+1]) == "go" {
				continue // a ```go block's marker: ParseGo reads it
			}
			if _, _, err := parseMarker(strings.TrimSpace(line)); err != nil {
				errf(i+1, "%v", err)
			} else if i+1 >= len(lines) || !isShFence(lines[i+1]) {
				errf(i+1, "docs-test marker %q is not on the line directly before a ```sh block", strings.TrimSpace(line))
			}
			continue
		}
		m := fenceRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		indent, fence, info := len(m[1]), m[2], strings.TrimSpace(m[3])
		if fence[0] == '`' && strings.Contains(info, "`") {
			continue // an inline code span, not a fence
		}
		tag, _, _ := strings.Cut(info, " ")
		tag = strings.ToLower(strings.Trim(tag, "{}."))
		start := i
		var content []string
		closed := false
		for i++; i < len(lines); i++ {
			if isClosingFence(lines[i], fence) {
				closed = true
				break
			}
			content = append(content, dedent(lines[i], indent))
		}
		if !closed {
			errf(start+1, "code fence %s%s is never closed", fence, info)
			break
		}
		if shellTags[tag] {
			errf(start+1, "a ```%s block is never run by the docs test: tag it ```sh (it runs) or ```console / ```text (illustration)", tag)
			continue
		}
		if tag != "sh" {
			continue
		}
		b := Block{File: file, Line: start + 1, Lines: content}
		if start > 0 {
			if mk, reason, err := parseMarker(strings.TrimSpace(lines[start-1])); err == nil {
				b.Marker, b.Reason = mk, reason
			}
		}
		blocks = append(blocks, b)
	}
	return blocks, errors.Join(errs...)
}

// parseMarker reads a marker line; a line that is not a docs-test comment
// is an error too.
func parseMarker(line string) (Marker, string, error) {
	m := markerRE.FindStringSubmatch(line)
	if m == nil {
		return Run, "", fmt.Errorf("malformed docs-test marker %q: want <!-- docs-test: data|slow|data slow|skip (reason) -->", line)
	}
	reason := strings.TrimSpace(m[2])
	var mk Marker
	for _, kind := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ' ' || r == ',' }) {
		switch kind {
		case "data":
			mk |= Data
		case "slow":
			mk |= Slow
		case "skip":
			mk |= Skip
		default:
			return Run, "", fmt.Errorf("unknown docs-test marker %q: the kinds are data, slow (or both) and skip (reason)", kind)
		}
	}
	switch {
	case mk&Skip != 0 && mk != Skip:
		return Run, "", fmt.Errorf("docs-test marker %q: skip goes alone (the block never runs)", line)
	case mk == Skip && reason == "":
		return Run, "", fmt.Errorf("docs-test marker %q: skip needs a reason in parentheses", line)
	}
	return mk, reason, nil
}

func isShFence(line string) bool { return fenceTag(line) == "sh" }

// fenceTag returns the language of the code fence line opens, lower-case,
// or "" if it opens none.
func fenceTag(line string) string {
	m := fenceRE.FindStringSubmatch(line)
	if m == nil {
		return ""
	}
	tag, _, _ := strings.Cut(strings.TrimSpace(m[3]), " ")
	return strings.ToLower(tag)
}

// isClosingFence reports whether line closes a block opened by fence: the
// same character at least as many times, up to three spaces of
// indentation, nothing after but spaces.
func isClosingFence(line, fence string) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return false
	}
	t = strings.TrimRight(t, " \t")
	return len(t) >= len(fence) && strings.Trim(t, fence[:1]) == ""
}

// dedent removes up to n leading spaces, as CommonMark does for a fence
// indented by n.
func dedent(line string, n int) string {
	for ; n > 0 && strings.HasPrefix(line, " "); n-- {
		line = line[1:]
	}
	return line
}

// sharedPathRE matches a path outside the repository that every run shares
// with the reader's own files: a fixed name under /tmp, /var/tmp, /dev/shm,
// the home folder or $TMPDIR (which may be unset). mktemp makes names of
// its own there and is not matched.
var sharedPathRE = regexp.MustCompile(`(?:^|[\s=:<>'"(])((?:/tmp|/var/tmp|/dev/shm)(?:/|\b)|~/|\$\{?(?:HOME|TMPDIR)\b)`)

// Lint returns the lines of b that are not commands: a shell prompt ("$ ",
// "% ") or a line that looks like a command's output (a first word ending in
// a colon, a number, a box-drawing or other non-ASCII character, or
// "word = value"); and the lines that name a path shared with the reader's
// own files (sharedPathRE), where a reader's run and the docs test would
// overwrite them. resolve, if not nil, is asked about the first word of
// each command and returns an error when the word names no command. Lines
// inside here-documents and continuation lines are not checked as
// commands; every line is checked for shared paths, comments aside. It
// also returns where b, pasted into an interactive shell, would go on past
// a failure (recipeErrors).
func Lint(b Block, resolve func(word string) error) error {
	var errs []error
	errf := func(i int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", b.File, b.LineOf(i), fmt.Sprintf(format, args...)))
	}
	var quote byte
	for i, line := range b.Lines {
		code, q := scanLine(line, quote)
		quote = q
		if m := sharedPathRE.FindStringSubmatch(code); m != nil {
			errf(i, "%q names %s, shared with the reader's own files: write to a new name in the current directory (the docs test runs each file in a fresh copy of the repository), or into a folder from mktemp -d", strings.TrimSpace(line), strings.TrimRight(m[1], "/"))
		}
	}
	for _, c := range Commands(b.Lines) {
		line := b.Lines[c]
		t := strings.TrimSpace(line)
		if t == "$" || strings.HasPrefix(t, "$ ") || strings.HasPrefix(t, "% ") {
			errf(c, "a shell prompt in a ```sh block (%q): write the command alone, and its output in a ```console or ```text block", t)
			continue
		}
		fields := strings.Fields(t)
		w := fields[0]
		switch {
		case len(w) > 1 && strings.HasSuffix(w, ":"),
			isNumber(w),
			strings.IndexFunc(w, func(r rune) bool { return r > unicode.MaxASCII }) >= 0,
			len(fields) > 1 && fields[1] == "=":
			errf(c, "%q looks like output, not a command: put output in a ```console or ```text block", t)
			continue
		}
		if resolve != nil && isPlainWord(w) {
			if err := resolve(w); err != nil {
				errf(c, "%q: %v (output in a ```sh block? put it in a ```console or ```text block)", t, err)
			}
		}
	}
	errs = append(errs, recipeErrors(b)...)
	return errors.Join(errs...)
}

func isNumber(w string) bool {
	w = strings.TrimLeft(w, "+-")
	if w == "" {
		return false
	}
	for _, r := range w {
		if !unicode.IsDigit(r) && r != '.' && r != ',' && r != 'e' && r != 'E' && r != '%' {
			return false
		}
	}
	return unicode.IsDigit(rune(w[0])) || w[0] == '.'
}

// isPlainWord reports whether w is a literal command word: no expansion,
// quoting, redirection or grouping that only the shell can resolve.
func isPlainWord(w string) bool {
	if strings.Contains(w, "=") {
		return false // an assignment
	}
	return !strings.ContainsAny(w, "$`'\"\\*?[]{}()<>|&;~!")
}

// Commands returns the indices of the lines that start a command: lines
// that are not blank, not comments, not inside a here-document, not inside
// a quoted string that spans lines, and not continuations of the previous
// line (which ended in \, |, && or ||).
func Commands(lines []string) []int {
	var (
		out      []int
		heredoc  []string // pending here-document delimiters, in order
		stripTab bool
		inQuote  byte
		cont     bool
	)
	for i, line := range lines {
		if len(heredoc) > 0 {
			l := line
			if stripTab {
				l = strings.TrimLeft(l, "\t")
			}
			if l == heredoc[0] {
				heredoc = heredoc[1:]
			}
			continue
		}
		t := strings.TrimSpace(line)
		starts := inQuote == 0 && !cont && t != "" && !strings.HasPrefix(t, "#")
		if starts {
			out = append(out, i)
		}
		code, q := scanLine(line, inQuote)
		inQuote = q
		if inQuote == 0 {
			c := strings.TrimSpace(code)
			if t != "" && !strings.HasPrefix(t, "#") {
				cont = strings.HasSuffix(c, "\\") || strings.HasSuffix(c, "|") || strings.HasSuffix(c, "&&")
			}
			for _, d := range heredocs(code) {
				heredoc = append(heredoc, d.word)
				stripTab = d.stripTab
			}
		}
	}
	return out
}

// scanLine returns line without its comment, and the quote open at its end
// (0 if none), given the quote open at its start.
func scanLine(line string, q byte) (string, byte) {
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case q == '\'':
			if c == '\'' {
				q = 0
			}
		case c == '\\':
			i++
		case q == '"':
			if c == '"' {
				q = 0
			}
		case c == '\'' || c == '"':
			q = c
		case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return line[:i], q
		}
	}
	return line, q
}

type heredocStart struct {
	word     string
	stripTab bool
}

var heredocRE = regexp.MustCompile(`<<(-?)\s*(?:'([^']*)'|"([^"]*)"|\\?([A-Za-z_][A-Za-z0-9_]*))`)

// heredocs returns the here-documents a line of code opens (<<WORD, <<-WORD,
// <<'WORD'), not here-strings (<<<).
func heredocs(code string) []heredocStart {
	var out []heredocStart
	for _, m := range heredocRE.FindAllStringSubmatchIndex(code, -1) {
		if m[0] > 0 && code[m[0]-1] == '<' {
			continue // a here-string, <<<
		}
		word := ""
		for g := 2; g <= 4; g++ {
			if m[2*g] >= 0 {
				word = code[m[2*g]:m[2*g+1]]
			}
		}
		out = append(out, heredocStart{word: word, stripTab: m[3] > m[2]})
	}
	return out
}
