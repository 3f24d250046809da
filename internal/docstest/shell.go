package docstest

import (
	"slices"
	"strings"
)

// shTok is a word or an operator of a block's shell code, as far as the
// docs test reads shell: enough to tell the commands of a recipe apart,
// which files and variables each writes and reads, and where the exit
// status of a command substitution is lost. Comments and here-document
// bodies are left out.
type shTok struct {
	line int    // the block line (0-based) the token starts on
	op   string // an operator ("&&", ";", "|", ">", "2>", "(", "\n", ...); "" for a word
	// word is a word with its quotes removed and its expansions and
	// substitutions kept as written; raw is the word as written.
	word, raw string
	// expands is raw without its single-quoted parts: where $NAME expands.
	expands string
	// substs counts the command substitutions, $(...) and `...`, in the
	// word (at any depth of quoting); procs the process substitutions
	// <(...) and >(...).
	substs, procs int
}

// redirections are the operators that take a file name after them.
var redirections = map[string]bool{">": true, ">>": true, ">|": true, "&>": true, "&>>": true, "<": true, "<>": true}

// operators, longest first, as the lexer matches them.
var operators = []string{"&&", "||", ";;", "|&", "&>>", "&>", ">>", ">|", ">&", "<<<", "<<-", "<<", "<&", "<>", ";", "|", "&", "(", ")", ">", "<"}

// lex splits the lines of a block into tokens. An unquoted newline that
// ends a line is the operator "\n"; a backslash before it joins the lines.
// The lines of a here-document are skipped.
func lex(lines []string) []shTok {
	var (
		toks    []shTok
		heredoc []string // delimiters pending at the end of the line
		strip   []bool
		cur     *shTok
		buf     strings.Builder // cur's word
		raw     strings.Builder
		exp     strings.Builder
	)
	start := func(line int) {
		if cur == nil {
			cur = &shTok{line: line}
		}
	}
	end := func() {
		if cur != nil {
			cur.word, cur.raw, cur.expands = buf.String(), raw.String(), exp.String()
			toks = append(toks, *cur)
			cur = nil
			buf.Reset()
			raw.Reset()
			exp.Reset()
		}
	}
	text := strings.Join(lines, "\n") + "\n"
	// starts are the offsets at which the lines start.
	starts := make([]int, 0, len(lines))
	for off := 0; off < len(text); {
		starts = append(starts, off)
		off += strings.IndexByte(text[off:], '\n') + 1
	}
	lineOf := func(off int) int {
		i, _ := slices.BinarySearch(starts, off+1)
		return i - 1
	}
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\n':
			end()
			toks = append(toks, shTok{line: lineOf(i), op: "\n"})
			i++
			// Skip the bodies of the here-documents opened on this line.
			for k, d := range heredoc {
				for i < len(text) {
					j := strings.IndexByte(text[i:], '\n')
					l := text[i : i+j]
					i += j + 1
					if strip[k] {
						l = strings.TrimLeft(l, "\t")
					}
					if l == d {
						break
					}
				}
			}
			heredoc, strip = nil, nil
		case c == '\\' && i+1 < len(text) && text[i+1] == '\n':
			i += 2 // a continuation: the lines join
		case c == ' ' || c == '\t':
			end()
			i++
		case c == '#' && cur == nil:
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case (c == '<' || c == '>') && i+1 < len(text) && text[i+1] == '(':
			// A process substitution: part of a word.
			start(lineOf(i))
			j := closing(text, i+2)
			cur.procs++
			cur.substs += substCount(text[i+2 : j])
			buf.WriteString(text[i : j+1])
			raw.WriteString(text[i : j+1])
			exp.WriteString(text[i : j+1])
			i = j + 1
		case strings.IndexByte("&|;()<>", c) >= 0:
			op := ""
			for _, o := range operators {
				if strings.HasPrefix(text[i:], o) {
					op = o
					break
				}
			}
			if cur != nil && (op[0] == '<' || op[0] == '>') && isDigits(raw.String()) {
				op = raw.String() + op // "2>": the word was its descriptor
				cur, buf, raw, exp = nil, strings.Builder{}, strings.Builder{}, strings.Builder{}
			}
			end()
			toks = append(toks, shTok{line: lineOf(i), op: op})
			i += len(op) - len(strings.TrimRight(op, "&|;()<>-"))
			if op == "<<" || op == "<<-" {
				// The next word is the delimiter of a here-document.
				j := i
				for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
					j++
				}
				k := j
				for k < len(text) && strings.IndexByte(" \t\n;&|<>()", text[k]) < 0 {
					k++
				}
				heredoc = append(heredoc, strings.NewReplacer("'", "", `"`, "", `\`, "").Replace(text[j:k]))
				strip = append(strip, op == "<<-")
			}
		default:
			start(lineOf(i))
			i = lexWord(text, i, cur, &buf, &raw, &exp)
		}
	}
	end()
	return toks
}

// lexWord reads the part of a word at text[i] up to the next blank or
// operator and returns the offset after it: quoted strings, escapes,
// substitutions and plain characters.
func lexWord(text string, i int, t *shTok, buf, raw, exp *strings.Builder) int {
	for i < len(text) {
		c := text[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(text[i+1:], '\'')
			if j < 0 {
				j = len(text) - i - 1
			}
			buf.WriteString(text[i+1 : i+1+j])
			raw.WriteString(text[i:min(len(text), i+j+2)])
			i += j + 2
		case c == '"':
			j := i + 1
			for j < len(text) && text[j] != '"' {
				switch {
				case text[j] == '\\':
					j++
				case strings.HasPrefix(text[j:], "$(("):
					j = closing(text, j+3)
					j = closing(text, j+1)
				case strings.HasPrefix(text[j:], "$("):
					k := closing(text, j+2)
					t.substs += 1 + substCount(text[j+2:k])
					j = k
				case text[j] == '`':
					k := strings.IndexByte(text[j+1:], '`')
					if k < 0 {
						k = len(text) - j - 1
					}
					t.substs++
					j += k + 1
				}
				j++
			}
			j = min(j, len(text)-1)
			buf.WriteString(text[i+1 : j])
			raw.WriteString(text[i : j+1])
			exp.WriteString(text[i : j+1])
			i = j + 1
		case c == '\\' && i+1 < len(text) && text[i+1] != '\n':
			buf.WriteByte(text[i+1])
			raw.WriteString(text[i : i+2])
			exp.WriteString(text[i : i+2])
			i += 2
		case strings.HasPrefix(text[i:], "$(("):
			j := closing(text, i+3)
			j = closing(text, j+1)
			buf.WriteString(text[i : j+1])
			raw.WriteString(text[i : j+1])
			exp.WriteString(text[i : j+1])
			i = j + 1
		case strings.HasPrefix(text[i:], "$("):
			j := closing(text, i+2)
			t.substs += 1 + substCount(text[i+2:j])
			buf.WriteString(text[i : j+1])
			raw.WriteString(text[i : j+1])
			exp.WriteString(text[i : j+1])
			i = j + 1
		case c == '`':
			j := strings.IndexByte(text[i+1:], '`')
			if j < 0 {
				j = len(text) - i - 2
			}
			t.substs++
			buf.WriteString(text[i : i+j+2])
			raw.WriteString(text[i : i+j+2])
			exp.WriteString(text[i : i+j+2])
			i += j + 2
		case strings.IndexByte(" \t\n&|;()<>", c) >= 0:
			return i
		default:
			buf.WriteByte(c)
			raw.WriteByte(c)
			exp.WriteByte(c)
			i++
		}
	}
	return i
}

// closing returns the offset of the ")" that closes a parenthesis opened
// just before text[i], skipping quoted strings and nested parentheses; the
// last offset of text when none does.
func closing(text string, i int) int {
	depth := 1
	for ; i < len(text); i++ {
		switch text[i] {
		case '\\':
			i++
		case '\'':
			if j := strings.IndexByte(text[i+1:], '\''); j >= 0 {
				i += j + 1
			}
		case '"':
			for i++; i < len(text) && text[i] != '"'; i++ {
				if text[i] == '\\' {
					i++
				}
			}
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return len(text) - 1
}

// substCount counts the command substitutions in code, outside single
// quotes.
func substCount(code string) int {
	n := 0
	var q byte
	for i := 0; i < len(code); i++ {
		c := code[i]
		switch {
		case q == '\'':
			if c == '\'' {
				q = 0
			}
		case c == '\\':
			i++
		case c == '\'' && q == 0:
			q = c
		case c == '"':
			q ^= '"'
		case c == '`':
			n++
		case c == '$' && strings.HasPrefix(code[i:], "$(") && !strings.HasPrefix(code[i:], "$(("):
			n++
		}
	}
	return n
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// separators end a simple command; after them a command word may follow.
var separators = map[string]bool{"\n": true, ";": true, "&&": true, "||": true, "|": true, "|&": true, "&": true, "(": true, ")": true, ";;": true}

// keywords are bash's reserved words that may start a command, after
// which another command word follows.
var keywords = map[string]bool{"if": true, "then": true, "elif": true, "else": true, "fi": true, "while": true, "until": true, "do": true,
	"done": true, "for": true, "case": true, "esac": true, "select": true, "{": true, "}": true, "!": true, "time": true, "function": true}

// opens and closes are the keywords and operators of compound commands.
var (
	opens  = map[string]bool{"if": true, "while": true, "until": true, "for": true, "case": true, "select": true, "{": true, "(": true}
	closes = map[string]bool{"fi": true, "done": true, "esac": true, "}": true, ")": true}
)

// redir is a redirection to or from a file: its operator and the file.
type redir struct {
	op     string
	target shTok
}

// writes reports whether the redirection writes its file.
func (r redir) writes() bool { return strings.Contains(r.op, ">") }

// command is one simple command of a block: its words (assignments,
// the command and its arguments), its redirections to or from files,
// and the line it starts on.
type command struct {
	line   int
	words  []shTok // assignments first, then the command word and its arguments
	redirs []redir
	// depth is the nesting of compound commands around it; top says that
	// it starts a list of the block's top level on a line of its own (not
	// after &&, ||, | or a line continued).
	depth int
	top   bool
}

// name returns the command word: the first word that is not an
// assignment; "" for a command of assignments only.
func (c command) name() string {
	for _, w := range c.words {
		if !isAssignment(w) {
			return w.word
		}
	}
	return ""
}

// args returns the words after the command word.
func (c command) args() []shTok {
	for i, w := range c.words {
		if !isAssignment(w) {
			return c.words[i+1:]
		}
	}
	return nil
}

// isAssignment reports whether w is NAME=VALUE with a valid shell name.
func isAssignment(w shTok) bool {
	name, _, ok := strings.Cut(w.raw, "=")
	return ok && w.op == "" && isName(strings.TrimSuffix(name, "+"))
}

func isName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// commands splits tokens into simple commands, with the nesting of
// compound commands around each and whether it starts a top-level list. A
// keyword at the start of a command (if, for, while, {, ...) is a command
// of its own, with the words of a for or case header: the line of a
// compound command is where its list starts.
func commands(toks []shTok) []command {
	var (
		out   []command
		cur   *command
		depth int
		// top: the next command starts a list of the top level (the
		// previous separator was a newline not after &&, || or |).
		top    = true
		prev   string // the last operator, "" after a word
		header bool   // cur is a for, select or case header, up to its separator
	)
	flush := func() {
		if cur != nil && (len(cur.words) > 0 || len(cur.redirs) > 0) {
			out = append(out, *cur)
		}
		cur, header = nil, false
	}
	open := func(line int) {
		if cur == nil {
			cur = &command{line: line, depth: depth, top: top}
			top = false
		}
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case separators[t.op]:
			flush()
			switch t.op {
			case "\n":
				if prev != "&&" && prev != "||" && prev != "|" && prev != "|&" {
					top = depth == 0
				}
				continue // a newline after && continues the list
			case "(":
				depth++
			case ")":
				depth--
			}
			top = false
		case strings.HasPrefix(t.op, "<<"):
			open(t.line)
			i++ // the delimiter, or the here-string
		case t.op != "":
			open(t.line)
			// A redirection: the next word is its target.
			if i+1 < len(toks) && toks[i+1].op == "" {
				i++
				if redirections[strings.TrimLeft(t.op, "0123456789")] {
					cur.redirs = append(cur.redirs, redir{op: t.op, target: toks[i]})
				}
			}
		case cur == nil && keywords[t.raw]:
			open(t.line)
			cur.words = append(cur.words, t)
			switch {
			case opens[t.raw]:
				depth++
			case closes[t.raw]:
				depth--
			}
			if t.raw == "for" || t.raw == "select" || t.raw == "case" {
				header = true
				continue
			}
			flush()
		case header && (t.raw == "do" || t.raw == "in" && cur.words[0].raw == "case"):
			cur.words = append(cur.words, t)
			flush()
		default:
			open(t.line)
			cur.words = append(cur.words, t)
		}
		prev = t.op
	}
	flush()
	return out
}

// topLevel returns the block lines (0-based) on which a list of the
// block's top level starts: a command on a line of its own, outside any
// compound command, not continuing a list of the line before.
func topLevel(lines []string) []int {
	var out []int
	for _, c := range commands(lex(lines)) {
		if c.top && (len(out) == 0 || out[len(out)-1] != c.line) {
			out = append(out, c.line)
		}
	}
	return out
}
