package docstest

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// A recipe is a block whose later commands use what earlier ones wrote. A
// reader pastes it into an interactive shell, where no set -e stops it:
// if an earlier command fails, the later ones must not run on a file left
// empty, stale or missing, or on an empty variable (`darrm plan ... >
// plan.csv` failing, then `set -- $(awk ... plan.csv)` and a release with
// "--threshold --sigma1"). So a recipe joins each command to those whose
// output it reads with &&, and keeps the exit status of every command
// substitution: NAME=$(cmd) alone keeps it; `set -- $(cmd)`, `export
// NAME=$(cmd)`, `cmd $(cmd)` and a process substitution lose it.
//
// recipeErrors finds where a block does not: a top-level list (a command
// on a line of its own and what && , || and | join to it) that reads a
// file or variable an earlier list of the block writes, and a command that
// loses the exit status of a substitution. What a command writes: the
// files of its output redirections, of --out and --plot, of tee and of
// darrm ledger init; the variables it assigns, reads (read), sets (set
// --, the positional parameters) or exports. An exported variable is read
// by every later command (it is in their environment); rm reads no file
// it removes. Names with an expansion or a pattern in them are not
// followed.
func recipeErrors(b Block) []error {
	cmds := commands(lex(b.Lines))
	var errs []error
	errf := func(line int, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", b.File, b.LineOf(line), fmt.Sprintf(format, args...)))
	}
	for _, c := range cmds {
		substs, procs := 0, 0
		for _, w := range c.words {
			substs, procs = substs+w.substs, procs+w.procs
		}
		for _, r := range c.redirs {
			substs, procs = substs+r.target.substs, procs+r.target.procs
		}
		switch {
		case procs > 0:
			errf(c.line, "%s: a process substitution <(...) loses its command's exit status, so a recipe pasted into a shell goes on past its failure: write its output to a file first (cmd > file && ...)", c.text())
		case substs > 0 && !(c.name() == "" && substs == 1):
			errf(c.line, "%s: the exit status of the command substitution is lost, so a recipe pasted into a shell goes on past its failure: assign it alone first (NAME=$(cmd) && ... \"$NAME\")", c.text())
		}
	}
	// The top-level lists, and what each writes.
	var lists [][]command
	for _, c := range cmds {
		if c.top || len(lists) == 0 {
			lists = append(lists, nil)
		}
		lists[len(lists)-1] = append(lists[len(lists)-1], c)
	}
	type written struct {
		line int
		env  bool
	}
	files, vars := map[string]written{}, map[string]written{}
	for _, list := range lists {
		reported := map[string]bool{}
		var c command
		read := func(name, kind string, w written) {
			if !reported[name] {
				reported[name] = true
				errf(c.line, "%s reads %s %s, which line %d writes: join them with && (pasted into a shell, a recipe must stop when line %d fails, not go on)",
					c.text(), kind, name, b.LineOf(w.line), b.LineOf(w.line))
			}
		}
		for _, c = range list {
			outs := c.outputs()
			for _, name := range sortedKeys(files) {
				if c.name() == "rm" {
					break // it removes the file, whatever it holds
				}
				for i, w := range c.all() {
					if !outs[i] && mentions(w.raw, name) {
						read(name, "the file", files[name])
						break
					}
				}
			}
			for _, name := range sortedKeys(vars) {
				v := vars[name]
				if v.env && c.runs() {
					read(name, "the exported variable", v)
					continue
				}
				for _, w := range c.all() {
					if expands(w.expands, name) {
						if name == "@" {
							read("$1...", "the positional parameters", v)
						} else {
							read("$"+name, "the variable", v)
						}
						break
					}
				}
			}
		}
		for _, c := range list {
			for _, f := range c.writtenFiles() {
				files[f] = written{line: c.line}
			}
			for name, env := range c.writtenVars() {
				if env || !vars[name].env {
					vars[name] = written{line: c.line, env: env}
				}
			}
		}
	}
	return errs
}

// runs reports whether the command runs a program: it has a command
// word, or a substitution.
func (c command) runs() bool {
	for _, w := range c.all() {
		if w.substs+w.procs > 0 {
			return true
		}
	}
	return c.name() != ""
}

// text is the command's words, for messages.
func (c command) text() string {
	var ws []string
	for _, w := range c.words {
		ws = append(ws, w.raw)
	}
	s := strings.Join(ws, " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// all returns the command's words and then its redirections' files.
func (c command) all() []shTok {
	out := append([]shTok(nil), c.words...)
	for _, r := range c.redirs {
		out = append(out, r.target)
	}
	return out
}

// outputs marks the tokens of all() that name a file the command writes.
func (c command) outputs() map[int]bool {
	out := map[int]bool{}
	args := c.args()
	off := len(c.words) - len(args)
	for i, w := range args {
		switch {
		case (w.raw == "--out" || w.raw == "--plot") && i+1 < len(args):
			out[off+i+1] = true
		case strings.HasPrefix(w.raw, "--out=") || strings.HasPrefix(w.raw, "--plot="):
			out[off+i] = true
		case c.name() == "tee" && !strings.HasPrefix(w.raw, "-"):
			out[off+i] = true
		case c.name() == "darrm" && i == 2 && args[0].raw == "ledger" && args[1].raw == "init":
			out[off+i] = true
		}
	}
	for i, r := range c.redirs {
		if r.writes() {
			out[len(c.words)+i] = true
		}
	}
	return out
}

// writtenFiles returns the files the command writes that the docs test
// follows: plain names, no expansion or pattern, not a device.
func (c command) writtenFiles() []string {
	var files []string
	all := c.all()
	for i := range c.outputs() {
		w := all[i]
		name := w.word
		if j := strings.IndexByte(name, '='); strings.HasPrefix(name, "--") && j >= 0 {
			name = name[j+1:]
		}
		if name == "" || strings.ContainsAny(w.raw, "$`{}*?[") || strings.HasPrefix(name, "/dev/") {
			continue
		}
		files = append(files, name)
	}
	return files
}

// writtenVars returns the variables the command sets, each with whether it
// exports it: the assignments of a command of assignments only that runs a
// substitution (an assignment of a value cannot fail), the names
// that export, declare, local, readonly and read set, and the positional
// parameters that set sets (named "@").
func (c command) writtenVars() map[string]bool {
	out := map[string]bool{}
	name := c.name()
	if name == "" {
		if !c.runs() {
			return out // a value assigned cannot fail
		}
		for _, w := range c.words {
			n, _, _ := strings.Cut(w.raw, "=")
			out[strings.TrimSuffix(n, "+")] = false
		}
		return out
	}
	args := c.args()
	switch name {
	case "export", "declare", "typeset", "local", "readonly", "read", "mapfile", "readarray":
		for _, w := range args {
			n, _, _ := strings.Cut(w.raw, "=")
			if isName(n) {
				out[n] = name == "export"
			}
		}
	case "set":
		if len(args) > 0 && (args[0].raw == "--" || !strings.HasPrefix(args[0].raw, "-") && !strings.HasPrefix(args[0].raw, "+")) {
			out["@"] = false
		}
	}
	return out
}

// mentions reports whether the word as written names the file: the name
// not inside a longer name or path.
func mentions(raw, name string) bool {
	for i := 0; ; {
		j := strings.Index(raw[i:], name)
		if j < 0 {
			return false
		}
		j += i
		before, after := byte(' '), byte(' ')
		if j > 0 {
			before = raw[j-1]
		}
		if k := j + len(name); k < len(raw) {
			after = raw[k]
		}
		if !isNameByte(before) && before != '/' && !isNameByte(after) {
			return true
		}
		i = j + 1
	}
}

func isNameByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// expandRE matches a parameter expansion, $NAME, ${NAME...}, $1, "$@", $*.
var expandRE = regexp.MustCompile(`\$(?:\{([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#])|([A-Za-z_][A-Za-z0-9_]*|[0-9@*#]))`)

// expands reports whether the text (a word without its single-quoted
// parts) expands the variable name; name "@" stands for the positional
// parameters, $1, "$@", $* and $#.
func expands(text, name string) bool {
	for _, m := range expandRE.FindAllStringSubmatch(text, -1) {
		got := m[1] + m[2]
		if got == name || name == "@" && (isDigits(got) || got == "*" || got == "#") {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
