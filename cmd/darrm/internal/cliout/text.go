package cliout

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape makes s safe to print on a terminal: control characters (ESC
// among them, which a terminal acts on) and invalid UTF-8 bytes are
// written as Go escapes (\x1b, \u009b); everything else stays as it is.
func Escape(s string) string {
	clean := true
	for i, r := range s {
		if unicode.IsControl(r) || r == utf8.RuneError && isInvalid(s, i) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isInvalid reports whether the rune at byte i of s is an invalid byte
// rather than an encoded U+FFFD.
func isInvalid(s string, i int) bool {
	_, size := utf8.DecodeRuneInString(s[i:])
	return size <= 1
}

// Note returns a function that prints a library's notes on its progress
// (a training, a cache file replaced) on w, as darrm's messages, wrapped
// to Width columns as its errors are (WriteWrapped).
func Note(w io.Writer) func(string) {
	return func(s string) { _ = WriteWrapped(w, "darrm: "+s) }
}

// Width is the widest line, in columns, that a summary printed as text
// writes: a terminal of 100 columns shows it without folding.
const Width = 100

// Wrap returns s as lines of at most width columns (one column a rune):
// s itself when it fits, else broken at spaces, each continuation line
// indented two spaces more than s itself. A word wider than a line (a
// path) is broken after its slashes, each piece after the first on a line
// of its own; a word that has no slash to break at stays whole, on a line
// of its own.
func Wrap(s string, width int) []string {
	if utf8.RuneCountInString(s) <= width {
		return []string{s}
	}
	indent := len(s) - len(strings.TrimLeft(s, " "))
	var out []string
	line := strings.Repeat(" ", indent)
	cont := strings.Repeat(" ", indent+2)
	n, start := indent, true
	for _, word := range strings.Fields(s) {
		for i, w := range splitPath(word, width-len(cont)) {
			wn := utf8.RuneCountInString(w)
			if !start && (i > 0 || n+1+wn > width) {
				out = append(out, line)
				line, n, start = cont, len(cont), true
			}
			if !start {
				line += " "
				n++
			}
			line += w
			n += wn
			start = false
		}
	}
	return append(out, line)
}

// splitPath splits word after slashes into pieces of at most n columns
// where it can: the word itself when it fits.
func splitPath(word string, n int) []string {
	r := []rune(word)
	if len(r) <= n || n < 1 {
		return []string{word}
	}
	cut := strings.LastIndex(string(r[:n]), "/")
	if cut <= 0 {
		return []string{word}
	}
	return append([]string{word[:cut+1]}, splitPath(word[cut+1:], n)...)
}

// WriteWrapped writes each line of s wrapped to Width columns (Wrap).
func WriteWrapped(w io.Writer, s string) error {
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		for _, part := range Wrap(l, Width) {
			if _, err := fmt.Fprintln(w, part); err != nil {
				return err
			}
		}
	}
	return nil
}

// Text is a document printed for people: its lines wrapped to Width
// columns (Wrap), its tables within Width (WriteTable), and each long
// text (a theorem, an explanation of a row) a numbered note ("[1]")
// printed under the document (Close), so that no line outgrows a
// terminal. The first error of a write is kept and returned by Close.
type Text struct {
	w     io.Writer
	notes []string
	err   error
}

// NewText starts a document on w.
func NewText(w io.Writer) *Text { return &Text{w: w} }

// Line writes one line, formatted as fmt.Sprintf does and wrapped.
func (t *Text) Line(format string, a ...any) {
	if t.err == nil {
		t.err = WriteWrapped(t.w, strings.TrimRight(fmt.Sprintf(format, a...), " "))
	}
}

// Note returns the marker of the note that says s, "[n]", numbering it
// if it is new.
func (t *Text) Note(s string) string {
	i := slices.Index(t.notes, s)
	if i < 0 {
		t.notes = append(t.notes, s)
		i = len(t.notes) - 1
	}
	return fmt.Sprintf("[%d]", i+1)
}

// Table writes rows under header as a boxed table (WriteTable).
func (t *Text) Table(header []string, rows [][]string) {
	if t.err == nil {
		t.err = WriteTable(t.w, header, rows)
	}
}

// Close writes the notes and returns the first error of any write.
func (t *Text) Close() error {
	if len(t.notes) > 0 {
		t.Line("")
	}
	for i, n := range t.notes {
		t.Line("[%d] %s", i+1, n)
	}
	return t.err
}
